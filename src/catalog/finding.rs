//! What a catalog check found: a located finding with a stable check id. The ids are rows of
//! the one check table ([`crate::diag::CheckId`], family [`Family::Catalog`]); the constants
//! here name them for the catalog code.

use std::path::Path;

use crate::diag::{CheckId, Diagnostic, Family, Severity};
use crate::located::Pos;
use crate::report::Rule;

/// `catalog-yaml`: a catalog file is readable UTF-8 holding one YAML mapping.
pub const YAML: CheckId = CheckId::CatalogYaml;
/// `catalog-entry-field`: an entry field is present, well-typed and well-formed (CAT-1).
pub const ENTRY_FIELD: CheckId = CheckId::CatalogEntryField;
/// `catalog-unknown-key`: a key CAT-1 does not define (a warning; usually a typo).
pub const UNKNOWN_KEY: CheckId = CheckId::CatalogUnknownKey;
/// `catalog-entry-filename`: the entry's name differs from its file name (a warning).
pub const ENTRY_FILENAME: CheckId = CheckId::CatalogEntryFilename;
/// `catalog-requires-hermes`: `requires_hermes` is a valid Hermes version constraint.
pub const REQUIRES_HERMES: CheckId = CheckId::CatalogRequiresHermes;
/// `catalog-removed-file`: `removed.yaml` has the shape `{removed: [{name, …}]}`.
pub const REMOVED_FILE: CheckId = CheckId::CatalogRemovedFile;
/// `catalog-duplicate-name`: two entries share a name (CAT-2).
pub const DUPLICATE_NAME: CheckId = CheckId::CatalogDuplicateName;
/// `catalog-duplicate-repo`: two entries pin the same repository and subdirectory (CAT-2).
pub const DUPLICATE_REPO: CheckId = CheckId::CatalogDuplicateRepo;
/// `catalog-requires-plugins`: `requires_plugins` names entries of the same catalog (CAT-2).
pub const REQUIRES_PLUGINS: CheckId = CheckId::CatalogRequiresPlugins;
/// `catalog-entry-removed`: the entry's name or repository is on the kill list (SRC-4).
pub const ENTRY_REMOVED: CheckId = CheckId::CatalogEntryRemoved;

/// Check ids whose rules look at one file alone (a JSON Schema can express most of them);
/// the others relate entries to each other or to the kill list.
pub const PER_FILE_CHECKS: &[CheckId] = &[
    YAML,
    ENTRY_FIELD,
    UNKNOWN_KEY,
    ENTRY_FILENAME,
    REQUIRES_HERMES,
    REMOVED_FILE,
];

/// Check ids of the cross-entry rules (CAT-2, SRC-4), which need the whole catalog.
pub const CROSS_ENTRY_CHECKS: &[CheckId] = &[
    DUPLICATE_NAME,
    DUPLICATE_REPO,
    REQUIRES_PLUGINS,
    ENTRY_REMOVED,
];

/// One finding about a catalog file: a [`Diagnostic`] like every other (its `file` is the
/// path the catalog file was reached by; positions at least 1:1; no component).
pub type CatalogFinding = Diagnostic;

/// A catalog finding of `check` with a severity, at a position of `file`.
pub fn at(
    check: CheckId,
    severity: Severity,
    file: &Path,
    pos: Pos,
    message: impl Into<String>,
) -> CatalogFinding {
    Diagnostic::new(
        check,
        severity,
        file.display().to_string(),
        Pos::new(pos.line.max(1), pos.column.max(1)),
        message,
    )
}

/// An error finding.
pub fn error(check: CheckId, file: &Path, pos: Pos, message: impl Into<String>) -> CatalogFinding {
    at(check, Severity::Error, file, pos, message)
}

/// A warning finding.
pub fn warning(
    check: CheckId,
    file: &Path,
    pos: Pos,
    message: impl Into<String>,
) -> CatalogFinding {
    at(check, Severity::Warning, file, pos, message)
}

/// Whether any finding fails a check run: an error, or a warning under `strict`.
pub fn fails(findings: &[CatalogFinding], strict: bool) -> bool {
    findings
        .iter()
        .any(|f| f.severity == Severity::Error || (strict && f.severity == Severity::Warning))
}

/// The description of every catalog check id (from the one table, [`CheckId`]), for
/// renderers that list rules (SARIF) and for documentation.
pub fn rules() -> Vec<Rule> {
    CheckId::of(Family::Catalog).map(CheckId::rule).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_cover_every_check_once() {
        let rules = rules();
        let ids: Vec<&str> = rules.iter().map(|r| r.id).collect();
        let mut all: Vec<&str> = PER_FILE_CHECKS
            .iter()
            .chain(CROSS_ENTRY_CHECKS)
            .map(|c| c.as_str())
            .collect();
        all.sort_unstable();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, all);
        for id in ids {
            assert!(id.starts_with("catalog-"));
            assert!(id.chars().all(|c| c.is_ascii_lowercase() || c == '-'));
        }
    }

    #[test]
    fn positions_are_at_least_one() {
        let f = error(YAML, Path::new("x.yaml"), Pos::new(0, 0), "m");
        assert_eq!((f.pos.line, f.pos.column), (1, 1));
        assert!(fails(std::slice::from_ref(&f), false));
        let w = warning(UNKNOWN_KEY, Path::new("x.yaml"), Pos::START, "m");
        assert!(!fails(std::slice::from_ref(&w), false));
        assert!(fails(std::slice::from_ref(&w), true));
    }
}
