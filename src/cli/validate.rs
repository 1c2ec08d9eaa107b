//! `hermes-plugins validate [PATH]...`: load every plugin under the paths, run the checks,
//! render the report, exit 1 if anything fails.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use crate::check;
use crate::diag::{CheckId, Diagnostic, Severity};
use crate::hermes_core::CoreLock;
use crate::package::{self, Content, LoadedPackage, Mode};
use crate::report::{
    self, Counts, Finding, PackageReport, Report, Rule, ServerReport, SkillReport, Summary, Tool,
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
    after_help = "Examples:\n  hermes-plugins validate                      # the plugin (or plugins root) in the current directory\n  hermes-plugins validate ~/.hermes/plugins     # every plugin, flat or <category>/<plugin>\n  hermes-plugins validate my-plugin --strict    # warnings fail too\n  hermes-plugins validate . --format sarif > results.sarif\n  hermes-plugins validate my-plugin --core ~/src/hermes-agent   # also check deps against core's uv.lock\n\nExit codes: 0 all packages pass; 1 a package fails (or none was found); 2 usage; 3 I/O."
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
    #[arg(long, env = "HERMES_PLUGINS_CORE", value_name = "DIR")]
    pub core: Option<PathBuf>,
}

/// The rule descriptions for renderers.
pub fn rules() -> Vec<Rule> {
    CheckId::ALL
        .iter()
        .map(|c| Rule {
            id: c.as_str(),
            spec: c.spec(),
            title: c.title(),
            help: c.help(),
            default_severity: c.default_severity().as_str(),
        })
        .collect()
}

/// Runs `validate`.
pub fn run(args: &ValidateArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let format = if global.json {
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
    let cx = check::Context {
        core: core.as_ref(),
    };
    let reports: Vec<PackageReport> = packages
        .iter()
        .map(|p| package_report(p, check::run(p, &cx), args.strict))
        .collect();
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
                color: global.stdout_color(),
                show_info: !global.quiet,
            },
        ),
        OutputFormat::Json => report::to_json(&report) + "\n",
        OutputFormat::Github => report::github::render(&report),
        OutputFormat::Sarif => report::sarif::render(&report, &rules()) + "\n",
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
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
    Finding {
        check: d.check.as_str().to_string(),
        severity: d.severity.as_str().to_string(),
        message: d.message.clone(),
        hint: d.hint.clone(),
        file: display_file(dir, &d.file),
        line: d.pos.line.max(1),
        column: d.pos.column.max(1),
        component: d.component.clone(),
        value: d.value.clone(),
    }
}

fn package_report(p: &LoadedPackage, diagnostics: Vec<Diagnostic>, strict: bool) -> PackageReport {
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
        python_dependencies,
        skill_namespace,
        skills,
        mcp_servers,
    }
}
