//! VAL-21 `ctx-call`: every call on `ctx` that `register(ctx)` makes, checked against the
//! `PluginContext` of each Hermes release (and upstream main) the way Python binds arguments —
//! and, from the same facts, the releases a package loads on.
//!
//! A call that fits no known version is an error at the call, with the signature in the hint.
//! One that fits only some versions narrows `loads_on`: if the newest release is not among them
//! but main is, that is information ("needs Hermes newer than 0.19.0"); if main is not either,
//! a warning; and a `requires_hermes` floor older than the first release the calls fit is a
//! warning naming that release. Features no release reads (manifest v2, language packs,
//! portable `plugin.json`) are listed in `needs_newer`, as information. Calls whose absence or failure the code tolerates
//! (`getattr(ctx, "m", None)`, `if hasattr(ctx, "m")`, `try: … except Exception`) never count.

use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;

use serde::Serialize;
use uv_pep440::{Version, VersionSpecifiers};

use crate::diag::{CheckId, Diagnostic, Gate, Severity, did_you_mean};
use crate::known::api::{self, ApiVersion, CallProblem};
use crate::known::releases::{self, Release};
use crate::package::manifest::Kind;
use crate::package::{Content, LoadedPackage};

use super::static_py::StaticAnalysis;
use super::static_py::registrations::{CtxCall, RegKind};

/// Where a package loads: a verdict for every known Hermes version, with the reasons.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Compatibility {
    /// Versions (`0.17.0`, …, `main`) on which it loads, oldest first.
    pub loads_on: Vec<String>,
    /// The oldest of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    /// Features no release reads yet (they need a Hermes newer than the latest release).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub needs_newer: Vec<String>,
    /// Every known version: whether the package loads there.
    pub loads: BTreeMap<String, bool>,
    /// For each version it does not load on: why, as that release's loader would fail.
    pub why_not: BTreeMap<String, Vec<Reason>>,
    /// For each version: registrations its loader rejects one by one while the rest of the
    /// plugin loads (a tool named like one of that release's built-ins).
    pub rejected: BTreeMap<String, Vec<String>>,
}

/// Why a package does not load on one version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reason {
    /// The check that says so (`loadable`, `ctx-call`, `imports`, `requires-hermes`, …).
    pub check: String,
    /// For people.
    pub message: String,
}

impl Reason {
    fn new(check: &str, message: String) -> Reason {
        Reason {
            check: check.to_string(),
            message,
        }
    }

    /// The check id of reasons that only an environment decides: a module neither the
    /// release's reference install nor the declared dependencies provide. A real installed
    /// core may have it (the interpreter is asked at install instead).
    pub const IMPORTS: &'static str = "imports";

    /// Whether the user's own installation decides this reason, not the package: a module the
    /// real core may have ([`Reason::IMPORTS`]), or an override of a built-in tool that loads
    /// once the user grants `tools.override` (which install asks or `--grant` gives).
    pub fn is_conditional(&self) -> bool {
        self.check == Reason::IMPORTS || self.check == CheckId::BuiltinCollisions.as_str()
    }
}

impl Compatibility {
    /// One line for people: `loads on Hermes 0.17.0 – 0.19.0, main`.
    pub fn summary(&self) -> String {
        let versions: Vec<&str> = self.loads_on.iter().map(String::as_str).collect();
        let parts = api::ranges(&versions);
        let mut line = if parts.is_empty() {
            match self.common_reason() {
                Some(reason) => format!("loads on no Hermes: {}", reason.message),
                None => "loads on no known Hermes".to_string(),
            }
        } else {
            format!("loads on Hermes {}", parts.join(", "))
        };
        if !self.needs_newer.is_empty() {
            line.push_str(&format!(
                "; needs a Hermes newer than {} for: {}",
                api::latest_release().version,
                self.needs_newer.join("; ")
            ));
        }
        line
    }

    /// The versions it loads on, counting a version it misses only for conditional reasons
    /// ([`Reason::is_conditional`]) as loading: what install records (there the real
    /// interpreter is asked which modules it has, and the override grant is asked).
    pub fn loads_on_as_installed(&self) -> Vec<String> {
        api::versions()
            .iter()
            .map(|v| &v.version)
            .filter(|version| {
                self.loads.get(*version) == Some(&true)
                    || self
                        .why_not
                        .get(*version)
                        .is_some_and(|reasons| reasons.iter().all(Reason::is_conditional))
            })
            .cloned()
            .collect()
    }

