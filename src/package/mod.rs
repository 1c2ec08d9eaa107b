//! Loading plugin directories into typed packages.
//!
//! [`load_path`] discovers the plugins under a path and loads each one; [`load`] loads one
//! discovered directory. A package is either native (`plugin.yaml` + Python) or portable
//! (Agent Plugins v1 `plugin.json`). Loading reads files only — never executes plugin code —
//! and never leaves the package root. Every problem found while reading is a located
//! [`Diagnostic`]; further rules live in `check`.

pub mod declarations;
pub mod discover;
pub mod fields;
pub mod manifest;
pub mod pip;
pub mod portable;
pub mod requires_hermes;

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use crate::diag::{CheckId, Diagnostic};
use crate::located::{Limits, Pos, yaml};
use crate::pkgfs::{MANIFEST_LIMIT, PackageRoot};

pub use declarations::Declarations;
pub use discover::{Candidate, Discovery, ManifestKind, Outside, Skipped};
pub use fields::{Mode, Spanned};
pub use manifest::Manifest;
pub use pip::PipPackage;
pub use portable::PortablePackage;

/// The manifest format of a package, as reports, `installed.json` and `generation.json` name
/// it (`native-v1`, `native-v2`, `portable`, `pip`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// `plugin.yaml` without `manifest_version` (or 1).
    NativeV1,
    /// `plugin.yaml` with `manifest_version: 2` or newer.
    NativeV2,
    /// Agent Plugins v1 `plugin.json`.
    Portable,
    /// A pip-distributed plugin (entry points).
    Pip,
}

impl Format {
    /// `native-v1`, `native-v2` or `portable`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::NativeV1 => "native-v1",
            Format::NativeV2 => "native-v2",
            Format::Portable => "portable",
            Format::Pip => "pip",
        }
    }

    /// The kind of plugin a package of this format is: a pip-distributed plugin is loaded
    /// as Hermes loads portable ones (from the generation's environment, not `plugins/`).
    pub fn kind(self) -> Kind {
        match self {
            Format::NativeV1 | Format::NativeV2 => Kind::Native,
            Format::Portable | Format::Pip => Kind::Portable,
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of plugin an installed package is: `native` (`plugin.yaml` + `register(ctx)`)
/// or `portable` (Agent Plugins, pip entry points).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A native Hermes plugin.
    Native,
    /// A portable plugin.
    Portable,
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Kind::Native => "native",
            Kind::Portable => "portable",
        })
    }
}

/// A loaded native package.
#[derive(Debug, Clone)]
pub struct NativePackage {
    /// `plugin.yaml` or `plugin.yml`.
    pub manifest_file: String,
    /// The typed manifest; `None` when it could not be read or parsed.
    pub manifest: Option<Manifest>,
    /// Python dependency declarations (MAN-7).
    pub declarations: Declarations,
    /// Keys the manifest gives twice: PyYAML (Hermes 0.13 – 0.19) keeps the last value,
    /// ruamel.yaml (0.22's `hermes_yaml`) refuses the file.
    pub duplicate_keys: Vec<String>,
}

/// What kind of package was loaded.
#[derive(Debug, Clone)]
pub enum Content {
    /// A native package.
    Native(Box<NativePackage>),
    /// A portable package.
    Portable(Box<PortablePackage>),
    /// A pip-distributed package (a project or a wheel with entry points).
    Pip(Box<PipPackage>),
}

/// A plugin directory loaded into a typed package, with what loading found.
#[derive(Debug, Clone)]
pub struct LoadedPackage {
    /// The plugin directory as reached from the path the user gave (for display).
    pub dir: PathBuf,
    /// The confined root for reading its files; `None` if the directory could not be opened.
    pub root: Option<PackageRoot>,
    /// The plugin key: `<category>/<dir>` in a category layout, else the plugin's name.
    pub key: String,
    /// The category directory, in a category layout.
    pub category: Option<String>,
    /// The package itself.
    pub content: Content,
    /// Findings made while loading.
    pub diagnostics: Vec<Diagnostic>,
}

impl LoadedPackage {
    /// The manifest file findings about the package as a whole point at.
    pub fn manifest_file(&self) -> &str {
        match &self.content {
            Content::Native(n) => &n.manifest_file,
            Content::Portable(_) => "plugin.json",
            Content::Pip(p) => match &p.source {
                pip::PipSource::Project => "pyproject.toml",
                pip::PipSource::Wheel { .. } => p
                    .plugins
                    .first()
                    .map_or("entry_points.txt", |e| e.file.as_str()),
            },
        }
    }

