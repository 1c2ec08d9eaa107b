//! `sbom`: a CycloneDX 1.6 software bill of materials of one generation, for one profile —
//! what an auditor or a supply-chain scanner reads to know what the agent loads.
//!
//! - **Plugins** the profile enables: name and version, where they came from (a `vcs`
//!   reference with the commit, or the catalog pin, or the package index), their tree's NAR
//!   digest (the store key, SHA-256) and the licence their manifest declares. A distribution
//!   from the package index is a `pkg:pypi` component like any Python package.
//! - **Python packages** of the generation's environment that core or those plugins require:
//!   a `pkg:pypi` purl, the version, the SHA-256 of the file the lock installed, and the
//!   licence its installed metadata gives (`License-Expression`, else `License`).
//! - **Dependencies**: the generation depends on its plugins, each plugin on the packages it
//!   requires directly, each package on its own (the lock's edges).
//!
//! The document is a pure function of the generation (its serial number is derived from the
//! generation's inputs digest, its timestamp is the generation's), so two runs agree.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{Value, json};

use crate::generation::doc::{GenPlugin, GenerationDoc};
use crate::package::{self, Content, Mode};
use crate::resolve::lock::LockPackage;
use crate::source::SourceSpec;

/// The CycloneDX specification version written.
pub const SPEC_VERSION: &str = "1.6";

/// The SBOM of generation `doc` (read from `dir`) for `profile`.
pub fn of_generation(doc: &GenerationDoc, dir: &Path, profile: &str) -> Value {
    let selection = doc.profiles.get(profile).cloned().unwrap_or_default();
    let plugins: Vec<&GenPlugin> = selection
        .enabled
        .iter()
        .filter_map(|key| doc.plugin(key))
        .collect();
    // Who may require a package: core, and the profile's plugins under either name the lock
    // labels them by.
    let mut owners: BTreeSet<String> = BTreeSet::from(["core".to_string()]);
    for p in &plugins {
        owners.insert(format!("plugin:{}", p.key));
        owners.insert(format!("plugin:{}", p.name));
    }
    let packages: Vec<&LockPackage> = doc
        .lock
        .packages
        .iter()
        .filter(|p| p.required_by.iter().any(|r| owners.contains(r)))
        .collect();
    let site_packages = dir.join(&doc.python.site_packages);
    let licences = installed_licences(&site_packages);

    let generation_ref = format!("generation:{}", doc.number);
    let mut components: Vec<Value> = Vec::new();
    let mut dependencies: Vec<Value> = Vec::new();
    let plugin_refs: Vec<String> = plugins.iter().map(|p| plugin_ref(p)).collect();
    dependencies.push(json!({ "ref": generation_ref, "dependsOn": plugin_refs }));
    let package_ref = |name: &str| {
        packages
            .iter()
            .find(|p| p.name == name)
            .map(|p| purl(&p.name, &p.version))
    };
    // A distribution from the index is one component: the plugin, carrying the package's
    // file digest and edges (never listed twice under one bom-ref).
    let distributions: BTreeSet<String> = plugins
        .iter()
        .filter_map(|p| distribution_purl(p))
        .collect();
    for p in &plugins {
        let locked = distribution_purl(p).and_then(|purl_of| {
            packages
                .iter()
                .find(|l| self::purl(&l.name, &l.version) == purl_of)
        });
        components.push(plugin_component(p, dir, locked.copied(), &licences));
        let direct: BTreeSet<String> = match locked {
            Some(l) => l
                .dependencies
                .iter()
                .filter_map(|d| package_ref(d))
                .collect(),
            None => doc
                .lock
                .inputs
                .iter()
                .filter(|i| {
                    i.source == format!("plugin:{}", p.key)
                        || i.source == format!("plugin:{}", p.name)
                })
                .flat_map(|i| i.requirements.iter())
                .filter_map(|r| requirement_name(r))
                .filter_map(|n| package_ref(&n))
                .collect(),
        };
        dependencies.push(json!({ "ref": plugin_ref(p), "dependsOn": direct }));
    }
    for p in &packages {
        let reference = purl(&p.name, &p.version);
        if distributions.contains(&reference) {
            continue;
        }
        let mut component = json!({
            "type": "library",
            "bom-ref": reference,
            "name": p.name,
            "version": p.version,
            "purl": reference,
        });
        if let Some(sha256) = p.sha256.as_deref().filter(|h| is_sha256_hex(h)) {
            component["hashes"] = json!([{ "alg": "SHA-256", "content": sha256 }]);
        }
        if let Some(licence) = licences.get(&normalise(&p.name)) {
            component["licenses"] = json!([licence]);
        }
        let mut references = Vec::new();
        if let Some(url) = &p.url {
            references.push(
                json!({ "type": "distribution", "url": crate::text::strip_credentials(url) }),
            );
        }
        if !references.is_empty() {
            component["externalReferences"] = json!(references);
        }
        components.push(component);
        let depends: BTreeSet<String> = p
            .dependencies
            .iter()
            .filter_map(|d| package_ref(d))
            .collect();
        dependencies.push(json!({ "ref": reference, "dependsOn": depends }));
    }

    json!({
        "$schema": "http://cyclonedx.org/schema/bom-1.6.schema.json",
        "bomFormat": "CycloneDX",
        "specVersion": SPEC_VERSION,
        "serialNumber": serial_number(&doc.inputs_digest, profile),
        "version": 1,
        "metadata": {
            "timestamp": doc.created,
            "tools": {
                "components": [{
                    "type": "application",
                    "name": "hermes-plugins",
                    "version": env!("CARGO_PKG_VERSION"),
                }]
            },
            "component": {
                "type": "application",
                "bom-ref": generation_ref,
                "name": format!("hermes-plugins generation {} (profile {profile})", doc.number),
                "version": doc.number.to_string(),
                "properties": core_properties(doc),
            },
        },
        "components": components,
        "dependencies": dependencies,
    })
}

