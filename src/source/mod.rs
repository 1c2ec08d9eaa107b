//! Getting plugin code from where it lives (SRC-1, SRC-2, SRC-3): a catalog entry, GitHub,
//! any git URL, a local directory, or a local wheel file (a `pypi:` package is fetched through
//! the resolver, `manager::pypi`). Everything is fetched into a scratch directory the
//! caller owns; the package directory inside it is checked for escapes before anyone reads
//! it, and the provenance (what was asked, what commit was found) comes back with it.

pub mod catalog;
#[cfg(feature = "manager")]
pub mod git;
#[cfg(feature = "manager")]
pub mod remote_catalog;
pub mod spec;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use catalog::CatalogPin;
pub use spec::SourceSpec;

/// A catalog as configured: what the user gave (a directory, a git URL, a JSON feed) and the
/// directory it is read from (itself, or a remote catalog's cached copy). Messages name what
/// was given; the cache is an implementation detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogDir {
    /// The local directory of entry files.
    pub dir: PathBuf,
    /// The catalog as the user named it.
    pub given: String,
}

/// Where configuration for fetching comes from.
#[derive(Debug, Clone, Default)]
pub struct FetchOptions {
    /// Base URL for `owner/repo` sources (`HERMES_PLUGINS_GITHUB`, default `https://github.com`).
    pub github_base: Option<String>,
    /// The catalogs (`--catalog`, `HERMES_PLUGINS_CATALOG`), in their order of precedence:
    /// the first with an entry of a name gives it; every catalog's kill list applies.
    pub catalogs: Vec<CatalogDir>,
    /// Set when no catalog is configured and the official one (the default) cannot be had:
    /// why, so that a catalog name is refused with the reason rather than "none configured".
    pub catalog_unreachable: Option<String>,
}

/// Provenance of an installed plugin (SRC-3), as recorded in `installed.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// What the user asked for.
    pub spec: SourceSpec,
    /// The git URL fetched, for git-based sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The directory inside the repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subdir: Option<String>,
    /// The revision pinned with `--ref` (an off-catalog pin: `update` refuses to move it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_ref: Option<String>,
    /// The branch `update` follows, when not pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracked_ref: Option<String>,
    /// The exact commit (40 hex) of git sources, or of the local directory's repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// A local directory whose repository had uncommitted changes when copied.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dirty: bool,
    /// The catalog entry, for catalog sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog: Option<CatalogPin>,
    /// The distribution and the very wheel installed, for `pypi:` sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<PackagePin>,
    /// Whether the source went through catalog review; everything else is "unreviewed".
    pub reviewed: bool,
}

impl Provenance {
    /// The provenance of a plugin that is a wheel: from the package index (`url`, the file
    /// it was downloaded from) or a local file; unreviewed, no commit.
    pub fn of_wheel(spec: SourceSpec, url: Option<String>, pin: PackagePin) -> Provenance {
        Provenance {
            spec,
            url,
            subdir: None,
            pinned_ref: None,
            tracked_ref: None,
            commit: None,
            dirty: false,
            catalog: None,
            package: Some(pin),
            reviewed: false,
        }
    }

    /// What `update` moves: the commit of a git source or copied directory, the version of a
    /// distribution from the package index.
    pub fn revision(&self) -> Option<String> {
        self.commit
            .clone()
            .or_else(|| self.package.as_ref().map(|p| p.version.clone()))
    }
}

/// The wheel of a plugin that is a Python distribution: what was validated and stored, and
/// what the generation's environment must install (the lock's file for that distribution has
/// to be this one, byte for byte).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackagePin {
    /// The distribution's name (normalised, PEP 503).
    pub name: String,
    /// Its version.
    pub version: String,
    /// The wheel's file name.
    pub filename: String,
    /// The wheel's sha256 (hex).
    pub sha256: String,
}

/// A fetched plugin: its directory (inside the scratch directory) and provenance.
#[derive(Debug)]
pub struct Fetched {
    /// The plugin package directory.
    pub dir: PathBuf,
    /// Where it came from.
    pub provenance: Provenance,
}

