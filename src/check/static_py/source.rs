//! The Python sources of a package: every `.py` file, parsed (`syntax`), with module names
//! and import resolution.
//!
//! Module names are relative to the plugin package: the root `__init__.py` is `""`,
//! `tools.py` is `tools`, `node/client.py` is `node.client`. Relative imports resolve against
//! them; an absolute import is package-local when it names one of these modules, either
//! directly (`import tools`) or through the plugin's own install path
//! (`from plugins.google_meet.tools import x`, `from plugins.web.exa import provider`).
//! Test code (`tests/`, `test/`, `test_*.py`, `*_test.py`, `conftest.py`) is parsed and
//! flagged ([`PyModule::is_test`]): the security scan covers it like any other code, the
//! pattern checks that exempt tests do so only where no package code imports it.

use std::collections::HashMap;

use super::syntax::{Node, Tree};

use crate::diag::{CheckId, Diagnostic};
use crate::located::Pos;
use crate::pkgfs::{PackageRoot, ReadError, read_limited_text};

/// Largest Python file parsed (2 MiB); bigger ones are reported by the security scan.
const MAX_FILE: u64 = 2 * 1024 * 1024;
/// Most files parsed per package.
const MAX_FILES: usize = 2000;

/// One parsed Python module.
pub struct PyModule {
    /// Path relative to the package root, `/`-separated.
    pub rel: String,
    /// Dotted module name relative to the plugin package (`""` for the root `__init__.py`).
    pub dotted: String,
    /// Whether it is a package (`__init__.py`).
    pub is_package: bool,
    /// Whether it is test code (`tests/`, `test_*.py`, `conftest.py`, …).
    pub is_test: bool,
    /// The source text.
    pub text: String,
    /// The syntax tree.
    pub tree: Tree,
}

impl PyModule {
    /// The text of a node.
    pub fn text_of(&self, node: Node<'_>) -> &str {
        self.text
            .get(node.start_byte()..node.end_byte())
            .unwrap_or("")
    }

    /// The whole source line `node` starts on, without its line break.
    pub fn line_text(&self, node: Node<'_>) -> &str {
        let (_, line_start) = self.tree.line_of(node.start_byte());
        let rest = self.text.get(line_start..).unwrap_or("");
        let end = memchr::memchr(b'\n', rest.as_bytes()).unwrap_or(rest.len());
        &rest[..end]
    }

    /// The 1-based position of a node (columns in characters).
    pub fn pos(&self, node: Node<'_>) -> Pos {
        let start = node.start_byte();
        let (row, line_start) = self.tree.line_of(start);
        let column = self
            .text
            .get(line_start..start)
            .map_or(start - line_start, |s| s.chars().count());
        Pos::new(
            u32::try_from(row + 1).unwrap_or(u32::MAX),
            u32::try_from(column + 1).unwrap_or(u32::MAX),
        )
    }

    /// Whether a string node is text for people rather than data the code acts on: a
    /// docstring or other bare string statement, or an argument of print/logging/warnings,
    /// `click.echo`, `print_*` helpers or an exception constructor.
    pub fn is_prose(&self, node: Node<'_>) -> bool {
        let mut current = node;
        while let Some(parent) = current.parent() {
            match parent.kind() {
                "concatenated_string"
                | "parenthesized_expression"
                | "keyword_argument"
                | "pair"
                | "conditional_expression" => current = parent,
                "expression_statement" => return parent.named_child_count() == 1,
                "argument_list" => {
                    let Some(call) = parent.parent() else {
                        return false;
                    };
                    let func = call
                        .child_by_field_name("function")
                        .map(|f| self.text_of(f))
                        .unwrap_or("");
                    return is_message_function(func);
                }
                _ => return false,
            }
        }
        false
    }

    /// `file:line` of a node, for messages.
    pub fn at(&self, node: Node<'_>) -> String {
        format!("{}:{}", self.rel, self.pos(node).line)
    }

    /// The package this module's relative imports start from.
    fn package(&self) -> &str {
        if self.is_package {
            &self.dotted
        } else {
            self.dotted.rsplit_once('.').map_or("", |(p, _)| p)
        }
    }
}

/// Tracks, during a [`Node::preorder`] walk, whether the current node is text for people (a
/// docstring, or inside the arguments of print/logging/an exception) — see
/// [`PyModule::is_prose`] — without walking up to the parents.
#[derive(Debug, Default)]
pub struct ProseTracker {
    stack: Vec<(usize, bool)>,
}

