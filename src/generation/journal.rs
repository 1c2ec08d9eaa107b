//! The journal of in-flight work (GEN-8): written before anything visible changes, removed
//! after the last step. A journal found by the next writer means a crash; [`recover`] then
//! finishes or undoes the operation, decided by one fact: did `current` reach the target?

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::layout::Layout;
use super::publish;
use crate::state::installed::write_atomically;

/// A user file edited by the operation, with the copy taken before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileBackup {
    /// The edited file.
    pub path: PathBuf,
    /// The copy of its previous content, or `None` when it did not exist.
    pub backup: Option<PathBuf>,
}

/// One in-flight operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    /// What runs (`enable weather`).
    pub operation: String,
    /// The process running it.
    pub pid: u32,
    /// The generation `current` will point to when the operation commits.
    #[serde(default)]
    pub target: Option<u64>,
    /// The generation `current` pointed to before.
    #[serde(default)]
    pub previous: Option<u64>,
    /// The staging directory being built.
    #[serde(default)]
    pub staging: Option<PathBuf>,
    /// Whether the operation publishes a new generation (false for a rollback).
    #[serde(default)]
    pub builds: bool,
    /// User files edited so far.
    #[serde(default)]
    pub files: Vec<FileBackup>,
}

impl Journal {
    /// Writes the journal durably.
    pub fn save(&self, layout: &Layout) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        write_atomically(&layout.journal(), text.as_bytes())
    }

    /// Reads the journal, if there is one.
    pub fn load(layout: &Layout) -> std::io::Result<Option<Journal>> {
        match std::fs::read_to_string(layout.journal()) {
            Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{}: {e}", layout.journal().display()),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Removes the journal and the backups it names (the operation is complete).
    pub fn finish(&self, layout: &Layout) -> std::io::Result<()> {
        for f in &self.files {
            if let Some(b) = &f.backup {
                let _ = std::fs::remove_file(b);
            }
        }
        match std::fs::remove_file(layout.journal()) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        std::fs::File::open(&layout.pm)?.sync_all()
    }
}

/// What recovery did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovery {
    /// No journal: nothing to do.
    Clean,
    /// The interrupted operation had switched `current`: its edits were kept.
    Completed(String),
    /// The interrupted operation had not switched: its edits were undone.
    RolledBack(String),
}

fn remove_tree(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Finishes or undoes an interrupted operation; must be called with the writer lock held.
/// Also removes stray staging directories and scratch space.
pub fn recover(layout: &Layout) -> std::io::Result<Recovery> {
    let outcome = match Journal::load(layout)? {
        None => Recovery::Clean,
        Some(journal) => {
            let current = publish::current_number(layout);
            let committed = journal.target.is_some() && current == journal.target;
            if committed {
                journal.finish(layout)?;
                Recovery::Completed(journal.operation)
            } else {
                // Undo user-file edits in reverse order.
                for f in journal.files.iter().rev() {
                    match &f.backup {
                        Some(b) if b.exists() => {
                            let bytes = std::fs::read(b)?;
                            write_atomically(&f.path, &bytes)?;
                        }
                        Some(_) => {}
                        None => match std::fs::remove_file(&f.path) {
                            Ok(()) => {}
                            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                            Err(e) => return Err(e),
                        },
                    }
                }
                if journal.builds
                    && let Some(target) = journal.target
                    && current != Some(target)
                {
                    remove_tree(&layout.generation(target))?;
                }
                if let Some(staging) = &journal.staging {
                    remove_tree(staging)?;
                }
                journal.finish(layout)?;
                Recovery::RolledBack(journal.operation)
            }
        }
    };
    // Stray staging directories and scratch space belong to no one once we hold the lock.
    if let Ok(entries) = std::fs::read_dir(layout.generations()) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with(".tmp-") || name.starts_with(".trash-") {
                remove_tree(&e.path())?;
            }
        }
    }
    remove_tree(&layout.tmp())?;
    let _ = std::fs::remove_file(layout.pm.join("current.tmp"));
    Ok(outcome)
}
