//! The generation operations that change the home: `generations rollback` (switch back to a
//! generation with the selections, grants and installed records it had) and `generations
//! gc` (collect generations and store trees by policy). Reads of generations are views, in
//! [`super::query`].

use std::collections::BTreeSet;

use super::apply::SelectionEdit;
use super::apply::publish::{UserFiles, switch};
use super::{Context, ManagerError, installed};
use crate::consent::audit::AuditEntry;
use crate::consent::capabilities;
use crate::consent::declared::Declared;
use crate::exit::Code;
use crate::generation::current;
use crate::generation::doc::GenerationDoc;
use crate::state::config_edit;
use crate::state::profiles;
use crate::store::Store;

/// `generations rollback [N]`: switch back to N (default: the current one's parent), with
/// the selections and installed records it has; the config edits and the switch are one
/// transaction.
pub fn rollback(cx: &Context, target: Option<u64>) -> Result<(u64, u64), ManagerError> {
    let current = current::current_number(&cx.layout)
        .ok_or_else(|| ManagerError::coded(Code::NoGeneration, "no generation is published yet"))?;
    let current_doc =
        GenerationDoc::read(&cx.layout.generation(current)).map_err(ManagerError::environment)?;
    let target = match target {
        Some(n) => n,
        None => current_doc
            .parent
            .ok_or(super::Refusal::NoParent(current))?,
    };
    let dir = cx.layout.generation(target);
    let doc = GenerationDoc::read(&dir).map_err(|_| {
        // Say what is known of it: the current generation's parent was published, so a
        // missing parent was collected; any other number may never have existed.
        let kept = current::numbers(&cx.layout);
        let listed = kept
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let what = if current_doc.parent == Some(target) {
            format!(
                "generation {target}, the parent of {current}, is no longer kept: `generations gc` or the keep-generations policy collected it"
            )
        } else {
            format!("generation {target} is not among the generations kept")
        };
        ManagerError::coded(
            Code::NotFound,
            format!("{what}; the generations kept are {listed} (see `hermes-plugins generations list`)"),
        )
    })?;
    // Selections as recorded in the target.
    let (profiles, _) =
        profiles::read_profiles(&cx.layout.home).map_err(ManagerError::environment)?;
    let mut configs: Vec<(std::path::PathBuf, String)> = Vec::new();
    let mut names: BTreeSet<String> = BTreeSet::new();
    for p in &profiles {
        names.insert(p.name.clone());
    }
    names.extend(doc.profiles.keys().cloned());
    let mut installed = installed(cx)?;
    let store = Store::open(cx.layout.store())?;
    let mut audit_entries = Vec::new();
    for name in names {
        let config = cx.config_path(&name);
        let text = super::read_user_file(&config)?.unwrap_or_default();
        let want: BTreeSet<String> = doc
            .profiles
            .get(&name)
            .map(|s| s.enabled.iter().cloned().collect())
            .unwrap_or_default();
        let have: BTreeSet<String> = profiles
            .iter()
            .find(|p| p.name == name)
            .map(|p| {
                p.selected()
                    .filter_map(|k| installed.find(k).map(|i| i.key.clone()))
                    .collect()
            })
            .unwrap_or_default();
        // External plugins (the profile's own plugins/ directory) as the target had them;
        // one enabled since the current generation by hand, or bundled, is left alone.
        let external_of = |d: &GenerationDoc| -> BTreeSet<String> {
            d.profiles
                .get(&name)
                .map(|s| s.external.iter().cloned().collect())
                .unwrap_or_default()
        };
        let selected_names: BTreeSet<String> = profiles
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.selected().cloned().collect())
            .unwrap_or_default();
        let want_external = external_of(&doc);
        let have_external: BTreeSet<String> = external_of(&current_doc)
            .union(&want_external)
            .filter(|n| selected_names.contains(*n))
            .cloned()
            .collect();
        let want_all: BTreeSet<String> = want.union(&want_external).cloned().collect();
        let have_all: BTreeSet<String> = have.union(&have_external).cloned().collect();
        let mut new_text = text.clone();
        let refused = |source| super::Refusal::Config {
            path: config.clone(),
            source,
        };
        let edits = want_all
            .difference(&have_all)
            .map(|key| SelectionEdit::Enable(key.clone()))
            .chain(
                have_all
                    .difference(&want_all)
                    .map(|key| SelectionEdit::Disable(key.clone())),
            );
        for edit in edits {
            new_text = edit.edit_text(&new_text).map_err(refused)?;
        }
        // Grants as the target recorded them, for every plugin either generation selects in
        // this profile (Hermes reads config.yaml, not generation.json: rolling back a grant
        // must take it out of there too, or the next sync would re-apply it).
        let selected_now: BTreeSet<String> = current_doc
            .profiles
            .get(&name)
            .map(|s| s.enabled.iter().cloned().collect())
            .unwrap_or_default();
        for key in want.union(&selected_now) {
            new_text = restore_grants(&new_text, &name, key, &doc, &store, &mut audit_entries)
                .map_err(refused)?;
        }
        if new_text != text {
            configs.push((config, new_text));
        }
    }
    // Installed records of the target's plugins come back as they were — those removed
    // since included, read again from their store trees (which the target keeps alive).
    for p in &doc.plugins {
        match installed.plugins.get_mut(&p.key) {
            Some(record) => {
                record.source = p.source.clone();
                record.tree = p.tree.clone();
                record.store_key = p.store_key.clone();
                record.version = p.version.clone();
            }
            None => {
                let record =
                    super::prepare::record_from_generation(p, &store.path_of(&p.store_key))?;
                installed.plugins.insert(p.key.clone(), record);
            }
        }
    }
    let operation = format!("rollback to {target}");
    let files = UserFiles {
        operation: &operation,
        configs: configs
            .iter()
            .map(|(path, text)| (path.as_path(), text.as_str()))
            .collect(),
        installed: Some(&installed),
        env_texts: &std::collections::BTreeMap::new(),
        audit: &audit_entries,
    };
    switch(cx, &files, Some(target))?;
    Ok((current, target))
}