impl ProseTracker {
    /// Updates the context for `node` at `depth` and returns whether `node` is prose.
    pub fn enter(&mut self, module: &PyModule, node: Node<'_>, depth: usize) -> bool {
        while self.stack.last().is_some_and(|(d, _)| *d >= depth) {
            self.stack.pop();
        }
        let inherited = self.stack.last().is_some_and(|(_, p)| *p);
        match node.kind() {
            "expression_statement" => {
                let docstring = node.named_child_count() == 1
                    && node
                        .named_child(0)
                        .is_some_and(|c| matches!(c.kind(), "string" | "concatenated_string"));
                self.stack.push((depth, docstring));
            }
            "call" => {
                let func = node
                    .child_by_field_name("function")
                    .map(|f| module.text_of(f))
                    .unwrap_or("");
                self.stack.push((depth, is_message_function(func)));
            }
            _ => {}
        }
        inherited
    }
}

/// print/logging/warnings/click.echo/`print_*` helpers/exception constructors.
fn is_message_function(func: &str) -> bool {
    let last = func.rsplit('.').next().unwrap_or(func);
    matches!(
        last,
        "print"
            | "debug"
            | "info"
            | "warning"
            | "warn"
            | "error"
            | "exception"
            | "critical"
            | "log"
            | "echo"
            | "secho"
            | "fail"
            | "abort"
    ) || last.ends_with("Error")
        || last.ends_with("Exception")
        || last.starts_with("print_")
        || last.starts_with("_print")
}

/// A function scope found by [`Index`]: index 0 is the module itself.
#[derive(Debug, Clone, Copy)]
pub struct FunctionScope<'t> {
    /// The `function_definition` or `lambda` (`None` for the module).
    pub def: Option<Node<'t>>,
    /// The enclosing scope.
    pub parent: Option<usize>,
    /// Whether the function's source contains an import statement.
    pub has_imports: bool,
}

