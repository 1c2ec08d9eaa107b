//! `catalog review ENTRY [--base OLD]` (CAT-3): fetch the entry's repository at its pinned
//! sha, find the package at `subdir`, validate it statically, check that the entry's
//! `capabilities` block matches what the package provides, and — for a changed entry — show
//! the surface and dependency diff between the two pins and how many commits lie between
//! them. Renders for humans, as Markdown for a PR comment, JSON, GitHub annotations and SARIF.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::entry::{self, Entry};
use super::finding::CatalogFinding;
use crate::check;
use crate::consent::surface::{Surface, SurfaceDiff};
use crate::diag::{CheckId, Family, Severity};
use crate::package::{self, Content, Mode};
use crate::report::{self, Counts, Finding, PackageReport, Report, Summary, Tool};
use crate::source::{self, git};

/// The package found at the pin.
#[derive(Debug, Clone, Serialize)]
pub struct PackageFacts {
    /// Plugin key.
    pub key: String,
    /// Manifest name.
    pub name: String,
    /// Declared version.
    pub version: Option<String>,
    /// `native-v1`, `native-v2`, `portable`.
    pub format: String,
    /// Security verdict (`safe`, `caution`, `dangerous`).
    pub security: Option<String>,
}

/// The comparison with the previous pin.
#[derive(Debug, Clone, Serialize)]
pub struct BaseDiff {
    /// The previous sha.
    pub from: String,
    /// The new sha.
    pub to: String,
    /// Commits reachable from the new sha and not from the old one (when both are in the
    /// same repository and the old one is an ancestor).
    pub commits: Option<usize>,
    /// Whether the old sha is an ancestor of the new one (false: history was rewritten or the
    /// repository changed).
    pub fast_forward: bool,
    /// Surface additions and removals (tools, hooks, dependencies, capabilities, …).
    pub surface: SurfaceDiff,
}

/// A finished review.
#[derive(Debug, Clone, Serialize)]
pub struct Review {
    /// The entry file.
    pub entry_file: PathBuf,
    /// The entry name.
    pub name: String,
    /// The pinned sha.
    pub sha: String,
    /// The package, when found.
    pub package: Option<PackageFacts>,
    /// Entry-file findings (CAT-1) and capability mismatches.
    pub entry_findings: Vec<Finding>,
    /// Validation findings of the package (paths relative to the repository root).
    pub validation: Vec<Finding>,
    /// The comparison with `--base`.
    pub base: Option<BaseDiff>,
    /// Whether the entry can be merged as far as this tool can tell.
    pub ok: bool,
}

/// Why a review could not be made at all.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// The entry file is unusable.
    #[error("{0}")]
    Entry(String),
    /// The repository cannot be reached (exit 3).
    #[error("{0}")]
    Network(String),
    /// The sha, the subdirectory or the package there cannot be used (exit 1).
    #[error("{0}")]
    Fetch(String),
}

fn finding_of(f: &CatalogFinding) -> Finding {
    f.to_finding(f.file.clone())
}

fn load_entry(path: &Path) -> Result<(Entry, Vec<CatalogFinding>), ReviewError> {
    let (entry, findings) = entry::load(path);
    match entry {
        Some(e) => Ok((e, findings)),
        None => Err(ReviewError::Entry(format!(
            "{}: the entry cannot be used: {}",
            path.display(),
            findings
                .iter()
                .filter(|f| f.severity == Severity::Error)
                .map(|f| f.message.clone())
                .collect::<Vec<_>>()
                .join("; ")
        ))),
    }
}

fn fetch(entry: &Entry, dest: &Path) -> Result<PathBuf, ReviewError> {
    git::clone_at(&entry.repo, Some(&entry.sha), dest, &mut |_, _| {}).map_err(|e| {
        let message = format!("{}: {e}", entry.file.display());
        match e {
            git::GitError::Clone { .. } => ReviewError::Network(message),
            _ => ReviewError::Fetch(message),
        }
    })?;
    source::contained_subdir(dest, entry.subdir.as_deref())
        .map_err(|e| ReviewError::Fetch(format!("{}: {e}", entry.file.display())))
}

