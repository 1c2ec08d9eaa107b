//! `generations list | rollback [N] | gc [--keep N]`.

use clap::{Args, Subcommand};
use serde_json::json;

use crate::manager::{self, query};

use super::error::CliError;
use super::global::GlobalArgs;
use super::json::Schema;
use super::manage::{self, StderrFeedback};
use crate::exit::Status;

/// Arguments of `generations`.
#[derive(Debug, Args)]
pub struct GenerationsArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: GenerationsAction,
}

/// `generations` subcommands.
#[derive(Debug, Subcommand)]
pub enum GenerationsAction {
    /// List published generations
    List,
    /// Switch back to generation N (default: the current one's parent), with its selections
    #[command(
        after_help = "Example:\n  hermes-plugins generations rollback\n  hermes-plugins generations rollback 3"
    )]
    Rollback {
        /// The generation to switch to
        number: Option<u64>,
    },
    /// Remove generations and store trees nothing needs (never current, its parent, or one in use)
    #[command(after_help = "Example:\n  hermes-plugins generations gc --keep 5")]
    Gc {
        /// Also keep the N newest generations
        #[arg(long, default_value_t = 0)]
        keep: usize,
        /// Only remove generations older than this (e.g. 7d, 12h, 30m)
        #[arg(long, value_name = "AGE", value_parser = parse_age)]
        older_than: Option<jiff::SignedDuration>,
    },
}

/// Runs `generations`.
pub fn run(args: &GenerationsArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let cx = manage::read_context(global)?;
    match &args.action {
        GenerationsAction::List => {
            let rows = query::generations(&cx);
            if global.printer.json() {
                global
                    .printer
                    .document(Schema::Generations, &json!({ "generations": rows }));
            } else if rows.is_empty() {
                outln!(
                    global.printer,
                    "No generations under {}",
                    cx.layout.generations().display()
                );
            } else {
                for r in rows {
                    // Only what the policy lets go is marked; `--json` says why each is kept.
                    let fate = match r.kept {
                        Some(_) => "",
                        None => "  (collected by the next publication)",
                    };
                    outln!(
                        global.printer,
                        "{} {:>4}  {}  {:<28} {} package(s), plugins: {}{fate}",
                        if r.current { "*" } else { " " },
                        r.number,
                        r.created,
                        r.operation,
                        r.packages,
                        if r.plugins.is_empty() {
                            "-".to_string()
                        } else {
                            r.plugins.join(", ")
                        }
                    );
                }
            }
        }
        GenerationsAction::Rollback { number } => {
            let mut feedback = StderrFeedback::new(global);
            let _lock = manager::begin_writing(&cx, "generations rollback", &mut feedback)
                .map_err(|e| manage::failure(e, global))?;
            let (from, to) = manager::generations::rollback(&cx, *number)
                .map_err(|e| manage::failure(e, global))?;
            if global.printer.json() {
                global.printer.document(
                    Schema::Operation,
                    &json!({ "operation": "rollback", "from": from, "to": to }),
                );
            } else {
                outln!(global.printer, "Rolled back from generation {from} to {to}");
            }
        }
        GenerationsAction::Gc { keep, older_than } => {
            let mut feedback = StderrFeedback::new(global);
            let _lock = manager::begin_writing(&cx, "generations gc", &mut feedback)
                .map_err(|e| manage::failure(e, global))?;
            let report = manager::gc::collect_garbage(&cx, *keep, *older_than)
                .map_err(|e| manage::failure(e, global))?;
            if global.printer.json() {
                let mut doc = json!(report);
                doc["operation"] = json!("gc");
                global.printer.document(Schema::Operation, &doc);
            } else {
                outln!(
                    global.printer,
                    "Removed {} generation(s) and {} store tree(s)",
                    report.removed_generations.len(),
                    report.removed_trees.len()
                );
                for (n, why) in &report.kept {
                    outln!(global.printer, "  kept {n}: {why}");
                }
            }
        }
    }
    Ok(Status::Ok)
}

/// `7d`, `12h`, `30m`, `45s` → a duration.
fn parse_age(text: &str) -> Result<jiff::SignedDuration, String> {
    let text = text.trim();
    let (number, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let n: i64 = number
        .parse()
        .map_err(|_| format!("`{text}`: expected a number with a unit, like 7d or 12h"))?;
    let seconds = match unit {
        "d" => 86_400,
        "h" => 3_600,
        "m" => 60,
        "s" | "" => 1,
        other => return Err(format!("`{other}`: use d, h, m or s")),
    };
    Ok(jiff::SignedDuration::from_secs(n.saturating_mul(seconds)))
}
