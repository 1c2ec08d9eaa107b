//! The Python package that goes into Hermes, `hermes_plugins_generation` (its source is the
//! directory of that name beside this file, embedded here): placed in `exec`'s runtime
//! directory and, by `activate`, in a Hermes installation's site-packages.

use std::io;
use std::path::{Path, PathBuf};

/// The package's import name, and its directory's.
pub const NAME: &str = "hermes_plugins_generation";

/// The package's modules: (file name, contents).
pub const FILES: [(&str, &str); 9] = [
    (
        "__init__.py",
        include_str!("hermes_plugins_generation/__init__.py"),
    ),
    (
        "reader.py",
        include_str!("hermes_plugins_generation/reader.py"),
    ),
    ("hook.py", include_str!("hermes_plugins_generation/hook.py")),
    (
        "hermes.py",
        include_str!("hermes_plugins_generation/hermes.py"),
    ),
    (
        "loader.py",
        include_str!("hermes_plugins_generation/loader.py"),
    ),
    (
        "providers.py",
        include_str!("hermes_plugins_generation/providers.py"),
    ),
    (
        "capabilities.py",
        include_str!("hermes_plugins_generation/capabilities.py"),
    ),
    (
        "routing.py",
        include_str!("hermes_plugins_generation/routing.py"),
    ),
    (
        "listing.py",
        include_str!("hermes_plugins_generation/listing.py"),
    ),
];

/// The source of one module, by file name.
pub fn module(name: &str) -> Option<&'static str> {
    FILES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// How every version of the package's `__init__.py` starts: what marks a directory of that
/// name as ours (one from another hermes-plugins version too).
const MARK: &[u8] = b"\"\"\"hermes-plugins inside Hermes";

/// How the single-module reader of hermes-plugins before the package started
/// (`hermes_plugins_generation.py`): `activate` and `deactivate` remove it.
pub const LEGACY_MARK: &[u8] = b"\"\"\"Reading a hermes-plugins generation";

/// Whether `dir` holds exactly this build's package (extra files such as `__pycache__`
/// aside).
pub fn is_placed(dir: &Path) -> bool {
    FILES
        .iter()
        .all(|(name, text)| std::fs::read(dir.join(name)).is_ok_and(|b| b == text.as_bytes()))
}

/// Whether `dir` is a `hermes_plugins_generation` package some hermes-plugins wrote.
pub fn is_ours(dir: &Path) -> bool {
    !dir.is_symlink() && std::fs::read(dir.join("__init__.py")).is_ok_and(|b| b.starts_with(MARK))
}

/// Writes the package into `parent` as `parent/hermes_plugins_generation/` unless it is there
/// already: staged beside it, then put in place whole ([`crate::files::replace_dir`]), so an
/// interpreter starting meanwhile imports the old package or the new one, never a mix.
/// Returns whether anything was written.
pub fn place(parent: &Path) -> io::Result<bool> {
    let dir = parent.join(NAME);
    if is_placed(&dir) {
        return Ok(false);
    }
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{NAME}.tmp-"))
        .tempdir_in(parent)?;
    for (name, text) in FILES {
        crate::files::write_atomically(&staging.path().join(name), text.as_bytes())?;
    }
    let staged = staging.keep();
    match crate::files::replace_dir(&staged, &dir) {
        Ok(old) => {
            if let Some(old) = old {
                std::fs::remove_dir_all(&old).map_err(|e| at(&old, e))?;
            }
            Ok(true)
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staged);
            Err(e)
        }
    }
}

/// Removes `parent/hermes_plugins_generation/` if it is ours. Returns the directory removed.
pub fn remove(parent: &Path) -> io::Result<Option<PathBuf>> {
    let dir = parent.join(NAME);
    if !is_ours(&dir) {
        return Ok(None);
    }
    std::fs::remove_dir_all(&dir).map_err(|e| at(&dir, e))?;
    Ok(Some(dir))
}

fn at(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_of_the_source_directory_is_embedded() {
        let source = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/agent")
            .join(NAME);
        let mut on_disk: Vec<String> = std::fs::read_dir(&source)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".py"))
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = FILES.iter().map(|(n, _)| n.to_string()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded);
        assert!(FILES[0].1.as_bytes().starts_with(MARK));
    }

    /// Each module stays small enough to read whole (docs/architecture.md).
    #[test]
    fn no_module_is_over_400_lines() {
        for (name, text) in FILES {
            let lines = text.lines().count();
            assert!(lines <= 400, "{name}: {lines} lines (at most 400)");
        }
    }

    #[test]
    fn the_package_is_placed_whole_once_and_removed_only_if_ours() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(place(tmp.path()).unwrap());
        let dir = tmp.path().join(NAME);
        assert!(is_placed(&dir) && is_ours(&dir));
        assert!(!place(tmp.path()).unwrap(), "already there");
        // A damaged copy is replaced whole; nothing is left beside it.
        std::fs::write(dir.join("hook.py"), "broken").unwrap();
        std::fs::write(dir.join("stale.py"), "from an old version").unwrap();
        assert!(place(tmp.path()).unwrap());
        assert!(is_placed(&dir) && !dir.join("stale.py").exists());
        let names: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no staging or old copy left");
        assert_eq!(remove(tmp.path()).unwrap(), Some(dir.clone()));
        // A package of that name that is not ours stays.
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("__init__.py"), "print('mine')\n").unwrap();
        assert_eq!(remove(tmp.path()).unwrap(), None);
        assert!(dir.exists());
    }
}
