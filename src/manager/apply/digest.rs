//! The digests that decide a generation (GEN-5) and what a publication reports as changed:
//! the inputs digest (everything in the generation), the resolution digest (what decides the
//! lock alone), core and index records, and the change lines of a diff.

use std::collections::BTreeMap;

use crate::generation::doc::{
    CoreIdentity, GenPlugin, GenerationDoc, IndexRecord, ProfileSelection,
};
use crate::manager::Context;
use crate::resolve::Request;
use crate::resolve::inputs::{CoreOrigin, PluginInput};

/// Core as a generation records it.
pub(super) fn core_identity(cx: &Context) -> Option<CoreIdentity> {
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
pub(super) fn index_record(index: &crate::resolve::engine::IndexConfig) -> IndexRecord {
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
        no_index: index.no_index,
    }
}

/// What changed in the environment between two generations, for people: core, the
/// interpreter, the indexes.
pub(super) fn input_changes(old: &GenerationDoc, new: &GenerationDoc) -> Vec<String> {
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

/// The packages a lock adds, removes and changes against the current generation's
/// (`+ name version`, `- name version`, `~ name old -> new`).
pub(super) fn lock_changes(
    current: Option<&GenerationDoc>,
    lock: &crate::resolve::lock::Lock,
) -> Vec<String> {
    let Some(old) = current else {
        return lock
            .packages
            .iter()
            .map(|p| format!("+ {} {}", p.name, p.version))
            .collect();
    };
    let diff = crate::resolve::lock::LockDiff::between(&old.lock, lock);
    diff.added
        .iter()
        .map(|(n, v)| format!("+ {n} {v}"))
        .chain(diff.removed.iter().map(|(n, v)| format!("- {n} {v}")))
        .chain(
            diff.changed
                .iter()
                .map(|(n, a, b)| format!("~ {n} {a} -> {b}")),
        )
        .collect()
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
    let mut index = serde_json::json!({
        "url": cx.index.index_url,
        "extra": cx.index.extra_index_urls,
        "find_links": cx.index.find_links,
    });
    // Only when set, so digests of homes that never used it stay as they were.
    if cx.index.no_index {
        index["no_index"] = serde_json::json!(true);
    }
    doc.insert("index".into(), index);
    doc.insert(
        "quarantine_days".into(),
        serde_json::json!(cx.quarantine_days),
    );
    doc
}

fn digest_of(doc: serde_json::Map<String, serde_json::Value>) -> String {
    let text = serde_json::Value::Object(doc).to_string();
    format!("sha256:{}", sha256_hex(text.as_bytes()))
}

/// The inputs digest (GEN-5): everything that decides a generation's content.
pub(super) fn inputs_digest(
    cx: &Context,
    plugins: &[GenPlugin],
    profiles: &BTreeMap<String, ProfileSelection>,
    external: &[PluginInput],
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
    if !external.is_empty() {
        // External plugins' code is not pinned; their requirements decide the environment.
        doc.insert(
            "external".into(),
            serde_json::json!(
                external
                    .iter()
                    .map(|p| (
                        &p.name,
                        p.requirements.iter().map(|r| &r.raw).collect::<Vec<_>>()
                    ))
                    .collect::<Vec<_>>()
            ),
        );
    }
    digest_of(doc)
}

/// The resolution digest: what decides the lock alone (see
/// [`GenerationDoc::resolution_digest`]).
pub(super) fn resolution_digest(cx: &Context, request: &Request) -> String {
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

use crate::hash::sha256_hex;

fn file_sha256(path: &std::path::Path) -> String {
    std::fs::read(path)
        .map(|b| sha256_hex(&b))
        .unwrap_or_default()
}
