//! `nix lock` (NIX-1): every installed plugin pinned for Nix — where to fetch it (GitHub
//! owner/repo or a git URL), the exact rev, the subdirectory, and the NAR hash of the whole
//! repository tree at that rev without `.git` (what `fetchFromGitHub` and `fetchgit` pin).
//! Plugins installed from a local directory get a `path` pin with the NAR hash of the plugin
//! tree (for `builtins.path { sha256 = …; }`). The lock also carries the Python lock of the
//! current generation, so an offline build installs exactly those packages.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::resolve::lock::Lock;
use crate::source::{SourceSpec, git};
use crate::state::installed::{Installed, InstalledPlugin};

/// The lock format version.
pub const NIX_LOCK_VERSION: u32 = 1;

/// How Nix fetches a plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "fetcher", rename_all = "kebab-case")]
pub enum Fetch {
    /// `pkgs.fetchFromGitHub { owner; repo; rev; hash; }`.
    Github {
        owner: String,
        /// Repository.
        repo: String,
    },
    /// `pkgs.fetchgit { url; rev; hash; fetchSubmodules = false; }` — any git URL, and GitHub
    /// repositories whose `git archive` (what `fetchFromGitHub` unpacks) differs from their
    /// tree (see [`archive_differs`]).
    Git {
        /// The URL.
        url: String,
    },
    /// `builtins.path { path; sha256; }` (a local directory; hash of the plugin tree).
    Path {
        /// The directory it was installed from.
        path: String,
    },
    /// A distribution from the package index (`pypi:`): the wheel validated at install,
    /// `pkgs.fetchurl { url; hash; }` (the pin's `hash` is the file's flat sha256 in SRI form),
    /// installed as a Python package (`extraPythonPackages`), whose entry point Hermes reads
    /// — never linked as a plugin directory.
    Wheel {
        /// The distribution's name (normalised).
        distribution: String,
        /// Its version.
        version: String,
        /// The wheel's file name.
        filename: String,
        /// Where the index serves it (credentials stripped).
        url: String,
    },
}

/// One pinned plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NixPin {
    /// Plugin key; never a path (checked when read).
    #[serde(deserialize_with = "crate::home::key::deserialize")]
    pub key: String,
    /// Manifest name.
    pub name: String,
    /// Where from.
    #[serde(flatten)]
    pub fetch: Fetch,
    /// The commit (git fetchers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rev: Option<String>,
    /// The plugin's directory inside the fetched tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subdir: Option<String>,
    /// SRI NAR hash of what the fetcher produces.
    pub hash: String,
    /// SRI NAR hash of the plugin tree itself (the store key's digest).
    pub tree: String,
    /// The package format (`native-v1`, `native-v2`, `portable`); absent in locks written
    /// before it was recorded, which held native plugins only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
}

impl NixPin {
    /// Whether the plugin is a portable (`plugin.json`) package, which the hermes-agent
    /// module cannot link (it requires `plugin.yaml` at the package root).
    pub fn is_portable(&self) -> bool {
        self.format
            .as_deref()
            .is_some_and(|f| f.starts_with("portable"))
    }
}

/// The whole lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NixLock {
    /// Format version.
    pub version: u32,
    /// Pinned plugins, sorted by key.
    pub plugins: Vec<NixPin>,
    /// The Python packages (the current generation's lock), when there is one.
    #[serde(default)]
    pub python: Option<Lock>,
}

