//! `plugin.json` of an Agent Plugins v1.0.0 package (MAN-4).
//!
//! Any violation rejects the whole package, except two that are reported and ignored: an
//! unknown top-level field, and an `extensions` value that is not an object. No schema is ever
//! fetched: the rules are built in.

use crate::diag::{CheckId, Diagnostic, did_you_mean};
use crate::located::{Dialect, Limits, Node, Pos, Value, json};
use crate::package::fields::Spanned;
use crate::pkgfs::{MANIFEST_LIMIT, PackageRoot};

/// The only plugin.json schema id this build supports.
pub const PLUGIN_SCHEMA_V1: &str = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json";

/// The Hermes extension namespace.
pub const HERMES_NAMESPACE: &str = "com.nousresearch.hermes";

const FILE: &str = "plugin.json";

const TOP_LEVEL: &[&str] = &[
    "$schema",
    "name",
    "version",
    "description",
    "author",
    "homepage",
    "repository",
    "license",
    "keywords",
    "extensions",
];

/// The author object of a portable package.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PortableAuthor {
    /// Display name.
    pub name: Option<String>,
    /// E-mail address.
    pub email: Option<String>,
    /// Home page.
    pub url: Option<String>,
}

/// A valid `plugin.json`. A field documented by nothing else is the key of the same name.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginJson {
    pub name: Spanned<String>,
    /// `version` (a free string; never required to be SemVer).
    pub version: Option<String>,
    pub description: Option<String>,
    pub author: Option<PortableAuthor>,
    pub homepage: Option<String>,
    pub repository: Option<String>,
    pub license: Option<String>,
    pub keywords: Vec<String>,
    /// Extension namespaces present, in order.
    pub extensions: Vec<String>,
    /// The `com.nousresearch.hermes` namespace object, if present (read by the extension module).
    pub hermes: Option<Node>,
}

/// Whether `name` satisfies the Agent Plugins v1 plugin-name rule: 1–64 characters of
/// `[a-z0-9.-]`, starting and ending alphanumeric, without `--` or `..`.
pub fn valid_plugin_name(name: &str) -> bool {
    let len = name.chars().count();
    (1..=64).contains(&len)
        && !name.contains("--")
        && !name.contains("..")
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric())
}

/// `author`: an object of string `name`, `email` and `url` (anything else reported; `ok` is
/// cleared on an error).
fn read_author(node: &Node, ok: &mut bool, out: &mut Vec<Diagnostic>) -> Option<PortableAuthor> {
    let err = |pos: Pos, msg: String| Diagnostic::error(CheckId::PortableManifest, FILE, pos, msg);
    match node.as_map() {
        None => {
            *ok = false;
            out.push(
                err(
                    node.pos,
                    format!(
                        "plugin.json author must be an object, not {}",
                        node.type_name(Dialect::Json)
                    ),
                )
                .value(node.snippet())
                .hint("Write \"author\": {\"name\": \"…\", \"email\": \"…\", \"url\": \"…\"}."),
            );
            None
        }
        Some(fields) => {
            let mut author = PortableAuthor::default();
            for f in fields {
                let slot = match f.key.as_str() {
                    "name" => &mut author.name,
                    "email" => &mut author.email,
                    "url" => &mut author.url,
                    _ => {
                        *ok = false;
                        out.push(
                            err(f.key_pos, format!("plugin.json author may contain only string name, email, and url fields; found `{}`", f.key))
                                .value(&f.key),
                        );
                        continue;
                    }
                };
                match f.value.as_str() {
                    Some(s) => *slot = Some(s.to_string()),
                    None => {
                        *ok = false;
                        out.push(
                            err(
                                f.value.pos,
                                format!("plugin.json author.{} must be a string", f.key),
                            )
                            .value(f.value.snippet()),
                        );
                    }
                }
            }
            Some(author)
        }
    }
}

