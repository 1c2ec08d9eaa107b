//! Content-addressed, read-only plugin trees.
//!
//! The store is a directory (`<HERMES_HOME>/pm/store`) holding one read-only tree per distinct
//! content, named by the Nix base32 of the SHA-256 of the tree's NAR serialisation (the same
//! string `nix hash path --type sha256 --base32` prints). The same tree always lands under the
//! same key, so storing it twice is free and a key in a lock file pins exact contents.
//!
//! [`Store::put`] stages a copy in a `.tmp-*` directory inside the store (same filesystem,
//! so the final step is an atomic rename), hashes the copy rather than the source (what is
//! hashed is what is stored), and leaves nothing behind on failure. `.git` entries are left
//! out; FIFOs, sockets, devices and symlinks leading out of the tree are refused.
//!
//! The store takes no lock of its own: callers serialise [`Store::gc`] with other writers,
//! since it removes every `.tmp-*` staging directory it finds.

mod copy;
mod error;
mod link_target;
pub mod nar;
mod perms;

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub use error::StoreError;

/// Removes a directory tree that may contain read-only store trees (made writable first;
/// symlinks are never followed).
pub fn remove_tree(path: &Path) -> Result<(), StoreError> {
    perms::force_remove(path)
}

use error::io_at;

/// The prefix of staging directories inside the store.
const TMP_PREFIX: &str = ".tmp-";

/// A store of content-addressed, read-only trees under one root directory.
#[derive(Clone, Debug)]
pub struct Store {
    root: PathBuf,
}

/// A tree in the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreEntry {
    /// The NAR SHA-256 in SRI form (`sha256-<base64>`), as lock files record it.
    pub digest: String,
    /// The same digest in Nix base32: the tree's directory name in the store.
    pub key: String,
    /// Where the tree is.
    pub path: PathBuf,
}

impl Store {
    /// Opens the store at `root`, creating the directory (and its parents) if needed.
    pub fn open(root: impl Into<PathBuf>) -> io::Result<Store> {
        let root = root.into();
        fs::create_dir_all(&root)?;
        Ok(Store { root })
    }

    /// The store's root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Copies the directory tree at `src` into the store and returns where it landed.
    ///
    /// See the module documentation for what is copied. If the same content is already
    /// stored, the existing tree is reused. On error nothing is left in the store.
    pub fn put(&self, src: &Path) -> Result<StoreEntry, StoreError> {
        if !fs::metadata(src).map_err(io_at(src))?.is_dir() {
            return Err(StoreError::NotADirectory {
                path: src.to_path_buf(),
            });
        }
        // Copying a tree that holds the store would copy the staging copy into itself.
        let canonical_src = fs::canonicalize(src).map_err(io_at(src))?;
        let canonical_root = fs::canonicalize(&self.root).map_err(io_at(&self.root))?;
        if canonical_root.starts_with(&canonical_src) {
            return Err(StoreError::ContainsStore {
                path: src.to_path_buf(),
            });
        }
        let staging = Staging::new(&self.root)?;
        copy::copy_tree(src, &staging.path)?;
        perms::seal(&staging.path)?;
        let digest = nar::nar_sha256(&staging.path).map_err(io_at(&staging.path))?;
        let key = nar::nix_base32(&digest);
        let path = self.path_of(&key);
        if fs::symlink_metadata(&path).is_err() {
            match fs::rename(&staging.path, &path) {
                Ok(()) => {
                    staging.disarm();
                    crate::files::sync_dir(&self.root).map_err(io_at(&self.root))?;
                }
                // Someone stored the same content meanwhile; the staging copy goes.
                Err(_) if path.is_dir() => {}
                Err(e) => return Err(io_at(&path)(e)),
            }
        }
        Ok(StoreEntry {
            digest: nar::sri(&digest),
            key,
            path,
        })
    }

    /// Moves a tree made by [`stage_copy`] into the store: sealed read-only, hashed, and
    /// renamed into place (or dropped when the same content is already stored). `staged` must
    /// be on the store's file system (a scratch directory under `pm/`); otherwise it is
    /// copied with [`Store::put`]. On error nothing is left in the store.
    pub fn put_staged(&self, staged: &Path) -> Result<StoreEntry, StoreError> {
        perms::seal(staged)?;
        let digest = nar::nar_sha256(staged).map_err(io_at(staged))?;
        let key = nar::nix_base32(&digest);
        let path = self.path_of(&key);
        if fs::symlink_metadata(&path).is_err() {
            match fs::rename(staged, &path) {
                Ok(()) => crate::files::sync_dir(&self.root).map_err(io_at(&self.root))?,
                Err(e) if crate::files::os::is_cross_device(&e) => return self.put(staged),
                Err(_) if path.is_dir() => perms::force_remove(staged)?,
                Err(e) => return Err(io_at(&path)(e)),
            }
        } else {
            perms::force_remove(staged)?;
        }
        Ok(StoreEntry {
            digest: nar::sri(&digest),
            key,
            path,
        })
    }

