//! `install`, `update` and `remove`: fetching into the store, validating, recording in
//! `installed.json`, and handing selection changes to [`super::apply`].

use std::path::Path;

use super::apply::{self, Applied, Change, SelectionEdit};
use super::consent_step::GrantFlags;
use super::{Context, DepsConsent, Feedback, ManagerError, Prompter};
use crate::check;
use crate::consent::surface::{Surface, SurfaceDiff};
use crate::diag::Severity;
use crate::package::{self, Content, Mode};
use crate::source::{self, Fetched, SourceSpec};
use crate::state::installed::{Installed, InstalledPlugin};
use crate::store::Store;

/// What `install` should do.
#[derive(Debug, Clone)]
pub struct InstallRequest {
    /// The source as parsed.
    pub spec: SourceSpec,
    /// `--ref`.
    pub rev: Option<String>,
    /// `--enable`.
    pub enable: bool,
    /// Dependency consent.
    pub deps: DepsConsent,
    /// `--force`: install despite validation errors (never despite a `dangerous` verdict).
    pub force: bool,
    /// `--grant` / `--allow-tool-override` (granted) and `--no-allow-tool-override` (revoked).
    pub grant: Vec<String>,
    /// Capabilities revoked by flag.
    pub revoke: Vec<String>,
    /// `--yes`: accept what a replacement adds to an active plugin's surface.
    pub yes: bool,
    /// `--allow-removed`: install even if the catalog's kill list names it.
    pub allow_removed: bool,
}

/// What `install` did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct InstallOutcome {
    /// The plugin key.
    pub key: String,
    /// The installed record.
    pub plugin: InstalledPlugin,
    /// Whether the plugin is enabled in the profile now.
    pub enabled: bool,
    /// Validation warnings shown.
    pub warnings: Vec<String>,
    /// The publication, when one happened.
    pub applied: Option<Applied>,
}

/// Validates a fetched package: errors block (unless `force`), a dangerous verdict always
/// blocks. Returns the loaded package and the warnings.
fn validate(
    dir: &Path,
    force: bool,
) -> Result<(package::LoadedPackage, Vec<String>), ManagerError> {
    let loaded = package::load_dir(dir, Mode::Validate).map_err(|e| {
        ManagerError::Refused(format!("{}: not a plugin package: {e}", dir.display()))
    })?;
    let outcome = check::run(&loaded, &check::Context::default())
        .map_err(|e| ManagerError::Environment(e.to_string()))?;
    let dangerous = outcome
        .analysis
        .as_ref()
        .is_some_and(|a| a.verdict.as_str() == "dangerous");
    let describe = |d: &crate::diag::Diagnostic| {
        format!(
            "{}:{}: [{}] {}",
            d.file,
            d.pos.line,
            d.check.as_str(),
            d.message
        )
    };
    let errors: Vec<String> = outcome
        .findings
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(describe)
        .collect();
    let warnings: Vec<String> = outcome
        .findings
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(describe)
        .collect();
    if dangerous {
        return Err(ManagerError::Refused(format!(
            "`{}` is dangerous (security scan); it cannot be installed, not even with --force:\n  {}",
            loaded.name(),
            errors.join("\n  ")
        )));
    }
    if !errors.is_empty() && !force {
        return Err(ManagerError::Refused(format!(
            "`{}` does not validate; nothing was installed (--force installs it anyway):\n  {}",
            loaded.name(),
            errors.join("\n  ")
        )));
    }
    if !loaded.accepted() {
        return Err(ManagerError::Refused(format!(
            "`{}` cannot be loaded at all: {}",
            loaded.name(),
            errors.join("; ")
        )));
    }
    Ok((loaded, warnings))
}

fn fetch(
    cx: &Context,
    spec: &SourceSpec,
    rev: Option<&str>,
    scratch: &Path,
    feedback: &mut dyn Feedback,
) -> Result<Fetched, ManagerError> {
    feedback.phase(&format!("fetching {}", spec.display()));
    let fetched = source::fetch(spec, rev, &cx.fetch, scratch, &mut |r, t| {
        feedback.transfer(r, t)
    });
    feedback.done();
    fetched.map_err(|e| match e {
        source::FetchError::Git(g) => ManagerError::Environment(g.to_string()),
        source::FetchError::Catalog(c) => ManagerError::Usage(c.to_string()),
        other => ManagerError::Refused(other.to_string()),
    })
}

