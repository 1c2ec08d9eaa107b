//! Wheels unpacked once per operation. Installing a distribution reads its wheel to validate
//! it, to ask consent, to take its requirements and to check what it imports, and each read
//! unpacks it into a temporary directory. While an [`Operation`] is open, a wheel file is
//! unpacked the first time and remembered by what identifies the file — device, inode, size
//! and modification time, which a stored wheel keeps when its scratch directory is renamed
//! into the store — and later reads take that tree. Nothing is remembered outside an
//! operation (`validate` reads each wheel once), and the trees are removed when it ends.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{PipPackage, PipSource};
use crate::diag::Diagnostic;

/// The wheels unpacked in the open operation; `None` outside one.
static UNPACKED: Mutex<Option<Vec<Unpacked>>> = Mutex::new(None);

struct Unpacked {
    file: FileId,
    package: PipPackage,
    dir: PathBuf,
    diagnostics: Vec<Diagnostic>,
}

/// What identifies a wheel file's bytes for the length of an operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileId {
    /// Device, inode, length and modification time ([`crate::files::os::identity`]).
    identity: (u64, u64, u64, i128),
}

impl FileId {
    /// The identity of the open file `file`.
    pub fn of(file: &std::fs::File) -> Option<FileId> {
        let meta = file.metadata().ok()?;
        Some(FileId {
            identity: crate::files::os::identity(&meta),
        })
    }
}

fn unpacked() -> std::sync::MutexGuard<'static, Option<Vec<Unpacked>>> {
    UNPACKED.lock().unwrap_or_else(|e| e.into_inner())
}

/// An operation during which each wheel is unpacked once; its trees are removed when the
/// outermost one is dropped.
#[derive(Debug)]
pub struct Operation {
    outermost: bool,
}

impl Operation {
    /// Opens one (or joins the one open).
    pub fn begin() -> Operation {
        let mut held = unpacked();
        let outermost = held.is_none();
        if outermost {
            *held = Some(Vec::new());
        }
        Operation { outermost }
    }
}

impl Drop for Operation {
    fn drop(&mut self) {
        if self.outermost {
            // Taken out first: the trees are removed without the lock held.
            let trees = unpacked().take();
            drop(trees);
        }
    }
}

/// The package read earlier from the same file, now at `path`, with its diagnostics added to
/// `out`; `None` outside an operation or for a file not read in it.
pub fn recall(
    file: &FileId,
    path: &Path,
    out: &mut Vec<Diagnostic>,
) -> Option<(PipPackage, PathBuf)> {
    let held = unpacked();
    let found = held.as_ref()?.iter().find(|u| &u.file == file)?;
    let mut package = found.package.clone();
    if let PipSource::Wheel { file, .. } = &mut package.source {
        *file = path.to_path_buf();
    }
    out.extend(found.diagnostics.iter().cloned());
    Some((package, found.dir.clone()))
}

/// Remembers what reading `file` gave, if an operation is open.
pub fn remember(file: FileId, package: &PipPackage, dir: &Path, diagnostics: &[Diagnostic]) {
    if let Some(held) = unpacked().as_mut() {
        held.push(Unpacked {
            file,
            package: package.clone(),
            dir: dir.to_path_buf(),
            diagnostics: diagnostics.to_vec(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn wheel(path: &Path) {
        let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
        let options = zip::write::SimpleFileOptions::default();
        for (name, data) in [
            ("demo/plugin.py", "def register(ctx):\n    pass\n"),
            (
                "demo-1.0.dist-info/entry_points.txt",
                "[hermes_agent.plugins]\ndemo = demo.plugin\n",
            ),
            ("demo-1.0.dist-info/METADATA", "Name: demo\nVersion: 1.0\n"),
        ] {
            zip.start_file(name, options).unwrap();
            zip.write_all(data.as_bytes()).unwrap();
        }
        zip.finish().unwrap();
    }

    fn read(path: &Path) -> (PipPackage, PathBuf) {
        super::super::read_wheel(path, &mut Vec::new()).unwrap()
    }

    // One test: the memo is the process's, and tests run in parallel.
    #[test]
    fn a_wheel_is_unpacked_once_per_operation_and_its_tree_goes_with_it() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        std::fs::create_dir(&a).unwrap();
        let first = a.join("demo-1.0-py3-none-any.whl");
        wheel(&first);

        // Outside an operation every read unpacks.
        let (outside, outside_dir) = read(&first);
        assert_ne!(read(&first).1, outside_dir);
        drop(outside);

        let operation = Operation::begin();
        let (package, dir) = read(&first);
        assert_eq!(package.plugins[0].name, "demo");
        // The same file moved (a scratch directory renamed into the store): the same tree,
        // under its new path.
        std::fs::rename(&a, &b).unwrap();
        let moved = b.join("demo-1.0-py3-none-any.whl");
        let (again, again_dir) = read(&moved);
        assert_eq!(again_dir, dir);
        assert!(matches!(&again.source, PipSource::Wheel { file, .. } if *file == moved));
        // Another file (another inode) is unpacked for itself.
        let other = tmp.path().join("other-1.0-py3-none-any.whl");
        wheel(&other);
        assert_ne!(read(&other).1, dir);
        // A nested operation shares the memo and leaves the trees to the outermost one.
        drop(Operation::begin());
        assert!(dir.is_dir());
        drop((package, again));
        drop(operation);
        assert!(!dir.exists(), "removed with the operation");
    }
}
