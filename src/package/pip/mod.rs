//! pip-distributed plugins (MAN-8): a Python project whose `pyproject.toml`, or a wheel whose
//! `*.dist-info/entry_points.txt`, declares entry points in the group `hermes_agent.plugins`
//! (`name = "module[:object]"`; Hermes loads the object and calls its `register(ctx)`), and
//! optionally `hermes_agent.plugin_capabilities` (`"<plugin-id>.<capability-id>" = "<the same
//! object>"`, read from metadata without importing). Reading them never imports or builds
//! anything; a wheel is unpacked into a temporary directory (entry names checked, size bounded)
//! so its modules can be analysed.

pub mod unpacked;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use crate::diag::{CheckId, Diagnostic};
use crate::located::Pos;
use crate::located::lines::LineIndex;
use crate::pkgfs::{MANIFEST_LIMIT, PackageRoot};

/// The entry-point group of plugins.
pub const PLUGINS_GROUP: &str = "hermes_agent.plugins";
/// The entry-point group of capability declarations.
pub const CAPABILITIES_GROUP: &str = "hermes_agent.plugin_capabilities";
/// The entry-point group of memory providers (read by `plugins.memory` from 0.20.4): the
/// object is a provider, its class, or a module or function whose `register(ctx)` registers one.
pub const MEMORY_PROVIDERS_GROUP: &str = "hermes_agent.memory_providers";

/// Most bytes a wheel may unpack to for validation (256 MiB).
const WHEEL_UNPACK_LIMIT: u64 = 256 * 1024 * 1024;

/// One entry point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryPoint {
    /// Its name (the plugin's key for `hermes_agent.plugins`).
    pub name: String,
    /// The value as written (`my_pkg`, `my_pkg.plugin:register`).
    pub value: String,
    /// The module part.
    pub module: String,
    /// The object part after `:`, if any.
    pub object: Option<String>,
    /// The file it is declared in.
    pub file: String,
    /// Where.
    pub pos: Pos,
}

/// Where a pip plugin was read from.
#[derive(Debug, Clone)]
pub enum PipSource {
    /// A project directory with `pyproject.toml`.
    Project,
    /// A wheel, unpacked into a temporary directory kept alive with the package.
    Wheel {
        /// The wheel file.
        file: PathBuf,
        /// The unpacked tree.
        unpacked: Arc<tempfile::TempDir>,
    },
}

/// A pip-distributed plugin package.
#[derive(Debug, Clone)]
pub struct PipPackage {
    /// Project or wheel.
    pub source: PipSource,
    /// The distribution's name, version and summary, when declared.
    pub project: Option<String>,
    /// Its version.
    pub version: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// `hermes_agent.plugins` entry points.
    pub plugins: Vec<EntryPoint>,
    /// `hermes_agent.plugin_capabilities` entry points.
    pub capabilities: Vec<EntryPoint>,
    /// `hermes_agent.memory_providers` entry points.
    pub memory_providers: Vec<EntryPoint>,
    /// The names of its `console_scripts`: what a distribution that registers nothing with
    /// Hermes offers instead (an installer of its own, a tool).
    pub console_scripts: Vec<String>,
    /// The version specifiers of its unconditional `Requires-Dist` on `hermes-agent` (a
    /// wheel's): a requirement on core, judged against core and never installed.
    pub requires_hermes: Option<String>,
    /// The directory (relative to the package root) the modules live in (`.` or `src`).
    pub module_root: String,
}

impl PipPackage {
    /// The entry point Hermes knows the plugin by: its `hermes_agent.plugins` entry, or for a
    /// memory provider alone its `hermes_agent.memory_providers` entry.
    pub fn main_entry(&self) -> Option<&EntryPoint> {
        self.plugins
            .first()
            .or_else(|| self.memory_providers.first())
    }

    /// Whether it registers nothing with Hermes through any entry-point group.
    pub fn registers_nothing(&self) -> bool {
        self.plugins.is_empty() && self.memory_providers.is_empty()
    }

    /// The package directory of module `dotted` relative to the package root, if the project
    /// holds it (`my_pkg` → `src/my_pkg/__init__.py` or `my_pkg.py`).
    pub fn module_file(&self, root: &PackageRoot, dotted: &str) -> Option<String> {
        let rel = dotted.replace('.', "/");
        let base = if self.module_root == "." {
            String::new()
        } else {
            format!("{}/", self.module_root)
        };
        [
            format!("{base}{rel}/__init__.py"),
            format!("{base}{rel}.py"),
        ]
        .into_iter()
        .find(|candidate| root.is_file(candidate))
    }
}

