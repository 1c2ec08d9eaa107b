//! `generations list | rollback [N] | gc [--keep N]`.

use clap::{Args, Subcommand};
use serde_json::json;

use crate::manager::{self, query};

use super::manage::{self, StderrFeedback};
use super::{CliError, GlobalArgs, Status};

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
    },
}

/// Runs `generations`.
pub fn run(args: &GenerationsArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let cx = manage::read_context(global);
    match &args.action {
        GenerationsAction::List => {
            let rows = query::generations(&cx);
            if global.json {
                manage::print_json(&json!({ "generations": rows }));
            } else if rows.is_empty() {
                println!("No generations under {}", cx.layout.generations().display());
            } else {
                for r in rows {
                    println!(
                        "{} {:>4}  {}  {:<28} {} package(s), plugins: {}",
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
            let _lock = manager::begin_writing(&cx.layout, "generations rollback", &mut feedback)
                .map_err(|e| manage::failure(e, global))?;
            let (from, to) =
                query::rollback(&cx, *number).map_err(|e| manage::failure(e, global))?;
            if global.json {
                manage::print_json(&json!({ "from": from, "to": to }));
            } else {
                println!("Rolled back from generation {from} to {to}");
            }
        }
        GenerationsAction::Gc { keep } => {
            let mut feedback = StderrFeedback::new(global);
            let _lock = manager::begin_writing(&cx.layout, "generations gc", &mut feedback)
                .map_err(|e| manage::failure(e, global))?;
            let report =
                query::collect_garbage(&cx, *keep).map_err(|e| manage::failure(e, global))?;
            if global.json {
                manage::print_json(&json!(report));
            } else {
                println!(
                    "Removed {} generation(s) and {} store tree(s)",
                    report.removed_generations.len(),
                    report.removed_trees.len()
                );
                for (n, why) in &report.kept {
                    println!("  kept {n}: {why}");
                }
            }
        }
    }
    Ok(Status::Ok)
}
