//! Why a store operation failed; every message names the offending path or key.

use std::io;
use std::path::{Path, PathBuf};

/// A failed store operation.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// An I/O failure on a path.
    #[error("{}: {source}", path.display())]
    Io {
        /// Where it happened.
        path: PathBuf,
        /// The failure.
        source: io::Error,
    },
    /// The tree to store is not a directory.
    #[error("{} is not a directory", path.display())]
    NotADirectory {
        /// The path given.
        path: PathBuf,
    },
    /// The tree to store contains the store itself.
    #[error("{} contains the store; it cannot be stored in it", path.display())]
    ContainsStore {
        /// The path given.
        path: PathBuf,
    },
    /// A symlink in the tree has an absolute target.
    #[error("symlink {} has an absolute target ({})", path.display(), target.display())]
    AbsoluteSymlink {
        /// The symlink.
        path: PathBuf,
        /// Its target.
        target: PathBuf,
    },
    /// A symlink's target climbs (`..`) above the root of the tree.
    #[error("symlink {} points outside the plugin tree ({})", path.display(), target.display())]
    EscapingSymlink {
        /// The symlink.
        path: PathBuf,
        /// Its target.
        target: PathBuf,
    },
    /// A symlink's target has `..` after a name. Lexically it stays inside, but the name may
    /// itself be a symlink, and `..` after it would then climb from wherever that one leads.
    #[error(
        "symlink {} has `..` after a name in its target ({}); only leading `..` are allowed, \
         so that no chain of symlinks can leave the plugin tree",
        path.display(),
        target.display()
    )]
    UnnormalizedSymlink {
        /// The symlink.
        path: PathBuf,
        /// Its target.
        target: PathBuf,
    },
    /// A FIFO, socket or device: only regular files, directories and symlinks can be stored.
    #[error(
        "{} is a {kind}; only regular files, directories and symlinks can be stored",
        path.display()
    )]
    UnsupportedFile {
        /// The file.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// A string that is not a store key (52 characters of Nix base32).
    #[error("{key:?} is not a store key (52 characters of Nix base32)")]
    BadKey {
        /// The string.
        key: String,
    },
    /// The key is well-formed but nothing is stored under it.
    #[error("{} is not in the store", path.display())]
    Missing {
        /// Where it would be.
        path: PathBuf,
    },
}

/// Turns an I/O error into a [`StoreError::Io`] at `path`.
pub(super) fn io_at(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}
