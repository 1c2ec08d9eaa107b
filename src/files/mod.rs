//! File primitives for the package manager's own files under `<home>/pm/`: reads and opens
//! that never follow a symbolic link and accept only regular files of bounded size (a
//! tampered home cannot redirect them), and atomic writes (temporary file, fsync, rename,
//! directory fsync). Every error names the path.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;

pub mod os;

/// Largest state file read (`installed.json`, `generation.json`, the journal): 64 MiB.
pub const STATE_LIMIT: u64 = 64 * 1024 * 1024;

fn at(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// The error for a path that is a symbolic link (or something else) where a regular file
/// belongs.
fn not_regular(path: &Path, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "{} is {what}, not a regular file; the package manager's files are never followed through links (remove it and try again)",
            path.display()
        ),
    )
}

fn check_open(path: &Path, result: io::Result<File>) -> io::Result<File> {
    match result {
        Ok(file) => {
            let meta = file.metadata().map_err(|e| at(path, e))?;
            if meta.file_type().is_symlink() {
                Err(not_regular(path, "a symbolic link"))
            } else if meta.is_file() {
                Ok(file)
            } else if meta.is_dir() {
                Err(not_regular(path, "a directory"))
            } else {
                Err(not_regular(path, "a special file"))
            }
        }
        Err(e) if os::is_link_error(&e) => Err(not_regular(path, "a symbolic link")),
        Err(e) => Err(at(path, e)),
    }
}

/// Opens an existing regular file for reading without following a symbolic link at `path`.
/// A FIFO is opened non-blocking and refused, so it can never hang the reader.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let result = os::no_follow(OpenOptions::new().read(true)).open(path);
    check_open(path, result)
}

/// Reads a regular file of at most `limit` bytes without following links; `Ok(None)` if it
/// does not exist.
pub fn read_regular(path: &Path, limit: u64) -> io::Result<Option<Vec<u8>>> {
    let file = match open_regular(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| at(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is larger than {limit} bytes", path.display()),
        ));
    }
    Ok(Some(bytes))
}

/// [`read_regular`] as UTF-8 text.
pub fn read_regular_text(path: &Path, limit: u64) -> io::Result<Option<String>> {
    match read_regular(path, limit)? {
        None => Ok(None),
        Some(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is not UTF-8 text", path.display()),
            )
        }),
    }
}

/// Opens (creating it `0644` if missing) a regular file for reading and writing without
/// following a link at `path` — for the writer lock.
pub fn open_or_create_regular(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    let result = os::no_follow(os::create_mode(&mut options, 0o644)).open(path);
    check_open(path, result)
}

/// Opens a regular file for appending (creating it with `mode` if missing) without following
/// a link at `path` — for logs.
pub fn open_append_regular(path: &Path, mode: u32) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.append(true).create(true);
    let result = os::no_follow(os::create_mode(&mut options, mode)).open(path);
    check_open(path, result)
}

/// Writes `text` to `path` atomically: a temporary file in the same directory, fsync, rename,
/// fsync of the directory. The file's permissions are kept when it already exists; a new file
/// gets `0644`. A symbolic link at `path` is replaced, never written through.
pub fn write_atomically(path: &Path, text: &[u8]) -> io::Result<()> {
    write_atomically_mode(path, text, None)
}

/// Like [`write_atomically`], with the file's mode forced to `mode` when given (`0600` for
/// `.env`); the temporary file has that mode from its creation.
pub fn write_atomically_mode(path: &Path, text: &[u8], mode: Option<u32>) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| at(dir, e))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".hermes-plugins-")
        .tempfile_in(dir)
        .map_err(|e| at(dir, e))?;
    let mode = match (mode, std::fs::symlink_metadata(path)) {
        (Some(m), _) => m,
        (None, Ok(meta)) if meta.is_file() => os::mode(&meta),
        (None, _) => 0o644,
    };
    let write = |tmp: &mut tempfile::NamedTempFile| -> io::Result<()> {
        os::set_file_mode(tmp.as_file(), mode)?;
        tmp.write_all(text)?;
        tmp.as_file().sync_all()
    };
    write(&mut tmp).map_err(|e| at(path, e))?;
    tmp.persist(path).map_err(|e| at(path, e.error))?;
    sync_dir_at(dir)
}