/// The nodes the pattern checks look at, collected in one walk of a module.
#[derive(Debug, Default)]
pub struct Index<'t> {
    /// Function scopes (0 = module).
    pub scopes: Vec<FunctionScope<'t>>,
    /// Calls, with their enclosing scope.
    pub calls: Vec<(Node<'t>, usize)>,
    /// Assignments and augmented assignments, with their enclosing scope.
    pub assignments: Vec<(Node<'t>, usize)>,
    /// `del` statements, with their enclosing scope.
    pub deletes: Vec<(Node<'t>, usize)>,
    /// String literals, with whether they are prose (docstrings, messages).
    pub strings: Vec<(Node<'t>, bool)>,
    /// Import statements.
    pub imports: Vec<Node<'t>>,
}

impl PyModule {
    /// Walks the module once and collects what the pattern checks need.
    pub fn index(&self) -> Index<'_> {
        let mut index = Index {
            scopes: vec![FunctionScope {
                def: None,
                parent: None,
                has_imports: false,
            }],
            ..Index::default()
        };
        let mut open: Vec<(usize, usize)> = Vec::new();
        let mut prose = ProseTracker::default();
        self.tree.root_node().preorder(|node, depth| {
            while open.last().is_some_and(|(d, _)| *d >= depth) {
                open.pop();
            }
            let scope = open.last().map_or(0, |(_, s)| *s);
            let is_prose = prose.enter(self, node, depth);
            match node.kind() {
                "function_definition" | "lambda" => {
                    index.scopes.push(FunctionScope {
                        def: Some(node),
                        parent: Some(scope),
                        has_imports: node.kind() == "function_definition"
                            && self.text_of(node).contains("import "),
                    });
                    open.push((depth, index.scopes.len() - 1));
                }
                "call" => index.calls.push((node, scope)),
                "assignment" | "augmented_assignment" => index.assignments.push((node, scope)),
                "delete_statement" => index.deletes.push((node, scope)),
                "import_statement" | "import_from_statement" => {
                    index.imports.push(node);
                    return false;
                }
                "string" => {
                    index.strings.push((node, is_prose));
                    return false;
                }
                _ => {}
            }
            true
        });
        index
    }
}

/// A Python file that was not analysed, and why (its contents are undetermined: the
/// security verdict is at least `caution` and registrations are not complete).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unanalysed {
    /// Path relative to the package root.
    pub rel: String,
    /// Why.
    pub reason: String,
}

/// All Python modules of a package.
pub struct SourceSet {
    /// The modules, sorted by path.
    pub modules: Vec<PyModule>,
    /// Python files that exist but were not analysed.
    pub unanalysed: Vec<Unanalysed>,
    by_dotted: HashMap<String, usize>,
    /// The plugin directory's name (for `plugins.<dir>` absolute imports).
    dir_name: String,
}

/// Whether a package-relative path is test code.
pub fn is_test_path(rel: &str) -> bool {
    let mut parts = rel.split('/').peekable();
    while let Some(part) = parts.next() {
        let last = parts.peek().is_none();
        if !last && (part == "tests" || part == "test") {
            return true;
        }
        if last
            && (part == "conftest.py" || part.starts_with("test_") || part.ends_with("_test.py"))
        {
            return true;
        }
    }
    false
}

impl SourceSet {
    /// Parses every `.py` file of the package — test code, dot-directories and vendored
    /// directories included, at any depth (Python can import all of them) — from the
    /// package's one tree walk. A file that cannot be read is an error in `out`; a file too
    /// large to parse, or beyond the file cap, is listed in [`SourceSet::unanalysed`].
    ///
    /// Files are read and parsed on the cores nothing else uses, largest first (one plugin's
    /// own tests can be most of its code, and `validate .` of one plugin would otherwise use
    /// one core); modules, notes and errors come out in path order whatever the threads did.
    pub fn load(root: &PackageRoot, out: &mut Vec<Diagnostic>) -> SourceSet {
        let dir_name = root
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut modules = Vec::new();
        let mut unanalysed = Vec::new();
        let files: Vec<_> = root
            .tree()
            .files_with_extension("py")
            .filter(|e| e.rel.ends_with(".py"))
            .collect();
        if files.len() > MAX_FILES {
            unanalysed.push(Unanalysed {
                rel: ".".into(),
                reason: format!(
                    "the package has {} Python files; only the first {MAX_FILES} were analysed",
                    files.len()
                ),
            });
        }
        let files = &files[..files.len().min(MAX_FILES)];
        let parsed = crate::parallel::map(
            files,
            crate::parallel::spare_cores(),
            Some(crate::parallel::largest_first(files, |e| e.size)),
            |entry| parse_file(&entry.rel, &entry.path),
        );
        for outcome in parsed {
            match outcome {
                Parsed::Module(module) => modules.push(*module),
                Parsed::Skipped(skipped) => unanalysed.push(skipped),
                Parsed::Unreadable(error, skipped) => {
                    out.push(*error);
                    unanalysed.push(skipped);
                }
            }
        }
        let by_dotted = modules
            .iter()
            .enumerate()
            .map(|(i, m)| (m.dotted.clone(), i))
            .collect();
        SourceSet {
            modules,
            by_dotted,
            dir_name,
            unanalysed,
        }
    }

    /// The module with this dotted name.
    pub fn module(&self, dotted: &str) -> Option<usize> {
        self.by_dotted.get(dotted).copied()
    }

    /// The root `__init__.py`.
    pub fn root_module(&self) -> Option<usize> {
        self.module("")
    }

    /// The package a relative import of `level` dots in module `from` refers to
    /// (`None` when it climbs above the plugin package).
    pub fn relative_base(&self, from: usize, level: usize) -> Option<String> {
        let mut base = self.modules[from].package().to_string();
        for _ in 1..level {
            if base.is_empty() {
                return None;
            }
            base = base
                .rsplit_once('.')
                .map_or(String::new(), |(p, _)| p.to_string());
        }
        Some(base)
    }

    /// Joins a package and a dotted suffix.
    pub fn join(base: &str, rest: &str) -> String {
        match (base.is_empty(), rest.is_empty()) {
            (true, _) => rest.to_string(),
            (false, true) => base.to_string(),
            (false, false) => format!("{base}.{rest}"),
        }
    }

    /// Resolves an absolute dotted import to a package-local module name, if it is one.
    pub fn local_absolute(&self, dotted: &str) -> Option<String> {
        if self.by_dotted.contains_key(dotted) && !dotted.is_empty() {
            return Some(dotted.to_string());
        }
        // `plugins.<dir>.rest`, `plugins.<category>.<dir>.rest`, `<dir>.rest`.
        let parts: Vec<&str> = dotted.split('.').collect();
        let at = parts.iter().position(|p| *p == self.dir_name)?;
        if at > 2 {
            return None;
        }
        let rest = parts[at + 1..].join(".");
        // The longest prefix of `rest` that is a module: `from plugins.x.tools import f` names
        // module `tools`; `import plugins.x.tools.f` is rare and resolves to `tools` too.
        let mut candidate = rest.clone();
        loop {
            if self.by_dotted.contains_key(&candidate) {
                return Some(candidate);
            }
            match candidate.rsplit_once('.') {
                Some((p, _)) => candidate = p.to_string(),
                None if !candidate.is_empty() => candidate = String::new(),
                None => return None,
            }
        }
    }
}

/// What became of one `.py` file.
enum Parsed {
    Module(Box<PyModule>),
    /// Too large.
    Skipped(Unanalysed),
    /// Unreadable: an error for the report, and not analysed.
    Unreadable(Box<Diagnostic>, Unanalysed),
}

/// Reads and parses one file (`rel` within the package, at `path`).
fn parse_file(rel: &str, path: &std::path::Path) -> Parsed {
    let rel = rel.to_string();
    let text = match read_limited_text(path, MAX_FILE) {
        Ok(t) => t,
        Err(ReadError::TooLarge { size, limit }) => {
            return Parsed::Skipped(Unanalysed {
                rel,
                reason: format!("{size} bytes is more than the {limit} analysed"),
            });
        }
        Err(e) => {
            let mut d = Diagnostic::error(
                CheckId::SecurityScan,
                &rel,
                e.pos(),
                format!("unreadable-source: {rel} cannot be analysed: it {e}"),
            )
            .hint("Every Python file of a package must be readable UTF-8 source; Python cannot import it otherwise either.");
            if let Some(v) = e.value() {
                d = d.value(v);
            }
            return Parsed::Unreadable(
                Box::new(d),
                Unanalysed {
                    rel,
                    reason: format!("it {e}"),
                },
            );
        }
    };
    let tree = Tree::parse(&text);
    let (dotted, is_package) = module_name(&rel);
    Parsed::Module(Box::new(PyModule {
        is_test: is_test_path(&rel),
        rel,
        dotted,
        is_package,
        text,
        tree,
    }))
}

fn module_name(rel: &str) -> (String, bool) {
    let without = rel.trim_end_matches(".py");
    let mut parts: Vec<&str> = without.split('/').collect();
    let is_package = parts.last() == Some(&"__init__");
    if is_package {
        parts.pop();
    }
    (parts.join("."), is_package)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_paths() {
        for t in [
            "tests/x.py",
            "a/tests/b.py",
            "test_x.py",
            "a/x_test.py",
            "conftest.py",
            "test/y.py",
        ] {
            assert!(is_test_path(t), "{t}");
        }
        for t in ["tools.py", "latest.py", "contest.py", "testing.py"] {
            assert!(!is_test_path(t), "{t}");
        }
    }

    /// Files parsed on several threads, largest first, still come out in path order: the
    /// modules, what was not analysed, and the errors (the report depends on it).
    #[test]
    fn parallel_parse_keeps_path_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut expected = Vec::new();
        for i in 0..40 {
            // Sizes that do not follow the names, so largest-first is not path order.
            let body = "x = 1\n".repeat((i * 7919) % 97 + 1);
            let rel = format!("m{i:02}.py");
            std::fs::write(dir.path().join(&rel), body).unwrap();
            expected.push(rel);
        }
        std::fs::write(dir.path().join("m05b.py"), b"x = '\xff'\n").unwrap();
        std::fs::write(dir.path().join("m07b.py"), b"\xfe\n").unwrap();
        let big = "#".repeat(usize::try_from(MAX_FILE).unwrap() + 1);
        std::fs::write(dir.path().join("m03b.py"), big).unwrap();
        let root = PackageRoot::open(dir.path()).unwrap();
        let mut errors = Vec::new();
        let set = SourceSet::load(&root, &mut errors);
        let rels: Vec<&str> = set.modules.iter().map(|m| m.rel.as_str()).collect();
        assert_eq!(rels, expected);
        let skipped: Vec<&str> = set.unanalysed.iter().map(|u| u.rel.as_str()).collect();
        assert_eq!(skipped, ["m03b.py", "m05b.py", "m07b.py"]);
        let files: Vec<&str> = errors.iter().map(|d| d.file.as_str()).collect();
        assert_eq!(files, ["m05b.py", "m07b.py"]);
        for (i, m) in set.modules.iter().enumerate() {
            assert_eq!(m.dotted, format!("m{i:02}"));
            assert!(!m.tree.has_error(), "{}", m.rel);
        }
    }

    /// The whole line a node starts on: the first line (ended by `\r\n`: the `\r` stays, the
    /// callers trim), a middle one, and an unterminated last line.
    #[test]
    fn line_text_is_the_node_s_whole_line() {
        let text = "import os\r\nx = os.environ['HOME']  # home\n\ny = f(\n    2)".to_string();
        let module = PyModule {
            rel: "m.py".into(),
            dotted: "m".into(),
            is_package: false,
            is_test: false,
            tree: Tree::parse(&text),
            text,
        };
        let mut lines = Vec::new();
        module.tree.root_node().preorder(|node, _| {
            if matches!(node.kind(), "string" | "integer" | "import_statement") {
                lines.push((module.pos(node).line, module.line_text(node)));
            }
            true
        });
        assert_eq!(
            lines,
            [
                (1, "import os\r"),
                (2, "x = os.environ['HOME']  # home"),
                (5, "    2)")
            ]
        );
    }

    #[test]
    fn module_names() {
        assert_eq!(module_name("__init__.py"), (String::new(), true));
        assert_eq!(module_name("tools.py"), ("tools".into(), false));
        assert_eq!(module_name("node/__init__.py"), ("node".into(), true));
        assert_eq!(module_name("node/client.py"), ("node.client".into(), false));
    }
}
