//! `activate` / `deactivate`: the hook that makes every process of one Hermes installation
//! read the current generation by itself, without `exec`.
//!
//! Two entries go into the interpreter's site-packages (`purelib`): the package
//! `hermes_plugins_generation/` (the one `exec` puts on `PYTHONPATH`, [`super::package`]) and
//! a `.pth` file whose one line calls its `activate()` at interpreter start. That call only inserts an
//! import hook: which home the process uses (`HERMES_HOME`, else `~/.hermes`) and whether it
//! has a published generation are decided when Hermes first imports one of its plugin
//! loaders; a home with nothing published leaves Hermes exactly as it is. Under `exec` the
//! `PYTHONPATH` copy is imported first and `activate()` defers to it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The `.pth` file's name.
pub const PTH: &str = "hermes_plugins_activate.pth";
/// The single-module reader hermes-plugins wrote before the package (removed when found).
const LEGACY_MODULE: &str = "hermes_plugins_generation.py";
/// How the `.pth` line starts (site runs lines that start with `import`); the rest names the
/// binary that serves `hermes plugins …` in that installation.
const PTH_START: &str = "import hermes_plugins_generation; hermes_plugins_generation.activate(";

/// The `.pth` line for `binary`: `…activate(binary="<path>")`, the path as a JSON string
/// (a valid Python string literal for any UTF-8 path).
pub fn pth_line(binary: &Path) -> Result<String, ActivateError> {
    let text = binary.to_str().ok_or_else(|| {
        ActivateError::Unsupported(format!(
            "the hermes-plugins binary's path is not UTF-8 ({}): the hook cannot name it",
            binary.display()
        ))
    })?;
    let quoted = serde_json::to_string(text).expect("a string serializes");
    Ok(format!("{PTH_START}binary={quoted})\n"))
}

fn is_our_pth(text: &[u8]) -> bool {
    text.starts_with(PTH_START.as_bytes())
        && text.ends_with(b")\n")
        && !text[..text.len() - 1].contains(&b'\n')
}

/// The oldest Hermes release whose loaders the hook patches (docs/integration.md).
const OLDEST: (u64, u64) = (0, 13);

/// An interpreter as `activate` sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// The interpreter asked.
    pub python: PathBuf,
    /// Its site-packages (`sysconfig` `purelib`).
    pub site_packages: PathBuf,
    /// The `hermes-agent` version installed there, if any.
    pub hermes: Option<String>,
}

/// One file `activate`/`deactivate` wrote, left or removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileChange {
    /// The file.
    pub path: PathBuf,
    /// `written`, `unchanged` or `removed`.
    pub change: &'static str,
}

