//! `hermes-plugins resolve`: resolve Hermes core together with plugins and print the lock
//! (or the conflict); with a previous lock, show what would change.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::resolve::inputs;
use crate::resolve::lock::{Lock, LockDiff};
use crate::resolve::{self, Failure};

use super::error::CliError;
use super::global::GlobalArgs;
use super::manage::{ResolverArgs, home};
use crate::exit::{Code, Status};

/// Arguments of `resolve`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hermes-plugins resolve --core ~/src/hermes-agent                 # core + the plugins enabled in any profile of $HERMES_HOME\n  hermes-plugins resolve --core ~/src/hermes-agent --plugin ./weather --plugin ./news\n  hermes-plugins resolve --plugin ./weather --lock plugins.lock.json  # write (and diff against) a lock file\n  hermes-plugins resolve --plugin ./weather --lock plugins.lock.json --dry-run --json\n\nThe quarantine: packages Hermes core pins itself (its uv.lock) resolve only to releases uploaded at least --quarantine-days ago; core's [tool.uv] exclude-newer-package exemptions are honoured; packages only plugins use are not held back. HERMES_PLUGINS_NOW (RFC 3339) fixes \"now\".\n\nExit codes: 0 resolved; 1 conflict; 2 usage; 3 index/interpreter/I/O problem."
)]
pub struct ResolveArgs {
    /// A plugin directory to include (repeatable); default: the plugins enabled in any profile under --home
    #[arg(long = "plugin", value_name = "DIR")]
    pub plugins: Vec<PathBuf>,
    /// Resolution options.
    #[command(flatten)]
    pub resolver: ResolverArgs,
    /// A lock file: its versions are preferred, changes against it are shown, and (without --dry-run) it is rewritten
    #[arg(long, value_name = "FILE")]
    pub lock: Option<PathBuf>,
    /// Show what would change; write nothing
    #[arg(long)]
    pub dry_run: bool,
}

fn read_lock(path: &Path) -> Result<Option<Lock>, CliError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
            CliError::usage(format!(
                "{}: not a hermes-plugins lock: {e}",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(CliError::environment(format!("{}: {e}", path.display()))),
    }
}

/// The plugins to resolve (the home's enabled ones, or `--plugin` directories) and the
/// warnings about what is left out.
fn gather_plugins(
    args: &ResolveArgs,
    layout: &crate::home::Layout,
) -> Result<(Vec<inputs::PluginInput>, Vec<String>), CliError> {
    let mut warnings = Vec::new();
    let plugins = if args.plugins.is_empty() {
        let (plugins, w) =
            inputs::enabled_plugins(layout).map_err(|e| CliError::environment(e.to_string()))?;
        warnings.extend(w);
        plugins
    } else {
        args.plugins
            .iter()
            .map(|dir| inputs::plugin_from_dir(dir).map_err(|e| CliError::usage(e.to_string())))
            .collect::<Result<Vec<_>, _>>()?
    };
    for p in &plugins {
        for e in &p.excluded {
            warnings.push(format!(
                "{}: `{}` is not resolved ({})",
                e.source.describe(),
                e.raw,
                e.reason.as_str()
            ));
        }
    }
    Ok((plugins, warnings))
}

/// A conflict as the CLI reports it: printed in full for people, in `details` for JSON.
fn conflict_error(
    conflict: &resolve::conflict::Conflict,
    warnings: &[String],
    global: &GlobalArgs,
) -> CliError {
    if !global.printer.json() {
        super::conflict::print_conflict(&global.printer, conflict);
    }
    let mut err = CliError::coded(
        Code::Conflict,
        format!(
            "{}; nothing was resolved",
            conflict
                .sentences
                .first()
                .cloned()
                .unwrap_or_else(|| "no solution".into())
        ),
    );
    err.details = Some(Box::new(
        serde_json::json!({ "conflict": conflict, "warnings": warnings }),
    ));
    err
}