/// Fetches, validates and stores a plugin; returns its installed record.
fn fetch_and_store(
    cx: &Context,
    spec: &SourceSpec,
    rev: Option<&str>,
    force: bool,
    feedback: &mut dyn Feedback,
) -> Result<(InstalledPlugin, Vec<String>), ManagerError> {
    std::fs::create_dir_all(cx.layout.tmp())?;
    let scratch = tempfile::Builder::new()
        .prefix("fetch-")
        .tempdir_in(cx.layout.tmp())?;
    let fetched = fetch(cx, spec, rev, scratch.path(), feedback)?;
    let (loaded, warnings) = validate(&fetched.dir, force)?;
    let store = Store::open(cx.layout.store())?;
    let entry = store
        .put(&fetched.dir)
        .map_err(|e| ManagerError::Refused(e.to_string()))?;
    let requirements = match &loaded.content {
        Content::Native(n) => n
            .declarations
            .managed
            .iter()
            .map(|r| r.raw.clone())
            .collect(),
        Content::Portable(_) => Vec::new(),
    };
    let plugin = InstalledPlugin {
        key: loaded.key.clone(),
        name: loaded.name(),
        version: loaded.version(),
        kind: match loaded.content {
            Content::Native(_) => "native".to_string(),
            Content::Portable(_) => "portable".to_string(),
        },
        format: loaded.format().as_str().to_string(),
        source: fetched.provenance,
        tree: entry.digest,
        store_key: entry.key,
        requirements,
        installed_at: jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string(),
    };
    Ok((plugin, warnings))
}

fn is_active(cx: &Context, key: &str) -> bool {
    apply::current_doc(cx).is_some_and(|d| d.plugin(key).is_some())
}