/// Makes a directory's entries durable: an fsync of the directory on Unix; nothing on Windows,
/// where a directory cannot be opened as a file and NTFS journals its entries itself. The error
/// is the system's alone: callers that do not say the path themselves use [`sync_dir_at`].
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(windows)]
    {
        let _ = dir;
        Ok(())
    }
}

/// [`sync_dir`], its error naming the directory.
pub fn sync_dir_at(dir: &Path) -> io::Result<()> {
    sync_dir(dir).map_err(|e| at(dir, e))
}

/// Writes a cache entry: a temporary file in the same directory and a rename, creating the
/// directory; not fsynced (unlike [`write_atomically`]), because an entry a crash loses or
/// tears is only a miss. Readers never see a half-written entry.
pub fn write_cache_entry(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// A tree up to this many files and directories is made durable one fsync each; a larger one
/// with one `syncfs(2)`. syncfs writes out everything dirty on the file system — other
/// processes' writes and an environment being built beside it included — so for the handful
/// of files of a stored wheel it is the slower way.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const FSYNC_EACH_UP_TO: usize = 64;

/// Makes everything written under `dir` durable: each file and directory fsynced, children
/// first; on Linux, a tree of more than [`FSYNC_EACH_UP_TO`] entries with one `syncfs(2)` of
/// its file system instead (a tree of 100 000 files costs one call, not 100 000 fsyncs).
pub fn sync_tree(dir: &Path) -> io::Result<()> {
    let mut entries = Vec::new();
    for entry in walkdir::WalkDir::new(dir).contents_first(true) {
        let entry = entry.map_err(io::Error::other)?;
        if entry.file_type().is_file() || entry.file_type().is_dir() {
            #[cfg(target_os = "linux")]
            if entries.len() == FSYNC_EACH_UP_TO {
                return sync_file_system(dir);
            }
            entries.push(entry.into_path());
        }
    }
    for path in entries {
        sync_entry(&path).map_err(|e| at(&path, e))?;
    }
    Ok(())
}

/// fsyncs one file or directory. On Windows a directory is left to NTFS (see [`sync_dir`])
/// and a file is flushed through a handle that may write, which `FlushFileBuffers` needs.
fn sync_entry(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(path)?.sync_all()
    }
    #[cfg(windows)]
    {
        if std::fs::symlink_metadata(path)?.is_dir() {
            return Ok(());
        }
        OpenOptions::new().write(true).open(path)?.sync_all()
    }
}

/// One `syncfs(2)` of the file system `dir` is on.
#[cfg(target_os = "linux")]
fn sync_file_system(dir: &Path) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let handle = File::open(dir).map_err(|e| at(dir, e))?;
    // SAFETY: syncfs on a descriptor we own.
    if unsafe { libc::syncfs(handle.as_raw_fd()) } == 0 {
        return Ok(());
    }
    Err(at(dir, io::Error::last_os_error()))
}

