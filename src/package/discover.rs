//! Finding plugin packages under a path (layout discovery).
//!
//! Layouts: `<root>/<plugin>/` (flat, key = the plugin's name) and
//! `<root>/<category>/<plugin>/` (one category level, key = `<category>/<plugin-dir>`).
//! Anything deeper is ignored. A directory is a plugin when it has `plugin.yaml`,
//! `plugin.yml` or `plugin.json`; `plugin.yaml` wins over `plugin.yml`, and a native manifest
//! wins over `plugin.json`. Dunder directories (`__pycache__`) and hidden directories are
//! skipped. Inside a category, a `plugin.json` that does not declare the Agent Plugins v1
//! schema is another harness's manifest and is skipped, as Hermes does.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::located::{Limits, json};
use crate::pkgfs::{MANIFEST_LIMIT, read_limited_text};

use super::portable::plugin_json::PLUGIN_SCHEMA_V1;

/// Which manifest makes a directory a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManifestKind {
    /// A native package.
    Native {
        /// `plugin.yaml` or `plugin.yml`.
        file: &'static str,
        /// Whether `plugin.yml` also exists next to `plugin.yaml` (and is ignored).
        shadowed_yml: bool,
        /// Whether `plugin.json` also exists (and is ignored: native wins).
        shadowed_json: bool,
    },
    /// A portable (Agent Plugins v1) package.
    Portable,
    /// A Python project whose `pyproject.toml` declares `hermes_agent.plugins` entry points.
    PipProject,
    /// A wheel (`.whl` file) of a pip-distributed plugin.
    Wheel,
}

/// A directory that holds a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The plugin directory, as reached from the path given.
    pub dir: PathBuf,
    /// The category directory name for the category layout.
    pub category: Option<String>,
    /// Which manifest it has.
    pub manifest: ManifestKind,
}

/// A directory that was looked at and skipped, and why (shown with `-v`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The directory.
    pub path: PathBuf,
    /// Why it was skipped.
    pub reason: &'static str,
}

/// A symlink inside a plugins root that leads out of it: not followed, reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outside {
    /// The symlink, as reached from the path given.
    pub path: PathBuf,
    /// Where it leads.
    pub target: PathBuf,
    /// The category directory, in a category layout.
    pub category: Option<String>,
}

/// What discovery found under a path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovery {
    /// Plugins, in sorted order.
    pub candidates: Vec<Candidate>,
    /// Directories skipped.
    pub skipped: Vec<Skipped>,
    /// Symlinked plugin or category directories that lead outside the root given.
    pub outside: Vec<Outside>,
}

/// The manifest kind of `dir`, if it is a plugin directory.
pub fn manifest_kind(dir: &Path) -> Option<ManifestKind> {
    let exists = |name: &str| fs::symlink_metadata(dir.join(name)).is_ok();
    let yaml = exists("plugin.yaml");
    let yml = exists("plugin.yml");
    let json = exists("plugin.json");
    if yaml || yml {
        Some(ManifestKind::Native {
            file: if yaml { "plugin.yaml" } else { "plugin.yml" },
            shadowed_yml: yaml && yml,
            shadowed_json: json,
        })
    } else if json {
        Some(ManifestKind::Portable)
    } else if super::pip::declares_plugins(dir) {
        Some(ManifestKind::PipProject)
    } else {
        None
    }
}

/// The kind of one package directory given on its own (a fetched or stored package, not a
/// directory met while walking a root): a plugin directory ([`manifest_kind`]), or a
/// directory holding one wheel ([`wheel_tree`]). A root's wheels are not plugins by
/// themselves (`fixtures/demo/wheels`, a `--find-links` directory).
pub fn package_dir_kind(dir: &Path) -> Option<ManifestKind> {
    manifest_kind(dir).or_else(|| wheel_tree(dir).map(|_| ManifestKind::Wheel))
}

