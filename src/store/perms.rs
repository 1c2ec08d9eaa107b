//! Making a stored tree read-only and durable, and removing one despite that.

use std::fs;
use std::io;
use std::path::Path;

use crate::files::os;

use super::error::{StoreError, io_at};

/// Makes every directory under (and including) `dir` 0o555 (files were made read-only when
/// they were written; symlinks have no mode of their own), then makes the whole tree durable
/// at once (see [`crate::files::sync_tree`]).
pub(super) fn seal(dir: &Path) -> Result<(), StoreError> {
    make_read_only(dir)?;
    crate::files::sync_tree(dir).map_err(io_at(dir))
}

fn make_read_only(dir: &Path) -> Result<(), StoreError> {
    for entry in fs::read_dir(dir).map_err(io_at(dir))? {
        let entry = entry.map_err(io_at(dir))?;
        if entry.file_type().map_err(io_at(&entry.path()))?.is_dir() {
            make_read_only(&entry.path())?;
        }
    }
    os::set_mode(dir, 0o555).map_err(io_at(dir))
}

/// Removes `path` and everything under it, first making its directories writable (stored
/// trees are read-only, and entries cannot be unlinked from a read-only directory). Never
/// follows symlinks. Nothing at `path` is not an error.
pub(super) fn force_remove(path: &Path) -> Result<(), StoreError> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_at(path)(e)),
    };
    if meta.is_dir() {
        make_writable(path)?;
        fs::remove_dir_all(path).map_err(io_at(path))
    } else {
        fs::remove_file(path).map_err(io_at(path))
    }
}

/// Gives the owner full access to `dir` and every directory below it.
fn make_writable(dir: &Path) -> Result<(), StoreError> {
    os::set_mode(dir, 0o700).map_err(io_at(dir))?;
    for entry in fs::read_dir(dir).map_err(io_at(dir))? {
        let entry = entry.map_err(io_at(dir))?;
        if entry.file_type().map_err(io_at(&entry.path()))?.is_dir() {
            make_writable(&entry.path())?;
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::fs::Permissions;
    use std::os::unix::fs::{PermissionsExt, symlink};

    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn seal_makes_every_directory_read_only_and_force_remove_undoes_it() {
        let outside = tempfile::tempdir().unwrap();
        fs::set_permissions(outside.path(), Permissions::from_mode(0o751)).unwrap();
        let kept = outside.path().join("kept");
        fs::write(&kept, "must survive").unwrap();
        fs::set_permissions(&kept, Permissions::from_mode(0o444)).unwrap();
        let root = tempfile::tempdir().unwrap();
        let tree = root.path().join("tree");
        fs::create_dir_all(tree.join("a/b")).unwrap();
        fs::write(tree.join("a/b/f"), "x").unwrap();
        symlink(&kept, tree.join("a/out")).unwrap();
        symlink(outside.path(), tree.join("dir-link")).unwrap();

        seal(&tree).unwrap();
        assert_eq!(mode(&tree), 0o555);
        assert_eq!(mode(&tree.join("a")), 0o555);
        assert_eq!(mode(&tree.join("a/b")), 0o555);

        force_remove(&tree).unwrap();
        assert!(!tree.exists());
        // Symlinks were removed, not followed.
        assert_eq!(fs::read_to_string(&kept).unwrap(), "must survive");
        assert_eq!(mode(outside.path()), 0o751);
        assert_eq!(mode(&kept), 0o444);
        // Removing what is not there is fine.
        force_remove(&tree).unwrap();
    }
}
