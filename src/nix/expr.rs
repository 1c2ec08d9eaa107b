//! `nix expr` (NIX-1, NIX-3): a Nix expression for `services.hermes-agent.extraPlugins` from a
//! [`NixLock`]: one package per plugin, its output root the plugin directory and its name the
//! plugin key — what the upstream module's `listOf package` and its `plugin.yaml` check take.

use super::lock::{Fetch, NixLock, NixPin};
use crate::resolve::lock::{Lock, LockPackage};

/// Why a lock cannot be expressed for the hermes-agent module.
#[derive(Debug, thiserror::Error)]
pub enum ExprError {
    /// A portable package: the module links only packages with `plugin.yaml` at the root.
    #[error(
        "`{key}` is a portable (plugin.json) package: the hermes-agent NixOS module links only packages with plugin.yaml and __init__.py at their root (its activation fails on anything else); install its skills with services.hermes-agent.hermesHomeFiles and its MCP servers with services.hermes-agent.mcpServers instead, or remove it before `nix expr`"
    )]
    Portable {
        /// Plugin key.
        key: String,
    },
    /// A plugin that is a distribution from the package index, with no Python packages
    /// exported (`--plugins-only`, or a lock without the Python lock): the module installs it
    /// only as one of `extraPythonPackages`.
    #[error(
        "`{key}` is a distribution from the package index ({distribution} {version}): the hermes-agent module installs it with extraPythonPackages (Hermes finds its entry point there), which {why}; export without --plugins-only"
    )]
    Distribution {
        /// Plugin key.
        key: String,
        /// Its distribution.
        distribution: String,
        /// Its version.
        version: String,
        /// Why none are exported.
        why: &'static str,
    },
    /// A Python package locked as a source distribution.
    #[error(
        "Python package `{name}` {version} is locked as a source distribution ({file}): extraPythonPackages are installed from wheels pinned by URL and sha256 only, as building an sdist under Nix needs its build system declared; pin a version with a py3-none-any wheel, package it with buildPythonPackage yourself, or pass --plugins-only"
    )]
    Sdist {
        /// Package name.
        name: String,
        version: String,
        /// The locked file.
        file: String,
    },
    /// A Python package locked as a platform-specific wheel.
    #[error(
        "Python package `{name}` {version} is locked as the platform-specific wheel {file}: only pure-Python wheels (py3-none-any) can be pinned for the module's interpreter this way, as a compiled wheel needs its native libraries patched for Nix; use the nixpkgs package for it (python3Packages.{attr}), or pass --plugins-only"
    )]
    PlatformWheel {
        /// Package name.
        name: String,
        version: String,
        /// The locked file.
        file: String,
        /// Its likely nixpkgs attribute.
        attr: String,
    },
    /// A Python package without a URL and sha256 in the lock.
    #[error(
        "Python package `{name}` {version} has no URL and sha256 in the lock, so Nix cannot fetch it by hash; re-resolve against an index that serves file hashes, or pass --plugins-only"
    )]
    Unpinned {
        /// Package name.
        name: String,
        version: String,
    },
}

/// A Nix string literal.
pub fn string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '$' => out.push_str("\\$"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            other => out.push(other),
        }
    }
    out.push('"');
    out
}

/// The derivation name of a plugin: its key (`category/name` → `category-name`, as a
/// derivation name cannot hold `/`), so the module's `lib.getName` gives it back.
pub fn derivation_name(key: &str) -> String {
    key.replace('/', "-")
}

/// The fetcher call of a pin, its derivation named `name`.
fn fetcher(p: &super::lock::NixPin, name: &str) -> String {
    let rev = string(p.rev.as_deref().unwrap_or(""));
    match &p.fetch {
        Fetch::Github { owner, repo } => format!(
            "pkgs.fetchFromGitHub {{\n        name = {};\n        owner = {};\n        repo = {};\n        rev = {rev};\n        hash = {};\n      }}",
            string(name),
            string(owner),
            string(repo),
            string(&p.hash)
        ),
        // Without submodules, explicitly (fetchgit's default fetches them): the pinned hash
        // is of the tree as installed, which never includes them.
        Fetch::Git { url } => format!(
            "pkgs.fetchgit {{\n        name = {};\n        url = {};\n        rev = {rev};\n        hash = {};\n        fetchSubmodules = false;\n      }}",
            string(name),
            string(url),
            string(&p.hash)
        ),
        Fetch::Wheel { filename, url, .. } => format!(
            "pkgs.fetchurl {{\n        name = {};\n        url = {};\n        hash = {};\n      }}",
            string(filename),
            string(url),
            string(&p.hash)
        ),
        Fetch::Path { path } => format!(
            "builtins.path {{\n        path = {};\n        name = {};\n        sha256 = {};\n      }}",
            string(path),
            string(name),
            string(&p.hash)
        ),
    }
}

