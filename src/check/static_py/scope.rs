//! Module scopes: what each top-level name of a module is bound to, without running anything.
//!
//! Bindings come from `def`, `class`, assignments and imports at module level, including those
//! nested in module-level `if`/`try`/`with` blocks (where a name bound earlier keeps its first
//! binding, so `try: from .fast import f / except ImportError: f = None` still finds the real
//! `f`). Imports are resolved to package-local modules where possible (see `source`).

use std::collections::HashMap;

use super::syntax::Node;

use super::source::SourceSet;

/// Index of a module in the [`SourceSet`].
pub type ModId = usize;

/// What an import statement binds a name to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Imported {
    /// A package-local module.
    Module(ModId),
    /// A name inside a package-local module (`from .tools import calculate`).
    Attr(ModId, String),
    /// Something outside the package, by dotted path (`run_agent.AIAgent`, `os.path`).
    External(String),
    /// A relative import that leaves the package or names no module.
    Unresolved,
}

/// A module-level binding.
#[derive(Debug, Clone, Copy)]
pub enum Binding<'t> {
    /// `NAME = <expression>`: the expression.
    Value(Node<'t>),
    /// `NAME = …` where the value cannot be tied to one expression (tuple unpacking, `+=`).
    Opaque,
    /// `def NAME`.
    Def(Node<'t>),
    /// `class NAME`.
    Class(Node<'t>),
    /// An import; index into [`Scope::imports`].
    Import(usize),
}

/// The top-level names of one module.
#[derive(Debug, Default)]
pub struct Scope<'t> {
    /// Name → binding.
    pub names: HashMap<String, Binding<'t>>,
    /// Import targets referred to by [`Binding::Import`].
    pub imports: Vec<Imported>,
    /// Modules star-imported (`from .x import *`).
    pub star: Vec<ModId>,
}

/// Scopes of every module of a [`SourceSet`].
pub struct Scopes<'t> {
    /// One scope per module, by [`ModId`].
    pub modules: Vec<Scope<'t>>,
}

impl<'t> Scopes<'t> {
    /// Builds the scopes of every module.
    pub fn build(set: &'t SourceSet) -> Scopes<'t> {
        let mutated = mutated_names(set);
        let modules = (0..set.modules.len())
            .map(|m| {
                let mut scope = Scope::default();
                let root = set.modules[m].tree.root_node();
                collect(set, m, root, false, &mut scope);
                // A collection filled in at run time (`TOOLS.append(...)`, `REGISTRY[k] = v`,
                // a decorator registry) is not known from its literal.
                for (name, binding) in scope.names.iter_mut() {
                    if let Binding::Value(node) = binding
                        && mutated.contains(name.as_str())
                        && matches!(
                            node.kind(),
                            "list"
                                | "dictionary"
                                | "set"
                                | "call"
                                | "list_comprehension"
                                | "dictionary_comprehension"
                        )
                    {
                        *binding = Binding::Opaque;
                    }
                }
                scope
            })
            .collect();
        Scopes { modules }
    }
}

/// The in-place mutations `mutated_names` looks for, as first written: the word boundary
/// makes the match start at a whole identifier, the group is that identifier.
#[cfg(test)]
static MUTATION: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"\b([A-Za-z_][A-Za-z0-9_]*)\s*(?:\.\s*(?:append|extend|insert|update|add|setdefault|__setitem__|pop|remove|clear)\s*\(|\[[^\]\n]*\]\s*=[^=]|(?:\+|\|)=)",
    )
    .expect("valid regex")
});

/// The methods whose call mutates the object in place.
const MUTATING_METHODS: [&str; 10] = [
    "append",
    "extend",
    "insert",
    "update",
    "add",
    "setdefault",
    "__setitem__",
    "pop",
    "remove",
    "clear",
];

/// One character a Unicode `\w` matches (what `\b` looks at).
static WORD_CHAR: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r"^\w$").expect("valid regex"));

