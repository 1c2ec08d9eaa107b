//! What the user typed after `install`: a catalog name, `owner/repo[/subdir]`, a git URL with
//! an optional `#subdir`, a local directory (SRC-1), or a Python distribution on the package
//! index, `pypi:NAME[==VERSION | SPECIFIERS]`, that registers through Hermes's entry points.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A parsed source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum SourceSpec {
    /// A bare name, looked up only in the catalog.
    Catalog {
        /// The entry name.
        name: String,
    },
    /// `owner/repo[/subdir]` on GitHub (or the `HERMES_PLUGINS_GITHUB` mirror).
    Github {
        /// Repository owner.
        owner: String,
        /// Repository name.
        repo: String,
        /// Directory inside the repository.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        subdir: Option<String>,
    },
    /// Any git URL (`https://`, `file://`, …) with an optional `#subdir`.
    Git {
        /// The URL without the fragment.
        url: String,
        /// Directory inside the repository.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        subdir: Option<String>,
    },
    /// A local directory, copied as it is.
    Path {
        /// The directory (absolute).
        dir: PathBuf,
    },
    /// A local wheel file (`./dist/x-1.0-py3-none-any.whl`): the plugin is that wheel, installed
    /// into the generation's environment.
    Wheel {
        /// The file (absolute).
        file: PathBuf,
    },
    /// A distribution on the package index (`pypi:NAME[extras][specifiers]`): its wheel is the
    /// plugin, installed into the generation's environment.
    Pypi {
        /// The PEP 508 requirement as typed, without the `pypi:` prefix (no URL, no marker).
        requirement: String,
    },
}

/// Why a source string was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// Nothing matched.
    #[error(
        "`{0}` is not a source: use a catalog name (`weather`), `owner/repo[/subdir]`, a git URL (`https://host/repo.git#subdir`), a directory (`./my-plugin`), a wheel file (`./dist/x-1.0-py3-none-any.whl`) or a package on the index (`pypi:NAME`)"
    )]
    Unrecognised(String),
    /// A subdirectory that would leave the repository.
    #[error(
        "subdirectory `{0}` is not allowed: it must be relative, without `..`, `.` or empty segments"
    )]
    BadSubdir(String),
    /// A local path that is not a directory.
    #[error("{0}: not a directory")]
    NotADirectory(String),
    /// A local wheel (a path ending in `.whl`) that is not a file.
    #[error("{0}: no such wheel file")]
    NoSuchWheel(String),
    /// `pypi:` followed by something that is not a requirement on a distribution by name.
    #[error(
        "`pypi:{0}` is not a package requirement: {1} (write `pypi:NAME`, `pypi:NAME==1.2.0` or `pypi:NAME>=1.2,<2`)"
    )]
    BadRequirement(String, String),
}

/// The requirement of a `pypi:` source, checked: a distribution by name with optional extras
/// and version specifiers — no direct URL (the index is where it comes from) and no
/// environment marker (a plugin is installed or not).
pub fn pypi_requirement(text: &str) -> Result<uv_pep508::Requirement, SpecError> {
    let bad = |why: String| SpecError::BadRequirement(text.to_string(), why);
    let requirement = <uv_pep508::Requirement as std::str::FromStr>::from_str(text)
        .map_err(|e| bad(e.message.to_string()))?;
    if matches!(
        requirement.version_or_url,
        Some(uv_pep508::VersionOrUrl::Url(_))
    ) {
        return Err(bad("a direct URL is not an index package".to_string()));
    }
    if !requirement.marker.is_true() {
        return Err(bad("an environment marker has no meaning here".to_string()));
    }
    Ok(requirement)
}

fn is_catalog_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

