//! The generation operations that change the home: `generations rollback` (switch back to a
//! generation with the selections, grants and installed records it had) and `generations
//! gc` (collect generations and store trees by policy). Reads of generations are views, in
//! [`super::query`].

use std::collections::BTreeSet;

use super::apply::SelectionEdit;
use super::{Context, ManagerError, installed};
use crate::consent::capabilities;
use crate::exit::Code;
use crate::generation::current;
use crate::generation::doc::GenerationDoc;
use crate::generation::gc::{self, GcReport};
use crate::generation::transaction::Transaction;
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
        None => current_doc.parent.ok_or_else(|| {
            ManagerError::Refused(format!(
                "generation {current} has no parent to roll back to"
            ))
        })?,
    };
    let dir = cx.layout.generation(target);
    let doc = GenerationDoc::read(&dir).map_err(|_| {
        ManagerError::coded(
            Code::NotFound,
            format!("generation {target} does not exist (see `hermes-plugins generations list`)"),
        )
    })?;
    // Selections as recorded in the target.
    let (profiles, _) =
        profiles::read_profiles(&cx.layout.home).map_err(ManagerError::environment)?;
    let mut edits: Vec<(std::path::PathBuf, String)> = Vec::new();
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
        for key in want_all.difference(&have_all) {
            new_text = apply_edit(&new_text, &SelectionEdit::Enable(key.clone()), &config)?;
        }
        for key in have_all.difference(&want_all) {
            new_text = apply_edit(&new_text, &SelectionEdit::Disable(key.clone()), &config)?;
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
            let target_grants: BTreeSet<String> = doc
                .profiles
                .get(&name)
                .and_then(|s| s.grants.get(key))
                .map(|g| g.iter().cloned().collect())
                .unwrap_or_default();
            let recorded = capabilities::read(&new_text, key).unwrap_or_default();
            let target_origin = doc
                .plugin(key)
                .map(|p| super::consent_step::grant_origin(&p.source));
            let same_source = target_grants.is_empty()
                || recorded.source.is_none()
                || recorded.source == target_origin;
            if recorded.granted == target_grants && same_source {
                continue;
            }
            let edited = match doc.plugin(key).filter(|_| !target_grants.is_empty()) {
                Some(plugin) => {
                    let declared = super::consent_step::declared(&store.path_of(&plugin.store_key));
                    capabilities::write(
                        &new_text,
                        key,
                        &target_grants,
                        &declared.capabilities,
                        &crate::consent::audit::now(),
                        &super::consent_step::grant_origin(&plugin.source),
                    )
                }
                None => capabilities::revoke_all(&new_text, key).map(|(text, _)| text),
            };
            new_text =
                edited.map_err(|e| ManagerError::Refused(format!("{}: {e}", config.display())))?;
            let revoked: Vec<String> = recorded
                .granted
                .difference(&target_grants)
                .cloned()
                .collect();
            let granted: Vec<String> = target_grants
                .difference(&recorded.granted)
                .cloned()
                .collect();
            for (action, items) in [("revoke", revoked), ("grant", granted)] {
                if !items.is_empty() {
                    audit_entries.push(crate::consent::audit::AuditEntry::now(
                        name.clone(),
                        key.clone(),
                        action,
                        items,
                        format!("rollback to {target}"),
                    ));
                }
            }
        }
        if new_text != text {
            edits.push((config, new_text));
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
                    super::install::record_from_generation(p, &store.path_of(&p.store_key))?;
                installed.plugins.insert(p.key.clone(), record);
            }
        }
    }
    let mut tx =
        Transaction::begin_switch(&cx.layout, &format!("rollback to {target}"), Some(target))?;
    for (path, text) in &edits {
        tx.edit_file(path, text.as_bytes())?;
    }
    tx.edit_file(&cx.layout.installed(), installed.to_json().as_bytes())?;
    tx.commit()?;
    if let Err(e) = crate::consent::audit::append(&cx.layout.audit_log(), &audit_entries) {
        tracing::warn!(
            "rolled back, but {} could not be appended to: {e}",
            cx.layout.audit_log().display()
        );
    }
    Ok((current, target))
}

fn apply_edit(
    text: &str,
    edit: &SelectionEdit,
    config: &std::path::Path,
) -> Result<String, ManagerError> {
    let result = match edit {
        SelectionEdit::Enable(n) => config_edit::enable(text, n),
        SelectionEdit::Disable(n) => config_edit::disable(text, n),
        SelectionEdit::Forget(n) => config_edit::forget(text, n),
    };
    result.map_err(|e| ManagerError::Refused(format!("{}: {e}", config.display())))
}

/// `generations gc [--keep N]`.
pub fn collect_garbage(
    cx: &Context,
    keep: usize,
    older_than: Option<jiff::SignedDuration>,
) -> Result<GcReport, ManagerError> {
    let newer_than = match older_than {
        Some(age) => Some(
            jiff::Timestamp::now()
                .checked_sub(age)
                .map_err(|e| ManagerError::Usage(format!("--older-than: {e}")))?,
        ),
        None => None,
    };
    let installed = installed(cx)?;
    let trees: BTreeSet<String> = installed
        .plugins
        .values()
        .map(|p| p.store_key.clone())
        .collect();
    Ok(gc::collect(&cx.layout, keep, newer_than, &trees)?)
}