#[derive(Deserialize)]
struct Pyproject {
    project: Option<Project>,
}

#[derive(Deserialize)]
struct Project {
    name: Option<String>,
    version: Option<String>,
    description: Option<String>,
    #[serde(rename = "entry-points", default)]
    entry_points: BTreeMap<String, BTreeMap<String, toml::Spanned<String>>>,
    #[serde(default)]
    scripts: BTreeMap<String, toml::Value>,
}

/// Splits `module[:object]`; `None` when it is not a dotted module path.
fn split_value(value: &str) -> Option<(String, Option<String>)> {
    let (module, object) = match value.trim().split_once(':') {
        Some((m, o)) => (m.trim(), Some(o.trim().to_string())),
        None => (value.trim(), None),
    };
    let identifier = |s: &str| {
        !s.is_empty()
            && s.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    let ok = module.split('.').all(identifier)
        && object
            .as_deref()
            .is_none_or(|o| o.split('.').all(identifier));
    ok.then(|| (module.to_string(), object))
}

fn entry(
    name: &str,
    value: &str,
    file: &str,
    pos: Pos,
    out: &mut Vec<Diagnostic>,
) -> Option<EntryPoint> {
    match split_value(value) {
        Some((module, object)) => Some(EntryPoint {
            name: name.to_string(),
            value: value.trim().to_string(),
            module,
            object,
            file: file.to_string(),
            pos,
        }),
        None => {
            out.push(
                Diagnostic::error(
                    CheckId::EntryPoints,
                    file,
                    pos,
                    format!("entry point `{name}` = `{value}` is not `module` or `module:object`"),
                )
                .value(value)
                .hint("Write the dotted module that defines register(ctx), e.g. `my_plugin = \"my_plugin\"`."),
            );
            None
        }
    }
}

/// Whether `root` is a pip plugin project: a `pyproject.toml` that declares the plugins group.
pub fn declares_plugins(dir: &Path) -> bool {
    crate::pkgfs::read_limited_text(&dir.join("pyproject.toml"), MANIFEST_LIMIT)
        .ok()
        .and_then(|t| toml::from_str::<Pyproject>(&t).ok())
        .and_then(|p| p.project)
        .is_some_and(|p| p.entry_points.contains_key(PLUGINS_GROUP))
}

/// Reads a project's `pyproject.toml`.
pub fn read_project(root: &PackageRoot, out: &mut Vec<Diagnostic>) -> Option<PipPackage> {
    const FILE: &str = "pyproject.toml";
    let text = match root.read_text(FILE, MANIFEST_LIMIT) {
        Ok(t) => t,
        Err(e) => {
            out.push(Diagnostic::error(
                CheckId::EntryPoints,
                FILE,
                e.pos(),
                format!("pyproject.toml {e}"),
            ));
            return None;
        }
    };
    let lines = LineIndex::new(&text);
    let parsed: Pyproject = match toml::from_str(&text) {
        Ok(p) => p,
        Err(e) => {
            out.push(Diagnostic::error(
                CheckId::EntryPoints,
                FILE,
                e.span().map_or(Pos::START, |s| lines.pos(s.start)),
                format!("pyproject.toml is not valid TOML: {}", e.message()),
            ));
            return None;
        }
    };
    let project = parsed.project?;
    let group = |name: &str, out: &mut Vec<Diagnostic>| -> Vec<EntryPoint> {
        project
            .entry_points
            .get(name)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| entry(k, v.get_ref(), FILE, lines.pos(v.span().start), out))
            .collect()
    };
    let plugins = group(PLUGINS_GROUP, out);
    let capabilities = group(CAPABILITIES_GROUP, out);
    let memory_providers = group(MEMORY_PROVIDERS_GROUP, out);
    let console_scripts = project.scripts.keys().cloned().collect();
    let module_root = if root.is_dir("src") && !root.is_file("src/__init__.py") {
        "src"
    } else {
        "."
    };
    Some(PipPackage {
        requires_hermes: None,
        source: PipSource::Project,
        project: project.name,
        version: project.version,
        description: project.description,
        plugins,
        capabilities,
        memory_providers,
        console_scripts,
        module_root: module_root.to_string(),
    })
}