/// The wheel of a directory that holds exactly one regular `*.whl` file and nothing else: how
/// the store keeps a plugin installed from the package index.
pub fn wheel_tree(dir: &Path) -> Option<PathBuf> {
    let mut entries = fs::read_dir(dir).ok()?;
    let only = entries.next()?.ok()?;
    if entries.next().is_some() {
        return None;
    }
    let name = only.file_name();
    let is_wheel = name.to_str().is_some_and(|n| n.ends_with(".whl"));
    (is_wheel && only.file_type().ok()?.is_file()).then(|| only.path())
}

/// Finds the plugins at `path`: the plugin itself, or the plugins of a plugins root.
/// A path to a manifest file stands for its directory.
pub fn discover(path: &Path) -> io::Result<Discovery> {
    let meta = fs::metadata(path)?;
    let dir = if meta.is_file() {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.ends_with(".whl") {
            return Ok(Discovery {
                candidates: vec![Candidate {
                    dir: path.to_path_buf(),
                    category: None,
                    manifest: ManifestKind::Wheel,
                }],
                ..Discovery::default()
            });
        }
        if !matches!(
            name,
            "plugin.yaml" | "plugin.yml" | "plugin.json" | "pyproject.toml"
        ) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is a file; give a plugin directory, a directory of plugins, a plugin.yaml/plugin.json/pyproject.toml, or a wheel",
                    path.display()
                ),
            ));
        }
        match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    } else {
        path.to_path_buf()
    };
    let mut found = Discovery::default();
    if let Some(manifest) = manifest_kind(&dir) {
        found.candidates.push(Candidate {
            dir,
            category: None,
            manifest,
        });
        return Ok(found);
    }
    let root = fs::canonicalize(&dir)?;
    scan(&dir, &root, None, &mut found)?;
    Ok(found)
}

/// How deep [`plugin_dirs_within`] looks (`src/<package>/<plugin>` layouts sit at 3,
/// `plugins/<category>/<plugin>` at 3).
const WITHIN_DEPTH: usize = 5;

/// Most directories [`plugin_dirs_within`] looks at before it stops.
const WITHIN_ENTRIES: usize = 20_000;

/// The plugin directories (a `plugin.yaml`, `plugin.yml` or `plugin.json` beside them)
/// anywhere under `root` up to a few levels down, as `/`-separated paths relative to it,
/// sorted: what a repository of several plugins holds, so an install without a
/// subdirectory can name each. Symlinks are not followed; hidden, dunder, `node_modules`
/// and virtualenv directories are skipped, and the walk is bounded.
pub fn plugin_dirs_within(root: &Path) -> Vec<String> {
    let skip = |name: &str| {
        name.starts_with('.')
            || name.starts_with("__")
            || matches!(
                name,
                "node_modules" | "venv" | "site-packages" | "dist" | "build"
            )
    };
    let mut found = Vec::new();
    let walk = walkdir::WalkDir::new(root)
        .min_depth(1)
        .max_depth(WITHIN_DEPTH)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.file_type().is_dir() && !skip(&e.file_name().to_string_lossy()));
    for entry in walk.take(WITHIN_ENTRIES).flatten() {
        let dir = entry.path();
        let has_manifest = ["plugin.yaml", "plugin.yml", "plugin.json"]
            .iter()
            .any(|m| fs::symlink_metadata(dir.join(m)).is_ok_and(|m| m.is_file()));
        if has_manifest && let Ok(rel) = dir.strip_prefix(root) {
            let parts: Vec<_> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect();
            found.push(parts.join("/"));
        }
    }
    found
}

