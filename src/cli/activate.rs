//! `activate` / `deactivate`: the hook in a Hermes installation's site-packages that makes
//! every process of it read the current generation without `exec` (`agent::activate`).

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use super::error::CliError;
use super::global::GlobalArgs;
use super::json::Schema;
use crate::agent::activate::{self, ActivateError, Target};
use crate::exit::{Code, Status};
use crate::state::settings::{CoreSetting, Settings};

/// Arguments of `activate` and `deactivate`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hermes-plugins activate                                  # the recorded core's interpreter, else the `hermes` on PATH\n  hermes-plugins activate --python ~/.hermes/hermes-agent/venv/bin/python\n  hermes-plugins deactivate\n\nThe hook is two entries in that interpreter's site-packages (hermes_plugins_activate.pth and the package hermes_plugins_generation/). Every process of that Hermes then reads the current generation of its HERMES_HOME (else ~/.hermes) as under `exec`; a home with nothing published is left exactly as it is."
)]
pub struct ActivateArgs {
    /// The interpreter Hermes runs with [default: the recorded core's (`--core installed:PY`),
    /// else the one behind the `hermes` on PATH]
    #[arg(long, value_name = "PYTHON")]
    pub python: Option<PathBuf>,
}

/// The Hermes in use: the recorded installed core's interpreter, else the one behind the
/// `hermes` on PATH.
fn hermes_python(global: &GlobalArgs) -> Option<PathBuf> {
    let layout = crate::home::Layout::new(&super::manage::home(global));
    if let Ok(settings) = Settings::read(&layout.settings())
        && let Some(CoreSetting::Installed { python }) = settings.core
    {
        return Some(python);
    }
    super::environment::detect_hermes()
}

/// What `env` and `list` say of the Hermes in use: its interpreter, version and whether it is
/// activated (`null` in `--json` when no Hermes is known or it cannot be asked).
pub fn hermes_in_use(global: &GlobalArgs) -> serde_json::Value {
    let Some(target) = hermes_python(global).and_then(|p| activate::inspect(&p).ok()) else {
        return serde_json::Value::Null;
    };
    json!({
        "python": target.python,
        "version": target.hermes,
        "activated": activate::is_active(&target.site_packages),
    })
}

/// `hermes_in_use` for people: one line, or none.
pub fn hermes_line(hermes: &serde_json::Value) -> Option<String> {
    let python = hermes.get("python")?.as_str()?;
    let version = hermes["version"].as_str().unwrap_or("?");
    Some(if hermes["activated"] == true {
        format!("hermes {version} ({python}): activated, reads the current generation by itself")
    } else {
        format!(
            "hermes {version} ({python}): not activated, sees the generation only under `hermes-plugins exec` (or run `hermes-plugins activate`)"
        )
    })
}

/// The interpreter to act on: `--python`, the recorded installed core's, the `hermes` on PATH.
fn interpreter(args: &ActivateArgs, global: &GlobalArgs) -> Result<PathBuf, CliError> {
    if let Some(python) = &args.python {
        return Ok(python.clone());
    }
    hermes_python(global).ok_or_else(|| {
        CliError::coded(
            Code::NotFound,
            "no Hermes to activate: no installed core is recorded and there is no `hermes` on PATH (name its interpreter: --python PYTHON)",
        )
    })
}

fn failure(e: ActivateError) -> CliError {
    match e {
        ActivateError::Interpreter { .. } => CliError::coded(Code::Interpreter, e.to_string()),
        ActivateError::Unsupported(_) | ActivateError::ReadOnly(_) => {
            CliError::coded(Code::Refused, e.to_string())
        }
        ActivateError::Io { .. } => CliError::coded(Code::Io, e.to_string()),
    }
}

fn report(global: &GlobalArgs, operation: &str, target: &Target, changes: &[activate::FileChange]) {
    let active = activate::is_active(&target.site_packages);
    if global.printer.json() {
        global.printer.document(
            Schema::Activate,
            &json!({
                "operation": operation,
                "python": target.python,
                "site_packages": target.site_packages,
                "hermes": target.hermes,
                "active": active,
                "files": changes,
            }),
        );
        return;
    }
    for c in changes {
        outln!(global.printer, "{} {}", c.change, c.path.display());
    }
    let hermes = target.hermes.as_deref().unwrap_or("?");
    if active {
        outln!(
            global.printer,
            "Hermes {hermes} at {} reads the current generation of its home by itself",
            target.python.display()
        );
    } else {
        outln!(
            global.printer,
            "Hermes {hermes} at {} loads <home>/plugins as it does without hermes-plugins",
            target.python.display()
        );
    }
}

pub fn activate(args: &ActivateArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let python = interpreter(args, global)?;
    let target = activate::inspect(&python).map_err(failure)?;
    if let Some(warning) = activate::check(&target).map_err(failure)? {
        global.printer.warning(&warning);
    }
    let binary = std::env::current_exe()
        .map_err(|e| CliError::environment(format!("cannot tell where this binary is: {e}")))?;
    let changes = activate::activate(&target, &binary).map_err(failure)?;
    report(global, "activate", &target, &changes);
    Ok(Status::Ok)
}

pub fn deactivate(args: &ActivateArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let python = interpreter(args, global)?;
    let target = activate::inspect(&python).map_err(failure)?;
    let changes = activate::deactivate(&target).map_err(failure)?;
    report(global, "deactivate", &target, &changes);
    Ok(Status::Ok)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use clap::CommandFactory;

    /// The hook finds the plugin a routed `hermes plugins …` line names by skipping option
    /// values (`VALUED` in the package's `routing.py`): it must know every option of the routed commands
    /// that takes its value as the next argument.
    #[test]
    fn the_hook_knows_every_option_of_the_routed_commands_that_takes_a_value() {
        let cli = super::super::Cli::command();
        let mut valued = BTreeSet::new();
        for name in [
            "install", "update", "remove", "enable", "disable", "validate",
        ] {
            let sub = cli.find_subcommand(name).unwrap();
            for arg in sub.get_arguments().chain(cli.get_arguments()) {
                if let Some(long) = arg.get_long()
                    && arg.get_action().takes_values()
                    && !arg.is_positional()
                    && !arg.is_require_equals_set()
                {
                    valued.insert(format!("--{long}"));
                }
            }
        }
        let reader = crate::agent::package::module("routing.py").unwrap();
        let start = reader.find("VALUED = frozenset((").unwrap();
        let end = start + reader[start..].find("))").unwrap();
        let listed: BTreeSet<String> = reader[start..end]
            .split('"')
            .skip(1)
            .step_by(2)
            .map(String::from)
            .collect();
        let missing: Vec<_> = valued.difference(&listed).collect();
        assert!(missing.is_empty(), "VALUED lacks {missing:?}");
        assert!(listed.contains("--grant") && listed.contains("--ref"));
    }
}