fn mismatch(
    entry: &Entry,
    what: &str,
    listed: &[String],
    found: &BTreeSet<String>,
) -> Option<Finding> {
    let listed_set: BTreeSet<String> = listed.iter().cloned().collect();
    if &listed_set == found {
        return None;
    }
    let missing: Vec<&String> = found.difference(&listed_set).collect();
    let extra: Vec<&String> = listed_set.difference(found).collect();
    let mut parts = Vec::new();
    if !missing.is_empty() {
        parts.push(format!("the package also provides {missing:?}"));
    }
    if !extra.is_empty() {
        parts.push(format!("the package does not provide {extra:?}"));
    }
    Some(Finding {
        check: CheckId::CatalogCapabilitiesMismatch.as_str().into(),
        severity: "error".into(),
        message: format!(
            "`capabilities.{what}` lists {:?}, but {}",
            listed,
            parts.join(" and ")
        ),
        hint: Some(format!(
            "set capabilities.{what} to {:?}",
            found.iter().collect::<Vec<_>>()
        )),
        file: entry.file.display().to_string(),
        line: 1,
        column: 1,
        component: Some(format!("capabilities.{what}")),
        value: None,
    })
}

/// Reviews `entry_path` (against `base_path` when given), cloning into `scratch`.
pub fn review(
    entry_path: &Path,
    base_path: Option<&Path>,
    scratch: &Path,
) -> Result<Review, ReviewError> {
    let (entry, entry_findings) = load_entry(entry_path)?;
    let dir = fetch(&entry, &scratch.join("new"))?;
    let mut review = Review {
        entry_file: entry.file.clone(),
        name: entry.name.clone(),
        sha: entry.sha.clone(),
        package: None,
        entry_findings: entry_findings.iter().map(finding_of).collect(),
        validation: Vec::new(),
        base: None,
        ok: false,
    };
    let prefix = entry
        .subdir
        .as_deref()
        .map(|s| format!("{s}/"))
        .unwrap_or_default();
    match package::load_dir(&dir, Mode::Validate) {
        Ok(loaded) => {
            let outcome = check::run(&loaded, &check::Context::default())
                .map_err(|e| ReviewError::Fetch(e.to_string()))?;
            review.validation = outcome
                .findings
                .iter()
                .map(|d| d.to_finding(format!("{prefix}{}", d.file)))
                .collect();
            let security = outcome
                .analysis
                .as_ref()
                .map(|a| a.security.as_slice())
                .unwrap_or_default();
            accepted_by_the_entry(&mut review, &entry, security, &prefix);
            review.package = Some(PackageFacts {
                key: loaded.key.clone(),
                name: loaded.name(),
                version: loaded.version(),
                format: loaded.format().as_str().to_string(),
                security: outcome
                    .analysis
                    .as_ref()
                    .map(|a| a.verdict.as_str().to_string()),
            });
            if loaded.name() != entry.name {
                review.entry_findings.push(Finding {
                    check: CheckId::CatalogNameMismatch.as_str().into(),
                    severity: "warning".into(),
                    message: format!(
                        "the entry is named `{}` but the package calls itself `{}`",
                        entry.name,
                        loaded.name()
                    ),
                    hint: Some("use the package's name for the entry".into()),
                    file: entry.file.display().to_string(),
                    line: 1,
                    column: 1,
                    component: None,
                    value: Some(entry.name.clone()),
                });
            }
            if let Some(caps) = &entry.capabilities {
                let surface = Surface::of(&dir).unwrap_or_default();
                let env: BTreeSet<String> = match &loaded.content {
                    Content::Native(n) => n
                        .manifest
                        .as_ref()
                        .map(|m| {
                            m.requires_env
                                .iter()
                                .map(|e| e.name.value.clone())
                                .collect()
                        })
                        .unwrap_or_default(),
                    Content::Portable(_) | Content::Pip(_) => BTreeSet::new(),
                };
                review.entry_findings.extend(
                    [
                        mismatch(
                            &entry,
                            "provides_tools",
                            &caps.provides_tools,
                            &surface.tools,
                        ),
                        mismatch(
                            &entry,
                            "provides_hooks",
                            &caps.provides_hooks,
                            &surface.hooks,
                        ),
                        mismatch(
                            &entry,
                            "provides_middleware",
                            &caps.provides_middleware,
                            &surface.middleware,
                        ),
                        mismatch(&entry, "requires_env", &caps.requires_env, &env),
                    ]
                    .into_iter()
                    .flatten(),
                );
            }
        }
        Err(e) => review.validation.push(Finding {
            check: CheckId::Manifest.as_str().into(),
            severity: "error".into(),
            message: format!(
                "no plugin package at `{}`: {e}",
                entry.subdir.as_deref().unwrap_or(".")
            ),
            hint: Some("point `subdir` at the directory holding plugin.yaml or plugin.json".into()),
            file: entry.file.display().to_string(),
            line: 1,
            column: 1,
            component: None,
            value: entry.subdir.clone(),
        }),
    }
    if let Some(base_path) = base_path {
        let (base, _) = load_entry(base_path)?;
        let base_dir = fetch(&base, &scratch.join("base"))?;
        let (commits, fast_forward) = commit_range(&scratch.join("new"), &base.sha, &entry.sha);
        review.base = Some(BaseDiff {
            from: base.sha.clone(),
            to: entry.sha.clone(),
            commits,
            fast_forward,
            surface: SurfaceDiff::between(
                &Surface::of(&base_dir).unwrap_or_default(),
                &Surface::of(&dir).unwrap_or_default(),
            ),
        });
    }
    let errors = review
        .entry_findings
        .iter()
        .chain(&review.validation)
        .any(|f| f.severity == "error");
    review.ok = !errors && review.package.is_some();
    Ok(review)
}