impl NixLock {
    /// JSON text (pretty, trailing newline) — what `builtins.fromJSON` reads.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// Why a pin could not be made.
#[derive(Debug, thiserror::Error)]
#[error("{key}: {message}")]
pub struct LockError {
    /// Plugin key.
    pub key: String,
    /// What went wrong.
    pub message: String,
}

/// `https://github.com/owner/repo(.git)` → (owner, repo).
pub fn github_parts(url: &str) -> Option<(String, String)> {
    let rest = url
        .strip_prefix("https://github.com/")
        .or_else(|| url.strip_prefix("https://www.github.com/"))?;
    let mut parts = rest.trim_end_matches('/').splitn(2, '/');
    let owner = parts.next()?.to_string();
    let repo = parts.next()?.trim_end_matches(".git").to_string();
    (!owner.is_empty() && !repo.is_empty() && !repo.contains('/')).then_some((owner, repo))
}

/// Why `git archive` of a checked-out tree (what GitHub serves as the tarball
/// `fetchFromGitHub` unpacks) would differ from the tree itself (what we hash and install):
/// a `.gitattributes` that uses `export-ignore` (files left out) or `export-subst`
/// (placeholders expanded), or submodules (`.gitmodules`; their directories are absent or
/// empty in archives). `None` when the archive is the tree.
pub fn archive_differs(tree: &Path) -> std::io::Result<Option<&'static str>> {
    if tree.join(".gitmodules").is_file() {
        return Ok(Some("the repository has submodules"));
    }
    let mut stack = vec![tree.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() && entry.file_name() == ".gitattributes" {
                let text = std::fs::read(entry.path())?;
                let text = String::from_utf8_lossy(&text);
                let uses = |attr: &str| {
                    text.lines()
                        .filter(|l| !l.trim_start().starts_with('#'))
                        .flat_map(str::split_whitespace)
                        .any(|w| w.trim_start_matches(['-', '!']) == attr)
                };
                if uses("export-ignore") {
                    return Ok(Some("its .gitattributes use export-ignore"));
                }
                if uses("export-subst") {
                    return Ok(Some("its .gitattributes use export-subst"));
                }
            }
        }
    }
    Ok(None)
}

fn pin(plugin: &InstalledPlugin, git_cache: &Path, scratch: &Path) -> Result<NixPin, LockError> {
    let err = |message: String| LockError {
        key: plugin.key.clone(),
        message,
    };
    let source = &plugin.source;
    if let (Some(url), Some(rev)) = (&source.url, &source.commit) {
        let dest = scratch.join(&plugin.store_key);
        git::checkout_sha_cached(url, rev, git_cache, &dest, &mut |_, _| {})
            .map_err(|e| err(e.to_string()))?;
        // A fresh clone (the cache's fallback; a tree with submodules takes it, as libgit2
        // cannot check those out of a bare repository) leaves `.git`: the fetchers' trees
        // have none.
        let git_dir = dest.join(".git");
        if git_dir.exists() {
            std::fs::remove_dir_all(&git_dir)
                .map_err(|e| err(format!("{}: {e}", git_dir.display())))?;
        }
        let hash = super::hash_path(&dest).map_err(|e| err(e.to_string()))?;
        let differs = archive_differs(&dest).map_err(|e| err(e.to_string()))?;
        let _ = std::fs::remove_dir_all(&dest);
        let fetch = match github_parts(url) {
            Some((owner, repo)) => match differs {
                None => Fetch::Github { owner, repo },
                Some(why) => {
                    tracing::info!(
                        "{}: pinned for fetchgit, as {why}: GitHub's tarball would differ from the tree",
                        plugin.key
                    );
                    Fetch::Git {
                        url: format!("https://github.com/{owner}/{repo}.git"),
                    }
                }
            },
            None => Fetch::Git { url: url.clone() },
        };
        return Ok(NixPin {
            key: plugin.key.clone(),
            name: plugin.name.clone(),
            fetch,
            rev: Some(rev.clone()),
            subdir: source.subdir.clone(),
            hash,
            tree: plugin.tree.clone(),
            format: Some(plugin.format.to_string()),
        });
    }
    let path = match &source.spec {
        SourceSpec::Path { dir } => dir.display().to_string(),
        SourceSpec::Pypi { .. } => {
            let (Some(package), Some(url)) = (&source.package, &source.url) else {
                return Err(err(format!(
                    "{} records no wheel and URL to pin (reinstall it)",
                    source.spec.display()
                )));
            };
            let hash = sri_of_hex(&package.sha256).ok_or_else(|| {
                err(format!(
                    "{}: the recorded sha256 `{}` is not 64 hex digits (reinstall it)",
                    source.spec.display(),
                    package.sha256
                ))
            })?;
            return Ok(NixPin {
                key: plugin.key.clone(),
                name: plugin.name.clone(),
                fetch: Fetch::Wheel {
                    distribution: package.name.clone(),
                    version: package.version.clone(),
                    filename: package.filename.clone(),
                    url: url.clone(),
                },
                rev: None,
                subdir: None,
                hash,
                tree: plugin.tree.clone(),
                format: Some(plugin.format.to_string()),
            });
        }
        SourceSpec::Wheel { .. } => {
            return Err(err(format!(
                "{} is a local wheel file: Nix can fetch a wheel only from where an index serves it; publish it to an index and install `pypi:NAME==VERSION`, or remove it before `nix lock`",
                source.spec.display()
            )));
        }
        other => {
            return Err(err(format!(
                "{} has no recorded commit to pin",
                other.display()
            )));
        }
    };
    Ok(NixPin {
        key: plugin.key.clone(),
        name: plugin.name.clone(),
        fetch: Fetch::Path { path },
        rev: None,
        subdir: None,
        hash: plugin.tree.clone(),
        tree: plugin.tree.clone(),
        format: Some(plugin.format.to_string()),
    })
}

