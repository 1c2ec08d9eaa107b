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

use crate::diag::{CheckId, Diagnostic, did_you_mean};
use crate::known::api::{self, ApiVersion, CallProblem};
use crate::package::manifest::Kind;
use crate::package::{Content, LoadedPackage};

use super::static_py::StaticAnalysis;
use super::static_py::registrations::CtxCall;

/// The Hermes versions a package loads on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Compatibility {
    /// Versions (`0.17.0`, …, `main`) on which every ctx call fits, oldest first.
    pub loads_on: Vec<String>,
    /// The oldest of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    /// Features no release reads yet (they need a Hermes newer than the latest release).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub needs_newer: Vec<String>,
}

impl Compatibility {
    /// One line for people: `loads on Hermes 0.17.0 – 0.19.0, main`.
    pub fn summary(&self) -> String {
        let releases: Vec<&str> = self
            .loads_on
            .iter()
            .map(String::as_str)
            .filter(|v| *v != "main")
            .collect();
        let mut parts = Vec::new();
        match releases.as_slice() {
            [] => {}
            [one] => parts.push((*one).to_string()),
            [first, .., last] if contiguous(first, last, releases.len()) => {
                parts.push(format!("{first} – {last}"));
            }
            many => parts.push(many.join(", ")),
        }
        if self.loads_on.iter().any(|v| v == "main") {
            parts.push("main".into());
        }
        let mut line = if parts.is_empty() {
            "loads on no known Hermes".to_string()
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
}

/// Whether `count` releases from `first` to `last` are every release in between.
fn contiguous(first: &str, last: &str, count: usize) -> bool {
    let all: Vec<&str> = api::versions()
        .iter()
        .map(|v| v.version.as_str())
        .filter(|v| *v != "main")
        .collect();
    match (
        all.iter().position(|v| *v == first),
        all.iter().position(|v| *v == last),
    ) {
        (Some(a), Some(b)) => b >= a && b - a + 1 == count,
        _ => false,
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

/// Checks every ctx call of a native package and works out where it loads; portable packages
/// load only where `plugin.json` is read.
pub fn check(
    package: &LoadedPackage,
    analysis: Option<&StaticAnalysis>,
    out: &mut Vec<Diagnostic>,
) -> Compatibility {
    let latest = api::latest_release();
    let all: Vec<&'static ApiVersion> = api::versions().iter().collect();
    let mut loads: BTreeSet<usize> = (0..all.len()).collect();
    let mut needs_newer = Vec::new();
    match &package.content {
        Content::Pip(pip) => {
            for call in analysis
                .map(|a| a.registrations.calls.as_slice())
                .unwrap_or_default()
            {
                let fits: BTreeSet<usize> = (0..all.len())
                    .filter(|i| problem(call, all[*i], Loader::Plugin).is_none())
                    .collect();
                report_call(call, &fits, &all, latest, Loader::Plugin, out);
                loads = loads.intersection(&fits).copied().collect();
            }
            if pip.plugins.iter().any(|e| e.object.is_some()) {
                // The releases' loader calls `register` on the loaded object.
                loads.retain(|i| all[*i].version == "main");
                needs_newer.push("entry points naming an object (`module:object`)".into());
            }
            if !pip.capabilities.is_empty() {
                needs_newer.push(format!(
                    "capabilities in `{}` (no release reads them)",
                    crate::package::pip::CAPABILITIES_GROUP
                ));
            }
        }
        Content::Portable(_) => {
            // No release reads plugin.json; upstream main does.
            loads.retain(|i| all[*i].version == "main");
            needs_newer.push("portable plugin.json (Agent Plugins v1)".to_string());
        }
        Content::Native(native) => {
            if let Some(m) = &native.manifest {
                if m.manifest_version >= 2 {
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
            if !has_init && Loader::of(package) == Loader::Plugin {
                loads.retain(|i| all[*i].version == "main");
                needs_newer.push("a package without __init__.py".to_string());
            }
            let loader = Loader::of(package);
            let calls = match loader {
                Loader::NoContext => &[][..],
                _ => analysis
                    .map(|a| a.registrations.calls.as_slice())
                    .unwrap_or_default(),
            };
            for call in calls {
                let fits: BTreeSet<usize> = (0..all.len())
                    .filter(|i| problem(call, all[*i], loader).is_none())
                    .collect();
                report_call(call, &fits, &all, latest, loader, out);
                loads = loads.intersection(&fits).copied().collect();
            }
            if let Some(m) = &native.manifest
                && let Some(spec) = &m.requires_hermes
            {
                floor(spec, &loads, &all, calls, loader, native_file(package), out);
            }
        }
    }
    let loads_on: Vec<String> = loads.iter().map(|i| all[*i].version.clone()).collect();
    Compatibility {
        first: loads_on.first().cloned(),
        loads_on,
        needs_newer,
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
    fn summaries_collapse_ranges() {
        let c = Compatibility {
            loads_on: ["0.17.0", "0.18.0", "0.18.1", "0.18.2", "0.19.0"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            first: Some("0.17.0".into()),
            needs_newer: Vec::new(),
        };
        assert_eq!(c.summary(), "loads on Hermes 0.17.0 – 0.19.0");
    }
}
