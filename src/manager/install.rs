//! `install`, `update` and `remove`: fetching into the store, validating, recording in
//! `installed.json`, and handing selection changes to [`super::apply`].

use std::path::{Path, PathBuf};

use super::admission::{
    Validated, accept_findings, approve_core_patch, core_patch_item, unprovided_imports, validate,
};
use super::apply::GrantFlags;
use super::apply::{self, Applied, Change, SelectionEdit};
use super::plan::{PlanItem, PlanMode};
use super::{Context, DepsConsent, Feedback, ManagerError, Prompter};
use crate::check::static_py::load_imports::LoadImport;
use crate::consent::surface::{Surface, SurfaceDiff};
use crate::exit::Code;
use crate::generation::scratch::Scratch;
use crate::package::{self, Content};
use crate::source::{self, Fetched, SourceSpec};
use crate::state::installed::InstalledPlugin;
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
    /// `--allow-core-patch`: approve a plugin that patches Hermes internals.
    pub allow_core_patch: bool,
    /// `--replace`: replace the installed plugin of the same key from another source.
    pub replace: bool,
    /// `--dry-run` (the consent plan, nothing recorded) or `--plan HASH`.
    pub plan: PlanMode,
    /// `--accept-finding ID`: security findings accepted for this plugin alone.
    pub accept_findings: Vec<String>,
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

fn fetch(
    cx: &Context,
    spec: &SourceSpec,
    rev: Option<&str>,
    scratch: &Path,
    feedback: &mut dyn Feedback,
) -> Result<Fetched, ManagerError> {
    if let SourceSpec::Pypi { requirement } = spec {
        if let Some(rev) = rev {
            return Err(ManagerError::Usage(format!(
                "--ref {rev} applies to git sources; {} names its release by version (`pypi:NAME==VERSION`)",
                spec.display()
            )));
        }
        return super::pypi::fetch(cx, spec, requirement, scratch, feedback);
    }
    feedback.phase(&format!("fetching {}", spec.display()));
    let fetched = source::fetch(spec, rev, &cx.fetch, scratch, &mut |r, t| {
        feedback.transfer(r, t)
    });
    feedback.done();
    fetched.map_err(|e| match e {
        source::FetchError::Git(g @ source::git::GitError::Clone { .. }) => {
            ManagerError::coded(Code::Network, g.to_string())
        }
        source::FetchError::Git(g @ source::git::GitError::UnknownRev { .. }) => {
            ManagerError::coded(Code::NotFound, g.to_string())
        }
        source::FetchError::Git(g) => ManagerError::environment(g),
        source::FetchError::Catalog(c @ source::catalog::CatalogError::Unreachable { .. }) => {
            ManagerError::coded(Code::Network, c.to_string())
        }
        source::FetchError::Catalog(c) => ManagerError::Usage(c.to_string()),
        other => ManagerError::Refused(other.to_string()),
    })
}

