//! The `validate` pipeline below the CLI: every package checked (in parallel, the unchanged
//! ones from the report cache) and turned into the report types `report` renders. It sits
//! above both `check` (which knows nothing of reports) and `report` (which knows nothing of
//! checks); `cli::validate` parses the arguments and renders.

use std::path::Path;

use crate::check::probe::{ProbeError, ProbeResult};
use crate::check::static_py::{RegKind, StaticAnalysis};
use crate::check::{self, Outcome};
use crate::diag::{Diagnostic, Severity};
use crate::hermes_core::CoreLock;
use crate::package::{self, Content, LoadedPackage};
use crate::report::{
    self, CallbackReport, Counts, Finding, PackageReport, ProbeReport, RegistrationEntry,
    RegistrationsReport, SecurityReport, ServerReport, SkillReport, UndeterminedEntry,
};

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

/// The report cache for `strict` and `core` (its `uv.lock` by content): reports made with
/// other settings or another program are never reused.
pub fn cache(dir: &Path, core: Option<&CoreLock>, strict: bool) -> report::cache::ReportCache {
    let core = core.map_or_else(
        || "none".to_string(),
        |c| {
            std::fs::read(&c.path)
                .map(|b| crate::hash::sha256_hex(&b))
                .unwrap_or_default()
        },
    );
    report::cache::ReportCache::new(
        dir,
        &report::cache::program_identity(),
        &format!("strict={strict} core={core}"),
    )
}

/// Every package's report, in order: from the cache when the package is unchanged, else
/// analysed (all misses together, on every core) and stored.
pub fn packages(
    packages: &[LoadedPackage],
    cx: &check::Context<'_>,
    cache: Option<&report::cache::ReportCache>,
    strict: bool,
) -> Result<Vec<PackageReport>, ProbeError> {
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
        let outcome = outcome?;
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

/// One package's report: its findings with display paths, what its analysis found, whether
/// it passes (`strict`: warnings fail too).
pub fn package_report(p: &LoadedPackage, outcome: Outcome, strict: bool) -> PackageReport {
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
            loads: outcome.compatibility.loads,
            why_not: outcome
                .compatibility
                .why_not
                .into_iter()
                .map(|(version, reasons)| {
                    let reasons = reasons
                        .into_iter()
                        .map(|r| report::LoadReason {
                            check: r.check,
                            message: r.message,
                        })
                        .collect();
                    (version, reasons)
                })
                .collect(),
            rejected: outcome.compatibility.rejected,
        }),
        python_dependencies,
        skill_namespace,
        skills,
        mcp_servers,
    }
}
