//! `catalog check` (CAT-2): every entry's own rules, then the rules that relate entries to
//! each other (unique names, unique repository + subdir, `requires_plugins` satisfiable within
//! the catalog) and to the kill list (SRC-4).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::entry::{self, Entry};
use super::finding::{self, CatalogFinding};
use super::removed::{self, Removed};
use crate::diag::did_you_mean;
use crate::located::Pos;
use crate::repo_url::normalize;

/// Everything `catalog check` found.
#[derive(Clone, Debug, Default)]
pub struct CheckOutcome {
    /// Each entry file (sorted by path): the entry when its identity was usable, and every
    /// finding about the file (its own rules, then the cross-entry rules).
    pub entries: Vec<(PathBuf, Option<Entry>, Vec<CatalogFinding>)>,
    /// The kill list, when one was found: its file, items and findings.
    pub removed: Option<(PathBuf, Vec<Removed>, Vec<CatalogFinding>)>,
}

impl CheckOutcome {
    /// The entries that loaded, in path order.
    pub fn loaded(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter_map(|(_, e, _)| e.as_ref())
    }

    /// Every finding (entries first, then the kill list).
    pub fn findings(&self) -> impl Iterator<Item = &CatalogFinding> {
        self.entries
            .iter()
            .flat_map(|(_, _, f)| f)
            .chain(self.removed.iter().flat_map(|(_, _, f)| f))
    }

    /// Whether the check fails: any error, or any warning under `strict`.
    pub fn fails(&self, strict: bool) -> bool {
        self.findings().any(|f| {
            f.severity == crate::diag::Severity::Error
                || (strict && f.severity == crate::diag::Severity::Warning)
        })
    }
}

/// Whether a file is a kill list (`removed.yaml` / `removed.yml`).
pub fn is_removed_file(path: &Path) -> bool {
    path.file_stem().is_some_and(|s| s == "removed") && has_yaml_extension(path)
}

fn has_yaml_extension(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "yaml" || e == "yml")
}

/// Checks a catalog. Each path is a catalog directory (every `*.yaml` / `*.yml` in it, not
/// recursively; `removed.yaml` is the kill list) or a single file (an entry, or a
/// `removed.yaml` kill list). A path that does not exist, or an unreadable directory, is
/// reported as a finding on that path.
pub fn check(paths: &[PathBuf]) -> CheckOutcome {
    let mut entry_files: BTreeSet<PathBuf> = BTreeSet::new();
    let mut removed_files: BTreeSet<PathBuf> = BTreeSet::new();
    let mut broken: Vec<(PathBuf, CatalogFinding)> = Vec::new();
    for path in paths {
        if path.is_dir() {
            match std::fs::read_dir(path) {
                Ok(dir) => {
                    for file in dir.filter_map(Result::ok).map(|e| e.path()) {
                        if !has_yaml_extension(&file) || file.is_dir() {
                            continue;
                        }
                        if is_removed_file(&file) {
                            removed_files.insert(file);
                        } else {
                            entry_files.insert(file);
                        }
                    }
                }
                Err(e) => broken.push((
                    path.clone(),
                    finding::error(
                        finding::YAML,
                        path,
                        Pos::START,
                        format!("the catalog directory cannot be read: {e}"),
                    ),
                )),
            }
        } else if is_removed_file(path) {
            removed_files.insert(path.clone());
        } else {
            entry_files.insert(path.clone());
        }
    }

    let mut outcome = CheckOutcome::default();
    let mut removed_files = removed_files.into_iter();
    if let Some(file) = removed_files.next() {
        let (list, findings) = removed::load(&file);
        outcome.removed = Some((file, list, findings));
    }
    let kill_list = outcome
        .removed
        .as_ref()
        .map(|(p, _, _)| p.display().to_string());
    for extra in removed_files {
        let f = finding::error(
            finding::REMOVED_FILE,
            &extra,
            Pos::START,
            format!(
                "a second kill list; only {} is used",
                kill_list.as_deref().unwrap_or_default()
            ),
        )
        .hint("Check one catalog at a time: a catalog has one removed.yaml.");
        outcome.entries.push((extra, None, vec![f]));
    }
    for file in entry_files {
        let (entry, findings) = entry::load(&file);
        outcome.entries.push((file, entry, findings));
    }
    for (path, f) in broken {
        outcome.entries.push((path, None, vec![f]));
    }
    outcome.entries.sort_by(|a, b| a.0.cmp(&b.0));
    let kill = outcome
        .removed
        .as_ref()
        .map(|(_, l, _)| l.clone())
        .unwrap_or_default();
    cross_entry(&mut outcome.entries, &kill);
    outcome
}

