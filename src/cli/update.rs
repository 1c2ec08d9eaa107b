//! `hermes-plugins update [NAME]...`: new code and dependencies in one switch.

use clap::Args;
use clap_complete::engine::ArgValueCompleter;
use serde_json::json;

use crate::manager;
use crate::manager::apply::GrantFlags;

use super::error::CliError;
use super::global::GlobalArgs;
use super::manage::{self, EnvArgs, StderrFeedback, TerminalPrompter};
use crate::exit::Status;

/// Arguments of `update`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hermes-plugins update --all --yes\n  hermes-plugins update weather --dry-run\n\nGit plugins follow their branch, catalog plugins re-pin to the catalog's current sha, local directories are copied again; --ref installs stay pinned. Everything that changed is published in one generation."
)]
pub struct UpdateArgs {
    /// Plugins to update (default with --all or none given: every installed plugin)
    #[arg(add = ArgValueCompleter::new(super::completions::installed_names))]
    pub names: Vec<String>,
    /// Update every installed plugin
    #[arg(long)]
    pub all: bool,
    /// Show what would change and the consent plan; change nothing
    #[arg(long, conflicts_with = "plan")]
    pub dry_run: bool,
    /// Apply only if the consent plan is still the one shown (the hash from --dry-run)
    #[arg(long, value_name = "HASH")]
    pub plan: Option<String>,
    /// Accept what the update adds (tools, hooks, dependencies, MCP servers, …) without asking
    #[arg(long)]
    pub yes: bool,
    /// Accept the dependency changes only, without asking (what the update adds to a plugin's
    /// surface is still asked, or refused without a terminal)
    #[arg(long)]
    pub yes_deps: bool,
    /// Grant a capability the new version declares (repeatable)
    #[arg(long = "grant", value_name = "CAP")]
    pub grant: Vec<String>,
    /// Update even if the catalog's removed.yaml lists it
    #[arg(long)]
    pub allow_removed: bool,
    /// Approve new patches of Hermes internals a new version's code makes
    #[arg(long)]
    pub allow_core_patch: bool,
    /// Accept a security finding a new version has, by its id (`<rule>@<file>:<line>`);
    /// findings accepted before stay accepted while the flagged file is unchanged (repeatable)
    #[arg(long = "accept-finding", value_name = "ID")]
    pub accept_findings: Vec<String>,
    /// Environment options.
    #[command(flatten)]
    pub env: EnvArgs,
}

/// Runs `update`.
pub fn run(args: &UpdateArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    if args.all && !args.names.is_empty() {
        return Err(CliError::usage("give plugin names or --all, not both"));
    }
    if !args.grant.is_empty() && args.names.is_empty() {
        return Err(CliError::usage(
            "--grant applies to the plugins named: give their names (it is not taken with --all)",
        ));
    }
    let cx = manage::context(&args.env, global, !args.dry_run)?;
    let mut feedback = StderrFeedback::new(global);
    let grants = GrantFlags {
        targets: args.names.clone(),
        grant: args.grant.clone(),
        revoke: Vec::new(),
    };
    let request = manager::update::UpdateRequest {
        names: args.names.clone(),
        dry_run: args.dry_run,
        plan: match &args.plan {
            Some(hash) => crate::manager::plan::PlanMode::Expect(hash.clone()),
            None => crate::manager::plan::PlanMode::Off,
        },
        yes: args.yes,
        yes_deps: args.yes_deps,
        grants,
        allow_removed: args.allow_removed,
        allow_core_patch: args.allow_core_patch,
        accept_findings: args.accept_findings.clone(),
    };
    let (items, applied) = if manage::interactive(global) {
        manager::update::update(&cx, &request, &mut TerminalPrompter, &mut feedback)
    } else {
        manager::update::update(&cx, &request, &mut manager::NoInput, &mut feedback)
    }
    .map_err(|e| manage::failure(e, global))?;
    if global.printer.json() {
        global.printer.document(
            super::json::Schema::Operation,
            &json!({
                "operation": "update",
                "plugins": items,
                "plan": applied.as_ref().and_then(|a| a.plan.as_ref()),
                "generation": applied,
                "dry_run": args.dry_run,
            }),
        );
        return Ok(Status::Ok);
    }
    for i in &items {
        let short = |c: &Option<String>| {
            c.as_ref()
                .map(|c| c.chars().take(12).collect::<String>())
                .unwrap_or_else(|| "-".into())
        };
        // A directory source has no commits: say what moved instead of `- -> -`.
        let change = match (&i.from, &i.to) {
            (None, None) if i.status == manager::update::UpdateStatus::Unchanged => String::new(),
            (None, None) => "its directory's contents changed".to_string(),
            (from, to) => format!("{} -> {}", short(from), short(to)),
        };
        outln!(
            global.printer,
            "{}",
            format!("{:<24} {:<13} {change}", i.key, i.status).trim_end()
        );
    }
    if let Some((plan, a)) = applied
        .as_ref()
        .and_then(|a| a.plan.as_ref().map(|p| (p, a)))
    {
        manage::print_plan(&global.printer, plan, &a.changes);
        return Ok(Status::Ok);
    }
    if let Some(a) = applied.filter(|a| a.published) {
        for c in &a.changes {
            outln!(global.printer, "  {c}");
        }
        outln!(
            global.printer,
            "Generation {} is current (was {})",
            a.generation.unwrap_or(0),
            a.previous
                .map(|p| p.to_string())
                .unwrap_or_else(|| "none".into())
        );
    }
    Ok(Status::Ok)
}