    /// The first reason every version shares (a load-gate error), if any.
    fn common_reason(&self) -> Option<&Reason> {
        let mut all = self.why_not.values();
        let first = all.next()?.first()?;
        all.all(|reasons| reasons.contains(first)).then_some(first)
    }
}

/// Which loader calls `register(ctx)`, and so which `ctx` the calls meet (as Hermes decides
/// in `PluginManager._parse_manifest`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loader {
    /// The general plugin manager: `PluginContext`.
    Plugin,
    /// `plugins/memory` (kind `exclusive`, explicit or detected): its provider collector.
    Memory,
    /// The model-provider discovery, which imports the module and passes no ctx.
    NoContext,
}

impl Loader {
    /// The loader of a native package: its `kind`, or — when `kind` is not written — what
    /// Hermes detects in the first 8 KiB of `__init__.py`.
    pub fn of(package: &LoadedPackage) -> Loader {
        let native = match &package.content {
            Content::Native(native) => native,
            // A memory provider alone is loaded by `plugins.memory`'s provider collector.
            Content::Pip(p) if p.plugins.is_empty() && !p.memory_providers.is_empty() => {
                return Loader::Memory;
            }
            Content::Pip(_) => return Loader::Plugin,
            Content::Portable(_) => return Loader::NoContext,
        };
        let Some(m) = &native.manifest else {
            return Loader::Plugin;
        };
        match m.kind() {
            Kind::Exclusive => return Loader::Memory,
            Kind::ModelProvider => return Loader::NoContext,
            _ if m.has_field("kind") => return Loader::Plugin,
            _ => {}
        }
        let head: String = package
            .root
            .as_ref()
            .and_then(|r| r.read_text("__init__.py", 1 << 22).ok())
            .map(|t| t.chars().take(8192).collect())
            .unwrap_or_default();
        if head.contains("register_memory_provider") || head.contains("MemoryProvider") {
            Loader::Memory
        } else if head.contains("register_provider") && head.contains("ProviderProfile") {
            Loader::NoContext
        } else {
            Loader::Plugin
        }
    }

    /// The methods `ctx` has for this loader in `version`.
    fn methods(self, version: &ApiVersion) -> &BTreeMap<String, Vec<api::Param>> {
        match (self, &version.memory_collector) {
            (Loader::Memory, Some(collector)) => collector,
            _ => &version.methods,
        }
    }
}

/// Why `call` does not fit `version`, if it does not (tolerated failures fit).
fn problem(call: &CtxCall, version: &ApiVersion, loader: Loader) -> Option<CallProblem> {
    if call.errors_ok {
        return None;
    }
    match loader.methods(version).get(&call.method) {
        None if call.absent_ok => None,
        None if loader == Loader::Plugin && version.properties.contains(&call.method) => None,
        None => Some(CallProblem::NoSuchMethod),
        Some(params) => api::bind(params, call.positional, &call.keywords, call.opaque).err(),
    }
}

/// The newest version that has `method`.
fn newest_with(method: &str, loader: Loader) -> Option<&'static ApiVersion> {
    api::versions()
        .iter()
        .rev()
        .find(|v| loader.methods(v).contains_key(method))
}

fn version_list(versions: &[&str]) -> String {
    versions.join(", ")
}

/// The verdicts being worked out: which versions (indices into [`api::versions`]) the package
/// still loads on, and why not where it does not.
struct Verdicts {
    all: Vec<&'static ApiVersion>,
    loads: BTreeSet<usize>,
    why_not: BTreeMap<usize, Vec<Reason>>,
    rejected: BTreeMap<usize, Vec<String>>,
}

impl Verdicts {
    fn new() -> Verdicts {
        let all: Vec<&'static ApiVersion> = api::versions().iter().collect();
        Verdicts {
            loads: (0..all.len()).collect(),
            all,
            why_not: BTreeMap::new(),
            rejected: BTreeMap::new(),
        }
    }

