//! `outdated`: what `update` could move, without moving anything — per installed plugin the
//! commit it runs against the newest its source offers (the catalog's current pin, the
//! tracked branch's head, the newest tag, the local directory's `HEAD`), and per locked
//! Python package the newest version every requirement and the quarantine admit.

use serde::Serialize;

use super::{Context, ManagerError};
use crate::exit::Code;
use crate::generation::current;
use crate::generation::doc::GenerationDoc;
use crate::resolve;
use crate::source::{SourceSpec, catalog, git};
use crate::state::installed::InstalledPlugin;
use crate::store::Store;

/// One installed plugin against its source.
#[derive(Debug, Clone, Serialize)]
pub struct PluginStatus {
    /// The plugin key.
    pub key: String,
    /// The source as the user gave it.
    pub source: String,
    /// The commit installed (the version, for a distribution from the package index).
    pub current: Option<String>,
    /// The commit `update` would move to: the catalog pin, the tracked branch's head, or the
    /// local directory's `HEAD` (the version a fresh resolution picks, for the package index).
    pub latest: Option<String>,
    /// The highest version-like tag of a git source (`v1.2.0`), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newest_tag: Option<String>,
    /// Where it stands against its source.
    pub status: SourceStatus,
    /// Why the status is what it is, when there is more to say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Where an installed plugin stands against its source (`outdated`'s status column and
/// JSON `status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceStatus {
    /// What `update` would fetch is what is installed.
    UpToDate,
    /// The source moved on: `update` would fetch another commit or version.
    Outdated,
    /// Installed with `--ref`: `update` leaves it.
    Pinned,
    /// A local directory or wheel file with new commits or changes: `update` copies it again.
    Changed,
    /// Not known (the source could not be asked; see `note`).
    Unknown,
}

impl SourceStatus {
    /// The word the JSON and the human output use.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceStatus::UpToDate => "up-to-date",
            SourceStatus::Outdated => "outdated",
            SourceStatus::Pinned => "pinned",
            SourceStatus::Changed => "changed",
            SourceStatus::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for SourceStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// One locked package with a newer admissible version.
#[derive(Debug, Clone, Serialize)]
pub struct PackageStatus {
    /// The package name.
    pub name: String,
    /// The version in the current generation's lock.
    pub current: String,
    /// The newest version a fresh resolution picks (every requirement, the quarantine).
    pub latest: String,
}

/// How many sources are asked at once: `git ls-remote` waits on the network, not the CPU.
const QUERIES: usize = 8;

/// Every installed plugin against its source, in key order (no network for catalog and
/// local sources; `git ls-remote` for git sources, [`QUERIES`] at a time, each failure
/// reported on its row).
pub fn plugins(cx: &Context) -> Result<Vec<PluginStatus>, ManagerError> {
    let installed = super::installed(cx)?;
    let plugins: Vec<&InstalledPlugin> = installed.plugins.values().collect();
    Ok(crate::parallel::map(&plugins, QUERIES, None, |p| {
        plugin_status(cx, p)
    }))
}

fn plugin_status(cx: &Context, p: &InstalledPlugin) -> PluginStatus {
    let mut row = PluginStatus {
        key: p.key.clone(),
        source: p.source.spec.display(),
        current: p.source.commit.clone(),
        latest: None,
        newest_tag: None,
        status: SourceStatus::Unknown,
        note: None,
    };
    if let Some(pinned) = &p.source.pinned_ref {
        row.status = SourceStatus::Pinned;
        row.note = Some(format!("pinned to `{pinned}` with --ref"));
        return row;
    }
    match &p.source.spec {
        SourceSpec::Catalog { name } => match catalog::lookup(&cx.fetch, name) {
            Ok(pin) => row.latest = Some(pin.sha),
            Err(e) => row.note = Some(e.to_string()),
        },
        SourceSpec::Path { dir } => match git::describe_local(dir) {
            Some((commit, dirty)) => {
                row.latest = Some(commit);
                if dirty {
                    row.status = SourceStatus::Changed;
                    row.note = Some("the directory has uncommitted changes".into());
                    return row;
                }
            }
            None => {
                row.note = Some(format!(
                    "{} is not a git work tree: `update` copies it again",
                    dir.display()
                ));
                return row;
            }
        },
        SourceSpec::Wheel { file } => {
            // The file is the source: unchanged, or changed since (`update` copies it again).
            row.current = p.source.package.as_ref().map(|pin| pin.version.clone());
            let now = crate::files::read_regular(file, 1 << 30)
                .ok()
                .flatten()
                .map(|b| crate::hash::sha256_hex(&b));
            let pinned = p.source.package.as_ref().map(|pin| pin.sha256.clone());
            match now {
                None => row.note = Some(format!("{} is no longer there", file.display())),
                Some(sha) if Some(&sha) == pinned.as_ref() => {
                    row.latest = row.current.clone();
                    row.status = SourceStatus::UpToDate;
                }
                Some(_) => {
                    row.status = SourceStatus::Changed;
                    row.note = Some("the wheel file changed: `update` installs it".into());
                }
            }
            return row;
        }
        SourceSpec::Pypi { requirement } => {
            // Versions, not commits: the release installed against the one a resolution of
            // the same requirement picks now.
            row.current = p.source.package.as_ref().map(|pin| pin.version.clone());
            match super::pypi::release(cx, &p.source.spec, requirement) {
                Ok(release) => row.latest = Some(release.version),
                Err(e) => {
                    row.note = Some(e.to_string());
                    return row;
                }
            }
        }
        SourceSpec::Github { .. } | SourceSpec::Git { .. } => {
            // Where `update` would fetch it from (a GitHub source through this run's mirror,
            // if any), not the URL recorded at install.
            let Some(url) = crate::source::git_url(&p.source.spec, &cx.fetch) else {
                row.note = Some("no repository URL is recorded".into());
                return row;
            };
            match git::remote_refs(&url) {
                Ok(refs) => {
                    let wanted = match &p.source.tracked_ref {
                        Some(branch) => format!("refs/heads/{branch}"),
                        None => "HEAD".to_string(),
                    };
                    row.latest = refs
                        .iter()
                        .find(|(name, _)| *name == wanted)
                        .map(|(_, oid)| oid.clone());
                    row.newest_tag = newest_tag(&refs);
                    if row.latest.is_none() {
                        row.note = Some(format!("the repository has no `{wanted}` any more"));
                        return row;
                    }
                }
                Err(e) => {
                    row.note = Some(e.to_string());
                    return row;
                }
            }
        }
    }
    if row.latest.is_some() {
        let moved = row.latest != row.current;
        row.status = match (&p.source.spec, moved) {
            (_, false) => SourceStatus::UpToDate,
            (SourceSpec::Path { .. }, true) => SourceStatus::Changed,
            (_, true) => SourceStatus::Outdated,
        };
    }
    row
}

/// The highest tag whose name (less a leading `v`) is a version; `None` without one.
fn newest_tag(refs: &[(String, String)]) -> Option<String> {
    refs.iter()
        .filter_map(|(name, _)| name.strip_prefix("refs/tags/"))
        .filter(|tag| !tag.ends_with("^{}"))
        .filter_map(|tag| {
            let version: uv_pep440::Version = tag.trim_start_matches('v').parse().ok()?;
            Some((version, tag))
        })
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, tag)| tag.to_string())
}

