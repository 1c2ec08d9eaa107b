//! Portable MCP servers: `mcp.json` (MAN-6).
//!
//! A file-level problem (unreadable, invalid JSON, wrong shape or schema) disables MCP for the
//! package only; skills still load (component `mcp`). A bad server entry is skipped on its own
//! (component `mcp:<name>`); its valid siblings still load. `sse` entries are deprecated:
//! logged and skipped, never an error.

use std::net::IpAddr;
use std::sync::LazyLock;

use regex::Regex;

use crate::diag::{CheckId, Diagnostic, Severity};
use crate::located::{Dialect, Entry as JsonEntry, Limits, Node, Pos, Value, json};
use crate::pkgfs::{Entry, MANIFEST_LIMIT, PackageRoot, ReadError, lexically_inside};

/// The only mcp.json schema id this build supports.
pub const MCP_SCHEMA_V1: &str = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json";

/// Providers limit tool names to this many characters; MCP tools are `mcp__<server>__<tool>`.
pub const TOOL_NAME_LIMIT: usize = 64;

const FILE: &str = "mcp.json";

static HEADER_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$").expect("valid regex"));
static PLACEHOLDER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\$\{([^}]*)\}").expect("valid regex"));
static SECRET_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(token|secret|password|passwd|api[_-]?key|private[_-]?key|credential)")
        .expect("valid regex")
});

/// How much a server is trusted (from the Hermes extension; `full` by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// Calls run without asking (the default).
    Full,
    /// Every call not marked `readOnlyHint: true` asks the user first, and is refused where
    /// nobody can answer.
    Untrusted,
}

impl Trust {
    /// The spelling used in plugin.json and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Trust::Full => "full",
            Trust::Untrusted => "untrusted",
        }
    }
}

/// How Hermes talks to a server.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A local process speaking MCP on stdin/stdout.
    Stdio {
        /// One executable token: a bare name (PATH lookup) or a `./` path inside the package.
        command: String,
        /// Arguments (`${PLUGIN_ROOT}`/`${PLUGIN_DATA}` expanded at start).
        args: Vec<String>,
        /// Extra environment (visible package data, not secrets).
        env: Vec<(String, String)>,
        /// Working directory (`./…`, `${PLUGIN_ROOT}…` or `${PLUGIN_DATA}…`; default the package root).
        cwd: Option<String>,
    },
    /// A remote server over Streamable HTTP.
    StreamableHttp {
        /// The endpoint.
        url: String,
        /// Headers sent with every request (never forwarded across origins on redirect).
        headers: Vec<(String, String)>,
    },
}

impl Transport {
    /// `stdio` or `streamable-http`.
    pub fn name(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::StreamableHttp { .. } => "streamable-http",
        }
    }
}

/// A server that would load.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServer {
    /// The server name, kept exactly as written.
    pub name: String,
    /// Where its entry starts in mcp.json.
    pub pos: Pos,
    /// How to reach it.
    pub transport: Transport,
    /// Trust level (set from the Hermes extension).
    pub trust: Trust,
}

/// What `mcp.json` yields.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct McpConfig {
    /// Whether the package has an `mcp.json` at all.
    pub present: bool,
    /// Whether the file itself was usable (false disables MCP for the package).
    pub usable: bool,
    /// Every server name written in the file, valid or not.
    pub written: Vec<String>,
    /// The servers that would load.
    pub servers: Vec<McpServer>,
}