fn is_github_segment(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// Checks a subdirectory for escapes: relative, no `..`, `.` or empty segments, no control
/// characters (SRC-2).
pub fn check_subdir(subdir: &str) -> Result<String, SpecError> {
    let trimmed = subdir.trim_end_matches('/');
    let bad = trimmed.is_empty()
        || trimmed.starts_with('/')
        || trimmed.contains('\\')
        || trimmed.chars().any(char::is_control)
        || trimmed
            .split('/')
            .any(|seg| seg.is_empty() || seg == "." || seg == "..");
    if bad {
        return Err(SpecError::BadSubdir(subdir.to_string()));
    }
    Ok(trimmed.to_string())
}

fn looks_like_path(s: &str) -> bool {
    s.starts_with('/')
        || s.starts_with("./")
        || s.starts_with("../")
        || s.starts_with("~/")
        || s == "."
        || s == ".."
}

fn absolute(path: &Path, cwd: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Parses a source string. `cwd` anchors relative directories; `home` expands `~/`.
pub fn parse(text: &str, cwd: &Path, home: Option<&Path>) -> Result<SourceSpec, SpecError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(SpecError::Unrecognised(text.to_string()));
    }
    if let Some(requirement) = text.strip_prefix("pypi:") {
        let requirement = requirement.trim();
        pypi_requirement(requirement)?;
        return Ok(SourceSpec::Pypi {
            requirement: requirement.to_string(),
        });
    }
    if text.contains("://") || text.starts_with("git@") {
        let (url, subdir) = match text.split_once('#') {
            Some((u, s)) => (u.to_string(), Some(check_subdir(s)?)),
            None => (text.to_string(), None),
        };
        if url.chars().any(|c| c.is_control() || c == ' ') {
            return Err(SpecError::Unrecognised(text.to_string()));
        }
        return Ok(SourceSpec::Git { url, subdir });
    }
    if looks_like_path(text) {
        let path = match (text.strip_prefix("~/"), home) {
            (Some(rest), Some(h)) => h.join(rest),
            _ => PathBuf::from(text),
        };
        let dir = absolute(&path, cwd);
        if dir.extension().is_some_and(|e| e == "whl") {
            if !dir.is_file() {
                return Err(SpecError::NoSuchWheel(dir.display().to_string()));
            }
            return Ok(SourceSpec::Wheel { file: dir });
        }
        if !dir.is_dir() {
            return Err(SpecError::NotADirectory(dir.display().to_string()));
        }
        return Ok(SourceSpec::Path { dir });
    }
    if is_catalog_name(text) {
        return Ok(SourceSpec::Catalog {
            name: text.to_string(),
        });
    }
    // `a/b/c` that names an existing directory is that directory; otherwise GitHub.
    let local = absolute(Path::new(text), cwd);
    if local.is_dir() {
        return Ok(SourceSpec::Path { dir: local });
    }
    if local.extension().is_some_and(|e| e == "whl") && local.is_file() {
        return Ok(SourceSpec::Wheel { file: local });
    }
    let parts: Vec<&str> = text.split('/').collect();
    if parts.len() >= 2 && is_github_segment(parts[0]) && is_github_segment(parts[1]) {
        let subdir = if parts.len() > 2 {
            Some(check_subdir(&parts[2..].join("/"))?)
        } else {
            None
        };
        return Ok(SourceSpec::Github {
            owner: parts[0].to_string(),
            repo: parts[1].trim_end_matches(".git").to_string(),
            subdir,
        });
    }
    Err(SpecError::Unrecognised(text.to_string()))
}

impl SourceSpec {
    /// The spec as a user would type it again.
    pub fn display(&self) -> String {
        match self {
            SourceSpec::Catalog { name } => name.clone(),
            SourceSpec::Github {
                owner,
                repo,
                subdir,
            } => match subdir {
                Some(s) => format!("{owner}/{repo}/{s}"),
                None => format!("{owner}/{repo}"),
            },
            SourceSpec::Git { url, subdir } => {
                let url = crate::text::redact_credentials(url);
                match subdir {
                    Some(s) => format!("{url}#{s}"),
                    None => url.into_owned(),
                }
            }
            SourceSpec::Path { dir } => dir.display().to_string(),
            SourceSpec::Wheel { file } => file.display().to_string(),
            SourceSpec::Pypi { requirement } => format!("pypi:{requirement}"),
        }
    }

