//! `search QUERY` (CAT-5): find catalog entries by name, tool names, tags and description.

use serde::Serialize;

use super::entry::Entry;

/// One search result (serialised as-is in `search --json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Hit {
    /// Entry name.
    pub name: String,
    /// `official` or `community` (an entry that gives none is `community`, as upstream's
    /// catalog reads it and as the human output shows it).
    pub tier: String,
    /// The entry's description.
    pub description: Option<String>,
    /// How many tools the entry declares (`capabilities.provides_tools`).
    pub tools: usize,
    /// What matched, in rank order: `name`, `tools`, `tags`, `description`.
    pub matched: Vec<&'static str>,
    /// The catalog giving the entry, when several are configured (`--catalog` as given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catalog: Option<String>,
}

/// Entries whose name, tool names, tags or description contain `query` (case-insensitive,
/// surrounding whitespace ignored; an empty query matches every entry).
///
/// Ranked by the best field matched — name, then tools, then tags, then description — with
/// an exact name match before other name matches; ties are ordered by name.
pub fn search(entries: &[Entry], query: &str) -> Vec<Hit> {
    let query = query.trim().to_lowercase();
    let contains = |text: &str| text.to_lowercase().contains(&query);
    let mut ranked: Vec<((usize, bool), Hit)> = Vec::new();
    for e in entries {
        let tools: &[String] = e
            .capabilities
            .as_ref()
            .map_or(&[], |c| c.provides_tools.as_slice());
        let mut matched = Vec::new();
        if contains(&e.name) {
            matched.push("name");
        }
        if tools.iter().any(|t| contains(t)) {
            matched.push("tools");
        }
        if e.tags.iter().any(|t| contains(t)) {
            matched.push("tags");
        }
        if e.description.as_deref().is_some_and(contains) {
            matched.push("description");
        }
        let Some(first) = matched.first() else {
            continue;
        };
        let rank = ["name", "tools", "tags", "description"]
            .iter()
            .position(|f| f == first)
            .unwrap_or(usize::MAX);
        let inexact = e.name.to_lowercase() != query;
        ranked.push((
            (rank, inexact),
            Hit {
                name: e.name.clone(),
                tier: e.tier.clone().unwrap_or_else(|| "community".into()),
                description: e.description.clone(),
                tools: tools.len(),
                matched,
                catalog: None,
            },
        ));
    }
    ranked.sort_by(|(ra, a), (rb, b)| ra.cmp(rb).then_with(|| a.name.cmp(&b.name)));
    ranked.into_iter().map(|(_, h)| h).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::entry::EntryCapabilities;
    use std::path::PathBuf;

    fn entry(name: &str, description: &str, tags: &[&str], tools: &[&str]) -> Entry {
        Entry {
            file: PathBuf::from(format!("{name}.yaml")),
            name: name.into(),
            repo: format!("https://github.com/o/{name}"),
            sha: "0".repeat(40),
            tier: Some("community".into()),
            description: Some(description.into()),
            maintainer: Some("o".into()),
            tags: tags.iter().map(|s| s.to_string()).collect(),
            capabilities: Some(EntryCapabilities {
                provides_tools: tools.iter().map(|s| s.to_string()).collect(),
                ..EntryCapabilities::default()
            }),
            ..Entry::default()
        }
    }

    #[test]
    fn an_entry_without_a_tier_is_community() {
        let mut e = entry("solo", "d", &[], &[]);
        e.tier = None;
        assert_eq!(search(&[e], "solo")[0].tier, "community");
    }

    #[test]
    fn ranks_name_then_tools_then_tags_then_description() {
        let entries = [
            entry("zz-notes", "Keeps notes about the Weather", &[], &[]),
            entry("aa-tags", "Something", &["weather"], &[]),
            entry("mm-tools", "Forecasts", &[], &["get_weather", "radar"]),
            entry("weather-extra", "More", &[], &[]),
            entry("weather", "Weather reports", &["weather"], &["weather_now"]),
            entry("unrelated", "Nothing here", &["misc"], &["x"]),
        ];
        let hits = search(&entries, "  WEATHER ");
        let names: Vec<&str> = hits.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "weather",
                "weather-extra",
                "mm-tools",
                "aa-tags",
                "zz-notes"
            ]
        );
        assert_eq!(hits[0].matched, ["name", "tools", "tags", "description"]);
        assert_eq!(hits[2].matched, ["tools"]);
        assert_eq!(hits[2].tools, 2);
        assert_eq!(hits[4].matched, ["description"]);
        assert_eq!(search(&entries, "").len(), entries.len());
        assert!(search(&entries, "nope").is_empty());
    }
}
