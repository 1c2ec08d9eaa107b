//! The Hermes extension of `plugin.json`: `extensions."com.nousresearch.hermes"` (MAN-6, VAL-P4).
//!
//! `servers.<name>` declares, for an `mcp.json` server, its `trust` (`untrusted` or `full`;
//! a package may narrow trust but never widen it) and an application declaration (`app`,
//! `requires`, `liveness`). Any problem in a server declaration rejects the package, as in
//! Hermes: a misspelt server name would otherwise silently run an `untrusted` server with
//! full trust. `requires_hermes` may also appear here.

use std::sync::LazyLock;

use regex::Regex;

use crate::diag::{CheckId, Diagnostic, did_you_mean};
use crate::located::{Dialect, Node, Pos, Value};
use crate::package::fields::Spanned;

use super::mcp::{McpConfig, Trust};

const FILE: &str = "plugin.json";
const OS_KEYS: &[&str] = &["win32", "darwin", "linux"];

static DOTTED_NUMERIC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\d+(?:\.\d+)*$").expect("valid regex"));
static KEY_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z0-9_.-]+$").expect("valid regex"));
static ENDPOINT_PATH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^/[A-Za-z0-9._~/-]*$").expect("valid regex"));
static WINDOWS_ABS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z]:[\\/]").expect("valid regex"));

/// A server declaration in the Hermes extension.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerDecl {
    /// The mcp.json server it applies to.
    pub name: String,
    /// Where the declaration is.
    pub pos: Pos,
    /// Declared trust (default `full`).
    pub trust: Trust,
    /// Whether an application declaration (`app`) is present.
    pub has_app: bool,
}

/// The parsed Hermes extension.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HermesExtension {
    /// `requires_hermes`, if given.
    pub requires_hermes: Option<Spanned<String>>,
    /// Server declarations.
    pub servers: Vec<ServerDecl>,
}

struct Cx<'a> {
    out: &'a mut Vec<Diagnostic>,
    ok: bool,
}

impl Cx<'_> {
    fn fail(&mut self, pos: Pos, component: Option<&str>, msg: String, value: Option<String>) {
        self.ok = false;
        let mut d = Diagnostic::error(CheckId::HermesExtension, FILE, pos, msg);
        if let Some(c) = component {
            d = d.component(format!("mcp:{c}"));
        }
        if let Some(v) = value {
            d = d.value(v);
        }
        self.out.push(d);
    }
}

/// Reads the Hermes namespace object; `None` means the package is rejected.
pub fn read(ns: &Node, mcp: &McpConfig, out: &mut Vec<Diagnostic>) -> Option<HermesExtension> {
    let mut cx = Cx { out, ok: true };
    let mut ext = HermesExtension::default();
    for entry in ns.as_map().unwrap_or(&[]) {
        match entry.key.as_str() {
            "requires_hermes" => match entry.value.as_str() {
                Some(s) => ext.requires_hermes = Some(Spanned::new(s.to_string(), entry.value.pos)),
                None => cx.fail(
                    entry.value.pos,
                    None,
                    format!(
                        "extension requires_hermes must be a string, not {}",
                        entry.value.type_name(Dialect::Json)
                    ),
                    Some(entry.value.snippet()),
                ),
            },
            "servers" => {
                let Some(servers) = entry.value.as_map() else {
                    cx.fail(
                        entry.value.pos,
                        None,
                        "extension 'com.nousresearch.hermes'.servers must be an object".into(),
                        Some(entry.value.snippet()),
                    );
                    continue;
                };
                for server in servers {
                    if let Some(decl) = read_server(&server.key, &server.value, mcp, &mut cx) {
                        ext.servers.push(decl);
                    }
                }
            }
            other => {
                let mut d = Diagnostic::warning(
                    CheckId::HermesExtension,
                    FILE,
                    entry.key_pos,
                    format!(
                        "unknown key `{other}` in the com.nousresearch.hermes extension is ignored"
                    ),
                )
                .value(other);
                if let Some(s) = did_you_mean(other, ["servers", "requires_hermes"]) {
                    d = d.hint(format!("Did you mean `{s}`?"));
                }
                cx.out.push(d);
            }
        }
    }
    cx.ok.then_some(ext)
}