/// The entry's `accepted_findings` against the package at the pin: a finding they accept
/// stays in the review as a warning naming the reviewers' reason (it no longer blocks the
/// entry, and `install` from this catalog takes it as accepted); an acceptance that matches
/// no finding at this sha is a warning to remove it.
fn accepted_by_the_entry(
    review: &mut Review,
    entry: &Entry,
    security: &[crate::check::static_py::SecurityFinding],
    prefix: &str,
) {
    for (id, reason) in &entry.accepted_findings {
        let Some(found) = security.iter().find(|f| &f.id() == id) else {
            review.entry_findings.push(Finding {
                check: CheckId::CatalogEntryField.as_str().into(),
                severity: "warning".into(),
                message: format!(
                    "accepted finding `{id}` matches no finding of the package at this sha"
                ),
                hint: Some("remove it from accepted_findings (the code it accepted is gone or moved: review the new id)".into()),
                file: entry.file.display().to_string(),
                line: 1,
                column: 1,
                component: None,
                value: Some(id.clone()),
            });
            continue;
        };
        let file = format!("{prefix}{}", found.file);
        for f in review.validation.iter_mut().filter(|f| {
            f.check == CheckId::SecurityScan.as_str()
                && f.file == file
                && f.line == found.pos.line
                && f.message.contains(found.rule)
        }) {
            f.severity = "warning".into();
            f.message = format!("{} (accepted by the catalog entry: {reason})", f.message);
        }
    }
}

/// Commits in `from..to` in the clone at `repo`, and whether `from` is an ancestor of `to`.
fn commit_range(repo: &Path, from: &str, to: &str) -> (Option<usize>, bool) {
    let Ok(r) = git2::Repository::open(repo) else {
        return (None, false);
    };
    let (Ok(from), Ok(to)) = (git2::Oid::from_str(from), git2::Oid::from_str(to)) else {
        return (None, false);
    };
    if r.find_commit(from).is_err() {
        return (None, false);
    }
    let ancestor = from == to || r.graph_descendant_of(to, from).unwrap_or(false);
    let Ok(mut walk) = r.revwalk() else {
        return (None, ancestor);
    };
    if walk.push(to).is_err() || walk.hide(from).is_err() {
        return (None, ancestor);
    }
    (Some(walk.count()), ancestor)
}

