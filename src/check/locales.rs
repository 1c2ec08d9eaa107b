//! VAL-17: language packs — each declared locale has a parseable, text-only
//! `locales/<id>.yaml`; optional `<id>.tui.yaml` / `<id>.desktop.yaml` are checked the same way;
//! locale files of undeclared ids are reported (they never load).

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::diag::{CheckId, Diagnostic};
use crate::known;
use crate::located::{Dialect, Limits, Node, Pos, Value, yaml};
use crate::package::manifest::Manifest;
use crate::pkgfs::{PackageRoot, ReadError};

static LOCALE_ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(known::LOCALE_ID_PATTERN).expect("valid regex"));

/// Largest locale file read (4 MiB).
const LOCALE_LIMIT: u64 = 4 * 1024 * 1024;
const SURFACES: &[&str] = &["", ".tui", ".desktop"];

/// Runs the locale rules.
pub fn check(root: &PackageRoot, m: &Manifest, file: &str, out: &mut Vec<Diagnostic>) {
    let has_dir = root.is_dir("locales");
    if m.provides_locales.is_empty() {
        if has_dir && !locale_files(root).is_empty() {
            out.push(
                Diagnostic::warning(CheckId::Locales, file, Pos::START, "locales/ holds locale files but provides_locales is empty, so none of them load")
                    .hint("Declare each language: provides_locales: [{id: pl, endonym: Polski, rtl: false}]."),
            );
        }
        return;
    }
    let decl_pos = m.provides_locales_pos.unwrap_or(Pos::START);
    if !has_dir {
        out.push(
            Diagnostic::error(
                CheckId::Locales,
                file,
                decl_pos,
                "provides_locales is declared but there is no locales/ directory",
            )
            .hint("Add locales/<id>.yaml for each declared language."),
        );
        return;
    }
    let mut declared = HashSet::new();
    for decl in &m.provides_locales {
        let id = &decl.id.value;
        if !LOCALE_ID.is_match(id) {
            out.push(
                Diagnostic::error(
                    CheckId::Locales,
                    file,
                    decl.id.pos,
                    format!(
                        "locale id `{id}` is not a lowercase BCP-47-style id (pl, pt-br, zh-hant)"
                    ),
                )
                .value(id)
                .hint(format!(
                    "Use `{}`.",
                    id.to_ascii_lowercase().replace('_', "-")
                )),
            );
            continue;
        }
        if !declared.insert(id.clone()) {
            out.push(
                Diagnostic::warning(
                    CheckId::Locales,
                    file,
                    decl.id.pos,
                    format!("locale `{id}` is declared twice"),
                )
                .value(id),
            );
            continue;
        }
        for surface in SURFACES {
            let rel = format!("locales/{id}{surface}.yaml");
            match root.read_text(&rel, LOCALE_LIMIT) {
                Ok(text) => check_catalog(&rel, &text, out),
                Err(ReadError::Missing) if surface.is_empty() => out.push(
                    Diagnostic::error(
                        CheckId::Locales,
                        file,
                        decl.id.pos,
                        format!("locale `{id}` is declared but {rel} does not exist"),
                    )
                    .value(id)
                    .hint(format!("Add {rel} with the translated core strings.")),
                ),
                Err(ReadError::Missing) => {}
                Err(e) => out.push(Diagnostic::error(
                    CheckId::Locales,
                    &rel,
                    e.pos(),
                    format!("{rel} {e}"),
                )),
            }
        }
    }
    for (name, id) in locale_files(root) {
        if !declared.contains(&id) && LOCALE_ID.is_match(&id) {
            out.push(
                Diagnostic::warning(
                    CheckId::Locales,
                    format!("locales/{name}"),
                    Pos::START,
                    format!("locales/{name} belongs to undeclared locale `{id}` and never loads"),
                )
                .value(&id)
                .hint(format!(
                    "Declare it in provides_locales (id: {id}) or remove the file."
                )),
            );
        }
    }
}

/// Locale files in `locales/` with the id each belongs to.
fn locale_files(root: &PackageRoot) -> Vec<(String, String)> {
    let Ok(names) = root.list_dir("locales") else {
        return Vec::new();
    };
    names
        .into_iter()
        .filter_map(|name| {
            let stem = name.strip_suffix(".yaml")?;
            let id = stem
                .strip_suffix(".tui")
                .or_else(|| stem.strip_suffix(".desktop"))
                .unwrap_or(stem)
                .to_string();
            (!id.starts_with('_')).then_some((name, id))
        })
        .collect()
}

fn check_catalog(rel: &str, text: &str, out: &mut Vec<Diagnostic>) {
    let limits = Limits {
        max_depth: 64,
        max_nodes: 500_000,
    };
    let parsed = match yaml::parse(text, limits) {
        Ok(p) => p,
        Err(e) => {
            out.push(
                Diagnostic::error(
                    CheckId::Locales,
                    rel,
                    e.pos,
                    format!("{rel} is not valid YAML: {}", e.message),
                )
                .value(crate::package::line_at(text, e.pos)),
            );
            return;
        }
    };
    if parsed.root.is_null() {
        return;
    }
    if parsed.root.as_map().is_none() {
        out.push(
            Diagnostic::error(
                CheckId::Locales,
                rel,
                parsed.root.pos,
                format!("{rel} must be a mapping of message keys to strings"),
            )
            .value(parsed.root.snippet()),
        );
        return;
    }
    let mut stack: Vec<(String, &Node)> = vec![(String::new(), &parsed.root)];
    let mut reported = 0;
    while let Some((path, node)) = stack.pop() {
        match &node.value {
            Value::Map(entries) => {
                for e in entries.iter().rev() {
                    let child = if path.is_empty() {
                        e.key.clone()
                    } else {
                        format!("{path}.{}", e.key)
                    };
                    stack.push((child, &e.value));
                }
            }
            Value::Str(_) => {}
            _ => {
                reported += 1;
                if reported > 20 {
                    continue;
                }
                out.push(
                    Diagnostic::error(
                        CheckId::Locales,
                        rel,
                        node.pos,
                        format!(
                            "`{path}` is {} — locale catalogs hold only text",
                            node.type_name(Dialect::Yaml)
                        ),
                    )
                    .value(node.snippet())
                    .hint("Quote the value to make it a string."),
                );
            }
        }
    }
    if reported > 20 {
        out.push(Diagnostic::error(
            CheckId::Locales,
            rel,
            Pos::START,
            format!("{} more non-text values in {rel} not listed", reported - 20),
        ));
    }
}