/// Reads `mcp.json` of the package at `root`.
pub fn read(root: &PackageRoot, out: &mut Vec<Diagnostic>) -> McpConfig {
    let mut config = McpConfig::default();
    let file_error = |out: &mut Vec<Diagnostic>, pos: Pos, msg: String| {
        out.push(
            Diagnostic::error(
                CheckId::Mcp,
                FILE,
                pos,
                format!("{msg}; MCP is disabled for this package (skills still load)"),
            )
            .component("mcp"),
        );
    };
    let text = match root.read_text(FILE, MANIFEST_LIMIT) {
        Ok(t) => t,
        Err(ReadError::Missing) if !root.exists(FILE) => return config,
        Err(e) => {
            config.present = true;
            file_error(
                out,
                e.pos(),
                format!("mcp.json must be a regular in-root file; it {e}"),
            );
            return config;
        }
    };
    config.present = true;
    let parsed = match json::parse(&text, Limits::default()) {
        Ok(p) => p,
        Err(e) => {
            file_error(
                out,
                e.pos,
                format!("mcp.json is not valid JSON: {}", e.message),
            );
            return config;
        }
    };
    for note in &parsed.notes {
        out.push(
            Diagnostic::warning(CheckId::Mcp, FILE, note.pos, note.message.clone())
                .value(&note.value)
                .component("mcp"),
        );
    }
    let doc = parsed.root;
    let Some(entries) = doc.as_map() else {
        file_error(
            out,
            doc.pos,
            format!(
                "mcp.json must contain a JSON object, not {}",
                doc.type_name(Dialect::Json)
            ),
        );
        return config;
    };
    let extra: Vec<&JsonEntry> = entries
        .iter()
        .filter(|e| e.key != "$schema" && e.key != "mcpServers")
        .collect();
    let missing: Vec<&str> = ["$schema", "mcpServers"]
        .into_iter()
        .filter(|k| doc.get(k).is_none())
        .collect();
    if !extra.is_empty() || !missing.is_empty() {
        let mut parts = Vec::new();
        if !missing.is_empty() {
            parts.push(format!("missing {}", missing.join(", ")));
        }
        if !extra.is_empty() {
            parts.push(format!(
                "unexpected {}",
                extra
                    .iter()
                    .map(|e| e.key.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let pos = extra.first().map_or(doc.pos, |e| e.key_pos);
        file_error(
            out,
            pos,
            format!(
                "mcp.json has an invalid top-level shape ({}): it holds exactly $schema and mcpServers",
                parts.join("; ")
            ),
        );
        return config;
    }
    let schema = &doc.get("$schema").expect("checked above").value;
    if schema.as_str() != Some(MCP_SCHEMA_V1) {
        out.push(
            Diagnostic::error(CheckId::Mcp, FILE, schema.pos, "mcp.json declares an unsupported schema; MCP is disabled for this package (skills still load)")
                .value(schema.snippet())
                .hint(format!("Supported: {MCP_SCHEMA_V1}"))
                .component("mcp"),
        );
        return config;
    }
    let servers_node = &doc.get("mcpServers").expect("checked above").value;
    let Some(servers) = servers_node.as_map() else {
        file_error(
            out,
            servers_node.pos,
            format!(
                "mcpServers must be an object, not {}",
                servers_node.type_name(Dialect::Json)
            ),
        );
        return config;
    };
    config.usable = true;
    for entry in servers {
        config.written.push(entry.key.clone());
        if let Some(server) = read_server(root, entry, out) {
            config.servers.push(server);
        }
    }
    config
}

struct ServerCtx<'a> {
    name: &'a str,
    component: String,
    out: &'a mut Vec<Diagnostic>,
    ok: bool,
}

impl ServerCtx<'_> {
    fn reject(&mut self, pos: Pos, message: impl Into<String>) -> &mut Diagnostic {
        self.ok = false;
        self.push(
            Severity::Error,
            pos,
            format!("{}; server skipped", message.into()),
        )
    }

    fn push(
        &mut self,
        severity: Severity,
        pos: Pos,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        self.out.push(
            Diagnostic::new(
                CheckId::Mcp,
                severity,
                FILE,
                pos,
                format!("server `{}`: {}", self.name, message.into()),
            )
            .component(self.component.clone()),
        );
        self.out.last_mut().expect("just pushed")
    }
}

fn read_server(
    root: &PackageRoot,
    entry: &JsonEntry,
    out: &mut Vec<Diagnostic>,
) -> Option<McpServer> {
    use crate::diag::DiagnosticExt;
    let mut cx = ServerCtx {
        name: &entry.key,
        component: format!("mcp:{}", entry.key),
        out,
        ok: true,
    };
    let node = &entry.value;
    if entry.key.is_empty() {
        cx.reject(
            entry.key_pos,
            "invalid server entry: the server name is empty",
        );
        return None;
    }
    let Some(fields) = node.as_map() else {
        cx.reject(
            node.pos,
            format!(
                "invalid server entry: must be an object, not {}",
                node.type_name(Dialect::Json)
            ),
        )
        .with_value(node.snippet());
        return None;
    };
    let kind = match node.get("type").map(|e| &e.value) {
        Some(Node {
            value: Value::Str(t),
            ..
        }) => t.as_str(),
        Some(other) => {
            cx.reject(other.pos, "unknown MCP server type")
                .with_value(other.snippet())
                .with_hint("type is one of stdio, streamable-http (sse is deprecated).");
            return None;
        }
        None => {
            cx.reject(node.pos, "invalid server entry: `type` is missing")
                .with_hint("Add \"type\": \"stdio\" or \"streamable-http\".");
            return None;
        }
    };
    let transport = match kind {
        "stdio" => read_stdio(root, fields, node.pos, &mut cx),
        "streamable-http" => read_remote(fields, node.pos, &mut cx, "remote"),
        "sse" => {
            let shape_ok = read_remote(fields, node.pos, &mut cx, "sse").is_some() && cx.ok;
            // An sse entry is never an error for the package: whatever was reported above is
            // downgraded to a warning, and the entry is skipped.
            for d in cx
                .out
                .iter_mut()
                .filter(|d| d.component.as_deref() == Some(cx.component.as_str()))
            {
                d.severity = Severity::Warning;
            }
            let message = if shape_ok {
                "portable sse transport is not supported (deprecated); entry skipped"
            } else {
                "invalid sse entry; sse is not supported anyway (deprecated); entry skipped"
            };
            cx.push(Severity::Warning, node.pos, message)
                .with_hint("Serve the MCP endpoint over streamable-http instead.");
            return None;
        }
        other => {
            cx.reject(
                node.get("type").map_or(node.pos, |e| e.value.pos),
                format!("unknown MCP server type `{other}`"),
            )
            .with_value(other)
            .with_hint("type is one of stdio, streamable-http (sse is deprecated).");
            return None;
        }
    }?;
    if !cx.ok {
        return None;
    }
    let prefix_len = "mcp____".len() + entry.key.chars().count();
    if prefix_len + 8 > TOOL_NAME_LIMIT {
        let room = TOOL_NAME_LIMIT.saturating_sub(prefix_len);
        cx.push(
            Severity::Warning,
            entry.key_pos,
            format!("tool names are `mcp__{}__<tool>`, which leaves {room} character(s) for the tool name within the {TOOL_NAME_LIMIT}-character limit", entry.key),
        )
        .with_value(&entry.key)
        .with_hint("Use a shorter server name.");
    }
    if !entry
        .key
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        cx.push(
            Severity::Warning,
            entry.key_pos,
            "the server name has characters outside [A-Za-z0-9_-]; providers reject tool names `mcp__<server>__<tool>` containing them",
        )
        .with_value(&entry.key);
    }
    Some(McpServer {
        name: entry.key.clone(),
        pos: node.pos,
        transport,
        trust: Trust::Full,
    })
}

fn unknown_fields(fields: &[JsonEntry], allowed: &[&str], what: &str, cx: &mut ServerCtx<'_>) {
    use crate::diag::DiagnosticExt;
    for f in fields {
        if !allowed.contains(&f.key.as_str()) {
            cx.reject(f.key_pos, format!("unknown {what} field `{}`", f.key))
                .with_value(&f.key)
                .with_hint(format!("A {what} entry has only: {}.", allowed.join(", ")));
        }
    }
}

fn read_stdio(
    root: &PackageRoot,
    fields: &[JsonEntry],
    pos: Pos,
    cx: &mut ServerCtx<'_>,
) -> Option<Transport> {
    use crate::diag::DiagnosticExt;
    unknown_fields(
        fields,
        &["type", "command", "args", "env", "cwd"],
        "stdio",
        cx,
    );
    let get = |k: &str| fields.iter().find(|f| f.key == k).map(|f| &f.value);
    let command = match get("command") {
        Some(Node {
            value: Value::Str(c),
            pos: cpos,
            ..
        }) => {
            check_command(root, c, *cpos, cx);
            c.clone()
        }
        Some(other) => {
            cx.reject(other.pos, "command must be a non-empty executable token")
                .with_value(other.snippet());
            return None;
        }
        None => {
            cx.reject(pos, "command is missing").with_hint(
                "Add \"command\": the executable to start, e.g. \"node\" or \"./bin/server\".",
            );
            return None;
        }
    };
    let mut args = Vec::new();
    if let Some(node) = get("args") {
        match node.as_seq() {
            Some(items) if items.iter().all(|i| i.as_str().is_some()) => {
                for item in items {
                    let arg = item.as_str().unwrap_or_default();
                    note_unknown_placeholders(arg, item.pos, "args", cx);
                    args.push(arg.to_string());
                }
            }
            _ => {
                cx.reject(node.pos, "args must be an array of strings")
                    .with_value(node.snippet());
            }
        }
    }
    let mut env = Vec::new();
    if let Some(node) = get("env") {
        match node.as_map() {
            Some(pairs) if pairs.iter().all(|p| p.value.as_str().is_some()) => {
                for pair in pairs {
                    let value = pair.value.as_str().unwrap_or_default();
                    if pair.key == "PLUGIN_ROOT" || pair.key == "PLUGIN_DATA" {
                        cx.reject(pair.key_pos, "PLUGIN_ROOT and PLUGIN_DATA are reserved: Hermes sets them")
                            .with_value(&pair.key)
                            .with_hint("Remove it from env; use ${PLUGIN_ROOT} / ${PLUGIN_DATA} in args instead.");
                        continue;
                    }
                    if pair.key.eq_ignore_ascii_case("PLUGIN_ROOT")
                        || pair.key.eq_ignore_ascii_case("PLUGIN_DATA")
                    {
                        cx.push(Severity::Warning, pair.key_pos, format!("env `{}` differs from the reserved PLUGIN_ROOT/PLUGIN_DATA only in case; on Windows it would replace them", pair.key))
                            .with_value(&pair.key);
                    }
                    if SECRET_NAME.is_match(&pair.key)
                        && !value.is_empty()
                        && !PLACEHOLDER.is_match(value)
                    {
                        cx.push(Severity::Warning, pair.value.pos, format!("env `{}` looks like a credential; mcp.json env values are visible package data, not a secret store", pair.key))
                            .with_value(&pair.key)
                            .with_hint("Don't put credentials in mcp.json; have the server read them from the user's environment.");
                    }
                    note_unknown_placeholders(value, pair.value.pos, "env", cx);
                    env.push((pair.key.clone(), value.to_string()));
                }
            }
            _ => {
                cx.reject(node.pos, "env must map string keys to string values")
                    .with_value(node.snippet());
            }
        }
    }
    let cwd = match get("cwd") {
        None => None,
        Some(Node {
            value: Value::Str(c),
            pos: cpos,
            ..
        }) => {
            check_cwd(root, c, *cpos, cx);
            Some(c.clone())
        }
        Some(other) => {
            cx.reject(other.pos, "cwd must be a string")
                .with_value(other.snippet());
            None
        }
    };
    Some(Transport::Stdio {
        command,
        args,
        env,
        cwd,
    })
}

fn note_unknown_placeholders(text: &str, pos: Pos, field: &str, cx: &mut ServerCtx<'_>) {
    use crate::diag::DiagnosticExt;
    for cap in PLACEHOLDER.captures_iter(text) {
        let name = cap.get(1).map_or("", |m| m.as_str());
        if name != "PLUGIN_ROOT" && name != "PLUGIN_DATA" {
            cx.push(
                Severity::Info,
                pos,
                format!("`${{{name}}}` in {field} is not a placeholder Hermes expands; it is passed literally"),
            )
            .with_value(cap.get(0).map_or("", |m| m.as_str()))
            .with_hint("Only ${PLUGIN_ROOT} and ${PLUGIN_DATA} are expanded.");
        }
    }
}

fn check_command(root: &PackageRoot, command: &str, pos: Pos, cx: &mut ServerCtx<'_>) {
    use crate::diag::DiagnosticExt;
    if command.is_empty() || command.contains('\0') {
        cx.reject(pos, "command must be a non-empty executable token")
            .with_value(command);
        return;
    }
    if command.chars().any(char::is_whitespace) {
        cx.reject(
            pos,
            "command must contain one executable token, never a shell command line",
        )
        .with_value(command)
        .with_hint("Put the executable in command and each argument in args.");
        return;
    }
    if let Some(rest) = command.strip_prefix("./") {
        let Some(rel) = lexically_inside(rest).filter(|p| !p.as_os_str().is_empty()) else {
            cx.reject(pos, "command path escapes its resolved root")
                .with_value(command);
            return;
        };
        match root.resolve(&rel.to_string_lossy()) {
            Ok(Entry::File(path)) => {
                // Windows has no executable bit to check: a checkout there says nothing.
                let executable = cfg!(windows)
                    || std::fs::metadata(&path).is_ok_and(|m| crate::files::os::is_executable(&m));
                if !executable {
                    cx.push(
                        Severity::Warning,
                        pos,
                        format!("command {command} is not executable"),
                    )
                    .with_value(command)
                    .with_hint(format!("chmod +x {rest} (and commit the mode)."));
                }
            }
            Ok(_) => {
                cx.reject(pos, format!("command {command} is not a regular file"))
                    .with_value(command);
            }
            Err(ReadError::Missing) => {
                cx.push(Severity::Warning, pos, format!("command {command} does not exist in the package; the server will fail to start"))
                    .with_value(command);
            }
            Err(e) => {
                cx.reject(pos, format!("command path {e}"))
                    .with_value(command);
            }
        }
        return;
    }
    if command.contains('/') || command.contains('\\') || command == "." || command == ".." {
        cx.reject(pos, "command must be a bare executable or begin with ./")
            .with_value(command)
            .with_hint("Use a name looked up on PATH (e.g. \"node\") or a path inside the package starting with ./ (no placeholders in command).");
    }
}

fn check_cwd(root: &PackageRoot, cwd: &str, pos: Pos, cx: &mut ServerCtx<'_>) {
    use crate::diag::DiagnosticExt;
    let (rest, in_package) = if let Some(rest) = cwd.strip_prefix("./") {
        (rest, true)
    } else if let Some(rest) = strip_placeholder(cwd, "${PLUGIN_ROOT}") {
        (rest, true)
    } else if let Some(rest) = strip_placeholder(cwd, "${PLUGIN_DATA}") {
        (rest, false)
    } else {
        cx.reject(
            pos,
            "cwd path must start with ./, ${PLUGIN_ROOT}, or ${PLUGIN_DATA}",
        )
        .with_value(cwd);
        return;
    };
    let Some(rel) = lexically_inside(rest) else {
        cx.reject(pos, "cwd path escapes its resolved root")
            .with_value(cwd);
        return;
    };
    if !in_package || rel.as_os_str().is_empty() {
        return;
    }
    match root.resolve(&rel.to_string_lossy()) {
        Ok(Entry::Dir(_)) => {}
        Ok(_) => {
            cx.reject(pos, "cwd is not a directory").with_value(cwd);
        }
        Err(ReadError::Missing) => {
            cx.push(
                Severity::Warning,
                pos,
                format!("cwd {cwd} does not exist in the package; the server will fail to start"),
            )
            .with_value(cwd);
        }
        Err(e) => {
            cx.reject(pos, format!("cwd path {e}")).with_value(cwd);
        }
    }
}

/// `rest` after a leading placeholder that is the whole path or followed by `/`.
fn strip_placeholder<'a>(path: &'a str, placeholder: &str) -> Option<&'a str> {
    let rest = path.strip_prefix(placeholder)?;
    if rest.is_empty() {
        Some("")
    } else {
        rest.strip_prefix('/')
    }
}

