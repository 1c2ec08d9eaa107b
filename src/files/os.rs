//! The file operations Unix and Windows do differently, each in one place, so the rest of the
//! crate says what it means ("open this without following a link", "is this executable")
//! and never which system it is on.
//!
//! On Windows (docs/release.md, "Windows"): there are no permission bits — a file is
//! executable by its name, not a bit, so [`is_executable`] is false and the modes the store
//! seals its trees with are not applied (NTFS ACLs are the user's); a link is never followed
//! where Unix opens with `O_NOFOLLOW`, because the handle is opened on the reparse point itself
//! (`FILE_FLAG_OPEN_REPARSE_POINT`) and refused as a link; file identity is the volume serial
//! number and file index ([`same_file`]); a file name must be Unicode to be archived; and a
//! generation's `plugins/<key>` entries are directory junctions, which need no privilege,
//! where Unix has relative symbolic links ([`link_dir`]).

use std::borrow::Cow;
use std::ffi::OsStr;
use std::fs::{File, FileType, Metadata, OpenOptions};
use std::io;
use std::path::Path;

/// Makes `options` open the path itself, never a symbolic link's target, and never block (a
/// FIFO put in a file's place), nor leak into a child process. The caller checks what it got:
/// on Unix a link gives `ELOOP` ([`is_link_error`]); on Windows the handle is the link's
/// own, whose metadata says it is one.
pub fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        options.custom_flags(windows_sys::Win32::Storage::FileSystem::FILE_FLAG_OPEN_REPARSE_POINT)
    }
}

/// Makes `options` never block on a FIFO and never leak into a child process, following links
/// (for trees already checked to stay inside their root).
pub fn no_block(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
    }
    #[cfg(windows)]
    {
        options
    }
}

/// Whether opening with [`no_follow`] failed because the path is a symbolic link.
pub fn is_link_error(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(windows)]
    {
        let _ = e;
        false
    }
}

/// Whether `e` says a rename or link crossed file systems (then copy instead).
pub fn is_cross_device(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::EXDEV)
    }
    #[cfg(windows)]
    {
        // ERROR_NOT_SAME_DEVICE
        e.raw_os_error() == Some(17)
    }
}

/// Whether `e` says a hard link cannot be made here (another file system, not allowed, too
/// many links, not supported): the caller copies instead.
pub fn cannot_hard_link(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(
            e.raw_os_error(),
            Some(libc::EXDEV | libc::EPERM | libc::EMLINK | libc::ENOTSUP)
        )
    }
    #[cfg(windows)]
    {
        // ERROR_NOT_SAME_DEVICE, ERROR_TOO_MANY_LINKS, ERROR_NOT_SUPPORTED, ERROR_INVALID_FUNCTION
        // (a file system without hard links), ERROR_ACCESS_DENIED.
        matches!(e.raw_os_error(), Some(17 | 1142 | 50 | 1 | 5))
    }
}

/// Whether `e` says the file system is read-only.
pub fn is_read_only_file_system(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::EROFS)
    }
    #[cfg(windows)]
    {
        // ERROR_WRITE_PROTECT
        e.raw_os_error() == Some(19)
    }
}

/// Whether a file with this metadata is executable: any execute bit on Unix; never on
/// Windows, which has no such bit.
pub fn is_executable(meta: &Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(windows)]
    {
        let _ = meta;
        false
    }
}

/// The permission bits of `meta` (`0o7777`); on Windows `0o444` for a read-only file, `0o644`
/// otherwise (what a key over a file's state needs to see change).
pub fn mode(meta: &Metadata) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o7777
    }
    #[cfg(windows)]
    {
        if meta.permissions().readonly() {
            0o444
        } else {
            0o644
        }
    }
}

/// Sets the permission bits of `path` (no-op on Windows: see the module docs).
pub fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
    }
    #[cfg(windows)]
    {
        let _ = (path, mode);
        Ok(())
    }
}

/// Sets the permission bits of an open file (no-op on Windows).
pub fn set_file_mode(file: &File, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(mode))
    }
    #[cfg(windows)]
    {
        let _ = (file, mode);
        Ok(())
    }
}

/// Makes `options` create a new file with `mode` (no-op on Windows).
pub fn create_mode(options: &mut OpenOptions, mode: u32) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode)
    }
    #[cfg(windows)]
    {
        let _ = mode;
        options
    }
}

/// Creates the directory `path` with `mode` (the parent must exist).
pub fn create_dir_mode(path: &Path, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().mode(mode).create(path)
    }
    #[cfg(windows)]
    {
        let _ = mode;
        std::fs::create_dir(path)
    }
}

/// A word for a file type that is neither a regular file, a directory nor a symlink.
pub fn special_kind(file_type: FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            "FIFO"
        } else if file_type.is_socket() {
            "socket"
        } else if file_type.is_block_device() {
            "block device"
        } else if file_type.is_char_device() {
            "character device"
        } else {
            "special file"
        }
    }
    #[cfg(windows)]
    {
        let _ = file_type;
        "special file"
    }
}

