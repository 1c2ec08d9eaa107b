//! The one path every mutating operation takes: selections → generation inputs → (no-op |
//! consent → resolve → build → publish with the user-file edits) in one transaction.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use sha2::{Digest, Sha256};

use super::consent_step::{self, Decisions, GrantFlags};
use super::plan::{Plan, PlanItem, PlanMode};
use super::{Context, DepsConsent, Feedback, ManagerError, Prompter};
use crate::consent::audit;
use crate::exit::Code;
use crate::generation::build::{self, BuildInputs};
use crate::generation::doc;
use crate::generation::doc::{
    CoreIdentity, GenPlugin, GenerationDoc, IndexRecord, ProfileSelection, PythonEnv,
};
use crate::generation::publish::{self, Transaction};
use crate::resolve::engine::EngineError;
use crate::resolve::inputs::CoreOrigin;
use crate::resolve::{self, Failure, Request, inputs};
use crate::state::config_edit;
use crate::state::installed::Installed;
use crate::state::profiles;
use crate::store::Store;

/// A change to one profile's selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectionEdit {
    /// Add to `plugins.enabled`, remove from `plugins.disabled`.
    Enable(String),
    /// Remove from `plugins.enabled`, add to `plugins.disabled`.
    Disable(String),
    /// Remove from both.
    Forget(String),
}

/// What to change.
#[derive(Debug, Clone)]
pub struct Change {
    /// The operation, for the journal and `generation.json` (`enable weather`).
    pub operation: String,
    /// Selection edits per profile.
    pub edits: Vec<(String, SelectionEdit)>,
    /// The installed state to write (when it changes).
    pub installed: Option<Installed>,
    /// How dependency consent is answered.
    pub deps: DepsConsent,
    /// Capability flags and the plugins they (and `requires_env` prompts) apply to.
    pub grants: GrantFlags,
    /// `--yes`: accept what replaced plugins add to their surface.
    pub accept_surface: bool,
    /// `--dry-run` (return the consent plan, change nothing) or `--plan HASH`.
    pub plan: PlanMode,
    /// Items the caller already knows the plan has (`requires_auth` of an installed plugin).
    pub plan_notes: Vec<PlanItem>,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Applied {
    /// The generation now current (`None` if there is none).
    pub generation: Option<u64>,
    /// The generation before.
    pub previous: Option<u64>,
    /// Whether a new generation was published.
    pub published: bool,
    /// Packages added/removed/changed in the environment (`name version` strings).
    pub changes: Vec<String>,
    /// Plugins in the new generation.
    pub plugins: Vec<String>,
    /// With `--dry-run`: what the operation would ask, and how to approve it (printed
    /// beside the publication, not inside it).
    #[serde(skip)]
    pub plan: Option<Plan>,
}

struct ProfileState {
    config: PathBuf,
    original: Option<String>,
    text: String,
    enabled: BTreeSet<String>,
    disabled: BTreeSet<String>,
}

fn read_text(path: &std::path::Path) -> Result<Option<String>, ManagerError> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ManagerError::Environment(format!(
            "{}: {e}",
            path.display()
        ))),
    }
}

/// Core as a generation records it.
fn core_identity(cx: &Context) -> Option<CoreIdentity> {
    cx.core.as_ref().map(|c| CoreIdentity {
        name: c.project.name.clone(),
        version: c.project.version.clone(),
        lock_sha256: c.identity.clone(),
        extras: cx.extras.clone(),
        origin: Some(match c.origin {
            CoreOrigin::Checkout => format!("checkout {}", c.dir.display()),
            CoreOrigin::Installed => format!("installed {}", c.dir.display()),
        }),
    })
}

/// The indexes as a generation records them (credentials stripped).
fn index_record(index: &crate::resolve::engine::IndexConfig) -> IndexRecord {
    IndexRecord {
        url: index
            .index_url
            .as_deref()
            .map(crate::text::strip_credentials),
        extra: index
            .extra_index_urls
            .iter()
            .map(|u| crate::text::strip_credentials(u))
            .collect(),
        find_links: index.find_links.clone(),
    }
}