/// Puts the directory `fresh` in place of the directory `slot` (both in one parent
/// directory, so on one file system). Returns where the old `slot` now is, for the caller to
/// remove with what suits its contents; None when there was none.
///
/// On Linux the two trade places in one `renameat2(RENAME_EXCHANGE)`: a process looking at
/// `slot` meanwhile sees the old tree or the new one, never none (the `.pth` line of an
/// activated Hermes imports from `slot` at every interpreter start). Elsewhere, and on file
/// systems without the exchange, the old tree is renamed aside first; if the new one then
/// cannot take its place, the old one is put back.
pub fn replace_dir(fresh: &Path, slot: &Path) -> io::Result<Option<std::path::PathBuf>> {
    if std::fs::symlink_metadata(slot).is_err() {
        std::fs::rename(fresh, slot).map_err(|e| at(slot, e))?;
        return Ok(None);
    }
    #[cfg(target_os = "linux")]
    {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        let c = |p: &Path| {
            CString::new(p.as_os_str().as_bytes())
                .map_err(|e| at(p, io::Error::new(io::ErrorKind::InvalidInput, e)))
        };
        let (from, to) = (c(fresh)?, c(slot)?);
        // SAFETY: two NUL-terminated paths that outlive the call; the raw syscall, because
        // not every libc wraps renameat2 (musl before 1.2.5).
        let done = unsafe {
            libc::syscall(
                libc::SYS_renameat2,
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        if done == 0 {
            return Ok(Some(fresh.to_path_buf()));
        }
        let error = io::Error::last_os_error();
        if !matches!(
            error.raw_os_error(),
            Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP)
        ) {
            return Err(at(slot, error));
        }
    }
    let mut name = slot.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".old-{}", std::process::id()));
    let old = slot.with_file_name(name);
    std::fs::rename(slot, &old).map_err(|e| at(slot, e))?;
    if let Err(e) = std::fs::rename(fresh, slot) {
        let _ = std::fs::rename(&old, slot);
        return Err(at(slot, e));
    }
    Ok(Some(old))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn trees_of_any_size_are_synced_sealed_files_and_links_included() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        for (name, files) in [("small", 3), ("large", FSYNC_EACH_UP_TO + 1)] {
            let root = tmp.path().join(name).join("sub");
            std::fs::create_dir_all(&root).unwrap();
            for i in 0..files {
                let file = root.join(format!("f{i}"));
                std::fs::write(&file, "x").unwrap();
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
            }
            std::os::unix::fs::symlink("f0", root.join("link")).unwrap();
            std::os::unix::fs::symlink("/nonexistent", root.join("dangling")).unwrap();
            sync_tree(&tmp.path().join(name)).unwrap();
        }
        let missing = tmp.path().join("missing");
        let e = sync_tree(&missing).unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
    }

    #[test]
    fn a_directory_is_replaced_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let (fresh, slot) = (tmp.path().join("fresh"), tmp.path().join("slot"));
        std::fs::create_dir(&fresh).unwrap();
        std::fs::write(fresh.join("new"), "1").unwrap();
        assert_eq!(
            replace_dir(&fresh, &slot).unwrap(),
            None,
            "nothing was there"
        );
        assert!(slot.join("new").is_file() && !fresh.exists());
        std::fs::create_dir(&fresh).unwrap();
        std::fs::write(fresh.join("newer"), "2").unwrap();
        let old = replace_dir(&fresh, &slot).unwrap().unwrap();
        assert!(slot.join("newer").is_file() && !slot.join("new").exists());
        assert!(old.join("new").is_file(), "the old tree is handed back");
    }

    #[cfg(unix)]
    #[test]
    fn links_fifos_and_directories_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::write(&outside, "secret").unwrap();
        let link = dir.path().join("state.json");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        let e = read_regular(&link, 100).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let e = open_or_create_regular(&link).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "secret");
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_regular(&fifo, 100).unwrap_err();
        assert!(e.to_string().contains("special file"), "{e}");
        let e = read_regular(dir.path(), 100).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        assert_eq!(
            read_regular(&dir.path().join("missing"), 100).unwrap(),
            None
        );
    }

    #[test]
    fn sizes_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("big");
        std::fs::write(&file, vec![b'x'; 101]).unwrap();
        assert!(read_regular(&file, 100).is_err());
        assert_eq!(read_regular(&file, 101).unwrap().unwrap().len(), 101);
    }

    #[cfg(unix)]
    #[test]
    fn atomic_writes_replace_a_link_instead_of_following_it() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::write(&outside, "keep").unwrap();
        let link = dir.path().join("installed.json");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        write_atomically(&link, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_file());
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "new");
    }
}
