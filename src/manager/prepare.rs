//! Getting a plugin ready to record: fetched (git, catalog pin, directory, the package index),
//! copied as the store keeps it and validated in a scratch directory without the writer lock
//! ([`prepare`]), then stored and checked against what is installed ([`keep`], [`store`]);
//! the security findings a command accepted, audited once published. Shared by `install`,
//! `update` and `pack install`.

use std::path::{Path, PathBuf};

use super::admission::{Validated, accept_findings, validate};
use super::{Context, Feedback, ManagerError};
use crate::check::static_py::load_imports::LoadImport;
use crate::exit::Code;
use crate::generation::scratch::Scratch;
use crate::package::{self, Content};
use crate::source::{self, Fetched, SourceSpec};
use crate::state::installed::InstalledPlugin;
use crate::store::Store;

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
        other => super::Refusal::Source(other).into(),
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
    crate::store::stage_copy(&fetched.dir, &staged).map_err(super::Refusal::Tree)?;
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
    crate::home::check_key(&key).map_err(super::Refusal::Key)?;
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
pub(super) struct DryStore {
    store: Store,
    before: std::collections::BTreeSet<String>,
}

impl DryStore {
    pub(super) fn begin(cx: &Context, dry: bool) -> Result<Option<DryStore>, ManagerError> {
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
        Some(other) => Err(super::Refusal::SameModule {
            key: key.to_string(),
            module: module.to_string(),
            other: other.clone(),
        }
        .into()),
        None => Ok(()),
    }
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
    pub(super) fn has(&self, id: &str) -> bool {
        self.given.iter().any(|a| a.id == id)
    }
}

/// Appends the security findings accepted on this command to the audit log (`accept-finding`,
/// by `--accept-finding`, each with the flagged file's hash and, when the catalog entry's
/// reviewers accepted it, that entry), once what they let in is recorded.
pub(super) fn audit_acceptances(cx: &Context, key: &str, accepted: &AcceptedNow) {
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
