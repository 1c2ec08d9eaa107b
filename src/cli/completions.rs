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

/// The `--home` written on the line being completed (the completer of one argument gets
/// only its own word, so the line is read once here, before clap answers).
static LINE_HOME: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();

/// The value of the last `--home DIR` or `--home=DIR` among `words` (a leading `~/` as the
/// shell would expand it once the line runs).
fn home_on_line(words: impl Iterator<Item = std::ffi::OsString>) -> Option<PathBuf> {
    let mut found = None;
    let mut words = words.peekable();
    while let Some(word) = words.next() {
        let value = match word.to_str() {
            Some("--home") => words.next(),
            Some(w) => w.strip_prefix("--home=").map(Into::into),
            None => None,
        };
        if let Some(value) = value.filter(|v| !v.is_empty()) {
            found = Some(value);
        }
    }
    found.map(|v| match v.to_str().and_then(|s| s.strip_prefix("~/")) {
        Some(rest) => std::env::var_os(EnvVars::HOME)
            .map(|h| PathBuf::from(h).join(rest))
            .unwrap_or_else(|| PathBuf::from(&v)),
        None => PathBuf::from(v),
    })
}

/// Answers a shell's completion request when `COMPLETE` is set (and exits); otherwise
/// returns and the command line is parsed as usual.
pub fn answer_if_asked() {
    if std::env::var_os(EnvVars::COMPLETE).is_some_and(|v| !v.is_empty()) {
        LINE_HOME.get_or_init(|| home_on_line(std::env::args_os().skip(1)));
    }
    clap_complete::CompleteEnv::with_factory(Cli::command)
        .bin("hermes-plugins")
        .complete();
}

/// The installed plugins' keys and names starting with `current`, for the arguments that
/// name an installed plugin. The home is the `--home` on the line being completed, else
/// `$HERMES_HOME`, else `~/.hermes`, as when the line runs; nothing installed, or a state
/// that cannot be read, completes to nothing rather than to an error.
pub fn installed_names(current: &OsStr) -> Vec<CompletionCandidate> {
    let Some(prefix) = current.to_str() else {
        return Vec::new();
    };
    let explicit = LINE_HOME.get().cloned().flatten().or_else(|| {
        std::env::var_os(EnvVars::HERMES_HOME)
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
    });
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