/// Why a fetch failed.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// A catalog problem.
    #[error(transparent)]
    Catalog(#[from] catalog::CatalogError),
    /// A git problem.
    #[cfg(feature = "manager")]
    #[error(transparent)]
    Git(#[from] git::GitError),
    /// The subdirectory is not a directory inside the checkout.
    #[error("{0}")]
    Subdir(String),
    /// `--ref` with a source that has no revisions.
    #[error("--ref applies to git sources; {0} is a local directory")]
    RefOnPath(String),
    /// A local wheel that cannot be used.
    #[error("{0}")]
    Wheel(String),
    /// A package-index source, which the resolver fetches (`manager::pypi`), not this module.
    #[error("{0} comes from the package index: it is fetched through the resolver")]
    FromIndex(String),
    /// `--ref` with a catalog source (the catalog pins the commit).
    #[error(
        "--ref cannot be combined with catalog entry `{0}`: the catalog pins its commit (install from the repository URL to pin another revision)"
    )]
    RefOnCatalog(String),
}

/// Resolves `subdir` inside `root`, refusing anything that leaves it through `..`, an
/// absolute path or a symlink.
pub fn contained_subdir(root: &Path, subdir: Option<&str>) -> Result<PathBuf, FetchError> {
    let Some(subdir) = subdir else {
        return Ok(root.to_path_buf());
    };
    let subdir = spec::check_subdir(subdir).map_err(|e| FetchError::Subdir(e.to_string()))?;
    let mut current = root.to_path_buf();
    for segment in subdir.split('/') {
        current.push(segment);
        let meta = std::fs::symlink_metadata(&current).map_err(|_| {
            FetchError::Subdir(format!(
                "subdirectory `{subdir}` does not exist in the repository"
            ))
        })?;
        if meta.file_type().is_symlink() {
            return Err(FetchError::Subdir(format!(
                "subdirectory `{subdir}` goes through a symlink ({segment}); refused"
            )));
        }
        if !meta.is_dir() {
            return Err(FetchError::Subdir(format!(
                "subdirectory `{subdir}` is not a directory"
            )));
        }
    }
    Ok(current)
}

/// The git URL of an `owner/repo` source.
pub fn github_url(base: Option<&str>, owner: &str, repo: &str) -> String {
    let base = base.unwrap_or("https://github.com").trim_end_matches('/');
    format!("{base}/{owner}/{repo}")
}

/// The repository a git source is fetched from, now: an `owner/repo` source goes to GitHub,
/// or to the `HERMES_PLUGINS_GITHUB` mirror when this run names one (what was asked is
/// recorded, not the mirror, so `update` and `outdated` go where this run's setting says).
/// `None` for sources that are not git repositories.
pub fn git_url(spec: &SourceSpec, options: &FetchOptions) -> Option<String> {
    match spec {
        SourceSpec::Github { owner, repo, .. } => {
            Some(github_url(options.github_base.as_deref(), owner, repo))
        }
        SourceSpec::Git { url, .. } => Some(url.clone()),
        _ => None,
    }
}