fn read_remote(
    fields: &[JsonEntry],
    pos: Pos,
    cx: &mut ServerCtx<'_>,
    what: &str,
) -> Option<Transport> {
    use crate::diag::DiagnosticExt;
    unknown_fields(fields, &["type", "url", "headers"], what, cx);
    let get = |k: &str| fields.iter().find(|f| f.key == k).map(|f| &f.value);
    let url = match get("url") {
        Some(Node {
            value: Value::Str(u),
            pos: upos,
            ..
        }) if !u.is_empty() => {
            if let Err(reason) = check_url(u) {
                cx.reject(*upos, reason).with_value(redact_userinfo(u));
            }
            u.clone()
        }
        Some(other) => {
            cx.reject(other.pos, "url must be a non-empty string")
                .with_value(other.snippet());
            return None;
        }
        None => {
            cx.reject(pos, "url is missing");
            return None;
        }
    };
    let mut headers = Vec::new();
    match get("headers") {
        None
        | Some(Node {
            value: Value::Null, ..
        }) => {}
        Some(node) => {
            match node.as_map() {
                None => {
                    cx.reject(
                        node.pos,
                        "invalid headers: must be an object of header names to string values",
                    )
                    .with_value(node.snippet());
                }
                Some(pairs) => {
                    let mut seen: Vec<String> = Vec::new();
                    for pair in pairs {
                        if !HEADER_NAME.is_match(&pair.key) {
                            cx.reject(pair.key_pos, format!("invalid headers: `{}` is not a valid header name (RFC 7230 token)", pair.key)).with_value(&pair.key);
                            continue;
                        }
                        let lower = pair.key.to_ascii_lowercase();
                        if seen.contains(&lower) {
                            cx.reject(pair.key_pos, format!("invalid headers: `{}` is repeated (header names are case-insensitive)", pair.key)).with_value(&pair.key);
                            continue;
                        }
                        seen.push(lower);
                        match pair.value.as_str() {
                            Some(v) if !v.contains('\r') && !v.contains('\n') => {
                                headers.push((pair.key.clone(), v.to_string()))
                            }
                            Some(v) => {
                                cx.reject(
                                    pair.value.pos,
                                    format!(
                                        "invalid headers: the value of `{}` contains CR or LF",
                                        pair.key
                                    ),
                                )
                                .with_value(v);
                            }
                            None => {
                                cx.reject(
                                    pair.value.pos,
                                    format!(
                                        "invalid headers: the value of `{}` must be a string",
                                        pair.key
                                    ),
                                )
                                .with_value(pair.value.snippet());
                            }
                        }
                    }
                }
            }
        }
    }
    Some(Transport::StreamableHttp { url, headers })
}

