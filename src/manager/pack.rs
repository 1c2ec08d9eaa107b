//! `pack install` and `pack export`: Hermes 0.22's plugin packs ([`crate::pack`]) as one
//! transaction. Hermes installs a pack one plugin at a time (a failure halfway leaves half a
//! pack); here every plugin is fetched at its pinned commit and validated first, then all are
//! stored, enabled and seeded and published as ONE generation — or nothing changes.

use std::collections::BTreeSet;

use super::admission::{approve_core_patch, core_patch_item};
use super::apply::{self, Applied, Change, GrantFlags, SelectionEdit};
use super::plan::PlanMode;
use super::prepare::{Accept, keep, prepare};
use super::{Context, DepsConsent, Feedback, ManagerError, Prompter};
use crate::exit::Code;
use crate::pack::{Exported, ExportedEntry, Pack, PackEntry};
use crate::source::{SourceSpec, catalog};

/// What `pack install` should do.
#[derive(Debug, Clone)]
pub struct PackRequest {
    /// The pack, parsed.
    pub pack: Pack,
    /// Dependency consent.
    pub deps: DepsConsent,
    /// `--force`: install despite validation errors.
    pub force: bool,
    /// `--allow-core-patch`.
    pub allow_core_patch: bool,
    /// `--allow-removed`.
    pub allow_removed: bool,
}

/// What `pack install` did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PackOutcome {
    /// The pack's name.
    pub pack: String,
    /// Each entry as written in the pack and the key it was installed as.
    pub plugins: Vec<(String, String)>,
    /// The plugins whose config was seeded.
    pub seeded: Vec<String>,
    /// Skills the pack lists (not installed).
    pub skills: Vec<String>,
    /// Validation warnings.
    pub warnings: Vec<String>,
    /// The publication.
    pub applied: Applied,
}

/// The source a pack entry installs from, at its commit: a repository entry as written
/// (`owner/repo` on GitHub, else a git URL) with its `subdir`; a catalog name as the
/// catalog's repository and directory — at the pack's commit, as Hermes installs it.
pub fn source_of(cx: &Context, entry: &PackEntry) -> Result<SourceSpec, ManagerError> {
    let (repo, subdir) = match (&entry.repo, &entry.name) {
        (Some(repo), _) => (repo.clone(), entry.subdir.clone()),
        (None, Some(name)) => {
            let pin = catalog::lookup(&cx.fetch, name).map_err(|e| {
                ManagerError::coded(
                    Code::NotFound,
                    format!("pack entry `{name}` (line {}): {e}", entry.line),
                )
            })?;
            (pin.repo, pin.subdir)
        }
        (None, None) => unreachable!("the pack parser requires a name or a repo"),
    };
    let text = match &subdir {
        Some(sub) if repo.contains("://") || repo.starts_with("git@") => format!("{repo}#{sub}"),
        Some(sub) => format!("{repo}/{sub}"),
        None => repo.clone(),
    };
    let spec = crate::source::spec::parse(&text, &cx.layout.home, None).map_err(|e| {
        ManagerError::Usage(format!(
            "pack entry `{}` (line {}): {e}",
            entry.display(),
            entry.line
        ))
    })?;
    match spec {
        SourceSpec::Github { .. } | SourceSpec::Git { .. } => Ok(spec),
        other => Err(ManagerError::Usage(format!(
            "pack entry `{}` (line {}): `{}` is not a repository (owner/repo or a git URL)",
            entry.display(),
            entry.line,
            other.display()
        ))),
    }
}

