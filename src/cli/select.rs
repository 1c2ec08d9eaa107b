//! What the selection commands (`enable`, `disable`, `remove`, `sync`, `capabilities`) share:
//! running a selection change through the manager and reporting the publication.

use serde_json::json;

use crate::manager::apply::{self, Applied, Change};
use crate::manager::{self};

use super::error::CliError;
use super::global::GlobalArgs;
use super::manage::{self, EnvArgs, StderrFeedback, TerminalPrompter};

pub(super) fn report(operation: &str, applied: &Applied, what: &str, global: &GlobalArgs) {
    if global.printer.json() {
        let mut doc = json!({ "operation": operation, "result": what, "generation": applied });
        if let Some(plan) = &applied.plan {
            // A dry run did nothing: its result says what it would do.
            doc["result"] = json!(format!("Dry run, nothing changed: {}", would(what)));
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

/// "Enabled weather in profile `default`" as what a dry run would do: "would enable weather in
/// profile `default`".
fn would(what: &str) -> String {
    let (verb, rest) = what.split_once(' ').unwrap_or((what, ""));
    let verb = match verb {
        "Enabled" => "enable",
        "Disabled" => "disable",
        "Removed" => "remove",
        "Synced" => "sync",
        "Granted" => "grant",
        "Revoked" => "revoke",
        "Updated" => "update",
        other => return format!("would do: {other} {rest}").trim_end().to_string(),
    };
    format!("would {verb} {rest}").trim_end().to_string()
}

pub(super) fn run_change(
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

pub(super) fn installed_key(cx: &manager::Context, name: &str) -> Result<String, CliError> {
    let installed = crate::state::installed::Installed::read(&cx.layout.installed())
        .map_err(|e| CliError::environment(e.to_string()))?;
    installed.find(name).map(|p| p.key.clone()).ok_or_else(|| {
        CliError::coded(
            crate::exit::Code::NotFound,
            format!("`{name}` is not installed (see `hermes-plugins list`)"),
        )
    })
}