fn read_server(name: &str, node: &Node, mcp: &McpConfig, cx: &mut Cx<'_>) -> Option<ServerDecl> {
    let prefix = format!("server declaration '{name}'");
    let loaded = mcp.servers.iter().any(|s| s.name == name);
    if !loaded {
        let written = mcp.written.iter().any(|s| s == name);
        let reason = if written {
            "names an mcp.json server that was skipped as invalid".to_string()
        } else if !mcp.present {
            "has no matching mcp.json server (the package has no mcp.json)".to_string()
        } else if !mcp.usable {
            "has no matching mcp.json server (mcp.json is unusable)".to_string()
        } else {
            let suggestion = did_you_mean(name, mcp.written.iter().map(String::as_str));
            match suggestion {
                Some(s) => format!("has no matching mcp.json server; did you mean `{s}`?"),
                None => "has no matching mcp.json server".to_string(),
            }
        };
        cx.fail(node.pos, Some(name), format!("{prefix} {reason}; the package is rejected so that no server runs with more trust than declared"), Some(name.to_string()));
        return None;
    }
    let Some(fields) = node.as_map() else {
        cx.fail(
            node.pos,
            Some(name),
            format!("{prefix} must be an object"),
            Some(node.snippet()),
        );
        return None;
    };
    let mut decl = ServerDecl {
        name: name.to_string(),
        pos: node.pos,
        trust: Trust::Full,
        has_app: false,
    };
    let unknown: Vec<&str> = fields
        .iter()
        .map(|f| f.key.as_str())
        .filter(|k| !["trust", "app", "requires", "liveness"].contains(k))
        .collect();
    if !unknown.is_empty() {
        let pos = fields
            .iter()
            .find(|f| unknown.contains(&f.key.as_str()))
            .map_or(node.pos, |f| f.key_pos);
        cx.fail(
            pos,
            Some(name),
            format!(
                "{prefix} has unknown keys [{}]; allowed: trust, app, requires, liveness",
                unknown.join(", ")
            ),
            Some(unknown.join(", ")),
        );
    }
    let get = |k: &str| fields.iter().find(|f| f.key == k).map(|f| &f.value);
    if let Some(trust) = get("trust") {
        match trust.as_str() {
            Some("untrusted") => decl.trust = Trust::Untrusted,
            Some("full") => decl.trust = Trust::Full,
            _ => cx.fail(
                trust.pos,
                Some(name),
                format!("{prefix}: trust must be \"untrusted\" or \"full\""),
                Some(trust.snippet()),
            ),
        }
    }
    let app = get("app");
    let mut versioned_everywhere = true;
    let mut os_blocks = 0;
    let mut unversioned: Vec<String> = Vec::new();
    if let Some(app) = app {
        decl.has_app = true;
        match app.as_map() {
            None => cx.fail(
                app.pos,
                Some(name),
                format!("{prefix}: app must be an object keyed by OS (win32, darwin, linux)"),
                Some(app.snippet()),
            ),
            Some(blocks) => {
                let bad: Vec<&str> = blocks
                    .iter()
                    .map(|b| b.key.as_str())
                    .filter(|k| !OS_KEYS.contains(k))
                    .collect();
                if !bad.is_empty() {
                    cx.fail(app.pos, Some(name), format!("{prefix}: app has unknown OS keys [{}]; use ('win32', 'darwin', 'linux')", bad.join(", ")), Some(bad.join(", ")));
                }
                if blocks.is_empty() {
                    cx.fail(
                        app.pos,
                        Some(name),
                        format!("{prefix}: app needs at least one OS block"),
                        None,
                    );
                }
                for block in blocks.iter().filter(|b| OS_KEYS.contains(&b.key.as_str())) {
                    os_blocks += 1;
                    if !check_os_block(&prefix, name, &block.key, &block.value, cx) {
                        versioned_everywhere = false;
                        unversioned.push(block.key.clone());
                    }
                }
            }
        }
    }
    if let Some(requires) = get("requires") {
        check_requires(
            &prefix,
            name,
            requires,
            app.is_some(),
            versioned_everywhere,
            os_blocks,
            &unversioned,
            cx,
        );
    }
    if let Some(liveness) = get("liveness") {
        if app.is_none() && get("requires").is_none() {
            cx.fail(
                liveness.pos,
                Some(name),
                format!("{prefix} has liveness without app or requires"),
                None,
            );
        }
        if liveness.as_map().is_none() {
            cx.fail(
                liveness.pos,
                Some(name),
                format!("{prefix}: liveness must be an object"),
                Some(liveness.snippet()),
            );
        }
    }
    Some(decl)
}

