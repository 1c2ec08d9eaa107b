//! `outdated`: what `update` could move — plugins against their sources, locked Python
//! packages against the newest versions the requirements and the quarantine admit.

use clap::Args;
use serde_json::json;

use crate::exit::Code;
use crate::manager::outdated;

use super::error::CliError;
use super::global::GlobalArgs;
use super::json::Schema;
use super::manage::{self, EnvArgs};
use crate::exit::Status;

/// Arguments of `outdated`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hermes-plugins outdated\n  hermes-plugins outdated --no-packages --json\n\nPlugins: catalog entries against the catalog's current pin, git sources against their tracked branch (and newest version tag), local directories against their HEAD. Python packages: the current lock against a fresh resolution without preferring it (the same core, indexes and quarantine). Nothing is changed; `update` moves plugins."
)]
pub struct OutdatedArgs {
    /// Only the plugins: no resolution of Python packages (no index needed)
    #[arg(long)]
    pub no_packages: bool,
    /// Environment options (core, interpreter, indexes, catalog).
    #[command(flatten)]
    pub env: EnvArgs,
}

/// Runs `outdated`.
pub fn run(args: &OutdatedArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let cx = manage::context(&args.env, global, false)?;
    let plugins = outdated::plugins(&cx).map_err(|e| manage::failure(e, global))?;
    let packages = if args.no_packages {
        None
    } else if crate::generation::current::current_number(&cx.layout).is_none() {
        // Nothing published: no lock to compare, so nothing needs core.
        None
    } else if !cx.core_known {
        return Err(CliError::coded(
            Code::NoCore,
            "the Python packages are compared with a fresh resolution, which needs Hermes core: pass --core (or --no-core), or --no-packages for the plugins alone",
        ));
    } else {
        Some(outdated::packages(&cx).map_err(|e| manage::failure(e, global))?)
    };
    if global.printer.json() {
        global.printer.document(
            Schema::Outdated,
            &json!({ "plugins": plugins, "packages": packages }),
        );
        return Ok(Status::Ok);
    }
    let short = |c: &Option<String>| {
        c.as_deref()
            .map_or("-".to_string(), |c| c.chars().take(12).collect())
    };
    if plugins.is_empty() {
        outln!(
            global.printer,
            "No plugins installed under {}",
            cx.layout.pm.display()
        );
    }
    for p in &plugins {
        let arrow = if p.latest.is_some() && p.latest != p.current {
            format!("{} -> {}", short(&p.current), short(&p.latest))
        } else {
            short(&p.current)
        };
        let mut line = format!("{:<24} {:<12} {arrow}", p.key, p.status);
        if let Some(tag) = &p.newest_tag {
            line.push_str(&format!("  (newest tag {tag})"));
        }
        if let Some(note) = &p.note {
            line.push_str(&format!("  {note}"));
        }
        outln!(global.printer, "{line}");
    }
    match &packages {
        Some(list) if list.is_empty() => {
            outln!(
                global.printer,
                "Python packages: all at the newest admitted version"
            )
        }
        Some(list) => {
            outln!(
                global.printer,
                "Python packages with newer admitted versions:"
            );
            for p in list {
                outln!(
                    global.printer,
                    "  {:<30} {} -> {}",
                    p.name,
                    p.current,
                    p.latest
                );
            }
        }
        None if !args.no_packages => outln!(
            global.printer,
            "Python packages: none yet (no generation is published)"
        ),
        None => {}
    }
    Ok(Status::Ok)
}