/// `install SOURCE`.
pub fn install(
    cx: &Context,
    request: &InstallRequest,
    prompter: &mut dyn Prompter,
    feedback: &mut dyn Feedback,
) -> Result<InstallOutcome, ManagerError> {
    let (plugin, warnings) = fetch_and_store(
        cx,
        &request.spec,
        request.rev.as_deref(),
        request.force,
        feedback,
    )?;
    super::check_removed(
        cx,
        &plugin.name,
        plugin.source.url.as_deref(),
        request.allow_removed,
        feedback,
    )?;
    if plugin.key != plugin.name {
        super::check_removed(cx, &plugin.key, None, request.allow_removed, feedback)?;
    }
    if !plugin.source.reviewed {
        feedback.note(&format!(
            "`{}` comes from an unreviewed source ({}); its code has not been through catalog review",
            plugin.key,
            request.spec.display()
        ));
    }
    if let Ok(surface) = Surface::of(&Store::open(cx.layout.store())?.path_of(&plugin.store_key))
        && !surface.requires_auth.is_empty()
    {
        feedback.note(&format!(
            "`{}` requires sign-in with: {}",
            plugin.key,
            surface
                .requires_auth
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut installed = Installed::read(&cx.layout.installed())
        .map_err(|e| ManagerError::Environment(e.to_string()))?;
    let key = plugin.key.clone();
    let active = is_active(cx, &key);
    if active && request.deps == DepsConsent::No {
        return Err(ManagerError::Refused(format!(
            "`{key}` is enabled; --no-deps cannot replace an active plugin (disable it first, or consent with --yes-deps)"
        )));
    }
    installed.plugins.insert(key.clone(), plugin.clone());
    let enable = request.enable && request.deps != DepsConsent::No;
    if request.enable && !enable {
        feedback.note(&format!(
            "`{key}` was fetched but stays disabled (--no-deps); enable it with `hermes-plugins enable {key}`"
        ));
    }
    let edits = if enable {
        vec![(cx.profile.clone(), SelectionEdit::Enable(key.clone()))]
    } else {
        Vec::new()
    };
    let applied = apply::apply(
        cx,
        Change {
            operation: format!("install {}", request.spec.display()),
            edits,
            installed: Some(installed),
            deps: request.deps,
            grants: GrantFlags {
                targets: if enable {
                    vec![key.clone()]
                } else {
                    Vec::new()
                },
                grant: request.grant.clone(),
                revoke: request.revoke.clone(),
            },
            accept_surface: request.yes,
        },
        prompter,
        feedback,
    )?;
    Ok(InstallOutcome {
        key,
        plugin,
        enabled: enable || active,
        warnings,
        applied: Some(applied),
    })
}

/// What `update` found for one plugin.
#[derive(Debug, Clone, serde::Serialize)]
pub struct UpdateItem {
    /// The plugin key.
    pub key: String,
    /// `updated`, `unchanged`, `pinned` (skipped) or `would-update` (dry run).
    pub status: String,
    /// Commit before.
    pub from: Option<String>,
    /// Commit after.
    pub to: Option<String>,
    /// What the new version adds and removes (CAP-7), when it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub surface: Option<crate::consent::surface::SurfaceDiff>,
}

/// What `update` should do.
#[derive(Debug, Clone, Default)]
pub struct UpdateRequest {
    /// Plugins to update (all when empty).
    pub names: Vec<String>,
    /// Show what would change; change nothing.
    pub dry_run: bool,
    /// `--yes`: accept surface additions.
    pub yes: bool,
    /// Capability flags.
    pub grants: GrantFlags,
    /// `--allow-removed`.
    pub allow_removed: bool,
}

/// `update [NAME]...`: re-fetch each plugin from its recorded source (the tracked branch, the
/// catalog's current pin, or the local directory again), and publish everything that changed
/// in one switch.
pub fn update(
    cx: &Context,
    request: &UpdateRequest,
    prompter: &mut dyn Prompter,
    feedback: &mut dyn Feedback,
) -> Result<(Vec<UpdateItem>, Option<Applied>), ManagerError> {
    let UpdateRequest {
        names,
        dry_run,
        yes,
        grants,
        allow_removed,
    } = request;
    let (dry_run, yes, allow_removed) = (*dry_run, *yes, *allow_removed);
    let mut installed = Installed::read(&cx.layout.installed())
        .map_err(|e| ManagerError::Environment(e.to_string()))?;
    let keys: Vec<String> = if names.is_empty() {
        installed.plugins.keys().cloned().collect()
    } else {
        names
            .iter()
            .map(|n| {
                installed
                    .find(n)
                    .map(|p| p.key.clone())
                    .ok_or_else(|| ManagerError::Usage(format!("`{n}` is not installed")))
            })
            .collect::<Result<_, _>>()?
    };
    let mut items = Vec::new();
    let mut changed = false;
    for key in keys {
        let Some(old) = installed.plugins.get(&key).cloned() else {
            continue;
        };
        if let Some(pinned) = &old.source.pinned_ref {
            feedback.note(&format!(
                "`{key}` is pinned to `{pinned}`; re-pin it with `hermes-plugins install {} --ref NEW`",
                old.source.spec.display()
            ));
            items.push(UpdateItem {
                key,
                status: "pinned".into(),
                from: old.source.commit.clone(),
                to: old.source.commit.clone(),
                surface: None,
            });
            continue;
        }
        let (mut new, _warnings) = fetch_and_store(cx, &old.source.spec, None, false, feedback)?;
        super::check_removed(
            cx,
            &new.name,
            new.source.url.as_deref(),
            allow_removed,
            feedback,
        )?;
        if new.key != key {
            return Err(ManagerError::Refused(format!(
                "`{key}` now calls itself `{}`; install it under its new name instead",
                new.key
            )));
        }
        let status = if new.tree == old.tree {
            "unchanged"
        } else if dry_run {
            "would-update"
        } else {
            "updated"
        };
        let surface = (new.tree != old.tree).then(|| {
            let store = Store::open(cx.layout.store()).ok();
            let of = |k: &str| {
                store
                    .as_ref()
                    .and_then(|s| Surface::of(&s.path_of(k)).ok())
                    .unwrap_or_default()
            };
            SurfaceDiff::between(&of(&old.store_key), &of(&new.store_key))
        });
        items.push(UpdateItem {
            key: key.clone(),
            status: status.into(),
            from: old.source.commit.clone(),
            to: new.source.commit.clone(),
            surface,
        });
        if new.tree != old.tree {
            changed = true;
            if let (Some(t), None) = (&old.source.tracked_ref, &new.source.tracked_ref) {
                new.source.tracked_ref = Some(t.clone());
            }
            installed.plugins.insert(key, new);
        }
    }
    if dry_run || !changed {
        return Ok((items, None));
    }
    let applied = apply::apply(
        cx,
        Change {
            operation: format!(
                "update {}",
                items
                    .iter()
                    .filter(|i| i.status == "updated")
                    .map(|i| i.key.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            edits: Vec::new(),
            installed: Some(installed),
            deps: if yes {
                DepsConsent::Yes
            } else {
                DepsConsent::Ask
            },
            grants: grants.clone(),
            accept_surface: yes,
        },
        prompter,
        feedback,
    )?;
    Ok((items, Some(applied)))
}

/// `remove NAME`: gone from every profile's selection and from `installed.json`; its data
/// directory is kept unless `purge_data`.
pub fn remove(
    cx: &Context,
    name: &str,
    purge_data: bool,
    prompter: &mut dyn Prompter,
    feedback: &mut dyn Feedback,
) -> Result<Applied, ManagerError> {
    let mut installed = Installed::read(&cx.layout.installed())
        .map_err(|e| ManagerError::Environment(e.to_string()))?;
    let key = installed
        .find(name)
        .map(|p| p.key.clone())
        .ok_or_else(|| ManagerError::Usage(format!("`{name}` is not installed")))?;
    let plugin_name = installed.plugins.get(&key).map(|p| p.name.clone());
    installed.plugins.remove(&key);
    let (profiles, _) = crate::state::profiles::read_profiles(&cx.layout.home)
        .map_err(|e| ManagerError::Environment(e.to_string()))?;
    let mut edits = Vec::new();
    for p in profiles {
        for n in [Some(key.clone()), plugin_name.clone()]
            .into_iter()
            .flatten()
        {
            if p.enabled.contains(&n) || p.disabled.contains(&n) {
                edits.push((p.name.clone(), SelectionEdit::Forget(n)));
            }
        }
    }
    let applied = apply::apply(
        cx,
        Change {
            operation: format!("remove {key}"),
            edits,
            installed: Some(installed),
            deps: DepsConsent::Yes,
            grants: GrantFlags::default(),
            accept_surface: true,
        },
        prompter,
        feedback,
    )?;
    if purge_data {
        let data = cx.layout.plugin_data(&key);
        match std::fs::remove_dir_all(&data) {
            Ok(()) => feedback.note(&format!("removed {}", data.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(ManagerError::Environment(format!(
                    "{}: {e}",
                    data.display()
                )));
            }
        }
    }
    Ok(applied)
}