/// Checks one `app.<os>` block; returns whether it names a version source.
fn check_os_block(prefix: &str, name: &str, os: &str, node: &Node, cx: &mut Cx<'_>) -> bool {
    let where_ = format!("{prefix}: app.{os}");
    let Some(fields) = node.as_map() else {
        cx.fail(
            node.pos,
            Some(name),
            format!("{where_} must be an object"),
            Some(node.snippet()),
        );
        return false;
    };
    let get = |k: &str| fields.iter().find(|f| f.key == k).map(|f| &f.value);
    for f in fields {
        if !["presence", "location", "version", "liveness"].contains(&f.key.as_str()) {
            cx.fail(
                f.key_pos,
                Some(name),
                format!(
                    "{where_} has unknown key `{}`; allowed: presence, location, version, liveness",
                    f.key
                ),
                Some(f.key.clone()),
            );
        }
    }
    let presence = match get("presence").map(|n| (n, n.as_str())) {
        Some((_, Some(p @ ("executable" | "bundle")))) => Some(p),
        Some((n, _)) => {
            cx.fail(
                n.pos,
                Some(name),
                format!("{where_}.presence must be one of ('executable', 'bundle')"),
                Some(n.snippet()),
            );
            None
        }
        None => {
            cx.fail(
                node.pos,
                Some(name),
                format!("{where_}.presence is required ('executable' or 'bundle')"),
                None,
            );
            None
        }
    };
    if let Some(location) = get("location") {
        match &location.value {
            Value::Str(s) => check_location_path(&where_, name, os, s, location.pos, cx),
            Value::Seq(items) if !items.is_empty() => {
                for item in items {
                    match &item.value {
                        Value::Str(s) => check_location_path(&where_, name, os, s, item.pos, cx),
                        Value::Map(_) => check_location_kind(&where_, name, os, item, presence, cx),
                        _ => cx.fail(
                            item.pos,
                            Some(name),
                            format!("{where_}.location items must be paths or {{kind, …}} objects"),
                            Some(item.snippet()),
                        ),
                    }
                }
            }
            _ => cx.fail(
                location.pos,
                Some(name),
                format!("{where_}.location must be a path or a non-empty list of locations"),
                Some(location.snippet()),
            ),
        }
    }
    let mut versioned = false;
    if let Some(version) = get("version") {
        match version.get("kind").map(|k| (&k.value, k.value.as_str())) {
            _ if version.as_map().is_none() => cx.fail(version.pos, Some(name), format!("{where_}.version must be an object"), Some(version.snippet())),
            Some((_, Some("none"))) | None => {}
            Some((n, Some(kind @ ("pe_resource" | "uninstall_registry" | "plist")))) => {
                let os_ok = match kind {
                    "pe_resource" | "uninstall_registry" => os == "win32",
                    _ => os == "darwin",
                };
                if !os_ok {
                    cx.fail(n.pos, Some(name), format!("{where_}.version.kind `{kind}` is not available on {os}"), Some(kind.to_string()));
                }
                if kind == "uninstall_registry" && version.get("display_name_prefix").and_then(|e| e.value.as_str()).is_none() {
                    cx.fail(version.pos, Some(name), format!("{where_}.version kind uninstall_registry needs display_name_prefix"), None);
                }
                versioned = true;
            }
            Some((n, _)) => cx.fail(n.pos, Some(name), format!("{where_}.version.kind must be one of ('pe_resource', 'uninstall_registry', 'plist', 'none')"), Some(n.snippet())),
        }
    }
    if let Some(liveness) = get("liveness") {
        check_app_liveness(&where_, name, os, liveness, cx);
    }
    versioned
}

