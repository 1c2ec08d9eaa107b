//! The catalog entry (CAT-1): one YAML file per plugin, pinning a repository at a commit,
//! with the metadata the catalog shows. [`load`] reads one file, checks every field and
//! returns the entry (when its identity is usable) with located findings.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use super::fields::{self, Sink, UrlKind};
use super::finding::{self, CatalogFinding};
use crate::diag::did_you_mean;
use crate::located::{Node, Pos};
use crate::package::Spanned;

/// Every key an entry may have.
pub const KNOWN_KEYS: &[&str] = &[
    "name",
    "repo",
    "sha",
    "subdir",
    "tier",
    "description",
    "maintainer",
    "category",
    "requires_hermes",
    "version",
    "platforms",
    "docs_url",
    "title",
    "image",
    "screenshots",
    "readme",
    "known_issues",
    "tags",
    "requires_plugins",
    "capabilities",
    "components",
    "desktop_id",
    "onboarding",
    "accepted_findings",
];

/// The components an entry may name (upstream's validator).
pub const COMPONENTS: &[&str] = &["agent", "desktop-ui"];

/// The categories the docs site knows (`website/scripts/extract-plugins.py`; upstream's
/// validator since the site's rules). Another one is a warning: the site files it under
/// `general`.
pub const CATEGORIES: &[&str] = &[
    "desktop",
    "memory",
    "platform",
    "web",
    "tools",
    "voice",
    "automation",
    "models",
    "general",
];

/// The hosts images and screenshots may be served from (the docs site drops the others).
const IMAGE_HOSTS: &[&str] = &["raw.githubusercontent.com", "github.com"];

/// The hosts the docs site renders a README from.
const README_HOSTS: &[&str] = &["github.com", "gitlab.com"];

/// The keys of an entry's `capabilities` mapping.
pub const CAPABILITY_KEYS: &[&str] = &[
    "provides_tools",
    "provides_hooks",
    "provides_middleware",
    "requires_env",
];

/// The catalog tiers.
pub const TIERS: &[&str] = &["official", "community"];

/// The platforms an entry may list.
pub const PLATFORMS: &[&str] = &["linux", "macos", "windows"];

/// The most screenshots an entry may list.
pub const MAX_SCREENSHOTS: usize = 6;

static SHA_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[0-9a-f]{40}$").expect("valid regex"));
static SUBDIR_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z0-9._/-]+$").expect("valid regex"));
/// One `requires_hermes` clause as upstream's validator reads it: an operator and a version.
static CLAUSE_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(>=|<=|==|!=|>|<)\s*\d+(\.\d+)*$").expect("valid regex"));
/// The docs site's `version` label pattern.
static VERSION_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,31}$").expect("valid regex"));

/// One catalog entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    /// The file it was read from.
    pub file: PathBuf,
    /// Entry (and plugin) name, `[a-z0-9_-]{1,64}` when valid.
    pub name: String,
    /// Repository URL (https).
    pub repo: String,
    /// Pinned commit, 40 lowercase hex when valid.
    pub sha: String,
    /// Directory of the plugin inside the repository.
    pub subdir: Option<String>,
    /// `official` or `community`.
    pub tier: Option<String>,
    /// One sentence on what the plugin does.
    pub description: Option<String>,
    /// Who maintains the entry.
    pub maintainer: Option<String>,
    /// Catalog category.
    pub category: Option<String>,
    /// Hermes version constraint (`>=0.19, <1.0`).
    pub requires_hermes: Option<String>,
    /// Cosmetic version label.
    pub version: Option<String>,
    /// Supported platforms (`linux`, `macos`, `windows`); empty means unrestricted.
    pub platforms: Vec<String>,
    /// Documentation page (https).
    pub docs_url: Option<String>,
    /// Display title.
    pub title: Option<String>,
    /// Icon or banner image (https).
    pub image: Option<String>,
    /// Screenshot URLs (https, at most [`MAX_SCREENSHOTS`]).
    pub screenshots: Vec<String>,
    /// Whether the catalog shows the repository's README (`readme: false` opts out; absent
    /// means shown, as upstream reads it).
    pub readme: Option<bool>,
    /// The components the plugin has (`agent`, `desktop-ui`).
    pub components: Vec<String>,
    /// The Desktop plugin id.
    pub desktop_id: Option<String>,
    /// Security findings the catalog's reviewers accepted for this pin (`id`, `reason`):
    /// `install` from this catalog takes them as `--accept-finding`, `catalog review` shows
    /// them (a hermes-plugins key; upstream's validator warns on it and ignores it).
    pub accepted_findings: Vec<(String, String)>,
    /// Known issues, one per item.
    pub known_issues: Vec<String>,
    /// Search tags.
    pub tags: Vec<String>,
    /// Names of other entries of the same catalog this plugin needs.
    pub requires_plugins: Vec<String>,
    /// What the plugin declares it provides and needs (checked against the package by review).
    pub capabilities: Option<EntryCapabilities>,
    /// Where the identity fields were written, for cross-entry findings.
    pub positions: EntryPositions,
}

