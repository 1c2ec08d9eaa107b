//! Reading files of an untrusted package without leaving it.
//!
//! A [`PackageRoot`] is a canonical directory. Every read goes through it: the relative path
//! is checked lexically (no absolute paths, no `..` above the root), then resolved through
//! symlinks and checked again, and only regular files are opened (never FIFOs or devices, which
//! could block). Reads are size-limited and decoded as UTF-8 with the position of the first
//! invalid byte reported; a leading BOM is dropped.

pub mod tree;

use std::fs;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::located::Pos;

pub use tree::{Kind, Tree, TreeEntry, Unexamined};

/// `ELOOP`: too many levels of symbolic links.
#[cfg(target_os = "linux")]
const ELOOP: i32 = 40;
/// `ELOOP`: too many levels of symbolic links.
#[cfg(not(target_os = "linux"))]
const ELOOP: i32 = 62;

/// Default size limit for manifests and other small text files (1 MiB).
pub const MANIFEST_LIMIT: u64 = 1024 * 1024;

/// Why a file of a package could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Nothing exists at the path.
    #[error("does not exist")]
    Missing,
    /// The path (or a symlink on it) leads outside the package root.
    #[error("resolves outside the package root (to {target})")]
    Escapes {
        /// Where it leads.
        target: String,
    },
    /// A symlink loop, or too many levels of symlinks.
    #[error("is a symlink loop")]
    Loop,
    /// Not a regular file (a directory, FIFO, socket or device).
    #[error("is a {kind}, not a regular file")]
    NotRegularFile {
        /// What it is instead.
        kind: &'static str,
    },
    /// Bigger than the limit for this kind of file.
    #[error("is {size} bytes; the limit is {limit} bytes")]
    TooLarge {
        /// Actual size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Not valid UTF-8 text.
    #[error("is not valid UTF-8 (first invalid byte at {pos})")]
    NotUtf8 {
        /// Where the first invalid byte is.
        pos: Pos,
        /// The line holding it, with invalid bytes shown as U+FFFD.
        line: String,
    },
    /// An I/O failure while reading.
    #[error("cannot be read: {0}")]
    Io(#[from] io::Error),
}

impl ReadError {
    /// The offending text, when the error has one (the line with invalid UTF-8).
    pub fn value(&self) -> Option<&str> {
        match self {
            ReadError::NotUtf8 { line, .. } => Some(line),
            _ => None,
        }
    }

    /// The position a diagnostic should point at (1:1 unless the error knows better).
    pub fn pos(&self) -> Pos {
        match self {
            ReadError::NotUtf8 { pos, .. } => *pos,
            _ => Pos::START,
        }
    }
}

/// A file or directory inside the root, after resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A regular file.
    File(PathBuf),
    /// A directory.
    Dir(PathBuf),
    /// Something else (FIFO, socket, device).
    Other(PathBuf, &'static str),
}

/// A package directory that all reads are confined to.
#[derive(Debug, Clone)]
pub struct PackageRoot {
    root: PathBuf,
    tree: Arc<OnceLock<Tree>>,
}

impl PackageRoot {
    /// Opens `dir` (canonicalising it).
    pub fn open(dir: &Path) -> io::Result<Self> {
        let root = fs::canonicalize(dir)?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", dir.display()),
            ));
        }
        Ok(PackageRoot {
            root,
            tree: Arc::new(OnceLock::new()),
        })
    }

    /// Every entry of the package, walked once (see [`tree`]) and shared by the checks.
    pub fn tree(&self) -> &Tree {
        self.tree.get_or_init(|| Tree::walk(&self.root))
    }

    /// The canonical root path.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// `path` (under the root) as a `/`-separated path relative to it (`.` for the root).
    pub fn relative(&self, path: &Path) -> String {
        let rel = path
            .strip_prefix(&self.root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/");
        if rel.is_empty() { ".".to_string() } else { rel }
    }

    /// Whether a canonical path lies inside (or is) the root.
    pub fn contains(&self, canonical: &Path) -> bool {
        canonical.starts_with(&self.root)
    }

    /// Resolves `rel` inside the root: lexical check, then symlinks followed and re-checked.
    pub fn resolve(&self, rel: &str) -> Result<Entry, ReadError> {
        let joined = self
            .root
            .join(lexically_inside(rel).ok_or_else(|| ReadError::Escapes {
                target: rel.to_string(),
            })?);
        match fs::symlink_metadata(&joined) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ReadError::Missing),
            Err(e) => return Err(ReadError::Io(e)),
            Ok(_) => {}
        }
        let canonical = match fs::canonicalize(&joined) {
            Ok(p) => p,
            Err(e) if e.raw_os_error() == Some(ELOOP) => return Err(ReadError::Loop),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // A dangling symlink: report where it points if that is outside.
                if let Ok(target) = fs::read_link(&joined) {
                    let base = joined.parent().unwrap_or(&self.root);
                    let lexical = normalize(&base.join(&target));
                    if !lexical.starts_with(&self.root) {
                        return Err(ReadError::Escapes {
                            target: target.display().to_string(),
                        });
                    }
                }
                return Err(ReadError::Missing);
            }
            Err(e) => return Err(ReadError::Io(e)),
        };
        if !self.contains(&canonical) {
            return Err(ReadError::Escapes {
                target: canonical.display().to_string(),
            });
        }
        let meta = fs::metadata(&canonical)?;
        let ft = meta.file_type();
        Ok(if ft.is_file() {
            Entry::File(canonical)
        } else if ft.is_dir() {
            Entry::Dir(canonical)
        } else {
            Entry::Other(canonical, crate::files::os::special_kind(meta.file_type()))
        })
    }

    /// Reads a text file inside the root, at most `limit` bytes; a leading BOM is dropped.
    pub fn read_text(&self, rel: &str, limit: u64) -> Result<String, ReadError> {
        let path = match self.resolve(rel)? {
            Entry::File(p) => p,
            Entry::Dir(_) => return Err(ReadError::NotRegularFile { kind: "directory" }),
            Entry::Other(_, kind) => return Err(ReadError::NotRegularFile { kind }),
        };
        read_limited_text(&path, limit)
    }

    /// Whether `rel` resolves to a regular file inside the root.
    pub fn is_file(&self, rel: &str) -> bool {
        matches!(self.resolve(rel), Ok(Entry::File(_)))
    }

    /// Whether `rel` resolves to a directory inside the root.
    pub fn is_dir(&self, rel: &str) -> bool {
        matches!(self.resolve(rel), Ok(Entry::Dir(_)))
    }

    /// Whether anything (even a broken symlink) exists at `rel`.
    pub fn exists(&self, rel: &str) -> bool {
        lexically_inside(rel).is_some_and(|p| fs::symlink_metadata(self.root.join(p)).is_ok())
    }

    /// Names of the entries of directory `rel` (sorted), not following anything further.
    pub fn list_dir(&self, rel: &str) -> Result<Vec<String>, ReadError> {
        let dir = match self.resolve(rel)? {
            Entry::Dir(p) => p,
            Entry::File(_) => return Err(ReadError::NotRegularFile { kind: "file" }),
            Entry::Other(_, kind) => return Err(ReadError::NotRegularFile { kind }),
        };
        let mut names = Vec::new();
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(names)
    }
}

