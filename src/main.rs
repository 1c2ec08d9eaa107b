//! The `hermes-plugins` binary.

/// jemalloc on the targets uv gives it to (the cfg is Cargo.toml's, keep the two equal): a
/// cold `validate` allocates and frees an AST per module on both cores, which glibc's
/// allocator spent a tenth of the run on. Elsewhere the system's allocator. Nothing wraps it:
/// as uv keeps its allocator alone in a crate of its own, this is the allocator and no more.
#[cfg(all(
    unix,
    not(target_os = "openbsd"),
    not(target_os = "freebsd"),
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "powerpc64"
    )
))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    hermes_plugins::cli::main()
}
