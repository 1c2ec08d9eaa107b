//! The `hermes-plugins` binary.

fn main() -> std::process::ExitCode {
    hermes_plugins::cli::main()
}
