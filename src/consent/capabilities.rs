//! Capability grants (CAP-1…4, CAP-9, STATE-1) as they live in a profile's `config.yaml`:
//! `plugins.entries.<key>.granted_capabilities`, `capabilities_consent {hash, granted_at}`
//! (hash = SHA-256 of the sorted, newline-joined declared ids; `source` = where the plugin
//! that was granted came from), and the legacy `allow_*` keys mirrored so Hermes versions
//! that read only those agree. A grant belongs to a source: the same key from another source
//! is asked again.

use std::collections::BTreeSet;

use crate::known::{self, Capability};
use crate::state::config_edit::{self, EditError, EntryValue};

/// The grants recorded for one plugin in one profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    /// Granted capability ids (from `granted_capabilities` and legacy keys set to true).
    pub granted: BTreeSet<String>,
    /// The declared-set hash consented to.
    pub hash: Option<String>,
    /// When.
    pub granted_at: Option<String>,
    /// The source the grants were given to (absent in records written before it was kept,
    /// or by hand).
    pub source: Option<String>,
}

impl Grants {
    /// Whether these grants were given to a plugin from another source than `origin`.
    pub fn for_another_source(&self, origin: &str) -> bool {
        self.source.as_deref().is_some_and(|s| s != origin)
    }
}

/// Where a plugin comes from, as its grants record it: `pypi:<name>` for a distribution from
/// the package index, the normalised repository URL (with the subdirectory), else the
/// directory it was copied from.
pub fn origin(source: &crate::source::Provenance) -> String {
    // A distribution is the same source whatever release or file: its name on the index.
    if let (Some(package), crate::source::SourceSpec::Pypi { .. }) = (&source.package, &source.spec)
    {
        return format!("pypi:{}", package.name);
    }
    match &source.url {
        Some(url) => {
            let repo = crate::repo_url::normalize(url);
            match &source.subdir {
                Some(sub) => format!("{repo}#{sub}"),
                None => repo,
            }
        }
        None => source.spec.without_credentials().display(),
    }
}

/// One plugin's capability question in one profile: what it declares now, what an update of
/// it changed, and what the command's `--grant`/`--revoke` say about it.
#[derive(Debug, Clone, Copy)]
pub struct Question<'a> {
    /// The declared ids.
    pub declared: &'a BTreeSet<String>,
    /// The ids an update of the plugin added (CAP-7: only these are asked about), `None`
    /// when its code did not change.
    pub added: Option<&'a BTreeSet<String>>,
    /// The ids it no longer declares (CAP-3: their grants are revoked).
    pub no_longer_declared: &'a BTreeSet<String>,
    /// `--grant` ids aimed at this plugin.
    pub grant: &'a [String],
    /// `--revoke` ids aimed at this plugin.
    pub revoke: &'a [String],
}

/// What the record and the question decide before anyone is asked (CAP-2…CAP-4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The grants after CAP-3 and the flags (answers to [`Decision::ask`] are added to it).
    pub granted: BTreeSet<String>,
    /// Revoked because no longer declared.
    pub dropped: Vec<String>,
    /// Newly granted by `--grant`.
    pub flag_granted: Vec<String>,
    /// Revoked by `--revoke`.
    pub flag_revoked: Vec<String>,
    /// Known capabilities to ask about (sorted by id); refused when nobody can answer.
    pub ask: Vec<&'static Capability>,
    /// Declared ids the registry does not know (ignored, with a warning).
    pub unknown: Vec<String>,
    /// Whether this declared set was answered before (its hash is the recorded one).
    pub answered: bool,
}

/// Decides `question` against the grants standing before (`before`, consented to for the
/// declared-set hash `hash`). A set is asked about once: after an answer only what an update
/// adds is asked, and nothing a flag settles.
pub fn decide(before: &BTreeSet<String>, hash: Option<&str>, question: &Question) -> Decision {
    let (known_caps, unknown) = split_known(question.declared);
    let known_ids: BTreeSet<&str> = known_caps.iter().map(|c| c.id).collect();
    let mut granted = before.clone();
    let dropped: Vec<String> = before
        .iter()
        .filter(|g| question.no_longer_declared.contains(*g))
        .cloned()
        .collect();
    for id in &dropped {
        granted.remove(id);
    }
    let flag_granted: Vec<String> = question
        .grant
        .iter()
        .filter(|id| granted.insert((*id).clone()))
        .cloned()
        .collect();
    let flag_revoked: Vec<String> = question
        .revoke
        .iter()
        .filter(|id| granted.remove(*id))
        .cloned()
        .collect();
    let answered = hash == Some(declared_hash(question.declared).as_str());
    let candidates: BTreeSet<&str> = match question.added {
        Some(added) => added
            .iter()
            .map(String::as_str)
            .filter(|id| known_ids.contains(id))
            .collect(),
        None if answered => BTreeSet::new(),
        None => known_ids,
    };
    let flagged = |id: &str| {
        question
            .grant
            .iter()
            .chain(question.revoke)
            .any(|f| f == id)
    };
    let ask = known_caps
        .into_iter()
        .filter(|c| candidates.contains(c.id) && !granted.contains(c.id) && !flagged(c.id))
        .collect();
    Decision {
        granted,
        dropped,
        flag_granted,
        flag_revoked,
        ask,
        unknown,
        answered,
    }
}