/// Rewrites `key`'s grants in one profile's config `text` to what generation `doc` recorded
/// for it there (Hermes reads `config.yaml`, not `generation.json`: a grant rolled back must
/// leave it, or the next sync would apply it again), auditing what moved. A record given to
/// the same plugin from another source is rewritten even when the ids agree.
fn restore_grants(
    text: &str,
    profile: &str,
    key: &str,
    doc: &GenerationDoc,
    store: &Store,
    audit_entries: &mut Vec<AuditEntry>,
) -> Result<String, config_edit::EditError> {
    let target_grants: BTreeSet<String> = doc
        .profiles
        .get(profile)
        .and_then(|s| s.grants.get(key))
        .map(|g| g.iter().cloned().collect())
        .unwrap_or_default();
    let recorded = capabilities::read(text, key).unwrap_or_default();
    let target_origin = doc.plugin(key).map(|p| capabilities::origin(&p.source));
    let same_source =
        target_grants.is_empty() || recorded.source.is_none() || recorded.source == target_origin;
    if recorded.granted == target_grants && same_source {
        return Ok(text.to_string());
    }
    let edited = match doc.plugin(key).filter(|_| !target_grants.is_empty()) {
        Some(plugin) => capabilities::write(
            text,
            key,
            &target_grants,
            &Declared::read(&store.path_of(&plugin.store_key)).capabilities,
            &crate::consent::audit::now(),
            &capabilities::origin(&plugin.source),
        )?,
        None => capabilities::revoke_all(text, key)?.0,
    };
    let revoked = recorded.granted.difference(&target_grants);
    let granted = target_grants.difference(&recorded.granted);
    for (action, items) in [("revoke", revoked), ("grant", granted)] {
        let items: Vec<String> = items.cloned().collect();
        if !items.is_empty() {
            audit_entries.push(AuditEntry::now(
                profile,
                key,
                action,
                items,
                format!("rollback to {}", doc.number),
            ));
        }
    }
    Ok(edited)
}