/// The Python packages of a lock that go to `extraPythonPackages`: those no part of Hermes
/// core requires (core's are already in the Hermes package's own environment), each a
/// pure-Python wheel pinned by URL and sha256 — anything else is refused, naming it.
pub fn python_packages(lock: &Lock) -> Result<Vec<&LockPackage>, ExprError> {
    let mut out = Vec::new();
    for p in &lock.packages {
        if p.required_by.iter().any(|r| r == "core") {
            continue;
        }
        let file = p.file.clone().unwrap_or_default();
        if p.kind != "wheel" {
            return Err(ExprError::Sdist {
                name: p.name.clone(),
                version: p.version.clone(),
                file,
            });
        }
        if !is_pure_wheel(&file) {
            return Err(ExprError::PlatformWheel {
                name: p.name.clone(),
                version: p.version.clone(),
                file,
                attr: p.name.replace(['.', '_'], "-"),
            });
        }
        if p.url.is_none() || p.sha256.is_none() {
            return Err(ExprError::Unpinned {
                name: p.name.clone(),
                version: p.version.clone(),
            });
        }
        out.push(p);
    }
    Ok(out)
}

/// Whether a wheel file name is pure Python for any platform (ABI `none`, platform `any`).
fn is_pure_wheel(file: &str) -> bool {
    let Some(stem) = file.strip_suffix(".whl") else {
        return false;
    };
    let tags: Vec<&str> = stem.rsplitn(3, '-').collect();
    matches!(tags.as_slice(), [platform, abi, _] if *platform == "any" && *abi == "none")
}

/// The nixpkgs attribute of the lock's interpreter (`3.12.4` → `python312`).
pub fn python_attr(lock: &Lock) -> String {
    let mut parts = lock.python.version.split('.');
    let major = parts.next().unwrap_or("3");
    let minor = parts.next().unwrap_or("");
    format!("python{major}{minor}")
}

/// What [`render`] emits.
#[derive(Debug, Clone, Copy, Default)]
pub struct RenderOptions {
    /// Only `extraPlugins`: no `extraPythonPackages` from the lock.
    pub plugins_only: bool,
}

/// Renders the NixOS module fragment: `extraPlugins` is a list of packages (the module's
/// `listOf package`) whose output root is the plugin directory, each named after its key. A
/// plugin at the repository root is the fetcher's own derivation; one in a subdirectory, or a
/// local path, is a `runCommand` copying it out of the fetched tree. The plugins' own Python
/// packages (see [`python_packages`]) become `extraPythonPackages`, each a wheel fetched by
/// URL and sha256 and installed with `buildPythonPackage` for the interpreter the lock was
/// resolved for.
pub fn render(lock: &NixLock, options: RenderOptions) -> Result<String, ExprError> {
    if let Some(p) = lock.plugins.iter().find(|p| p.is_portable()) {
        return Err(ExprError::Portable { key: p.key.clone() });
    }
    let python = match (&lock.python, options.plugins_only) {
        (Some(python), false) => Some((python_attr(python), python_packages(python)?)),
        _ => None,
    };
    // A distribution is a Python package: it comes with the lock's packages, or not at all.
    for p in &lock.plugins {
        if let Fetch::Wheel {
            distribution,
            version,
            ..
        } = &p.fetch
        {
            let why = match (&python, options.plugins_only) {
                (Some((_, packages)), _) if packages.iter().any(|l| &l.name == distribution) => {
                    continue;
                }
                (_, true) => "--plugins-only leaves out",
                (None, false) => "this lock has none of (no Python lock)",
                (Some(_), false) => "this lock's Python packages do not include",
            };
            return Err(ExprError::Distribution {
                key: p.key.clone(),
                distribution: distribution.clone(),
                version: version.clone(),
                why,
            });
        }
    }
    let mut out = String::from(
        "# Generated by `hermes-plugins nix expr`: pinned Hermes Agent plugins and their Python packages.\n{ pkgs ? import <nixpkgs> { }, ... }:\n",
    );
    if let Some((attr, _)) = &python {
        out.push_str(&format!(
            "let\n  # The interpreter the lock was resolved for: it must be the one the Hermes package runs\n  # on, as the module installs extraPythonPackages into Hermes's own Python.\n  python = pkgs.{attr};\n{WHEEL_FUNCTION}in\n"
        ));
    }
    out.push_str("{\n  services.hermes-agent.extraPlugins = [\n");
    for p in &lock.plugins {
        if let Some(package) = plugin_package(p) {
            out.push_str(&package);
        }
    }
    out.push_str("  ];\n");
    if let Some((_, packages)) = &python {
        out.push_str("  services.hermes-agent.extraPythonPackages = [\n");
        for p in packages {
            out.push_str(&format!(
                "    (wheel {} {} {} {} {})\n",
                string(&p.name),
                string(&p.version),
                string(p.file.as_deref().unwrap_or_default()),
                string(p.url.as_deref().unwrap_or_default()),
                string(p.sha256.as_deref().unwrap_or_default()),
            ));
        }
        out.push_str("  ];\n");
    }
    out.push_str("}\n");
    Ok(out)
}