    /// Where the tree with `key` is (or would be). Only meaningful for a valid key (see
    /// [`Store::is_key`]); [`Store::contains`] and [`Store::verify`] check that.
    pub fn path_of(&self, key: &str) -> PathBuf {
        self.root.join(key)
    }

    /// The store key for an SRI `sha256-<base64>` digest, or `None` if it is not one.
    pub fn key_from_sri(sri: &str) -> Option<String> {
        nar::parse_sri(sri).map(|digest| nar::nix_base32(&digest))
    }

    /// Whether `key` has the shape of a store key (52 characters of Nix base32).
    pub fn is_key(key: &str) -> bool {
        nar::is_nix_base32_sha256(key)
    }

    /// Whether a tree with `key` is stored.
    pub fn contains(&self, key: &str) -> bool {
        Self::is_key(key) && self.path_of(key).is_dir()
    }

    /// The keys of every stored tree, sorted (staging directories and other names are not
    /// keys and are left out).
    pub fn list(&self) -> io::Result<Vec<String>> {
        let mut keys = Vec::new();
        for entry in fs::read_dir(&self.root)? {
            let entry = entry?;
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if Self::is_key(&name) && entry.file_type()?.is_dir() {
                keys.push(name);
            }
        }
        keys.sort();
        Ok(keys)
    }

    /// Recomputes the NAR hash of the tree with `key` and tells whether it still matches.
    pub fn verify(&self, key: &str) -> Result<bool, StoreError> {
        if !Self::is_key(key) {
            return Err(StoreError::BadKey {
                key: key.to_string(),
            });
        }
        let path = self.path_of(key);
        if !path.is_dir() {
            return Err(StoreError::Missing { path });
        }
        let digest = nar::nar_sha256(&path).map_err(io_at(&path))?;
        Ok(nar::nix_base32(&digest) == key)
    }

    /// Removes every stored tree whose key is not in `keep`, and every `.tmp-*` staging
    /// directory. Returns the removed keys, sorted. Names that are neither are left alone.
    pub fn gc(&self, keep: &BTreeSet<String>) -> Result<Vec<String>, StoreError> {
        let mut removed = Vec::new();
        let entries = fs::read_dir(&self.root).map_err(io_at(&self.root))?;
        for entry in entries {
            let entry = entry.map_err(io_at(&self.root))?;
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if name.starts_with(TMP_PREFIX) {
                perms::force_remove(&entry.path())?;
            } else if Self::is_key(&name) && !keep.contains(&name) {
                perms::force_remove(&entry.path())?;
                removed.push(name);
            }
        }
        removed.sort();
        Ok(removed)
    }
}

/// Copies the tree at `src` into `dst` (which must not exist) exactly as [`Store::put`]
/// would store it — no `.git`, only symlinks that stay inside, no special files — so it can
/// be validated outside the store first and moved in with [`Store::put_staged`].
pub fn stage_copy(src: &Path, dst: &Path) -> Result<(), StoreError> {
    if !fs::metadata(src).map_err(io_at(src))?.is_dir() {
        return Err(StoreError::NotADirectory {
            path: src.to_path_buf(),
        });
    }
    crate::files::os::create_dir_mode(dst, 0o700).map_err(io_at(dst))?;
    copy::copy_tree(src, dst)
}

/// A `.tmp-*` staging directory in the store, removed on drop unless disarmed.
struct Staging {
    /// The directory.
    path: PathBuf,
    /// Whether drop removes it.
    armed: bool,
}

impl Staging {
    /// Creates a fresh staging directory (0o700) in `root`.
    fn new(root: &Path) -> Result<Staging, StoreError> {
        let dir = tempfile::Builder::new()
            .prefix(TMP_PREFIX)
            .tempdir_in(root)
            .map_err(io_at(root))?;
        Ok(Staging {
            path: dir.keep(),
            armed: true,
        })
    }

    /// Keeps the directory (it has been renamed into place).
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if self.armed
            && let Err(e) = perms::force_remove(&self.path)
        {
            tracing::warn!("could not remove the staging directory: {e}");
        }
    }
}

#[cfg(all(test, unix))]
mod tests;