/// Why an interpreter cannot be activated.
#[derive(Debug, thiserror::Error)]
pub enum ActivateError {
    /// It could not be asked.
    #[error("{python}: {message}")]
    Interpreter {
        /// The interpreter.
        python: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// It has no Hermes, or one the hook does not support.
    #[error("{0}")]
    Unsupported(String),
    /// Its site-packages cannot take the hook.
    #[error("{0}")]
    ReadOnly(String),
    /// Writing or removing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// After [`crate::interpreter::HERMES_VERSION`]: site-packages and the Hermes release.
const ASK: &str = "import json, sysconfig\nfound = hermes_version()\nprint(json.dumps({'site_packages': sysconfig.get_paths()['purelib'], 'hermes': found and found['version']}))\n";

/// Asks `python` (isolated, `-I`) for its site-packages and the Hermes release it runs (as
/// Hermes reports itself: the install stamp where the distribution says `0.0.0`).
pub fn inspect(python: &Path) -> Result<Target, ActivateError> {
    let failed = |message: String| ActivateError::Interpreter {
        python: python.to_path_buf(),
        message,
    };
    #[derive(Deserialize)]
    struct Answer {
        site_packages: PathBuf,
        hermes: Option<String>,
    }
    let answer: Answer = crate::interpreter::ask(
        python,
        &format!("{}\n{ASK}", crate::interpreter::HERMES_VERSION),
        &[],
    )
    .map_err(failed)?;
    Ok(Target {
        python: python.to_path_buf(),
        site_packages: answer.site_packages,
        hermes: answer.hermes,
    })
}

/// Refuses what the hook cannot serve: no Hermes, a Hermes older than 0.13 (no loader the hook
/// knows), a source install that reports no release, and a site-packages in the Nix store
/// (read-only by design: NixOS takes the module route). Every release from 0.13 on is served:
/// the reader patches what each has, and stops with an error naming the function it misses
/// where a Hermes moved one. A release newer than every one this build knows (run or read:
/// `known::api`) is served with the warning returned: its loaders were neither run nor read.
pub fn check(target: &Target) -> Result<Option<String>, ActivateError> {
    let Some(version) = &target.hermes else {
        return Err(ActivateError::Unsupported(format!(
            "{} has no hermes-agent installed: activate the interpreter Hermes runs with (--python)",
            target.python.display()
        )));
    };
    let latest = crate::known::api::latest_release().version.clone();
    let series = |v: &str| -> Option<(u64, u64)> {
        let mut parts = v.split('.').map(|p| {
            p.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse::<u64>()
                .ok()
        });
        Some((parts.next()??, parts.next()??))
    };
    let oldest = format!("0.{}.0", OLDEST.1);
    let warning = match (series(version), series(&latest)) {
        (Some((0, 0)), _) => {
            return Err(ActivateError::Unsupported(format!(
                "Hermes at {} reports no release ({version}: a source install with neither its install stamp, install-stamp.json, nor release tags in its checkout), so which loaders it has is not known: reinstall it with Hermes's installer, which writes the stamp",
                target.python.display(),
            )));
        }
        (Some(v), _) if v < OLDEST => {
            return Err(ActivateError::Unsupported(format!(
                "Hermes {version} at {} is older than {oldest}, the first release whose plugin loaders the hook serves: upgrade Hermes",
                target.python.display(),
            )));
        }
        (Some(v), Some(newest)) if v <= newest => None,
        (Some(_), _) => Some(format!(
            "Hermes {version} is newer than every release this hermes-plugins knows ({oldest} – {latest}, docs/integration.md): the hook patches the plugin loaders it finds, and stops Hermes with an error naming any it does not; `hermes-plugins deactivate` undoes it"
        )),
        (None, _) => {
            return Err(ActivateError::Unsupported(format!(
                "Hermes at {} reports the version `{version}`, which names no release: which plugin loaders it has is not known",
                target.python.display(),
            )));
        }
    };
    if target.site_packages.starts_with("/nix/store") {
        return Err(ActivateError::ReadOnly(format!(
            "{} is in the Nix store, which is read-only: on NixOS give the plugins to the hermes-agent module instead (`hermes-plugins nix expr`, docs/nix.md)",
            target.site_packages.display()
        )));
    }
    Ok(warning)
}

/// Writes the hook naming `binary` as the one serving `hermes plugins …` (idempotent: what is
/// already as it should be is left alone; a hook naming another binary is rewritten). The
/// package goes first and the `.pth` line last, so no interpreter runs a line whose package
/// is missing; the single-module reader of earlier versions is removed.
pub fn activate(target: &Target, binary: &Path) -> Result<Vec<FileChange>, ActivateError> {
    let line = pth_line(binary)?;
    let site = &target.site_packages;
    let failed = |path: PathBuf| {
        move |source: std::io::Error| {
            if source.kind() == std::io::ErrorKind::PermissionDenied
                || crate::files::os::is_read_only_file_system(&source)
            {
                ActivateError::ReadOnly(format!(
                    "{} cannot be written ({source}): activate as the user who installed Hermes, or use `hermes-plugins exec`",
                    site.display()
                ))
            } else {
                ActivateError::Io { path, source }
            }
        }
    };
    let mut changes = Vec::new();
    let package = site.join(super::package::NAME);
    let written = super::package::place(site).map_err(failed(package.clone()))?;
    changes.push(FileChange {
        path: package,
        change: if written { "written" } else { "unchanged" },
    });
    let pth = site.join(PTH);
    let same = std::fs::read(&pth).is_ok_and(|b| b == line.as_bytes());
    if !same {
        crate::files::write_atomically(&pth, line.as_bytes()).map_err(failed(pth.clone()))?;
    }
    changes.push(FileChange {
        path: pth,
        change: if same { "unchanged" } else { "written" },
    });
    changes.extend(remove_legacy(site)?);
    Ok(changes)
}

/// Removes the hook: the `.pth` line first (from then on no process loads it), then the
/// package — only what is ours (a file or package of that name with other contents is left).
pub fn deactivate(target: &Target) -> Result<Vec<FileChange>, ActivateError> {
    let site = &target.site_packages;
    let mut changes = Vec::new();
    let pth = site.join(PTH);
    // A `.pth` line naming another binary is ours too.
    if std::fs::read(&pth).is_ok_and(|text| is_our_pth(&text)) {
        std::fs::remove_file(&pth).map_err(|source| ActivateError::Io {
            path: pth.clone(),
            source,
        })?;
        changes.push(FileChange {
            path: pth,
            change: "removed",
        });
    }
    let removed = super::package::remove(site).map_err(|source| ActivateError::Io {
        path: site.join(super::package::NAME),
        source,
    })?;
    changes.extend(removed.map(|path| FileChange {
        path,
        change: "removed",
    }));
    changes.extend(remove_legacy(site)?);
    Ok(changes)
}

/// Removes the single-module reader an earlier hermes-plugins wrote, if there (its docstring
/// says it is ours).
fn remove_legacy(site: &Path) -> Result<Option<FileChange>, ActivateError> {
    let path = site.join(LEGACY_MODULE);
    let ours = std::fs::read(&path).is_ok_and(|b| b.starts_with(super::package::LEGACY_MARK));
    if !ours {
        return Ok(None);
    }
    std::fs::remove_file(&path).map_err(|source| ActivateError::Io {
        path: path.clone(),
        source,
    })?;
    Ok(Some(FileChange {
        path,
        change: "removed",
    }))
}

/// Whether the hook is in `site_packages` (its `.pth` line is).
pub fn is_active(site_packages: &Path) -> bool {
    std::fs::read(site_packages.join(PTH)).is_ok_and(|b| is_our_pth(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(version: Option<&str>, site: &str) -> Target {
        Target {
            python: PathBuf::from("/opt/hermes/bin/python"),
            site_packages: PathBuf::from(site),
            hermes: version.map(str::to_string),
        }
    }

    #[test]
    fn versions_and_the_nix_store_are_refused_by_name() {
        let site = "/opt/hermes/lib/python3.11/site-packages";
        assert!(check(&target(Some("0.19.0"), site)).is_ok());
        assert!(check(&target(Some("0.13.0"), site)).is_ok());
        let old = check(&target(Some("0.12.4"), site))
            .unwrap_err()
            .to_string();
        assert!(old.contains("Hermes 0.12.4"), "{old}");
        let newer = check(&target(Some("0.99.0"), site)).unwrap().unwrap();
        assert!(newer.contains("Hermes 0.99.0 is newer"), "{newer}");
        assert_eq!(check(&target(Some("0.19.0"), site)).unwrap(), None);
        let nonsense = check(&target(Some("unknown"), site))
            .unwrap_err()
            .to_string();
        assert!(nonsense.contains("`unknown`"), "{nonsense}");
        // Releases after 0.19 that were run (0.22.2) or read are served.
        assert!(check(&target(Some("0.22.2"), site)).is_ok());
        let stampless = check(&target(Some("0.0.0"), site)).unwrap_err().to_string();
        assert!(stampless.contains("install-stamp.json"), "{stampless}");
        let none = check(&target(None, site)).unwrap_err().to_string();
        assert!(none.contains("no hermes-agent"), "{none}");
        let nix = check(&target(
            Some("0.19.0"),
            "/nix/store/abc-python/lib/site-packages",
        ))
        .unwrap_err()
        .to_string();
        assert!(nix.contains("NixOS") && nix.contains("nix expr"), "{nix}");
    }

    /// An upstream source install as Hermes's installer lays it out since September 2026: the
    /// checkout on `sys.path` through a `.pth` line (an editable install), its distribution
    /// saying `0.0.0`, the release in `install-stamp.json` beside the code.
    #[cfg(unix)] // a python3 on PATH and the venv's bin/python
    #[test]
    fn a_source_install_s_release_is_read_as_hermes_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let venv = dir.path().join("venv");
        let made = std::process::Command::new("python3")
            .args(["-m", "venv", "--without-pip"])
            .arg(&venv)
            .status()
            .unwrap();
        assert!(made.success());
        let python = venv.join("bin/python");
        let site = inspect(&python).unwrap();
        assert_eq!(site.hermes, None, "a venv without Hermes");
        let checkout = dir.path().join("hermes-agent");
        std::fs::create_dir_all(checkout.join("hermes_cli")).unwrap();
        std::fs::write(
            checkout.join("hermes_cli/__init__.py"),
            "raise SystemExit('imported')\n",
        )
        .unwrap();
        let dist = site.site_packages.join("hermes_agent-0.0.0.dist-info");
        std::fs::create_dir_all(&dist).unwrap();
        std::fs::write(
            dist.join("METADATA"),
            "Metadata-Version: 2.1\nName: hermes-agent\nVersion: 0.0.0\n",
        )
        .unwrap();
        std::fs::write(
            site.site_packages
                .join("__editable__.hermes_agent-0.0.0.pth"),
            format!("{}\n", checkout.display()),
        )
        .unwrap();
        let version = || inspect(&python).unwrap().hermes.unwrap();
        // No stamp, no checkout tags: only the distribution's placeholder.
        assert_eq!(version(), "0.0.0");
        let stamp = |commit: &str| {
            std::fs::write(
                checkout.join("install-stamp.json"),
                format!(
                    r#"{{"schemaVersion": 2, "commit": "{commit}", "source": "build", "updateMechanism": "self", "baseVersion": "0.23.5", "displayVersion": "0.23.5"}}"#
                ),
            )
            .unwrap();
        };
        stamp(&"a".repeat(40));
        assert_eq!(version(), "0.23.5", "the stamp names the release");
        // An all-zero commit is a placeholder stamp: Hermes asks git, and so do we.
        stamp(&"0".repeat(40));
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .args([
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "-c",
                    "commit.gpgsign=false",
                ])
                .args(args)
                .current_dir(&checkout)
                .output()
                .unwrap();
            assert!(ok.status.success(), "{ok:?}");
        };
        git(&["init", "-q"]);
        git(&["add", "hermes_cli"]);
        git(&["commit", "-q", "-m", "release"]);
        git(&["tag", "v0.23.4"]);
        git(&["tag", "v0.24.0-rc1"]);
        assert_eq!(
            version(),
            "0.23.4",
            "the newest stable tag merged into HEAD"
        );
        // Nothing of it was imported (hermes_cli's __init__ would have exited).
        // Served, with the warning that no release this new was run or read.
        let warning = check(&inspect(&python).unwrap()).unwrap().unwrap();
        assert!(warning.contains("Hermes 0.23.4 is newer"), "{warning}");
    }

    #[test]
    fn activation_is_idempotent_and_deactivation_removes_only_ours() {
        let dir = tempfile::tempdir().unwrap();
        let t = target(Some("0.19.0"), dir.path().to_str().unwrap());
        // The single-module reader of an earlier hermes-plugins is replaced by the package.
        let legacy = dir.path().join(LEGACY_MODULE);
        std::fs::write(&legacy, "\"\"\"Reading a hermes-plugins generation: old\n").unwrap();
        let bin = Path::new("/opt/bin/hermes-plugins");
        let first = activate(&t, bin).unwrap();
        let changes: Vec<_> = first.iter().map(|c| c.change).collect();
        assert_eq!(changes, ["written", "written", "removed"]);
        assert!(!legacy.exists());
        assert!(is_active(dir.path()));
        let again = activate(&t, bin).unwrap();
        assert!(again.iter().all(|c| c.change == "unchanged"), "{again:?}");
        // Another binary: the `.pth` line is rewritten to name it, the package left alone.
        let moved = activate(&t, Path::new("/usr/local/bin/hermes-plugins \"new\"")).unwrap();
        let changes: Vec<_> = moved.iter().map(|c| c.change).collect();
        assert_eq!(changes, ["unchanged", "written"]);
        let line = std::fs::read_to_string(dir.path().join(PTH)).unwrap();
        assert_eq!(
            line,
            "import hermes_plugins_generation; hermes_plugins_generation.activate(binary=\"/usr/local/bin/hermes-plugins \\\"new\\\"\")\n"
        );
        assert!(is_active(dir.path()));
        let removed = deactivate(&t).unwrap();
        assert_eq!(removed.len(), 2);
        assert!(!is_active(dir.path()));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // A module of that name that is not ours stays.
        std::fs::write(&legacy, "print('mine')\n").unwrap();
        assert!(deactivate(&t).unwrap().is_empty());
        assert!(legacy.exists());
    }
}
