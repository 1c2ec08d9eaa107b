//! Views (`list`, `show`, `env`, `capabilities`, `generations list`, `verify`): reads of the
//! home, changing nothing. The generation operations that change it are in
//! [`super::generations`].

use std::collections::{BTreeMap, BTreeSet};

use super::reads::{self, missing_env};
use super::views::{
    CapabilitiesView, CapabilityRow, ConsentRecord, DependenciesView, EnvPlugin, EnvView,
    ExternalPlugin, ManifestSummary, McpServerView, MissingEnv, ProfileStatus, PythonView,
    ShowView,
};
use super::{Context, ManagerError};
use crate::exit::Code;
use crate::generation::current;
use crate::generation::doc::GenerationDoc;
use crate::generation::verify::{self, Problem};
use crate::package::{self, Content, Mode};
use crate::state::profiles;
use crate::store::Store;

use super::installed;

/// One row of `list`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ListRow {
    /// Plugin key.
    pub key: String,
    /// Declared version.
    pub version: Option<String>,
    /// `native` / `portable`.
    pub kind: crate::package::Kind,
    /// Per profile: where it stands there.
    pub status: BTreeMap<String, ProfileStatus>,
    /// `catalog (official)`, `unreviewed`.
    pub origin: String,
    /// First 12 hex of the commit.
    pub commit: Option<String>,
    /// Tools the manifest declares.
    pub tools: usize,
    /// Hooks the manifest declares.
    pub hooks: usize,
}

fn counts(store: &Store, store_key: &str) -> (usize, usize) {
    let Ok(loaded) = package::load_dir(&store.path_of(store_key), Mode::Runtime) else {
        return (0, 0);
    };
    match &loaded.content {
        Content::Native(n) => n
            .manifest
            .as_ref()
            .map_or((0, 0), |m| (m.provides_tools.len(), m.provides_hooks.len())),
        Content::Portable(_) | Content::Pip(_) => (0, 0),
    }
}

/// `list`: installed plugins with their status per profile.
pub fn list(cx: &Context, all_profiles: bool) -> Result<Vec<ListRow>, ManagerError> {
    let installed = installed(cx)?;
    let (profiles, _) =
        profiles::read_profiles(&cx.layout.home).map_err(ManagerError::environment)?;
    let current = reads::current_doc(cx);
    let store = Store::open(cx.layout.store())?;
    let mut rows = Vec::new();
    for p in installed.plugins.values() {
        let mut status = BTreeMap::new();
        for profile in &profiles {
            if !all_profiles && profile.name != cx.profile {
                continue;
            }
            let selected = profile.selected().any(|k| k == &p.key || k == &p.name);
            let published = current.as_ref().is_some_and(|d| {
                d.profiles
                    .get(&profile.name)
                    .is_some_and(|s| s.enabled.contains(&p.key))
            });
            let state = if selected {
                env_status(missing_env(cx, &p.store_key)).unwrap_or(ProfileStatus::Enabled {
                    pending: !published,
                })
            } else {
                ProfileStatus::Disabled { pending: published }
            };
            status.insert(profile.name.clone(), state);
        }
        // An unreadable kill list blocks everything it could name.
        if !matches!(
            super::removed_entry(cx, Some(&p.name), p.source.url.as_deref()),
            Ok(None)
        ) {
            for s in status.values_mut() {
                *s = ProfileStatus::Blocked(Box::new(s.clone()));
            }
        }
        let (tools, hooks) = counts(&store, &p.store_key);
        rows.push(ListRow {
            key: p.key.clone(),
            version: p.version.clone(),
            kind: p.kind,
            status,
            origin: match &p.source.catalog {
                Some(c) => format!("catalog ({})", c.tier.as_deref().unwrap_or("community")),
                None => "unreviewed".to_string(),
            },
            commit: p
                .source
                .commit
                .as_ref()
                .map(|c| c.chars().take(12).collect()),
            tools,
            hooks,
        });
    }
    // External plugins (enabled by hand in a profile's plugins/): in the generation, not
    // managed.
    let mut external: BTreeMap<String, BTreeMap<String, ProfileStatus>> = BTreeMap::new();
    for (profile, selection) in current.iter().flat_map(|d| &d.profiles) {
        if !all_profiles && profile != &cx.profile {
            continue;
        }
        for name in &selection.external {
            external
                .entry(name.clone())
                .or_default()
                .insert(profile.clone(), ProfileStatus::External);
        }
    }
    for (name, status) in external {
        rows.push(ListRow {
            key: name,
            version: None,
            kind: crate::package::Kind::Native,
            status,
            origin: "external (not managed: loaded from the profile's plugins/)".to_string(),
            commit: None,
            tools: 0,
            hooks: 0,
        });
    }
    Ok(rows)
}

