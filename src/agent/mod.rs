//! The agent contract: how an unmodified Hermes Agent runs the current generation
//! (`hermes-plugins exec`), and the reference reader of the generation format.
//!
//! `exec` leases the current generation ([`crate::generation::lease`]), writes the Python
//! runtime (a `sitecustomize` and the stdlib-only package [`package`], embedded here) to
//! `pm/runtime/<digest>/`, and starts the command with that directory on `PYTHONPATH`. Its
//! `sitecustomize` hands the process to `hermes_plugins_generation.install()`, which waits
//! until Hermes imports its plugin loader
//! and then makes it discover `generations/<N>/plugins` instead of `<home>/plugins`, enable
//! exactly the generation's selection for the profile, append the generation's site-packages
//! to `sys.path`, and honour only the capabilities the generation records as granted. See
//! docs/integration.md.

pub mod activate;
pub mod package;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::generation::lease::Lease;
use crate::home::Layout;

/// The `sitecustomize` that `exec` puts on `PYTHONPATH`.
pub const SITECUSTOMIZE: &str = include_str!("sitecustomize.py");

/// Asks an agent's interpreter (`python -I`) which of the top-level module `names` it could
/// not import with the generation's `site_packages` appended to its path, as `exec` appends
/// them: `importlib.util.find_spec`, which finds a module without running it. Returns the
/// missing names, in the order given.
pub fn unimportable(
    python: &Path,
    site_packages: &Path,
    names: &[String],
) -> Result<Vec<String>, String> {
    const SCRIPT: &str = "import importlib.util, json, sys\nsys.path.append(sys.argv[1])\nmissing = []\nfor name in sys.argv[2:]:\n    try:\n        found = importlib.util.find_spec(name) is not None\n    except (ImportError, ValueError):\n        found = False\n    if not found:\n        missing.append(name)\nprint(json.dumps(missing))\n";
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let mut args: Vec<&std::ffi::OsStr> = vec![site_packages.as_os_str()];
    args.extend(names.iter().map(|n| std::ffi::OsStr::new(n.as_str())));
    crate::interpreter::ask(python, SCRIPT, &args).map_err(|e| format!("{}: {e}", python.display()))
}

/// The runtime's files: (path under the runtime directory, contents).
fn runtime_files() -> Vec<(String, &'static str)> {
    let mut files = vec![("sitecustomize.py".to_string(), SITECUSTOMIZE)];
    files.extend(
        package::FILES
            .iter()
            .map(|(name, text)| (format!("{}/{name}", package::NAME), *text)),
    );
    files
}

/// Writes the runtime to `pm/runtime/<digest>/` unless it is there already (a directory per
/// content, written in a temporary directory and renamed, so a running agent's files never
/// change). Returns the directory.
pub fn runtime_dir(layout: &Layout) -> std::io::Result<PathBuf> {
    let files = runtime_files();
    let mut hash = Sha256::new();
    for (name, text) in &files {
        hash.update(name.as_bytes());
        hash.update([0]);
        hash.update(text.as_bytes());
        hash.update([0]);
    }
    let digest = crate::hash::hex(&hash.finalize()[..8]);
    let root = layout.runtime();
    let dir = root.join(&digest);
    let intact = |dir: &Path| {
        files
            .iter()
            .all(|(name, text)| std::fs::read(dir.join(name)).is_ok_and(|b| b == text.as_bytes()))
    };
    if intact(&dir) {
        return Ok(dir);
    }
    std::fs::create_dir_all(&root)?;
    let staging = tempfile::Builder::new().prefix(".tmp-").tempdir_in(&root)?;
    for (name, text) in &files {
        crate::files::write_atomically(&staging.path().join(name), text.as_bytes())?;
    }
    let staged = staging.keep();
    match std::fs::rename(&staged, &dir) {
        Ok(()) => Ok(dir),
        // Another process wrote the same directory first; or a damaged one is in the way.
        Err(_) if dir.is_dir() => {
            let _ = std::fs::remove_dir_all(&staged);
            for (name, text) in &files {
                if std::fs::read(dir.join(name)).ok().as_deref() != Some(text.as_bytes()) {
                    crate::files::write_atomically(&dir.join(name), text.as_bytes())?;
                }
            }
            Ok(dir)
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staged);
            Err(e)
        }
    }
}

/// The variable naming the hermes-plugins binary that serves `hermes plugins …` in a process
/// `exec` prepared (an activated one has it on its `.pth` line).
pub const BIN_VAR: &str = "HERMES_PLUGINS_BIN";

/// The environment `exec` gives the command: the Hermes home of the profile, the generation
/// and its lease descriptor, and the runtime first on `PYTHONPATH` (before `inherited`, the
/// caller's `PYTHONPATH`).
pub fn command_env(
    layout: &Layout,
    profile: &str,
    lease: Option<(&Lease, Option<i32>)>,
    runtime: &Path,
    inherited: Option<OsString>,
) -> Vec<(&'static str, OsString)> {
    let agent_home = layout.profile_home(profile);
    let mut python_path = OsString::from(runtime);
    if let Some(old) = inherited.filter(|v| !v.is_empty()) {
        // The platform's separator (`;` on Windows, where `:` is part of a drive letter).
        python_path.push(if cfg!(windows) { ";" } else { ":" });
        python_path.push(old);
    }
    let mut env = vec![
        ("HERMES_HOME", agent_home.clone().into_os_string()),
        ("HERMES_PLUGINS_AGENT_HOME", agent_home.into_os_string()),
        ("HERMES_PLUGINS_PROFILE", OsString::from(profile)),
        (
            "HERMES_PLUGINS_ENV_FILE",
            layout.env_file(profile).into_os_string(),
        ),
        ("PYTHONPATH", python_path),
    ];
    match lease {
        Some((lease, fd)) => {
            env.push((
                "HERMES_PLUGINS_GENERATION",
                lease.dir().as_os_str().to_owned(),
            ));
            if let Some(fd) = fd {
                env.push(("HERMES_PLUGINS_LEASE_FD", OsString::from(fd.to_string())));
            }
        }
        None => env.push(("HERMES_PLUGINS_GENERATION", OsString::new())),
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_is_written_once_per_content() {
        let tmp = tempfile::tempdir().unwrap();
        let layout = Layout::new(tmp.path());
        let dir = runtime_dir(&layout).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("sitecustomize.py")).unwrap(),
            SITECUSTOMIZE
        );
        assert_eq!(runtime_dir(&layout).unwrap(), dir);
        // A damaged copy is mended in place.
        let hook = dir.join(package::NAME).join("hook.py");
        std::fs::write(&hook, "broken").unwrap();
        assert_eq!(runtime_dir(&layout).unwrap(), dir);
        assert_eq!(
            std::fs::read_to_string(&hook).unwrap(),
            package::module("hook.py").unwrap()
        );
        let entries: Vec<_> = std::fs::read_dir(layout.runtime()).unwrap().collect();
        assert_eq!(entries.len(), 1, "no staging left behind");
    }
}