/// The `capabilities` of an entry: the plugin's declared surface.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntryCapabilities {
    /// Tools the plugin registers.
    pub provides_tools: Vec<String>,
    /// Hooks the plugin registers.
    pub provides_hooks: Vec<String>,
    /// Middleware the plugin registers.
    pub provides_middleware: Vec<String>,
    /// Environment variables the plugin needs (UPPER_SNAKE_CASE).
    pub requires_env: Vec<String>,
}

/// Positions of the fields that cross-entry rules point at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntryPositions {
    /// The `name` value.
    pub name: Pos,
    /// The `repo` value.
    pub repo: Pos,
    /// The `subdir` value, when written.
    pub subdir: Option<Pos>,
    /// Each item of `requires_plugins`, parallel to [`Entry::requires_plugins`].
    pub requires_plugins: Vec<Pos>,
}

impl Entry {
    /// The file stem (`web-search` for `catalog/web-search.yaml`).
    pub fn file_stem(&self) -> String {
        file_stem(&self.file)
    }
}

/// The file stem of a path, lossily decoded.
pub(crate) fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Reads one entry file and checks every field.
///
/// The entry is `Some` when `name`, `repo` and `sha` are present as strings (even if a
/// pattern rule rejects them), so cross-entry rules can still run; `None` when the file is
/// unreadable, not YAML, not a mapping, or lacks one of them.
pub fn load(path: &Path) -> (Option<Entry>, Vec<CatalogFinding>) {
    let mut sink = Sink::new(path);
    let entry = fields::read_mapping(&mut sink, "A catalog entry")
        .and_then(|root| from_node(&root, &mut sink));
    (entry, sink.out)
}

/// `tier`: `official` or `community` (anything else reported, with a suggestion).
fn tier(sink: &mut Sink<'_>, key: &str, node: &Node) -> Option<String> {
    let s = sink.string(finding::ENTRY_FIELD, key, node)?;
    if TIERS.contains(&s) {
        return Some(s.to_string());
    }
    let hint = match did_you_mean(s, TIERS.iter().copied()) {
        Some(t) => format!("Did you mean `{t}`? The tiers are `official` and `community`."),
        None => "The tiers are `official` and `community`.".to_string(),
    };
    sink.error(
        finding::ENTRY_FIELD,
        node.pos,
        format!("`tier` must be `official` or `community`, found `{s}`"),
    )
    .hint(hint)
    .value(s);
    None
}

/// CAT-1's required fields, each reported when missing (`maintainer` counts when it was
/// written at all: its own errors are reported where it is read).
fn required_fields(sink: &mut Sink<'_>, root: &Node, maintainer_seen: bool) {
    let mut missing = |field: &str, example: &str| {
        sink.error(
            finding::ENTRY_FIELD,
            Pos::START,
            format!("`{field}` is missing"),
        )
        .hint(format!("Add `{field}: {example}`; CAT-1 requires it."));
    };
    for (field, example) in [
        ("name", "<the file name without .yaml>"),
        ("repo", "https://github.com/owner/repo"),
        ("sha", "<the 40-character commit id (git rev-parse HEAD)>"),
        ("description", "<one sentence on what the plugin does>"),
    ] {
        if root.get(field).is_none() {
            missing(field, example);
        }
    }
    if !maintainer_seen {
        missing("maintainer", "<your GitHub handle>");
    }
}