    /// The plugin's name (manifest name, else the directory name).
    pub fn name(&self) -> String {
        let declared = match &self.content {
            Content::Native(n) => n
                .manifest
                .as_ref()
                .and_then(|m| m.name.as_ref())
                .map(|n| n.value.clone()),
            Content::Portable(p) => p.manifest.as_ref().map(|m| m.name.value.clone()),
            Content::Pip(p) => p
                .plugins
                .first()
                .map(|e| e.name.clone())
                .or_else(|| p.project.clone()),
        };
        declared.unwrap_or_else(|| dir_name(&self.dir))
    }

    /// The declared version, if any.
    pub fn version(&self) -> Option<String> {
        match &self.content {
            Content::Native(n) => n
                .manifest
                .as_ref()
                .and_then(|m| m.version.as_ref())
                .map(|v| v.value.clone()),
            Content::Portable(p) => p.manifest.as_ref().and_then(|m| m.version.clone()),
            Content::Pip(p) => p.version.clone(),
        }
    }

    /// The names in `requires_env` (native manifests; none otherwise).
    pub fn requires_env(&self) -> Vec<String> {
        match &self.content {
            Content::Native(n) => n
                .manifest
                .iter()
                .flat_map(|m| m.requires_env.iter().map(|e| e.name.value.clone()))
                .collect(),
            Content::Portable(_) | Content::Pip(_) => Vec::new(),
        }
    }

    /// The manifest format.
    pub fn format(&self) -> Format {
        match &self.content {
            Content::Native(n) => match &n.manifest {
                Some(m) if m.manifest_version >= 2 => Format::NativeV2,
                _ => Format::NativeV1,
            },
            Content::Portable(_) => Format::Portable,
            Content::Pip(_) => Format::Pip,
        }
    }

    /// Whether the package would load at all (its manifest is usable).
    pub fn accepted(&self) -> bool {
        match &self.content {
            Content::Native(n) => n.manifest.is_some(),
            Content::Portable(p) => p.accepted,
            Content::Pip(p) => !p.registers_nothing(),
        }
    }
}

fn dir_name(dir: &Path) -> String {
    dir.canonicalize()
        .ok()
        .as_deref()
        .unwrap_or(dir)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string())
}

/// What [`load_path`] found under one path.
#[derive(Debug)]
pub struct LoadedTree {
    /// The packages, in discovery order.
    pub packages: Vec<LoadedPackage>,
    /// Directories skipped during discovery.
    pub skipped: Vec<Skipped>,
}

/// Discovers and loads every plugin under `path`; duplicate keys are reported on the later package.
pub fn load_path(path: &Path, mode: Mode) -> io::Result<LoadedTree> {
    load_paths(std::slice::from_ref(&path), mode)
        .pop()
        .expect("one result per path")
}

/// [`load_path`] of each of `paths`, in order. Every path is discovered first and then all
/// their packages are loaded together on every core: opening a package walks its whole tree
/// and parses its manifest, and a run given 52 plugin folders and a directory of 31 spent a
/// sixth of its time doing that one package at a time.
pub fn load_paths(paths: &[impl AsRef<Path>], mode: Mode) -> Vec<io::Result<LoadedTree>> {
    let discoveries: Vec<io::Result<discover::Discovery>> = paths
        .iter()
        .map(|path| discover::discover(path.as_ref()))
        .collect();
    let candidates: Vec<&Candidate> = discoveries
        .iter()
        .flatten()
        .flat_map(|d| &d.candidates)
        .collect();
    let mut loaded = crate::parallel::map(&candidates, crate::parallel::spare_cores(), None, |c| {
        load(c, mode)
    })
    .into_iter();
    discoveries
        .into_iter()
        .map(|discovery| {
            let discovery = discovery?;
            let packages = loaded.by_ref().take(discovery.candidates.len()).collect();
            Ok(finish_tree(discovery, packages, mode))
        })
        .collect()
}

/// One path's tree from its discovery and its loaded candidates: the symlinks leading out
/// of it, and duplicate keys reported on the later package.
fn finish_tree(
    discovery: discover::Discovery,
    mut packages: Vec<LoadedPackage>,
    mode: Mode,
) -> LoadedTree {
    for outside in &discovery.outside {
        match (mode, discover::manifest_kind(&outside.path)) {
            // Hermes follows such links at run time; `validate` does not leave its root.
            (Mode::Runtime, Some(manifest)) => packages.push(load(
                &Candidate {
                    dir: outside.path.clone(),
                    category: outside.category.clone(),
                    manifest,
                },
                mode,
            )),
            (Mode::Runtime, None) => {}
            (Mode::Validate, _) => packages.push(outside_package(outside)),
        }
    }
    report_clashes(&mut packages);
    LoadedTree {
        packages,
        skipped: discovery.skipped,
    }
}