    /// Version `i` does not load, for `reason` (said once per version).
    fn fail(&mut self, i: usize, reason: Reason) {
        self.loads.remove(&i);
        let reasons = self.why_not.entry(i).or_default();
        if !reasons.contains(&reason) {
            reasons.push(reason);
        }
    }

    /// Every version whose release facts `fails` does not load, for `reason`.
    fn fail_where(&mut self, fails: impl Fn(&Release) -> bool, reason: Reason) {
        for i in 0..self.all.len() {
            if releases::release(&self.all[i].version).is_some_and(&fails) {
                self.fail(i, reason.clone());
            }
        }
    }

    fn finish(self, needs_newer: Vec<String>) -> Compatibility {
        let name = |i: &usize| self.all[*i].version.clone();
        let loads_on: Vec<String> = self.loads.iter().map(name).collect();
        Compatibility {
            first: loads_on.first().cloned(),
            loads_on,
            needs_newer,
            loads: (0..self.all.len())
                .map(|i| (name(&i), self.loads.contains(&i)))
                .collect(),
            why_not: self
                .why_not
                .iter()
                .map(|(i, r)| (name(i), r.clone()))
                .collect(),
            rejected: self
                .rejected
                .iter()
                .map(|(i, r)| (name(i), r.clone()))
                .collect(),
        }
    }
}

