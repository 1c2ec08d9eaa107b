//! `generations gc` (GEN-6): removes generations nothing needs — never `current`, its parent,
//! the `keep` newest, or one an agent holds open — and then every store tree no kept
//! generation and no installed plugin references.
//!
//! Readers' leases ([`super::lease`]): an agent that loads generation N holds a shared `flock`
//! on `generations/N/generation.json` for as long as it runs; gc asks for an exclusive lock
//! without waiting, keeps the generation when that fails, and holds the lock while removing it.

use std::collections::BTreeSet;

use super::current::{current_number, numbers};
use super::doc::GenerationDoc;
use super::lease::claim_unleased;
use crate::home::Layout;
use crate::store::Store;

/// What gc did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct GcReport {
    /// Generations removed.
    pub removed_generations: Vec<u64>,
    /// Generations kept, with why.
    pub kept: Vec<(u64, String)>,
    /// Store trees removed.
    pub removed_trees: Vec<String>,
}

/// Why a generation is kept whatever else holds it (a lease and `--older-than` come on top).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// It is `current`.
    Current,
    /// It is the current generation's parent.
    Parent,
    /// It is among the newest kept (`--keep`, or the `keep-generations` policy).
    Newest,
}

impl Kept {
    /// How `gc`'s report says it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kept::Current => "current",
            Kept::Parent => "parent of current",
            Kept::Newest => "one of the newest kept",
        }
    }
}

/// Why generation `n` is kept: it is `current`, its `parent`, or among the `newest`. The one
/// rule `gc`, the publication policy and `generations list` share.
pub fn kept_because(
    n: u64,
    current: Option<u64>,
    parent: Option<u64>,
    newest: &BTreeSet<u64>,
) -> Option<Kept> {
    if Some(n) == current {
        Some(Kept::Current)
    } else if Some(n) == parent {
        Some(Kept::Parent)
    } else if newest.contains(&n) {
        Some(Kept::Newest)
    } else {
        None
    }
}

/// Removes `generations/.trash-*` left by a collection that was interrupted (or, on Windows,
/// kept from deleting a file a reader had open). Nothing reads them; what cannot be removed
/// now is tried again next time.
fn remove_trash(layout: &Layout) {
    let Ok(entries) = std::fs::read_dir(layout.generations()) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(".trash-") {
            let _ = crate::store::remove_tree(&entry.path());
        }
    }
}

/// The parent of the current generation, as its document records it.
pub fn parent_of_current(layout: &Layout) -> Option<u64> {
    current_number(layout)
        .and_then(|c| GenerationDoc::read(&layout.generation(c)).ok())
        .and_then(|d| d.parent)
}

/// Collects garbage. `keep` newest generations are kept besides current, its parent and
/// leased ones, and so is every generation created after `newer_than` (`--older-than`: only
/// older ones go); `installed_trees` are store keys of installed plugins (always kept).
pub fn collect(
    layout: &Layout,
    keep: usize,
    newer_than: Option<jiff::Timestamp>,
    installed_trees: &BTreeSet<String>,
) -> std::io::Result<GcReport> {
    let mut report = GcReport::default();
    remove_trash(layout);
    let all = numbers(layout);
    let current = current_number(layout);
    let parent = parent_of_current(layout);
    let newest: BTreeSet<u64> = all.iter().rev().take(keep).copied().collect();
    let mut kept_docs = Vec::new();
    for n in &all {
        let dir = layout.generation(*n);
        let reason = if let Some(reason) = kept_because(*n, current, parent, &newest) {
            Some(reason.as_str())
        } else if let Some(limit) = newer_than
            && GenerationDoc::read(&dir)
                .ok()
                .and_then(|d| d.created.parse::<jiff::Timestamp>().ok())
                .is_some_and(|created| created > limit)
        {
            Some("newer than --older-than")
        } else {
            None
        };
        // Held while the generation is removed: a reader blocks on its lease until then and
        // then finds the generation gone. A generation without its generation.json is debris.
        let mut claim = None;
        let reason = reason.or_else(|| {
            claim = claim_unleased(&dir);
            (claim.is_none() && dir.join("generation.json").exists())
                .then_some("in use by a running agent")
        });
        match reason {
            Some(why) => {
                report.kept.push((*n, why.to_string()));
                if let Ok(doc) = GenerationDoc::read(&dir) {
                    kept_docs.push(doc);
                }
            }
            None => {
                // Rename first so the generation disappears at once, then delete.
                let trash = layout.generations().join(format!(".trash-{n}"));
                std::fs::rename(&dir, &trash)?;
                // Windows deletes a file only when its last handle closes, so the claim's
                // `generation.json` would keep the directory from going: the claim is let go
                // once the generation is out of sight (a reader waiting on it then finds it
                // renamed and takes `current` again, as on Unix after the removal).
                #[cfg(windows)]
                drop(claim.take());
                std::fs::remove_dir_all(&trash)?;
                drop(claim);
                report.removed_generations.push(*n);
            }
        }
    }
    let mut reachable: BTreeSet<String> = installed_trees.clone();
    for doc in &kept_docs {
        reachable.extend(doc.plugins.iter().map(|p| p.store_key.clone()));
    }
    let store = Store::open(layout.store())?;
    report.removed_trees = store
        .gc(&reachable)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_an_interrupted_collection_left_is_removed_by_the_next() {
        let tmp = tempfile::tempdir().unwrap();
        let layout = Layout::new(tmp.path());
        let trash = layout.generations().join(".trash-3");
        std::fs::create_dir_all(trash.join("venv")).unwrap();
        std::fs::write(trash.join("generation.json"), "{}").unwrap();
        std::fs::create_dir_all(layout.generations().join(".tmp-4")).unwrap();
        let report = collect(&layout, 0, None, &BTreeSet::new()).unwrap();
        assert!(report.removed_generations.is_empty());
        assert!(!trash.exists());
        // Only trash: a staging directory is the journal's to judge.
        assert!(layout.generations().join(".tmp-4").exists());
    }
}