/// Checks the fields of a parsed entry mapping.
fn from_node(root: &Node, sink: &mut Sink<'_>) -> Option<Entry> {
    let f = finding::ENTRY_FIELD;
    let mut name: Option<(String, Pos)> = None;
    let mut repo: Option<(String, Pos)> = None;
    let mut sha: Option<String> = None;
    let mut maintainer_seen = false;
    let mut e = Entry {
        file: sink.file.to_path_buf(),
        ..Entry::default()
    };
    for item in root.as_map().unwrap_or_default() {
        let key = item.key.as_str();
        let node = &item.value;
        match key {
            "name" => {
                if let Some(s) = sink.string(f, key, node) {
                    if let Err((message, hint)) = fields::check_name(s) {
                        sink.error(f, node.pos, message).hint(hint).value(s);
                    }
                    name = Some((s.to_string(), node.pos));
                }
            }
            "repo" => {
                if let Some(s) = sink.string(f, key, node) {
                    if let Err((message, hint)) = fields::check_https_url(key, s, UrlKind::Repo) {
                        sink.error(f, node.pos, message).hint(hint).value(s);
                    }
                    repo = Some((s.to_string(), node.pos));
                }
            }
            "sha" => {
                if let Some(s) = sink.string(f, key, node) {
                    check_sha(sink, s, node.pos);
                    sha = Some(s.to_string());
                }
            }
            "maintainer" => {
                maintainer_seen = true;
                if let Some(s) = sink.string(f, key, node) {
                    if s.trim().is_empty() {
                        sink.error(f, node.pos, "`maintainer` is empty")
                            .hint("Name who maintains the entry: a GitHub handle or a name with an email address.")
                            .value(s);
                    } else {
                        e.maintainer = Some(s.to_string());
                    }
                }
            }
            "subdir" => {
                if let Some(s) = sink.string(f, key, node) {
                    // `subdir: ""` (the README's documented default) is the repository root.
                    if s.is_empty() {
                        continue;
                    }
                    if let Err((message, hint)) = check_subdir(s) {
                        sink.error(f, node.pos, message).hint(hint).value(s);
                    }
                    e.subdir = Some(s.to_string());
                    e.positions.subdir = Some(node.pos);
                }
            }
            "tier" => e.tier = tier(sink, key, node),
            "requires_hermes" => {
                // Empty: no constraint (upstream).
                if let Some(s) = sink.string(f, key, node)
                    && !s.trim().is_empty()
                {
                    requires_hermes(sink, s, node.pos);
                    e.requires_hermes = Some(s.to_string());
                }
            }
            "readme" => match node.value {
                crate::located::Value::Bool(b) => e.readme = Some(b),
                _ => {
                    sink.error(f, node.pos, "`readme` must be true or false")
                        .hint("`readme: false` hides the repository's README in the catalog; leave it out (or `true`) to show it. A string is not read as a boolean.")
                        .value(node.snippet());
                }
            },
            "components" => e.components = components(sink, node),
            "accepted_findings" => e.accepted_findings = accepted_findings(sink, node),
            "desktop_id" => {
                if let Some(s) = sink.string(f, key, node) {
                    if fields::NAME_RE.is_match(s) {
                        e.desktop_id = Some(s.to_string());
                    } else {
                        sink.error(
                            f,
                            node.pos,
                            format!("`desktop_id` must match [a-z0-9_-]{{1,64}}, found `{s}`"),
                        )
                        .hint("Use the Desktop plugin's id: lowercase letters, digits, `_` and `-`; leave the key out when there is none.")
                        .value(s);
                    }
                }
            }
            // Upstream's loader reads it as `is True`; nothing to check.
            "onboarding" => {}
            "description" | "category" | "version" | "title" => {
                if let Some(s) = sink.string(f, key, node) {
                    match key {
                        "description" if s.trim().is_empty() => {
                            sink.error(f, node.pos, "`description` is empty")
                                .hint("Say in one sentence what the plugin does.")
                                .value(s);
                        }
                        "category" if !CATEGORIES.contains(&s) => {
                            sink.warning(
                                f,
                                node.pos,
                                format!("`category` `{s}` is not one the docs site knows; it files the entry under `general`"),
                            )
                            .hint(format!("Use one of: {}.", CATEGORIES.join(", ")))
                            .value(s);
                        }
                        "version" if !VERSION_RE.is_match(s) => {
                            sink.warning(
                                f,
                                node.pos,
                                format!("`version` `{s}` does not match the docs site's label pattern; the site drops it"),
                            )
                            .hint("Up to 32 characters: a letter or digit, then letters, digits, `.`, `_`, `+`, `-` (quote it in YAML).")
                            .value(s);
                        }
                        _ => {}
                    }
                    let slot = match key {
                        "description" => &mut e.description,
                        "category" => &mut e.category,
                        "version" => &mut e.version,
                        _ => &mut e.title,
                    };
                    *slot = Some(s.to_string());
                }
            }
            "docs_url" | "image" => {
                if let Some(s) = sink.string(f, key, node) {
                    match fields::check_https_url(key, s, UrlKind::Page) {
                        Err((message, hint)) => {
                            sink.error(f, node.pos, message).hint(hint).value(s);
                        }
                        Ok(()) => {
                            if key == "image" {
                                image_host(sink, key, s, node.pos);
                            }
                            let slot = if key == "docs_url" {
                                &mut e.docs_url
                            } else {
                                &mut e.image
                            };
                            *slot = Some(s.to_string());
                        }
                    }
                }
            }
            "platforms" => e.platforms = platforms(sink, node),
            "screenshots" => e.screenshots = screenshots(sink, node),
            "known_issues" | "tags" => {
                let list = sink
                    .string_list(f, key, node)
                    .into_iter()
                    .map(|(s, _)| s)
                    .collect();
                if key == "tags" {
                    e.tags = list;
                } else {
                    e.known_issues = list;
                }
            }
            "requires_plugins" => {
                for (s, pos) in requires_plugins(sink, node) {
                    e.requires_plugins.push(s);
                    e.positions.requires_plugins.push(pos);
                }
            }
            "capabilities" => e.capabilities = capabilities(sink, node),
            _ => sink.unknown_key(item, KNOWN_KEYS, "a catalog entry"),
        }
    }
    required_fields(sink, root, maintainer_seen);
    if e.readme == Some(true)
        && let Some((r, _)) = &repo
    {
        let host = crate::repo_url::host(r);
        if !README_HOSTS.contains(&host.as_str()) {
            let pos = root.get("readme").map_or(Pos::START, |i| i.value.pos);
            sink.error(
                f,
                pos,
                format!(
                    "`readme: true` needs a repository on github.com or gitlab.com, not `{host}`"
                ),
            )
            .hint(
                "The docs site renders READMEs from GitHub and GitLab only: write `readme: false`.",
            )
            .value("true");
        }
    }
    if let Some((n, pos)) = &name
        && fields::NAME_RE.is_match(n)
    {
        let stem = file_stem(sink.file);
        if stem != *n {
            sink.warning(
                finding::ENTRY_FILENAME,
                *pos,
                format!("entry `{n}` is in `{}`, not `{n}.yaml`", sink.file.file_name().map(|s| s.to_string_lossy()).unwrap_or_default()),
            )
            .hint(format!("Rename the file to `{n}.yaml` (one file per entry, named after it), or fix the name."))
            .value(n);
        }
    }
    let ((name, name_pos), (repo, repo_pos), sha) = (name?, repo?, sha?);
    e.name = name;
    e.repo = repo;
    e.sha = sha;
    e.positions.name = name_pos;
    e.positions.repo = repo_pos;
    Some(e)
}