/// The `--accept-finding` ids a fetch is judged with: `install`'s are all for its plugin (one
/// it does not have is an error); `update`'s for whichever plugin has them.
#[derive(Clone, Copy)]
pub(super) enum Accept<'a> {
    Strict(&'a [String]),
    Any(&'a [String]),
}

/// A plugin fetched, copied the way the store keeps it, and validated — in a scratch
/// directory under `pm/tmp/`, before the writer lock is taken — but not stored yet.
pub struct Prepared {
    pub(super) scratch: Scratch,
    pub(super) staged: PathBuf,
    pub(super) plugin: InstalledPlugin,
    pub(super) warnings: Vec<String>,
    /// The providers its manifest requires sign-in with.
    pub(super) requires_auth: Vec<String>,
    /// The Hermes internals its code patches (approved before it is stored).
    pub(super) core_patches: Vec<String>,
    /// Outside modules imported while it loads (checked against the published generation).
    pub(super) load_imports: Vec<LoadImport>,
    /// Security findings accepted on this command (audited once it is published).
    pub(super) accepted_now: AcceptedNow,
}

/// Fetches (git, catalog pin or directory), copies the package as the store would keep it,
/// and validates that copy. Runs without the writer lock: the network takes as long as it
/// takes without holding up other writers, and what is validated is exactly what is stored.
pub(super) fn prepare(
    cx: &Context,
    spec: &SourceSpec,
    rev: Option<&str>,
    force: bool,
    accept: Accept<'_>,
    feedback: &mut dyn Feedback,
) -> Result<Prepared, ManagerError> {
    let scratch = Scratch::new(&cx.layout, "fetch-")?;
    let fetched = fetch(cx, spec, rev, scratch.path(), feedback)?;
    refuse_plugin_collection(spec, &fetched)?;
    let staged = scratch.path().join("package");
    crate::store::stage_copy(&fetched.dir, &staged)
        .map_err(|e| ManagerError::Refused(e.to_string()))?;
    let Validated {
        loaded,
        warnings,
        core_patches,
        loads_on,
        load_imports,
        blocking,
    } = validate(&staged, &spec.without_credentials().display(), force)?;
    let requirements = managed_requirements(&loaded);
    // Keyed as Hermes keys it where it would live: `<category>/<dir>` for a plugin from a
    // category directory (`plugins/image_gen/agnes`), else its manifest name. The staged
    // copy's directory is called `package`: a plugin without a manifest name is keyed by
    // where it came from instead.
    let key = match (category_key(&fetched), &loaded.content) {
        (Some(key), _) => key,
        (None, Content::Native(n))
            if n.manifest.as_ref().and_then(|m| m.name.as_ref()).is_none() =>
        {
            nameless_key(&fetched)
        }
        _ => loaded.key.clone(),
    };
    crate::home::check_key(&key).map_err(|e| ManagerError::Refused(e.to_string()))?;
    // A dangerous verdict: only accepted findings let it in (the version installed under
    // this key may have accepted them, bound to the flagged files' contents).
    let recorded = super::installed(cx)?
        .plugins
        .get(&key)
        .map(|p| p.accepted_findings.clone())
        .unwrap_or_default();
    let mut explicit: Vec<String> = match accept {
        Accept::Strict(ids) => ids.to_vec(),
        // `update`: each id concerns whichever plugin has it (checked over all of them).
        Accept::Any(ids) => ids
            .iter()
            .filter(|id| blocking.iter().any(|b| &&b.id == id))
            .cloned()
            .collect(),
    };
    // The catalog's reviewers accepted these for the pinned commit (its entry's
    // `accepted_findings`): taken as given here, audited as the catalog's.
    let reviewed: Vec<String> = fetched
        .provenance
        .catalog
        .iter()
        .flat_map(|pin| pin.accepted_findings.iter())
        .filter(|id| blocking.iter().any(|b| &&b.id == id) && !explicit.contains(id))
        .cloned()
        .collect();
    explicit.extend(reviewed.iter().cloned());
    let (accepted_findings, given) =
        accept_findings(&loaded.name(), &blocking, &explicit, &recorded)?;
    let accepted_now = AcceptedNow {
        given,
        reviewed,
        catalog: fetched.provenance.catalog.as_ref().map(|p| p.name.clone()),
    };
    // The manifest's name, when it has one (a category key keeps it: `image_gen/agnes` is
    // named `agnes`); a nameless plugin is named by its key.
    let named = match &loaded.content {
        Content::Native(n) => n.manifest.as_ref().and_then(|m| m.name.as_ref()).is_some(),
        Content::Portable(_) | Content::Pip(_) => true,
    };
    let name = if named { loaded.name() } else { key.clone() };
    let plugin = InstalledPlugin {
        key,
        name,
        version: loaded.version(),
        kind: loaded.format().kind(),
        format: loaded.format(),
        source: fetched.provenance,
        tree: String::new(),
        store_key: String::new(),
        requirements,
        installed_at: jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string(),
        requires_hermes_ignored_for: None,
        core_patches: core_patches.clone(),
        loads_on,
        accepted_findings,
    };
    let requires_auth = match &loaded.content {
        Content::Native(n) => n
            .manifest
            .iter()
            .flat_map(|m| m.requires_auth.iter().map(|a| a.value.clone()))
            .collect(),
        Content::Portable(_) | Content::Pip(_) => Vec::new(),
    };
    Ok(Prepared {
        scratch,
        staged,
        plugin,
        warnings,
        requires_auth,
        core_patches,
        load_imports,
        accepted_now,
    })
}

/// A fetched root that is no plugin but holds plugins further down (a repository of several):
/// refused before anything is copied, naming each plugin directory with the command that
/// installs it — never the scratch path it was fetched into.
fn refuse_plugin_collection(spec: &SourceSpec, fetched: &Fetched) -> Result<(), ManagerError> {
    if package::discover::package_dir_kind(&fetched.dir).is_some() {
        return Ok(());
    }
    let inside = package::discover::plugin_dirs_within(&fetched.dir);
    let shown = spec.display();
    if inside.is_empty() {
        return Err(ManagerError::coded(
            Code::Invalid,
            format!(
                "{shown} is not a plugin: it has no plugin.yaml, plugin.yml or plugin.json, and none in its directories"
            ),
        ));
    }
    let commands: Vec<String> = inside
        .iter()
        .map(|dir| match spec.with_subdir(dir) {
            Some(one) => format!("{dir}: hermes-plugins install {}", one.display()),
            None => dir.clone(),
        })
        .collect();
    Err(ManagerError::coded(
        Code::Invalid,
        format!(
            "{shown} is not a plugin directory; it holds {}; install {} by its directory:\n  {}",
            match inside.len() {
                1 => "1 plugin".to_string(),
                n => format!("{n} plugins"),
            },
            if inside.len() == 1 { "it" } else { "each" },
            commands.join("\n  ")
        ),
    ))
}

/// `<category>/<dir>` when the plugin was fetched from a directory whose parent is one of
/// Hermes's plugin categories ([`crate::known::CATEGORIES`]): the key Hermes's loader gives
/// it in `<home>/plugins/<category>/<dir>/`, whatever its manifest `name` says (two
/// backends both named `agnes` under `image_gen/` and `video_gen/` are two plugins).
fn category_key(fetched: &Fetched) -> Option<String> {
    let path = match &fetched.provenance.subdir {
        Some(sub) => sub.clone(),
        None if fetched.provenance.url.is_none() => std::fs::canonicalize(&fetched.dir)
            .ok()?
            .to_string_lossy()
            .into_owned(),
        None => return None,
    };
    let mut segments = path.rsplit('/').filter(|s| !s.is_empty());
    let dir = segments.next()?;
    let category = segments.next()?;
    crate::known::CATEGORIES
        .contains(&category)
        .then(|| format!("{category}/{dir}"))
        .filter(|key| crate::home::check_key(key).is_ok())
}

/// The key of a plugin whose manifest has no `name`, as Hermes would name its directory: the
/// last segment of the subdirectory, else the repository name, else the directory name.
fn nameless_key(fetched: &Fetched) -> String {
    if let Some(sub) = &fetched.provenance.subdir {
        return sub.rsplit('/').next().unwrap_or(sub).to_string();
    }
    if let Some(url) = &fetched.provenance.url {
        let trimmed = url.trim_end_matches('/');
        let trimmed = trimmed.strip_suffix(".git").unwrap_or(trimmed);
        if let Some(last) = trimmed.rsplit(['/', ':']).next()
            && !last.is_empty()
        {
            return last.to_string();
        }
    }
    std::fs::canonicalize(&fetched.dir)
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default()
}

/// A dry run's additions to the content store, taken out again when it ends (created under
/// the writer lock, dropped before it): planning reads the fetched trees from the store, and
/// a dry run changes nothing — the store included.
struct DryStore {
    store: Store,
    before: std::collections::BTreeSet<String>,
}

impl DryStore {
    fn begin(cx: &Context, dry: bool) -> Result<Option<DryStore>, ManagerError> {
        if !dry {
            return Ok(None);
        }
        let store = Store::open(cx.layout.store())?;
        let before = store
            .list()
            .map_err(|e| ManagerError::coded(Code::Io, e.to_string()))?
            .into_iter()
            .collect();
        Ok(Some(DryStore { store, before }))
    }
}

impl Drop for DryStore {
    fn drop(&mut self) {
        if let Err(e) = self.store.gc(&self.before) {
            tracing::warn!("a dry run's trees stay in the store: {e}");
        }
    }
}

/// The Python requirements the package manager installs for a plugin (its manifest's; for a
/// wheel, the distribution itself — its own dependencies come with it).
fn managed_requirements(loaded: &package::LoadedPackage) -> Vec<String> {
    match &loaded.content {
        Content::Native(n) => n
            .declarations
            .managed
            .iter()
            .map(|r| r.raw.clone())
            .collect(),
        Content::Pip(p) => crate::resolve::inputs::wheel_requirement(p)
            .into_iter()
            .collect(),
        Content::Portable(_) => Vec::new(),
    }
}

/// The installed record of a plugin a generation holds but `installed.json` no longer has
/// (removed since): `rollback` to that generation brings it back. Its store tree is read as
/// install read it (requirements, Hermes patches, the releases it loads on); acceptances of
/// security findings are not restored — the next update asks for them again.
pub(super) fn record_from_generation(
    plugin: &crate::generation::doc::GenPlugin,
    tree: &Path,
) -> Result<InstalledPlugin, ManagerError> {
    let validated = validate(tree, &plugin.key, true)?;
    Ok(InstalledPlugin {
        key: plugin.key.clone(),
        name: plugin.name.clone(),
        version: plugin.version.clone(),
        kind: plugin.kind,
        format: plugin.format,
        source: plugin.source.clone(),
        tree: plugin.tree.clone(),
        store_key: plugin.store_key.clone(),
        requirements: managed_requirements(&validated.loaded),
        installed_at: jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string(),
        requires_hermes_ignored_for: None,
        core_patches: validated.core_patches,
        loads_on: validated.loads_on,
        accepted_findings: Vec::new(),
    })
}

/// Under the writer lock: refuses a key another source holds (unless `replace`) or a module
/// name another plugin has, stores the prepared package, and checks its name and key against
/// the kill list (unless `allow_removed`). Returns the completed record and its warnings.
pub(super) fn keep(
    cx: &Context,
    prepared: Prepared,
    replace: bool,
    allow_removed: bool,
    feedback: &mut dyn Feedback,
) -> Result<(InstalledPlugin, Vec<String>), ManagerError> {
    refuse_taken_key(cx, &prepared.plugin, replace)?;
    refuse_module_clash(cx, &prepared.plugin.key)?;
    let (plugin, warnings) = store(cx, prepared)?;
    super::check_removed(
        cx,
        &plugin.name,
        plugin.source.url.as_deref(),
        allow_removed,
        feedback,
    )?;
    if plugin.key != plugin.name {
        super::check_removed(cx, &plugin.key, None, allow_removed, feedback)?;
    }
    Ok((plugin, warnings))
}

/// Moves a prepared package into the store (under the writer lock) and completes its record.
pub(super) fn store(
    cx: &Context,
    prepared: Prepared,
) -> Result<(InstalledPlugin, Vec<String>), ManagerError> {
    let Prepared {
        scratch,
        staged,
        mut plugin,
        warnings,
        ..
    } = prepared;
    let store = Store::open(cx.layout.store())?;
    let entry = store
        .put_staged(&staged)
        .map_err(|e| ManagerError::coded(Code::Io, e.to_string()))?;
    drop(scratch);
    plugin.tree = entry.digest;
    plugin.store_key = entry.key;
    Ok((plugin, warnings))
}

/// Refuses a key another plugin already has: the same key from another source (another
/// repository or subdirectory, another directory) is another plugin, replaced only when
/// asked (`--replace`; its grants do not carry over). Names both sources.
fn refuse_taken_key(
    cx: &Context,
    plugin: &InstalledPlugin,
    replace: bool,
) -> Result<(), ManagerError> {
    if replace {
        return Ok(());
    }
    let installed = super::installed(cx)?;
    let Some(other) = installed.plugins.get(&plugin.key) else {
        return Ok(());
    };
    let (was, now) = (
        crate::consent::capabilities::origin(&other.source),
        crate::consent::capabilities::origin(&plugin.source),
    );
    if was == now {
        return Ok(());
    }
    Err(ManagerError::coded(
        Code::Conflict,
        format!(
            "the key `{key}` is taken: the installed `{key}` comes from {was}, this plugin from {now}; nothing was changed (--replace installs this one in its place; its grants do not carry over)",
            key = plugin.key
        ),
    ))
}

/// Refuses a key whose Hermes module name another installed plugin already has (`a-b` and
/// `a_b` both import as `hermes_plugins.a_b`).
fn refuse_module_clash(cx: &Context, key: &str) -> Result<(), ManagerError> {
    let installed = super::installed(cx)?;
    let module = crate::known::module_name(key);
    match installed
        .plugins
        .keys()
        .find(|other| other.as_str() != key && crate::known::module_name(other) == module)
    {
        Some(other) => Err(ManagerError::Refused(format!(
            "`{key}` would import as `{module}`, as the installed `{other}` does; Hermes cannot load both (remove `{other}` first)"
        ))),
        None => Ok(()),
    }
}

fn is_active(cx: &Context, key: &str) -> bool {
    apply::current_doc(cx).is_some_and(|d| d.plugin(key).is_some())
}

/// `install SOURCE`: fetches and validates without the writer lock, then takes it (with
/// crash recovery) to store, record and publish.
pub fn install(
    cx: &Context,
    request: &InstallRequest,
    prompter: &mut dyn Prompter,
    feedback: &mut dyn Feedback,
) -> Result<InstallOutcome, ManagerError> {
    // The kill list first: a removed entry is never fetched.
    super::check_removed_source(cx, &request.spec, request.allow_removed, feedback)?;
    let prepared = prepare(
        cx,
        &request.spec,
        request.rev.as_deref(),
        request.force,
        Accept::Strict(&request.accept_findings),
        feedback,
    )?;
    let previous_patches = super::installed(cx)?
        .plugins
        .get(&prepared.plugin.key)
        .map(|p| p.core_patches.clone())
        .unwrap_or_default();
    let core_patch = core_patch_item(
        &prepared.plugin.key,
        &prepared.core_patches,
        &previous_patches,
    );
    if let Some(item) = &core_patch
        && request.plan != PlanMode::Dry
    {
        approve_core_patch(item, request.allow_core_patch, prompter)?;
    }
    let command = format!("install {}", request.spec.display());
    let _lock = super::begin_writing(cx, &command, feedback)?;
    let _dry = DryStore::begin(cx, request.plan == PlanMode::Dry)?;
    let requires_auth = prepared.requires_auth.clone();
    let load_imports = prepared.load_imports.clone();
    let accepted_now = prepared.accepted_now.clone();
    let (plugin, mut warnings) = keep(
        cx,
        prepared,
        request.replace,
        request.allow_removed,
        feedback,
    )?;
    if !plugin.source.reviewed {
        feedback.note(&format!(
            "`{}` comes from an unreviewed source ({}); its code has not been through catalog review",
            plugin.key,
            request.spec.display()
        ));
    }
    if !requires_auth.is_empty() {
        feedback.note(&format!(
            "`{}` requires sign-in with: {}",
            plugin.key,
            requires_auth.join(", ")
        ));
    }
    let mut installed = super::installed(cx)?;
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
    let keep = installed.clone();
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
            plan: request.plan.clone(),
            plan_notes: core_patch
                .into_iter()
                .chain((!requires_auth.is_empty()).then(|| PlanItem::Auth {
                    plugin: key.clone(),
                    providers: requires_auth.clone(),
                }))
                .collect(),
        },
        prompter,
        feedback,
    );
    let applied = match applied {
        // CAP-6: refused dependency consent keeps the plugin installed and disabled.
        Err(ManagerError::NotConsented {
            code, asked, way, ..
        }) if enable && !active => {
            // Kept installed only if that needs no consent either (a profile listing it by
            // hand would enable it): otherwise the refusal stands and nothing changes.
            let kept = apply::apply(
                cx,
                Change {
                    operation: format!("install {} (not enabled)", request.spec.display()),
                    edits: Vec::new(),
                    installed: Some(keep),
                    deps: DepsConsent::No,
                    grants: GrantFlags::default(),
                    accept_surface: false,
                    plan: PlanMode::Off,
                    plan_notes: Vec::new(),
                },
                &mut super::NoInput,
                feedback,
            );
            let outcome = if kept.is_err() {
                apply::NOTHING_CHANGED.to_string()
            } else {
                audit_acceptances(cx, &key, &accepted_now);
                format!(
                    "`{key}` is installed but not enabled; enable it with `hermes-plugins enable {key}`"
                )
            };
            return Err(ManagerError::NotConsented {
                code,
                asked,
                outcome,
                way,
            });
        }
        other => other?,
    };
    if applied.plan.is_none() {
        audit_acceptances(cx, &key, &accepted_now);
    }
    warnings.extend(unprovided_imports(cx, &key, &load_imports, &applied));
    Ok(InstallOutcome {
        key,
        plugin,
        enabled: enable || active,
        warnings,
        applied: Some(applied),
    })
}