/// The current generation's locked packages that a fresh resolution (no preference for the
/// lock) moves to a newer version; empty when nothing is published.
pub fn packages(cx: &Context) -> Result<Vec<PackageStatus>, ManagerError> {
    let Some(number) = current::current_number(&cx.layout) else {
        return Ok(Vec::new());
    };
    let doc =
        GenerationDoc::read(&cx.layout.generation(number)).map_err(ManagerError::environment)?;
    let store = Store::open(cx.layout.store())
        .map_err(|e| ManagerError::caused(Code::Io, "cannot open the store".to_string(), &e))?;
    let plugins = super::resolution::store_inputs(&store, &doc.plugins)?;
    let mut request = super::resolution::request(cx, plugins, None);
    request
        .index
        .find_links
        .extend(super::resolution::wheel_links(&store, &doc.plugins));
    let fresh = resolve::run(&request)?.lock;
    let newest = fresh.versions();
    Ok(doc
        .lock
        .versions()
        .into_iter()
        .filter_map(|(name, version)| {
            let latest = newest.get(name)?;
            let newer = match (
                version.parse::<uv_pep440::Version>(),
                latest.parse::<uv_pep440::Version>(),
            ) {
                (Ok(a), Ok(b)) => b > a,
                _ => latest != &version,
            };
            newer.then(|| PackageStatus {
                name: name.to_string(),
                current: version.to_string(),
                latest: latest.to_string(),
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_tag_is_the_highest_version() {
        let refs: Vec<(String, String)> = [
            "HEAD",
            "refs/heads/main",
            "refs/tags/v1.10.0",
            "refs/tags/v1.9.0",
            "refs/tags/v1.10.0^{}",
            "refs/tags/nightly",
            "refs/tags/2.0.0rc1",
        ]
        .iter()
        .map(|n| (n.to_string(), "0".repeat(40)))
        .collect();
        assert_eq!(newest_tag(&refs).as_deref(), Some("2.0.0rc1"));
        assert_eq!(newest_tag(&refs[..4]).as_deref(), Some("v1.10.0"));
        assert_eq!(newest_tag(&refs[..2]), None);
    }
}
