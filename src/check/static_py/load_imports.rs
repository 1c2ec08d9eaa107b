//! The outside modules a plugin imports while Hermes loads it: what must be importable in the
//! agent's environment (Hermes's own packages, the standard library, the plugin's declared
//! dependencies) or `import hermes_plugins.<key>` raises and the plugin does not load.
//!
//! Followed from the root `__init__.py`: every import statement that runs when a module is
//! imported — at module level or in a class body, not inside a `def` or `lambda` — and, for
//! package-local imports, the module imported, transitively. Left out: imports guarded by a
//! `try` whose handler catches the failure (`ImportError`, `ModuleNotFoundError`,
//! `Exception`, `BaseException`, a bare `except`), `from __future__`, and relative imports
//! (package-local by construction). What is reported is the top-level name (`yaml` for
//! `import yaml.constructor`), with the first statement that needs it.

use std::collections::{BTreeMap, HashSet};

use super::syntax::Node;

use super::scope::{self, Imported};
use super::source::{Index, SourceSet};
use crate::located::Pos;

/// An outside module imported while the plugin loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadImport {
    /// The top-level module name (`yaml`).
    pub top: String,
    /// The module file of the first import statement that needs it.
    pub file: String,
    /// Its position.
    pub pos: Pos,
}

/// Exceptions whose handler makes a failing import harmless.
const CATCHES_IMPORT_ERRORS: &[&str] = &[
    "ImportError",
    "ModuleNotFoundError",
    "Exception",
    "BaseException",
];

/// The outside modules imported while the package loads, sorted by name (see the module
/// documentation). Empty when there is no root `__init__.py`.
pub fn find(set: &SourceSet, indexes: &[Index<'_>]) -> Vec<LoadImport> {
    let Some(root) = set.root_module() else {
        return Vec::new();
    };
    let mut found: BTreeMap<String, LoadImport> = BTreeMap::new();
    let mut seen: HashSet<usize> = HashSet::from([root]);
    let mut queue = vec![root];
    while let Some(m) = queue.pop() {
        let module = &set.modules[m];
        for stmt in &indexes[m].imports {
            if !runs_at_import(*stmt) || guarded(module, *stmt) || is_future(module, *stmt) {
                continue;
            }
            for (_, target) in scope::resolve_import(set, m, *stmt) {
                let mut local = Vec::new();
                match target {
                    Imported::Module(id) => local.push(id),
                    Imported::Attr(id, attr) => {
                        local.push(id);
                        let dotted = SourceSet::join(&set.modules[id].dotted, &attr);
                        local.extend(set.module(&dotted));
                    }
                    Imported::External(dotted) => {
                        let top = dotted.split('.').next().unwrap_or_default().to_string();
                        if !top.is_empty() {
                            found.entry(top.clone()).or_insert_with(|| LoadImport {
                                top,
                                file: module.rel.clone(),
                                pos: module.pos(*stmt),
                            });
                        }
                    }
                    Imported::Unresolved => {}
                }
                for id in local {
                    // Importing `a.b` runs `a/__init__.py` first.
                    let mut chain = vec![id];
                    let mut dotted = set.modules[id].dotted.clone();
                    while let Some((parent, _)) = dotted.rsplit_once('.') {
                        dotted = parent.to_string();
                        chain.extend(set.module(&dotted));
                    }
                    for id in chain {
                        if seen.insert(id) {
                            queue.push(id);
                        }
                    }
                }
            }
        }
    }
    found.into_values().collect()
}

/// Whether a statement runs when its module is imported: not inside a function or lambda.
fn runs_at_import(stmt: Node<'_>) -> bool {
    let mut node = stmt.parent();
    while let Some(n) = node {
        if matches!(n.kind(), "function_definition" | "lambda") {
            return false;
        }
        node = n.parent();
    }
    true
}

/// Whether an import sits in the body of a `try` one of whose handlers catches an import
/// failure (an import in the handler itself or in `else`/`finally` is not protected by it).
fn guarded(module: &super::source::PyModule, stmt: Node<'_>) -> bool {
    let mut child = stmt;
    let mut node = stmt.parent();
    while let Some(n) = node {
        if n.kind() == "try_statement"
            && n.child_by_field_name("body")
                .is_some_and(|body| body.id() == child.id())
            && catches_import_errors(module, n)
        {
            return true;
        }
        child = n;
        node = n.parent();
    }
    false
}

fn catches_import_errors(module: &super::source::PyModule, try_stmt: Node<'_>) -> bool {
    try_stmt
        .named_children()
        .filter(|c| c.kind() == "except_clause")
        .any(|clause| {
            // `except:` has no named child before its block; otherwise the first named child
            // is the exception expression (`ImportError`, `(A, B)`, `ImportError as e`).
            let Some(first) = clause.named_children().next() else {
                return true;
            };
            if first.kind() == "block" {
                return true;
            }
            let text = module.text_of(first);
            CATCHES_IMPORT_ERRORS.iter().any(|name| {
                text.split(|ch: char| !(ch.is_alphanumeric() || ch == '_' || ch == '.'))
                    .any(|word| word.rsplit('.').next() == Some(name))
            })
        })
}

fn is_future(module: &super::source::PyModule, stmt: Node<'_>) -> bool {
    stmt.kind() == "future_import_statement"
        || stmt
            .child_by_field_name("module_name")
            .is_some_and(|m| module.text_of(m) == "__future__")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imports_of(files: &[(&str, &str)]) -> Vec<String> {
        let dir = super::super::test_package(files);
        let root = crate::pkgfs::PackageRoot::open(dir.path()).unwrap();
        let mut notes = Vec::new();
        let set = SourceSet::load(&root, None, &mut notes);
        let indexes: Vec<Index<'_>> = set.modules.iter().map(|m| m.index()).collect();
        find(&set, &indexes).into_iter().map(|i| i.top).collect()
    }

    #[test]
    fn follows_module_level_imports_from_the_root() {
        let found = imports_of(&[
            (
                "__init__.py",
                "from __future__ import annotations\nimport os.path\nfrom .client import Client\nimport yaml\n\ndef register(ctx):\n    import lazy_only\n",
            ),
            (
                "client.py",
                "import httpx\ntry:\n    import optional_fast\nexcept ImportError:\n    optional_fast = None\n\nclass C:\n    import in_class_body\n",
            ),
            ("scripts/tool.py", "import never_imported\n"),
        ]);
        assert_eq!(found, ["httpx", "in_class_body", "os", "yaml"]);
    }

    #[test]
    fn an_import_in_the_handler_is_not_guarded() {
        let found = imports_of(&[(
            "__init__.py",
            "try:\n    from . import sdk\nexcept ImportError:\n    import sdk_fallback\ntry:\n    import guarded_by_exception\nexcept (ValueError, Exception):\n    pass\ntry:\n    import not_guarded\nexcept ValueError:\n    pass\n",
        )]);
        assert_eq!(found, ["not_guarded", "sdk_fallback"]);
    }
}