impl Decision {
    /// Whether the record must be (re)written: something is declared or granted, and the
    /// grants, the answered set or the source changed.
    pub fn rewrites(
        &self,
        before: &BTreeSet<String>,
        question: &Question,
        source_changed: bool,
    ) -> bool {
        let needed =
            !question.declared.is_empty() || !self.granted.is_empty() || !before.is_empty();
        needed && (self.granted != *before || !self.answered || source_changed)
    }
}

/// The known capabilities among `declared`, and the unknown ids (ignored with a warning).
pub fn split_known(declared: &BTreeSet<String>) -> (Vec<&'static Capability>, Vec<String>) {
    let mut known_caps = Vec::new();
    let mut unknown = Vec::new();
    for id in declared {
        match known::capability(id) {
            Some(c) => known_caps.push(c),
            None => unknown.push(id.clone()),
        }
    }
    (known_caps, unknown)
}

/// SHA-256 (hex) of the sorted, newline-joined declared ids.
pub fn declared_hash(declared: &BTreeSet<String>) -> String {
    let joined = declared.iter().cloned().collect::<Vec<_>>().join("\n");
    crate::hash::sha256_hex(joined.as_bytes())
}

fn legacy_path(c: &Capability) -> Vec<&'static str> {
    c.legacy_key.split('.').collect()
}

/// Removes a legacy key, and its parent mapping (`llm`) when nothing else is left in it: a
/// revoke leaves no `llm: {}` behind.
fn remove_legacy(text: &str, key: &str, path: &[&str]) -> Result<String, EditError> {
    let out = config_edit::remove_entry(text, key, path)?;
    let Some((_, parent)) = path.split_last() else {
        return Ok(out);
    };
    match config_edit::read_entry(&out, key, parent)? {
        Some(serde_json::Value::Object(map)) if !parent.is_empty() && map.is_empty() => {
            config_edit::remove_entry(&out, key, parent)
        }
        _ => Ok(out),
    }
}

/// Reads a plugin's grants from a config text.
pub fn read(text: &str, key: &str) -> Result<Grants, EditError> {
    let mut grants = Grants::default();
    if let Some(serde_json::Value::Array(items)) =
        config_edit::read_entry(text, key, &["granted_capabilities"])?
    {
        grants
            .granted
            .extend(items.iter().filter_map(|v| v.as_str().map(str::to_string)));
    }
    for c in known::CAPABILITIES {
        if config_edit::read_entry(text, key, &legacy_path(c))?
            == Some(serde_json::Value::Bool(true))
        {
            grants.granted.insert(c.id.to_string());
        }
    }
    if let Some(consent) = config_edit::read_entry(text, key, &["capabilities_consent"])? {
        grants.hash = consent["hash"].as_str().map(str::to_string);
        grants.granted_at = consent["granted_at"].as_str().map(str::to_string);
        grants.source = consent["source"].as_str().map(str::to_string);
    }
    Ok(grants)
}

/// Writes `granted` for `key`: the list, the consent record for `declared` at `now` given to
/// the plugin from `source`, and the legacy keys (true when granted, removed otherwise).
pub fn write(
    text: &str,
    key: &str,
    granted: &BTreeSet<String>,
    declared: &BTreeSet<String>,
    now: &str,
    source: &str,
) -> Result<String, EditError> {
    let mut out = config_edit::set_entry(
        text,
        key,
        &["granted_capabilities"],
        &EntryValue::List(granted.iter().cloned().collect()),
    )?;
    out = config_edit::set_entry(
        &out,
        key,
        &["capabilities_consent"],
        &EntryValue::Map(vec![
            ("hash".to_string(), EntryValue::Str(declared_hash(declared))),
            ("granted_at".to_string(), EntryValue::Str(now.to_string())),
            ("source".to_string(), EntryValue::Str(source.to_string())),
        ]),
    )?;
    for c in known::CAPABILITIES {
        let path = legacy_path(c);
        if granted.contains(c.id) {
            out = config_edit::set_entry(&out, key, &path, &EntryValue::Bool(true))?;
        } else if config_edit::read_entry(&out, key, &path)?.is_some() {
            out = remove_legacy(&out, key, &path)?;
        }
    }
    Ok(out)
}