/// The review as a validation-style report (for GitHub annotations and SARIF).
pub fn to_report(review: &Review) -> Report {
    let entry_ok = Counts::of(&review.entry_findings).errors == 0;
    let mut package = PackageReport::plain(
        format!(
            "{}@{}",
            review.name,
            &review.sha[..12.min(review.sha.len())]
        ),
        review.name.clone(),
        review
            .package
            .as_ref()
            .map_or(review.name.clone(), |p| p.name.clone()),
        review
            .package
            .as_ref()
            .map_or("unknown", |p| p.format.as_str()),
        review.package.is_some(),
        Counts::of(&review.validation).errors == 0,
        review.validation.clone(),
    );
    package.version = review.package.as_ref().and_then(|p| p.version.clone());
    let packages = vec![
        PackageReport::plain(
            review.entry_file.display().to_string(),
            review.name.clone(),
            review.name.clone(),
            "catalog-entry",
            true,
            entry_ok,
            review.entry_findings.clone(),
        ),
        package,
    ];
    Report {
        tool: Tool {
            name: "hermes-plugins".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        strict: false,
        summary: Summary::of(&packages),
        packages,
    }
}

fn md_escape(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// Markdown ready to paste as a PR comment.
pub fn markdown(review: &Review) -> String {
    let short = &review.sha[..12.min(review.sha.len())];
    let mut out = format!(
        "## {} Catalog review: `{}` @ `{short}`\n\n",
        if review.ok { "✅" } else { "❌" },
        review.name
    );
    match &review.package {
        Some(p) => out.push_str(&format!(
            "**Package:** `{}` {} ({}), security scan: **{}**\n\n",
            p.name,
            p.version.as_deref().unwrap_or(""),
            p.format,
            p.security.as_deref().unwrap_or("n/a")
        )),
        None => out.push_str("**Package:** not found at the pinned sha\n\n"),
    }
    if let Some(base) = &review.base {
        out.push_str(&format!(
            "### Changes `{}` → `{}`{}\n\n",
            &base.from[..12.min(base.from.len())],
            short,
            match (base.commits, base.fast_forward) {
                (Some(n), true) => format!(" ({n} commit{})", if n == 1 { "" } else { "s" }),
                (Some(n), false) => format!(" ({n} commits; ⚠️ the old sha is not an ancestor)"),
                (None, _) => " (⚠️ the old sha is not in the new repository)".to_string(),
            }
        ));
        if base.surface.is_empty() {
            out.push_str("No change to what the plugin provides or depends on.\n\n");
        } else {
            out.push_str("| | kind | item |\n|---|---|---|\n");
            for c in &base.surface.added {
                out.push_str(&format!("| ➕ | {} | `{}` |\n", c.kind, md_escape(&c.item)));
            }
            for c in &base.surface.removed {
                out.push_str(&format!("| ➖ | {} | `{}` |\n", c.kind, md_escape(&c.item)));
            }
            out.push('\n');
        }
    }
    let all: Vec<&Finding> = review
        .entry_findings
        .iter()
        .chain(&review.validation)
        .filter(|f| f.severity != "info")
        .collect();
    if all.is_empty() {
        out.push_str("No findings.\n");
    } else {
        out.push_str("### Findings\n\n| severity | check | where | message |\n|---|---|---|---|\n");
        for f in all {
            out.push_str(&format!(
                "| {} | `{}` | `{}:{}` | {} |\n",
                f.severity,
                f.check,
                f.file,
                f.line,
                md_escape(&f.message)
            ));
        }
    }
    out
}

/// Human text.
pub fn human(review: &Review) -> String {
    let mut out = format!(
        "{} {} @ {}\n",
        if review.ok { "✓" } else { "✗" },
        review.name,
        review.sha
    );
    for f in review.entry_findings.iter().chain(&review.validation) {
        out.push_str(&format!(
            "  {}: {}:{}: [{}] {}\n",
            f.severity, f.file, f.line, f.check, f.message
        ));
    }
    if let Some(base) = &review.base {
        out.push_str(&format!(
            "  since {}: {} commit(s){}\n",
            base.from,
            base.commits.map_or("?".to_string(), |n| n.to_string()),
            if base.fast_forward {
                ""
            } else {
                " (not a fast-forward)"
            }
        ));
        for l in base.surface.lines() {
            out.push_str(&format!("    {l}\n"));
        }
    }
    out
}

/// The SARIF rules for a review's findings.
pub fn rules() -> Vec<report::Rule> {
    let mut rules = super::finding::rules();
    rules.extend(CheckId::of(Family::Review).map(CheckId::rule));
    rules.extend(check::rules());
    rules
}