/// Works out, for every known Hermes version, whether the package loads there and why not —
/// as that release's loader decides (docs/checks.md, "Where a package loads"):
///
/// - an error of a load-gate check (`loadable`, `manifest`, `paths`, …) already in `out`: it
///   loads nowhere;
/// - every ctx call `register(ctx)` makes, against the version's `PluginContext` (calls that do
///   not fit are reported here, VAL-21);
/// - what the version's loader reads: a portable `plugin.json` (0.22+), entry points naming a
///   function (0.22+), packages without `__init__.py` (main);
/// - `requires_hermes`, where the loader enforces it (0.22+);
/// - the modules imported while it loads, where a real install of the release was listed:
///   each must be in that environment or come with a declared dependency;
/// - tools named like one of the version's built-ins: that registration is rejected, the rest
///   loads (`rejected`).
pub fn check(
    package: &LoadedPackage,
    analysis: Option<&StaticAnalysis>,
    out: &mut Vec<Diagnostic>,
) -> Compatibility {
    let latest = api::latest_release();
    let mut v = Verdicts::new();
    let mut needs_newer = Vec::new();
    // A load-gate error (before this check's own): Hermes would not load it anywhere.
    let gates: Vec<Reason> = out
        .iter()
        .filter(|d| d.severity == Severity::Error && d.check.gate() == Gate::Load)
        .map(|d| {
            Reason::new(
                d.check.as_str(),
                format!("{} ({}:{})", d.message, d.file, d.pos.line),
            )
        })
        .collect();
    if !gates.is_empty() {
        for i in 0..v.all.len() {
            for reason in &gates {
                v.fail(i, reason.clone());
            }
        }
        return v.finish(needs_newer);
    }
    // Releases that never call `register` (their loader does not read the package at all):
    // what it calls cannot be why they fail.
    let mut never_called: BTreeSet<usize> = BTreeSet::new();
    let calls: &[CtxCall] = match &package.content {
        Content::Pip(pip) => {
            if pip.plugins.iter().any(|e| e.object.is_some()) {
                v.fail_where(
                    |r| !r.takes_entry_point_objects(),
                    Reason::new(
                            CheckId::EntryPoints.as_str(),
                            "its loader calls `register` on the object an entry point names, and a function has none".to_string(),
                        ),
                );
            }
            if !pip.capabilities.is_empty() {
                let group = crate::package::pip::CAPABILITIES_GROUP;
                let reading =
                    releases::versions_where(|r| r.entry_point_groups.iter().any(|g| g == group));
                needs_newer.push(format!(
                    "capabilities in `{group}` (read by {})",
                    api::ranges(&reading).join(", ")
                ));
            }
            if pip.plugins.is_empty() && !pip.memory_providers.is_empty() {
                let group = crate::package::pip::MEMORY_PROVIDERS_GROUP;
                let reads = |r: &Release| r.entry_point_groups.iter().any(|g| g == group);
                never_called.extend(
                    (0..v.all.len()).filter(|i| {
                        releases::release(&v.all[*i].version).is_some_and(|r| !reads(r))
                    }),
                );
                v.fail_where(
                    |r| !reads(r),
                    Reason::new(
                        CheckId::EntryPoints.as_str(),
                        format!("its memory provider loader reads no `{group}` entry points"),
                    ),
                );
            }
            analysis
                .map(|a| a.registrations.calls.as_slice())
                .unwrap_or_default()
        }
        Content::Portable(_) => {
            v.fail_where(
                |r| !r.reads_plugin_json(),
                Reason::new(
                    CheckId::PortableManifest.as_str(),
                    "its loader does not read plugin.json (Agent Plugins v1)".to_string(),
                ),
            );
            if !v.loads.iter().any(|i| v.all[*i].version != "main") {
                needs_newer.push("portable plugin.json (Agent Plugins v1)".to_string());
            }
            &[]
        }
        Content::Native(native) => {
            if let Some(m) = &native.manifest {
                let latest_reads = releases::release(&latest.version)
                    .and_then(|r| r.manifest_version)
                    .unwrap_or(1);
                if m.manifest_version > latest_reads {
                    needs_newer.push(format!(
                        "manifest_version {} (`hermes plugins install` of {} installs only version 1)",
                        m.manifest_version, latest.version
                    ));
                }
                if !m.provides_locales.is_empty() {
                    needs_newer.push("language packs (provides_locales)".to_string());
                }
            }
            // Every release imports `__init__.py` and fails without one (a language pack or a
            // desktop-only package loads only where Hermes knows those kinds).
            let has_init = package
                .root
                .as_ref()
                .is_some_and(|r| r.is_file("__init__.py"));
            let loader = Loader::of(package);
            if !has_init && loader == Loader::Plugin {
                for i in 0..v.all.len() {
                    if v.all[i].version != "main" {
                        v.fail(
                            i,
                            Reason::new(
                                CheckId::Loadable.as_str(),
                                "its loader imports __init__.py, which the package lacks"
                                    .to_string(),
                            ),
                        );
                    }
                }
                needs_newer.push("a package without __init__.py".to_string());
            }
            if let Some(m) = &native.manifest
                && let Some(spec) = &m.requires_hermes
            {
                requires_hermes(&spec.value, &mut v);
            }
            if let Some(key) = native.duplicate_keys.first() {
                let file = native.manifest_file.clone();
                v.fail_where(Release::refuses_duplicate_keys, Reason::new(
                        CheckId::Manifest.as_str(),
                        format!("{file} gives `{key}` twice: its loader parses it with ruamel.yaml, which refuses duplicate keys, and skips the plugin"),
                    ));
            }
            if let Some(a) = analysis {
                imports(a, &native.declarations, &mut v);
                let declares_override = native
                    .manifest
                    .as_ref()
                    .is_some_and(|m| m.capabilities.iter().any(|c| c.value == "tools.override"));
                builtin_tools(a, declares_override, &mut v);
            }
            match loader {
                Loader::NoContext => &[][..],
                _ => analysis
                    .map(|a| a.registrations.calls.as_slice())
                    .unwrap_or_default(),
            }
        }
    };
    let loader = match &package.content {
        Content::Native(_) => Loader::of(package),
        _ => Loader::Plugin,
    };
    for call in calls {
        let fits: BTreeSet<usize> = (0..v.all.len())
            .filter(|i| never_called.contains(i) || problem(call, v.all[*i], loader).is_none())
            .collect();
        report_call(call, &fits, &v.all, latest, loader, out);
        for i in 0..v.all.len() {
            if !fits.contains(&i)
                && let Some(p) = problem(call, v.all[i], loader)
            {
                v.fail(
                    i,
                    Reason::new(
                        CheckId::CtxCall.as_str(),
                        format!(
                            "{} ({}:{}): register(ctx) raises",
                            p.describe(&call.method),
                            call.file,
                            call.pos.line
                        ),
                    ),
                );
            }
        }
    }
    if let Content::Native(native) = &package.content
        && let Some(m) = &native.manifest
        && let Some(spec) = &m.requires_hermes
    {
        floor(
            spec,
            &v.loads,
            &v.all,
            calls,
            loader,
            native_file(package),
            out,
        );
    }
    v.finish(needs_newer)
}