/// Reads a regular file of at most `limit` bytes as UTF-8 text without a BOM.
pub fn read_limited_text(path: &Path, limit: u64) -> Result<String, ReadError> {
    decode_utf8(read_limited(path, limit)?)
}

/// Reads a regular file of at most `limit` bytes.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    // Non-blocking, so a FIFO swapped in after the check is refused instead of hanging.
    let file = crate::files::os::no_block(fs::OpenOptions::new().read(true)).open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadError::NotRegularFile {
            kind: if meta.is_dir() {
                "directory"
            } else {
                crate::files::os::special_kind(meta.file_type())
            },
        });
    }
    let size = meta.len();
    if size > limit {
        return Err(ReadError::TooLarge { size, limit });
    }
    let bytes = read_at_most(&file, size, limit + 1)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// Reads `file` to its end, at most `most` bytes, expecting `size` (its length when it was
/// opened; it may have changed since).
///
/// `Read::take(..).read_to_end` would not know the size: it reads 8 KiB, then 16 KiB, and so
/// on, reallocating as it goes (a 160 KB module took seven reads, and the reallocations were
/// 2 % of a cold `validate`). Here a file that kept its size takes one read, and one more to
/// see its end.
pub fn read_at_most(mut file: &fs::File, size: u64, most: u64) -> io::Result<Vec<u8>> {
    let first = usize::try_from(size.saturating_add(1).min(most)).unwrap_or(usize::MAX);
    let mut bytes = vec![0; first];
    let mut filled = 0;
    loop {
        if filled == bytes.len() {
            let room = most.saturating_sub(filled as u64);
            if room == 0 {
                break;
            }
            // Grown since it was opened: take it in doubling steps, up to `most`.
            let more = usize::try_from(room)
                .unwrap_or(usize::MAX)
                .min(filled.max(8192));
            bytes.resize(filled + more, 0);
        }
        match file.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(filled);
    Ok(bytes)
}

/// Decodes bytes as UTF-8, dropping a BOM; on failure names the first invalid byte's position.
pub fn decode_utf8(bytes: Vec<u8>) -> Result<String, ReadError> {
    match String::from_utf8(bytes) {
        Ok(mut text) => {
            if text.starts_with('\u{feff}') {
                text.drain(..'\u{feff}'.len_utf8());
            }
            Ok(text)
        }
        Err(err) => {
            let valid = err.utf8_error().valid_up_to();
            let prefix = String::from_utf8_lossy(&err.as_bytes()[..valid]);
            let line = prefix.matches('\n').count() + 1;
            let column = prefix.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            let start = err.as_bytes()[..valid]
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |i| i + 1);
            let end = err.as_bytes()[valid..]
                .iter()
                .position(|b| *b == b'\n')
                .map_or(err.as_bytes().len(), |i| valid + i);
            let line_text = String::from_utf8_lossy(&err.as_bytes()[start..end]).into_owned();
            Err(ReadError::NotUtf8 {
                line: line_text,
                pos: Pos::new(
                    u32::try_from(line).unwrap_or(u32::MAX),
                    u32::try_from(column).unwrap_or(u32::MAX),
                ),
            })
        }
    }
}