fn check_sha(sink: &mut Sink<'_>, sha: &str, pos: Pos) {
    if SHA_RE.is_match(sha) {
        return;
    }
    let f = finding::ENTRY_FIELD;
    let hex = sha.chars().all(|c| c.is_ascii_hexdigit());
    let (message, hint) = if hex && sha.len() == 40 {
        (
            "`sha` must be lowercase hex".to_string(),
            format!("Write it in lowercase: `{}`.", sha.to_ascii_lowercase()),
        )
    } else if hex {
        (
            format!(
                "`sha` must be the full 40-character commit id, found {} characters",
                sha.chars().count()
            ),
            "Pin the full commit id (`git rev-parse HEAD`), not an abbreviation, a tag or a branch.".to_string(),
        )
    } else {
        (
            "`sha` must be exactly 40 lowercase hex characters (a commit id)".to_string(),
            "Pin the full commit id (`git rev-parse HEAD`); branch and tag names are not allowed."
                .to_string(),
        )
    };
    sink.error(f, pos, message).hint(hint).value(sha);
}

/// Checks a repository subdirectory: `Err((message, hint))` if invalid.
pub(crate) fn check_subdir(subdir: &str) -> Result<(), (String, String)> {
    let hint = "Write a relative path inside the repository such as `plugins/web-search`: letters, digits, `.`, `_`, `-` and `/` only, no empty, `.` or `..` segments.";
    if subdir.starts_with('/') {
        return Err((
            "`subdir` must be relative, not absolute".into(),
            hint.into(),
        ));
    }
    if !SUBDIR_RE.is_match(subdir) {
        return Err((
            "`subdir` may only contain letters, digits, `.`, `_`, `-` and `/`".into(),
            hint.into(),
        ));
    }
    if let Some(seg) = subdir
        .split('/')
        .find(|s| s.is_empty() || *s == "." || *s == "..")
    {
        let what = if seg.is_empty() {
            "an empty segment (`//` or a leading or trailing `/`)".to_string()
        } else {
            format!("a `{seg}` segment")
        };
        return Err((format!("`subdir` contains {what}"), hint.into()));
    }
    Ok(())
}

