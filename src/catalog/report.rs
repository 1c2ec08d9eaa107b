//! A `catalog check` outcome as a [`Report`], so the `validate` renderers (human, JSON,
//! GitHub annotations, SARIF) serve the catalog too: one package report per catalog file.

use std::path::Path;

use super::check::{CheckOutcome, is_removed_file};
use super::entry::file_stem;
use super::finding::{self, CatalogFinding};
use crate::report::{Counts, Finding, PackageReport, Report, Summary, Tool};

/// The `format` of an entry file's report.
pub const FORMAT_ENTRY: &str = "catalog-entry";
/// The `format` of the kill list's report.
pub const FORMAT_REMOVED: &str = "catalog-removed";

/// Builds the report: one [`PackageReport`] per entry file (in path order), then one for the
/// kill list. A file is `accepted` when it loaded (an entry with usable name, repo and sha; a
/// readable kill list) and `ok` when it is accepted and has no errors (no warnings either
/// under `strict`).
pub fn to_report(outcome: &CheckOutcome, strict: bool) -> Report {
    let mut packages = Vec::with_capacity(outcome.entries.len() + 1);
    for (path, entry, findings) in &outcome.entries {
        let removed = is_removed_file(path);
        let name = entry
            .as_ref()
            .map_or_else(|| file_stem(path), |e| e.name.clone());
        packages.push(package(
            path,
            name,
            entry.as_ref().and_then(|e| e.version.clone()),
            if removed {
                FORMAT_REMOVED
            } else {
                FORMAT_ENTRY
            },
            entry.is_some(),
            findings,
            strict,
        ));
    }
    if let Some((path, _, findings)) = &outcome.removed {
        let accepted = !findings
            .iter()
            .any(|f| f.check == finding::YAML && f.severity == crate::diag::Severity::Error);
        packages.push(package(
            path,
            file_stem(path),
            None,
            FORMAT_REMOVED,
            accepted,
            findings,
            strict,
        ));
    }
    let summary = Summary::of(&packages);
    Report {
        tool: Tool {
            name: "hermes-plugins".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        strict,
        packages,
        summary,
    }
}

/// A path for reports: `/` separators, no leading `./`.
pub fn display_path(path: &Path) -> String {
    let text = path.display().to_string().replace('\\', "/");
    match text.strip_prefix("./") {
        Some(rest) if !rest.is_empty() => rest.to_string(),
        _ => text,
    }
}

/// One finding in report form.
pub fn to_finding(f: &CatalogFinding) -> Finding {
    f.to_finding(display_path(Path::new(&f.file)))
}

fn package(
    path: &Path,
    name: String,
    version: Option<String>,
    format: &str,
    accepted: bool,
    findings: &[CatalogFinding],
    strict: bool,
) -> PackageReport {
    let mut sorted: Vec<&CatalogFinding> = findings.iter().collect();
    sorted.sort_by_key(|f| (f.pos.line, f.pos.column));
    let findings: Vec<Finding> = sorted.into_iter().map(to_finding).collect();
    let counts = Counts::of(&findings);
    let ok = accepted && counts.errors == 0 && !(strict && counts.warnings > 0);
    let name = if name.is_empty() {
        display_path(path)
    } else {
        name
    };
    let mut report = PackageReport::plain(
        display_path(path),
        name.clone(),
        name,
        format,
        accepted,
        ok,
        findings,
    );
    report.version = version;
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Severity;
    use crate::located::Pos;
    use std::path::PathBuf;

    #[test]
    fn files_map_to_packages_and_strict_fails_warnings() {
        let warn = finding::warning(
            finding::UNKNOWN_KEY,
            Path::new("./cat/b.yaml"),
            Pos::new(4, 1),
            "unknown key",
        );
        let err = finding::error(finding::YAML, Path::new("./cat/c.yaml"), Pos::START, "bad");
        let outcome = CheckOutcome {
            entries: vec![
                (PathBuf::from("./cat/b.yaml"), None, vec![warn]),
                (PathBuf::from("./cat/c.yaml"), None, vec![err]),
            ],
            removed: Some((PathBuf::from("./cat/removed.yaml"), Vec::new(), Vec::new())),
        };
        let report = to_report(&outcome, false);
        let p = &report.packages;
        assert_eq!(p.len(), 3);
        assert_eq!((p[0].path.as_str(), p[0].key.as_str()), ("cat/b.yaml", "b"));
        assert_eq!(p[0].findings[0].file, "cat/b.yaml");
        assert_eq!(p[0].findings[0].severity, Severity::Warning.as_str());
        assert_eq!(p[2].format, FORMAT_REMOVED);
        assert!(p[2].ok && p[2].accepted);
        assert!(!p[1].accepted && !p[1].ok);
        // An entry that did not load is not ok even without errors of its own.
        assert!(!p[0].ok);
        assert_eq!(report.summary.failed, 2);
        assert!(to_report(&outcome, true).summary.warnings == 1);
    }
}
