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
                    s.to_string()
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
    if global.printer.json() {
        global.printer.document(Schema::Show, &json!(view));
    } else {
        print_show(&view, global);
    }
    Ok(Status::Ok)
}

/// `show` for people: one `label  value` line per fact, lists joined (empty ones left out);
/// `--json` has every field.
fn print_show(view: &crate::manager::views::ShowView, global: &GlobalArgs) {
    use crate::manager::views::ManifestSummary;
    let p = &view.plugin;
    let line = |label: &str, value: &str| {
        if !value.is_empty() {
            outln!(global.printer, "{label:<13}{value}");
        }
    };
    let list = |items: &[String]| items.join(", ");
    line("plugin", &p.key);
    if p.name != p.key {
        line("name", &p.name);
    }
    line("version", p.version.as_deref().unwrap_or("-"));
    line("kind", &format!("{} ({})", p.kind, p.format));
    line(
        "source",
        &format!(
            "{}{}",
            p.source.spec.display(),
            p.source
                .commit
                .as_deref()
                .map(|c| format!(" at {}", &c[..c.len().min(12)]))
                .unwrap_or_default()
        ),
    );
    line(
        "reviewed",
        if view.reviewed {
            "yes (catalog)"
        } else {
            "no (unreviewed source)"
        },
    );
    line("store", &view.store_path.display().to_string());
    line(
        "enabled in",
        &if view.enabled_in.is_empty() {
            "no profile".to_string()
        } else {
            list(&view.enabled_in)
        },
    );
    if let Some(status) = &view.status {
        line("status", &status.to_string());
    }
    match &view.manifest {
        Some(ManifestSummary::Native {
            description,
            provides_tools,
            provides_hooks,
            requires_env,
            requires_auth,
            ..
        }) => {
            line("description", description.as_deref().unwrap_or(""));
            line("tools", &list(provides_tools));
            line("hooks", &list(provides_hooks));
            line("requires env", &list(requires_env));
            line("sign-in", &list(requires_auth));
        }
        Some(ManifestSummary::Portable {
            skills,
            mcp_servers,
        }) => {
            line("skills", &list(skills));
            line("mcp servers", &list(mcp_servers));
        }
        None => line("manifest", "cannot be read"),
    }
    line("dependencies", &list(&view.dependencies.declared));
    line("installed", &list(&view.dependencies.installed));
    for c in &view.capabilities {
        line(
            "capability",
            &format!(
                "{} ({}{}) — {}",
                c.id,
                if c.declared {
                    "declared"
                } else {
                    "not declared"
                },
                if c.granted {
                    ", granted"
                } else {
                    ", not granted"
                },
                c.risk
            ),
        );
    }
    for e in view.audit.iter().flatten() {
        line(
            "audit",
            &format!(
                "{} [{}] {} {} (by {})",
                e.time,
                e.profile,
                e.action,
                e.items.join(", "),
                e.by
            ),
        );
    }
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
    for p in &view.external {
        outln!(
            global.printer,
            "plugin     {} (external: not managed, loaded by Hermes) {}",
            p.name,
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