/// `show NAME`: the record, the manifest summary and where it is active.
pub fn show(cx: &Context, name: &str) -> Result<ShowView, ManagerError> {
    let installed = installed(cx)?;
    let p = installed
        .find(name)
        .ok_or_else(|| ManagerError::coded(Code::NotFound, format!("`{name}` is not installed")))?;
    let store = Store::open(cx.layout.store())?;
    let dir = store.path_of(&p.store_key);
    let manifest = match package::load_dir(&dir, Mode::Runtime).map(|l| l.content) {
        Ok(Content::Native(n)) => n.manifest.as_ref().map(|m| ManifestSummary::Native {
            description: m.description.as_ref().map(|d| d.value.clone()),
            provides_tools: m.provides_tools.iter().map(|t| t.value.clone()).collect(),
            provides_hooks: m.provides_hooks.iter().map(|t| t.value.clone()).collect(),
            requires_env: m
                .requires_env
                .iter()
                .map(|e| e.name.value.clone())
                .collect(),
            requires_auth: m.requires_auth.iter().map(|a| a.value.clone()).collect(),
            capabilities: m.capabilities.iter().map(|c| c.value.clone()).collect(),
        }),
        Ok(Content::Portable(pp)) => Some(ManifestSummary::Portable {
            skills: pp.skills.iter().map(|s| s.dir.clone()).collect(),
            mcp_servers: pp.mcp.servers.iter().map(|s| s.name.clone()).collect(),
        }),
        Ok(Content::Pip(_)) | Err(_) => None,
    };
    let current = reads::current_doc(cx);
    let enabled_in: Vec<String> = current
        .as_ref()
        .map(|d| {
            d.profiles
                .iter()
                .filter(|(_, s)| s.enabled.contains(&p.key))
                .map(|(n, _)| n.clone())
                .collect()
        })
        .unwrap_or_default();
    let locked: Vec<String> = current
        .as_ref()
        .map(|d| {
            let label = format!("plugin:{}", p.name);
            d.lock
                .packages
                .iter()
                .filter(|pkg| pkg.required_by.contains(&label))
                .map(|pkg| format!("{} {}", pkg.name, pkg.version))
                .collect()
        })
        .unwrap_or_default();
    let caps = capabilities(cx, &p.key)?;
    let missing = missing_env(cx, &p.store_key);
    Ok(ShowView {
        plugin: p.clone(),
        store_path: dir,
        capabilities: caps.capabilities,
        consent: caps.consent,
        requires_env: MissingEnv {
            missing: missing.as_ref().cloned().unwrap_or_default(),
        },
        status: env_status(missing),
        manifest,
        enabled_in,
        dependencies: DependenciesView {
            declared: p.requirements.clone(),
            installed: locked,
        },
        reviewed: p.source.reviewed,
        audit: None,
    })
}