/// Inside a plugins root, a symlinked directory is followed only while it stays inside the
/// root: one leading elsewhere is recorded in [`Discovery::outside`] and not read, so
/// validating a directory never reports on (or reads) something outside it.
fn scan(dir: &Path, root: &Path, category: Option<&str>, found: &mut Discovery) -> io::Result<()> {
    let mut children: Vec<PathBuf> = fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    children.sort();
    for child in children {
        let name = child
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        if name.starts_with("__") && name.ends_with("__") {
            found.skipped.push(Skipped {
                path: child,
                reason: "dunder directory",
            });
            continue;
        }
        if name.starts_with('.') {
            continue;
        }
        if !child.is_dir() {
            continue;
        }
        if fs::symlink_metadata(&child).is_ok_and(|m| m.file_type().is_symlink()) {
            match fs::canonicalize(&child) {
                Ok(target) if target.starts_with(root) => {}
                Ok(target) => {
                    found.outside.push(Outside {
                        path: child,
                        target,
                        category: category.map(str::to_string),
                    });
                    continue;
                }
                Err(_) => continue,
            }
        }
        match manifest_kind(&child) {
            Some(ManifestKind::Portable) if category.is_some() && is_foreign_harness(&child) => {
                found.skipped.push(Skipped {
                    path: child,
                    reason: "foreign-harness plugin.json (not Agent Plugins v1)",
                });
            }
            Some(manifest) => found.candidates.push(Candidate {
                dir: child,
                category: category.map(str::to_string),
                manifest,
            }),
            None if category.is_some() => found.skipped.push(Skipped {
                path: child,
                reason: "no plugin.yaml, depth cap reached",
            }),
            None => {
                if let Err(e) = scan(&child, root, Some(&name), found) {
                    tracing::warn!("skipping unreadable directory {}: {e}", child.display());
                    found.skipped.push(Skipped {
                        path: child,
                        reason: "unreadable directory",
                    });
                }
            }
        }
    }
    Ok(())
}

/// A nested `plugin.json` that parses as an object without the v1 `$schema` belongs to
/// another agent harness. An unreadable or malformed one is *not* skipped: "cannot be read"
/// is not "known not to be v1".
fn is_foreign_harness(dir: &Path) -> bool {
    let Ok(text) = read_limited_text(&dir.join("plugin.json"), MANIFEST_LIMIT) else {
        return false;
    };
    let Ok(parsed) = json::parse(&text, Limits::default()) else {
        return false;
    };
    parsed.root.as_map().is_some()
        && parsed.root.get("$schema").and_then(|e| e.value.as_str()) != Some(PLUGIN_SCHEMA_V1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    #[test]
    fn flat_and_category_layouts() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        touch(&r.join("flat/plugin.yaml"), "name: flat\n");
        touch(&r.join("cat/one/plugin.yaml"), "name: one\n");
        touch(
            &r.join("cat/two/plugin.json"),
            &format!("{{\"$schema\": \"{PLUGIN_SCHEMA_V1}\"}}"),
        );
        touch(&r.join("cat/deep/nested/plugin.yaml"), "name: deep\n");
        touch(&r.join("cat/claude/plugin.json"), "{\"name\": \"x\"}");
        touch(&r.join("__pycache__/plugin.yaml"), "");
        touch(&r.join("both/plugin.yaml"), "");
        touch(&r.join("both/plugin.yml"), "");
        touch(&r.join("both/plugin.json"), "{}");
        let found = discover(r).unwrap();
        let names: Vec<(String, Option<String>)> = found
            .candidates
            .iter()
            .map(|c| {
                (
                    c.dir.file_name().unwrap().to_string_lossy().into_owned(),
                    c.category.clone(),
                )
            })
            .collect();
        assert_eq!(
            names,
            vec![
                ("both".into(), None),
                ("one".into(), Some("cat".into())),
                ("two".into(), Some("cat".into())),
                ("flat".into(), None),
            ]
        );
        assert_eq!(
            found.candidates[0].manifest,
            ManifestKind::Native {
                file: "plugin.yaml",
                shadowed_yml: true,
                shadowed_json: true
            }
        );
        assert!(found.skipped.iter().any(|s| s.reason.contains("depth cap")));
        assert!(
            found
                .skipped
                .iter()
                .any(|s| s.reason.contains("foreign-harness"))
        );
    }

    #[test]
    fn a_plugin_path_is_itself() {
        let root = tempfile::tempdir().unwrap();
        touch(&root.path().join("plugin.yaml"), "name: x\n");
        let found = discover(root.path()).unwrap();
        assert_eq!(found.candidates.len(), 1);
        let found = discover(&root.path().join("plugin.yaml")).unwrap();
        assert_eq!(found.candidates.len(), 1);
    }
}
