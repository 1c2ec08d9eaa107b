//! `enable`: a plugin added to the profile's selection and published as a generation.

use clap::Args;
use clap_complete::engine::ArgValueCompleter;

use crate::manager::apply::GrantFlags;
use crate::manager::apply::{Change, SelectionEdit};
use crate::manager::{self, DepsConsent};

use super::error::CliError;
use super::global::GlobalArgs;
use super::manage::{self, EnvArgs, StderrFeedback};
use super::select::{installed_key, report, run_change};
use crate::exit::Status;

/// Arguments of `enable`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hermes-plugins enable weather --yes-deps\n  hermes-plugins --profile work enable weather\n\nEdits the profile's config.yaml (surgically, journaled with the switch) and publishes a generation with the plugin and its dependencies."
)]
pub struct EnableArgs {
    /// Plugin key or name
    #[arg(add = ArgValueCompleter::new(super::completions::installed_names))]
    pub name: String,
    /// Consent to its Python dependencies in advance
    #[arg(long)]
    pub yes_deps: bool,
    /// Capability flags.
    #[command(flatten)]
    pub grants: manage::GrantArgs,
    /// Enable even if the catalog's removed.yaml lists it
    #[arg(long)]
    pub allow_removed: bool,
    /// Consent options.
    #[command(flatten)]
    pub plan: manage::PlanArgs,
    /// Environment options.
    #[command(flatten)]
    pub env: EnvArgs,
}

/// Runs `enable`.
pub fn enable(args: &EnableArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let applied = run_change(
        &args.env,
        global,
        (&format!("enable {}", args.name), !args.plan.dry_run),
        |cx| {
            let key = installed_key(cx, &args.name)?;
            let installed = crate::state::installed::Installed::read(&cx.layout.installed())
                .map_err(|e| CliError::environment(e.to_string()))?;
            if let Some(p) = installed.plugins.get(&key) {
                manager::check_removed(
                    cx,
                    &p.name,
                    p.source.url.as_deref(),
                    args.allow_removed,
                    &mut StderrFeedback::new(global),
                )
                .map_err(|e| manage::failure(e, global))?;
            }
            let (grant, revoke) = args.grants.split();
            Ok(Change {
                operation: format!("enable {key}"),
                edits: vec![(cx.profile.clone(), SelectionEdit::Enable(key.clone()))],
                installed: None,
                deps: if args.yes_deps {
                    DepsConsent::Yes
                } else {
                    DepsConsent::Ask
                },
                grants: GrantFlags {
                    targets: vec![key],
                    grant,
                    revoke,
                },
                accept_surface: false,
                plan: args.plan.mode(),
                plan_notes: Vec::new(),
            })
        },
    )?;
    report(
        "enable",
        &applied,
        &format!("Enabled {} in profile `{}`", args.name, global.profile),
        global,
    );
    Ok(Status::Ok)
}