/// Fetches `spec` (at `rev` when given) into `scratch`, an empty directory the caller owns.
#[cfg(feature = "manager")]
pub fn fetch(
    spec: &SourceSpec,
    rev: Option<&str>,
    options: &FetchOptions,
    scratch: &Path,
    progress: git::Progress<'_>,
) -> Result<Fetched, FetchError> {
    let checkout_dir = scratch.join("checkout");
    match spec {
        SourceSpec::Path { dir } => {
            if rev.is_some() {
                return Err(FetchError::RefOnPath(dir.display().to_string()));
            }
            let (commit, dirty) = match git::describe_local(dir) {
                Some((c, d)) => (Some(c), d),
                None => (None, false),
            };
            Ok(Fetched {
                dir: dir.clone(),
                provenance: Provenance {
                    spec: spec.clone(),
                    url: None,
                    subdir: None,
                    pinned_ref: None,
                    tracked_ref: None,
                    commit,
                    dirty,
                    catalog: None,
                    package: None,
                    reviewed: false,
                },
            })
        }
        SourceSpec::Catalog { name } => {
            if rev.is_some() {
                return Err(FetchError::RefOnCatalog(name.clone()));
            }
            let pin = catalog::lookup(options, name)?;
            let checkout = git::clone_at(&pin.repo, Some(&pin.sha), &checkout_dir, progress)?;
            let dir = contained_subdir(&checkout_dir, pin.subdir.as_deref())?;
            Ok(Fetched {
                dir,
                provenance: Provenance {
                    spec: spec.clone(),
                    url: Some(pin.repo.clone()),
                    subdir: pin.subdir.clone(),
                    pinned_ref: None,
                    tracked_ref: None,
                    commit: Some(checkout.commit),
                    dirty: false,
                    catalog: Some(pin),
                    package: None,
                    reviewed: true,
                },
            })
        }
        SourceSpec::Github { subdir, .. } | SourceSpec::Git { subdir, .. } => {
            let url = git_url(spec, options).expect("a git source has a URL");
            fetch_git(spec, url, subdir.clone(), rev, &checkout_dir, progress)
        }
        SourceSpec::Pypi { .. } => Err(FetchError::FromIndex(spec.display())),
        SourceSpec::Wheel { file } => {
            if rev.is_some() {
                return Err(FetchError::RefOnPath(file.display().to_string()));
            }
            fetch_wheel(spec, file, scratch)
        }
    }
}

/// The largest local wheel copied (the installer's own bound applies again when admitting it).
#[cfg(feature = "manager")]
const WHEEL_FILE_LIMIT: u64 = 1 << 30;

/// A local wheel copied alone into `scratch/wheel/` (a regular file, never through a link),
/// pinned by its name, version (from its file name) and sha256.
#[cfg(feature = "manager")]
fn fetch_wheel(spec: &SourceSpec, file: &Path, scratch: &Path) -> Result<Fetched, FetchError> {
    let shown = file.display().to_string();
    let bad = |why: String| FetchError::Wheel(format!("{shown}: {why}"));
    let filename = file
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| n.ends_with(".whl") && !n.starts_with('.'))
        .ok_or_else(|| bad("not a wheel file name".to_string()))?;
    let mut parts = filename.trim_end_matches(".whl").split('-');
    let (Some(name), Some(version)) = (parts.next(), parts.next()) else {
        return Err(bad("a wheel is named NAME-VERSION-…-TAG.whl".to_string()));
    };
    let bytes = crate::files::read_regular(file, WHEEL_FILE_LIMIT)
        .map_err(|e| bad(e.to_string()))?
        .ok_or_else(|| bad("no such file".to_string()))?;
    let dir = scratch.join("wheel");
    std::fs::create_dir_all(&dir).map_err(|e| bad(e.to_string()))?;
    std::fs::write(dir.join(filename), &bytes).map_err(|e| bad(e.to_string()))?;
    let pin = PackagePin {
        name: name.to_ascii_lowercase().replace(['_', '.'], "-"),
        version: version.to_string(),
        filename: filename.to_string(),
        sha256: crate::hash::sha256_hex(&bytes),
    };
    Ok(Fetched {
        dir,
        provenance: Provenance::of_wheel(spec.clone(), None, pin),
    })
}

#[cfg(feature = "manager")]
fn fetch_git(
    spec: &SourceSpec,
    url: String,
    subdir: Option<String>,
    rev: Option<&str>,
    checkout_dir: &Path,
    progress: git::Progress<'_>,
) -> Result<Fetched, FetchError> {
    let checkout = git::clone_at(&url, rev, checkout_dir, progress)?;
    let dir = contained_subdir(checkout_dir, subdir.as_deref())?;
    // Credentials in the URL are used for this fetch only; provenance never records them.
    Ok(Fetched {
        dir,
        provenance: Provenance {
            spec: spec.without_credentials(),
            url: Some(crate::text::strip_credentials(&url)),
            subdir,
            pinned_ref: rev.map(str::to_string),
            tracked_ref: checkout.tracked_ref,
            commit: Some(checkout.commit),
            dirty: false,
            catalog: None,
            package: None,
            reviewed: false,
        },
    })
}
