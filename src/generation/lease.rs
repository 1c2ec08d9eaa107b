//! Readers' leases (docs/generations.md, "How the agent reads a generation"): a process that
//! loads generation N holds a shared `flock` on `generations/N/generation.json` for as long as
//! it runs; `generations gc` removes only generations it can lock exclusively, and holds that
//! lock until the generation is gone, so a reader either gets its lease before gc looks or
//! finds the generation gone and takes the new `current`.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::current::current_number;
use crate::home::Layout;

/// How often `acquire` re-reads `current` when the generation it found was collected
/// meanwhile.
const ATTEMPTS: usize = 5;

/// A shared lock on one generation's `generation.json`, held until dropped (or, after
/// [`Lease::inheritable_fd`], until every process that inherited it exits).
#[derive(Debug)]
pub struct Lease {
    number: u64,
    dir: PathBuf,
    /// Holds the lock for as long as it is open (on Windows nothing else reads it).
    #[cfg_attr(windows, allow(dead_code))]
    file: File,
}

/// Waits for a shared lock on `file` (a signal does not end the wait).
fn lock_shared(file: &File) -> std::io::Result<()> {
    loop {
        match file.lock_shared() {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            done => return done,
        }
    }
}

/// Whether `file` is still what `path` names (gc renames a generation away before deleting it).
fn still_named(file: &File, path: &Path) -> bool {
    crate::files::os::same_file(file, path)
}

impl Lease {
    /// Leases the current generation; `None` when none is published.
    pub fn acquire(layout: &Layout) -> std::io::Result<Option<Lease>> {
        for _ in 0..ATTEMPTS {
            let Some(number) = current_number(layout) else {
                return Ok(None);
            };
            let dir = layout.generation(number);
            let path = dir.join("generation.json");
            let file = match crate::files::open_regular(&path) {
                Ok(file) => file,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            lock_shared(&file)?;
            if still_named(&file, &path) {
                let dir = std::fs::canonicalize(&dir)?;
                return Ok(Some(Lease { number, dir, file }));
            }
        }
        Err(std::io::Error::other(format!(
            "{} kept changing while taking a lease on it",
            layout.current().display()
        )))
    }

    /// The generation number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The generation directory (canonical: a later switch of `current` does not move it).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The lease's descriptor with close-on-exec cleared, so a program this process
    /// `exec`s keeps the lease for its whole life. (Windows has no `exec`: there the process
    /// holding the lease waits for the program instead, see [`crate::cli::exec`].)
    #[cfg(unix)]
    pub fn inheritable_fd(&self) -> std::io::Result<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        let fd = self.file.as_raw_fd();
        // SAFETY: F_GETFD/F_SETFD on a descriptor we own.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: as above.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(fd)
    }
}

/// The exclusive lock gc holds on a generation nobody leases, while removing it; `None` when
/// a reader holds a lease (or the file cannot be opened).
pub fn claim_unleased(dir: &Path) -> Option<File> {
    let file = crate::files::open_regular(&dir.join("generation.json")).ok()?;
    file.try_lock().ok()?;
    Some(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn publish(layout: &Layout, number: u64) {
        let dir = layout.generation(number);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("generation.json"), "{}").unwrap();
        super::super::transaction::switch_current(layout, number).unwrap();
    }

    #[test]
    fn a_lease_blocks_the_claim_and_follows_no_later_switch() {
        let tmp = tempfile::tempdir().unwrap();
        let layout = Layout::new(tmp.path());
        assert!(Lease::acquire(&layout).unwrap().is_none());
        publish(&layout, 1);
        let lease = Lease::acquire(&layout).unwrap().unwrap();
        assert_eq!(lease.number(), 1);
        publish(&layout, 2);
        assert!(lease.dir().ends_with(Path::new("generations").join("1")));
        assert!(claim_unleased(&layout.generation(1)).is_none());
        assert!(claim_unleased(&layout.generation(2)).is_some());
        drop(lease);
        assert!(claim_unleased(&layout.generation(1)).is_some());
    }

    #[test]
    fn a_collected_generation_is_not_leased() {
        let tmp = tempfile::tempdir().unwrap();
        let layout = Layout::new(tmp.path());
        publish(&layout, 1);
        // current names a generation gc already renamed away: no lease, an error after retries.
        std::fs::rename(layout.generation(1), layout.generations().join(".trash-1")).unwrap();
        assert!(Lease::acquire(&layout).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn the_inheritable_descriptor_loses_close_on_exec() {
        let tmp = tempfile::tempdir().unwrap();
        let layout = Layout::new(tmp.path());
        publish(&layout, 3);
        let lease = Lease::acquire(&layout).unwrap().unwrap();
        let fd = lease.inheritable_fd().unwrap();
        // SAFETY: reading the flags of our own descriptor.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        assert_eq!(flags & libc::FD_CLOEXEC, 0);
    }
}
