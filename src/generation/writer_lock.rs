//! One writer at a time (GEN-7): an exclusive `flock` on `pm/lock`, whose contents say who
//! holds it. A second writer waits, saying "waiting for pid N (command)…" after one second;
//! `HERMES_PLUGINS_LOCK_TIMEOUT` (seconds) turns the wait into an error. Readers never take
//! this lock.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::{Duration, Instant};

/// A held writer lock; released on drop (and by the kernel if the process dies).
#[derive(Debug)]
pub struct WriterLock {
    file: File,
}

/// Why the lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// I/O on the lock file.
    #[error("cannot use the lock file {path}: {source}")]
    Io {
        /// The lock file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// Another writer held it past the timeout.
    #[error("another hermes-plugins is changing this home ({holder}); gave up after {seconds} s")]
    Busy {
        /// Who holds it.
        holder: String,
        /// How long we waited.
        seconds: u64,
    },
}

fn try_lock(file: &File, kind: libc::c_int) -> std::io::Result<bool> {
    // SAFETY: flock on a file descriptor we own; no memory is passed.
    let rc = unsafe { libc::flock(file.as_raw_fd(), kind | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let err = std::io::Error::last_os_error();
    if err.kind() == std::io::ErrorKind::WouldBlock {
        Ok(false)
    } else {
        Err(err)
    }
}

/// Whether another process holds a shared or exclusive `flock` on `path` (a reader's lease).
pub fn is_locked_by_other(path: &Path) -> bool {
    let Ok(file) = crate::files::open_regular(path) else {
        return false;
    };
    match try_lock(&file, libc::LOCK_EX) {
        Ok(true) => {
            // SAFETY: unlocking our own descriptor.
            unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
            false
        }
        Ok(false) => true,
        Err(_) => false,
    }
}

impl WriterLock {
    /// Takes the lock, waiting for the holder; `announce` is called once with the holder's
    /// description when the wait passes one second.
    pub fn acquire(
        path: &Path,
        command: &str,
        announce: &mut dyn FnMut(&str),
    ) -> Result<WriterLock, LockError> {
        let io = |source| LockError::Io {
            path: path.display().to_string(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut file = crate::files::open_or_create_regular(path).map_err(io)?;
        let timeout = std::env::var("HERMES_PLUGINS_LOCK_TIMEOUT")
            .ok()
            .and_then(|v| v.parse::<u64>().ok());
        let start = Instant::now();
        let mut announced = false;
        while !try_lock(&file, libc::LOCK_EX).map_err(io)? {
            let waited = start.elapsed();
            let holder = {
                let mut bytes = Vec::new();
                let _ = file.rewind();
                let _ = (&mut file).take(512).read_to_end(&mut bytes);
                let text = String::from_utf8_lossy(&bytes);
                let text = crate::text::escape(text.trim()).into_owned();
                match text.split_once(' ') {
                    Some((pid, cmd)) => format!("pid {pid} ({cmd})"),
                    None if !text.is_empty() => format!("pid {text}"),
                    None => "another process".to_string(),
                }
            };
            if !announced && waited >= Duration::from_secs(1) {
                announce(&format!("waiting for {holder}…"));
                announced = true;
            }
            if let Some(limit) = timeout
                && waited >= Duration::from_secs(limit)
            {
                return Err(LockError::Busy {
                    holder,
                    seconds: limit,
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        writeln!(file, "{} {command}", std::process::id()).map_err(io)?;
        file.flush().map_err(io)?;
        Ok(WriterLock { file })
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        // SAFETY: unlocking our own descriptor.
        unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }
}
