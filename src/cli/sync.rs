//! `sync`: every profile's `config.yaml` selection (hand edits included) published; a no-op
//! when nothing changed.

use clap::Args;

use crate::manager::DepsConsent;
use crate::manager::apply::Change;
use crate::manager::apply::GrantFlags;
use crate::manager::plan::PlanMode;

use super::error::CliError;
use super::global::GlobalArgs;
use super::manage::EnvArgs;
use super::select::{report, run_change};
use crate::exit::Status;

/// Arguments of `sync`.
#[derive(Debug, Args)]
#[command(
    after_help = "Applies every profile's config.yaml selection (hand edits included); a no-op when nothing changed.\n\nExample:\n  hermes-plugins sync --yes-deps"
)]
pub struct SyncArgs {
    /// Consent to added Python dependencies in advance
    #[arg(long)]
    pub yes_deps: bool,
    /// Environment options.
    #[command(flatten)]
    pub env: EnvArgs,
}

/// Runs `sync`.
pub fn sync(args: &SyncArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let applied = run_change(&args.env, global, ("sync", true), |_| {
        Ok(Change {
            operation: "sync".into(),
            edits: Vec::new(),
            installed: None,
            deps: if args.yes_deps {
                DepsConsent::Yes
            } else {
                DepsConsent::Ask
            },
            grants: GrantFlags::default(),
            accept_surface: false,
            plan: PlanMode::Off,
            plan_notes: Vec::new(),
        })
    })?;
    report("sync", &applied, "Synced every profile's selection", global);
    Ok(Status::Ok)
}
