//! One writer at a time (GEN-7): an exclusive file lock (`flock` on Unix) on `pm/lock`,
//! whose contents say who holds it. A second writer waits, saying "waiting for pid N
//! (command)…" after one second, for at most the limit it is given (the CLI: 30 s when nobody
//! can answer a prompt), then gives up with [`LockError::Busy`]. Readers never take this lock.

use std::fs::File;
use std::io::{Read, Seek, Write};
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
    #[error("cannot use the lock file {path}")]
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

/// Takes the exclusive lock without waiting: `false` when another process holds it.
fn try_lock(file: &File) -> std::io::Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

impl WriterLock {
    /// Takes the lock, waiting for the holder at most `limit` (`None`: as long as it takes;
    /// zero: not at all); `announce` is called once with the holder's description when the
    /// wait passes one second (at once when `limit` is shorter). A lock whose holder died is
    /// free: the kernel released it.
    pub fn acquire(
        path: &Path,
        command: &str,
        limit: Option<Duration>,
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
        let start = Instant::now();
        let mut announced = false;
        while !try_lock(&file).map_err(io)? {
            let waited = start.elapsed();
            let holder = holder(&mut file);
            if let Some(limit) = limit
                && waited >= limit
            {
                return Err(LockError::Busy {
                    holder,
                    seconds: limit.as_secs(),
                });
            }
            if !announced && waited >= Duration::from_secs(1).min(limit.unwrap_or(Duration::MAX)) {
                announce(&match limit {
                    Some(l) => format!("waiting for {holder} (at most {} s)…", l.as_secs()),
                    None => format!("waiting for {holder}…"),
                });
                announced = true;
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

/// Who holds the lock, from its contents (`<pid> <command>`).
fn holder(file: &mut File) -> String {
    let mut bytes = Vec::new();
    let _ = file.rewind();
    let _ = file.take(512).read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let text = crate::text::escape(text.trim()).into_owned();
    match text.split_once(' ') {
        Some((pid, cmd)) => format!("pid {pid} ({cmd})"),
        None if !text.is_empty() => format!("pid {text}"),
        None => "another process".to_string(),
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}
