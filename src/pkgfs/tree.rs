//! One bounded walk of a package tree, shared by every check that looks at all files (paths,
//! the security scan, the Python sources, self-updaters): symlinks are never followed, there
//! is no depth limit (a payload 40 directories down is seen like one at the top), and what
//! could not be walked — an unreadable directory, a path too long for the OS, more entries
//! than [`MAX_ENTRIES`] — is recorded in [`Tree::unexamined`] so checks can fail closed
//! instead of calling an unseen part of the package clean. `.git` is not part of a package
//! (the store never copies it) and is skipped.

use std::path::{Path, PathBuf};

use walkdir::WalkDir;

/// Most entries walked in one package; the rest is unexamined.
pub const MAX_ENTRIES: usize = 100_000;

/// What a tree entry is (the entry itself; symlinks are not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A FIFO, socket or device.
    Special,
}

/// One entry of the package tree (the root itself is not an entry).
#[derive(Debug, Clone)]
pub struct TreeEntry {
    /// Path relative to the package root, `/`-separated.
    pub rel: String,
    /// The full path.
    pub path: PathBuf,
    /// What it is.
    pub kind: Kind,
    /// Size in bytes (files).
    pub size: u64,
}

/// A part of the tree that was not examined, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unexamined {
    /// The directory or entry (relative, `.` for the package as a whole).
    pub rel: String,
    /// Why.
    pub reason: String,
}

/// The walked tree.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    /// Every entry, sorted by path.
    pub entries: Vec<TreeEntry>,
    /// What could not be walked.
    pub unexamined: Vec<Unexamined>,
}

impl Tree {
    /// Walks the tree under `root`.
    pub fn walk(root: &Path) -> Tree {
        let mut tree = Tree::default();
        let rel_of = |p: &Path| {
            let rel = p
                .strip_prefix(root)
                .unwrap_or(p)
                .to_string_lossy()
                .replace('\\', "/");
            if rel.is_empty() { ".".to_string() } else { rel }
        };
        let walker = WalkDir::new(root)
            .follow_links(false)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || e.file_name() != ".git");
        for item in walker {
            let entry = match item {
                Ok(e) => e,
                Err(e) => {
                    let rel = e.path().map_or_else(|| ".".to_string(), rel_of);
                    let reason = match e.io_error() {
                        Some(io) => format!("cannot be read: {io}"),
                        None => e.to_string(),
                    };
                    tree.unexamined.push(Unexamined { rel, reason });
                    continue;
                }
            };
            if entry.depth() == 0 {
                continue;
            }
            if tree.entries.len() >= MAX_ENTRIES {
                tree.unexamined.push(Unexamined {
                    rel: ".".to_string(),
                    reason: format!(
                        "the package has more than {MAX_ENTRIES} files and directories; the rest were not examined"
                    ),
                });
                break;
            }
            let ft = entry.file_type();
            let kind = if ft.is_symlink() {
                Kind::Symlink
            } else if ft.is_dir() {
                Kind::Dir
            } else if ft.is_file() {
                Kind::File
            } else {
                Kind::Special
            };
            let size = if kind == Kind::File {
                entry.metadata().map_or(0, |m| m.len())
            } else {
                0
            };
            tree.entries.push(TreeEntry {
                rel: rel_of(entry.path()),
                path: entry.into_path(),
                kind,
                size,
            });
        }
        tree
    }

    /// Regular files whose name ends with `.ext` (no dot).
    pub fn files_with_extension<'a>(&'a self, ext: &'a str) -> impl Iterator<Item = &'a TreeEntry> {
        self.entries.iter().filter(move |e| {
            e.kind == Kind::File
                && Path::new(&e.rel)
                    .extension()
                    .is_some_and(|x| x.eq_ignore_ascii_case(ext))
        })
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn deep_trees_are_walked_to_the_bottom() {
        let dir = tempfile::tempdir().unwrap();
        let mut deep = dir.path().to_path_buf();
        for i in 0..40 {
            deep.push(format!("d{i}"));
        }
        std::fs::create_dir_all(&deep).unwrap();
        symlink("/etc/passwd", deep.join("leak")).unwrap();
        let tree = Tree::walk(dir.path());
        assert!(
            tree.entries
                .iter()
                .any(|e| e.kind == Kind::Symlink && e.rel.ends_with("d39/leak"))
        );
        assert!(tree.unexamined.is_empty());
    }

    #[test]
    fn paths_too_long_to_open_are_recorded_not_skipped() {
        use std::ffi::CString;
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        // Directories nested past PATH_MAX (made with *at calls, which never see the full
        // path): the walk cannot open the deepest ones by path and must say so.
        let dir = tempfile::tempdir().unwrap();
        let name = CString::new("n".repeat(200)).unwrap();
        let mut parent = std::fs::File::open(dir.path()).map(OwnedFd::from).unwrap();
        for _ in 0..25 {
            // SAFETY: plain *at system calls on descriptors we own, with a valid C string.
            unsafe {
                assert_eq!(libc::mkdirat(parent.as_raw_fd(), name.as_ptr(), 0o755), 0);
                let child = libc::openat(
                    parent.as_raw_fd(),
                    name.as_ptr(),
                    libc::O_RDONLY | libc::O_DIRECTORY,
                );
                assert!(child >= 0);
                parent = OwnedFd::from_raw_fd(child);
            }
        }
        let tree = Tree::walk(dir.path());
        assert!(
            !tree.unexamined.is_empty(),
            "{} entries",
            tree.entries.len()
        );
        assert!(
            tree.unexamined[0].reason.contains("cannot be read"),
            "{:?}",
            tree.unexamined
        );
        // Clean up from the inside out (remove_dir_all cannot reach that deep either).
        drop(parent);
        let _ = std::process::Command::new("rm")
            .arg("-rf")
            .arg(dir.path())
            .status();
    }

    #[test]
    fn git_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
        std::fs::write(dir.path().join(".git/hooks/x.py"), "x").unwrap();
        std::fs::write(dir.path().join("a.py"), "x").unwrap();
        let tree = Tree::walk(dir.path());
        let rels: Vec<&str> = tree.entries.iter().map(|e| e.rel.as_str()).collect();
        assert_eq!(rels, vec!["a.py"]);
    }
}