/// Runs `resolve`.
pub fn run(args: &ResolveArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let home = home(global);
    let now = super::env_vars::now().map_err(CliError::usage)?;
    let layout = crate::home::Layout::new(&home);
    let settings = crate::state::settings::Settings::read(&layout.settings())
        .map_err(|e| CliError::coded(Code::Io, e.to_string()))?;
    let found = args.resolver.environment(&settings)?;
    let (plugins, warnings) = gather_plugins(args, &layout)?;
    // Without a lock file, the home's plugins are compared with the current generation's lock.
    let current_generation = crate::generation::current::current_number(&layout)
        .filter(|_| args.plugins.is_empty() && args.lock.is_none());
    let previous = match &args.lock {
        Some(path) => read_lock(path)?,
        None if current_generation.is_some() => current_generation
            .and_then(|n| crate::generation::doc::GenerationDoc::read(&layout.generation(n)).ok())
            .map(|doc| doc.lock),
        None => None,
    };
    let request = found
        .against(now)
        .request(&layout, plugins, previous.clone());
    for w in &warnings {
        tracing::warn!("{w}");
    }
    let outcome = match resolve::run(&request) {
        Ok(o) => o,
        Err(Failure::Environment(code, message, causes)) => {
            return Err(CliError::coded(code, message).caused_by(causes));
        }
        Err(Failure::Conflict(conflict)) => {
            return Err(conflict_error(&conflict, &warnings, global));
        }
    };
    let diff = previous
        .as_ref()
        .map(|p| LockDiff::between(p, &outcome.lock));
    if let (Some(path), false) = (&args.lock, args.dry_run) {
        crate::files::write_atomically(path, outcome.lock.to_json().as_bytes())
            .map_err(|e| CliError::environment(format!("cannot write {}: {e}", path.display())))?;
    }
    if global.printer.json() {
        let doc = serde_json::json!({
            "lock": outcome.lock,
            "diff": diff,
            "diff_against": current_generation.map_or_else(
                || args.lock.as_ref().map(|p| p.display().to_string()),
                |n| Some(format!("generation {n}")),
            ),
            "written": args.lock.as_ref().filter(|_| !args.dry_run).map(|p| p.display().to_string()),
            "quarantine": {
                "days": outcome.quarantine.days,
                "quarantined": outcome.quarantine.cutoffs.len(),
                "exempt": outcome.quarantine.exempt.iter().map(ToString::to_string).collect::<Vec<_>>(),
            },
            "warnings": warnings,
        });
        global
            .printer
            .rendered(&super::json::text(super::json::Schema::Resolve, &doc), true);
        return Ok(Status::Ok);
    }
    let against = match current_generation {
        Some(n) => format!("the current generation ({n})"),
        None => "the previous lock".to_string(),
    };
    let mut text = render(&outcome, diff.as_ref(), &against);
    if let (Some(path), false) = (&args.lock, args.dry_run) {
        text.push_str(&format!("Wrote {}\n", path.display()));
    }
    global.printer.rendered(&text, false);
    Ok(Status::Ok)
}

/// A resolution for people: the packages and what required each, the diff against
/// `against`, the quarantine.
fn render(outcome: &resolve::Outcome, diff: Option<&LockDiff>, against: &str) -> String {
    let lock = &outcome.lock;
    let mut text = format!(
        "Resolved {} package(s) for Python {} ({}, {} {})\n",
        lock.packages.len(),
        lock.python.version,
        lock.python.implementation,
        lock.python.sys_platform,
        lock.python.platform_machine
    );
    let width = lock
        .packages
        .iter()
        .map(|p| p.name.len() + p.version.len() + 1)
        .max()
        .unwrap_or(0);
    for p in &lock.packages {
        let id = format!("{} {}", p.name, p.version);
        text.push_str(&format!("  {id:width$}  {}\n", p.required_by.join(", ")));
    }
    if let Some(diff) = diff {
        if diff.is_empty() {
            text.push_str(&format!("No changes from {against}.\n"));
        } else {
            text.push_str(&format!("Changes from {against}:\n"));
            for (n, v) in &diff.added {
                text.push_str(&format!("  + {n} {v}\n"));
            }
            for (n, v) in &diff.removed {
                text.push_str(&format!("  - {n} {v}\n"));
            }
            for (n, a, b) in &diff.changed {
                text.push_str(&format!("  ~ {n} {a} -> {b}\n"));
            }
        }
    }
    if !outcome.quarantine.cutoffs.is_empty() {
        text.push_str(&format!(
            "Quarantine: {} package(s) pinned by core resolve only to releases at least {} days old",
            outcome.quarantine.cutoffs.len(),
            outcome.quarantine.days
        ));
        if !outcome.quarantine.exempt.is_empty() {
            text.push_str(&format!(
                " (exempt: {})",
                outcome
                    .quarantine
                    .exempt
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        text.push('\n');
    }
    text
}
