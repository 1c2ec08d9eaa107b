//! The `hermes-plugins` binary.

/// jemalloc on the targets uv gives it to (the cfg is Cargo.toml's, keep the two equal): a
/// cold `validate` allocates and frees an AST per module on both cores, which glibc's
/// allocator spent a tenth of the run on. Around it the arena that parses allocate their
/// throwaway ASTs from (`hermes_plugins::arena`). Elsewhere the system's allocator, without
/// the arena: a parse's AST is then dropped as usual.
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
static GLOBAL: hermes_plugins::arena::Arena<tikv_jemallocator::Jemalloc> =
    hermes_plugins::arena::Arena::new(tikv_jemallocator::Jemalloc);

fn main() -> std::process::ExitCode {
    hermes_plugins::cli::main()
}