/// The cross-entry rules, appended to each file's findings.
fn cross_entry(entries: &mut [(PathBuf, Option<Entry>, Vec<CatalogFinding>)], kill: &[Removed]) {
    let mut added: Vec<Vec<CatalogFinding>> = vec![Vec::new(); entries.len()];
    let mut first_name: BTreeMap<&str, &Entry> = BTreeMap::new();
    let mut first_repo: BTreeMap<(String, String), &Entry> = BTreeMap::new();
    let mut first_commit: BTreeMap<((String, String), String), &Entry> = BTreeMap::new();
    let names: BTreeSet<&str> = entries
        .iter()
        .filter_map(|(_, e, _)| e.as_ref())
        .map(|e| e.name.as_str())
        .collect();
    for (i, (_, entry, _)) in entries.iter().enumerate() {
        let Some(e) = entry else { continue };
        let out = &mut added[i];
        match first_name.get(e.name.as_str()) {
            Some(first) => out.push(
                finding::error(
                    finding::DUPLICATE_NAME,
                    &e.file,
                    e.positions.name,
                    format!(
                        "another entry is already named `{}`: {}:{}",
                        e.name,
                        first.file.display(),
                        first.positions.name
                    ),
                )
                .hint("Entry names are unique: rename this entry or delete the duplicate.")
                .value(&e.name),
            ),
            None => {
                first_name.insert(&e.name, e);
            }
        }
        let repo_key = (
            normalize(&e.repo),
            e.subdir
                .as_deref()
                .unwrap_or_default()
                .trim_matches('/')
                .to_string(),
        );
        // The same commit twice is one plugin listed twice (an error). The same repository
        // and subdirectory at another commit is what a renamed entry whose old file remains
        // looks like: upstream's validator accepts it and either name installs, so a warning.
        let same_commit = first_commit.get(&(repo_key.clone(), e.sha.to_ascii_lowercase()));
        if let Some(first) = same_commit.or_else(|| first_repo.get(&repo_key)) {
            let place = match &e.subdir {
                Some(s) => format!("{} (subdir `{s}`)", e.repo),
                None => e.repo.clone(),
            };
            // The entry as a reviewer finds it: its name, else its file.
            let first_named = if first.name.is_empty() {
                first
                    .file
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
            } else {
                first.name.clone()
            };
            let at = format!("{}:{}", first.file.display(), first.positions.repo);
            let finding = if same_commit.is_some() {
                finding::error(
                    finding::DUPLICATE_REPO,
                    &e.file,
                    e.positions.repo,
                    format!(
                        "{place} at the same commit is already listed as `{first_named}` in {at}"
                    ),
                )
                .hint("List each repository (and subdir) once: delete one of the two entries.")
            } else {
                finding::warning(
                    finding::DUPLICATE_REPO,
                    &e.file,
                    e.positions.repo,
                    format!(
                        "{place} is also listed as `{first_named}` in {at}, at another commit ({} here, {} there)",
                        short(&e.sha),
                        short(&first.sha)
                    ),
                )
                .hint("If one entry renamed the other, delete the old file; entries of one repository otherwise need different `subdir`s.")
            };
            out.push(finding.value(&e.repo));
        }
        first_commit
            .entry((repo_key.clone(), e.sha.to_ascii_lowercase()))
            .or_insert(e);
        first_repo.entry(repo_key).or_insert(e);
        for (required, pos) in e.requires_plugins.iter().zip(&e.positions.requires_plugins) {
            if *required == e.name {
                out.push(
                    finding::error(
                        finding::REQUIRES_PLUGINS,
                        &e.file,
                        *pos,
                        format!("`{}` requires itself", e.name),
                    )
                    .hint("Remove it from requires_plugins.")
                    .value(required),
                );
            } else if !names.contains(required.as_str()) {
                let hint = match did_you_mean(required, names.iter().copied()) {
                    Some(s) => format!(
                        "Did you mean `{s}`? Otherwise add an entry for `{required}` to the catalog first."
                    ),
                    None => format!(
                        "Add an entry for `{required}` to the catalog first, or remove the requirement."
                    ),
                };
                out.push(
                    finding::error(
                        finding::REQUIRES_PLUGINS,
                        &e.file,
                        *pos,
                        format!("requires_plugins names `{required}`, which is not in the catalog"),
                    )
                    .hint(hint)
                    .value(required),
                );
            }
        }
        if let Some(r) = removed::blocked(kill, Some(&e.name), Some(&e.repo)) {
            let by_name = r.name == e.name;
            let mut message = if by_name {
                format!("`{}` is on the kill list (removed.yaml)", e.name)
            } else {
                format!(
                    "the repository {} is on the kill list (removed.yaml, as `{}`)",
                    e.repo, r.name
                )
            };
            if let Some(reason) = &r.reason {
                message.push_str(&format!(": {reason}"));
            }
            if let Some(date) = &r.date {
                message.push_str(&format!(" (removed {date})"));
            }
            let (pos, value) = if by_name {
                (e.positions.name, &e.name)
            } else {
                (e.positions.repo, &e.repo)
            };
            out.push(
                finding::error(finding::ENTRY_REMOVED, &e.file, pos, message)
                    .hint("Removed plugins cannot be installed: delete this entry, or take it off removed.yaml if the removal is lifted.")
                    .value(value),
            );
        }
    }
    for ((_, _, findings), extra) in entries.iter_mut().zip(added) {
        findings.extend(extra);
    }
}