/// The security findings one command accepted for one plugin: by `--accept-finding`, or
/// (`reviewed`) by the catalog entry it was installed from.
#[derive(Debug, Clone, Default)]
pub(super) struct AcceptedNow {
    /// Every acceptance made now, with the flagged file's hash.
    given: Vec<crate::state::installed::AcceptedFinding>,
    /// Ids among them the catalog entry's reviewers accepted.
    reviewed: Vec<String>,
    /// That catalog entry.
    catalog: Option<String>,
}

impl AcceptedNow {
    /// Whether `id` was accepted now.
    fn has(&self, id: &str) -> bool {
        self.given.iter().any(|a| a.id == id)
    }
}

/// Appends the security findings accepted on this command to the audit log (`accept-finding`,
/// by `--accept-finding`, each with the flagged file's hash and, when the catalog entry's
/// reviewers accepted it, that entry), once what they let in is recorded.
fn audit_acceptances(cx: &Context, key: &str, accepted: &AcceptedNow) {
    if accepted.given.is_empty() {
        return;
    }
    let items = accepted
        .given
        .iter()
        .map(|a| {
            let reviewed = match &accepted.catalog {
                Some(entry) if accepted.reviewed.contains(&a.id) => {
                    format!(" — reviewed in the catalog entry `{entry}`")
                }
                _ => String::new(),
            };
            format!("{} (sha256 {}){reviewed}", a.id, a.sha256)
        })
        .collect();
    let entry = crate::consent::audit::AuditEntry::now(
        cx.profile.clone(),
        key,
        "accept-finding",
        items,
        "--accept-finding",
    );
    if let Err(e) = crate::consent::audit::append(&cx.layout.audit_log(), &[entry]) {
        tracing::warn!("cannot append to the audit log: {e}");
    }
}