/// `wheel pname version file url sha256`: one locked wheel, fetched by URL and sha256 and
/// installed for `python` (no tests, no runtime-dependency check: core's packages live in the
/// Hermes package's environment, not in this one's build inputs).
const WHEEL_FUNCTION: &str = "  wheel = pname: version: file: url: sha256:
    python.pkgs.buildPythonPackage {
      inherit pname version;
      format = \"wheel\";
      src = pkgs.fetchurl { name = file; inherit url sha256; };
      doCheck = false;
      dontCheckRuntimeDeps = true;
    };
";

/// One `extraPlugins` element (none for a distribution: it is one of `extraPythonPackages`).
fn plugin_package(p: &NixPin) -> Option<String> {
    if matches!(p.fetch, Fetch::Wheel { .. }) {
        return None;
    }
    let name = derivation_name(&p.key);
    let direct = p.subdir.is_none() && !matches!(p.fetch, Fetch::Path { .. });
    // `pname` makes `lib.getName` exact even for keys like `tool-2`, which a derivation
    // name alone would split into name `tool` and version `2`.
    let pname = string(&name);
    if direct {
        return Some(format!(
            "    ((\n      {}\n    ) // {{ pname = {pname}; }})\n",
            fetcher(p, &name)
        ));
    }
    let from = match &p.subdir {
        Some(sub) => format!("\"$src\"/{}", shell_word(sub)),
        None => "\"$src\"".to_string(),
    };
    Some(format!(
        "    ((pkgs.runCommand {} {{\n      src = {};\n    }} {}) // {{ pname = {pname}; }})\n",
        string(&name),
        fetcher(p, &format!("{name}-source")),
        string(&format!("cp -R {from} \"$out\"")),
    ))
}