/// A sha256 in hex (as indexes and the lock give it) in SRI form (`sha256-…`, base64).
pub(super) fn sri_of_hex(hex: &str) -> Option<String> {
    if hex.len() != 64 {
        return None;
    }
    let mut digest = [0u8; 32];
    for (i, byte) in digest.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(crate::store::nar::sri(&digest))
}

/// Pins every installed plugin (git sources through the bare-repository cache).
pub fn make(
    installed: &Installed,
    python: Option<Lock>,
    git_cache: &Path,
    scratch: &Path,
) -> Result<NixLock, LockError> {
    let plugins = installed
        .plugins
        .values()
        .map(|p| pin(p, git_cache, scratch))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(NixLock {
        version: NIX_LOCK_VERSION,
        plugins,
        python,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archives_that_differ_from_the_tree() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("plugin.yaml"), "name: x\n").unwrap();
        assert_eq!(archive_differs(root).unwrap(), None);
        std::fs::write(
            root.join(".gitattributes"),
            "*.py text eol=lf\n# export-ignore\n",
        )
        .unwrap();
        assert_eq!(archive_differs(root).unwrap(), None);
        std::fs::write(root.join("docs/.gitattributes"), "drafts/ export-ignore\n").unwrap();
        assert!(
            archive_differs(root)
                .unwrap()
                .unwrap()
                .contains("export-ignore")
        );
        std::fs::remove_file(root.join("docs/.gitattributes")).unwrap();
        std::fs::write(root.join(".gitattributes"), "version.py export-subst\n").unwrap();
        assert!(
            archive_differs(root)
                .unwrap()
                .unwrap()
                .contains("export-subst")
        );
        std::fs::remove_file(root.join(".gitattributes")).unwrap();
        std::fs::write(root.join(".gitmodules"), "[submodule \"v\"]\n").unwrap();
        assert!(
            archive_differs(root)
                .unwrap()
                .unwrap()
                .contains("submodules")
        );
    }

    #[test]
    fn sri_of_a_hex_sha256() {
        // sha256("") as hex and as `nix hash file --sri` prints it.
        assert_eq!(
            sri_of_hex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
                .as_deref(),
            Some("sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
        );
        assert_eq!(sri_of_hex("e3b0"), None);
        assert_eq!(sri_of_hex(&"zz".repeat(32)), None);
    }

    #[test]
    fn github_urls() {
        assert_eq!(
            github_parts("https://github.com/acme/hermes-weather.git"),
            Some(("acme".into(), "hermes-weather".into()))
        );
        assert_eq!(github_parts("https://github.com/acme"), None);
        assert_eq!(github_parts("https://gitlab.com/acme/x"), None);
    }
}
