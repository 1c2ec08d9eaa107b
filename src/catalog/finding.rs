//! What a catalog check found: a located finding with a stable check id, and the table of
//! catalog check ids (for SARIF rule lists and documentation).

use std::path::{Path, PathBuf};

use crate::diag::Severity;
use crate::located::Pos;
use crate::report::Rule;

/// `catalog-yaml`: a catalog file is readable UTF-8 holding one YAML mapping.
pub const YAML: &str = "catalog-yaml";
/// `catalog-entry-field`: an entry field is present, well-typed and well-formed (CAT-1).
pub const ENTRY_FIELD: &str = "catalog-entry-field";
/// `catalog-unknown-key`: a key CAT-1 does not define (a warning; usually a typo).
pub const UNKNOWN_KEY: &str = "catalog-unknown-key";
/// `catalog-entry-filename`: the entry's name differs from its file name (a warning).
pub const ENTRY_FILENAME: &str = "catalog-entry-filename";
/// `catalog-requires-hermes`: `requires_hermes` is a valid Hermes version constraint.
pub const REQUIRES_HERMES: &str = "catalog-requires-hermes";
/// `catalog-removed-file`: `removed.yaml` has the shape `{removed: [{name, …}]}`.
pub const REMOVED_FILE: &str = "catalog-removed-file";
/// `catalog-duplicate-name`: two entries share a name (CAT-2).
pub const DUPLICATE_NAME: &str = "catalog-duplicate-name";
/// `catalog-duplicate-repo`: two entries pin the same repository and subdirectory (CAT-2).
pub const DUPLICATE_REPO: &str = "catalog-duplicate-repo";
/// `catalog-requires-plugins`: `requires_plugins` names entries of the same catalog (CAT-2).
pub const REQUIRES_PLUGINS: &str = "catalog-requires-plugins";
/// `catalog-entry-removed`: the entry's name or repository is on the kill list (SRC-4).
pub const ENTRY_REMOVED: &str = "catalog-entry-removed";

/// Check ids whose rules look at one file alone (a JSON Schema can express most of them);
/// the others relate entries to each other or to the kill list.
pub const PER_FILE_CHECKS: &[&str] = &[
    YAML,
    ENTRY_FIELD,
    UNKNOWN_KEY,
    ENTRY_FILENAME,
    REQUIRES_HERMES,
    REMOVED_FILE,
];

/// Check ids of the cross-entry rules (CAT-2, SRC-4), which need the whole catalog.
pub const CROSS_ENTRY_CHECKS: &[&str] = &[
    DUPLICATE_NAME,
    DUPLICATE_REPO,
    REQUIRES_PLUGINS,
    ENTRY_REMOVED,
];

/// One finding about a catalog file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogFinding {
    /// Stable check id (one of the constants of this module).
    pub check: &'static str,
    /// How serious it is.
    pub severity: Severity,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
    /// The file, as the path it was reached by.
    pub file: PathBuf,
    /// 1-based line (1 when the finding is about the file as a whole).
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// The offending value as written (shortened, control characters escaped).
    pub value: Option<String>,
}

impl CatalogFinding {
    /// This finding as a report finding, its file shown as `file` (positions at least 1:1):
    /// the one conversion `catalog check` and `catalog review` use.
    pub fn to_finding(&self, file: String) -> crate::report::Finding {
        crate::report::Finding {
            check: self.check.to_string(),
            severity: self.severity.as_str().to_string(),
            message: self.message.clone(),
            hint: self.hint.clone(),
            file,
            line: self.line.max(1),
            column: self.column.max(1),
            component: None,
            value: self.value.clone(),
        }
    }

    /// A finding of `check` with a severity, at a position of `file`.
    pub fn new(
        check: &'static str,
        severity: Severity,
        file: &Path,
        pos: Pos,
        message: impl Into<String>,
    ) -> Self {
        CatalogFinding {
            check,
            severity,
            message: message.into(),
            hint: None,
            file: file.to_path_buf(),
            line: pos.line.max(1),
            column: pos.column.max(1),
            value: None,
        }
    }

    /// An error finding.
    pub fn error(check: &'static str, file: &Path, pos: Pos, message: impl Into<String>) -> Self {
        Self::new(check, Severity::Error, file, pos, message)
    }

    /// A warning finding.
    pub fn warning(check: &'static str, file: &Path, pos: Pos, message: impl Into<String>) -> Self {
        Self::new(check, Severity::Warning, file, pos, message)
    }

    /// Adds a fix hint.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Records the offending value (shortened and escaped for one-line output).
    #[must_use]
    pub fn value(mut self, value: impl AsRef<str>) -> Self {
        self.value = Some(crate::located::truncate_chars(value.as_ref(), 120));
        self
    }