/// A plugin's component: a `pkg:pypi` library for a distribution from the index, else an
/// application (a plugin directory Hermes imports) with its source and tree digest.
fn plugin_component(
    p: &GenPlugin,
    dir: &Path,
    locked: Option<&LockPackage>,
    licences: &BTreeMap<String, Value>,
) -> Value {
    let mut component = json!({
        "type": "application",
        "bom-ref": plugin_ref(p),
        "name": p.key,
    });
    if let Some(version) = &p.version {
        component["version"] = json!(version);
    }
    if let Some(purl) = distribution_purl(p) {
        component["type"] = json!("library");
        component["purl"] = json!(purl);
    }
    // The digest of what is installed: a distribution's wheel file; else the NAR
    // serialisation's SHA-256 of the plugin tree (its store key; what Nix pins).
    let digest = match (&p.source.package, locked) {
        (Some(pin), _) if is_sha256_hex(&pin.sha256) => Some(pin.sha256.to_ascii_lowercase()),
        (_, Some(l)) => l.sha256.clone().filter(|h| is_sha256_hex(h)),
        _ => sri_to_hex(&p.tree),
    };
    if let Some(hex) = digest {
        component["hashes"] = json!([{ "alg": "SHA-256", "content": hex }]);
    }
    let mut references = Vec::new();
    let mut properties = vec![json!({ "name": "hermes-plugins:nar-hash", "value": p.tree })];
    if let Some(url) = &p.source.url {
        let url = crate::text::strip_credentials(url);
        match &p.commit {
            Some(commit) => references
                .push(json!({ "type": "vcs", "url": url, "comment": format!("commit {commit}") })),
            None => references.push(json!({ "type": "distribution", "url": url })),
        }
    }
    if let Some(commit) = &p.commit {
        properties.push(json!({ "name": "hermes-plugins:commit", "value": commit }));
    }
    if let Some(pin) = &p.source.catalog {
        properties.push(json!({
            "name": "hermes-plugins:catalog-pin",
            "value": format!("{}@{}", pin.name, pin.sha),
        }));
    }
    properties.push(json!({ "name": "hermes-plugins:source", "value": p.source.spec.display() }));
    properties
        .push(json!({ "name": "hermes-plugins:reviewed", "value": p.source.reviewed.to_string() }));
    if !references.is_empty() {
        component["externalReferences"] = json!(references);
    }
    component["properties"] = json!(properties);
    let licence = match &p.source.package {
        Some(pin) => licences.get(&normalise(&pin.name)).cloned(),
        None => plugin_licence(&dir.join(&p.path)),
    };
    if let Some(licence) = licence {
        component["licenses"] = json!([licence]);
    }
    component
}

fn plugin_ref(p: &GenPlugin) -> String {
    distribution_purl(p).unwrap_or_else(|| format!("plugin:{}", p.key))
}

/// `pkg:pypi/NAME@VERSION` of a plugin that is a distribution from the package index.
fn distribution_purl(p: &GenPlugin) -> Option<String> {
    match (&p.source.spec, &p.source.package) {
        (SourceSpec::Pypi { .. } | SourceSpec::Wheel { .. }, Some(pin)) => {
            Some(purl(&pin.name, &pin.version))
        }
        _ => None,
    }
}

/// The package URL of a Python distribution (PURL spec: `pypi` names lowercase, `_` as `-`).
fn purl(name: &str, version: &str) -> String {
    format!("pkg:pypi/{}@{}", normalise(name), purl_escape(version))
}