/// `extensions`: the reverse-domain namespaces (each an object) and Hermes's own, if present
/// (`ok` is cleared on an error; a non-object field is ignored with a warning).
fn read_extensions(
    root_node: &Node,
    ok: &mut bool,
    out: &mut Vec<Diagnostic>,
) -> (Vec<String>, Option<Node>) {
    let err = |pos: Pos, msg: String| Diagnostic::error(CheckId::PortableManifest, FILE, pos, msg);
    let mut extensions = Vec::new();
    let mut hermes = None;
    if let Some(e) = root_node.get("extensions") {
        match e.value.as_map() {
            None => out.push(
                Diagnostic::warning(
                    CheckId::PortableManifest,
                    FILE,
                    e.value.pos,
                    format!(
                        "ignored non-object extensions field ({})",
                        e.value.type_name(Dialect::Json)
                    ),
                )
                .value(e.value.snippet())
                .hint("extensions is an object keyed by reverse-domain namespaces."),
            ),
            Some(namespaces) => {
                for ns in namespaces {
                    if ns.value.as_map().is_none() {
                        *ok = false;
                        out.push(
                            err(ns.value.pos, format!("plugin.json extension namespace values must be objects; `{}` is {}", ns.key, ns.value.type_name(Dialect::Json)))
                                .value(ns.value.snippet()),
                        );
                        continue;
                    }
                    extensions.push(ns.key.clone());
                    if ns.key == HERMES_NAMESPACE {
                        hermes = Some(ns.value.clone());
                    }
                }
            }
        }
    }
    (extensions, hermes)
}

/// `$schema` must be the Agent Plugins v1 id (`ok` is cleared otherwise).
fn check_schema_id(root_node: &Node, ok: &mut bool, out: &mut Vec<Diagnostic>) {
    let err = |pos: Pos, msg: String| Diagnostic::error(CheckId::PortableManifest, FILE, pos, msg);
    match root_node.get("$schema") {
        None => {
            *ok = false;
            out.push(
                err(root_node.pos, "plugin.json declares no $schema".to_string()).hint(format!(
                    "Add \"$schema\": \"{PLUGIN_SCHEMA_V1}\" (the only supported id)."
                )),
            );
        }
        Some(e) if e.value.as_str() == Some(PLUGIN_SCHEMA_V1) => {}
        Some(e) => {
            *ok = false;
            out.push(
                err(
                    e.value.pos,
                    "plugin.json declares an unsupported or missing Agent Plugins schema"
                        .to_string(),
                )
                .value(e.value.snippet())
                .hint(format!("Supported: {PLUGIN_SCHEMA_V1}")),
            );
        }
    }
}

/// `keywords`: an array of strings (`ok` is cleared otherwise).
fn read_keywords(root_node: &Node, ok: &mut bool, out: &mut Vec<Diagnostic>) -> Vec<String> {
    let err = |pos: Pos, msg: String| Diagnostic::error(CheckId::PortableManifest, FILE, pos, msg);
    let mut keywords = Vec::new();
    if let Some(e) = root_node.get("keywords") {
        match e.value.as_seq() {
            Some(items) if items.iter().all(|i| i.as_str().is_some()) => {
                keywords = items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_string))
                    .collect();
            }
            _ => {
                *ok = false;
                out.push(
                    err(
                        e.value.pos,
                        "plugin.json keywords must be an array of strings".to_string(),
                    )
                    .value(e.value.snippet()),
                );
            }
        }
    }
    keywords
}

