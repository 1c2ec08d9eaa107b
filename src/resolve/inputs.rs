//! What goes into a resolution (RES-1): Hermes core's requirements (with the selected extras),
//! the managed requirements of each plugin, each labelled with where it came from.
//! Direct-URL requirements, `python_runtime: external` plugins and dependencies on
//! `hermes-agent` itself are left out, and said so.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use uv_normalize::PackageName;
use uv_pep508::{Requirement, VerbatimUrl, VersionOrUrl};

use crate::hermes_core::{CoreError, CoreLock, CoreProject};
use crate::package::declarations::Unmanaged;
use crate::package::{self, Content, Mode};
use crate::state::profiles;

/// Who asked for a requirement.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// Hermes core (its `[project].dependencies`).
    Core,
    /// Hermes core, through an optional extra.
    CoreExtra(String),
    /// A plugin, by name.
    Plugin(String),
}

impl Source {
    /// The label used in locks: `core` or `plugin:<name>`.
    pub fn label(&self) -> String {
        match self {
            Source::Core | Source::CoreExtra(_) => "core".to_string(),
            Source::Plugin(name) => format!("plugin:{name}"),
        }
    }

    /// How sentences name it: "Hermes core", "Hermes core (extra `x`)", "plugin `weather`".
    pub fn describe(&self) -> String {
        match self {
            Source::Core => "Hermes core".to_string(),
            Source::CoreExtra(extra) => format!("Hermes core (extra `{extra}`)"),
            Source::Plugin(name) => format!("plugin `{name}`"),
        }
    }
}

/// A requirement with its origin.
#[derive(Debug, Clone)]
pub struct Labelled {
    /// Who asked for it.
    pub source: Source,
    /// As written.
    pub raw: String,
    /// Parsed.
    pub requirement: Requirement<VerbatimUrl>,
}

/// Why a declared requirement is not resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExcludeReason {
    /// `name @ url`.
    DirectUrl,
    /// The plugin runs its own interpreter.
    ExternalRuntime,
    /// A dependency on Hermes itself.
    HermesAgent,
}

impl ExcludeReason {
    /// `direct-url`, `external-runtime`, `hermes-agent`.
    pub fn as_str(self) -> &'static str {
        match self {
            ExcludeReason::DirectUrl => "direct-url",
            ExcludeReason::ExternalRuntime => "external-runtime",
            ExcludeReason::HermesAgent => "hermes-agent",
        }
    }
}

/// A declared requirement left out of the resolution.
#[derive(Debug, Clone)]
pub struct Excluded {
    /// Who declared it.
    pub source: Source,
    /// As written.
    pub raw: String,
    /// Why.
    pub reason: ExcludeReason,
}

/// Hermes core as an input.
#[derive(Debug, Clone)]
pub struct CoreInputs {
    /// Where core comes from.
    pub origin: CoreOrigin,
    /// The checkout, or the installed environment's interpreter.
    pub dir: PathBuf,
    /// sha256 (hex) of what pins core: the checkout's `uv.lock`, or the installed
    /// distributions (`name==version` lines, sorted).
    pub identity: String,
    /// Its project metadata.
    pub project: CoreProject,
    /// Its lock (the quarantine list and the preferred versions).
    pub lock: CoreLock,
    /// Its requirements, with the selected extras (none for an installed Hermes: what it needs
    /// is installed already).
    pub requirements: Vec<Labelled>,
    /// Versions plugins must share with it: an installed Hermes's distributions, exactly (a
    /// plugin cannot move what the agent imports).
    pub constraints: Vec<Requirement<VerbatimUrl>>,
}

/// Where Hermes core comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreOrigin {
    /// A checkout: `pyproject.toml` + `uv.lock`.
    Checkout,
    /// An installed Hermes: the interpreter whose environment has `hermes-agent`; its
    /// installed distributions are core's pins.
    Installed,
}

/// A plugin as an input.
#[derive(Debug, Clone)]
pub struct PluginInput {
    /// The plugin's name (what messages call it).
    pub name: String,
    /// Its directory.
    pub dir: PathBuf,
    /// Its managed requirements.
    pub requirements: Vec<Labelled>,
    /// Requirements it declared that are not resolved.
    pub excluded: Vec<Excluded>,
}