/// Installs every plugin of the pack at its commit, enables each in the profile and seeds its
/// config, in one generation. Nothing is published unless all of it is.
pub fn install(
    cx: &Context,
    request: &PackRequest,
    prompter: &mut dyn Prompter,
    feedback: &mut dyn Feedback,
) -> Result<PackOutcome, ManagerError> {
    let pack = &request.pack;
    let specs = pack
        .plugins
        .iter()
        .map(|e| source_of(cx, e))
        .collect::<Result<Vec<_>, _>>()?;
    for spec in &specs {
        super::check_removed_source(cx, spec, request.allow_removed, feedback)?;
    }
    let mut prepared = Vec::new();
    for (entry, spec) in pack.plugins.iter().zip(&specs) {
        feedback.note(&format!(
            "pack entry `{}` at {}",
            entry.display(),
            &entry.commit[..12]
        ));
        prepared.push(prepare(
            cx,
            spec,
            Some(&entry.commit),
            request.force,
            Accept::Strict(&[]),
            feedback,
        )?);
    }
    let mut keys = BTreeSet::new();
    for (entry, one) in pack.plugins.iter().zip(&prepared) {
        if !keys.insert(one.plugin.key.clone()) {
            return Err(ManagerError::coded(
                Code::Invalid,
                format!(
                    "the pack installs `{}` twice (again as entry `{}`, line {}); nothing was changed",
                    one.plugin.key,
                    entry.display(),
                    entry.line
                ),
            ));
        }
        if let Some(item) = core_patch_item(&one.plugin.key, &one.core_patches, &[]) {
            approve_core_patch(&item, request.allow_core_patch, prompter)?;
        }
    }
    let _lock = super::begin_writing(cx, &format!("pack install {}", pack.name), feedback)?;
    let mut installed = super::installed(cx)?;
    let mut plugins = Vec::new();
    let mut edits = Vec::new();
    let mut seeded = Vec::new();
    let mut warnings = Vec::new();
    for (entry, one) in pack.plugins.iter().zip(prepared) {
        let (plugin, said) = keep(cx, one, false, request.allow_removed, feedback)?;
        warnings.extend(said);
        let key = plugin.key.clone();
        edits.push((cx.profile.clone(), SelectionEdit::Enable(key.clone())));
        if let Some(seed) = entry.seed(pack, &key) {
            edits.push((
                cx.profile.clone(),
                SelectionEdit::Seed(key.clone(), seed.to_vec()),
            ));
            seeded.push(key.clone());
        }
        plugins.push((entry.display(), key.clone()));
        installed.plugins.insert(key, plugin);
    }
    let targets = plugins.iter().map(|(_, k)| k.clone()).collect();
    let applied = apply::apply(
        cx,
        Change {
            operation: format!("pack install {}", pack.name),
            edits,
            installed: Some(installed),
            deps: request.deps,
            grants: GrantFlags {
                targets,
                grant: Vec::new(),
                revoke: Vec::new(),
            },
            accept_surface: false,
            plan: PlanMode::Off,
            plan_notes: Vec::new(),
        },
        prompter,
        feedback,
    )?;
    Ok(PackOutcome {
        pack: pack.name.clone(),
        plugins,
        seeded,
        skills: pack.skills.clone(),
        warnings,
        applied,
    })
}

/// The installed plugins (`enabled_only`: those enabled in the profile) as a pack: each from a
/// git source pinned to its commit, with its `plugins.entries` settings less what a pack may
/// not carry; the others are named in warnings.
pub fn export(cx: &Context, name: &str, enabled_only: bool) -> Result<Exported, ManagerError> {
    let installed = super::installed(cx)?;
    let path = cx.config_path(&cx.profile);
    let config = std::fs::read_to_string(&path).unwrap_or_default();
    let profile = crate::state::profiles::profile_from_text(&cx.profile, &path, &config)
        .map_err(|e| ManagerError::coded(Code::Invalid, e.to_string()))?;
    let enabled: BTreeSet<&String> = profile.selected().collect();
    let mut out = Exported {
        name: name.to_string(),
        plugins: Vec::new(),
        config: Vec::new(),
        warnings: Vec::new(),
    };
    for (key, plugin) in &installed.plugins {
        if enabled_only && !enabled.contains(key) {
            continue;
        }
        let source = &plugin.source;
        let (Some(url), Some(commit)) = (&source.url, &source.commit) else {
            out.warnings.push(format!(
                "{key}: from {}, which a pack cannot pin (a pack names git repositories at a commit)",
                source.spec.display()
            ));
            continue;
        };
        if source.package.is_some() || source.dirty {
            out.warnings.push(format!(
                "{key}: from {}, which a pack cannot pin (a pack names git repositories at a commit)",
                source.spec.display()
            ));
            continue;
        }
        // `owner/repo` for GitHub, as packs write it; any other host by its URL.
        let repo = crate::repo_url::normalize(url)
            .strip_prefix("github.com/")
            .filter(|slug| slug.split('/').count() == 2)
            .map_or_else(|| url.clone(), str::to_string);
        out.plugins.push(ExportedEntry {
            repo,
            commit: commit.clone(),
            subdir: source.subdir.clone(),
        });
        if let Ok(Some(seed)) = crate::state::config_edit::read_entry(&config, key, &[]) {
            out.config.push((key.clone(), seed));
        }
    }
    Ok(out)
}