/// Revokes everything `key` holds in a config text — `granted_capabilities`,
/// `capabilities_consent` and every legacy `allow_*` key — leaving the rest of its entry (its
/// settings) alone. Returns the new text and what was granted before.
pub fn revoke_all(text: &str, key: &str) -> Result<(String, BTreeSet<String>), EditError> {
    let before = read(text, key)?.granted;
    let mut out = text.to_string();
    for path in [&["granted_capabilities"][..], &["capabilities_consent"][..]] {
        out = config_edit::remove_entry(&out, key, path)?;
    }
    for c in known::CAPABILITIES {
        if config_edit::read_entry(&out, key, &legacy_path(c))?.is_some() {
            out = remove_legacy(&out, key, &legacy_path(c))?;
        }
    }
    Ok((out, before))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// A grant mirrored into a nested legacy key (`llm.allow_model_override`) leaves no
    /// empty `llm: {}` behind when it is revoked, one by one or all at once; a sibling the
    /// user wrote there stays.
    #[test]
    fn revoking_leaves_no_empty_legacy_mapping() {
        let declared = ids(&["llm.model_override"]);
        let text = "plugins:\n  enabled: [w]\n";
        let granted = write(text, "w", &declared, &declared, "now", "src").unwrap();
        assert!(granted.contains("allow_model_override: true"), "{granted}");
        let revoked = write(&granted, "w", &BTreeSet::new(), &declared, "now", "src").unwrap();
        assert!(!revoked.contains("llm"), "{revoked}");
        let (all, before) = revoke_all(&granted, "w").unwrap();
        assert_eq!(before, declared);
        assert!(!all.contains("llm"), "{all}");
        let kept = config_edit::set_entry(
            &granted,
            "w",
            &["llm", "temperature"],
            &EntryValue::Str("0.2".into()),
        )
        .unwrap();
        let (all, _) = revoke_all(&kept, "w").unwrap();
        assert!(all.contains("temperature"), "{all}");
        assert!(!all.contains("allow_model_override"), "{all}");
    }

    /// `decide`: CAP-3 drops what is no longer declared; flags settle what they name; a set
    /// answered before is not asked again; an update asks only what it added.
    #[test]
    fn decide_asks_only_what_is_left() {
        let declared = ids(&["llm.model_override", "tools.override"]);
        let none = BTreeSet::new();
        let fresh = Question {
            declared: &declared,
            added: None,
            no_longer_declared: &none,
            grant: &[],
            revoke: &[],
        };
        let d = decide(&BTreeSet::new(), None, &fresh);
        assert_eq!(d.ask.len(), 2);
        assert!(!d.answered);
        let hash = declared_hash(&declared);
        let again = decide(&ids(&["tools.override"]), Some(&hash), &fresh);
        assert!(again.ask.is_empty() && again.answered);
        let flagged = ["tools.override".to_string()];
        let d = decide(
            &BTreeSet::new(),
            None,
            &Question {
                grant: &flagged,
                ..fresh
            },
        );
        assert_eq!(d.flag_granted, flagged);
        assert_eq!(
            d.ask.iter().map(|c| c.id).collect::<Vec<_>>(),
            ["llm.model_override"]
        );
        let gone = ids(&["platform.actions"]);
        let d = decide(
            &ids(&["platform.actions", "tools.override"]),
            Some(&hash),
            &Question {
                no_longer_declared: &gone,
                ..fresh
            },
        );
        assert_eq!(d.dropped, ["platform.actions"]);
        assert_eq!(d.granted, ids(&["tools.override"]));
        let added = ids(&["llm.model_override"]);
        let d = decide(
            &ids(&["tools.override"]),
            Some("old"),
            &Question {
                added: Some(&added),
                ..fresh
            },
        );
        assert_eq!(
            d.ask.iter().map(|c| c.id).collect::<Vec<_>>(),
            ["llm.model_override"]
        );
    }
}