    /// Where the finding points.
    pub fn pos(&self) -> Pos {
        Pos::new(self.line, self.column)
    }
}

/// Whether any finding fails a check run: an error, or a warning under `strict`.
pub fn fails(findings: &[CatalogFinding], strict: bool) -> bool {
    findings
        .iter()
        .any(|f| f.severity == Severity::Error || (strict && f.severity == Severity::Warning))
}

/// The description of every catalog check id, for renderers that list rules (SARIF) and for
/// documentation.
pub fn rules() -> Vec<Rule> {
    fn rule(
        id: &'static str,
        spec: &'static str,
        severity: Severity,
        title: &'static str,
        help: &'static str,
    ) -> Rule {
        Rule {
            id,
            spec,
            title,
            help,
            default_severity: severity.as_str(),
        }
    }
    vec![
        rule(
            YAML,
            "CAT-1",
            Severity::Error,
            "Catalog files are readable YAML mappings",
            "Each catalog file is UTF-8 text of at most 1 MiB holding exactly one YAML document whose top level is a mapping. A key written twice keeps its last value and is reported as a warning.",
        ),
        rule(
            ENTRY_FIELD,
            "CAT-1",
            Severity::Error,
            "Catalog entry fields are present and well-formed",
            "name ([a-z0-9_-]{1,64}), repo (an https:// URL without credentials, query, fragment, whitespace or control characters), sha (40 lowercase hex) and maintainer (non-empty) are required. subdir is [A-Za-z0-9._/-]+ without empty, `.` or `..` segments and not absolute; tier is official or community; platforms are linux, macos, windows; docs_url, image and screenshots (at most 6) are https URLs; capabilities maps provides_tools, provides_hooks, provides_middleware and requires_env to lists of strings; tags, known_issues and requires_plugins are lists of strings; every other field is a string.",
        ),
        rule(
            UNKNOWN_KEY,
            "CAT-1",
            Severity::Warning,
            "Catalog files use only known keys",
            "Keys CAT-1 does not define are ignored; they are usually misspellings of a known key (check the suggestion).",
        ),
        rule(
            ENTRY_FILENAME,
            "CAT-1",
            Severity::Warning,
            "An entry lives in <name>.yaml",
            "One file per entry, named after the entry, so that `install NAME` finds it directly and reviewers see renames.",
        ),
        rule(
            REQUIRES_HERMES,
            "CAT-1",
            Severity::Error,
            "requires_hermes is a valid version constraint",
            "requires_hermes is a comma-separated list of comparator clauses such as `>=0.19, <1.0`. Hermes versions are 0.x.y: a date-like (CalVer) floor can never match.",
        ),
        rule(
            REMOVED_FILE,
            "SRC-4",
            Severity::Error,
            "removed.yaml is a well-formed kill list",
            "removed.yaml holds `removed:`, a list of mappings with name (required, [a-z0-9_-]{1,64}), repo (a repository URL), reason (a string) and date (YYYY-MM-DD). Install, update and enable refuse listed plugins.",
        ),
        rule(
            DUPLICATE_NAME,
            "CAT-2",
            Severity::Error,
            "Entry names are unique",
            "Two entries with the same name make `install NAME` ambiguous. Rename one or delete the duplicate.",
        ),
        rule(
            DUPLICATE_REPO,
            "CAT-2",
            Severity::Error,
            "Each repository and subdirectory is listed once",
            "Repositories are compared after normalisation (scheme, www., user, .git and case ignored). Entries of the same repository are fine when their subdir differs.",
        ),
        rule(
            REQUIRES_PLUGINS,
            "CAT-2",
            Severity::Error,
            "requires_plugins is satisfiable within the catalog",
            "Every name in requires_plugins must be another entry of the same catalog, so that installing the entry can install what it needs.",
        ),
        rule(
            ENTRY_REMOVED,
            "SRC-4",
            Severity::Error,
            "No entry is on the kill list",
            "An entry whose name or (normalised) repository is listed in removed.yaml would be refused at install; remove the entry or take it off the kill list.",
        ),
    ]
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
            .copied()
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
        let f = CatalogFinding::error(YAML, Path::new("x.yaml"), Pos::new(0, 0), "m");
        assert_eq!((f.line, f.column), (1, 1));
        assert!(fails(std::slice::from_ref(&f), false));
        let w = CatalogFinding::warning(UNKNOWN_KEY, Path::new("x.yaml"), Pos::START, "m");
        assert!(!fails(std::slice::from_ref(&w), false));
        assert!(fails(std::slice::from_ref(&w), true));
    }
}
