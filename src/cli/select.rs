//! `enable`, `disable`, `remove` and `sync`: selection changes published as generations.

use clap::Args;
use clap_complete::engine::ArgValueCompleter;
use serde_json::json;

use crate::manager::apply::GrantFlags;
use crate::manager::apply::{self, Applied, Change, SelectionEdit};
use crate::manager::plan::PlanMode;
use crate::manager::{self, DepsConsent};

use super::error::CliError;
use super::global::GlobalArgs;
use super::manage::{self, EnvArgs, StderrFeedback, TerminalPrompter};
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

fn report(operation: &str, applied: &Applied, what: &str, global: &GlobalArgs) {
    if global.printer.json() {
        let mut doc = json!({ "operation": operation, "result": what, "generation": applied });
        if let Some(plan) = &applied.plan {
            doc["dry_run"] = json!(true);
            doc["plan"] = json!(plan);
        }
        global
            .printer
            .document(super::json::Schema::Operation, &doc);
        return;
    }
    if let Some(plan) = &applied.plan {
        manage::print_plan(&global.printer, plan, &applied.changes);
        return;
    }
    for held in &applied.held_back {
        global.printer.warning(&held.reason);
    }
    outln!(global.printer, "{what}");
    if applied.published {
        for c in &applied.changes {
            outln!(global.printer, "  {c}");
        }
        outln!(
            global.printer,
            "Generation {} is current (was {})",
            applied.generation.unwrap_or(0),
            applied
                .previous
                .map(|p| p.to_string())
                .unwrap_or_else(|| "none".into())
        );
    } else {
        outln!(
            global.printer,
            "No new generation: nothing the environment depends on changed"
        );
    }
}

fn run_change(
    env: &EnvArgs,
    global: &GlobalArgs,
    (command, record): (&str, bool),
    make: impl FnOnce(&manager::Context) -> Result<Change, CliError>,
) -> Result<Applied, CliError> {
    let cx = manage::context(env, global, record)?;
    let mut feedback = StderrFeedback::new(global);
    let _lock = manager::begin_writing(&cx, command, &mut feedback)
        .map_err(|e| manage::failure(e, global))?;
    let change = make(&cx)?;
    if manage::interactive(global) {
        apply::apply(&cx, change, &mut TerminalPrompter, &mut feedback)
    } else {
        apply::apply(&cx, change, &mut manager::NoInput, &mut feedback)
    }
    .map_err(|e| manage::failure(e, global))
}

fn installed_key(cx: &manager::Context, name: &str) -> Result<String, CliError> {
    let installed = crate::state::installed::Installed::read(&cx.layout.installed())
        .map_err(|e| CliError::environment(e.to_string()))?;
    installed.find(name).map(|p| p.key.clone()).ok_or_else(|| {
        CliError::coded(
            crate::exit::Code::NotFound,
            format!("`{name}` is not installed (see `hermes-plugins list`)"),
        )
    })
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

/// Runs `remove`.
pub fn remove(args: &RemoveArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let cx = manage::context(&args.env, global, true)?;
    let mut feedback = StderrFeedback::new(global);
    let _lock = manager::begin_writing(&cx, &format!("remove {}", args.name), &mut feedback)
        .map_err(|e| manage::failure(e, global))?;
    let applied = manager::install::remove(
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