/// The bytes of a file name or link target as archived and hashed: the name itself on Unix;
/// its UTF-8 on Windows, where a name that is not Unicode is refused (it could not be written
/// on Unix the same way, so its hash would mean nothing there).
pub fn name_bytes(name: &OsStr) -> io::Result<Cow<'_, [u8]>> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(Cow::Borrowed(name.as_bytes()))
    }
    #[cfg(windows)]
    {
        match name.to_str() {
            Some(text) => Ok(Cow::Owned(text.replace('\\', "/").into_bytes())),
            None => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is not a Unicode name", name.to_string_lossy()),
            )),
        }
    }
}

/// Whether the open `file` is the file `path` names now (not followed through a link).
pub fn same_file(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::symlink_metadata(path)) {
            (Ok(open), Ok(named)) => open.ino() == named.ino() && open.dev() == named.dev(),
            _ => false,
        }
    }
    #[cfg(windows)]
    {
        let (Ok(open), Ok(named)) = (
            file.try_clone().and_then(same_file::Handle::from_file),
            same_file::Handle::from_path(path),
        ) else {
            return false;
        };
        open == named
    }
}

/// An identity of a file's contents as they are now: device, inode (file index on Windows
/// is not stable Rust, so the creation time stands in), size and modification time. Two
/// equal identities are the same unchanged file, for memos that must not outlive a change.
pub fn identity(meta: &Metadata) -> (u64, u64, u64, i128) {
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128);
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino(), meta.len(), modified)
    }
    #[cfg(windows)]
    {
        let created = meta
            .created()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as u64);
        (0, created, meta.len(), modified)
    }
}

/// Creates the symbolic link `link` to `target` (a file's link on Windows, which needs the
/// create-symbolic-link privilege or developer mode: the error then says so).
pub fn symlink(target: &Path, link: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(target, link)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::symlink_file(target, link).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot create the symbolic link {} (Windows allows it with developer mode or the create-symbolic-link privilege): {e}",
                    link.display()
                ),
            )
        })
    }
}

/// Makes `link` lead to the directory `target`, given relative to `link`'s directory: a
/// relative symbolic link on Unix (the tree stays relocatable); a directory junction to the
/// absolute path on Windows (junctions need no privilege, and take only absolute targets) —
/// or, on a Windows file system without reparse points (FAT, some network shares, Wine), a
/// copy of the directory, which reads the same.
pub fn link_dir(target: &Path, link: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(target, link)
    }
    #[cfg(windows)]
    {
        let parent = link.parent().unwrap_or(Path::new("."));
        let absolute = std::path::absolute(parent.join(target))?;
        match junction::create(&absolute, link) {
            // ERROR_INVALID_FUNCTION, ERROR_NOT_SUPPORTED: no reparse points here.
            Err(e) if matches!(e.raw_os_error(), Some(1 | 50)) => {
                let _ = std::fs::remove_dir(link);
                copy_dir(&absolute, link)
            }
            done => done,
        }
    }
}

/// Copies the directory tree `from` to `to` (which must not exist), links as links.
#[cfg(windows)]
fn copy_dir(from: &Path, to: &Path) -> io::Result<()> {
    for entry in walkdir::WalkDir::new(from).follow_links(false) {
        let entry = entry.map_err(io::Error::other)?;
        let rel = entry.path().strip_prefix(from).map_err(io::Error::other)?;
        let dest = to.join(rel);
        let kind = entry.file_type();
        if kind.is_dir() {
            std::fs::create_dir(&dest)?;
        } else if kind.is_symlink() {
            symlink(&std::fs::read_link(entry.path())?, &dest)?;
        } else {
            std::fs::copy(entry.path(), &dest)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_link_leads_to_its_target_and_is_not_followed_by_no_follow_opens() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("store/entry")).unwrap();
        std::fs::write(tmp.path().join("store/entry/file"), b"x").unwrap();
        std::fs::create_dir(tmp.path().join("plugins")).unwrap();
        let link = tmp.path().join("plugins/key");
        link_dir(Path::new("../store/entry"), &link).unwrap();
        assert_eq!(std::fs::read(link.join("file")).unwrap(), b"x");
        #[cfg(unix)]
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // A no-follow open of the link is the link's, never the file's behind it.
        let mut options = OpenOptions::new();
        options.read(true);
        let file = tmp.path().join("store/entry/file");
        assert!(same_file(
            &no_follow(&mut options).open(&file).unwrap(),
            &file
        ));
    }

    #[test]
    fn names_are_bytes_and_modes_are_what_the_system_has() {
        assert_eq!(&*name_bytes(OsStr::new("a-b.py")).unwrap(), b"a-b.py");
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("f");
        std::fs::write(&path, b"").unwrap();
        set_mode(&path, 0o755).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(is_executable(&meta), cfg!(unix));
        assert_eq!(mode(&meta), if cfg!(unix) { 0o755 } else { 0o644 });
    }
}