/// Reads and checks `plugin.json`; `None` means the package is rejected (the reasons are in `out`).
pub fn read(root: &PackageRoot, out: &mut Vec<Diagnostic>) -> Option<PluginJson> {
    let err = |pos: Pos, msg: String| Diagnostic::error(CheckId::PortableManifest, FILE, pos, msg);
    let text = match root.read_text(FILE, MANIFEST_LIMIT) {
        Ok(t) => t,
        Err(e) => {
            out.push(
                err(
                    e.pos(),
                    format!("plugin.json must be a regular file within the plugin root; it {e}"),
                )
                .hint("Ship plugin.json as a plain file at the package root."),
            );
            return None;
        }
    };
    let parsed = match json::parse(&text, Limits::default()) {
        Ok(p) => p,
        Err(e) => {
            out.push(err(
                e.pos,
                format!("plugin.json is not valid JSON: {}", e.message),
            ));
            return None;
        }
    };
    for note in &parsed.notes {
        out.push(
            Diagnostic::warning(
                CheckId::PortableManifest,
                FILE,
                note.pos,
                note.message.clone(),
            )
            .value(&note.value),
        );
    }
    let root_node = parsed.root;
    let Some(entries) = root_node.as_map() else {
        out.push(
            err(
                root_node.pos,
                format!(
                    "plugin.json must contain a JSON object, not {}",
                    root_node.type_name(Dialect::Json)
                ),
            )
            .value(root_node.snippet()),
        );
        return None;
    };

    let mut ok = true;
    for entry in entries {
        if !TOP_LEVEL.contains(&entry.key.as_str()) {
            let mut d = Diagnostic::warning(
                CheckId::PortableManifest,
                FILE,
                entry.key_pos,
                format!("ignored unknown top-level field: {}", entry.key),
            )
            .value(&entry.key);
            if let Some(s) = did_you_mean(&entry.key, TOP_LEVEL.iter().copied()) {
                d = d.hint(format!("Did you mean `{s}`?"));
            } else {
                d = d.hint("Agent Plugins v1.0.0 allows $schema, name, version, description, author, homepage, repository, license, keywords and extensions; put client-specific data under extensions.");
            }
            out.push(d);
        }
    }

    check_schema_id(&root_node, &mut ok, out);

    let name = match root_node.get("name") {
        None => {
            ok = false;
            out.push(
                err(root_node.pos, "plugin.json has no name".to_string())
                    .hint("Add \"name\": a lowercase id such as \"my-plugin\"."),
            );
            None
        }
        Some(e) => match e.value.as_str() {
            Some(n) if valid_plugin_name(n) => Some(Spanned::new(n.to_string(), e.value.pos)),
            _ => {
                ok = false;
                out.push(
                    err(e.value.pos, "plugin.json name does not satisfy v1 constraints".to_string())
                        .value(e.value.snippet())
                        .hint("Use 1-64 characters of a-z, 0-9, `.` and `-`, starting and ending with a letter or digit, without `--` or `..`."),
                );
                None
            }
        },
    };

    let mut string_field = |field: &str, ok: &mut bool| -> Option<String> {
        let e = root_node.get(field)?;
        match &e.value.value {
            Value::Str(s) => Some(s.clone()),
            _ => {
                *ok = false;
                out.push(
                    err(
                        e.value.pos,
                        format!(
                            "plugin.json {field} must be a string, not {}",
                            e.value.type_name(Dialect::Json)
                        ),
                    )
                    .value(e.value.snippet()),
                );
                None
            }
        }
    };
    let version = string_field("version", &mut ok);
    let description = string_field("description", &mut ok);
    let homepage = string_field("homepage", &mut ok);
    let repository = string_field("repository", &mut ok);
    let license = string_field("license", &mut ok);

    let author = root_node
        .get("author")
        .and_then(|e| read_author(&e.value, &mut ok, out));

    let keywords = read_keywords(&root_node, &mut ok, out);

    let (extensions, hermes) = read_extensions(&root_node, &mut ok, out);

    if !ok {
        return None;
    }
    Some(PluginJson {
        name: name?,
        version,
        description,
        author,
        homepage,
        repository,
        license,
        keywords,
        extensions,
        hermes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_names() {
        for good in ["a", "my-plugin", "a.b", "x9", "0"] {
            assert!(valid_plugin_name(good), "{good}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "a--b",
            "a..b",
            "A",
            "a_b",
            ".a",
            &"a".repeat(65),
        ] {
            assert!(!valid_plugin_name(bad), "{bad}");
        }
    }
}
