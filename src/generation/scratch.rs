//! Scratch directories under `pm/tmp/` for work done *before* the writer lock is taken
//! (fetching and validating a plugin can take as long as the network needs, and must not
//! hold up other writers). Each scratch directory is held with an exclusive file lock
//! (`flock`) on the directory itself for as long as its owner lives; the next writer's
//! recovery removes only scratch directories nobody holds. Windows locks no directory: there
//! the lock is on `<dir>.lock` beside it, opened so that nobody can delete it while held.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::home::Layout;

/// A scratch directory, locked while it exists; removed on drop.
#[derive(Debug)]
pub struct Scratch {
    dir: Option<tempfile::TempDir>,
    lock: Option<File>,
}

/// A scratch directory this young is left alone even when unlocked: its creator may not
/// have locked it yet.
const GRACE: Duration = Duration::from_secs(30);

impl Scratch {
    /// Creates and locks `pm/tmp/<prefix>XXXXXX`.
    pub fn new(layout: &Layout, prefix: &str) -> std::io::Result<Scratch> {
        let tmp = layout.tmp();
        std::fs::create_dir_all(&tmp)?;
        let dir = tempfile::Builder::new().prefix(prefix).tempdir_in(&tmp)?;
        let lock = open_lock(dir.path(), true)?;
        // Nobody else can know the new name yet, so a lock that would wait is an error.
        lock.try_lock().map_err(std::io::Error::from)?;
        Ok(Scratch {
            dir: Some(dir),
            lock: Some(lock),
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.dir.as_ref().map_or(Path::new(""), |d| d.path())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let path = self.dir.as_ref().map(|d| d.path().to_path_buf());
        if let Some(dir) = self.dir.take() {
            make_writable(dir.path());
            let _ = dir.close();
        }
        // Closing the descriptor would release it too.
        if let Some(lock) = self.lock.take() {
            let _ = lock.unlock();
        }
        // The Windows lock file can go once it is closed.
        #[cfg(windows)]
        if let Some(path) = path {
            let _ = std::fs::remove_file(lock_beside(&path));
        }
        #[cfg(unix)]
        let _ = path;
    }
}

/// Store trees are sealed read-only; a scratch copy may be too. Make everything writable so
/// it can be removed.
fn make_writable(root: &Path) {
    for entry in walkdir::WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .flatten()
    {
        if entry.file_type().is_dir() {
            let _ = crate::files::os::set_mode(entry.path(), 0o755);
        }
    }
}

/// What holds scratch directory `dir`: the directory itself on Unix; on Windows, where a
/// directory cannot be locked, `<dir>.lock` beside it (`create` makes it), shared for reading
/// and writing but not deletion, so recovery cannot remove it from under its holder.
fn open_lock(dir: &Path, create: bool) -> std::io::Result<File> {
    #[cfg(unix)]
    {
        let _ = create;
        File::open(dir)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        use windows_sys::Win32::Storage::FileSystem::{FILE_SHARE_READ, FILE_SHARE_WRITE};
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(false)
            .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
            .open(lock_beside(dir))
    }
}

/// `<dir>.lock`, the Windows lock file of scratch directory `dir`.
#[cfg(windows)]
fn lock_beside(dir: &Path) -> PathBuf {
    let mut name = dir.as_os_str().to_os_string();
    name.push(".lock");
    PathBuf::from(name)
}

/// Whether someone holds `dir` (an exclusive lock cannot be taken without waiting).
fn held(dir: &Path) -> bool {
    let Ok(file) = open_lock(dir, false) else {
        return false;
    };
    // Released when `file` closes.
    file.try_lock().is_err()
}

/// Removes what is left in `pm/tmp/` by processes that are gone: every entry not held by a
/// live [`Scratch`] (and not younger than a few seconds). Call with the writer lock held.
pub fn clear_abandoned(layout: &Layout) -> std::io::Result<()> {
    let entries = match std::fs::read_dir(layout.tmp()) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let path: PathBuf = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            let young = meta
                .modified()
                .ok()
                .and_then(|m| now.duration_since(m).ok())
                .is_some_and(|age| age < GRACE);
            if young || held(&path) {
                continue;
            }
            make_writable(&path);
            match std::fs::remove_dir_all(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        } else {
            let _ = std::fs::remove_file(&path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Makes directory `dir` look an hour old (past [`GRACE`]).
    fn age(dir: &Path) {
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(windows)]
        {
            // A directory's times are set through a handle opened for it, with write access.
            use std::os::windows::fs::OpenOptionsExt;
            options
                .write(true)
                .custom_flags(windows_sys::Win32::Storage::FileSystem::FILE_FLAG_BACKUP_SEMANTICS);
        }
        let f = options.open(dir).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(3600))
            .unwrap();
    }

    #[test]
    fn held_scratch_survives_recovery_and_abandoned_goes() {
        let home = tempfile::tempdir().unwrap();
        let layout = Layout::new(home.path());
        let live = Scratch::new(&layout, "fetch-").unwrap();
        std::fs::write(live.path().join("f"), "x").unwrap();
        let abandoned = layout.tmp().join("fetch-old");
        std::fs::create_dir_all(abandoned.join("sub")).unwrap();
        age(&abandoned);
        // Old too: only its lock keeps it.
        age(live.path());
        clear_abandoned(&layout).unwrap();
        assert!(live.path().join("f").exists());
        assert!(!abandoned.exists());
        let path = live.path().to_path_buf();
        drop(live);
        assert!(!path.exists());
        let left: Vec<_> = std::fs::read_dir(layout.tmp()).unwrap().flatten().collect();
        assert!(left.is_empty(), "nothing left behind: {left:?}");
    }
}
