//! `hermes-plugins validate [PATH]...`: load every plugin under the paths, run the checks,
//! render the report, exit 1 if anything fails.

use super::env_vars::EnvVars;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use std::time::Duration;

use crate::check::probe::{ProbeOptions, ProbeResult};
use crate::check::static_py::{RegKind, StaticAnalysis};
use crate::check::{self, Outcome};
use crate::diag::{Diagnostic, Severity};
use crate::hermes_core::CoreLock;
use crate::package::{self, Content, LoadedPackage, Mode};
use crate::report::{
    self, CallbackReport, Counts, Finding, PackageReport, ProbeReport, RegistrationEntry,
    RegistrationsReport, Report, Rule, SecurityReport, ServerReport, SkillReport, Summary, Tool,
    UndeterminedEntry,
};

use super::{CliError, GlobalArgs, Status};

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
    let format = if global.printer.json() {
        OutputFormat::Json
    } else {
        args.format
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
    let mut packages = Vec::new();
    for path in &paths {
        if std::fs::symlink_metadata(path).is_err() {
            return Err(CliError::usage(format!(
                "{}: no such file or directory",
                path.display()
            )));
        }
        let tree = package::load_path(path, Mode::Validate).map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidInput {
                CliError::usage(e.to_string())
            } else {
                CliError::environment(format!("{}: {e}", path.display()))
            }
        })?;
        for skipped in &tree.skipped {
            tracing::debug!("skipped {}: {}", skipped.path.display(), skipped.reason);
        }
        if tree.packages.is_empty() {
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
        .map(|dir| {
            let core = core.as_ref().map_or_else(
                || "none".to_string(),
                |c| {
                    std::fs::read(&c.path)
                        .map(|b| crate::hash::sha256_hex(&b))
                        .unwrap_or_default()
                },
            );
            report::cache::ReportCache::new(
                &dir,
                &report::cache::program_identity(),
                &format!("strict={} core={core}", args.strict),
            )
        });
    let reports = validate_packages(&packages, &cx, cache.as_ref(), args.strict)?;
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
            },
        ),
        OutputFormat::Json => super::json::text(super::json::Schema::ValidateReport, &report),
        OutputFormat::Github => report::github::render(&report),
        OutputFormat::Sarif => report::sarif::render(&report, &rules()) + "\n",
    };
    super::printer::write_stdout(text.as_bytes())
        .map_err(|e| CliError::environment(format!("cannot write the report: {e}")))?;
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

fn display_file(dir: &Path, rel: &str) -> String {
    let joined = if rel == "." || rel.is_empty() {
        dir.to_path_buf()
    } else {
        dir.join(rel)
    };
    let text = joined.display().to_string().replace('\\', "/");
    text.strip_prefix("./").map(str::to_string).unwrap_or(text)
}

fn finding(dir: &Path, d: &Diagnostic) -> Finding {
    d.to_finding(display_file(dir, &d.file))
}

fn registrations_report(dir: &Path, a: &StaticAnalysis) -> RegistrationsReport {
    let r = &a.registrations;
    let entries = |kind: RegKind| -> Vec<RegistrationEntry> {
        r.of(kind)
            .map(|reg| RegistrationEntry {
                name: reg.name.clone(),
                file: display_file(dir, &reg.file),
                line: reg.pos.line,
                override_builtin: (kind == RegKind::Tool).then_some(reg.override_builtin),
                callback: reg.callback.as_ref().map(|cb| CallbackReport {
                    name: cb.name.clone(),
                    file: display_file(dir, &cb.file),
                    line: cb.pos.line,
                    accepts_kwargs: cb.accepts_kwargs,
                }),
            })
            .collect()
    };
    RegistrationsReport {
        analyzed: r.analyzed,
        reason: r.reason.clone(),
        entry: r.entry.as_ref().map(|e| display_file(dir, e)),
        tools: entries(RegKind::Tool),
        hooks: entries(RegKind::Hook),
        middleware: entries(RegKind::Middleware),
        undetermined: r
            .undetermined
            .iter()
            .map(|u| UndeterminedEntry {
                kind: u.kind.map(|k| k.as_str().to_string()),
                file: display_file(dir, &u.file),
                line: u.pos.line,
                expression: u.expression.clone(),
            })
            .collect(),
    }
}

fn security_report(a: &StaticAnalysis) -> SecurityReport {
    use crate::check::static_py::security::Level;
    let count = |level: Level| a.security.iter().filter(|f| f.level == level).count();
    SecurityReport {
        verdict: a.verdict.as_str().to_string(),
        critical: count(Level::Critical),
        high: count(Level::High),
        medium: count(Level::Medium),
    }
}

fn probe_report(p: &ProbeResult) -> ProbeReport {
    ProbeReport {
        ok: p.completed() && p.error.is_none(),
        phase: p.phase.clone(),
        error: p.error.clone(),
        duration_ms: u64::try_from(p.duration.as_millis()).unwrap_or(u64::MAX),
        tools: p.tools.iter().map(|(n, _)| n.clone()).collect(),
        hooks: p.hooks.iter().map(|(n, _)| n.clone()).collect(),
        middleware: p.middleware.clone(),
        commands: p.commands.clone(),
        cli_commands: p.cli_commands.clone(),
        platforms: p.platforms.clone(),
        network_attempts: p.network_attempts.clone(),
    }
}

