//! [`GlobalArgs`]: the options every command accepts, and the [`Printer`] decided from them
//! once in [`super::main`].

use std::path::PathBuf;

use clap::Args;

use super::env_vars::EnvVars;
use super::printer::{ColorChoice, Printer};

/// Options every command accepts.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Hermes home directory [default: $HERMES_HOME, else ~/.hermes]
    #[arg(long, global = true, env = EnvVars::HERMES_HOME, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Profile to act on; named profiles live at <home>/profiles/<name>/
    #[arg(long, global = true, default_value = "default", value_name = "NAME")]
    pub profile: String,
    /// Print one JSON document on stdout and nothing else there
    #[arg(long, global = true)]
    pub json: bool,
    /// Never prompt (implied when stdin or stderr is not a terminal)
    #[arg(long, global = true)]
    pub no_input: bool,
    /// More detail on stderr (discovery, resolution); repeat for more
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Less output: no progress, notes or informational findings on stderr (results and
    /// errors still print)
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Seconds to wait for another writer before giving up (exit 3, lock-busy) [default: 30
    /// when no one can answer a prompt, no limit on a terminal]
    #[arg(
        long,
        global = true,
        env = EnvVars::HERMES_PLUGINS_LOCK_TIMEOUT,
        value_name = "SECONDS"
    )]
    pub lock_timeout: Option<u64>,
    /// Colour output
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "auto",
        value_name = "WHEN"
    )]
    pub color: ColorChoice,
    /// Where output goes, decided once from the options above and the terminal (set by
    /// [`main`] after parsing; not an option).
    #[arg(skip)]
    pub printer: Printer,
}
