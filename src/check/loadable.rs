//! VAL-6: a native package has something to load.

use crate::diag::{CheckId, Diagnostic};
use crate::located::Pos;
use crate::package::manifest::Manifest;
use crate::pkgfs::{Entry, PackageRoot};

/// Reports a package with neither `__init__.py`, `desktop/plugin.js`, `plugin.json`, nor a
/// language pack, and explains the wrapper a pip-layout package needs.
pub fn check(root: &PackageRoot, m: &Manifest, file: &str, out: &mut Vec<Diagnostic>) {
    if root.is_file("__init__.py")
        || root.is_file("desktop/plugin.js")
        || root.is_file("plugin.json")
        || (!m.provides_locales.is_empty() && root.is_dir("locales"))
    {
        return;
    }
    if let Ok(Entry::Dir(_)) | Ok(Entry::File(_)) = root.resolve("__init__.py") {
        return;
    }
    let pip_layout = find_pip_package(root);
    let mut d = Diagnostic::error(
        CheckId::Loadable,
        file,
        Pos::START,
        format!(
            "nothing to load: {file} has no __init__.py, desktop/plugin.js or plugin.json next to it, and no language pack"
        ),
    );
    d = match pip_layout {
        Some(pkg) => d.hint(format!(
            "This looks like a pip-layout package ({pkg}/__init__.py). Hermes loads directory plugins: add a root __init__.py containing `from .{} import register`, or move the package up.",
            pkg.rsplit('/').next().unwrap_or(&pkg)
        )),
        None => d.hint("Add __init__.py with `def register(ctx): ...` (or desktop/plugin.js, or provides_locales with a locales/ directory)."),
    };
    out.push(d);
}

/// A Python package one or two levels down (`<pkg>/__init__.py` or `src/<pkg>/__init__.py`).
fn find_pip_package(root: &PackageRoot) -> Option<String> {
    for base in ["src", ""] {
        let Ok(names) = root.list_dir(if base.is_empty() { "." } else { base }) else {
            continue;
        };
        for name in names {
            if name.starts_with('.') || name == "tests" {
                continue;
            }
            let dir = if base.is_empty() {
                name.clone()
            } else {
                format!("{base}/{name}")
            };
            if root.is_file(&format!("{dir}/__init__.py")) {
                return Some(dir);
            }
        }
    }
    None
}
