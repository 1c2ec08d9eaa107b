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

/// The interpreter a build is asked to use.
#[derive(Debug, Clone, Copy)]
pub struct Python<'a> {
    /// As the user or the settings name it (`--python`: a path, possibly a wrapper such as a
    /// pyenv shim, which is not the file the venv was made from).
    pub asked: &'a Path,
    /// Whether it was asked for exactly as when the previous generation was resolved (equal
    /// resolution digests, which cover `--python`): then the venv's recorded base is taken as
    /// the interpreter, as the reused lock already is — only that it still exists is checked.
    pub as_before: bool,
}

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

/// `previous` (the current generation, in `generation_dir`) if its venv can serve a
/// generation installing `lock` with the interpreter `python`: the same packages (name,
/// version, file and hash), the same interpreter version and base (resolved to the real file,
/// or asked for as before), and the venv present with
/// the same set of installed distributions (`*.dist-info`, read as `verify` reads them) as the lock — a cheap check that the
/// directory is what the document says, not a re-verification of every file (`verify` does
/// that).
pub fn reusable(
    generation_dir: &Path,
    previous: &GenerationDoc,
    lock: &Lock,
    python: &Python<'_>,
) -> Result<ReusableVenv, &'static str> {
    if previous.lock.packages != lock.packages || previous.lock.python != lock.python {
        return Err("the lock changed");
    }
    if previous.python.venv.is_empty() {
        return Err("the current generation has no venv");
    }
    let base = Path::new(&previous.python.base);
    let same = if python.as_before {
        base.is_file()
    } else {
        same_interpreter(python.asked, base)
    };
    if !same {
        return Err("the base interpreter is another one");
    }
    let site_packages = generation_dir.join(&previous.python.site_packages);
    let found: std::collections::BTreeSet<_> = super::verify::installed(&site_packages)
        .map_err(|_| "its site-packages cannot be read")?
        .into_iter()
        .map(|(_, distribution)| distribution)
        .collect();
    if found != super::verify::locked(lock) {
        return Err("its venv does not hold exactly the lock's distributions");
    }
    Ok(ReusableVenv {
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

/// Re-creates the tree `from` at `to` (which must not exist): directories with their
/// permissions, symlinks as symlinks (never followed), regular files hard-linked, or copied
/// where a link cannot be made. Anything else (a socket, a device) is an error: a venv has
/// none.
pub fn link_tree(from: &Path, to: &Path) -> std::io::Result<Carried> {
    use crate::files::os;
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
            let meta = entry.metadata().map_err(std::io::Error::other)?;
            os::set_mode(&target, os::mode(&meta))?;
        } else if kind.is_symlink() {
            os::symlink(&std::fs::read_link(entry.path())?, &target)?;
            carried.symlinks += 1;
        } else if kind.is_file() {
            if link_works {
                match std::fs::hard_link(entry.path(), &target) {
                    Ok(()) => {
                        carried.linked += 1;
                        continue;
                    }
                    Err(e) if os::cannot_hard_link(&e) => link_works = false,
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    /// A generation directory holding the seed document of `fuzz/`, its base interpreter a
    /// file of the test, and a venv whose `site-packages` has the given `*.dist-info`.
    fn generation(tmp: &Path, dist_infos: &[&str]) -> (PathBuf, GenerationDoc, PathBuf) {
        let dir = tmp.join("generations/1");
        let python = tmp.join("python3.11");
        std::fs::write(&python, "").unwrap();
        let seed = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/state_docs");
        let mut doc = GenerationDoc::read(&seed).unwrap();
        doc.python.base = python.display().to_string();
        let site = dir.join(&doc.python.site_packages);
        std::fs::create_dir_all(&site).unwrap();
        for info in dist_infos {
            std::fs::create_dir(site.join(info)).unwrap();
        }
        (dir, doc, python)
    }

    /// An interpreter asked for now, not as before.
    fn asked(path: &Path) -> Python<'_> {
        Python {
            asked: path,
            as_before: false,
        }
    }

    #[test]
    fn only_the_same_lock_interpreter_and_venv_are_reused() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, doc, python) = generation(tmp.path(), &["hermes_demo_forecast-1.0.0.dist-info"]);
        let lock = doc.lock.clone();
        assert!(reusable(&dir, &doc, &lock, &asked(&python)).is_ok());
        // Another version in the new lock.
        let mut moved = lock.clone();
        moved.packages[0].version = "1.0.1".into();
        assert!(reusable(&dir, &doc, &moved, &asked(&python)).is_err());
        // Another interpreter asked for.
        let other = tmp.path().join("python3.12");
        std::fs::write(&other, "").unwrap();
        assert!(reusable(&dir, &doc, &lock, &asked(&other)).is_err());
        // A link to the same interpreter is the same interpreter.
        let link = tmp.path().join("python3");
        std::os::unix::fs::symlink(&python, &link).unwrap();
        assert!(reusable(&dir, &doc, &lock, &asked(&link)).is_ok());
        // A wrapper (a pyenv shim) asked for as before: the recorded base is taken, while it
        // exists.
        let shim = tmp.path().join("shim");
        std::fs::write(&shim, "#!/bin/sh\n").unwrap();
        assert!(reusable(&dir, &doc, &lock, &asked(&shim)).is_err());
        let as_before = Python {
            asked: &shim,
            as_before: true,
        };
        assert!(reusable(&dir, &doc, &lock, &as_before).is_ok());
        std::fs::remove_file(&python).unwrap();
        assert!(reusable(&dir, &doc, &lock, &as_before).is_err());
        // The venv does not hold what the document says: an extra or a missing distribution.
        let tmp = tempfile::tempdir().unwrap();
        let (dir, doc, python) = generation(
            tmp.path(),
            &[
                "hermes_demo_forecast-1.0.0.dist-info",
                "six-1.16.0.dist-info",
            ],
        );
        assert!(reusable(&dir, &doc, &doc.lock.clone(), &asked(&python)).is_err());
        let tmp = tempfile::tempdir().unwrap();
        let (dir, doc, python) = generation(tmp.path(), &[]);
        assert!(reusable(&dir, &doc, &doc.lock.clone(), &asked(&python)).is_err());
    }

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
}