fn requires_hermes(sink: &mut Sink<'_>, spec: &str, pos: Pos) {
    // Upstream's rule: every comma-separated clause is an operator and a version.
    if let Some(clause) = spec
        .split(',')
        .map(str::trim)
        .find(|c| !CLAUSE_RE.is_match(c))
    {
        sink.error(
            finding::REQUIRES_HERMES,
            pos,
            format!("`requires_hermes` clause `{clause}` needs an operator and a version"),
        )
        .hint("Write clauses such as `>=0.19`, `<1.0`, separated by commas (>=, <=, ==, !=, >, <).")
        .value(spec);
        return;
    }
    // Ours, deliberately stricter than upstream: warnings (`--strict` fails on them).
    let mut diags = Vec::new();
    crate::check::manifest_rules::check_requires_hermes(
        &Spanned::new(spec.to_string(), pos),
        "",
        &mut diags,
    );
    for d in diags {
        let mut b = sink.warning(finding::REQUIRES_HERMES, d.pos, d.message);
        if let Some(h) = d.hint {
            b = b.hint(h);
        }
        b.value(d.value.unwrap_or_else(|| spec.to_string()));
    }
}

/// `accepted_findings: [{id: <rule>@<file>:<line>, reason: …}]`: each with the finding's id
/// and why the reviewers accepted it.
fn accepted_findings(sink: &mut Sink<'_>, node: &Node) -> Vec<(String, String)> {
    let f = finding::ENTRY_FIELD;
    let Some(items) = node.as_seq() else {
        sink.wrong_type(
            f,
            "accepted_findings",
            node,
            "a list of {id, reason} mappings",
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let label = format!("accepted_findings[{i}]");
        let (Some(id), Some(reason)) = (
            item.get("id").and_then(|e| e.value.as_str()),
            item.get("reason").and_then(|e| e.value.as_str()),
        ) else {
            sink.error(f, item.pos, format!("`{label}` needs `id` and `reason` strings"))
                .hint("Write `- {id: pipe-to-shell@scripts/setup.sh:12, reason: \"an installer the user runs by hand\"}` (the id as `install` names it).")
                .value(item.snippet());
            continue;
        };
        let well_formed = id
            .split_once('@')
            .and_then(|(rule, place)| Some((rule, place.rsplit_once(':')?)))
            .is_some_and(|(rule, (file, line))| {
                !rule.is_empty() && !file.is_empty() && line.parse::<u32>().is_ok()
            });
        if !well_formed || reason.trim().is_empty() {
            sink.error(
                f,
                item.pos,
                format!("`{label}` must be an id `<rule>@<file>:<line>` with a reason, found `{id}`"),
            )
            .hint("Copy the id from the refusal of `hermes-plugins install` or from `catalog review`, and say why it is accepted.")
            .value(id);
            continue;
        }
        out.push((id.to_string(), reason.to_string()));
    }
    out
}

fn components(sink: &mut Sink<'_>, node: &Node) -> Vec<String> {
    let f = finding::ENTRY_FIELD;
    if matches!(node.value, crate::located::Value::Null) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (c, pos) in sink.string_list(f, "components", node) {
        if COMPONENTS.contains(&c.as_str()) {
            out.push(c);
        } else {
            sink.error(
                f,
                pos,
                format!("`components` holds `agent` and `desktop-ui` only, found `{c}`"),
            )
            .hint("List `agent` (a Hermes plugin) and/or `desktop-ui` (a Desktop plugin).")
            .value(&c);
        }
    }
    out
}

/// The docs site shows images only from GitHub hosts: another host is a warning.
fn image_host(sink: &mut Sink<'_>, field: &str, url: &str, pos: Pos) {
    let host = crate::repo_url::host(url);
    if !(IMAGE_HOSTS.contains(&host.as_str()) || host.ends_with(".githubusercontent.com")) {
        sink.warning(
            finding::ENTRY_FIELD,
            pos,
            format!("`{field}` is served from `{host}`; the docs site shows images from GitHub hosts only"),
        )
        .hint("Host it in the repository and link raw.githubusercontent.com at the pinned sha.")
        .value(url);
    }
}

fn platforms(sink: &mut Sink<'_>, node: &Node) -> Vec<String> {
    let f = finding::ENTRY_FIELD;
    let mut out = Vec::new();
    for (p, pos) in sink.string_list(f, "platforms", node) {
        if PLATFORMS.contains(&p.as_str()) {
            out.push(p);
            continue;
        }
        let alias = match p.to_ascii_lowercase().as_str() {
            "darwin" | "osx" | "mac" | "macosx" => Some("macos"),
            "win" | "win32" | "win64" => Some("windows"),
            "gnu/linux" | "ubuntu" | "debian" => Some("linux"),
            _ => None,
        };
        let hint = match alias.or_else(|| did_you_mean(&p, PLATFORMS.iter().copied())) {
            Some(s) => format!("Did you mean `{s}`? The platforms are linux, macos and windows."),
            None => "The platforms are linux, macos and windows.".to_string(),
        };
        sink.error(f, pos, format!("unknown platform `{p}`"))
            .hint(hint)
            .value(&p);
    }
    out
}

fn screenshots(sink: &mut Sink<'_>, node: &Node) -> Vec<String> {
    let f = finding::ENTRY_FIELD;
    let items = sink.string_list(f, "screenshots", node);
    if let Some((url, pos)) = items.get(MAX_SCREENSHOTS) {
        sink.error(
            f,
            *pos,
            format!(
                "`screenshots` lists {} images; at most {MAX_SCREENSHOTS} are allowed",
                node.as_seq().map_or(items.len(), <[Node]>::len)
            ),
        )
        .hint(format!(
            "Keep the {MAX_SCREENSHOTS} most telling screenshots."
        ))
        .value(url);
    }
    let mut out = Vec::new();
    for (i, (url, pos)) in items.into_iter().enumerate() {
        match fields::check_https_url(&format!("screenshots[{i}]"), &url, UrlKind::Page) {
            Ok(()) => {
                image_host(sink, &format!("screenshots[{i}]"), &url, pos);
                out.push(url);
            }
            Err((message, hint)) => {
                sink.error(f, pos, message).hint(hint).value(&url);
            }
        }
    }
    out
}

fn requires_plugins(sink: &mut Sink<'_>, node: &Node) -> Vec<(String, Pos)> {
    let f = finding::ENTRY_FIELD;
    let Some(items) = node.as_seq() else {
        sink.wrong_type(f, "requires_plugins", node, "a list of entry names");
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let label = format!("requires_plugins[{i}]");
        let Some(s) = item.as_str() else {
            let b = sink.error(
                f,
                item.pos,
                format!(
                    "`{label}` must be an entry name (a string), found {}",
                    item.type_name(crate::located::Dialect::Yaml)
                ),
            );
            let hint = match item.get("id").and_then(|e| e.value.as_str()) {
                Some(id) => format!(
                    "Write the name alone: `- {id}`; version ranges belong in the plugin's own plugin.yaml."
                ),
                None => "Write the name of another catalog entry.".to_string(),
            };
            b.hint(hint).value(item.snippet());
            continue;
        };
        if let Err((message, hint)) = fields::check_name(s) {
            sink.error(
                f,
                item.pos,
                message.replacen("`name`", &format!("`{label}`"), 1),
            )
            .hint(hint)
            .value(s);
            continue;
        }
        out.push((s.to_string(), item.pos));
    }
    out
}

fn capabilities(sink: &mut Sink<'_>, node: &Node) -> Option<EntryCapabilities> {
    let f = finding::ENTRY_FIELD;
    let Some(map) = node.as_map() else {
        sink.wrong_type(
            f,
            "capabilities",
            node,
            "a mapping of provides_tools, provides_hooks, provides_middleware and requires_env",
        );
        return None;
    };
    let mut caps = EntryCapabilities::default();
    for item in map {
        let key = item.key.as_str();
        let label = format!("capabilities.{key}");
        if !CAPABILITY_KEYS.contains(&key) {
            let hint = match did_you_mean(key, CAPABILITY_KEYS.iter().copied()) {
                Some(s) => format!("Did you mean `{s}`?"),
                None => format!("capabilities holds only {}.", CAPABILITY_KEYS.join(", ")),
            };
            // Upstream warns and ignores it (forward compatibility).
            sink.warning(f, item.key_pos, format!("unknown key `{label}`"))
                .hint(format!("{hint} Unknown keys are ignored."))
                .value(key);
            continue;
        }
        let list = sink.string_list(f, &label, &item.value);
        let list: Vec<String> = if key == "requires_env" {
            // Upstream accepts any string; a name the environment cannot carry is a warning.
            list.into_iter()
                .inspect(|(name, pos)| {
                    if !crate::package::fields::is_env_name(name) {
                        let upper: String = name
                            .chars()
                            .map(|c| {
                                if c.is_ascii_alphanumeric() {
                                    c.to_ascii_uppercase()
                                } else {
                                    '_'
                                }
                            })
                            .collect();
                        sink.warning(
                            f,
                            *pos,
                            format!("`{label}` names should be UPPER_SNAKE_CASE environment variables, found `{name}`"),
                        )
                        .hint(format!("Use `{upper}` (^[A-Z][A-Z0-9_]*$)."))
                        .value(name);
                    }
                })
                .map(|(s, _)| s)
                .collect()
        } else {
            list.into_iter().map(|(s, _)| s).collect()
        };
        match key {
            "provides_tools" => caps.provides_tools = list,
            "provides_hooks" => caps.provides_hooks = list,
            "provides_middleware" => caps.provides_middleware = list,
            _ => caps.requires_env = list,
        }
    }
    Some(caps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::CheckId;

    fn load_text(name: &str, text: &str) -> (Option<Entry>, Vec<CatalogFinding>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        load(&path)
    }

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    #[test]
    fn a_complete_entry_loads_without_findings() {
        let (entry, findings) = load_text(
            "kit.yaml",
            &format!(
                "name: kit\nrepo: https://github.com/o/kit\nsha: {SHA}\nmaintainer: o\nsubdir: plugins/kit\ndescription: d\n\
                 tier: official\nplatforms: [linux, macos]\ntags: [a]\nrequires_plugins: [base]\n\
                 capabilities:\n  provides_tools: [kit_run]\n  requires_env: [KIT_TOKEN]\n"
            ),
        );
        assert!(findings.is_empty(), "{findings:#?}");
        let e = entry.unwrap();
        assert_eq!(e.subdir.as_deref(), Some("plugins/kit"));
        assert_eq!(e.requires_plugins, ["base"]);
        assert_eq!(e.positions.requires_plugins, [Pos::new(10, 20)]);
        assert_eq!(e.positions.name, Pos::new(1, 7));
        let caps = e.capabilities.unwrap();
        assert_eq!(caps.provides_tools, ["kit_run"]);
        assert_eq!(caps.requires_env, ["KIT_TOKEN"]);
    }

    #[test]
    fn findings_are_located_and_quote_the_value() {
        let (entry, findings) = load_text(
            "kit.yaml",
            &format!(
                "name: kit\nrepo: https://github.com/o/kit\nsha: {}\nmaintainer: o\ndescription: d\nversion: 1.0\n",
                SHA.to_uppercase()
            ),
        );
        assert!(entry.is_some(), "identity is usable despite the bad sha");
        assert_eq!(findings.len(), 2, "{findings:#?}");
        let sha = &findings[0];
        assert_eq!(
            (sha.check, sha.pos.line, sha.pos.column),
            (finding::ENTRY_FIELD, 3, 6)
        );
        assert_eq!(sha.value.as_deref(), Some(SHA.to_uppercase().as_str()));
        assert!(sha.hint.as_deref().unwrap().contains(SHA));
        let version = &findings[1];
        assert!(
            version.message.contains("must be a string, found number"),
            "{}",
            version.message
        );
        assert!(version.hint.as_deref().unwrap().contains("\"1.0\""));
    }

    #[test]
    fn missing_identity_gives_no_entry() {
        let (entry, findings) = load_text("x.yaml", "name: x\nmaintainer: o\n");
        assert!(entry.is_none());
        let messages: Vec<&str> = findings.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "`repo` is missing",
                "`sha` is missing",
                "`description` is missing"
            ]
        );
    }

    #[test]
    fn duplicate_keys_warn_and_unknown_keys_suggest() {
        let (_, findings) = load_text(
            "kit.yaml",
            &format!(
                "name: kit\nname: kit\nrepo: https://github.com/o/kit\nsha: {SHA}\nmaintainer: o\ndescription: d\ndescripton: x\n"
            ),
        );
        let got: Vec<(CheckId, u32)> = findings.iter().map(|f| (f.check, f.pos.line)).collect();
        assert_eq!(got, [(finding::YAML, 2), (finding::UNKNOWN_KEY, 7)]);
        assert!(
            findings[1]
                .hint
                .as_deref()
                .unwrap()
                .contains("`description`")
        );
    }

    #[test]
    fn subdirs() {
        assert!(check_subdir("plugins/web-search").is_ok());
        assert!(check_subdir("a.b_c/D-1").is_ok());
        for bad in [
            "/abs", "a/../b", "./a", "a//b", "a/", "..", "a b", "a\\b", "",
        ] {
            assert!(check_subdir(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn requires_hermes_reuses_the_manifest_rule() {
        let (_, findings) = load_text(
            "kit.yaml",
            &format!(
                "name: kit\nrepo: https://github.com/o/kit\nsha: {SHA}\nmaintainer: o\ndescription: d\nrequires_hermes: \">=2025.1\"\n"
            ),
        );
        // Upstream accepts the clause; ours, stricter, is a warning.
        assert_eq!(findings.len(), 1, "{findings:#?}");
        assert_eq!(findings[0].check, finding::REQUIRES_HERMES);
        assert_eq!(findings[0].severity, crate::diag::Severity::Warning);
        assert_eq!(findings[0].pos.line, 6);
    }

    /// Shapes of real upstream entries, read as upstream's validator reads them.
    #[test]
    fn upstream_shapes_are_read_as_upstream_reads_them() {
        let base = format!(
            "name: kit\nrepo: https://github.com/o/kit\nsha: {SHA}\nmaintainer: o\ndescription: d\n"
        );
        let findings_of = |extra: &str| {
            let (entry, findings) = load_text("kit.yaml", &format!("{base}{extra}"));
            let got: Vec<(crate::diag::Severity, String)> = findings
                .iter()
                .map(|f| (f.severity, f.message.clone()))
                .collect();
            (entry, got)
        };
        use crate::diag::Severity::{Error, Warning};
        // Accepted as they are.
        for extra in [
            "readme: false\n",
            "readme: true\n",
            "subdir: \"\"\n",
            "requires_hermes: \"\"\n",
            "requires_hermes: \">=0.19, <1.0\"\n",
            "components: [agent, desktop-ui]\ndesktop_id: kit-ui\n",
            "onboarding: true\n",
            "category: memory\nversion: \"2.0.0\"\n",
            "image: https://raw.githubusercontent.com/o/kit/x/icon.png\n",
        ] {
            let (entry, got) = findings_of(extra);
            assert!(got.is_empty(), "{extra}: {got:?}");
            assert!(entry.is_some());
        }
        let (entry, _) = findings_of("readme: false\nsubdir: \"\"\n");
        let entry = entry.unwrap();
        assert_eq!(entry.readme, Some(false));
        assert_eq!(entry.subdir, None, "empty subdir is the repository root");
        // Warnings: upstream accepts, we say why it matters.
        for (extra, said) in [
            (
                "capabilities:\n  requires_env: [name]\n",
                "UPPER_SNAKE_CASE",
            ),
            (
                "capabilities:\n  provides_widgets: [w]\n",
                "unknown key `capabilities.provides_widgets`",
            ),
            (
                "requires_rabbit: \">=0.21\"\n",
                "unknown key `requires_rabbit`",
            ),
            ("category: widgets\n", "not one the docs site knows"),
            ("version: \"v 2\"\n", "label pattern"),
            (
                "image: https://cdn.example.com/i.png\n",
                "GitHub hosts only",
            ),
        ] {
            let (_, got) = findings_of(extra);
            assert!(
                got.len() == 1 && got[0].0 == Warning && got[0].1.contains(said),
                "{extra}: {got:?}"
            );
        }
        // Errors upstream's validator gives.
        for (extra, said) in [
            ("readme: \"false\"\n", "must be true or false"),
            ("requires_hermes: \"0.19\"\n", "needs an operator"),
            (
                "components: [agent, cli]\n",
                "`agent` and `desktop-ui` only",
            ),
            ("desktop_id: Kit UI\n", "desktop_id"),
            ("description: \"  \"\n", "`description` is empty"),
        ] {
            let (_, got) = findings_of(extra);
            assert!(
                got.iter().any(|(sev, m)| *sev == Error && m.contains(said)),
                "{extra}: {got:?}"
            );
        }
        let (_, findings) = load_text(
            "kit.yaml",
            &format!(
                "name: kit\nrepo: https://gitea.example/o/kit\nsha: {SHA}\nmaintainer: o\ndescription: d\nreadme: true\n"
            ),
        );
        assert!(
            findings
                .iter()
                .any(|f| f.message.contains("github.com or gitlab.com")),
            "{findings:#?}"
        );
    }
}
