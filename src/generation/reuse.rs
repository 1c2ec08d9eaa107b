//! Reusing the current generation's virtualenv for the next one when its lock is the same
//! (a grant, a selection or a `requires_env` change): the venv is re-created by hard links
//! — files shared, directories and symlinks new — instead of created and installed again,
//! so such a change neither resolves nor installs, and needs no network.
//!
//! Sharing files between generations is safe because generations are immutable once
//! published: nothing writes into an installed file in place (Python writes a new `.pyc`
//! through a temporary file and a rename, which replaces the link in one venv only), and a
//! collected generation's links just drop a count. The venv is relocatable (uv's
//! `--relocatable`), so no path inside it names the generation it sits in. Where hard links
//! cannot be made (another file system, a file system without them), files are copied.

use std::path::{Path, PathBuf};

use super::doc::GenerationDoc;
use crate::resolve::lock::Lock;

/// A previous generation whose venv the next one can take as it is.
#[derive(Debug, Clone)]
pub struct ReusableVenv {
    /// The previous generation's directory.
    pub generation: PathBuf,
    /// Its document (the venv's paths, relative to the generation, come from it).
    pub doc: GenerationDoc,
}

/// How the venv was carried over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Carried {
    /// Files hard-linked.
    pub linked: u64,
    /// Files copied (no hard link possible).
    pub copied: u64,
    /// Symlinks re-created.
    pub symlinks: u64,
}

/// `previous` (the current generation, in `generation_dir`) when its venv can serve a
/// generation installing `lock` with the base interpreter `python`: the same packages (name,
/// version, file and hash), the same interpreter version and base, and the venv present with
/// the same set of installed distributions (`*.dist-info`) as the lock — a cheap check that the
/// directory is what the document says, not a re-verification of every file (`verify` does
/// that).
pub fn reusable(
    generation_dir: &Path,
    previous: &GenerationDoc,
    lock: &Lock,
    python: &Path,
) -> Option<ReusableVenv> {
    if previous.lock.packages != lock.packages
        || previous.lock.python != lock.python
        || previous.python.venv.is_empty()
        || !same_interpreter(python, Path::new(&previous.python.base))
    {
        return None;
    }
    let site_packages = generation_dir.join(&previous.python.site_packages);
    let mut found: Vec<(String, String)> = std::fs::read_dir(&site_packages)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e
                .file_name()
                .to_str()?
                .strip_suffix(".dist-info")?
                .to_string();
            let (dist, version) = name.rsplit_once('-')?;
            Some((normalize(dist), version.to_string()))
        })
        .collect();
    found.sort();
    let mut wanted: Vec<(String, String)> = lock
        .packages
        .iter()
        .map(|p| (normalize(&p.name), p.version.clone()))
        .collect();
    wanted.sort();
    (found == wanted).then(|| ReusableVenv {
        generation: generation_dir.to_path_buf(),
        doc: previous.clone(),
    })
}

/// Whether the interpreter the context names (a path: the CLI finds a bare name on `PATH`)
/// is the venv's base: both resolved to the real file. Unknown (not there, a wrapper script
/// that is not the interpreter) is "no", and the venv is built afresh.
fn same_interpreter(asked: &Path, base: &Path) -> bool {
    match (std::fs::canonicalize(asked), std::fs::canonicalize(base)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// A distribution name as PEP 503 compares it (`Foo_Bar.baz` → `foo-bar-baz`).
fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        let c = if matches!(c, '_' | '.') { '-' } else { c };
        if c == '-' && out.ends_with('-') {
            continue;
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Re-creates the tree `from` at `to` (which must not exist): directories with their
/// permissions, symlinks as symlinks (never followed), regular files hard-linked, or copied
/// where a link cannot be made. Anything else (a socket, a device) is an error: a venv has
/// none.
pub fn link_tree(from: &Path, to: &Path) -> std::io::Result<Carried> {
    use std::os::unix::fs::PermissionsExt;
    let mut carried = Carried::default();
    let mut link_works = true;
    for entry in walkdir::WalkDir::new(from).follow_links(false) {
        let entry = entry.map_err(std::io::Error::other)?;
        let rel = entry
            .path()
            .strip_prefix(from)
            .map_err(std::io::Error::other)?;
        let target = to.join(rel);
        let kind = entry.file_type();
        if kind.is_dir() {
            std::fs::create_dir(&target)?;
            let mode = entry
                .metadata()
                .map_err(std::io::Error::other)?
                .permissions();
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode.mode()))?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
            carried.symlinks += 1;
        } else if kind.is_file() {
            if link_works {
                match std::fs::hard_link(entry.path(), &target) {
                    Ok(()) => {
                        carried.linked += 1;
                        continue;
                    }
                    Err(e) if link_unsupported(&e) => link_works = false,
                    Err(e) => return Err(e),
                }
            }
            std::fs::copy(entry.path(), &target)?;
            carried.copied += 1;
        } else {
            return Err(std::io::Error::other(format!(
                "{} is neither a file, a directory nor a symlink",
                entry.path().display()
            )));
        }
    }
    Ok(carried)
}

/// Errors that mean "this file system will not link these", as opposed to a real failure.
fn link_unsupported(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EXDEV) | Some(libc::EPERM) | Some(libc::EMLINK) | Some(libc::ENOTSUP)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    #[test]
    fn link_tree_shares_files_and_recreates_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let from = tmp.path().join("venv");
        std::fs::create_dir_all(from.join("lib/site/pkg")).unwrap();
        std::fs::create_dir_all(from.join("bin")).unwrap();
        std::fs::write(from.join("lib/site/pkg/__init__.py"), "x = 1\n").unwrap();
        std::fs::write(from.join("bin/tool"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(
            from.join("bin/tool"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        std::fs::set_permissions(
            from.join("lib/site"),
            std::fs::Permissions::from_mode(0o750),
        )
        .unwrap();
        std::os::unix::fs::symlink("/usr/bin/python3", from.join("bin/python")).unwrap();
        let to = tmp.path().join("new/venv");
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        let carried = link_tree(&from, &to).unwrap();
        assert_eq!(
            carried,
            Carried {
                linked: 2,
                copied: 0,
                symlinks: 1
            }
        );
        let a = std::fs::metadata(from.join("lib/site/pkg/__init__.py")).unwrap();
        let b = std::fs::metadata(to.join("lib/site/pkg/__init__.py")).unwrap();
        assert_eq!(a.ino(), b.ino(), "the file is shared");
        assert_eq!(
            std::fs::read_link(to.join("bin/python")).unwrap(),
            Path::new("/usr/bin/python3")
        );
        assert_eq!(
            std::fs::metadata(to.join("lib/site"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o750
        );
        assert_eq!(
            std::fs::metadata(to.join("bin/tool"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o755
        );
        // The target must not exist: nothing is merged into an existing tree.
        assert!(link_tree(&from, &to).is_err());
    }

    #[test]
    fn names_compare_as_pep_503_says() {
        assert_eq!(normalize("Foo_Bar.baz"), "foo-bar-baz");
        assert_eq!(normalize("a--b"), "a-b");
    }
}
