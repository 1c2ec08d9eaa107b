//! `verify` (GEN-8): the current generation against what it records — every plugin tree's
//! NAR hash, every plugin link, the venv's installed distributions against the lock, and
//! every installed file against the sha256 in its wheel's `RECORD`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::doc::GenerationDoc;
use crate::resolve::lock::Lock;
use crate::store::Store;

/// A distribution as the lock and a venv's `*.dist-info` directories both name it: the
/// normalised project name and the version.
pub type Distribution = (String, String);

/// The distributions `lock` installs.
pub fn locked(lock: &Lock) -> BTreeSet<Distribution> {
    lock.packages
        .iter()
        .map(|p| (normalise(&p.name), p.version.clone()))
        .collect()
}

/// The `*.dist-info` directories of the venv's `site` directory, sorted, each with the
/// distribution it names (`<name>-<version>.dist-info`, the name escaped without `-`).
pub fn installed(site: &Path) -> std::io::Result<Vec<(PathBuf, Distribution)>> {
    let mut infos: Vec<PathBuf> = std::fs::read_dir(site)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "dist-info"))
        .collect();
    infos.sort();
    Ok(infos
        .into_iter()
        .map(|info| {
            let stem = info
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            let (name, version) = stem.split_once('-').unwrap_or((stem.as_str(), ""));
            let distribution = (normalise(name), version.to_string());
            (info, distribution)
        })
        .collect())
}

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// What part (`plugin weather`, `venv`, `httpx 0.28.1`).
    pub subject: String,
    /// What is wrong.
    pub message: String,
}

fn problem(subject: impl Into<String>, message: impl Into<String>) -> Problem {
    Problem {
        subject: subject.into(),
        message: message.into(),
    }
}

fn normalise(name: &str) -> String {
    let mut out = String::new();
    let mut last_sep = false;
    for c in name.chars() {
        if c == '-' || c == '_' || c == '.' {
            if !last_sep {
                out.push('-');
            }
            last_sep = true;
        } else {
            out.push(c.to_ascii_lowercase());
            last_sep = false;
        }
    }
    out
}

/// Whether `entry` is a copy of the store tree `key` — what a generation holds in place of a
/// junction on a Windows file system without reparse points ([`crate::files::os::link_dir`]);
/// never accepted on Unix, where the entry is always a link.
fn copy_of(entry: &Path, key: &str) -> bool {
    cfg!(windows)
        && std::fs::symlink_metadata(entry).is_ok_and(|m| m.is_dir() && !m.file_type().is_symlink())
        && crate::store::nar::nar_sha256(entry)
            .is_ok_and(|digest| crate::store::nar::nix_base32(&digest) == key)
}

/// Checks a generation directory; an empty list means it is intact.
pub fn verify(generation_dir: &Path, doc: &GenerationDoc, store: &Store) -> Vec<Problem> {
    let mut problems = Vec::new();
    for plugin in &doc.plugins {
        let subject = format!("plugin {}", plugin.key);
        let link = generation_dir.join(&plugin.path);
        match std::fs::canonicalize(&link) {
            Ok(resolved) => {
                let expected = std::fs::canonicalize(store.path_of(&plugin.store_key)).ok();
                if Some(&resolved) != expected.as_ref() && !copy_of(&link, &plugin.store_key) {
                    problems.push(problem(
                        &subject,
                        format!("{} does not point to its store tree", plugin.path),
                    ));
                }
            }
            Err(e) => problems.push(problem(&subject, format!("{}: {e}", plugin.path))),
        }
        if Store::key_from_sri(&plugin.tree).as_deref() != Some(plugin.store_key.as_str()) {
            problems.push(problem(&subject, "its tree hash and store key disagree"));
        }
        match store.verify(&plugin.store_key) {
            Ok(true) => {}
            Ok(false) => problems.push(problem(
                &subject,
                format!(
                    "the store tree {} was modified (its NAR hash no longer matches)",
                    plugin.store_key
                ),
            )),
            Err(e) => problems.push(problem(&subject, e.to_string())),
        }
    }
    let site = generation_dir.join(&doc.python.site_packages);
    let expected = locked(&doc.lock);
    let mut found = BTreeSet::new();
    let dist_infos = match installed(&site) {
        Ok(d) => d,
        Err(e) => {
            problems.push(problem("venv", format!("{}: {e}", site.display())));
            return problems;
        }
    };
    for (info, (name, version)) in dist_infos {
        let subject = format!("{name} {version}");
        problems.extend(check_record(&site, &info, &subject));
        found.insert((name, version));
    }
    for (name, version) in expected.difference(&found) {
        problems.push(problem(
            format!("{name} {version}"),
            "locked but not installed in the venv",
        ));
    }
    for (name, version) in found.difference(&expected) {
        problems.push(problem(
            format!("{name} {version}"),
            "installed in the venv but not in the lock",
        ));
    }
    problems
}

fn check_record(site: &Path, info: &Path, subject: &str) -> Vec<Problem> {
    let record = info.join("RECORD");
    let text = match std::fs::read_to_string(&record) {
        Ok(t) => t,
        Err(e) => return vec![problem(subject, format!("{}: {e}", record.display()))],
    };
    let entries = match super::wheels::parse_record(&text) {
        Ok(entries) => entries,
        Err(e) => return vec![problem(subject, format!("{}: {e}", record.display()))],
    };
    let mut out = Vec::new();
    for entry in entries {
        let Some(hash) = entry.sha256 else {
            continue;
        };
        let file = site.join(&entry.path);
        match std::fs::read(&file) {
            Ok(bytes) => {
                if super::wheels::record_digest(&Sha256::digest(&bytes)) != hash {
                    out.push(problem(
                        subject,
                        format!("{} differs from its RECORD hash", entry.path),
                    ));
                }
            }
            Err(e) => out.push(problem(subject, format!("{}: {e}", entry.path))),
        }
    }
    out
}
