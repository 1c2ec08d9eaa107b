//! `capabilities`: what a plugin declares against what the profile grants; `--grant` and
//! `--revoke` change the grants and publish them.

use clap::Args;
use clap_complete::engine::ArgValueCompleter;
use serde_json::json;

use crate::manager::apply::Change;
use crate::manager::apply::GrantFlags;
use crate::manager::plan::PlanMode;
use crate::manager::{self, DepsConsent};

use super::error::CliError;
use super::global::GlobalArgs;
use super::manage::{self, EnvArgs};
use super::select::{installed_key, report, run_change};
use crate::exit::Status;

/// Arguments of `capabilities`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hermes-plugins capabilities weather                       # declared vs granted\n  hermes-plugins capabilities weather --grant llm.model_override\n  hermes-plugins capabilities weather --revoke tools.override\n\nGrants live in the profile's config.yaml (plugins.entries.<name>.granted_capabilities, capabilities_consent, legacy allow_* keys) and in the generation the agent reads; every change is in pm/audit.log."
)]
pub struct CapabilitiesArgs {
    /// Plugin key or name
    #[arg(add = ArgValueCompleter::new(super::completions::installed_names))]
    pub name: String,
    /// Grant a capability (repeatable)
    #[arg(long = "grant", value_name = "CAP")]
    pub grant: Vec<String>,
    /// Revoke a capability (repeatable)
    #[arg(long = "revoke", value_name = "CAP")]
    pub revoke: Vec<String>,
    /// Environment options.
    #[command(flatten)]
    pub env: EnvArgs,
}

/// Runs `capabilities`: without flags, shows declared vs granted; with flags, changes the
/// grants (publishing a generation with the new consent snapshot).
pub fn capabilities(args: &CapabilitiesArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    if args.grant.is_empty() && args.revoke.is_empty() {
        let cx = manage::read_context(global)?;
        let view = manager::query::capabilities(&cx, &args.name)
            .map_err(|e| manage::failure(e, global))?;
        if global.printer.json() {
            global
                .printer
                .document(super::json::Schema::Capabilities, &json!(view));
        } else if view.capabilities.is_empty() {
            outln!(
                global.printer,
                "`{}` declares no capabilities and has none granted in profile `{}`: it uses nothing of Hermes' API that needs consent",
                view.plugin,
                view.profile
            );
        } else {
            for c in &view.capabilities {
                outln!(
                    global.printer,
                    "{:<26} {:<9} {}",
                    c.id,
                    if c.granted { "granted" } else { "off" },
                    c.risk
                );
            }
        }
        return Ok(Status::Ok);
    }
    let applied = run_change(
        &args.env,
        global,
        (&format!("capabilities {}", args.name), true),
        |cx| {
            let key = installed_key(cx, &args.name)?;
            Ok(Change {
                operation: format!("capabilities {key}"),
                edits: Vec::new(),
                installed: None,
                deps: DepsConsent::Ask,
                grants: GrantFlags {
                    targets: vec![key],
                    grant: args.grant.clone(),
                    revoke: args.revoke.clone(),
                },
                accept_surface: false,
                plan: PlanMode::Off,
                plan_notes: Vec::new(),
            })
        },
    )?;
    report(
        "capabilities",
        &applied,
        &format!(
            "Updated the capabilities of {} in profile `{}`",
            args.name, global.profile
        ),
        global,
    );
    Ok(Status::Ok)
}