/// Reports, on the later package, a key another package already has, and (native plugins) a
/// key whose Hermes module name another key already has (`a-b` and `a_b`).
fn report_clashes(packages: &mut [LoadedPackage]) {
    let mut keys: HashMap<String, PathBuf> = HashMap::new();
    let mut modules: HashMap<String, (String, PathBuf)> = HashMap::new();
    for package in packages {
        let clash = if let Some(other) = keys.get(&package.key) {
            Some((
                format!(
                    "plugin key `{}` is already used by {}; Hermes would load only one of them",
                    package.key,
                    other.display()
                ),
                "Give each plugin a unique name (or directory, in a category layout).",
            ))
        } else {
            keys.insert(package.key.clone(), package.dir.clone());
            let module = crate::known::module_name(&package.key);
            match modules.get(&module) {
                _ if !matches!(package.content, Content::Native(_)) => None,
                Some((other_key, other)) => Some((
                    format!(
                        "plugin key `{}` imports as `{module}`, as `{other_key}` ({}) does; Hermes would run one in the other's module",
                        package.key,
                        other.display()
                    ),
                    "Rename one of them: Hermes turns `-` into `_` and `/` into `__` in module names.",
                )),
                None => {
                    modules.insert(module, (package.key.clone(), package.dir.clone()));
                    None
                }
            }
        };
        if let Some((message, hint)) = clash {
            let file = package.manifest_file().to_string();
            package.diagnostics.push(
                Diagnostic::error(CheckId::Layout, file, Pos::START, message)
                    .value(&package.key)
                    .hint(hint),
            );
        }
    }
}

/// A symlink leading outside the plugins root, as a package that was not loaded: an error
/// says where it leads and how to validate that directory itself.
fn outside_package(outside: &Outside) -> LoadedPackage {
    let name = outside
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let key = match &outside.category {
        Some(cat) => format!("{cat}/{name}"),
        None => name.clone(),
    };
    let target = outside.target.display().to_string();
    LoadedPackage {
        dir: outside.path.clone(),
        root: None,
        key,
        category: outside.category.clone(),
        content: Content::Native(Box::new(NativePackage {
            manifest_file: "plugin.yaml".into(),
            manifest: None,
            declarations: Declarations::empty(),
                    duplicate_keys: Vec::new(),
        })),
        diagnostics: vec![
            Diagnostic::error(
                CheckId::Layout,
                ".",
                Pos::START,
                format!(
                    "`{name}` is a symlink to {target}, outside the directory being validated; it was not read"
                ),
            )
            .value(crate::text::escape(&target))
            .hint(format!(
                "Validate that directory itself (`hermes-plugins validate {target}`), or replace the symlink with the plugin."
            )),
        ],
    }
}

/// Loads the plugin in `dir` (a single plugin directory, not a root of plugins), keyed by its
/// name as a flat plugin. Fails if `dir` has no `plugin.yaml`, `plugin.yml` or `plugin.json`.
pub fn load_dir(dir: &Path, mode: Mode) -> io::Result<LoadedPackage> {
    let manifest = discover::package_dir_kind(dir).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "{} is not a plugin directory (no plugin.yaml, plugin.yml or plugin.json)",
                dir.display()
            ),
        )
    })?;
    // A wheel tree is loaded as its wheel.
    let dir = match manifest {
        discover::ManifestKind::Wheel => discover::wheel_tree(dir).unwrap_or_else(|| dir.into()),
        _ => dir.to_path_buf(),
    };
    Ok(load(
        &Candidate {
            dir,
            category: None,
            manifest,
        },
        mode,
    ))
}