/// `env [--profile P]`: what the agent needs to load the current generation (GEN-9).
pub fn env(cx: &Context) -> Result<EnvView, ManagerError> {
    let Some(number) = current::current_number(&cx.layout) else {
        return Err(ManagerError::coded(
            Code::NoGeneration,
            format!(
                "no generation is published under {} yet (enable a plugin first)",
                cx.layout.pm.display()
            ),
        ));
    };
    let dir = cx.layout.generation(number);
    let doc = GenerationDoc::read(&dir).map_err(ManagerError::environment)?;
    let selection = doc.profiles.get(&cx.profile).cloned().unwrap_or_default();
    let mut plugins = Vec::new();
    for key in &selection.enabled {
        let Some(p) = doc.plugin(key) else { continue };
        let path = dir.join(&p.path);
        let missing = missing_env(cx, &p.store_key)?;
        let mut entry = EnvPlugin {
            key: p.key.clone(),
            name: p.name.clone(),
            kind: p.kind,
            format: p.format,
            path: path.clone(),
            tree: p.tree.clone(),
            granted_capabilities: selection.grants.get(key).cloned().unwrap_or_default(),
            reviewed: p.source.reviewed,
            load: (!missing.is_empty()).then_some(false),
            missing_env: (!missing.is_empty()).then_some(missing),
            env: None,
            mcp_servers: None,
        };
        if p.format == crate::package::Format::Portable {
            let data = cx
                .layout
                .plugin_data(&p.key)
                .map_err(ManagerError::environment)?;
            let mut servers = Vec::new();
            if let Ok(loaded) = package::load_dir(&path, Mode::Runtime)
                && let Content::Portable(pp) = &loaded.content
            {
                for s in &pp.mcp.servers {
                    servers.push(McpServerView {
                        name: s.name.clone(),
                        transport: s.transport.name().to_string(),
                        trust: s.trust.as_str().to_string(),
                    });
                }
            }
            entry.env = Some(BTreeMap::from([
                ("PLUGIN_ROOT".to_string(), path),
                ("PLUGIN_DATA".to_string(), data),
            ]));
            entry.mcp_servers = Some(servers);
        }
        plugins.push(entry);
    }
    Ok(EnvView {
        generation: number,
        path: dir.clone(),
        profile: cx.profile.clone(),
        python: PythonView {
            executable: dir.join(&doc.python.executable),
            version: doc.python.version.clone(),
            base: doc.python.base.clone(),
        },
        core: core_of(&doc),
        sys_path: vec![dir.join(&doc.python.site_packages)],
        plugins,
        external: selection
            .external
            .iter()
            .map(|name| ExternalPlugin {
                name: name.clone(),
                path: cx.layout.user_plugins(&cx.profile).join(name),
            })
            .collect(),
        lease: dir.join("generation.json"),
    })
}

/// How a generation's core is shown: `hermes-agent 0.19.0 (installed …)`, or that it was
/// resolved without one.
pub fn core_of(doc: &GenerationDoc) -> String {
    doc.core.as_ref().map_or_else(
        || "none: resolved without Hermes core (no core pins, no quarantine)".to_string(),
        |c| c.describe(),
    )
}

/// The current generation's core, as [`core_of`] shows it (`None`: nothing published).
pub fn current_core(cx: &Context) -> Option<String> {
    reads::current_doc(cx).map(|d| core_of(&d))
}

/// One row of `generations list`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GenerationRow {
    pub number: u64,
    /// Whether it is current.
    pub current: bool,
    /// When it was built.
    pub created: String,
    /// What built it.
    pub operation: String,
    /// Its plugins.
    pub plugins: Vec<String>,
    /// How many packages its venv has.
    pub packages: usize,
    /// Why the home's policy keeps it (`current`, `parent of current`, `one of the newest
    /// kept`, `in use by a running agent`), or `null` when the next publication or `generations
    /// gc` collects it.
    pub kept: Option<String>,
}

