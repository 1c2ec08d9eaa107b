//! Copying a plugin tree into the store's staging directory.
//!
//! Only what a NAR can hold is copied: regular files (contents and executable bit; final mode
//! 0o444 or 0o555), directories, and symlinks whose
//! target stays inside the tree (see [`super::link_target`]). Entries named `.git` are
//! skipped at any depth. Anything else is an error naming the source path.

use std::fs::{self, OpenOptions};
use std::io;
use std::path::Path;

use walkdir::WalkDir;

use super::error::{StoreError, io_at};
use super::link_target::{self, LinkProblem};
use super::nar::open_no_follow;
use crate::files::os::{self, special_kind};

/// The name of the entries that are never copied (git metadata, a directory or a file).
const GIT: &str = ".git";

/// Copies the tree under the directory `src` into the existing, empty directory `dst`.
///
/// Directories are created 0o700 so the copy can fill them; [`super::perms::seal`] makes them
/// read-only afterwards.
///
/// The whole tree is checked first ([`check_tree`]: metadata only), so a package that will be
/// refused — one escaping symlink among 60,000 files — is refused before anything is copied.
pub(super) fn copy_tree(src: &Path, dst: &Path) -> Result<(), StoreError> {
    check_tree(src)?;
    for entry in walk(src) {
        let entry = entry?;
        let from = entry.path();
        let rel = from
            .strip_prefix(src)
            .expect("walkdir yields paths under its root");
        let to = dst.join(rel);
        let file_type = entry.file_type();
        if file_type.is_dir() {
            os::create_dir_mode(&to, 0o700).map_err(io_at(&to))?;
        } else if file_type.is_file() {
            copy_file(from, &to)?;
        } else if file_type.is_symlink() {
            copy_symlink(from, rel, &to)?;
        } else {
            return Err(StoreError::UnsupportedFile {
                path: from.to_path_buf(),
                kind: special_kind(file_type),
            });
        }
    }
    Ok(())
}

/// The entries under `src` the store keeps (`.git` skipped at any depth), in a stable order,
/// without the root itself.
fn walk(src: &Path) -> impl Iterator<Item = Result<walkdir::DirEntry, StoreError>> + '_ {
    WalkDir::new(src)
        .follow_links(false)
        .sort_by_file_name()
        .min_depth(1)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || e.file_name() != GIT)
        .map(move |entry| {
            entry.map_err(|e| {
                let path = e.path().unwrap_or(src).to_path_buf();
                StoreError::Io {
                    path,
                    source: e.into(),
                }
            })
        })
}

/// Refuses what [`copy_tree`] would refuse — a symlink leaving the tree, a device, socket or
/// FIFO — reading only metadata and link targets.
fn check_tree(src: &Path) -> Result<(), StoreError> {
    for entry in walk(src) {
        let entry = entry?;
        let file_type = entry.file_type();
        if file_type.is_symlink() {
            let from = entry.path();
            let rel = from
                .strip_prefix(src)
                .expect("walkdir yields paths under its root");
            let target = fs::read_link(from).map_err(io_at(from))?;
            link_target::check(rel, &target)
                .map_err(|problem| link_refusal(from, &target, problem))?;
        } else if !file_type.is_dir() && !file_type.is_file() {
            return Err(StoreError::UnsupportedFile {
                path: entry.path().to_path_buf(),
                kind: special_kind(file_type),
            });
        }
    }
    Ok(())
}

/// The error for a symlink whose target the store does not keep.
fn link_refusal(from: &Path, target: &Path, problem: LinkProblem) -> StoreError {
    let (path, target) = (from.to_path_buf(), target.to_path_buf());
    match problem {
        LinkProblem::Absolute => StoreError::AbsoluteSymlink { path, target },
        LinkProblem::Escapes => StoreError::EscapingSymlink { path, target },
        LinkProblem::DotDotAfterName => StoreError::UnnormalizedSymlink { path, target },
    }
}

/// Copies one regular file with its executable bit, read-only (made durable with the whole
/// tree by [`super::perms::seal`]).
fn copy_file(from: &Path, to: &Path) -> Result<(), StoreError> {
    let mut input = open_no_follow(from).map_err(io_at(from))?;
    let meta = input.metadata().map_err(io_at(from))?;
    if !meta.is_file() {
        return Err(StoreError::UnsupportedFile {
            path: from.to_path_buf(),
            kind: special_kind(meta.file_type()),
        });
    }
    let mode = if os::is_executable(&meta) {
        0o555
    } else {
        0o444
    };
    let mut output = os::create_mode(OpenOptions::new().write(true).create_new(true), 0o600)
        .open(to)
        .map_err(io_at(to))?;
    io::copy(&mut input, &mut output).map_err(io_at(from))?;
    os::set_file_mode(&output, mode).map_err(io_at(to))
}

/// Recreates the symlink at `from` (at `rel` in the tree) if its target stays inside.
fn copy_symlink(from: &Path, rel: &Path, to: &Path) -> Result<(), StoreError> {
    let target = fs::read_link(from).map_err(io_at(from))?;
    link_target::check(rel, &target).map_err(|problem| link_refusal(from, &target, problem))?;
    os::symlink(&target, to).map_err(io_at(to))
}