/// What `update` found for one plugin.
#[derive(Debug, Clone, serde::Serialize)]
pub struct UpdateItem {
    /// The plugin key.
    pub key: String,
    /// `updated`, `unchanged`, `pinned` (skipped) or `would-update` (dry run).
    pub status: String,
    /// Commit before (the version, for a distribution from the package index).
    pub from: Option<String>,
    /// Commit after (likewise).
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
    /// Show what would change and the consent plan; change nothing.
    pub dry_run: bool,
    /// `--plan HASH`: apply only if the consent plan is still this one.
    pub plan: PlanMode,
    /// `--yes`: accept surface additions.
    pub yes: bool,
    /// Capability flags.
    pub grants: GrantFlags,
    /// `--allow-removed`.
    pub allow_removed: bool,
    /// `--allow-core-patch`: approve new patches of Hermes internals.
    pub allow_core_patch: bool,
    /// `--accept-finding ID`: security findings a new version has, accepted.
    pub accept_findings: Vec<String>,
}

/// How many times `update` fetches when other writers keep changing what it fetched.
const UPDATE_ATTEMPTS: usize = 3;

/// Plugins fetched for `update`, each with its record as it was before the fetch.
type UpdateFetches = Vec<(String, InstalledPlugin, Prepared)>;

/// How many plugins `update` fetches at once (the network, not the CPU, is the wait).
const FETCHES: usize = 4;

