//! The `hermes-plugins` binary.

/// jemalloc, where it builds (as uv does): a cold `validate` allocates and frees an AST per
/// module on both cores, which glibc's allocator spends a tenth of the run on.
#[cfg(all(
    unix,
    not(target_env = "musl"),
    not(target_os = "openbsd"),
    not(target_os = "freebsd")
))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    hermes_plugins::cli::main()
}