/// What changed in the environment between two generations, for people: core, the
/// interpreter, the indexes.
fn input_changes(old: &GenerationDoc, new: &GenerationDoc) -> Vec<String> {
    let core = |d: &GenerationDoc| {
        d.core
            .as_ref()
            .map_or_else(|| "none".to_string(), CoreIdentity::describe)
    };
    let mut out = Vec::new();
    if old.core.as_ref().map(|c| &c.lock_sha256) != new.core.as_ref().map(|c| &c.lock_sha256)
        || core(old) != core(new)
    {
        out.push(format!("core: {} -> {}", core(old), core(new)));
    }
    if old.python.base != new.python.base {
        out.push(format!(
            "python: {} -> {}",
            old.python.base, new.python.base
        ));
    }
    if let (Some(a), Some(b)) = (&old.index, &new.index)
        && a != b
    {
        out.push(format!(
            "index: {} -> {}",
            serde_json::to_string(a).unwrap_or_default(),
            serde_json::to_string(b).unwrap_or_default()
        ));
    }
    out
}

/// What every digest covers: core's identity, extras, the interpreter, the indexes and the
/// quarantine window (in this order: digests of existing generations depend on it).
fn environment(cx: &Context) -> serde_json::Map<String, serde_json::Value> {
    let core = cx.core.as_ref().map(|c| match c.origin {
        CoreOrigin::Checkout => serde_json::json!({
            "name": c.project.name,
            "lock": file_sha256(&c.lock.path),
            "pyproject": file_sha256(&c.project.path),
        }),
        CoreOrigin::Installed => serde_json::json!({
            "name": c.project.name,
            "installed": c.identity,
            "python": c.dir.display().to_string(),
        }),
    });
    let mut doc = serde_json::Map::new();
    doc.insert("core".into(), serde_json::json!(core));
    doc.insert("extras".into(), serde_json::json!(cx.extras));
    doc.insert(
        "python".into(),
        serde_json::json!(cx.python.display().to_string()),
    );
    doc.insert(
        "index".into(),
        serde_json::json!({
            "url": cx.index.index_url,
            "extra": cx.index.extra_index_urls,
            "find_links": cx.index.find_links,
        }),
    );
    doc.insert(
        "quarantine_days".into(),
        serde_json::json!(cx.quarantine_days),
    );
    doc
}

fn digest_of(doc: serde_json::Map<String, serde_json::Value>) -> String {
    let text = serde_json::Value::Object(doc).to_string();
    format!("sha256:{}", hex(&Sha256::digest(text.as_bytes())))
}

/// The inputs digest (GEN-5): everything that decides a generation's content.
pub fn inputs_digest(
    cx: &Context,
    plugins: &[GenPlugin],
    profiles: &BTreeMap<String, ProfileSelection>,
) -> String {
    let mut doc = environment(cx);
    doc.insert(
        "plugins".into(),
        serde_json::json!(
            plugins
                .iter()
                .map(|p| (&p.key, &p.tree))
                .collect::<Vec<_>>()
        ),
    );
    doc.insert("profiles".into(), serde_json::json!(profiles));
    digest_of(doc)
}