/// `requires_hermes` where the release's loader enforces it (0.22+: it skips the plugin).
fn requires_hermes(spec: &str, v: &mut Verdicts) {
    let Ok(specifiers) = crate::package::requires_hermes::specifiers(spec) else {
        return; // requires-hermes reports the syntax
    };
    for i in 0..v.all.len() {
        let version = v.all[i].version.clone();
        let enforced = releases::release(&version).is_some_and(|r| r.load_gates.requires_hermes);
        let Ok(parsed) = Version::from_str(&version) else {
            continue; // main: no release number to compare
        };
        if enforced && !specifiers.contains(&parsed) {
            v.fail(
                i,
                Reason::new(
                    CheckId::RequiresHermes.as_str(),
                    format!(
                        "requires_hermes `{spec}` excludes it, and its loader skips the plugin"
                    ),
                ),
            );
        }
    }
}

/// Distribution names whose import name is not the name itself (PyPI's most common).
const IMPORT_NAMES: &[(&str, &str)] = &[
    ("attrs", "attr"),
    ("beautifulsoup4", "bs4"),
    ("discord-py", "discord"),
    ("google-genai", "google"),
    ("google-generativeai", "google"),
    ("opencv-python", "cv2"),
    ("opencv-python-headless", "cv2"),
    ("pillow", "PIL"),
    ("protobuf", "google"),
    ("psycopg2-binary", "psycopg2"),
    ("pycryptodome", "Crypto"),
    ("pyjwt", "jwt"),
    ("pymupdf", "fitz"),
    ("pyserial", "serial"),
    ("python-dateutil", "dateutil"),
    ("python-dotenv", "dotenv"),
    ("python-telegram-bot", "telegram"),
    ("pyyaml", "yaml"),
    ("ruamel-yaml", "ruamel"),
    ("scikit-learn", "sklearn"),
    ("websocket-client", "websocket"),
];

/// The module a distribution (normalised name) is imported as, and whether that is known
/// ([`IMPORT_NAMES`]) rather than guessed from the name.
fn import_name(distribution: &str) -> (String, bool) {
    match IMPORT_NAMES.iter().find(|(dist, _)| *dist == distribution) {
        Some((_, module)) => (module.to_string(), true),
        None => (distribution.replace('-', "_"), false),
    }
}

/// The modules imported while the plugin loads, per release whose environment was listed:
/// one that is neither there nor brought by a declared dependency fails the import
/// (`No module named …`), and so the plugin. A declared dependency whose import name cannot be
/// told from its name may provide any module: then nothing is judged.
fn imports(
    analysis: &StaticAnalysis,
    declarations: &crate::package::Declarations,
    v: &mut Verdicts,
) {
    // Each declared requirement's import name: from the table, else its own name with `_`
    // for `-` (then it accounts for nothing unless the plugin imports that name).
    let provided: Vec<(String, bool)> = declarations
        .managed
        .iter()
        .map(|r| import_name(r.name().as_ref()))
        .collect();
    let imported = |module: &str| {
        analysis
            .load_imports
            .iter()
            .any(|i| i.top.eq_ignore_ascii_case(module))
    };
    let unprovided: Vec<&crate::check::static_py::load_imports::LoadImport> = analysis
        .load_imports
        .iter()
        .filter(|i| !provided.iter().any(|(m, _)| m.eq_ignore_ascii_case(&i.top)))
        .collect();
    // A declared requirement that provides none of the imports under its own name may provide
    // one under another: not judged.
    let accounted = provided
        .iter()
        .all(|(module, from_table)| *from_table || imported(module));
    if unprovided.is_empty() || !accounted {
        return;
    }
    for i in 0..v.all.len() {
        let version = v.all[i].version.clone();
        let Some(env) = releases::release(&version).and_then(|r| r.environment()) else {
            continue;
        };
        for import in &unprovided {
            if !env.has(&import.top) {
                v.fail(
                    i,
                    Reason::new(
                        Reason::IMPORTS,
                        format!(
                            "imports `{}` ({}:{}), which its environment does not have and the plugin does not declare: No module named '{}'",
                            import.top, import.file, import.pos.line, import.top
                        ),
                    ),
                );
            }
        }
    }
}