/// Normalises a relative path lexically; `None` if it is absolute or climbs above its start.
pub fn lexically_inside(rel: &str) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in Path::new(rel).components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// Lexically normalises an absolute path (resolving `.` and `..` without touching the disk).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn reads_are_confined() {
        let outer = tempfile::tempdir().unwrap();
        let pkg = outer.path().join("pkg");
        fs::create_dir(&pkg).unwrap();
        fs::write(outer.path().join("secret"), "s").unwrap();
        fs::write(pkg.join("ok.txt"), "\u{feff}hello").unwrap();
        symlink("../secret", pkg.join("leak")).unwrap();
        symlink("loop2", pkg.join("loop1")).unwrap();
        symlink("loop1", pkg.join("loop2")).unwrap();
        symlink("ok.txt", pkg.join("inner")).unwrap();
        let root = PackageRoot::open(&pkg).unwrap();
        assert_eq!(root.read_text("ok.txt", 100).unwrap(), "hello");
        assert_eq!(root.read_text("inner", 100).unwrap(), "hello");
        assert!(matches!(
            root.read_text("leak", 100),
            Err(ReadError::Escapes { .. })
        ));
        assert!(matches!(
            root.read_text("../secret", 100),
            Err(ReadError::Escapes { .. })
        ));
        assert!(matches!(root.read_text("loop1", 100), Err(ReadError::Loop)));
        assert!(matches!(
            root.read_text("nope", 100),
            Err(ReadError::Missing)
        ));
        assert!(matches!(
            root.read_text("ok.txt", 2),
            Err(ReadError::TooLarge { .. })
        ));
        assert!(matches!(
            root.read_text(".", 100),
            Err(ReadError::NotRegularFile { .. })
        ));
    }

    /// The whole file whatever size it was said to have (a file that grew after it was
    /// opened is read on past the size), and never more than `most` bytes.
    #[test]
    fn reads_take_the_file_as_it_is_up_to_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let content: Vec<u8> = (0..50_000u32).map(|i| (i % 251) as u8).collect();
        fs::write(&path, &content).unwrap();
        let file = fs::File::open(&path).unwrap();
        for (size, most, want) in [
            (50_000, u64::MAX, 50_000),
            (0, u64::MAX, 50_000),
            (10, 50_001, 50_000),
            (50_000, 20_000, 20_000),
            (0, 20_001, 20_001),
            (90_000, u64::MAX, 50_000),
        ] {
            use std::io::Seek;
            (&file).seek(io::SeekFrom::Start(0)).unwrap();
            let bytes = read_at_most(&file, size, most).unwrap();
            assert_eq!(bytes, content[..want], "size {size}, most {most}");
        }
        fs::write(&path, "").unwrap();
        let file = fs::File::open(&path).unwrap();
        assert!(read_at_most(&file, 0, 1).unwrap().is_empty());
    }

    #[test]
    fn invalid_utf8_is_located() {
        let err = decode_utf8(b"ab\ncd\xffef".to_vec()).unwrap_err();
        assert!(
            matches!(&err, ReadError::NotUtf8 { pos, line } if *pos == Pos::new(2, 3) && line == "cd\u{fffd}ef")
        );
    }

    #[test]
    fn fifo_is_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let root = PackageRoot::open(dir.path()).unwrap();
        assert!(matches!(
            root.read_text("pipe", 100),
            Err(ReadError::NotRegularFile { kind: "FIFO" })
        ));
    }
}
