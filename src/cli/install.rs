//! `hermes-plugins install SOURCE`: fetch, validate, store, record; enable with consent.

use super::env_vars::EnvVars;
use clap::Args;
use serde_json::json;

use crate::manager::{self, DepsConsent, install::InstallRequest};
use crate::source::spec;

use super::error::CliError;
use super::global::GlobalArgs;
use super::manage::{self, EnvArgs, StderrFeedback, TerminalPrompter};
use crate::exit::Status;

/// Arguments of `install`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hermes-plugins install weather --enable --yes-deps          # a catalog entry\n  hermes-plugins install acme/hermes-weather                   # GitHub (HERMES_PLUGINS_GITHUB overrides the host)\n  hermes-plugins install https://git.example/p.git#plugins/x --ref v1.2.0\n  hermes-plugins install ./my-plugin --enable\n  hermes-plugins install pypi:mnemosyne-hermes==0.7.6          # a plugin published as a Python package\n\nA new plugin is installed disabled; --enable enables it in --profile after dependency consent (--yes-deps answers yes; non-interactive sessions refuse). Exit codes: 0 ok; 1 validation failed, consent refused or conflict; 2 usage; 3 network/I/O/lock."
)]
pub struct InstallArgs {
    /// Catalog name, owner/repo[/subdir], git URL[#subdir], a directory, a wheel file, or pypi:NAME[==VERSION]
    pub source: String,
    /// Pin a branch, tag or commit (git sources; an off-catalog pin)
    #[arg(long = "ref", value_name = "REV")]
    pub rev: Option<String>,
    /// Enable it in the profile after installing
    #[arg(long, overrides_with = "no_enable")]
    pub enable: bool,
    /// Leave it disabled (the default)
    #[arg(long)]
    pub no_enable: bool,
    /// Consent to its Python dependencies in advance
    #[arg(long, conflicts_with = "no_deps")]
    pub yes_deps: bool,
    /// Fetch only, without dependency consent: stays disabled even with --enable
    #[arg(long)]
    pub no_deps: bool,
    /// Install despite validation errors (never despite a dangerous security verdict)
    #[arg(long)]
    pub force: bool,
    /// Accept what a replacement adds to an active plugin (tools, hooks, dependencies, …)
    #[arg(long)]
    pub yes: bool,
    /// Install even if the catalog's removed.yaml lists it
    #[arg(long)]
    pub allow_removed: bool,
    /// Approve a plugin whose code patches Hermes internals at run time (Hermes loads it;
    /// the catalog does not admit it)
    #[arg(long)]
    pub allow_core_patch: bool,
    /// Replace the installed plugin of the same key that comes from another source (its
    /// grants do not carry over)
    #[arg(long)]
    pub replace: bool,
    /// Accept one security finding that makes the plugin dangerous, by its id
    /// (`<rule>@<file>:<line>`, as the refusal names it), for this plugin alone: recorded, and
    /// asked again when the flagged file changes (repeatable)
    #[arg(long = "accept-finding", value_name = "ID")]
    pub accept_findings: Vec<String>,
    /// Capability flags.
    #[command(flatten)]
    pub grants: manage::GrantArgs,
    /// Consent options.
    #[command(flatten)]
    pub plan: manage::PlanArgs,
    /// Environment options.
    #[command(flatten)]
    pub env: EnvArgs,
}

/// Runs `install`.
pub fn run(args: &InstallArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let cx = manage::context(&args.env, global, !args.plan.dry_run)?;
    let cwd = std::env::current_dir().map_err(|e| CliError::environment(e.to_string()))?;
    let home_dir = std::env::var_os(EnvVars::HOME).map(std::path::PathBuf::from);
    let spec = spec::parse(&args.source, &cwd, home_dir.as_deref())
        .map_err(|e| CliError::usage(e.to_string()))?;
    let deps = match (args.yes_deps, args.no_deps) {
        (true, _) => DepsConsent::Yes,
        (_, true) => DepsConsent::No,
        _ => DepsConsent::Ask,
    };
    let mut feedback = StderrFeedback::new(global);
    let (grant, revoke) = args.grants.split();
    let request = InstallRequest {
        spec,
        rev: args.rev.clone(),
        enable: args.enable && !args.no_enable,
        deps,
        force: args.force,
        grant,
        revoke,
        yes: args.yes,
        allow_removed: args.allow_removed,
        allow_core_patch: args.allow_core_patch,
        accept_findings: args.accept_findings.clone(),
        replace: args.replace,
        plan: args.plan.mode(),
    };
    let outcome = if manage::interactive(global) {
        manager::install::install(&cx, &request, &mut TerminalPrompter, &mut feedback)
    } else {
        manager::install::install(&cx, &request, &mut manager::NoInput, &mut feedback)
    }
    .map_err(|e| manage::failure(e, global))?;
    let held_back = outcome.applied.iter().flat_map(|a| &a.held_back);
    let warnings: Vec<&String> = outcome
        .warnings
        .iter()
        .chain(held_back.map(|h| &h.reason))
        .collect();
    if global.printer.json() {
        global.printer.document(
            super::json::Schema::Operation,
            &json!({
                "operation": "install",
                "dry_run": args.plan.dry_run,
                "installed": outcome.plugin,
                "enabled": outcome.enabled,
                "warnings": warnings,
                "generation": outcome.applied,
                "plan": outcome.applied.as_ref().and_then(|a| a.plan.as_ref()),
            }),
        );
    } else if let Some((plan, applied)) = outcome
        .applied
        .as_ref()
        .and_then(|a| a.plan.as_ref().map(|p| (p, a)))
    {
        super::manage::print_plan(&global.printer, plan, &applied.changes);
    } else {
        for w in &warnings {
            global.printer.warning(w);
        }
        let p = &outcome.plugin;
        outln!(
            global.printer,
            "Installed {} {} ({}) from {}{}",
            p.key,
            p.version.as_deref().unwrap_or(""),
            p.format,
            p.source.spec.display(),
            p.source
                .commit
                .as_ref()
                .map(|c| format!(" at {}", &c[..c.len().min(12)]))
                .unwrap_or_default()
        );
        match &outcome.applied {
            Some(a) if a.published => outln!(
                global.printer,
                "Enabled in profile `{}`; generation {} is current",
                cx.profile,
                a.generation.unwrap_or(0)
            ),
            _ if outcome.enabled => outln!(global.printer, "Enabled in profile `{}`", cx.profile),
            _ => outln!(
                global.printer,
                "Disabled; enable it with `hermes-plugins enable {}`",
                p.key
            ),
        }
    }
    Ok(Status::Ok)
}