/// Every package's report, in order: from the cache when the package is unchanged, else
/// analysed (all misses together, in parallel) and stored.
fn validate_packages(
    packages: &[LoadedPackage],
    cx: &check::Context<'_>,
    cache: Option<&report::cache::ReportCache>,
    strict: bool,
) -> Result<Vec<PackageReport>, CliError> {
    let keys: Vec<Option<String>> = packages
        .iter()
        .map(|p| {
            let root = p.root.as_ref()?;
            cache?.key(
                &p.dir.display().to_string(),
                &p.key,
                &format!("{:?}", p.diagnostics),
                root,
            )
        })
        .collect();
    let mut reports: Vec<Option<PackageReport>> = keys
        .iter()
        .map(|k| k.as_deref().and_then(|k| cache?.get(k)))
        .collect();
    let missing: Vec<usize> = (0..packages.len())
        .filter(|i| reports[*i].is_none())
        .collect();
    let hits = packages.len() - missing.len();
    let analysed: Vec<&LoadedPackage> = missing.iter().map(|i| &packages[*i]).collect();
    for (i, outcome) in missing.iter().zip(check::run_all(&analysed, cx)) {
        let outcome = outcome.map_err(|e| CliError::environment(e.to_string()))?;
        let report = package_report(&packages[*i], outcome, strict);
        if let (Some(cache), Some(key)) = (cache, &keys[*i]) {
            cache.put(key, &report);
        }
        reports[*i] = Some(report);
    }
    if let Some(cache) = cache
        && !missing.is_empty()
    {
        cache.prune();
    }
    if cache.is_some() {
        tracing::debug!(
            "validation cache: {hits} unchanged, {} analysed",
            missing.len()
        );
    }
    Ok(reports.into_iter().flatten().collect())
}

fn package_report(p: &LoadedPackage, outcome: Outcome, strict: bool) -> PackageReport {
    let diagnostics = outcome.findings;
    let accepted = p.accepted();
    let mut ok = !check::fails(&diagnostics, strict);
    if !accepted {
        ok = false;
    }
    let findings: Vec<Finding> = diagnostics.iter().map(|d| finding(&p.dir, d)).collect();
    let counts = Counts::of(&findings);
    let strings = |list: &[package::Spanned<String>]| {
        list.iter().map(|s| s.value.clone()).collect::<Vec<_>>()
    };
    let (capabilities, requires_auth) = match &p.content {
        Content::Native(n) => (
            n.manifest.as_ref().map(|m| strings(&m.capabilities)),
            n.manifest.as_ref().map(|m| strings(&m.requires_auth)),
        ),
        Content::Portable(_) => (None, None),
        Content::Pip(pp) => (
            Some(
                pp.capabilities
                    .iter()
                    .filter_map(|c| c.name.split_once('.').map(|(_, cap)| cap.to_string()))
                    .collect(),
            ),
            None,
        ),
    };
    let (kind, python_dependencies, skill_namespace, skills, mcp_servers) = match &p.content {
        Content::Native(n) => (
            n.manifest.as_ref().map(|m| m.kind().as_str().to_string()),
            Some(
                n.declarations
                    .managed
                    .iter()
                    .map(|r| r.raw.clone())
                    .collect(),
            ),
            None,
            None,
            None,
        ),
        Content::Pip(_) => (None, None, None, None, None),
        Content::Portable(pp) => {
            let skills = pp
                .loaded_skills()
                .iter()
                .map(|s| SkillReport {
                    name: s.name.clone(),
                    description: s.description.clone(),
                    qualified_name: format!("{}:{}", pp.namespace, s.name),
                })
                .collect();
            let servers = pp
                .loaded_servers()
                .iter()
                .map(|s| {
                    let (command, args, url) = match &s.transport {
                        package::portable::Transport::Stdio { command, args, .. } => {
                            (Some(command.clone()), Some(args.clone()), None)
                        }
                        package::portable::Transport::StreamableHttp { url, .. } => {
                            (None, None, Some(url.clone()))
                        }
                    };
                    ServerReport {
                        name: s.name.clone(),
                        transport: s.transport.name().to_string(),
                        trust: s.trust.as_str().to_string(),
                        command,
                        args,
                        url,
                    }
                })
                .collect();
            (
                None,
                None,
                Some(pp.namespace.clone()),
                Some(skills),
                Some(servers),
            )
        }
    };
    debug_assert!(
        findings
            .iter()
            .all(|f| f.severity != Severity::Info.as_str() || !f.message.is_empty())
    );
    PackageReport {
        path: display_file(&p.dir, "."),
        key: p.key.clone(),
        name: p.name(),
        version: p.version(),
        format: p.format().as_str().to_string(),
        kind,
        accepted,
        ok,
        counts,
        findings,
        capabilities,
        requires_auth,
        registrations: outcome
            .analysis
            .as_ref()
            .filter(|a| match p.content {
                Content::Native(_) => a.has_init,
                Content::Pip(_) => a.registrations.analyzed || a.registrations.reason.is_some(),
                Content::Portable(_) => false,
            })
            .map(|a| registrations_report(&p.dir, a)),
        security: outcome.analysis.as_ref().map(security_report),
        probe: outcome.probe.as_ref().map(probe_report),
        compatibility: Some(report::CompatibilityReport {
            summary: outcome.compatibility.summary(),
            loads_on: outcome.compatibility.loads_on,
            first: outcome.compatibility.first,
            needs_newer: outcome.compatibility.needs_newer,
        }),
        python_dependencies,
        skill_namespace,
        skills,
        mcp_servers,
    }
}