/// Tools named like a release's built-ins: without `override=True` that release's loader
/// rejects the registration and loads the rest (`rejected`); with it but no declared
/// `tools.override`, releases that ask consent for overrides refuse the plugin until the user
/// grants it by hand (a conditional reason).
fn builtin_tools(analysis: &StaticAnalysis, declares_override: bool, v: &mut Verdicts) {
    for s in analysis.registrations.of(RegKind::Tool) {
        for i in 0..v.all.len() {
            let Some(release) = releases::release(&v.all[i].version) else {
                continue;
            };
            if !release.is_builtin_tool(&s.name) {
                continue;
            }
            if !s.override_builtin {
                v.rejected.entry(i).or_default().push(format!(
                    "tool `{}` ({}:{}): a built-in's name",
                    s.name, s.file, s.pos.line
                ));
            } else if !declares_override && release.override_needs_consent() {
                v.fail(
                    i,
                    Reason::new(
                        CheckId::BuiltinCollisions.as_str(),
                        format!(
                            "tool `{}` ({}:{}) overrides a built-in without a declared tools.override: its loader refuses the plugin unless the user grants it",
                            s.name, s.file, s.pos.line
                        ),
                    ),
                );
            }
        }
    }
}

fn native_file(package: &LoadedPackage) -> &str {
    package.manifest_file()
}