/// `update`'s fetch phase, without the writer lock: the items for pinned plugins (skipped)
/// and, for every other plugin named (all when `names` is empty), its record and fetched tree.
fn fetch_updates(
    cx: &Context,
    names: &[String],
    allow_removed: bool,
    accept: &[String],
    feedback: &mut dyn Feedback,
) -> Result<(Vec<UpdateItem>, UpdateFetches), ManagerError> {
    let snapshot = super::installed(cx)?;
    let keys: Vec<String> = if names.is_empty() {
        snapshot.plugins.keys().cloned().collect()
    } else {
        names
            .iter()
            .map(|n| {
                snapshot.find(n).map(|p| p.key.clone()).ok_or_else(|| {
                    ManagerError::coded(Code::NotFound, format!("`{n}` is not installed"))
                })
            })
            .collect::<Result<_, _>>()?
    };
    let mut items = Vec::new();
    let mut todo = Vec::new();
    for key in keys {
        let Some(old) = snapshot.plugins.get(&key).cloned() else {
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
                from: old.source.revision(),
                to: old.source.revision(),
                surface: None,
            });
            continue;
        }
        super::check_removed_source(cx, &old.source.spec, allow_removed, feedback)?;
        todo.push((key, old));
    }
    // One source is fetched with live progress. Several are fetched and validated
    // [`FETCHES`] at a time; each one's notes are kept and told in key order afterwards, and
    // the first failure in key order is the answer.
    // An id given with `update` concerns whichever plugin has it.
    let mode = Accept::Any(accept);
    let mut fetched = Vec::new();
    if let [(key, old)] = &todo[..] {
        let prepared = prepare(cx, &old.source.spec, None, false, mode, feedback)?;
        fetched.push((key.clone(), old.clone(), prepared));
    } else if !todo.is_empty() {
        feedback.phase(&format!("fetching {} plugins", todo.len()));
        let prepared = crate::parallel::map(&todo, FETCHES, None, |(_, old)| {
            let mut notes = super::Notes::default();
            let prepared = prepare(cx, &old.source.spec, None, false, mode, &mut notes);
            (prepared, notes)
        });
        feedback.done();
        for ((key, old), (prepared, notes)) in todo.into_iter().zip(prepared) {
            notes.replay(feedback);
            fetched.push((key, old, prepared?));
        }
    }
    if let Some(unknown) = accept
        .iter()
        .find(|id| !fetched.iter().any(|(_, _, p)| p.accepted_now.has(id)))
    {
        return Err(ManagerError::Usage(format!(
            "--accept-finding {}: no plugin being updated has that dangerous finding",
            crate::text::escape(unknown)
        )));
    }
    Ok((items, fetched))
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
        plan: plan_mode,
        yes,
        grants,
        allow_removed,
        allow_core_patch,
        accept_findings,
    } = request;
    let (dry_run, yes, allow_removed) = (*dry_run, *yes, *allow_removed);
    // Fetch first, without the writer lock; then take it and check nothing moved meanwhile.
    // When another writer changed a plugin while it was fetched, fetch again (a few times:
    // under a steady stream of writers the refusal says to retry later).
    let mut attempt = 1;
    let (mut items, fetched, _lock, mut installed) = loop {
        let (items, fetched) = fetch_updates(cx, names, allow_removed, accept_findings, feedback)?;
        let lock = super::begin_writing(cx, "update", feedback)?;
        let installed = super::installed(cx)?;
        let Some(moved) = fetched
            .iter()
            .find(|(key, old, _)| installed.plugins.get(key) != Some(old))
            .map(|(key, ..)| key.clone())
        else {
            break (items, fetched, lock, installed);
        };
        if attempt == UPDATE_ATTEMPTS {
            return Err(ManagerError::Refused(format!(
                "`{moved}` changed while it was being fetched, {UPDATE_ATTEMPTS} times (other hermes-plugins runs keep changing it); nothing was updated, run the update again later"
            )));
        }
        feedback.note(&format!(
            "`{moved}` changed while it was being fetched (another hermes-plugins ran); fetching again"
        ));
        attempt += 1;
    };
    let _dry = DryStore::begin(cx, dry_run || *plan_mode == PlanMode::Dry)?;
    // Patches of Hermes internals a new version adds are asked before anything is stored.
    let mut plan_notes = Vec::new();
    for (key, old, prepared) in &fetched {
        if let Some(item) = core_patch_item(key, &prepared.core_patches, &old.core_patches) {
            if !dry_run && *plan_mode != PlanMode::Dry {
                approve_core_patch(&item, *allow_core_patch, prompter)?;
            }
            plan_notes.push(item);
        }
    }
    let acceptances: Vec<(String, AcceptedNow)> = fetched
        .iter()
        .map(|(key, _, p)| (key.clone(), p.accepted_now.clone()))
        .collect();
    let mut changed = false;
    for (key, old, prepared) in fetched {
        let (mut new, _warnings) = store(cx, prepared)?;
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
            from: old.source.revision(),
            to: new.source.revision(),
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
    if !changed {
        return Ok((items, None));
    }
    let plan = if dry_run {
        PlanMode::Dry
    } else {
        plan_mode.clone()
    };
    let applied = apply::apply(
        cx,
        Change {
            operation: format!(
                "update {}",
                items
                    .iter()
                    .filter(|i| i.status == "updated" || i.status == "would-update")
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
            plan: plan.clone(),
            plan_notes,
        },
        prompter,
        feedback,
    )?;
    if applied.plan.is_none() {
        for (key, accepted) in &acceptances {
            audit_acceptances(cx, key, accepted);
        }
    }
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
    let mut installed = super::installed(cx)?;
    let key = installed
        .find(name)
        .map(|p| p.key.clone())
        .ok_or_else(|| ManagerError::coded(Code::NotFound, format!("`{name}` is not installed")))?;
    let plugin_name = installed.plugins.get(&key).map(|p| p.name.clone());
    installed.plugins.remove(&key);
    let (profiles, _) = crate::state::profiles::read_profiles(&cx.layout.home)
        .map_err(ManagerError::environment)?;
    let mut edits = Vec::new();
    // Every profile forgets it — its selection and every grant, wherever they are.
    for p in profiles {
        for n in [Some(key.clone()), plugin_name.clone()]
            .into_iter()
            .flatten()
        {
            edits.push((p.name.clone(), SelectionEdit::Forget(n)));
        }
    }
    let applied = apply::apply(
        cx,
        Change {
            operation: format!("remove {key}"),
            edits,
            installed: Some(installed),
            deps: DepsConsent::Pending,
            grants: GrantFlags::default(),
            accept_surface: true,
            plan: PlanMode::Off,
            plan_notes: Vec::new(),
        },
        prompter,
        feedback,
    )?;
    if purge_data {
        let data = cx
            .layout
            .plugin_data(&key)
            .map_err(|e| ManagerError::Refused(e.to_string()))?;
        match std::fs::remove_dir_all(&data) {
            Ok(()) => feedback.note(&format!("removed {}", data.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(ManagerError::caused(
                    Code::Environment,
                    format!("cannot remove the plugin's data {}", data.display()),
                    &e,
                ));
            }
        }
    }
    Ok(applied)
}
