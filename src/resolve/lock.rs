//! The lock (RES-5): every resolved package with its version, index, chosen file, sha256 and
//! who pulled it in. Sorted throughout, no clocks: the same inputs give a byte-identical lock.
//! Schema: `catalog-schema/lock.schema.json`.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// Current lock format version.
pub const LOCK_VERSION: u32 = 1;

/// The interpreter a lock was resolved for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockPython {
    /// Full version.
    pub version: String,
    /// Implementation name.
    pub implementation: String,
    pub sys_platform: String,
    pub platform_machine: String,
}

/// Hermes core's identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockCore {
    /// Project name.
    pub name: String,
    /// Version, if declared.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub version: Option<String>,
    /// Extras selected.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extras: Vec<String>,
}

/// One input to the resolution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockInput {
    /// `core` or `plugin:<name>`.
    pub source: String,
    /// Its requirements as written, sorted.
    pub requirements: Vec<String>,
}

/// A declared requirement that was not resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockExcluded {
    /// `plugin:<name>`.
    pub source: String,
    /// As written.
    pub requirement: String,
    /// `direct-url`, `external-runtime` or `hermes-agent`.
    pub reason: String,
}

/// One resolved package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockPackage {
    /// Normalised name.
    pub name: String,
    pub version: String,
    /// The index it comes from.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub index: Option<String>,
    /// `wheel` or `sdist`.
    pub kind: String,
    /// The chosen file's name.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub file: Option<String>,
    /// The chosen file's URL.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub url: Option<String>,
    /// Its sha256 (hex).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sha256: Option<String>,
    /// Who pulled it in, directly or transitively: `core`, `plugin:<name>`.
    pub required_by: Vec<String>,
    /// Packages it depends on, in this resolution.
    pub dependencies: Vec<String>,
}

/// A resolved, reproducible set of packages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lock {
    /// Format version.
    pub lock_version: u32,
    /// Target interpreter.
    pub python: LockPython,
    /// Hermes core, when it took part.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub core: Option<LockCore>,
    /// Inputs, sorted by source.
    pub inputs: Vec<LockInput>,
    /// Declared but not resolved.
    #[serde(default)]
    pub excluded: Vec<LockExcluded>,
    /// Packages, sorted by name.
    pub packages: Vec<LockPackage>,
}

impl Lock {
    /// The canonical JSON text (pretty, sorted, trailing newline).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("locks serialise") + "\n"
    }

    /// Versions by package name.
    pub fn versions(&self) -> BTreeMap<&str, &str> {
        self.packages
            .iter()
            .map(|p| (p.name.as_str(), p.version.as_str()))
            .collect()
    }
}

/// What changes between two locks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LockDiff {
    /// `(name, version)` new in the lock.
    pub added: Vec<(String, String)>,
    /// `(name, version)` no longer in the lock.
    pub removed: Vec<(String, String)>,
    /// `(name, old version, new version)`.
    pub changed: Vec<(String, String, String)>,
}

impl LockDiff {
    /// The difference from `old` to `new`.
    pub fn between(old: &Lock, new: &Lock) -> LockDiff {
        let (a, b) = (old.versions(), new.versions());
        let names: BTreeSet<&str> = a.keys().chain(b.keys()).copied().collect();
        let mut diff = LockDiff::default();
        for name in names {
            match (a.get(name), b.get(name)) {
                (None, Some(v)) => diff.added.push((name.to_string(), v.to_string())),
                (Some(v), None) => diff.removed.push((name.to_string(), v.to_string())),
                (Some(x), Some(y)) if x != y => {
                    diff.changed
                        .push((name.to_string(), x.to_string(), y.to_string()))
                }
                _ => {}
            }
        }
        diff
    }

    /// Whether nothing changes.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}
