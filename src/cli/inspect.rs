//! Read-only commands: `list`, `show`, `env`, `verify`. They take no lock and never block.

use clap::Args;
use clap_complete::engine::ArgValueCompleter;
use serde_json::json;

use crate::manager::query;

use super::error::CliError;
use super::global::GlobalArgs;
use super::json::Schema;
use super::manage;
use crate::exit::Status;

/// Arguments of `list`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hermes-plugins list\n  hermes-plugins list --all-profiles --json"
)]
pub struct ListArgs {
    /// Status in every profile, not only --profile
    #[arg(long)]
    pub all_profiles: bool,
}

/// Arguments of `show`.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  hermes-plugins show weather --json")]
pub struct ShowArgs {
    /// Plugin key or name
    #[arg(add = ArgValueCompleter::new(super::completions::installed_names))]
    pub name: String,
    /// Also print its consent audit log (pm/audit.log)
    #[arg(long)]
    pub audit: bool,
}

/// Runs `list`.
pub fn list(args: &ListArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let cx = manage::read_context(global)?;
    let rows = query::list(&cx, args.all_profiles).map_err(|e| manage::failure(e, global))?;
    let core = query::current_core(&cx);
    let hermes = super::activate::hermes_in_use(global);
    if global.printer.json() {
        global.printer.document(
            Schema::List,
            &json!({ "core": core, "hermes": hermes, "plugins": rows }),
        );
        return Ok(Status::Ok);
    }
    if let Some(core) = &core {
        outln!(global.printer, "core: {core}");
    }
    if let Some(line) = super::activate::hermes_line(&hermes) {
        outln!(global.printer, "{line}");
    }
    if rows.is_empty() {
        outln!(
            global.printer,
            "No plugins installed under {}",
            cx.layout.pm.display()
        );
    }
    for r in rows {
        let status: Vec<String> = r
            .status
            .iter()
            .map(|(p, s)| {
                if args.all_profiles {
                    format!("{p}: {s}")
                } else {
                    s.clone()
                }
            })
            .collect();
        outln!(
            global.printer,
            "{:<24} {:<10} {:<9} {:<22} {:<12} tools {} hooks {}  [{}]",
            r.key,
            r.version.unwrap_or_default(),
            r.kind,
            r.origin,
            r.commit.unwrap_or_else(|| "-".into()),
            r.tools,
            r.hooks,
            status.join(", ")
        );
    }
    Ok(Status::Ok)
}

/// Runs `show`.
pub fn show(args: &ShowArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let cx = manage::read_context(global)?;
    let mut view = query::show(&cx, &args.name).map_err(|e| manage::failure(e, global))?;
    if args.audit {
        let entries = crate::consent::audit::read(&cx.layout.audit_log(), Some(&view.plugin.key))
            .map_err(|e| CliError::environment(e.to_string()))?;
        view.audit = Some(entries);
    }
    let doc = json!(view);
    if global.printer.json() {
        global.printer.document(Schema::Show, &doc);
    } else {
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        global.printer.rendered(&format!("{text}\n"), true);
    }
    Ok(Status::Ok)
}

/// Runs `env`.
pub fn env(global: &GlobalArgs) -> Result<Status, CliError> {
    let cx = manage::read_context(global)?;
    let view = query::env(&cx).map_err(|e| manage::failure(e, global))?;
    let hermes = super::activate::hermes_in_use(global);
    if global.printer.json() {
        let mut doc = json!(view);
        doc["hermes"] = hermes;
        global.printer.document(Schema::Env, &doc);
        return Ok(Status::Ok);
    }
    outln!(
        global.printer,
        "generation {} ({})",
        view.generation,
        view.path.display()
    );
    outln!(global.printer, "core       {}", view.core);
    if let Some(line) = super::activate::hermes_line(&hermes) {
        outln!(global.printer, "{line}");
    }
    outln!(
        global.printer,
        "python     {}",
        view.python.executable.display()
    );
    for p in &view.sys_path {
        outln!(global.printer, "sys.path   {}", p.display());
    }
    for p in &view.plugins {
        outln!(
            global.printer,
            "plugin     {} ({}) {}",
            p.key,
            p.kind,
            p.path.display()
        );
    }
    Ok(Status::Ok)
}

/// Runs `verify`.
pub fn verify(global: &GlobalArgs) -> Result<Status, CliError> {
    let cx = manage::read_context(global)?;
    let (number, problems) = query::verify(&cx).map_err(|e| manage::failure(e, global))?;
    let hermes = super::activate::hermes_in_use(global);
    if global.printer.json() {
        global.printer.document(
            Schema::Verify,
            &json!({
                "generation": number,
                "ok": problems.is_empty(),
                "problems": problems,
                "hermes": hermes,
            }),
        );
        return Ok(if problems.is_empty() {
            Status::Ok
        } else {
            Status::Failed
        });
    }
    if let Some(line) = super::activate::hermes_line(&hermes) {
        outln!(global.printer, "{line}");
    }
    if problems.is_empty() {
        outln!(global.printer, "generation {number}: ok");
    } else {
        outln!(
            global.printer,
            "generation {number}: {} problem(s)",
            problems.len()
        );
        for p in &problems {
            outln!(global.printer, "  {}: {}", p.subject, p.message);
        }
    }
    Ok(if problems.is_empty() {
        Status::Ok
    } else {
        Status::Failed
    })
}