fn check_location_path(where_: &str, name: &str, os: &str, path: &str, pos: Pos, cx: &mut Cx<'_>) {
    let rooted = path.starts_with('/')
        || path.starts_with('~')
        || path.starts_with('$')
        || (path.starts_with('%') && path[1..].contains('%'))
        || (os == "win32" && WINDOWS_ABS.is_match(path));
    let bad_segment = path.split(['/', '\\']).any(|seg| seg == "..");
    if !rooted || bad_segment || path.contains("://") || path.contains("**") {
        cx.fail(
            pos,
            Some(name),
            format!("{where_}.location `{path}` must be absolute or start with ~, %VAR% or $VAR, without `..`, `**` or `://`"),
            Some(path.to_string()),
        );
    }
}

fn check_location_kind(
    where_: &str,
    name: &str,
    os: &str,
    node: &Node,
    presence: Option<&str>,
    cx: &mut Cx<'_>,
) {
    let kind = node.get("kind").and_then(|e| e.value.as_str());
    let (key, os_ok, yields) = match kind {
        Some("command") => ("name", true, "executable"),
        Some("uninstall_registry") => ("display_name_prefix", os == "win32", "executable"),
        Some("app_bundle") => ("name", os == "darwin", "bundle"),
        Some("flatpak") => ("app_id", os == "linux", "executable"),
        Some("snap") => ("name", os == "linux", "executable"),
        _ => {
            cx.fail(node.pos, Some(name), format!("{where_}.location kind must be one of ('command', 'uninstall_registry', 'app_bundle', 'flatpak', 'snap')"), kind.map(str::to_string));
            return;
        }
    };
    let kind = kind.unwrap_or_default();
    if !os_ok {
        cx.fail(
            node.pos,
            Some(name),
            format!("{where_}.location kind `{kind}` is not available on {os}"),
            Some(kind.to_string()),
        );
    }
    match node.get(key).and_then(|e| e.value.as_str()) {
        Some(v) if !v.is_empty() && !v.contains('/') && !v.contains('\\') => {}
        _ => cx.fail(
            node.pos,
            Some(name),
            format!("{where_}.location kind `{kind}` needs `{key}`: a bare name"),
            None,
        ),
    }
    if kind == "uninstall_registry" {
        match node.get("file").and_then(|e| e.value.as_str()) {
            Some(f) if !f.starts_with('/') && !f.split(['/', '\\']).any(|s| s == "..") && !WINDOWS_ABS.is_match(f) => {}
            _ => cx.fail(node.pos, Some(name), format!("{where_}.location kind uninstall_registry needs `file`: a relative path inside the install folder"), None),
        }
    }
    if presence.is_some_and(|p| p != yields) {
        cx.fail(
            node.pos,
            Some(name),
            format!(
                "{where_}.location kind `{kind}` finds an {yields}, but presence is `{}`",
                presence.unwrap_or_default()
            ),
            Some(kind.to_string()),
        );
    }
}