/// `generations list`.
pub fn generations(cx: &Context) -> Vec<GenerationRow> {
    use crate::generation::gc;
    let current = current::current_number(&cx.layout);
    let parent = gc::parent_of_current(&cx.layout);
    let all = current::numbers(&cx.layout);
    let policy = crate::state::settings::Settings::read(&cx.layout.settings())
        .map(|s| s.keep_generations())
        .unwrap_or(Some(
            crate::state::settings::DEFAULT_KEEP_GENERATIONS as usize,
        ));
    let newest: std::collections::BTreeSet<u64> = match policy {
        Some(keep) => all.iter().rev().take(keep).copied().collect(),
        None => all.iter().copied().collect(),
    };
    all.into_iter()
        .filter_map(|n| {
            let dir = cx.layout.generation(n);
            let doc = GenerationDoc::read(&dir).ok()?;
            let kept = gc::kept_because(n, current, parent, &newest)
                .map(|why| match (why, policy) {
                    (gc::Kept::Newest, None) => {
                        "keep-generations is 0: nothing is collected automatically".to_string()
                    }
                    (gc::Kept::Newest, Some(keep)) => {
                        format!("one of the newest {keep} (keep-generations)")
                    }
                    (why, _) => why.as_str().to_string(),
                })
                .or_else(|| {
                    crate::generation::lease::claim_unleased(&dir)
                        .is_none()
                        .then(|| "in use by a running agent".to_string())
                });
            Some(GenerationRow {
                kept,
                number: n,
                current: Some(n) == current,
                created: doc.created,
                operation: doc.operation,
                plugins: doc.plugins.iter().map(|p| p.key.clone()).collect(),
                packages: doc.lock.packages.len(),
            })
        })
        .collect()
}

/// `verify`: checks the current generation.
pub fn verify(cx: &Context) -> Result<(u64, Vec<Problem>), ManagerError> {
    let number = current::current_number(&cx.layout).ok_or_else(|| {
        ManagerError::coded(
            Code::NoGeneration,
            "no generation is published yet: nothing to verify",
        )
    })?;
    let dir = cx.layout.generation(number);
    let doc = GenerationDoc::read(&dir).map_err(ManagerError::environment)?;
    if doc.number != number {
        return Ok((
            number,
            vec![Problem {
                subject: "generation.json".into(),
                message: format!("records number {} in directory {number}", doc.number),
            }],
        ));
    }
    let store = Store::open(cx.layout.store())?;
    Ok((number, verify::verify(&dir, &doc, &store)))
}

/// A status for `list`/`show` from [`missing_env`]: `None` when nothing is missing.
fn env_status(missing: Result<Vec<String>, ManagerError>) -> Option<ProfileStatus> {
    match missing {
        Ok(m) if m.is_empty() => None,
        Ok(m) => Some(ProfileStatus::MissingEnv(m)),
        Err(e) => Some(ProfileStatus::Unknown(crate::exit::layers(&e).join(": "))),
    }
}

/// `capabilities NAME`: each declared (or granted) capability with its risk and whether the
/// profile granted it, plus the consent record.
pub fn capabilities(cx: &Context, name: &str) -> Result<CapabilitiesView, ManagerError> {
    let installed = installed(cx)?;
    let p = installed
        .find(name)
        .ok_or_else(|| ManagerError::coded(Code::NotFound, format!("`{name}` is not installed")))?;
    let store = Store::open(cx.layout.store())?;
    let declared =
        crate::consent::declared::Declared::read(&store.path_of(&p.store_key)).capabilities;
    let config = cx.config_path(&cx.profile);
    let text = std::fs::read_to_string(&config).unwrap_or_default();
    let grants = crate::consent::capabilities::read(&text, &p.key).map_err(|source| {
        super::Refusal::Config {
            path: config.clone(),
            source,
        }
    })?;
    let ids: BTreeSet<String> = declared.union(&grants.granted).cloned().collect();
    Ok(CapabilitiesView {
        plugin: p.key.clone(),
        profile: cx.profile.clone(),
        capabilities: ids
            .iter()
            .map(|id| CapabilityRow {
                id: id.clone(),
                declared: declared.contains(id),
                granted: grants.granted.contains(id),
                risk: crate::known::capability(id)
                    .map(|c| c.risk)
                    .unwrap_or("unknown capability (ignored by Hermes)"),
            })
            .collect(),
        consent: ConsentRecord {
            hash: grants.hash,
            granted_at: grants.granted_at,
        },
        note: crate::consent::prompt::NOT_A_SANDBOX,
    })
}
