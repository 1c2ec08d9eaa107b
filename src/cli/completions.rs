//! Shell completion (UX-4): `hermes-plugins completions SHELL` prints a static script
//! (subcommands and options); `COMPLETE=SHELL hermes-plugins` prints the registration of
//! dynamic completion, where the shell asks the binary itself at each TAB — which also
//! completes the names of installed plugins (see [`installed_names`]).

use std::ffi::OsStr;
use std::path::PathBuf;

use clap::{Args, CommandFactory};
use clap_complete::Shell;
use clap_complete::engine::CompletionCandidate;

use super::Cli;
use super::env_vars::EnvVars;
use super::error::CliError;
use crate::exit::Status;

/// Answers a shell's completion request when `COMPLETE` is set (and exits); otherwise
/// returns and the command line is parsed as usual.
pub fn answer_if_asked() {
    clap_complete::CompleteEnv::with_factory(Cli::command)
        .bin("hermes-plugins")
        .complete();
}

/// The installed plugins' keys and names starting with `current`, for the arguments that
/// name an installed plugin. The home is `$HERMES_HOME`, else `~/.hermes` (a `--home` on the
/// line being completed is not seen: the completer gets only the word); nothing installed,
/// or a state that cannot be read, completes to nothing rather than to an error.
pub fn installed_names(current: &OsStr) -> Vec<CompletionCandidate> {
    let Some(prefix) = current.to_str() else {
        return Vec::new();
    };
    let explicit = std::env::var_os(EnvVars::HERMES_HOME)
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let layout = crate::home::Layout::new(&super::manage::home_from(explicit.as_deref()));
    let Ok(installed) = crate::state::installed::Installed::read(&layout.installed()) else {
        return Vec::new();
    };
    let mut names: Vec<(String, Option<String>)> = Vec::new();
    for (key, plugin) in &installed.plugins {
        names.push((key.clone(), plugin.version.clone()));
        if plugin.name != *key {
            names.push((plugin.name.clone(), plugin.version.clone()));
        }
    }
    names.sort();
    names.dedup_by(|a, b| a.0 == b.0);
    names
        .into_iter()
        .filter(|(name, _)| name.starts_with(prefix))
        .map(|(name, version)| {
            CompletionCandidate::new(name).help(version.map(|v| format!("installed {v}").into()))
        })
        .collect()
}

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
    // Generated into memory: clap_complete panics on a failed write (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "hermes-plugins", &mut script);
    let _ = super::printer::write_stdout(&script);
    Ok(Status::Ok)
}