/// A commit as people read it: its first 12 digits.
fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::{CheckId, Severity};

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        path
    }

    fn entry(name: &str, repo: &str, extra: &str) -> String {
        format!("name: {name}\nrepo: {repo}\nsha: {SHA}\ndescription: d\nmaintainer: me\n{extra}")
    }

    #[test]
    fn same_repo_different_subdirs_is_fine_same_subdir_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(
            d,
            "a.yaml",
            &entry("a", "https://github.com/o/mono", "subdir: plugins/a\n"),
        );
        write(
            d,
            "b.yaml",
            &entry("b", "https://github.com/O/mono.git", "subdir: plugins/b\n"),
        );
        write(
            d,
            "c.yaml",
            &entry("c", "git@github.com:o/mono", "subdir: plugins/a\n"),
        );
        let outcome = check(&[d.to_path_buf()]);
        let checks: Vec<Vec<CheckId>> = outcome
            .entries
            .iter()
            .map(|(_, _, f)| f.iter().map(|f| f.check).collect())
            .collect();
        // c's repo is not https (its own error) and duplicates a's repo + subdir.
        assert_eq!(
            checks,
            [
                vec![],
                vec![],
                vec![finding::ENTRY_FIELD, finding::DUPLICATE_REPO]
            ]
        );
    }

    /// A renamed entry whose old file remains: the same repository and subdirectory at
    /// another commit is a warning naming the other entry (upstream's validator accepts it);
    /// at the same commit, an error.
    #[test]
    fn the_same_repository_at_another_commit_is_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, "old.yaml", &entry("old", "https://github.com/o/p", ""));
        let other = "fedcba9876543210fedcba9876543210fedcba98";
        write(
            d,
            "new.yaml",
            &entry("new", "https://github.com/o/p", "").replace(SHA, other),
        );
        write(d, "twin.yaml", &entry("twin", "https://github.com/o/p", ""));
        let outcome = check(&[d.to_path_buf()]);
        let found: BTreeMap<String, Vec<(Severity, String)>> = outcome
            .entries
            .iter()
            .map(|(path, _, f)| {
                (
                    path.file_name().unwrap().to_string_lossy().into_owned(),
                    f.iter().map(|f| (f.severity, f.message.clone())).collect(),
                )
            })
            .collect();
        // Read in file order: new, old, twin.
        assert!(found["new.yaml"].is_empty(), "{found:#?}");
        let [(severity, message)] = found["old.yaml"].as_slice() else {
            panic!("{found:#?}")
        };
        assert_eq!(*severity, Severity::Warning);
        assert!(message.contains("also listed as `new`") && message.contains("another commit"));
        let [(severity, message)] = found["twin.yaml"].as_slice() else {
            panic!("{found:#?}")
        };
        assert_eq!(*severity, Severity::Error);
        assert!(
            message.contains("same commit is already listed as `old`"),
            "{message}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_entry_files_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let secret = write(d, "secret.txt", "token: hunter2\n");
        let cat = d.join("cat");
        std::fs::create_dir(&cat).unwrap();
        std::os::unix::fs::symlink(&secret, cat.join("evil.yaml")).unwrap();
        let outcome = check(&[cat]);
        let findings = &outcome.entries[0].2;
        assert_eq!(findings.len(), 1);
        assert!(findings[0].message.contains("symbolic link"));
        assert!(findings[0].value.is_none());
    }

    #[test]
    fn files_and_directories_mix_and_are_sorted_once() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let b = write(
            d,
            "b.yaml",
            &entry("b", "https://github.com/o/b", "requires_plugins: [a]\n"),
        );
        write(d, "a.yaml", &entry("a", "https://github.com/o/a", ""));
        write(d, "notes.txt", "ignored");
        let outcome = check(&[b.clone(), d.to_path_buf(), d.join("missing.yaml")]);
        let files: Vec<String> = outcome
            .entries
            .iter()
            .map(|(p, _, _)| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(files, ["a.yaml", "b.yaml", "missing.yaml"]);
        assert!(outcome.entries[0].2.is_empty() && outcome.entries[1].2.is_empty());
        assert_eq!(outcome.entries[2].2[0].check, finding::YAML);
        assert!(outcome.removed.is_none());
        assert!(outcome.fails(false));
    }
}
