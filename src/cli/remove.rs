//! `remove`: a plugin uninstalled from every profile, published as a generation.

use clap::Args;
use clap_complete::engine::ArgValueCompleter;

use crate::manager::{self};

use super::error::CliError;
use super::global::GlobalArgs;
use super::manage::{self, EnvArgs, StderrFeedback};
use super::select::report;
use crate::exit::Status;

/// Arguments of `remove`.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  hermes-plugins remove weather --purge-data")]
pub struct RemoveArgs {
    /// Plugin key or name
    #[arg(add = ArgValueCompleter::new(super::completions::installed_names))]
    pub name: String,
    /// Also delete <home>/plugin-data/<key>
    #[arg(long)]
    pub purge_data: bool,
    /// Environment options.
    #[command(flatten)]
    pub env: EnvArgs,
}

/// Runs `remove`.
pub fn remove(args: &RemoveArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let cx = manage::context(&args.env, global, true)?;
    let mut feedback = StderrFeedback::new(global);
    let _lock = manager::begin_writing(&cx, &format!("remove {}", args.name), &mut feedback)
        .map_err(|e| manage::failure(e, global))?;
    let applied = manager::remove::remove(
        &cx,
        &args.name,
        args.purge_data,
        &mut manager::NoInput,
        &mut feedback,
    )
    .map_err(|e| manage::failure(e, global))?;
    report(
        "remove",
        &applied,
        &format!("Removed {}", args.name),
        global,
    );
    Ok(Status::Ok)
}
