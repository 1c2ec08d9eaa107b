//! Finding a catalog entry by name for `install NAME` / `update`: a catalog is a directory of
//! one YAML file per entry (CAT-1). Only the fields a fetch needs are read here; the full
//! entry rules are the catalog toolchain's.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::located::{Limits, yaml};

/// The pin a catalog entry gives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogPin {
    /// Entry name.
    pub name: String,
    /// Repository URL.
    pub repo: String,
    /// Pinned commit (40 lowercase hex).
    pub sha: String,
    /// Directory inside the repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subdir: Option<String>,
    /// `official` or `community`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
    /// The entry file.
    pub file: PathBuf,
    /// The catalog it was found in, as the user named it (`--catalog`, `HERMES_PLUGINS_CATALOG`,
    /// the official feed): `update` and `outdated` read it again without being told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog: Option<String>,
    /// Ids of security findings the catalog's reviewers accepted for this pin
    /// (`accepted_findings`): install takes them as `--accept-finding`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepted_findings: Vec<String>,
}

/// Why an entry could not be used.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// Catalogs turned off (`none`).
    #[error(
        "`{0}` is a catalog name, but catalogs are turned off (HERMES_PLUGINS_CATALOG=none): pass --catalog DIR|URL"
    )]
    NoCatalog(String),
    /// The official catalog, used because none is configured, cannot be fetched and no copy
    /// of it is kept.
    #[error(
        "`{name}` is a catalog name, but {reason}: pass --catalog DIR|URL to use another catalog"
    )]
    Unreachable {
        /// Name asked for.
        name: String,
        /// Why the official catalog is missing (its URL and the fetch's failure).
        reason: String,
    },
    /// No entry has that name.
    #[error("no entry named `{name}` in the catalog {dir}")]
    NotFound {
        /// The catalog directories searched, in order.
        dir: String,
        /// Name asked for.
        name: String,
    },
    /// The entry is malformed.
    #[error("{file}: {message}")]
    Bad {
        /// Entry file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// The directory cannot be read.
    #[error("cannot read the catalog {0}: {1}")]
    Io(String, std::io::Error),
}

/// The entry files of one catalog directory (`*.yaml`/`*.yml` but the kill list), sorted.
pub fn entry_files(dir: &Path) -> Result<Vec<PathBuf>, CatalogError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| CatalogError::Io(dir.display().to_string(), e))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "yaml" || e == "yml")
                && p.file_stem().is_some_and(|s| s != "removed")
        })
        .collect();
    files.sort();
    Ok(files)
}

fn read_pin(file: &Path) -> Result<Option<CatalogPin>, CatalogError> {
    let bad = |message: String| CatalogError::Bad {
        file: file.display().to_string(),
        message,
    };
    let text = std::fs::read_to_string(file)
        .map_err(|e| CatalogError::Io(file.display().to_string(), e))?;
    let parsed = yaml::parse(&text, Limits::default()).map_err(|e| bad(e.to_string()))?;
    let root = parsed.root;
    let field = |key: &str| {
        root.get(key)
            .and_then(|e| e.value.as_str())
            .map(str::to_string)
    };
    let Some(name) = field("name") else {
        return Ok(None);
    };
    let repo = field("repo").ok_or_else(|| bad("`repo` is missing".into()))?;
    let sha = field("sha").ok_or_else(|| bad("`sha` is missing".into()))?;
    if sha.len() != 40
        || !sha
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(bad(format!(
            "`sha` must be exactly 40 lowercase hex characters, found `{sha}`"
        )));
    }
    if repo.chars().any(char::is_control) {
        return Err(bad("`repo` contains control characters".into()));
    }
    let subdir = match field("subdir") {
        // `subdir: ""` (upstream's documented default) is the repository root.
        Some(s) if s.is_empty() => None,
        Some(s) => Some(super::spec::check_subdir(&s).map_err(|e| bad(e.to_string()))?),
        None => None,
    };
    let accepted_findings = root
        .get("accepted_findings")
        .and_then(|e| e.value.as_seq())
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.get("id").and_then(|e| e.value.as_str()))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    Ok(Some(CatalogPin {
        name,
        repo,
        sha,
        subdir,
        tier: field("tier"),
        file: file.to_path_buf(),
        accepted_findings,
        catalog: None,
    }))
}

/// Looks `name` up in the configured catalogs, in their order of precedence: the first
/// catalog with an entry of that name gives it (a later catalog's entry of the same name is
/// shadowed, never merged). Within a catalog, `<name>.yaml` is read first, then every entry.
pub fn lookup(options: &super::FetchOptions, name: &str) -> Result<CatalogPin, CatalogError> {
    let dirs = &options.catalogs;
    if dirs.is_empty() {
        return Err(match &options.catalog_unreachable {
            Some(reason) => CatalogError::Unreachable {
                name: name.to_string(),
                reason: reason.clone(),
            },
            None => CatalogError::NoCatalog(name.to_string()),
        });
    }
    for catalog in dirs {
        if let Some(mut pin) = lookup_in(&catalog.dir, name)? {
            pin.catalog = Some(catalog.given.clone());
            return Ok(pin);
        }
    }
    Err(CatalogError::NotFound {
        dir: dirs
            .iter()
            .map(|d| d.given.clone())
            .collect::<Vec<_>>()
            .join(", "),
        name: name.to_string(),
    })
}

/// The entry named `name` in one catalog directory, if it has one.
fn lookup_in(dir: &Path, name: &str) -> Result<Option<CatalogPin>, CatalogError> {
    let files = entry_files(dir)?;
    let (named, rest): (Vec<_>, Vec<_>) = files
        .into_iter()
        .partition(|p| p.file_stem().is_some_and(|s| s == name));
    for file in named.into_iter().chain(rest) {
        if let Some(pin) = read_pin(&file)?
            && pin.name == name
        {
            return Ok(Some(pin));
        }
    }
    Ok(None)
}
