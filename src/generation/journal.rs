//! The journal of in-flight work (GEN-8): written before anything visible changes, removed
//! after the last step. A journal found by the next writer means a crash; [`recover`] then
//! finishes or undoes the operation, decided by one fact: did `current` reach the target?

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::current;
use crate::files::write_atomically;
use crate::home::Layout;

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

    /// Reads the journal, if there is one. A journal is trusted only as far as it names what
    /// a transaction of this home can touch (see [`Journal::check`]); anything else is an
    /// error and nothing is done.
    pub fn load(layout: &Layout) -> std::io::Result<Option<Journal>> {
        let path = layout.journal();
        let invalid = |message: String| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "{}: {message}; nothing was recovered or removed (inspect the file, then delete it to continue)",
                    path.display()
                ),
            )
        };
        let Some(text) = crate::files::read_regular_text(&path, crate::files::STATE_LIMIT)? else {
            return Ok(None);
        };
        let journal: Journal = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        journal.check(layout).map_err(invalid)?;
        Ok(Some(journal))
    }

    /// Checks every path the journal names: the staging directory must be
    /// `pm/generations/.tmp-<target>`, each backup a file directly in `pm/backups/`, and each
    /// edited file one of the user files a transaction edits — `pm/installed.json`,
    /// `<home>/.env`, `<home>/config.yaml` or the `config.yaml` or `.env` of an existing profile.
    pub fn check(&self, layout: &Layout) -> Result<(), String> {
        let shown = |p: &Path| crate::text::escape(&p.display().to_string()).into_owned();
        if let Some(staging) = &self.staging {
            let expected = self
                .target
                .map(|t| layout.generations().join(format!(".tmp-{t}")));
            if expected.as_deref() != Some(staging.as_path()) {
                return Err(format!(
                    "its staging directory {} is not this home's staging directory for its target",
                    shown(staging)
                ));
            }
        }
        for f in &self.files {
            if !is_user_file(layout, &f.path) {
                return Err(format!(
                    "it names {}, which is not a file the package manager edits",
                    shown(&f.path)
                ));
            }
            if let Some(backup) = &f.backup {
                let direct_child = backup.parent() == Some(layout.backups().as_path())
                    && backup
                        .file_name()
                        .is_some_and(|n| Path::new(n).components().count() == 1);
                if !direct_child {
                    return Err(format!(
                        "its backup {} is not inside {}",
                        shown(backup),
                        layout.backups().display()
                    ));
                }
            }
        }
        Ok(())
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
        crate::files::sync_dir_at(&layout.pm)
    }
}

/// Whether `path` is one of the user files a transaction may edit.
fn is_user_file(layout: &Layout, path: &Path) -> bool {
    if path == layout.installed()
        || path == layout.env_file("default")
        || path == layout.config("default")
    {
        return true;
    }
    // `<home>/profiles/<name>/config.yaml` or `.env` of a profile that exists as a real
    // directory.
    let Some(profile_dir) = path.parent() else {
        return false;
    };
    let name = path.file_name();
    (name == Some(std::ffi::OsStr::new("config.yaml"))
        || name == Some(std::ffi::OsStr::new(".env")))
        && profile_dir.parent() == Some(layout.profiles().as_path())
        && profile_dir.file_name().is_some_and(|name| {
            let name = name.to_string_lossy();
            !name.starts_with('.') && !name.chars().any(char::is_control)
        })
        && std::fs::symlink_metadata(profile_dir).is_ok_and(|m| m.is_dir())
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
            let current = current::current_number(layout);
            let committed = journal.target.is_some() && current == journal.target;
            if committed {
                journal.finish(layout)?;
                Recovery::Completed(journal.operation)
            } else {
                // Undo user-file edits in reverse order.
                for f in journal.files.iter().rev() {
                    match &f.backup {
                        Some(b) => {
                            if let Some(bytes) =
                                crate::files::read_regular(b, crate::files::STATE_LIMIT)?
                            {
                                write_atomically(&f.path, &bytes)?;
                            }
                        }
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
    super::scratch::clear_abandoned(layout)?;
    let _ = std::fs::remove_file(layout.pm.join("current.tmp"));
    Ok(outcome)
}
