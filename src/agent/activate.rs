//! `activate` / `deactivate`: the hook that makes every process of one Hermes installation
//! read the current generation by itself, without `exec`.
//!
//! Two files go into the interpreter's site-packages (`purelib`): the reference reader
//! (`hermes_plugins_generation.py`, the same file `exec` puts on `PYTHONPATH`) and a `.pth`
//! file whose one line calls its `activate()` at interpreter start. That call only inserts an
//! import hook: which home the process uses (`HERMES_HOME`, else `~/.hermes`) and whether it
//! has a published generation are decided when Hermes first imports one of its plugin
//! loaders; a home with nothing published leaves Hermes exactly as it is. Under `exec` the
//! `PYTHONPATH` copy is imported first and `activate()` defers to it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The `.pth` file's name.
pub const PTH: &str = "hermes_plugins_activate.pth";
/// The reader's module file name in site-packages.
pub const MODULE: &str = "hermes_plugins_generation.py";
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

const ASK: &str = "import json, sysconfig\ntry:\n    from importlib.metadata import version\n    hermes = version('hermes-agent')\nexcept Exception:\n    hermes = None\nprint(json.dumps({'site_packages': sysconfig.get_paths()['purelib'], 'hermes': hermes}))\n";

/// Asks `python` (isolated, `-I`) for its site-packages and its `hermes-agent` version.
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
    let answer: Answer = crate::interpreter::ask(python, ASK, &[]).map_err(failed)?;
    Ok(Target {
        python: python.to_path_buf(),
        site_packages: answer.site_packages,
        hermes: answer.hermes,
    })
}

/// Refuses what the hook cannot serve: no Hermes, a Hermes older than 0.13 or of a minor
/// series newer than the newest release whose loaders are known, and a site-packages in the
/// Nix store (read-only by design: NixOS takes the module route).
pub fn check(target: &Target) -> Result<(), ActivateError> {
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
    let supported = match (series(version), series(&latest)) {
        (Some(v), Some(newest)) => v >= OLDEST && v <= newest,
        _ => false,
    };
    if !supported {
        return Err(ActivateError::Unsupported(format!(
            "Hermes {version} at {} is not supported by this hermes-plugins (0.{}.0 – {latest} series); `hermes-plugins exec` fails the same way rather than load plugins it cannot pin",
            target.python.display(),
            OLDEST.1
        )));
    }
    if target.site_packages.starts_with("/nix/store") {
        return Err(ActivateError::ReadOnly(format!(
            "{} is in the Nix store, which is read-only: on NixOS give the plugins to the hermes-agent module instead (`hermes-plugins nix expr`, docs/nix.md)",
            target.site_packages.display()
        )));
    }
    Ok(())
}

/// Writes the hook naming `binary` as the one serving `hermes plugins …` (idempotent: a file
/// already as it should be is left alone; a hook naming another binary is rewritten).
pub fn activate(target: &Target, binary: &Path) -> Result<Vec<FileChange>, ActivateError> {
    let line = pth_line(binary)?;
    let mut changes = Vec::new();
    for (name, text) in [(MODULE, super::READER), (PTH, line.as_str())] {
        let path = target.site_packages.join(name);
        let same = std::fs::read(&path).is_ok_and(|b| b == text.as_bytes());
        if !same {
            crate::files::write_atomically(&path, text.as_bytes()).map_err(|source| {
                let io = ActivateError::Io {
                    path: path.clone(),
                    source,
                };
                match &io {
                    ActivateError::Io { source, .. }
                        if source.kind() == std::io::ErrorKind::PermissionDenied
                            || source.raw_os_error() == Some(libc::EROFS) =>
                    {
                        ActivateError::ReadOnly(format!(
                            "{} cannot be written ({io}): activate as the user who installed Hermes, or use `hermes-plugins exec`",
                            target.site_packages.display()
                        ))
                    }
                    _ => io,
                }
            })?;
        }
        changes.push(FileChange {
            path,
            change: if same { "unchanged" } else { "written" },
        });
    }
    Ok(changes)
}

/// Removes the hook: the `.pth` line first (from then on no process loads it), then the
/// module — only files that are ours (a file of that name with other contents is left).
pub fn deactivate(target: &Target) -> Result<Vec<FileChange>, ActivateError> {
    let mut changes = Vec::new();
    for name in [PTH, MODULE] {
        let path = target.site_packages.join(name);
        let Ok(text) = std::fs::read(&path) else {
            continue;
        };
        // The module from another hermes-plugins version is ours too (its docstring says so),
        // and so is a `.pth` line naming another binary.
        let is_ours = if name == PTH {
            is_our_pth(&text)
        } else {
            text == super::READER.as_bytes()
                || text.starts_with(b"\"\"\"Reading a hermes-plugins generation")
        };
        if !is_ours {
            continue;
        }
        std::fs::remove_file(&path).map_err(|source| ActivateError::Io {
            path: path.clone(),
            source,
        })?;
        changes.push(FileChange {
            path,
            change: "removed",
        });
    }
    Ok(changes)
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
        let newer = check(&target(Some("0.99.0"), site))
            .unwrap_err()
            .to_string();
        assert!(newer.contains("Hermes 0.99.0"), "{newer}");
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

    #[test]
    fn activation_is_idempotent_and_deactivation_removes_only_ours() {
        let dir = tempfile::tempdir().unwrap();
        let t = target(Some("0.19.0"), dir.path().to_str().unwrap());
        let bin = Path::new("/opt/bin/hermes-plugins");
        let first = activate(&t, bin).unwrap();
        assert!(first.iter().all(|c| c.change == "written"));
        assert!(is_active(dir.path()));
        let again = activate(&t, bin).unwrap();
        assert!(again.iter().all(|c| c.change == "unchanged"));
        // Another binary: the `.pth` line is rewritten to name it, the module left alone.
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
        // A module of that name that is not ours stays.
        std::fs::write(dir.path().join(MODULE), "print('mine')\n").unwrap();
        assert!(deactivate(&t).unwrap().is_empty());
        assert!(dir.path().join(MODULE).exists());
    }
}
