//! `disable`: a plugin taken out of the profile's selection, published as a generation.

use clap::Args;
use clap_complete::engine::ArgValueCompleter;

use crate::manager::DepsConsent;
use crate::manager::apply::GrantFlags;
use crate::manager::apply::{Change, SelectionEdit};
use crate::manager::plan::PlanMode;

use super::error::CliError;
use super::global::GlobalArgs;
use super::manage::EnvArgs;
use super::select::{installed_key, report, run_change};
use crate::exit::Status;

/// Arguments of `disable`.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  hermes-plugins disable weather")]
pub struct DisableArgs {
    /// Plugin key or name
    #[arg(add = ArgValueCompleter::new(super::completions::installed_names))]
    pub name: String,
    /// Environment options.
    #[command(flatten)]
    pub env: EnvArgs,
}

/// Runs `disable`.
pub fn disable(args: &DisableArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let applied = run_change(
        &args.env,
        global,
        (&format!("disable {}", args.name), true),
        |cx| {
            let key = installed_key(cx, &args.name)?;
            Ok(Change {
                operation: format!("disable {key}"),
                edits: vec![(cx.profile.clone(), SelectionEdit::Disable(key))],
                installed: None,
                deps: DepsConsent::Pending,
                grants: GrantFlags::default(),
                accept_surface: false,
                plan: PlanMode::Off,
                plan_notes: Vec::new(),
            })
        },
    )?;
    report(
        "disable",
        &applied,
        &format!("Disabled {} in profile `{}`", args.name, global.profile),
        global,
    );
    Ok(Status::Ok)
}
