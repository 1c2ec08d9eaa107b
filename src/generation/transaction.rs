//! Publication (GEN-3): a transaction that builds a generation in a staging directory next to
//! `generations/`, fsyncs it, renames it into place, applies the user-file edits that go with
//! it (backed up first), and switches `current` with a temporary symlink and `rename(2)`,
//! then fsyncs the directory. The journal records each step, so a crash at any point leaves
//! `current` on a complete generation and the next writer knows what to undo.

use std::path::{Path, PathBuf};

use super::current::{current_number, numbers};
use super::faults;
use super::journal::{FileBackup, Journal};
use crate::files::write_atomically_mode;
use crate::home::Layout;

/// Makes every file and directory under `root` durable (see [`crate::files::sync_tree`]).
pub fn fsync_tree(root: &Path) -> std::io::Result<()> {
    crate::files::sync_tree(root)
}

/// Points `current` at generation `number` atomically: a temporary symlink renamed over it
/// (on Windows a temporary file holding `generations/<N>`, see [`super::current`]).
pub fn switch_current(layout: &Layout, number: u64) -> std::io::Result<()> {
    let tmp = layout.pm.join("current.tmp");
    let _ = std::fs::remove_file(&tmp);
    #[cfg(unix)]
    std::os::unix::fs::symlink(Path::new("generations").join(number.to_string()), &tmp)?;
    #[cfg(windows)]
    {
        use std::io::Write;
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(format!("generations/{number}\n").as_bytes())?;
        file.sync_all()?;
    }
    replace_pointer(&tmp, &layout.current())?;
    crate::files::sync_dir_at(&layout.pm)
}

/// Renames `tmp` over `current`. On Windows the rename fails while a reader has `current`
/// open without delete sharing (Python's `open` does, for a moment): it is retried for up to
/// two seconds.
fn replace_pointer(tmp: &Path, current: &Path) -> std::io::Result<()> {
    #[cfg(windows)]
    for _ in 0..200 {
        match std::fs::rename(tmp, current) {
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            done => return done,
        }
    }
    std::fs::rename(tmp, current)
}

/// One journaled operation.
#[derive(Debug)]
pub struct Transaction {
    layout: Layout,
    journal: Journal,
}

impl Transaction {
    /// Starts an operation that publishes a new generation; returns the transaction and the
    /// staging directory to build in (not yet created).
    pub fn begin_build(
        layout: &Layout,
        operation: &str,
    ) -> std::io::Result<(Transaction, PathBuf)> {
        std::fs::create_dir_all(layout.generations())?;
        let previous = current_number(layout);
        let next = numbers(layout).last().copied().max(previous).unwrap_or(0) + 1;
        let staging = layout.generations().join(format!(".tmp-{next}"));
        let journal = Journal {
            operation: operation.to_string(),
            pid: std::process::id(),
            target: Some(next),
            previous,
            staging: Some(staging.clone()),
            builds: true,
            files: Vec::new(),
        };
        journal.save(layout)?;
        faults::point("after-journal");
        Ok((
            Transaction {
                layout: layout.clone(),
                journal,
            },
            staging,
        ))
    }

    /// Starts an operation that switches to an existing generation (rollback) or only edits
    /// files (`target` = `None`).
    pub fn begin_switch(
        layout: &Layout,
        operation: &str,
        target: Option<u64>,
    ) -> std::io::Result<Transaction> {
        let journal = Journal {
            operation: operation.to_string(),
            pid: std::process::id(),
            target,
            previous: current_number(layout),
            staging: None,
            builds: false,
            files: Vec::new(),
        };
        journal.save(layout)?;
        Ok(Transaction {
            layout: layout.clone(),
            journal,
        })
    }

    /// The generation number this transaction publishes or switches to.
    pub fn target(&self) -> Option<u64> {
        self.journal.target
    }

    /// The generation current before.
    pub fn previous(&self) -> Option<u64> {
        self.journal.previous
    }

    /// Moves the built staging directory into `generations/<N>` after fsyncing it.
    pub fn publish_staging(&mut self) -> std::io::Result<()> {
        let (Some(staging), Some(target)) = (self.journal.staging.clone(), self.journal.target)
        else {
            return Err(std::io::Error::other("no staging directory to publish"));
        };
        let started = std::time::Instant::now();
        fsync_tree(&staging)?;
        tracing::debug!("fsynced the staging tree in {:?}", started.elapsed());
        faults::point("after-fsync");
        std::fs::rename(&staging, self.layout.generation(target))?;
        crate::files::sync_dir_at(&self.layout.generations())?;
        faults::point("after-rename");
        Ok(())
    }

    /// Replaces a user file's content, keeping a backup until the transaction finishes (or
    /// restoring it if the transaction is abandoned).
    pub fn edit_file(&mut self, path: &Path, content: &[u8]) -> std::io::Result<()> {
        self.edit_file_mode(path, content, None)
    }

    /// [`Transaction::edit_file`] with the file's mode forced (`0600` for `.env`); the
    /// backup copy gets the same mode.
    pub fn edit_file_mode(
        &mut self,
        path: &Path,
        content: &[u8],
        mode: Option<u32>,
    ) -> std::io::Result<()> {
        if std::fs::read(path).ok().as_deref() == Some(content) {
            return Ok(());
        }
        let backups = self.layout.backups();
        std::fs::create_dir_all(&backups)?;
        let backup = if path.exists() {
            let copy = backups.join(format!(
                "{}-{}",
                self.journal.files.len(),
                path.file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default()
            ));
            let original = std::fs::read(path)?;
            write_atomically_mode(&copy, &original, Some(0o600))?;
            Some(copy)
        } else {
            None
        };
        self.journal.files.push(FileBackup {
            path: path.to_path_buf(),
            backup,
        });
        self.journal.save(&self.layout)?;
        write_atomically_mode(path, content, mode)
    }

    /// Switches `current` to the target and completes the transaction.
    pub fn commit(self) -> std::io::Result<()> {
        faults::point("after-config");
        if let Some(target) = self.journal.target
            && Some(target) != self.journal.previous
        {
            switch_current(&self.layout, target)?;
            faults::point("after-switch");
        }
        self.journal.finish(&self.layout)
    }

    /// Abandons the transaction: undoes file edits and removes what was built.
    pub fn abort(self) -> std::io::Result<()> {
        super::journal::recover(&self.layout).map(|_| ())
    }
}