/// The URL with any password replaced by `***`, so reports never echo credentials.
pub fn redact_userinfo(text: &str) -> String {
    match url::Url::parse(text) {
        Ok(mut url) if url.password().is_some() => {
            let _ = url.set_password(Some("***"));
            url.to_string()
        }
        _ => text.to_string(),
    }
}

/// Checks a Streamable HTTP endpoint URL: absolute http(s), a host, no userinfo, no
/// fragment, and plain http only for `localhost` or a loopback IP.
pub fn check_url(text: &str) -> Result<(), String> {
    let url = url::Url::parse(text).map_err(|e| format!("url is not parseable: {e}"))?;
    let scheme = url.scheme();
    if scheme != "http" && scheme != "https" {
        return Err(format!("url scheme must be http or https, not `{scheme}`"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("url must not contain user information (user:password@)".into());
    }
    if url.fragment().is_some() {
        return Err("url must not contain a fragment (#…)".into());
    }
    let host = match url.host() {
        Some(h) => h,
        None => return Err("url must have a host".into()),
    };
    if scheme == "http" {
        let loopback = match host {
            url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost"),
            url::Host::Ipv4(ip) => IpAddr::V4(ip).is_loopback(),
            url::Host::Ipv6(ip) => IpAddr::V6(ip).is_loopback(),
        };
        if !loopback {
            return Err("non-loopback url must use https (plain http is allowed only for localhost and loopback addresses)".into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        for good in [
            "https://example.com/mcp",
            "http://localhost:3000/mcp",
            "http://127.0.0.5/x",
            "http://[::1]:9000/mcp",
        ] {
            assert!(check_url(good).is_ok(), "{good}");
        }
        for bad in [
            "http://example.com/mcp",
            "https://u:p@example.com/",
            "https://example.com/#x",
            "ftp://example.com",
            "example.com/mcp",
            "https://u@example.com",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }
}