/// Loads one discovered plugin directory.
pub fn load(candidate: &Candidate, mode: Mode) -> LoadedPackage {
    let mut diagnostics = Vec::new();
    let dir_name = dir_name(&candidate.dir);
    let key_for = |name: Option<&str>| match &candidate.category {
        Some(cat) => format!("{cat}/{dir_name}"),
        None => name
            .filter(|n| !n.is_empty())
            .unwrap_or(&dir_name)
            .to_string(),
    };
    if matches!(
        candidate.manifest,
        ManifestKind::PipProject | ManifestKind::Wheel
    ) {
        return load_pip(candidate, &dir_name);
    }
    let root = match PackageRoot::open(&candidate.dir) {
        Ok(r) => r,
        Err(e) => {
            let file = match &candidate.manifest {
                ManifestKind::Native { file, .. } => (*file).to_string(),
                ManifestKind::Portable => "plugin.json".to_string(),
                ManifestKind::PipProject | ManifestKind::Wheel => "pyproject.toml".to_string(),
            };
            diagnostics.push(Diagnostic::error(
                CheckId::Layout,
                &file,
                Pos::START,
                format!("cannot open the plugin directory: {e}"),
            ));
            let content = match &candidate.manifest {
                ManifestKind::Native { file, .. } => Content::Native(Box::new(NativePackage {
                    manifest_file: (*file).to_string(),
                    manifest: None,
                    declarations: Declarations::empty(),
                    duplicate_keys: Vec::new(),
                })),
                ManifestKind::Portable | ManifestKind::PipProject | ManifestKind::Wheel => {
                    Content::Portable(Box::new(PortablePackage {
                        manifest: None,
                        extension: None,
                        skills: Vec::new(),
                        mcp: Default::default(),
                        namespace: portable::namespace::skill_namespace(&key_for(None)),
                        accepted: false,
                    }))
                }
            };
            return LoadedPackage {
                dir: candidate.dir.clone(),
                root: None,
                key: key_for(None),
                category: candidate.category.clone(),
                content,
                diagnostics,
            };
        }
    };
    let (key, content) = match &candidate.manifest {
        ManifestKind::Native {
            file,
            shadowed_yml,
            shadowed_json,
        } => {
            if *shadowed_yml {
                diagnostics.push(
                    Diagnostic::warning(
                        CheckId::Layout,
                        "plugin.yml",
                        Pos::START,
                        "plugin.yml is ignored: plugin.yaml is next to it and takes precedence",
                    )
                    .hint("Delete one of the two manifests."),
                );
            }
            if *shadowed_json {
                diagnostics.push(
                    Diagnostic::info(CheckId::Layout, "plugin.json", Pos::START, format!("plugin.json is not used as a portable manifest: {file} makes this a native package"))
                        .hint("A directory with both manifests is native; ship the portable package separately if both are meant to load."),
                );
            }
            let native = load_native(&root, file, mode, &mut diagnostics);
            let name = native
                .manifest
                .as_ref()
                .and_then(|m| m.name.as_ref())
                .map(|n| n.value.clone());
            (key_for(name.as_deref()), Content::Native(Box::new(native)))
        }
        ManifestKind::Portable | ManifestKind::PipProject | ManifestKind::Wheel => {
            let (key, portable) = PortablePackage::load(&root, key_for, &mut diagnostics);
            (key, Content::Portable(Box::new(portable)))
        }
    };
    LoadedPackage {
        dir: candidate.dir.clone(),
        root: Some(root),
        key,
        category: candidate.category.clone(),
        content,
        diagnostics,
    }
}

/// Loads a pip-distributed package (project or wheel); its key is its first plugin entry
/// point's name (what Hermes keys it by).
fn load_pip(candidate: &Candidate, dir_name: &str) -> LoadedPackage {
    let mut diagnostics = Vec::new();
    let failed = |message: String, file: &str| {
        Diagnostic::error(CheckId::EntryPoints, file, Pos::START, message)
    };
    let (package, root) = match candidate.manifest {
        ManifestKind::Wheel => match pip::read_wheel(&candidate.dir, &mut diagnostics) {
            Ok((p, dir)) => (Some(p), PackageRoot::open(&dir).ok()),
            Err(e) => {
                diagnostics.push(failed(format!("cannot read the wheel: {e}"), "."));
                (None, None)
            }
        },
        _ => match PackageRoot::open(&candidate.dir) {
            Ok(root) => (pip::read_project(&root, &mut diagnostics), Some(root)),
            Err(e) => {
                diagnostics.push(failed(
                    format!("cannot open the project directory: {e}"),
                    "pyproject.toml",
                ));
                (None, None)
            }
        },
    };
    let package = package.unwrap_or_else(|| PipPackage {
        requires_hermes: None,
        source: pip::PipSource::Project,
        project: None,
        version: None,
        description: None,
        plugins: Vec::new(),
        capabilities: Vec::new(),
        memory_providers: Vec::new(),
        console_scripts: Vec::new(),
        module_root: ".".into(),
    });
    let key = package
        .main_entry()
        .map(|e| e.name.clone())
        .unwrap_or_else(|| dir_name.to_string());
    LoadedPackage {
        dir: candidate.dir.clone(),
        root,
        key,
        category: candidate.category.clone(),
        content: Content::Pip(Box::new(package)),
        diagnostics,
    }
}