/// Why inputs could not be gathered.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// Core could not be read.
    #[error(transparent)]
    Core(#[from] CoreError),
    /// A core requirement is not PEP 508.
    #[error("{path}: `{raw}` is not a valid PEP 508 requirement: {message}")]
    CoreRequirement {
        /// pyproject.toml.
        path: PathBuf,
        /// The requirement.
        raw: String,
        /// Parser message.
        message: String,
    },
    /// An extra that core does not define.
    #[error("Hermes core has no extra `{extra}` (it has: {available})")]
    UnknownExtra {
        /// The extra asked for.
        extra: String,
        /// The extras core defines.
        available: String,
    },
    /// A plugin directory could not be loaded.
    #[error("{path}: {message}")]
    Plugin {
        /// The directory.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The interpreter of an installed Hermes could not be asked, or has no `hermes-agent`.
    #[error("{python}: {message}")]
    Installed {
        /// The interpreter.
        python: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The default profile's configuration could not be read.
    #[error("cannot read the selection of the default profile: {0}")]
    Profile(#[from] profiles::ProfileError),
}

fn hermes() -> PackageName {
    PackageName::from_str("hermes-agent").expect("valid name")
}

impl CoreInputs {
    /// Reads core's pyproject and lock, with the given extras.
    pub fn load(dir: &Path, extras: &[String]) -> Result<CoreInputs, InputError> {
        let project = CoreProject::load(dir)?;
        let lock = CoreLock::load(dir)?;
        let identity = std::fs::read(&lock.path)
            .map(|b| hex_sha256(&b))
            .unwrap_or_default();
        Self::from_parts(CoreOrigin::Checkout, dir, identity, project, lock, extras)
    }

    /// Asks the interpreter of an installed Hermes for `hermes-agent`'s requirements and every
    /// installed distribution ([`super::core_environment`], remembered under `cache`, the
    /// user's cache directory, while the environment is unchanged): the distributions are
    /// core's pins (what the agent imports), the requirements and extras as the wheel's
    /// metadata states them.
    pub fn installed(
        python: &Path,
        extras: &[String],
        cache: Option<&Path>,
    ) -> Result<CoreInputs, InputError> {
        let (facts, _) = super::core_environment::query(python, cache).map_err(|message| {
            InputError::Installed {
                python: python.to_path_buf(),
                message,
            }
        })?;
        let mut optional: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut dependencies = Vec::new();
        for raw in &facts.requires {
            let Ok(mut requirement) = Requirement::<VerbatimUrl>::parse(raw, python) else {
                continue;
            };
            let extra = EXTRA_MARKER.captures(raw).map(|c| c[1].to_string());
            match extra {
                Some(extra) => {
                    let Ok(name) = uv_normalize::ExtraName::from_str(&extra) else {
                        continue;
                    };
                    requirement.marker = requirement.marker.simplify_extras(&[name]);
                    optional
                        .entry(extra)
                        .or_default()
                        .push(requirement.to_string());
                }
                None => dependencies.push(raw.clone()),
            }
        }
        let mut pins: Vec<String> = facts
            .installed
            .iter()
            .map(|(name, version)| format!("{name}=={version}"))
            .collect();
        pins.sort();
        pins.dedup();
        let identity = hex_sha256(pins.join("\n").as_bytes());
        let mut packages = BTreeMap::new();
        for (name, version) in &facts.installed {
            let (Ok(name), Ok(version)) = (
                PackageName::from_str(name),
                uv_pep440::Version::from_str(version),
            ) else {
                continue;
            };
            if name == hermes() {
                continue;
            }
            packages.insert(
                name.clone(),
                crate::hermes_core::LockedPackage {
                    name,
                    version,
                    registry: Some("installed".to_string()),
                },
            );
        }
        let project = CoreProject {
            path: python.to_path_buf(),
            name: "hermes-agent".to_string(),
            version: Some(facts.version),
            dependencies,
            optional_dependencies: optional,
            exclude_newer: None,
            exclude_newer_package: BTreeMap::new(),
        };
        let constraints = packages
            .values()
            .filter_map(|p| {
                Requirement::<VerbatimUrl>::parse(&format!("{}=={}", p.name, p.version), python)
                    .ok()
            })
            .collect();
        let lock = CoreLock {
            path: python.to_path_buf(),
            packages,
        };
        let mut core = Self::from_parts(
            CoreOrigin::Installed,
            python,
            identity,
            project,
            lock,
            extras,
        )?;
        core.requirements.clear();
        core.constraints = constraints;
        Ok(core)
    }

    fn from_parts(
        origin: CoreOrigin,
        dir: &Path,
        identity: String,
        project: CoreProject,
        lock: CoreLock,
        extras: &[String],
    ) -> Result<CoreInputs, InputError> {
        let mut requirements = Vec::new();
        let parse =
            |raw: &String, source: Source| -> Result<Labelled, InputError> {
                let requirement = crate::package::declarations::parse_requirement(raw, dir)
                    .map_err(|message| InputError::CoreRequirement {
                        path: project.path.clone(),
                        raw: raw.clone(),
                        message,
                    })?;
                Ok(Labelled {
                    source,
                    raw: raw.clone(),
                    requirement,
                })
            };
        for raw in &project.dependencies {
            requirements.push(parse(raw, Source::Core)?);
        }
        for extra in extras {
            let Some(list) = project.optional_dependencies.get(extra) else {
                return Err(InputError::UnknownExtra {
                    extra: extra.clone(),
                    available: project
                        .optional_dependencies
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            };
            for raw in list {
                let labelled = parse(raw, Source::CoreExtra(extra.clone()))?;
                // `hermes-agent[other-extra]` inside an extra refers to core itself.
                if labelled.requirement.name != hermes() {
                    requirements.push(labelled);
                }
            }
        }
        requirements
            .retain(|r| !matches!(r.requirement.version_or_url, Some(VersionOrUrl::Url(_))));
        Ok(CoreInputs {
            origin,
            dir: dir.to_path_buf(),
            identity,
            project,
            lock,
            requirements,
            constraints: Vec::new(),
        })
    }

    /// How core is described to people: `hermes-agent 0.19.0 (installed in /venv/bin/python)`.
    pub fn describe(&self) -> String {
        let version = self.project.version.as_deref().unwrap_or("?");
        match self.origin {
            CoreOrigin::Checkout => format!(
                "{} {version} (checkout {})",
                self.project.name,
                self.dir.display()
            ),
            CoreOrigin::Installed => format!(
                "{} {version} (installed, {})",
                self.project.name,
                self.dir.display()
            ),
        }
    }
}

/// `extra == "name"` in a Requires-Dist marker.
static EXTRA_MARKER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r#"extra\s*==\s*['"]([^'"]+)['"]"#).expect("valid regex")
});

fn hex_sha256(bytes: &[u8]) -> String {
    crate::hash::sha256_hex(bytes)
}

/// The requirement that installs a plugin that is a wheel: `name==version` of its
/// distribution (None for a project directory, which is not installed from a wheel).
pub fn wheel_requirement(pip: &crate::package::pip::PipPackage) -> Option<String> {
    match (&pip.source, &pip.project, &pip.version) {
        (crate::package::pip::PipSource::Wheel { .. }, Some(name), Some(version)) => {
            Some(format!("{name}=={version}"))
        }
        _ => None,
    }
}

/// Loads a plugin directory's managed requirements.
pub fn plugin_from_dir(dir: &Path) -> Result<PluginInput, InputError> {
    let loaded = package::load_dir(dir, Mode::Runtime).map_err(|e| InputError::Plugin {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    let name = loaded.name();
    let source = Source::Plugin(name.clone());
    let mut input = PluginInput {
        name,
        dir: dir.to_path_buf(),
        requirements: Vec::new(),
        excluded: Vec::new(),
    };
    if let Content::Pip(pip) = &loaded.content {
        // A wheel tree: the distribution itself, by name and version (its dependencies come
        // from its metadata; `manager::pypi::check_locked_wheels` holds the lock to the file).
        if let Some(raw) = wheel_requirement(pip) {
            let requirement =
                Requirement::<VerbatimUrl>::from_str(&raw).map_err(|e| InputError::Plugin {
                    path: dir.to_path_buf(),
                    message: format!("{raw}: {e}"),
                })?;
            input.requirements.push(Labelled {
                source: source.clone(),
                raw,
                requirement,
            });
        }
        return Ok(input);
    }
    let Content::Native(native) = &loaded.content else {
        // Portable packages import no Python.
        return Ok(input);
    };
    if native.manifest.is_none() {
        let reason = loaded
            .diagnostics
            .iter()
            .find(|d| d.severity == crate::diag::Severity::Error)
            .map_or_else(
                || "the manifest cannot be read".to_string(),
                |d| d.message.clone(),
            );
        return Err(InputError::Plugin {
            path: dir.to_path_buf(),
            message: reason,
        });
    }
    // A requirement that does not parse is not silently left out of the resolution.
    if let Some(bad) = loaded.diagnostics.iter().find(|d| {
        d.check == crate::diag::CheckId::PythonDependencies
            && d.severity == crate::diag::Severity::Error
    }) {
        return Err(InputError::Plugin {
            path: dir.to_path_buf(),
            message: format!("{}: {}", bad.file, bad.message),
        });
    }
    for req in &native.declarations.managed {
        input.requirements.push(Labelled {
            source: source.clone(),
            raw: req.raw.clone(),
            requirement: req.requirement.clone(),
        });
    }
    for (req, why) in &native.declarations.unmanaged {
        input.excluded.push(Excluded {
            source: source.clone(),
            raw: req.raw.clone(),
            reason: match why {
                Unmanaged::DirectUrl => ExcludeReason::DirectUrl,
                Unmanaged::ExternalRuntime => ExcludeReason::ExternalRuntime,
            },
        });
    }
    for d in &loaded.diagnostics {
        if d.message.contains("dependency on hermes-agent is dropped")
            && let Some(raw) = &d.value
        {
            input.excluded.push(Excluded {
                source: source.clone(),
                raw: raw.clone(),
                reason: ExcludeReason::HermesAgent,
            });
        }
    }
    Ok(input)
}

/// The plugins enabled in every profile of a home: managed ones from the store, the others
/// found in the profile's own `plugins/` or `<home>/plugins` (flat or category layout), with
/// warnings for unreadable named profiles and enabled plugins that are nowhere.
pub fn enabled_plugins(
    layout: &crate::home::Layout,
) -> Result<(Vec<PluginInput>, Vec<String>), InputError> {
    let (profiles, profile_warnings) = profiles::read_profiles(&layout.home)?;
    let mut warnings: Vec<String> = profile_warnings
        .iter()
        .map(|w| format!("skipping a profile: {w}"))
        .collect();
    let mut wanted: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in &profiles {
        for key in p.selected() {
            wanted.entry(key.clone()).or_default().push(p.name.clone());
        }
    }
    // Plugins the package manager installed (their trees are in the store) come first; the
    // others are looked for in the profiles' own plugins/ and then <home>/plugins, each
    // directory read once.
    let managed = crate::state::installed::Installed::read(&layout.installed()).unwrap_or_default();
    let dirs_of = |profile_names: &[String]| -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = profile_names
            .iter()
            .map(|profile| layout.user_plugins(profile))
            .collect();
        dirs.push(layout.user_plugins("default"));
        dirs.dedup();
        dirs
    };
    let mut scanned: BTreeMap<PathBuf, Vec<package::LoadedPackage>> = BTreeMap::new();
    for (key, profile_names) in &wanted {
        if managed.find(key).is_none() {
            for dir in dirs_of(profile_names) {
                scanned.entry(dir).or_insert_with_key(|dir| {
                    package::load_path(dir, Mode::Runtime)
                        .map(|tree| tree.packages)
                        .unwrap_or_default()
                });
            }
        }
    }
    let mut out = Vec::new();
    for (key, profile_names) in &wanted {
        if let Some(p) = managed.find(key) {
            out.push(plugin_from_dir(&layout.store().join(&p.store_key))?);
            continue;
        }
        let dirs = dirs_of(profile_names);
        let found = dirs.iter().find_map(|dir| {
            let packages = scanned.get(dir)?;
            packages
                .iter()
                .find(|p| &p.key == key)
                .or_else(|| packages.iter().find(|p| &p.name() == key))
        });
        match found {
            Some(p) => out.push(plugin_from_dir(&p.dir)?),
            None => warnings.push(format!(
                "plugin `{key}` is enabled (profile {}) but not installed in {}",
                profile_names.join(", "),
                dirs.iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" or ")
            )),
        }
    }
    Ok((out, warnings))
}
