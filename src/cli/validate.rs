//! `hermes-plugins validate [PATH]...`: load every plugin under the paths, run the checks,
//! render the report, exit 1 if anything fails.

use super::env_vars::EnvVars;
use std::io::Write;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use std::time::Duration;

use crate::check;
use crate::check::probe::ProbeOptions;
use crate::hermes_core::CoreLock;
use crate::package::{self, Mode};
use crate::report::{self, Report, Rule, Summary, Tool};
use crate::validation;

use super::error::CliError;
use super::global::GlobalArgs;
use crate::exit::Status;

/// Output formats of `validate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Text for people (colours on a terminal)
    Human,
    /// One JSON document (schema: catalog-schema/validate-report.schema.json)
    Json,
    /// GitHub Actions workflow annotations
    Github,
    /// SARIF 2.1.0 for code-scanning upload
    Sarif,
}

/// Arguments of `validate`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hermes-plugins validate                      # the plugin (or plugins root) in the current directory\n  hermes-plugins validate ~/.hermes/plugins     # every plugin, flat or <category>/<plugin>\n  hermes-plugins validate my-plugin --strict    # warnings fail too\n  hermes-plugins validate . --format sarif > results.sarif\n  hermes-plugins validate my-plugin --core ~/src/hermes-agent   # also check deps against core's uv.lock\n  hermes-plugins validate my-plugin --probe                     # also run register(ctx) in python3 (runs plugin code!)\n  hermes-plugins validate my-plugin --probe=.venv/bin/python\n\nExit codes: 0 all packages pass; 1 a package fails (or none was found); 2 usage; 3 I/O."
)]
pub struct ValidateArgs {
    /// Plugin directories, directories of plugins, or manifest files [default: .]
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value = "human")]
    pub format: OutputFormat,
    /// Treat warnings as failures
    #[arg(long)]
    pub strict: bool,
    /// Hermes core checkout (pyproject.toml + uv.lock): also check dependencies against core's pins (VAL-9)
    #[arg(long, env = EnvVars::HERMES_PLUGINS_CORE, value_name = "DIR")]
    pub core: Option<PathBuf>,
    /// Also import each native plugin and call register(ctx) in a child interpreter (default python3) and compare with static analysis. Runs plugin code: use only on code you trust.
    #[arg(long, value_name = "PYTHON", num_args = 0..=1, require_equals = true, default_missing_value = "python3", conflicts_with = "probe_hermes")]
    pub probe: Option<String>,
    /// Also load each plugin through the real PluginManager of the Hermes installed for PYTHON (a throwaway HERMES_HOME; declared capabilities granted) and compare. Runs plugin code.
    #[arg(long, value_name = "PYTHON")]
    pub probe_hermes: Option<String>,
    /// Seconds one plugin may take under --probe / --probe-hermes
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub probe_timeout: f64,
    /// Analyse every package, neither reading nor writing the cache of unchanged packages'
    /// reports ($HERMES_PLUGINS_CACHE_DIR, else ~/.cache/hermes-plugins)
    #[arg(long)]
    pub no_cache: bool,
}

/// The rule descriptions for renderers.
pub fn rules() -> Vec<Rule> {
    crate::check::rules()
}

