//! VAL-15 `credential-access` (catalog rule 11): plugins must not read or write credential
//! files themselves — Hermes' `.env` and `auth.json`, Codex's `~/.codex/auth.json`, or other
//! tools' credential stores — nor refresh OAuth tokens on their own. They use
//! `get_secret(...)` and `credentialed_provider_request(...)`.
//!
//! Found from string literals used in code (not docstrings, comments, log or print messages):
//! a path ending in `.env`; `auth.json` joined to a Hermes or Codex home; well-known credential
//! paths of other tools; the OpenAI token endpoint; and any use of `python-dotenv`.

use std::collections::HashSet;
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

use super::syntax::Node;

use super::eval::{Evaluator, Val};
use super::scope::ModId;
use super::source::{Index, PyModule};

/// One direct credential access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialAccess {
    /// What is accessed (`.env`, `auth.json`, `~/.aws/credentials`, …).
    pub what: String,
    pub file: String,
    /// Position.
    pub pos: crate::located::Pos,
    /// The source line, shortened.
    pub snippet: String,
}

const OTHER_TOOLS: &[&str] = &[
    ".codex/auth.json",
    ".aws/credentials",
    ".git-credentials",
    ".netrc",
    ".docker/config.json",
    ".config/gh/hosts.yml",
    ".pypirc",
    ".npmrc",
    ".kube/config",
    ".ssh/id_rsa",
    ".ssh/id_ed25519",
    ".config/gcloud/credentials.db",
];

/// Words a string literal must contain to be worth classifying: `env`, `auth`, or one of
/// [`OTHER_TOOLS`] without its leading dot — one automaton, so each literal is searched once.
/// Leftmost-first for its prefilter: only whether a word is there is asked, which the match
/// kind does not change.
static INTERESTING: LazyLock<AhoCorasick> = LazyLock::new(|| {
    let words = ["env", "auth"]
        .into_iter()
        .chain(OTHER_TOOLS.iter().map(|p| &p[1..]));
    AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::LeftmostFirst)
        .build(words)
        .expect("literal words")
});

const HOME_MARKERS: &[&str] = &[
    "hermes_home",
    "get_hermes_home",
    "HERMES_HOME",
    ".hermes",
    ".codex",
    "codex_home",
    "CODEX_HOME",
];

/// Finds direct credential access in every module (`indexes` are the modules' [`Index`]es).
pub fn find<'t>(ev: &Evaluator<'_, 't>, indexes: &[Index<'t>]) -> Vec<CredentialAccess> {
    let mut out = Vec::new();
    for (m, index) in indexes.iter().enumerate() {
        scan(ev, m, &ev.set.modules[m], index, &mut out);
    }
    // Stable: accesses on one line keep the order they were found in.
    out.sort_by(|a, b| (a.file.as_str(), a.pos).cmp(&(b.file.as_str(), b.pos)));
    out
}

fn scan<'t>(
    ev: &Evaluator<'_, 't>,
    m: ModId,
    module: &'t PyModule,
    index: &Index<'t>,
    out: &mut Vec<CredentialAccess>,
) {
    // One report per line and kind of access.
    let mut seen: HashSet<(u32, String)> = HashSet::new();
    let mut push = |node: Node<'_>, what: &str| {
        let pos = module.pos(node);
        if seen.insert((pos.line, what.to_string())) {
            out.push(CredentialAccess {
                what: what.to_string(),
                file: module.rel.clone(),
                pos,
                snippet: crate::located::truncate_chars(module.line_text(node).trim(), 100),
            });
        }
    };
    for node in &index.imports {
        let text = module.text_of(*node);
        if text
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .any(|w| w == "dotenv")
        {
            push(*node, "python-dotenv (.env loader)");
        }
    }
    for (node, is_prose) in &index.strings {
        if *is_prose {
            continue;
        }
        let raw = module.text_of(*node);
        if INTERESTING.is_match(raw)
            && let Some(what) = classify(ev, m, module, *node)
        {
            push(*node, &what);
        }
    }
}

/// The literal text of a string node: its value if fully known, else its static parts.
fn literal_text<'t>(ev: &Evaluator<'_, 't>, m: ModId, module: &PyModule, node: Node<'t>) -> String {
    match ev.eval(m, node, None) {
        Val::Str(s) => s,
        _ => {
            let mut out = String::new();
            for child in node.named_children() {
                if child.kind() == "string_content" {
                    out.push_str(module.text_of(child));
                } else if child.kind() == "interpolation" {
                    out.push('\u{0}');
                }
            }
            out
        }
    }
}