/// The first position from `at` that is not white space (Unicode's, as the regex's `\s`).
fn skip_space(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    let mut at = at;
    loop {
        match bytes.get(at) {
            Some(b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c') => at += 1,
            Some(b) if *b >= 0x80 => match text[at..].chars().next() {
                Some(c) if c.is_whitespace() => at += c.len_utf8(),
                _ => return at,
            },
            _ => return at,
        }
    }
}

/// The last position up to `at` that white space (Unicode's) does not precede.
fn skip_space_back(text: &str, at: usize) -> usize {
    let mut at = at;
    while let Some(c) = text[..at].chars().next_back()
        && c.is_whitespace()
    {
        at -= c.len_utf8();
    }
    at
}

/// Where what follows an identifier ending at `at` ends, when it is a call of a
/// [`MUTATING_METHODS`] method (`\s*\.\s*method\s*\(`), a subscript assignment
/// (`\s*\[[^\]\n]*\]\s*=[^=]`), `+=` or `|=`.
fn mutation_tail(text: &str, at: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let at = skip_space(text, at);
    match bytes.get(at)? {
        b'.' => {
            let name_at = skip_space(text, at + 1);
            MUTATING_METHODS.iter().find_map(|method| {
                text[name_at..].starts_with(method).then_some(())?;
                let paren = skip_space(text, name_at + method.len());
                (bytes.get(paren) == Some(&b'(')).then_some(paren + 1)
            })
        }
        b'[' => {
            let close = at + 1 + memchr::memchr2(b']', b'\n', &bytes[at + 1..])?;
            if bytes[close] != b']' {
                return None;
            }
            let equals = skip_space(text, close + 1);
            (bytes.get(equals) == Some(&b'=')).then_some(())?;
            let next = text[equals + 1..].chars().next()?;
            (next != '=').then_some(equals + 1 + next.len_utf8())
        }
        b'+' | b'|' => (bytes.get(at + 1) == Some(&b'=')).then_some(at + 2),
        _ => None,
    }
}

/// The leftmost match from `at` of `[A-Za-z_][A-Za-z0-9_]*` + [`mutation_tail`], as
/// `(start, end)`: what `regex::Regex::find_at` of that pattern gives (the test compares
/// them).
///
/// By hand because the regex's lazy DFA starts at every identifier of every parsed module
/// (3.6 % of a cold `validate`'s instructions on the real corpus; this takes less than half
/// of that). Every match has a mark — the `.`, `[`, or the `+`/`|` of `+=`/`|=` — right after
/// its identifier and white space, and marks are far fewer than identifiers: found with
/// `memchr`, each is checked forward (the tail) and backward (the identifier). A match's identifier and white space hold no
/// mark, so taking the marks in order takes the matches in the order of their starts. An
/// identifier is as long as its run of identifier bytes (the tail cannot start with one) and
/// starts at the run's first letter or `_` at or after `at`.
fn find_mutation(text: &str, at: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut from = at;
    while let Some(found) = memchr::memchr3(b'.', b'[', b'=', &bytes[from.min(bytes.len())..]) {
        let mut mark = from + found;
        from = mark + 1;
        if bytes[mark] == b'=' {
            match mark.checked_sub(1).map(|m| (m, bytes[m])) {
                Some((m, b'+' | b'|')) if m >= at => mark = m,
                _ => continue,
            }
        }
        let Some(tail_end) = mutation_tail(text, mark) else {
            continue;
        };
        let ident_end = skip_space_back(text, mark);
        let run_start = bytes[..ident_end]
            .iter()
            .rposition(|b| !super::reach::is_word_byte(*b))
            .map_or(0, |i| i + 1);
        let Some(start) = (run_start.max(at)..ident_end)
            .find(|i| bytes[*i].is_ascii_alphabetic() || bytes[*i] == b'_')
        else {
            continue;
        };
        return Some((start, tail_end));
    }
    None
}

/// The names `\b` + the pattern of [`find_mutation`] finds in `text`, in order — exactly
/// what the capturing regex with the boundary gives. A match that starts inside a word (the
/// character before it is a `\w`) is one the boundary refuses; no position up to the end of
/// that word can start one either, so the search goes on from there.
fn mutations(text: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut at = 0;
    while let Some((start, end)) = find_mutation(text, at) {
        let inside_word = text[..start]
            .chars()
            .next_back()
            .is_some_and(|c| WORD_CHAR.is_match(c.encode_utf8(&mut [0; 4])));
        if inside_word {
            let rest = &text[start..];
            let word_end = rest
                .char_indices()
                .find(|(_, c)| !WORD_CHAR.is_match(c.encode_utf8(&mut [0; 4])))
                .map_or(rest.len(), |(i, _)| i);
            at = start + word_end.max(1);
            continue;
        }
        let matched = &text[start..end];
        let name_end = matched
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(matched.len());
        names.push(&matched[..name_end]);
        at = end;
    }
    names
}

/// Names that some module of the package mutates in place.
fn mutated_names(set: &SourceSet) -> std::collections::HashSet<String> {
    let mut out = std::collections::HashSet::new();
    for module in &set.modules {
        for name in mutations(&module.text) {
            out.insert(name.to_string());
        }
    }
    out
}

fn bind<'t>(scope: &mut Scope<'t>, name: &str, binding: Binding<'t>, nested: bool) {
    if nested && scope.names.contains_key(name) {
        return;
    }
    scope.names.insert(name.to_string(), binding);
}