fn check_app_liveness(where_: &str, name: &str, os: &str, node: &Node, cx: &mut Cx<'_>) {
    let Some(_) = node.as_map() else {
        cx.fail(
            node.pos,
            Some(name),
            format!("{where_}.liveness must be an object"),
            Some(node.snippet()),
        );
        return;
    };
    match node.get("kind").and_then(|e| e.value.as_str()) {
        None | Some("none") => {}
        Some("server_json") => {
            match node.get("path").and_then(|e| e.value.as_str()) {
                Some(p) => {
                    check_location_path(&format!("{where_}.liveness"), name, os, p, node.pos, cx)
                }
                None => cx.fail(
                    node.pos,
                    Some(name),
                    format!("{where_}.liveness kind server_json needs `path`"),
                    None,
                ),
            }
            for key in ["pid_key", "url_key", "token_key"] {
                if let Some(e) = node.get(key)
                    && !e.value.as_str().is_some_and(|v| KEY_NAME.is_match(v))
                {
                    {
                        cx.fail(
                            e.value.pos,
                            Some(name),
                            format!("{where_}.liveness.{key} must match [A-Za-z0-9_.-]+"),
                            Some(e.value.snippet()),
                        );
                    }
                }
            }
            if let Some(e) = node.get("endpoint_path") {
                let ok = e
                    .value
                    .as_str()
                    .is_some_and(|v| ENDPOINT_PATH.is_match(v) && !v.split('/').any(|s| s == ".."));
                if !ok {
                    cx.fail(e.value.pos, Some(name), format!("{where_}.liveness.endpoint_path must be an absolute URL path without `..`"), Some(e.value.snippet()));
                }
            }
        }
        Some(other) => cx.fail(
            node.pos,
            Some(name),
            format!("{where_}.liveness.kind must be 'server_json' or 'none'"),
            Some(other.to_string()),
        ),
    }
}

#[allow(clippy::too_many_arguments)]
fn check_requires(
    prefix: &str,
    name: &str,
    node: &Node,
    has_app: bool,
    versioned_everywhere: bool,
    os_blocks: usize,
    unversioned: &[String],
    cx: &mut Cx<'_>,
) {
    let Some(fields) = node.as_map() else {
        cx.fail(
            node.pos,
            Some(name),
            format!("{prefix}: requires must be an object"),
            Some(node.snippet()),
        );
        return;
    };
    let unknown: Vec<&str> = fields
        .iter()
        .map(|f| f.key.as_str())
        .filter(|k| *k != "app" && *k != "min_version")
        .collect();
    if !unknown.is_empty() {
        cx.fail(
            node.pos,
            Some(name),
            format!(
                "{prefix}: requires has unknown keys [{}]; allowed: app, min_version",
                unknown.join(", ")
            ),
            Some(unknown.join(", ")),
        );
    }
    let app = match node.get("app") {
        None => false,
        Some(e) => match e.value.value {
            Value::Bool(b) => b,
            _ => {
                cx.fail(
                    e.value.pos,
                    Some(name),
                    format!("{prefix}: requires.app must be a boolean"),
                    Some(e.value.snippet()),
                );
                false
            }
        },
    };
    if app && !has_app {
        cx.fail(
            node.pos,
            Some(name),
            format!("{prefix}: requires.app is true but the declaration has no 'app' block"),
            None,
        );
    }
    if let Some(e) = node.get("min_version") {
        if !e.value.as_str().is_some_and(|v| DOTTED_NUMERIC.is_match(v)) {
            cx.fail(
                e.value.pos,
                Some(name),
                format!("{prefix}: requires.min_version must be a dotted numeric string"),
                Some(e.value.snippet()),
            );
        } else if !app {
            cx.fail(
                e.value.pos,
                Some(name),
                format!("{prefix}: requires.min_version needs requires.app: true"),
                None,
            );
        } else if has_app && !versioned_everywhere {
            // A Linux block may stay unversioned unless it is the only one.
            let blocking: Vec<&String> = unversioned
                .iter()
                .filter(|os| !(os.as_str() == "linux" && os_blocks > 1))
                .collect();
            if let Some(os) = blocking.first() {
                cx.fail(e.value.pos, Some(name), format!("{prefix}: requires.min_version needs a version source under app.{os} (kind is none)"), None);
            }
        }
    }
}