fn classify<'t>(
    ev: &Evaluator<'_, 't>,
    m: ModId,
    module: &PyModule,
    node: Node<'t>,
) -> Option<String> {
    let text = literal_text(ev, m, module, node);
    let last = text.rsplit(['/', '\\', '\u{0}']).next().unwrap_or(&text);
    if last == ".env"
        && (text == ".env"
            || text.ends_with("/.env")
            || text.ends_with("\\.env")
            || text.ends_with("\u{0}/.env"))
    {
        // A bare ".env" counts only where it names a file (joined to a path, opened, bound to
        // a name); `name.startswith(".env")` in a guard that blocks .env access is not access.
        if text != ".env" || is_path_context(module, node) {
            return Some(".env".into());
        }
        return None;
    }
    if text.contains("auth.openai.com/oauth/token") {
        return Some("the OpenAI OAuth token endpoint".into());
    }
    for path in OTHER_TOOLS {
        if text.contains(path) {
            return Some(format!("~/{path}"));
        }
    }
    if last == "auth.json" {
        // Only Hermes' or Codex's own auth.json, i.e. directly inside their home directory.
        let direct = text.contains(".hermes/auth.json") || text.contains(".codex/auth.json");
        if let Some(parent_text) = direct
            .then(String::new)
            .or_else(|| parent_component(ev, m, module, node, &text))
        {
            let codex =
                parent_text.to_ascii_lowercase().contains("codex") || text.contains(".codex");
            let hermes = direct
                || HOME_MARKERS
                    .iter()
                    .any(|marker| parent_text.contains(marker));
            if hermes || codex {
                return Some(if codex {
                    "~/.codex/auth.json".into()
                } else {
                    "Hermes auth.json".into()
                });
            }
        }
    }
    None
}

/// Whether a string literal is used as a file path: an operand of `/`, an argument of a
/// file/path function, or a value bound to a name (a path constant).
fn is_path_context(module: &PyModule, node: Node<'_>) -> bool {
    let Some(parent) = node.parent() else {
        return false;
    };
    match parent.kind() {
        "binary_operator" => parent
            .child_by_field_name("operator")
            .is_some_and(|op| module.text_of(op) == "/"),
        "assignment" | "default_parameter" | "typed_default_parameter" | "keyword_argument" => true,
        "argument_list" => {
            let func = parent
                .parent()
                .and_then(|call| call.child_by_field_name("function"))
                .map(|f| module.text_of(f))
                .unwrap_or("");
            let last = func.rsplit('.').next().unwrap_or(func);
            matches!(
                last,
                "open"
                    | "Path"
                    | "PurePath"
                    | "PosixPath"
                    | "join"
                    | "joinpath"
                    | "expanduser"
                    | "read_text"
                    | "read_bytes"
                    | "write_text"
                    | "write_bytes"
                    | "exists"
                    | "isfile"
                    | "is_file"
                    | "load_dotenv"
                    | "dotenv_values"
                    | "stat"
                    | "remove"
                    | "unlink"
                    | "copy"
                    | "copyfile"
                    | "rename"
                    | "replace"
            )
        }
        _ => false,
    }
}

/// The path component `auth.json` is joined to: the left operand of `/`, the previous
/// argument of `os.path.join(...)`, or the interpolation before it in an f-string.
fn parent_component<'t>(
    ev: &Evaluator<'_, 't>,
    m: ModId,
    module: &PyModule,
    node: Node<'t>,
    text: &str,
) -> Option<String> {
    if let Some(before) = text.strip_suffix("auth.json") {
        let before = before.trim_end_matches(['/', '\\']);
        if !before.is_empty() {
            // An f-string: the last static or interpolated part before `/auth.json`.
            let parts: Vec<Node<'t>> = node
                .named_children()
                .filter(|p| matches!(p.kind(), "interpolation" | "string_content"))
                .collect();
            let previous = parts
                .iter()
                .rev()
                .nth(1)
                .map(|p| module.text_of(*p).to_string());
            return previous.or_else(|| Some(before.to_string()));
        }
    }
    let parent = node.parent()?;
    let previous = match parent.kind() {
        "binary_operator" if parent.child_by_field_name("right") == Some(node) => {
            let left = parent.child_by_field_name("left")?;
            if left.kind() == "binary_operator" {
                left.child_by_field_name("right")?
            } else {
                left
            }
        }
        "argument_list" => node.prev_named_sibling()?,
        _ => return None,
    };
    Some(match ev.eval(m, previous, None) {
        Val::Str(s) => s,
        _ => module.text_of(previous).to_string(),
    })
}