/// The entry points of `entry_points.txt` that matter to Hermes, by group.
#[derive(Debug, Default)]
struct Groups {
    plugins: Vec<EntryPoint>,
    capabilities: Vec<EntryPoint>,
    memory_providers: Vec<EntryPoint>,
    console_scripts: Vec<String>,
}

/// Parses `entry_points.txt` (INI: `[group]`, `name = value`).
fn parse_entry_points(text: &str, file: &str, out: &mut Vec<Diagnostic>) -> Groups {
    let mut groups = Groups::default();
    let mut group = String::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        let pos = Pos::new(u32::try_from(i + 1).unwrap_or(u32::MAX), 1);
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            group = name.trim().to_string();
            continue;
        }
        let Some((name, value)) = line.split_once('=') else {
            continue;
        };
        let target = match group.as_str() {
            PLUGINS_GROUP => &mut groups.plugins,
            CAPABILITIES_GROUP => &mut groups.capabilities,
            MEMORY_PROVIDERS_GROUP => &mut groups.memory_providers,
            "console_scripts" => {
                groups.console_scripts.push(name.trim().to_string());
                continue;
            }
            _ => continue,
        };
        if let Some(e) = entry(name.trim(), value, file, pos, out) {
            target.push(e);
        }
    }
    groups
}

/// The specifiers of a METADATA's unconditional `Requires-Dist` on `hermes-agent` (`>=0.18.2`;
/// `""` for any version), if it has one; several are joined as one set.
fn requires_hermes(metadata: &str) -> Option<String> {
    let mut found: Option<Vec<String>> = None;
    for line in metadata.lines().take_while(|l| !l.is_empty()) {
        let Some(value) = line.strip_prefix("Requires-Dist:") else {
            continue;
        };
        let Ok(requirement) = <uv_pep508::Requirement as std::str::FromStr>::from_str(value.trim())
        else {
            continue;
        };
        if requirement.name.as_ref() != "hermes-agent" || !requirement.marker.is_true() {
            continue;
        }
        let specifiers = match requirement.version_or_url {
            Some(uv_pep508::VersionOrUrl::VersionSpecifier(s)) => s.to_string(),
            _ => String::new(),
        };
        let all = found.get_or_insert_with(Vec::new);
        if !specifiers.is_empty() {
            all.push(specifiers);
        }
    }
    found.map(|all| all.join(", "))
}

/// A wheel entry that could not be unpacked, naming it.
fn unpack_error(name: &str, e: &std::io::Error) -> String {
    format!("cannot unpack `{}`: {e}", crate::text::escape(name))
}

/// Reads a wheel: its metadata and entry points, unpacked into a temporary directory (entry
/// names checked, at most [`WHEEL_UNPACK_LIMIT`] bytes) so its modules can be analysed — once
/// per file in an operation ([`unpacked`]).
pub fn read_wheel(path: &Path, out: &mut Vec<Diagnostic>) -> Result<(PipPackage, PathBuf), String> {
    let file = crate::files::open_regular(path).map_err(|e| format!("cannot open it: {e}"))?;
    let id = unpacked::FileId::of(&file);
    if let Some(read) = id.as_ref().and_then(|id| unpacked::recall(id, path, out)) {
        return Ok(read);
    }
    let first = out.len();
    let read = unpack_wheel(path, file, out)?;
    if let Some(id) = id {
        unpacked::remember(id, &read.0, &read.1, &out[first..]);
    }
    Ok(read)
}