fn load_native(
    root: &PackageRoot,
    file: &str,
    mode: Mode,
    out: &mut Vec<Diagnostic>,
) -> NativePackage {
    let mut native = NativePackage {
        manifest_file: file.to_string(),
        manifest: None,
        declarations: Declarations::empty(),
        duplicate_keys: Vec::new(),
    };
    let text = match root.read_text(file, MANIFEST_LIMIT) {
        Ok(t) => t,
        Err(e) => {
            let mut d = Diagnostic::error(CheckId::Manifest, file, e.pos(), format!("{file} {e}"))
                .hint(
                    "The manifest must be a regular UTF-8 text file inside the plugin directory.",
                );
            if let Some(v) = e.value() {
                d = d.value(v);
            }
            out.push(d);
            return native;
        }
    };
    let parsed = match yaml::parse(&text, Limits::default()) {
        Ok(p) => p,
        Err(e) => {
            out.push(
                Diagnostic::error(
                    CheckId::Manifest,
                    file,
                    e.pos,
                    format!("{file} is not valid YAML: {}", e.message),
                )
                .value(line_at(&text, e.pos)),
            );
            return native;
        }
    };
    native.duplicate_keys = parsed.notes.iter().map(|n| n.value.clone()).collect();
    for note in &parsed.notes {
        out.push(
            Diagnostic::warning(CheckId::Manifest, file, note.pos, note.message.clone())
                .value(&note.value)
                .hint("Remove the duplicate key: Hermes 0.22 and later (ruamel.yaml) refuse the whole file."),
        );
    }
    if parsed.root.as_map().is_none() {
        let what = if parsed.root.is_null() {
            "empty".to_string()
        } else {
            format!("a {}", parsed.root.type_name(crate::located::Dialect::Yaml))
        };
        out.push(
            Diagnostic::error(
                CheckId::Manifest,
                file,
                parsed.root.pos,
                format!("{file} must be a mapping of fields, but it is {what}"),
            )
            .value(parsed.root.snippet())
            .hint("Start with `name: my-plugin` followed by `version:` and `description:`."),
        );
        return native;
    }
    let mut sink = crate::diag::Sink::new(file, out);
    let manifest = Manifest::from_tree(&parsed.root, &mut sink, mode);
    native.declarations = declarations::read(root, Some(&manifest), file, out);
    native.manifest = Some(manifest);
    native
}

/// The source line at `pos` (trimmed, shortened), to quote the offending text of a parse error.
pub fn line_at(text: &str, pos: Pos) -> String {
    let line = text
        .lines()
        .nth(pos.line.saturating_sub(1) as usize)
        .unwrap_or_default()
        .trim();
    crate::located::truncate_chars(line, 120)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(tree: &LoadedTree) -> Vec<(String, PathBuf)> {
        tree.packages
            .iter()
            .map(|p| (p.key.clone(), p.dir.clone()))
            .collect()
    }

    /// Loading several paths together gives each path what loading it alone gives, in the
    /// order the paths came, a path that cannot be discovered included.
    #[test]
    fn paths_loaded_together_are_each_as_loaded_alone() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/plugins");
        let paths = [
            fixtures.clone(),
            fixtures.join("missing"),
            fixtures.join("calculator"),
            fixtures.join("release-notes"),
        ];
        let together = load_paths(&paths, Mode::Validate);
        assert_eq!(together.len(), paths.len());
        for (path, loaded) in paths.iter().zip(&together) {
            match (load_path(path, Mode::Validate), loaded) {
                (Ok(alone), Ok(loaded)) => {
                    assert!(!alone.packages.is_empty(), "{}", path.display());
                    assert_eq!(keys(&alone), keys(loaded), "{}", path.display());
                    assert_eq!(
                        alone
                            .packages
                            .iter()
                            .map(|p| format!("{:?}", p.diagnostics))
                            .collect::<Vec<_>>(),
                        loaded
                            .packages
                            .iter()
                            .map(|p| format!("{:?}", p.diagnostics))
                            .collect::<Vec<_>>()
                    );
                }
                (Err(alone), Err(loaded)) => assert_eq!(alone.kind(), loaded.kind()),
                (alone, loaded) => panic!(
                    "{}: alone {:?}, together {:?}",
                    path.display(),
                    alone.map(|t| keys(&t)),
                    loaded.as_ref().map(keys)
                ),
            }
        }
        assert_eq!(together[0].as_ref().unwrap().packages.len(), 4);
        assert!(together[1].is_err());
    }
}