    /// The same source one directory further in (`sub` relative to this source's own
    /// subdirectory): how to name one plugin of a repository of several. A catalog name has
    /// no such form.
    pub fn with_subdir(&self, sub: &str) -> Option<SourceSpec> {
        let join = |base: &Option<String>| match base {
            Some(b) => format!("{b}/{sub}"),
            None => sub.to_string(),
        };
        match self {
            SourceSpec::Catalog { .. } | SourceSpec::Pypi { .. } | SourceSpec::Wheel { .. } => None,
            SourceSpec::Github {
                owner,
                repo,
                subdir,
            } => Some(SourceSpec::Github {
                owner: owner.clone(),
                repo: repo.clone(),
                subdir: Some(join(subdir)),
            }),
            SourceSpec::Git { url, subdir } => Some(SourceSpec::Git {
                url: url.clone(),
                subdir: Some(join(subdir)),
            }),
            SourceSpec::Path { dir } => Some(SourceSpec::Path { dir: dir.join(sub) }),
        }
    }

    /// The same source without credentials in its URL: what provenance records.
    pub fn without_credentials(&self) -> SourceSpec {
        match self {
            SourceSpec::Git { url, subdir } => SourceSpec::Git {
                url: crate::text::strip_credentials(url),
                subdir: subdir.clone(),
            },
            other => other.clone(),
        }
    }

    /// Whether the source went through catalog review.
    pub fn reviewed(&self) -> bool {
        matches!(self, SourceSpec::Catalog { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<SourceSpec, SpecError> {
        parse(s, Path::new("/nonexistent-cwd"), None)
    }

    #[test]
    fn forms() {
        assert_eq!(
            p("weather").unwrap(),
            SourceSpec::Catalog {
                name: "weather".into()
            }
        );
        assert_eq!(
            p("acme/hermes-tools/plugins/x").unwrap(),
            SourceSpec::Github {
                owner: "acme".into(),
                repo: "hermes-tools".into(),
                subdir: Some("plugins/x".into())
            }
        );
        assert_eq!(
            p("https://git.example/x.git#sub/dir").unwrap(),
            SourceSpec::Git {
                url: "https://git.example/x.git".into(),
                subdir: Some("sub/dir".into())
            }
        );
        assert_eq!(
            p("/").unwrap(),
            SourceSpec::Path {
                dir: PathBuf::from("/")
            }
        );
        let dir = tempfile::tempdir().unwrap();
        let wheel = dir.path().join("sky-1.0-py3-none-any.whl");
        std::fs::write(&wheel, b"PK").unwrap();
        for given in ["./sky-1.0-py3-none-any.whl", "sky-1.0-py3-none-any.whl"] {
            assert_eq!(
                parse(given, dir.path(), None).unwrap(),
                SourceSpec::Wheel {
                    file: wheel.clone()
                },
                "{given}"
            );
        }
        let pypi = p("pypi:Mnemosyne-Hermes[embeddings]>=0.7,<1").unwrap();
        assert_eq!(
            pypi,
            SourceSpec::Pypi {
                requirement: "Mnemosyne-Hermes[embeddings]>=0.7,<1".into()
            }
        );
        assert_eq!(pypi.display(), "pypi:Mnemosyne-Hermes[embeddings]>=0.7,<1");
        assert_eq!(pypi.with_subdir("x"), None);
    }

    #[test]
    fn refusals() {
        assert!(matches!(
            p("https://x/y#../etc"),
            Err(SpecError::BadSubdir(_))
        ));
        assert!(matches!(
            p("acme/x/a/../../b"),
            Err(SpecError::BadSubdir(_))
        ));
        assert!(matches!(
            p("https://x/y#/abs"),
            Err(SpecError::BadSubdir(_))
        ));
        assert!(matches!(
            p("Weather Plugin"),
            Err(SpecError::Unrecognised(_))
        ));
        assert!(matches!(
            p("./definitely-missing"),
            Err(SpecError::NotADirectory(_))
        ));
        assert!(matches!(
            p("./dist/missing-1.0-py3-none-any.whl"),
            Err(SpecError::NoSuchWheel(_))
        ));
        for bad in [
            "pypi:",
            "pypi:not a name",
            "pypi:sky @ https://x/sky.whl",
            "pypi:sky; python_version < '3'",
        ] {
            let error = p(bad).unwrap_err();
            assert!(
                matches!(error, SpecError::BadRequirement(..)),
                "{bad}: {error}"
            );
        }
    }
}