fn collect<'t>(set: &'t SourceSet, m: ModId, block: Node<'t>, nested: bool, scope: &mut Scope<'t>) {
    let module = &set.modules[m];
    for stmt in block.named_children() {
        match stmt.kind() {
            "function_definition" | "class_definition" => bind_def(
                module.text_of(stmt.child_by_field_name("name").unwrap_or(stmt)),
                stmt,
                nested,
                scope,
            ),
            "decorated_definition" => {
                if let Some(def) = stmt.child_by_field_name("definition") {
                    let name = def
                        .child_by_field_name("name")
                        .map(|n| module.text_of(n))
                        .unwrap_or("");
                    bind_def(name, def, nested, scope);
                }
            }
            "expression_statement" => {
                for expr in stmt.named_children() {
                    if expr.kind() == "assignment" || expr.kind() == "augmented_assignment" {
                        bind_assignment(set, m, expr, nested, scope);
                    }
                }
            }
            "import_statement" | "import_from_statement" => {
                for (name, target) in resolve_import(set, m, stmt) {
                    if name == "*" {
                        if let Imported::Module(id) = target {
                            scope.star.push(id);
                        }
                        continue;
                    }
                    scope.imports.push(target);
                    let index = scope.imports.len() - 1;
                    bind(scope, &name, Binding::Import(index), nested);
                }
            }
            "if_statement" | "try_statement" | "with_statement" | "for_statement"
            | "while_statement" => {
                for child in stmt.named_children() {
                    match child.kind() {
                        "block" => collect(set, m, child, true, scope),
                        "elif_clause" | "else_clause" | "except_clause" | "finally_clause" => {
                            for b in child.named_children().filter(|b| b.kind() == "block") {
                                collect(set, m, b, true, scope);
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}

fn bind_def<'t>(name: &str, def: Node<'t>, nested: bool, scope: &mut Scope<'t>) {
    if name.is_empty() {
        return;
    }
    let binding = if def.kind() == "class_definition" {
        Binding::Class(def)
    } else {
        Binding::Def(def)
    };
    bind(scope, name, binding, nested);
}

fn bind_assignment<'t>(
    set: &'t SourceSet,
    m: ModId,
    assign: Node<'t>,
    nested: bool,
    scope: &mut Scope<'t>,
) {
    let module = &set.modules[m];
    let (Some(left), right) = (
        assign.child_by_field_name("left"),
        assign.child_by_field_name("right"),
    ) else {
        return;
    };
    if assign.kind() == "augmented_assignment" {
        if left.kind() == "identifier" {
            bind(scope, module.text_of(left), Binding::Opaque, nested);
        }
        return;
    }
    match (left.kind(), right) {
        ("identifier", Some(right)) => {
            // `A = B = value`: bind every name in the chain to the final value.
            let mut value = right;
            while value.kind() == "assignment" {
                if let Some(inner_left) = value.child_by_field_name("left")
                    && inner_left.kind() == "identifier"
                {
                    bind(scope, module.text_of(inner_left), Binding::Opaque, nested);
                }
                match value.child_by_field_name("right") {
                    Some(r) => value = r,
                    None => break,
                }
            }
            bind(scope, module.text_of(left), Binding::Value(value), nested);
        }
        ("identifier", None) => {}
        ("pattern_list" | "tuple_pattern" | "list_pattern", Some(right))
            if matches!(right.kind(), "expression_list" | "tuple" | "list")
                && right.named_child_count() == left.named_child_count() =>
        {
            for (l, r) in left.named_children().zip(right.named_children()) {
                if l.kind() == "identifier" {
                    bind(scope, module.text_of(l), Binding::Value(r), nested);
                }
            }
        }
        _ => {
            for l in left.named_children() {
                if l.kind() == "identifier" {
                    bind(scope, module.text_of(l), Binding::Opaque, nested);
                }
            }
        }
    }
}

/// The names an import statement binds and what each refers to (`*` for a star import).
pub fn resolve_import(set: &SourceSet, m: ModId, stmt: Node<'_>) -> Vec<(String, Imported)> {
    let module = &set.modules[m];
    let mut out = Vec::new();
    if stmt.kind() == "import_statement" {
        for name in stmt.children_by_field_name("name") {
            let (dotted, alias) = split_alias(module, name);
            match alias {
                Some(alias) => {
                    let target = match set.local_absolute(&dotted) {
                        Some(local) => set
                            .module(&local)
                            .map_or(Imported::Unresolved, Imported::Module),
                        None => Imported::External(dotted.clone()),
                    };
                    out.push((alias, target));
                }
                None => {
                    // `import a.b.c` binds `a`.
                    let top = dotted.split('.').next().unwrap_or("").to_string();
                    let target = match set.local_absolute(&top) {
                        Some(local) => set
                            .module(&local)
                            .map_or(Imported::Unresolved, Imported::Module),
                        None => Imported::External(top.clone()),
                    };
                    out.push((top, target));
                }
            }
        }
        return out;
    }
    // import_from_statement
    let Some(source) = stmt.child_by_field_name("module_name") else {
        return out;
    };
    // The package-local module the names come from, or the external dotted path.
    let base: Result<String, String> = if source.kind() == "relative_import" {
        let text = module.text_of(source);
        let level = text.chars().take_while(|c| *c == '.').count();
        let rest = text[level..].to_string();
        match set.relative_base(m, level) {
            Some(base) => Ok(SourceSet::join(&base, &rest)),
            None => {
                for name in stmt.children_by_field_name("name") {
                    let (dotted, alias) = split_alias(module, name);
                    out.push((alias.unwrap_or(dotted), Imported::Unresolved));
                }
                return out;
            }
        }
    } else {
        let dotted = module.text_of(source).to_string();
        match set.local_absolute(&dotted) {
            Some(local) => Ok(local),
            None => Err(dotted),
        }
    };
    let mut wildcard = false;
    for child in stmt.named_children() {
        if child.kind() == "wildcard_import" {
            wildcard = true;
        }
    }
    if wildcard {
        if let Ok(base) = &base
            && let Some(id) = set.module(base)
        {
            out.push(("*".to_string(), Imported::Module(id)));
        }
        return out;
    }
    for name in stmt.children_by_field_name("name") {
        let (dotted, alias) = split_alias(module, name);
        let bound = alias.unwrap_or_else(|| dotted.clone());
        let target = match &base {
            Ok(base) => {
                let full = SourceSet::join(base, &dotted);
                if let Some(id) = set.module(&full) {
                    Imported::Module(id)
                } else if let Some(id) = set.module(base) {
                    Imported::Attr(id, dotted.clone())
                } else {
                    Imported::Unresolved
                }
            }
            Err(external) => Imported::External(format!("{external}.{dotted}")),
        };
        out.push((bound, target));
    }
    out
}

fn split_alias(module: &super::source::PyModule, name: Node<'_>) -> (String, Option<String>) {
    if name.kind() == "aliased_import" {
        let dotted = name
            .child_by_field_name("name")
            .map(|n| module.text_of(n))
            .unwrap_or("");
        let alias = name
            .child_by_field_name("alias")
            .map(|n| module.text_of(n).to_string());
        (dotted.to_string(), alias)
    } else {
        (module.text_of(name).to_string(), None)
    }
}

#[cfg(test)]
mod tests {
    use super::{MUTATION, mutations};

    /// The names the capture group gives, the way `mutated_names` used to take them.
    fn by_captures(text: &str) -> Vec<String> {
        MUTATION
            .captures_iter(text)
            .filter_map(|c| c.get(1).map(|m| m.as_str().to_string()))
            .collect()
    }

    #[test]
    fn the_hand_checked_boundary_finds_what_the_regex_did() {
        let samples = [
            "TOOLS.append(x)\nregistry . update ( {} )\n",
            "a[1] = 2\nb[k]==3\nc += [1]\nd |= {2}\n_e9.pop()\n",
            "x.y.append(1)\nobj.attr[0] = 1\n9abc.add(1)\n\u{e9}a.add(1)\n",
            "if a[i] == b: pass\nitems.__setitem__(k, v)\nfoo  .  clear  ()\n",
            "s = 'q.append(1)'\n# cache[key] = value\nlst+=1\nl|=m\n",
            "\u{2040}x.add(1) x\u{301}y.add(1) \u{a0}z.pop() \u{e9}\u{e9}.add(1) _\u{e9}b.add(1)",
        ];
        for text in samples {
            assert_eq!(mutations(text), by_captures(text), "{text:?}");
        }
        // Every method the regex names, written out here and not taken from the list under
        // test: a method dropped from `MUTATING_METHODS` fails this.
        let every: String =
            "append extend insert update add setdefault __setitem__ pop remove clear"
                .split(' ')
                .map(|m| format!("v.{m}(1)\n"))
                .collect();
        assert_eq!(mutations(&every), by_captures(&every));
        assert_eq!(mutations(&every).len(), 10);
        // Random soup, weighted towards the pattern's characters, with non-ASCII word
        // characters (letters, a combining mark, a connector) and spaces.
        let alphabet: Vec<char> =
            "ab_9 .[]=+|(\n\tappendupdate\u{e9}\u{301}\u{2040}\u{a0}\u{2003}\u{4e2d}"
                .chars()
                .collect();
        // xorshift64: the same texts on every run.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut pick = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..5_000 {
            let text: String = (0..40).map(|_| alphabet[pick(alphabet.len())]).collect();
            assert_eq!(mutations(&text), by_captures(&text), "{text:?}");
        }
        // Random sequences of the pattern's own pieces: every method name, the operators,
        // white space of several kinds.
        let pieces: Vec<&str> = super::MUTATING_METHODS
            .iter()
            .copied()
            .chain([
                "popx", "x", "_", "9", ".", "(", "[", "]", "=", "==", "+", "|", " ", "\t", "\n",
                "\u{a0}", "\u{2003}", "\u{e9}", "\u{4e2d}",
            ])
            .collect();
        for _ in 0..20_000 {
            let text: String = (0..12).map(|_| pieces[pick(pieces.len())]).collect();
            assert_eq!(mutations(&text), by_captures(&text), "{text:?}");
        }
    }
}