fn normalise(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let c = c.to_ascii_lowercase();
        if matches!(c, '_' | '.' | '-') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A PURL component: characters outside the unreserved set percent-encoded.
fn purl_escape(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' | b'_' | b'~' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// The name a requirement line names (`weatherlib>=1; python_version>'3'` → `weatherlib`).
fn requirement_name(requirement: &str) -> Option<String> {
    let name: String = requirement
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    (!name.is_empty()).then(|| normalise(&name))
}

fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `sha256-<base64>` as lowercase hex.
fn sri_to_hex(sri: &str) -> Option<String> {
    use base64::Engine as _;
    let encoded = sri.strip_prefix("sha256-")?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    (bytes.len() == 32).then(|| crate::hash::hex(&bytes))
}

/// A version-5 style UUID URN from the inputs digest: the same generation and profile give
/// the same serial number.
fn serial_number(inputs_digest: &str, profile: &str) -> String {
    let digest = crate::hash::sha256_hex(format!("{inputs_digest}\n{profile}").as_bytes());
    let hex: Vec<char> = digest.chars().take(32).collect();
    let mut hex: String = hex.into_iter().collect();
    // Version 5 and the RFC 4122 variant bits.
    hex.replace_range(12..13, "5");
    let variant = u8::from_str_radix(&hex[16..17], 16).unwrap_or(0) & 0x3 | 0x8;
    hex.replace_range(16..17, &format!("{variant:x}"));
    format!(
        "urn:uuid:{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

fn core_properties(doc: &GenerationDoc) -> Vec<Value> {
    let mut out = vec![json!({ "name": "hermes-plugins:python", "value": doc.python.version })];
    match &doc.core {
        Some(core) => {
            out.push(json!({ "name": "hermes-plugins:core", "value": core.describe() }));
        }
        None => out.push(json!({ "name": "hermes-plugins:core", "value": "none" })),
    }
    out
}

/// The licence a plugin's manifest declares (`license` of plugin.yaml or plugin.json).
fn plugin_licence(dir: &Path) -> Option<Value> {
    let loaded = package::load_dir(dir, Mode::Runtime).ok()?;
    let text = match &loaded.content {
        Content::Native(native) => native
            .manifest
            .as_ref()
            .and_then(|m| m.license.as_ref())
            .map(|l| l.value.clone()),
        Content::Portable(portable) => portable.manifest.as_ref().and_then(|m| m.license.clone()),
        Content::Pip(_) => None,
    }?;
    licence(&text, false)
}

/// Licences of the distributions installed in `site_packages`, by normalised name, from their
/// `METADATA`: `License-Expression` (PEP 639, an SPDX expression), else a one-line `License`.
fn installed_licences(site_packages: &Path) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(site_packages) else {
        return out;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(stem) = file_name
            .to_str()
            .and_then(|n| n.strip_suffix(".dist-info"))
        else {
            continue;
        };
        let Some((name, _version)) = stem.rsplit_once('-') else {
            continue;
        };
        let Ok(Some(text)) =
            crate::files::read_regular_text(&entry.path().join("METADATA"), 4 << 20)
        else {
            continue;
        };
        let field = |key: &str| {
            text.lines()
                .take_while(|l| !l.is_empty())
                .find_map(|l| l.strip_prefix(key).map(str::trim))
                .filter(|v| !v.is_empty())
        };
        let found = field("License-Expression:")
            .and_then(|e| licence(e, true))
            .or_else(|| field("License:").and_then(|l| licence(l, false)));
        if let Some(found) = found {
            out.insert(normalise(name), found);
        }
    }
    out
}

/// A CycloneDX licence choice: an SPDX expression, or a named licence (one line, bounded).
fn licence(text: &str, expression: bool) -> Option<Value> {
    let text = text.lines().next()?.trim();
    if text.is_empty() || text.eq_ignore_ascii_case("unknown") {
        return None;
    }
    let text: String = text.chars().take(200).collect();
    Some(if expression {
        json!({ "expression": text })
    } else {
        json!({ "license": { "name": text } })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_urls_and_names() {
        assert_eq!(
            purl("Hermes_Demo.Forecast", "1.0.0"),
            "pkg:pypi/hermes-demo-forecast@1.0.0"
        );
        assert_eq!(purl("x", "1.0+local"), "pkg:pypi/x@1.0%2Blocal");
        assert_eq!(
            requirement_name("weatherlib>=1; python_version > '3'").as_deref(),
            Some("weatherlib")
        );
        assert_eq!(
            requirement_name("Foo_Bar[extra]==2").as_deref(),
            Some("foo-bar")
        );
    }

    #[test]
    fn digests_and_serial_numbers() {
        assert_eq!(
            sri_to_hex("sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=").as_deref(),
            Some("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        );
        assert_eq!(sri_to_hex("sha256-AAAA"), None);
        let serial = serial_number("sha256:abc", "default");
        assert_eq!(serial, serial_number("sha256:abc", "default"));
        assert_ne!(serial, serial_number("sha256:abc", "work"));
        let uuid = serial.strip_prefix("urn:uuid:").unwrap();
        assert_eq!(uuid.len(), 36);
        assert_eq!(&uuid[14..15], "5");
        assert!(matches!(&uuid[19..20], "8" | "9" | "a" | "b"), "{uuid}");
    }
}