/// The resolution digest: what decides the lock alone (see
/// [`GenerationDoc::resolution_digest`]).
fn resolution_digest(cx: &Context, request: &Request) -> String {
    // Only requirements decide: a plugin without any (or with only excluded ones) adds nothing.
    let (inputs, _) = request.lock_inputs();
    let inputs: Vec<_> = inputs
        .into_iter()
        .filter(|i| !i.requirements.is_empty())
        .collect();
    let mut doc = environment(cx);
    doc.insert("inputs".into(), serde_json::json!(inputs));
    digest_of(doc)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn file_sha256(path: &std::path::Path) -> String {
    std::fs::read(path)
        .map(|b| hex(&Sha256::digest(&b)))
        .unwrap_or_default()
}

/// The current generation's document, if there is one.
pub fn current_doc(cx: &Context) -> Option<GenerationDoc> {
    let n = publish::current_number(&cx.layout)?;
    GenerationDoc::read(&cx.layout.generation(n)).ok()
}

/// Applies a change (see the module documentation). Holds no lock itself: the caller has
/// called [`super::begin_writing`].
pub fn apply(
    cx: &Context,
    mut change: Change,
    prompter: &mut dyn Prompter,
    feedback: &mut dyn Feedback,
) -> Result<Applied, ManagerError> {
    if let PlanMode::Expect(expected) = &change.plan {
        // The plan is what a dry run without approvals shows; it must not have moved.
        let dry = Change {
            plan: PlanMode::Dry,
            deps: DepsConsent::Ask,
            accept_surface: false,
            grants: GrantFlags {
                targets: change.grants.targets.clone(),
                ..GrantFlags::default()
            },
            ..change.clone()
        };
        let shown = apply(cx, dry, &mut super::NoInput, &mut super::Silent)?
            .plan
            .map(|p| p.hash)
            .unwrap_or_default();
        if &shown != expected {
            return Err(ManagerError::coded(
                Code::PlanChanged,
                format!(
                    "the consent plan changed since it was shown ({expected}, now {shown}): nothing was changed; show it again with --dry-run"
                ),
            ));
        }
        change.plan = PlanMode::Off;
    }
    let planning = change.plan == PlanMode::Dry;
    if planning {
        // A plan lists everything to approve, whatever flags came with the dry run.
        change.grants.grant.clear();
        change.grants.revoke.clear();
    }
    let installed = match &change.installed {
        Some(i) => i.clone(),
        None => Installed::read(&cx.layout.installed())
            .map_err(|e| ManagerError::Environment(e.to_string()))?,
    };
    // 1. Profiles and their new selections.
    let (read, warnings) = profiles::read_profiles(&cx.layout.home)
        .map_err(|e| ManagerError::Environment(e.to_string()))?;
    for w in warnings {
        feedback.note(&format!("skipping a profile: {w}"));
    }
    let mut states: BTreeMap<String, ProfileState> = BTreeMap::new();
    for p in read {
        let original = read_text(&p.config)?;
        states.insert(
            p.name.clone(),
            ProfileState {
                config: p.config.clone(),
                text: original.clone().unwrap_or_default(),
                original,
                enabled: p.enabled,
                disabled: p.disabled,
            },
        );
    }
    for (profile, edit) in &change.edits {
        if !states.contains_key(profile) {
            let config = cx.config_path(profile);
            if profile != "default" && !config.parent().is_some_and(|d| d.is_dir()) {
                return Err(ManagerError::Usage(format!(
                    "there is no profile `{profile}` ({} does not exist)",
                    config
                        .parent()
                        .map(|d| d.display().to_string())
                        .unwrap_or_default()
                )));
            }
            states.insert(
                profile.clone(),
                ProfileState {
                    config,
                    original: None,
                    text: String::new(),
                    enabled: BTreeSet::new(),
                    disabled: BTreeSet::new(),
                },
            );
        }
        let state = states.get_mut(profile).expect("inserted above");
        let edited = match edit {
            SelectionEdit::Enable(name) => {
                state.enabled.insert(name.clone());
                state.disabled.remove(name);
                config_edit::enable(&state.text, name)
            }
            SelectionEdit::Disable(name) => {
                state.enabled.remove(name);
                state.disabled.insert(name.clone());
                config_edit::disable(&state.text, name)
            }
            SelectionEdit::Forget(name) => {
                state.enabled.remove(name);
                state.disabled.remove(name);
                config_edit::forget(&state.text, name)
            }
        };
        state.text = edited
            .map_err(|e| ManagerError::Refused(format!("{}: {e}", state.config.display())))?;
    }

    // 2. The generation's plugins and per-profile selections.
    let mut selections: BTreeMap<String, ProfileSelection> = BTreeMap::new();
    let mut keys: BTreeSet<String> = BTreeSet::new();
    for (name, state) in &states {
        let mut enabled: Vec<String> = state
            .enabled
            .iter()
            .filter(|k| !state.disabled.contains(*k))
            .filter_map(|k| installed.find(k).map(|p| p.key.clone()))
            .collect();
        enabled.sort();
        enabled.dedup();
        keys.extend(enabled.iter().cloned());
        selections.insert(
            name.clone(),
            ProfileSelection {
                enabled,
                grants: BTreeMap::new(),
            },
        );
    }
    // Consent (CAP-2…CAP-10): surface additions of replaced plugins, capability grants per
    // profile, requires_env values — decided now, written with the generation.
    change.grants.check()?;
    let current = current_doc(cx);
    let store = Store::open(cx.layout.store())?;
    let mut decisions = Decisions {
        plan: planning.then(|| change.plan_notes.clone()),
        ..Decisions::default()
    };
    let replaced: Vec<(String, PathBuf, PathBuf)> = keys
        .iter()
        .filter_map(|k| {
            let old = current.as_ref()?.plugin(k)?;
            let new = installed.plugins.get(k)?;
            (old.tree != new.tree).then(|| {
                (
                    k.clone(),
                    store.path_of(&old.store_key),
                    store.path_of(&new.store_key),
                )
            })
        })
        .collect();
    let diffs = consent_step::surface(
        &replaced,
        change.accept_surface,
        prompter,
        feedback,
        &mut decisions,
    )?;
    let cap_changes = |key: &str, added: bool| -> Option<BTreeSet<String>> {
        diffs.get(key).map(|d| {
            let list = if added { &d.added } else { &d.removed };
            list.iter()
                .filter(|c| c.kind == "capability")
                .map(|c| c.item.clone())
                .collect()
        })
    };
    for (profile, state) in states.iter_mut() {
        let Some(selection) = selections.get_mut(profile) else {
            continue;
        };
        let mut consider: BTreeSet<String> = selection.enabled.iter().cloned().collect();
        if profile == &cx.profile {
            consider.extend(
                change
                    .grants
                    .targets
                    .iter()
                    .filter_map(|t| installed.find(t).map(|p| p.key.clone())),
            );
        }
        for key in consider {
            let Some(record) = installed.plugins.get(&key) else {
                continue;
            };
            let was_enabled = current.as_ref().is_some_and(|d| {
                d.profiles
                    .get(profile)
                    .is_some_and(|s| s.enabled.contains(&key))
            });
            let targeted = profile == &cx.profile && change.grants.targets.contains(&key);
            let updated = diffs.contains_key(&key);
            let declared = consent_step::declared(&store.path_of(&record.store_key));
            let granted = if was_enabled && !updated && !targeted {
                crate::consent::capabilities::read(&state.text, &key)
                    .map(|g| g.granted)
                    .unwrap_or_default()
            } else {
                let (text, granted) = consent_step::capabilities_for(
                    profile,
                    &key,
                    &state.text,
                    &declared.capabilities,
                    cap_changes(&key, true).as_ref(),
                    &cap_changes(&key, false).unwrap_or_default(),
                    targeted.then_some(&change.grants),
                    prompter,
                    feedback,
                    &mut decisions,
                )?;
                state.text = text;
                granted
            };
            if targeted && !was_enabled && selection.enabled.contains(&key) {
                consent_step::environment(
                    profile,
                    &key,
                    &cx.layout.env_file(),
                    &declared,
                    prompter,
                    feedback,
                    &mut decisions,
                )?;
            }
            if selection.enabled.contains(&key) && !granted.is_empty() {
                selection
                    .grants
                    .insert(key.clone(), granted.into_iter().collect());
            }
        }
    }

    let plugins: Vec<GenPlugin> = keys
        .iter()
        .filter_map(|k| installed.plugins.get(k))
        .map(|p| GenPlugin {
            key: p.key.clone(),
            name: p.name.clone(),
            version: p.version.clone(),
            kind: p.kind.clone(),
            format: p.format.clone(),
            source: p.source.clone(),
            commit: p.source.commit.clone(),
            tree: p.tree.clone(),
            store_key: p.store_key.clone(),
            path: build::plugin_path(&p.key),
            requires_env: consent_step::declared(&store.path_of(&p.store_key))
                .env
                .into_iter()
                .map(|(name, ..)| name)
                .collect(),
        })
        .collect();
    let digest = inputs_digest(cx, &plugins, &selections);
    let previous = publish::current_number(&cx.layout);
    let env_path = cx.layout.env_file();

    let file_edits = |tx: &mut Transaction| -> Result<(), ManagerError> {
        for state in states.values() {
            if state.original.as_deref() != Some(state.text.as_str())
                && !(state.original.is_none() && state.text.is_empty())
            {
                tx.edit_file(&state.config, state.text.as_bytes())?;
            }
        }
        if let Some(new) = &change.installed {
            tx.edit_file(&cx.layout.installed(), new.to_json().as_bytes())?;
        }
        if let Some(text) = &decisions.env_text {
            tx.edit_file_mode(&env_path, text.as_bytes(), Some(0o600))?;
        }
        Ok(())
    };

    // 3. No-op (GEN-5): same inputs as the current generation, or nothing enabled and no
    //    generation yet.
    let unchanged = match &current {
        Some(doc) => doc.inputs_digest == digest,
        None => plugins.is_empty(),
    };
    if unchanged && planning {
        return Ok(Applied {
            generation: previous,
            previous,
            published: false,
            changes: Vec::new(),
            plugins: keys.into_iter().collect(),
            plan: Some(Plan::new(
                &change.operation,
                &digest,
                decisions.plan.take().unwrap_or_default(),
            )),
        });
    }
    if unchanged {
        let mut tx = Transaction::begin_switch(&cx.layout, &change.operation, previous)?;
        file_edits(&mut tx)?;
        tx.commit()?;
        audit::append(&cx.layout.audit_log(), &decisions.audit)?;
        return Ok(Applied {
            generation: previous,
            previous,
            published: false,
            changes: Vec::new(),
            plugins: keys.into_iter().collect(),
            plan: None,
        });
    }

    // 4. Resolve: core + every enabled plugin, preferring the current lock.
    if !cx.core_known {
        return Err(ManagerError::coded(
            Code::NoCore,
            "no Hermes core is known to resolve against: pass --core (a checkout with pyproject.toml and uv.lock, or installed:PYTHON for an installed Hermes; it is recorded) or --no-core to resolve without core pins and quarantine; nothing was changed",
        ));
    }
    let mut plugin_inputs = Vec::new();
    for p in &plugins {
        let dir = store.path_of(&p.store_key);
        plugin_inputs.push(inputs::plugin_from_dir(&dir).map_err(|e| {
            ManagerError::Environment(format!(
                "plugin `{}`: its store tree {} cannot be read: {e} (reinstall it)",
                p.key,
                dir.display()
            ))
        })?);
    }
    let started = std::time::Instant::now();
    let request = Request {
        core: cx.core.clone(),
        extras: cx.extras.clone(),
        plugins: plugin_inputs.clone(),
        python: cx.python.clone(),
        cache_dir: cx.layout.uv_cache(),
        index: cx.index.clone(),
        quarantine_days: cx.quarantine_days,
        now: cx.now,
        previous: current.as_ref().map(|d| d.lock.clone()),
    };
    let resolution = resolution_digest(cx, &request);
    let reusable = current
        .as_ref()
        .filter(|d| d.resolution_digest.as_deref() == Some(resolution.as_str()))
        .map(|d| d.lock.clone());
    let lock = match reusable {
        // Same requirements, core, interpreter and indexes: the current lock's packages stand;
        // its record of the inputs is brought up to date.
        Some(mut lock) => {
            (lock.inputs, lock.excluded) = request.lock_inputs();
            lock
        }
        None => {
            feedback.phase("resolving dependencies");
            let outcome = resolve::run(&request);
            feedback.done();
            match outcome {
                Ok(o) => o.lock,
                Err(Failure::Conflict(c)) => return Err(ManagerError::Conflict(c)),
                Err(Failure::Environment(code, m)) => return Err(ManagerError::Coded(code, m)),
            }
        }
    };
    tracing::debug!(
        "resolved {} packages in {:?}",
        lock.packages.len(),
        started.elapsed()
    );

    // 5. Dependency consent (CAP-6) for requirements not in the current generation.
    let old_inputs: BTreeMap<String, BTreeSet<String>> = current
        .as_ref()
        .map(|d| {
            d.lock
                .inputs
                .iter()
                .map(|i| (i.source.clone(), i.requirements.iter().cloned().collect()))
                .collect()
        })
        .unwrap_or_default();
    let mut asks = Vec::new();
    let surface_consented: BTreeSet<&str> = plugins
        .iter()
        .filter(|p| diffs.contains_key(&p.key))
        .map(|p| p.name.as_str())
        .collect();
    for p in &plugin_inputs {
        if surface_consented.contains(p.name.as_str()) {
            // Its dependency additions were part of the surface it was accepted with.
            continue;
        }
        let label = inputs::Source::Plugin(p.name.clone()).label();
        let before = old_inputs.get(&label).cloned().unwrap_or_default();
        let added: Vec<String> = p
            .requirements
            .iter()
            .map(|r| r.raw.clone())
            .filter(|r| !before.contains(r))
            .collect();
        if added.is_empty() {
            continue;
        }
        let pulled: Vec<String> = lock
            .packages
            .iter()
            .filter(|pkg| pkg.required_by.contains(&label))
            .map(|pkg| format!("{} {}", pkg.name, pkg.version))
            .collect();
        asks.push((p.name.clone(), added, pulled));
    }
    if !asks.is_empty() {
        let mut text = String::from("Python dependencies to install:\n");
        for (name, added, pulled) in &asks {
            text.push_str(&format!(
                "  plugin `{name}` requires: {}\n",
                added.join(", ")
            ));
            if !pulled.is_empty() {
                text.push_str(&format!("    installs: {}\n", pulled.join(", ")));
            }
        }
        let names: Vec<&str> = asks.iter().map(|(n, _, _)| n.as_str()).collect();
        if let Some(plan) = decisions.plan.as_mut() {
            plan.extend(
                asks.iter()
                    .map(|(name, added, pulled)| PlanItem::Dependencies {
                        plugin: name.clone(),
                        requires: added.clone(),
                        installs: pulled.clone(),
                    }),
            );
        }
        let granted = planning
            || match change.deps {
                DepsConsent::Yes => true,
                DepsConsent::No => false,
                DepsConsent::Ask => prompter.confirm(&text, "Install these dependencies?"),
            };
        if granted && !planning {
            for (name, added, _) in &asks {
                decisions.audit.push(audit::AuditEntry {
                    time: audit::now(),
                    profile: cx.profile.clone(),
                    plugin: name.clone(),
                    action: "deps".into(),
                    items: added.clone(),
                    by: match change.deps {
                        DepsConsent::Yes => "--yes-deps".into(),
                        _ => "prompt".into(),
                    },
                    user: audit::user(),
                });
            }
        }
        if !granted {
            let code = match change.deps {
                DepsConsent::No => Code::ConsentRefused,
                _ => consent_step::consent_code(prompter),
            };
            return Err(ManagerError::coded(
                code,
                format!(
                    "{}dependency consent not given for {}: nothing was changed (pass --yes-deps to consent in advance)",
                    text,
                    names.join(", ")
                ),
            ));
        }
    }

    if planning {
        let environment = format!(
            "{digest} {}",
            lock.packages
                .iter()
                .map(|p| format!("{}=={}", p.name, p.version))
                .collect::<Vec<_>>()
                .join(",")
        );
        return Ok(Applied {
            generation: previous,
            previous,
            published: false,
            changes: Vec::new(),
            plugins: keys.into_iter().collect(),
            plan: Some(Plan::new(
                &change.operation,
                &environment,
                decisions.plan.take().unwrap_or_default(),
            )),
        });
    }

    // 6. Build, publish, edit, switch — one transaction.
    let mut new_doc = GenerationDoc {
        format: doc::GENERATION_FORMAT,
        number: 0,
        parent: previous,
        created: doc::created_now(),
        operation: change.operation.clone(),
        inputs_digest: digest,
        resolution_digest: Some(resolution),
        index: Some(index_record(&cx.index)),
        core: core_identity(cx),
        python: PythonEnv {
            base: cx.python.display().to_string(),
            version: lock.python.version.clone(),
            venv: String::new(),
            executable: String::new(),
            site_packages: String::new(),
        },
        plugins,
        profiles: selections,
        lock: lock.clone(),
    };
    let (mut tx, staging) = Transaction::begin_build(&cx.layout, &change.operation)?;
    new_doc.number = tx.target().unwrap_or(1);
    feedback.phase(&format!(
        "building generation {} ({} packages)",
        new_doc.number,
        lock.packages.len()
    ));
    let built = build::build(
        &staging,
        &BuildInputs {
            python: cx.python.clone(),
            cache_dir: cx.layout.uv_cache(),
            index: cx.index.clone(),
            store: cx.layout.store(),
            wheel_cache: cx.layout.wheel_cache(),
            wheel_limits: cx.wheel_limits,
        },
        new_doc,
    );
    feedback.done();
    tracing::debug!("built the generation in {:?}", started.elapsed());
    let built = match built {
        Ok(doc) => doc,
        Err(e) => {
            tx.abort()?;
            let code = match &e {
                build::BuildError::Install(EngineError::Index { .. }) => Code::Network,
                build::BuildError::Install(EngineError::Interpreter { .. }) => Code::Interpreter,
                build::BuildError::Io(_) => Code::Io,
                _ => Code::Environment,
            };
            return Err(ManagerError::coded(code, e.to_string()));
        }
    };
    let steps = (|| -> Result<(), ManagerError> {
        tx.publish_staging()?;
        file_edits(&mut tx)?;
        Ok(())
    })();
    if let Err(e) = steps {
        tx.abort()?;
        return Err(e);
    }
    tx.commit()?;
    audit::append(&cx.layout.audit_log(), &decisions.audit)?;
    tracing::debug!("published in {:?}", started.elapsed());
    let changes = match &current {
        Some(old) => {
            let diff = crate::resolve::lock::LockDiff::between(&old.lock, &lock);
            input_changes(old, &built)
                .into_iter()
                .chain(diff.added.iter().map(|(n, v)| format!("+ {n} {v}")))
                .chain(diff.removed.iter().map(|(n, v)| format!("- {n} {v}")))
                .chain(
                    diff.changed
                        .iter()
                        .map(|(n, a, b)| format!("~ {n} {a} -> {b}")),
                )
                .collect()
        }
        None => lock
            .packages
            .iter()
            .map(|p| format!("+ {} {}", p.name, p.version))
            .collect(),
    };
    Ok(Applied {
        generation: Some(built.number),
        previous,
        published: true,
        changes,
        plugins: keys.into_iter().collect(),
        plan: None,
    })
}