/// A subdirectory as one shell word (subdirectories are `[A-Za-z0-9._/-]+`; anything else is
/// single-quoted).
fn shell_word(text: &str) -> String {
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._/-".contains(c))
    {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// A generic expression reading the lock with `builtins.fromJSON` at evaluation time
/// (`lock_path` relative to the expression's file, e.g. `./hermes-plugins.lock.json`); it
/// builds the same packages as [`render`], and throws the same refusals when evaluated.
pub fn render_from_json(lock_path: &str, options: RenderOptions) -> String {
    let path = if lock_path.starts_with('/')
        || lock_path.starts_with("./")
        || lock_path.starts_with("../")
    {
        lock_path.to_string()
    } else {
        format!("./{lock_path}")
    };
    let with_python = if options.plugins_only {
        "false"
    } else {
        "true"
    };
    format!(
        r#"# Generated by `hermes-plugins nix expr --from-json`: plugins pinned by a hermes-plugins Nix lock, and their Python packages.
{{ pkgs ? import <nixpkgs> {{ }}, ... }}:
let
  lock = builtins.fromJSON (builtins.readFile {path});
  withPython = {with_python};
  drvName = pin: builtins.replaceStrings [ "/" ] [ "-" ] pin.key;
  source = pin: name:
    if pin.fetcher == "github" then
      pkgs.fetchFromGitHub {{ inherit name; inherit (pin) owner repo rev hash; }}
    else if pin.fetcher == "git" then
      pkgs.fetchgit {{ inherit name; inherit (pin) url rev hash; fetchSubmodules = false; }}
    else
      builtins.path {{ inherit name; path = pin.path; sha256 = pin.hash; }};
  package = pin:
    let
      name = drvName pin;
      subdir = pin.subdir or null;
    in
    if builtins.substring 0 8 (pin.format or "native") == "portable" then
      throw "hermes-plugins: `${{pin.key}}` is a portable (plugin.json) package: the hermes-agent module links only packages with plugin.yaml at their root"
    else
    (if subdir == null && pin.fetcher != "path" then
      source pin name
    else
      pkgs.runCommand name {{ src = source pin "${{name}}-source"; }}
        ("cp -R \"$src\"" + (if subdir == null then "" else "/" + subdir) + " \"$out\""))
    // {{ pname = name; }};
  # The interpreter the lock was resolved for: it must be the one the Hermes package runs on.
  pythonVersion = builtins.splitVersion lock.python.python.version;
  python = pkgs.${{"python" + builtins.elemAt pythonVersion 0 + builtins.elemAt pythonVersion 1}};
  wheel = p:
    if p.kind != "wheel" then
      throw "hermes-plugins: Python package `${{p.name}}` ${{p.version}} is locked as a source distribution; extraPythonPackages takes pinned wheels only"
    else if builtins.match ".*-none-any\\.whl" (p.file or "") == null then
      throw "hermes-plugins: Python package `${{p.name}}` ${{p.version}} is locked as a platform-specific wheel (${{p.file or "?"}}); only py3-none-any wheels can be pinned this way"
    else if (p.url or null) == null || (p.sha256 or null) == null then
      throw "hermes-plugins: Python package `${{p.name}}` ${{p.version}} has no URL and sha256 in the lock"
    else
      python.pkgs.buildPythonPackage {{
        pname = p.name;
        inherit (p) version;
        format = "wheel";
        src = pkgs.fetchurl {{ name = p.file; inherit (p) url sha256; }};
        doCheck = false;
        dontCheckRuntimeDeps = true;
      }};
  # Core's packages are already in the Hermes package's own environment.
  pluginPackages = builtins.filter (p: !(builtins.elem "core" p.required_by))
    (if withPython && (lock.python or null) != null then lock.python.packages else [ ]);
  # A distribution from the package index is a Python package: it comes with them or not at all.
  distributions = map (pin:
    if builtins.any (p: p.name == pin.distribution) pluginPackages then pin
    else throw "hermes-plugins: `${{pin.key}}` is a distribution from the package index (${{pin.distribution}} ${{pin.version}}): the hermes-agent module installs it with extraPythonPackages, which this export leaves out")
    (builtins.filter (pin: pin.fetcher == "wheel") lock.plugins);
in
{{
  services.hermes-agent.extraPlugins = map package (builtins.filter (pin: pin.fetcher != "wheel") lock.plugins);
  services.hermes-agent.extraPythonPackages = builtins.seq (builtins.deepSeq distributions null) (map wheel pluginPackages);
}}
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pure_wheels_are_none_any() {
        assert!(is_pure_wheel("weatherlib-1.0.0-py3-none-any.whl"));
        assert!(is_pure_wheel("a_b-1.0-1-py2.py3-none-any.whl"));
        assert!(!is_pure_wheel(
            "pydantic_core-2.1-cp312-cp312-manylinux_2_17_x86_64.whl"
        ));
        assert!(!is_pure_wheel("x-1.0-cp312-abi3-any.whl"));
        assert!(!is_pure_wheel("x-1.0.tar.gz"));
    }

    #[test]
    fn strings_escape_interpolation() {
        assert_eq!(string("a\"b\\c${d}"), "\"a\\\"b\\\\c\\${d}\"");
    }
}