/// [`read_wheel`] of the open `file`, unpacked anew.
fn unpack_wheel(
    path: &Path,
    file: std::fs::File,
    out: &mut Vec<Diagnostic>,
) -> Result<(PipPackage, PathBuf), String> {
    let mut archive = zip::ZipArchive::new(file).map_err(|e| format!("not a wheel: {e}"))?;
    let tmp = tempfile::Builder::new()
        .prefix("hermes-plugins-wheel-")
        .tempdir()
        .map_err(|e| format!("cannot make a directory to unpack it in: {e}"))?;
    let mut unpacked: u64 = 0;
    let mut dist_info = None;
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(|e| format!("entry {i}: {e}"))?;
        let name = entry.name().to_string();
        let safe = !name.starts_with('/')
            && !name.contains('\\')
            && name.split('/').all(|s| s != "..")
            && !name.chars().any(char::is_control);
        if !safe {
            return Err(format!(
                "entry `{}` would be written outside the wheel",
                crate::text::escape(&name)
            ));
        }
        if let Some(first) = name.split('/').next()
            && first.ends_with(".dist-info")
        {
            dist_info = Some(first.to_string());
        }
        let target = tmp.path().join(&name);
        if entry.is_dir() {
            std::fs::create_dir_all(&target).map_err(|e| unpack_error(&name, &e))?;
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| unpack_error(&name, &e))?;
        }
        let mut bytes = Vec::new();
        let remaining = WHEEL_UNPACK_LIMIT.saturating_sub(unpacked);
        (&mut entry)
            .take(remaining + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("`{}`: {e}", crate::text::escape(&name)))?;
        unpacked += bytes.len() as u64;
        if unpacked > WHEEL_UNPACK_LIMIT {
            return Err(format!(
                "it unpacks to more than {WHEEL_UNPACK_LIMIT} bytes"
            ));
        }
        std::fs::write(&target, bytes).map_err(|e| unpack_error(&name, &e))?;
    }
    let dist_info = dist_info.ok_or("it has no .dist-info directory")?;
    let rel = format!("{dist_info}/entry_points.txt");
    let text = std::fs::read_to_string(tmp.path().join(&rel)).unwrap_or_default();
    let groups = parse_entry_points(&text, &rel, out);
    let metadata = std::fs::read_to_string(tmp.path().join(format!("{dist_info}/METADATA")))
        .unwrap_or_default();
    let field = |name: &str| {
        metadata
            .lines()
            .take_while(|l| !l.is_empty())
            .find_map(|l| l.strip_prefix(&format!("{name}: ")).map(str::to_string))
    };
    let dir = tmp.path().to_path_buf();
    Ok((
        PipPackage {
            requires_hermes: requires_hermes(&metadata),
            project: field("Name"),
            version: field("Version"),
            description: field("Summary"),
            plugins: groups.plugins,
            capabilities: groups.capabilities,
            memory_providers: groups.memory_providers,
            console_scripts: groups.console_scripts,
            module_root: ".".into(),
            source: PipSource::Wheel {
                file: path.to_path_buf(),
                unpacked: Arc::new(tmp),
            },
        },
        dir,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_split_into_module_and_object() {
        assert_eq!(split_value("my_pkg"), Some(("my_pkg".into(), None)));
        assert_eq!(
            split_value(" my_pkg.plugin : register "),
            Some(("my_pkg.plugin".into(), Some("register".into())))
        );
        assert_eq!(split_value("my-pkg"), None);
        assert_eq!(split_value(""), None);
    }

    #[test]
    fn a_requirement_on_hermes_agent_is_read_as_one_on_core() {
        let metadata = "Name: x\nRequires-Dist: httpx>=0.27\nRequires-Dist: hermes-agent (>=0.18.2)\nRequires-Dist: hermes-agent<0.23\nRequires-Dist: hermes-agent[web]==0.1; extra == \"dev\"\n\nRequires-Dist: hermes-agent==9 (the body)\n";
        assert_eq!(
            requires_hermes(metadata).as_deref(),
            Some(">=0.18.2, <0.23")
        );
        assert_eq!(
            requires_hermes("Requires-Dist: hermes-agent\n").as_deref(),
            Some("")
        );
        assert_eq!(requires_hermes("Requires-Dist: httpx\n"), None);
    }

    #[test]
    fn entry_points_txt_groups() {
        let mut out = Vec::new();
        let g = parse_entry_points(
            "[console_scripts]\nx = y:z\n\n[hermes_agent.plugins]\ncalc = my_pkg\n\n[hermes_agent.plugin_capabilities]\ncalc.tools.override = my_pkg\n\n[hermes_agent.memory_providers]\ncalc-memory = my_memory:register\n",
            "x.dist-info/entry_points.txt",
            &mut out,
        );
        assert_eq!(g.plugins.len(), 1);
        assert_eq!(g.plugins[0].name, "calc");
        assert_eq!(g.plugins[0].pos, Pos::new(5, 1));
        assert_eq!(g.capabilities[0].name, "calc.tools.override");
        assert_eq!(g.memory_providers[0].name, "calc-memory");
        assert_eq!(g.memory_providers[0].object.as_deref(), Some("register"));
        assert_eq!(g.console_scripts, ["x"]);
        assert!(out.is_empty());
    }
}