/// The finding for one call, if it fails where it matters.
fn report_call(
    call: &CtxCall,
    fits: &BTreeSet<usize>,
    all: &[&'static ApiVersion],
    latest: &ApiVersion,
    loader: Loader,
    out: &mut Vec<Diagnostic>,
) {
    let latest_index = all.iter().position(|v| v.version == latest.version);
    let fits_latest = latest_index.is_some_and(|i| fits.contains(&i));
    if fits_latest {
        return;
    }
    let fits_names: Vec<&str> = fits.iter().map(|i| all[*i].version.as_str()).collect();
    let why = problem(call, latest, loader)
        .map(|p| p.describe(&call.method))
        .unwrap_or_default();
    let hint = match newest_with(&call.method, loader) {
        Some(v) => format!(
            "Hermes {} defines `{}`.",
            v.version,
            api::signature(&call.method, &loader.methods(v)[&call.method])
        ),
        None => {
            let names: Vec<&str> = loader.methods(latest).keys().map(String::as_str).collect();
            match did_you_mean(&call.method, names.iter().copied()) {
                Some(s) => format!(
                    "No Hermes release (nor main) has `{}`; did you mean `{s}`? `{}`.",
                    call.method,
                    api::signature(s, &loader.methods(latest)[s])
                ),
                None => format!(
                    "No Hermes release (nor main) has `{}`. PluginContext has: {}.",
                    call.method,
                    names.join(", ")
                ),
            }
        }
    };
    let diagnostic = if fits.is_empty() {
        Diagnostic::error(
            CheckId::CtxCall,
            &call.file,
            call.pos,
            format!(
                "{why} on every known Hermes: register(ctx) raises and the plugin does not load"
            ),
        )
    } else if fits_names == ["main"] {
        Diagnostic::info(
            CheckId::CtxCall,
            &call.file,
            call.pos,
            format!(
                "needs Hermes newer than {}: {why} there; upstream main accepts it",
                latest.version
            ),
        )
    } else {
        Diagnostic::warning(
            CheckId::CtxCall,
            &call.file,
            call.pos,
            format!(
                "{why} on Hermes {} (the newest release); it fits only {}",
                latest.version,
                version_list(&fits_names)
            ),
        )
    };
    out.push(diagnostic.value(&call.text).hint(hint));
}

/// A `requires_hermes` floor older than the first release the calls fit.
fn floor(
    spec: &crate::package::Spanned<String>,
    loads: &BTreeSet<usize>,
    all: &[&'static ApiVersion],
    calls: &[CtxCall],
    loader: Loader,
    file: &str,
    out: &mut Vec<Diagnostic>,
) {
    let Ok(specifiers) = VersionSpecifiers::from_str(&spec.value) else {
        return; // requires-hermes reports the syntax
    };
    let admitted: Vec<usize> = (0..all.len())
        .filter(|i| all[*i].version != "main")
        .filter(|i| Version::from_str(&all[*i].version).is_ok_and(|v| specifiers.contains(&v)))
        .collect();
    let Some(&oldest_admitted) = admitted.first() else {
        return;
    };
    if loads.contains(&oldest_admitted) {
        return;
    }
    let Some(first_loading) = admitted.iter().find(|i| loads.contains(i)) else {
        return; // the calls fail everywhere it admits: reported at the calls
    };
    let blocking: Vec<String> = calls
        .iter()
        .filter(|c| problem(c, all[oldest_admitted], loader).is_some())
        .map(|c| format!("`ctx.{}` ({}:{})", c.method, c.file, c.pos.line))
        .collect();
    out.push(
        Diagnostic::warning(
            CheckId::CtxCall,
            file,
            spec.pos,
            format!(
                "requires_hermes `{}` admits Hermes {}, but the plugin loads only from {} ({} does not fit {})",
                spec.value,
                all[oldest_admitted].version,
                all[*first_loading].version,
                blocking.join(", "),
                all[oldest_admitted].version
            ),
        )
        .value(&spec.value)
        .hint(format!(
            "Raise the floor: `requires_hermes: \">={}\"`.",
            all[*first_loading].version
        )),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::located::Pos;

    fn call(method: &str, positional: usize, keywords: &[&str]) -> CtxCall {
        CtxCall {
            method: method.into(),
            file: "__init__.py".into(),
            pos: Pos::new(3, 5),
            text: format!("ctx.{method}(…)"),
            positional,
            keywords: keywords.iter().map(|k| k.to_string()).collect(),
            opaque: false,
            absent_ok: false,
            errors_ok: false,
        }
    }

    fn fits(c: &CtxCall) -> Vec<String> {
        api::versions()
            .iter()
            .filter(|v| problem(c, v, Loader::Plugin).is_none())
            .map(|v| v.version.clone())
            .collect()
    }

    #[test]
    fn register_middleware_fits_from_0_17() {
        let f = fits(&call("register_middleware", 2, &[]));
        assert_eq!(f.first().map(String::as_str), Some("0.17.0"));
        assert!(f.contains(&"0.19.0".to_string()));
    }

    #[test]
    fn a_missing_toolset_fits_nowhere_and_a_guard_fits_everywhere() {
        assert!(fits(&call("register_tool", 0, &["name", "schema", "handler"])).is_empty());
        let mut guarded = call("register_widget", 1, &[]);
        assert!(fits(&guarded).is_empty());
        guarded.absent_ok = true;
        assert_eq!(fits(&guarded).len(), api::versions().len());
    }

    #[test]
    fn import_names_come_from_the_table_or_are_guessed() {
        assert_eq!(import_name("pyyaml"), ("yaml".to_string(), true));
        assert_eq!(import_name("foo-sdk"), ("foo_sdk".to_string(), false));
    }

    #[test]
    fn install_counts_versions_missed_only_for_what_the_user_decides() {
        let reason = |check: &str| vec![Reason::new(check, String::new())];
        let c = Compatibility {
            loads_on: vec!["0.17.0".into()],
            first: Some("0.17.0".into()),
            needs_newer: Vec::new(),
            loads: [
                ("0.17.0", true),
                ("0.18.0", false),
                ("0.19.0", false),
                ("0.22.2", false),
            ]
            .iter()
            .map(|(v, l)| (v.to_string(), *l))
            .collect(),
            why_not: [
                ("0.18.0".to_string(), reason("builtin-collisions")),
                ("0.19.0".to_string(), reason(Reason::IMPORTS)),
                ("0.22.2".to_string(), reason("ctx-call")),
            ]
            .into_iter()
            .collect(),
            rejected: BTreeMap::new(),
        };
        assert_eq!(c.loads_on_as_installed(), ["0.17.0", "0.18.0", "0.19.0"]);
    }

    #[test]
    fn summaries_collapse_ranges() {
        let c = Compatibility {
            loads_on: ["0.17.0", "0.18.0", "0.18.1", "0.18.2", "0.19.0"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            first: Some("0.17.0".into()),
            needs_newer: Vec::new(),
            loads: BTreeMap::new(),
            why_not: BTreeMap::new(),
            rejected: BTreeMap::new(),
        };
        assert_eq!(c.summary(), "loads on Hermes 0.17.0 – 0.19.0");
    }
}