/// Runs `validate`.
pub fn run(args: &ValidateArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let format = match (global.printer.json(), args.format) {
        (false, format) => format,
        (true, OutputFormat::Human | OutputFormat::Json) => OutputFormat::Json,
        (true, other) => {
            return Err(CliError::usage(format!(
                "--json prints the JSON report; --format {} cannot be given with it",
                other
                    .to_possible_value()
                    .map(|v| v.get_name().to_string())
                    .unwrap_or_default()
            )));
        }
    };
    let core = match &args.core {
        Some(dir) => {
            if !dir.is_dir() {
                return Err(CliError::usage(format!(
                    "--core {}: not a directory",
                    dir.display()
                )));
            }
            Some(CoreLock::load(dir).map_err(|e| CliError::environment(format!("--core: {e}")))?)
        }
        None => None,
    };
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    // A path that does not exist is a usage error, reported in its turn among the others.
    let exists: Vec<bool> = paths
        .iter()
        .map(|p| std::fs::symlink_metadata(p).is_ok())
        .collect();
    let existing: Vec<&PathBuf> = paths
        .iter()
        .zip(&exists)
        .filter(|(_, e)| **e)
        .map(|(p, _)| p)
        .collect();
    let mut loaded = package::load_paths(&existing, Mode::Validate).into_iter();
    let mut packages = Vec::new();
    for (path, exists) in paths.iter().zip(exists) {
        if !exists {
            return Err(CliError::usage(format!(
                "{}: no such file or directory",
                path.display()
            )));
        }
        let tree = loaded
            .next()
            .expect("one result per existing path")
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::InvalidInput {
                    CliError::usage(e.to_string())
                } else {
                    CliError::environment(format!("{}: {e}", path.display()))
                }
            })?;
        for skipped in &tree.skipped {
            tracing::debug!("skipped {}: {}", skipped.path.display(), skipped.reason);
        }
        // One path alone: the error after the run says it; among several, which one.
        if tree.packages.is_empty() && paths.len() > 1 {
            tracing::warn!(
                "no plugin found under {} (looked for plugin.yaml, plugin.yml or plugin.json in it, its subdirectories, and one category level below)",
                path.display()
            );
        }
        for p in &tree.packages {
            tracing::debug!(
                "found {} ({}) at {}",
                p.key,
                p.format().as_str(),
                p.dir.display()
            );
        }
        packages.extend(tree.packages);
    }
    if !(args.probe_timeout > 0.0 && args.probe_timeout.is_finite()) {
        return Err(CliError::usage(
            "--probe-timeout must be a positive number of seconds",
        ));
    }
    let probe = match (&args.probe, &args.probe_hermes) {
        (Some(python), _) => Some(ProbeOptions {
            python: python.clone(),
            timeout: Duration::from_secs_f64(args.probe_timeout),
            hermes: false,
        }),
        (None, Some(python)) => Some(ProbeOptions {
            python: python.clone(),
            timeout: Duration::from_secs_f64(args.probe_timeout),
            hermes: true,
        }),
        (None, None) => None,
    };
    let cx = check::Context {
        core: core.as_ref(),
        probe: probe.as_ref(),
    };
    let cache = (!args.no_cache && probe.is_none())
        .then(super::env_vars::cache_dir)
        .flatten()
        .map(|dir| validation::cache(&dir, core.as_ref(), args.strict));
    let reports = validation::packages(&packages, &cx, cache.as_ref(), args.strict)
        .map_err(|e| CliError::environment(e.to_string()))?;
    let summary = Summary::of(&reports);
    let report = Report {
        tool: Tool {
            name: "hermes-plugins".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        strict: args.strict,
        packages: reports,
        summary,
    };
    let text = match format {
        OutputFormat::Human => report::human::render(
            &report,
            report::human::Options {
                color: global.printer.color(),
                show_info: !global.printer.quiet(),
                items: "package(s)",
            },
        ),
        OutputFormat::Json => super::json::text(super::json::Schema::ValidateReport, &report),
        OutputFormat::Github => report::github::render(&report, "validate", "package(s)"),
        OutputFormat::Sarif => report::sarif::render(&report, &rules()) + "\n",
    };
    // Nothing found: for people, the error alone (not an "ok" summary of nothing before it);
    // machine formats still get their (empty) document.
    let nothing_for_people = report.packages.is_empty() && format == OutputFormat::Human;
    if !nothing_for_people {
        super::printer::write_stdout(text.as_bytes())
            .map_err(|e| CliError::environment(format!("cannot write to stdout: {e}")))?;
    }
    if report.packages.is_empty() {
        let _ = writeln!(
            std::io::stderr(),
            "error: no plugin found in {} (a plugin directory has plugin.yaml, plugin.yml or plugin.json)",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return Ok(Status::Failed);
    }
    Ok(if summary.failed > 0 {
        Status::Failed
    } else {
        Status::Ok
    })
}
