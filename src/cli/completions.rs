//! `hermes-plugins completions SHELL`: shell completion scripts (UX-4).

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::{Cli, CliError, Status};

/// Arguments of `completions`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hermes-plugins completions bash > ~/.local/share/bash-completion/completions/hermes-plugins\n  hermes-plugins completions zsh > ~/.zfunc/_hermes-plugins"
)]
pub struct CompletionsArgs {
    /// The shell to generate completions for
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Prints the completion script on stdout.
pub fn run(args: &CompletionsArgs) -> Result<Status, CliError> {
    let mut command = Cli::command();
    clap_complete::generate(
        args.shell,
        &mut command,
        "hermes-plugins",
        &mut std::io::stdout(),
    );
    Ok(Status::Ok)
}
