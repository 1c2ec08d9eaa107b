//! VAL-14 `no-core-override`: plugin code must not rebind Hermes internals at runtime.
//!
//! A name imported from a Hermes module (`run_agent`, `agent`, `tools`, `hermes_cli`, `gateway`,
//! …; see `known::CORE_MODULES`) roots a "core path". Reported, each as `target (file:line)`:
//! assignments, augmented assignments and `del` of attributes or items under a core path;
//! `setattr`/`delattr` on one; mutating methods (`update`, `setdefault`, `pop`, `append`, …)
//! on a core attribute; writes to `sys.modules`; `unittest.mock.patch` of Hermes paths
//! (`patch("run_agent…")`, `patch.object(core, …)`, `patch.dict(core.X, …)`); and calls to a
//! package-local helper that mutates its parameter, with a core module as the argument.
//! Local variables shadowing an imported name are respected.

use std::collections::{HashMap, HashSet};

use super::syntax::Node;

use crate::known;

use super::eval::{Evaluator, Val};
use super::scope::{Binding, Imported, ModId};
use super::source::{Index, PyModule};

/// One core override.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    /// The Hermes internal affected, e.g. `run_agent.AIAgent.run_conversation`.
    pub target: String,
    /// What the code does (`assignment`, `setattr`, `sys.modules write`, …).
    pub how: &'static str,
    /// File of the statement.
    pub file: String,
    /// Its position.
    pub pos: crate::located::Pos,
}

const MUTATORS: &[&str] = &[
    "update",
    "setdefault",
    "pop",
    "popitem",
    "clear",
    "append",
    "extend",
    "insert",
    "remove",
    "__setitem__",
    "__delitem__",
    "add",
    "discard",
];

fn is_core(path: &str) -> bool {
    let top = path.split(['.', '[']).next().unwrap_or("");
    known::CORE_MODULES.contains(&top)
}

/// Whether an override `target` is known to rebind Hermes itself — what installing asks
/// consent for. A core path always is; a `sys.modules` write only when its key is a literal
/// naming a Hermes module (`sys.modules["agent.context_engine"]`): plugins commonly register
/// their own package under another name (`sys.modules["brain"]`, `sys.modules[PKG]`), which
/// the check still reports (the catalog does not admit it) but which patches nothing of
/// Hermes.
pub fn patches_hermes(target: &str) -> bool {
    let Some(rest) = target.strip_prefix("sys.modules") else {
        return is_core(target);
    };
    rest.strip_prefix("[\"")
        .or_else(|| rest.strip_prefix("['"))
        .and_then(|key| key.split(['"', '\'']).next())
        .is_some_and(is_core)
}

/// How a function mutates one of its parameters.
#[derive(Debug, Clone)]
enum AttrSpec {
    Literal(String),
    Param(usize),
    Unknown,
}

type Locals = HashMap<String, Option<String>>;

struct Scan<'e, 's, 't> {
    ev: &'e Evaluator<'s, 't>,
    m: ModId,
    module: &'t PyModule,
    index: &'e Index<'t>,
    /// Local names per scope of `index`, computed on first need; `Some(path)` when bound by an import.
    locals: Vec<std::cell::OnceCell<Locals>>,
    out: Vec<Override>,
    summaries: HashMap<usize, Vec<(usize, String, AttrSpec)>>,
    /// [`root_names`] of the module.
    roots: HashSet<String>,
}

/// Finds every core override in every module (`indexes` are the modules' [`Index`]es).
pub fn find<'t>(ev: &Evaluator<'_, 't>, indexes: &[Index<'t>]) -> Vec<Override> {
    let mut out = Vec::new();
    for (m, index) in indexes.iter().enumerate() {
        let roots = root_names(ev, m, index);
        if roots.is_empty() {
            continue;
        }
        let module = &ev.set.modules[m];
        let mut scan = Scan {
            ev,
            m,
            module,
            index,
            locals: (0..index.scopes.len())
                .map(|_| std::cell::OnceCell::new())
                .collect(),
            out: Vec::new(),
            summaries: HashMap::new(),
            roots,
        };
        for (node, scope) in &index.assignments {
            if let Some(left) = node.child_by_field_name("left") {
                scan.check_targets(left, *scope, "assignment");
            }
        }
        for (node, scope) in &index.deletes {
            let targets: Vec<Node<'t>> = node.named_children().collect();
            for t in targets {
                scan.check_targets(t, *scope, "del");
            }
        }
        for (node, scope) in &index.calls {
            scan.check_call(*node, *scope);
        }
        scan.out.sort_by_key(|o| o.pos);
        out.extend(scan.out);
    }
    out
}

/// The names module `m` binds, anywhere in it, by an import an override can be rooted at: of
/// a Hermes module, `sys` (`sys.modules`), or `unittest`/`mock` (`mock.patch`).
///
/// Every rule of [`Scan`] reaches its target through [`Scan::resolve_name`], which answers
/// only for names bound by an import of the module itself (at module level or in a function),
/// and then requires that import's path to start with one of these. So a module binding none
/// has nothing to report (most modules: scanning their calls was a tenth of a cold
/// `validate`), and a call none of whose parts is rooted at one of these names cannot be an
/// override.
fn root_names(ev: &Evaluator<'_, '_>, m: ModId, index: &Index<'_>) -> HashSet<String> {
    index
        .imports
        .iter()
        .flat_map(|stmt| super::scope::resolve_import(ev.set, m, *stmt))
        .filter_map(|(name, target)| match target {
            Imported::External(path) => {
                let top = path.split('.').next().unwrap_or("");
                (matches!(top, "sys" | "unittest" | "mock") || is_core(top)).then_some(name)
            }
            _ => None,
        })
        .collect()
}

/// The name an attribute/subscript chain starts at (`a` of `a.b[c].d`), as [`Scan::path`]
/// walks it.
fn chain_root(mut node: Node<'_>) -> Option<Node<'_>> {
    loop {
        node = match node.kind() {
            "identifier" => return Some(node),
            "attribute" => node.child_by_field_name("object")?,
            "subscript" => node.child_by_field_name("value")?,
            "parenthesized_expression" => node.named_child(0)?,
            _ => return None,
        };
    }
}

impl<'t> Scan<'_, '_, 't> {
    fn text(&self, node: Node<'t>) -> &'t str {
        self.module.text_of(node)
    }

    /// The external dotted path a name refers to at this point, if it was imported.
    fn resolve_name(&self, frame: usize, name: &str) -> Option<String> {
        let scope = &self.ev.scopes.modules[self.m];
        let module_level = match scope.names.get(name) {
            Some(Binding::Import(i)) => match &scope.imports[*i] {
                Imported::External(path) => Some(path.clone()),
                _ => None,
            },
            _ => None,
        };
        let mut f = Some(frame);
        while let Some(i) = f {
            if i == 0 {
                break;
            }
            // Locals only matter if they could shadow an import or bind one themselves.
            if (module_level.is_some() || self.index.scopes[i].has_imports)
                && let Some(binding) = self.locals(i).get(name)
            {
                return binding.clone();
            }
            f = self.index.scopes[i].parent;
        }
        module_level
    }

    fn locals(&self, scope: usize) -> &Locals {
        self.locals[scope].get_or_init(|| {
            self.index.scopes[scope]
                .def
                .map(|d| self.collect_locals(d))
                .unwrap_or_default()
        })
    }

    /// The dotted path of an attribute/subscript chain rooted at an imported name.
    fn path(&self, frame: usize, node: Node<'t>) -> Option<String> {
        match node.kind() {
            "identifier" => self.resolve_name(frame, self.text(node)),
            "attribute" => {
                let obj = node.child_by_field_name("object")?;
                let attr = node.child_by_field_name("attribute")?;
                Some(format!("{}.{}", self.path(frame, obj)?, self.text(attr)))
            }
            "subscript" => {
                let value = node.child_by_field_name("value")?;
                let index = node.child_by_field_name("subscript")?;
                Some(format!(
                    "{}[{}]",
                    self.path(frame, value)?,
                    self.text(index)
                ))
            }
            "parenthesized_expression" => self.path(frame, node.named_child(0)?),
            _ => None,
        }
    }

    fn report(&mut self, node: Node<'t>, target: String, how: &'static str) {
        let finding = Override {
            target,
            how,
            file: self.module.rel.clone(),
            pos: self.module.pos(node),
        };
        if !self.out.contains(&finding) {
            self.out.push(finding);
        }
    }

    /// The local names of a function: parameters, assigned names, nested definitions and
    /// function-level imports, minus `global`/`nonlocal` names.
    fn collect_locals(&self, def: Node<'t>) -> HashMap<String, Option<String>> {
        let mut locals: HashMap<String, Option<String>> = HashMap::new();
        if let Some(params) = def.child_by_field_name("parameters") {
            let mut stack = vec![params];
            while let Some(n) = stack.pop() {
                if n.kind() == "identifier" {
                    locals.insert(self.text(n).to_string(), None);
                    continue;
                }
                if matches!(n.kind(), "default_parameter" | "typed_default_parameter") {
                    if let Some(name) = n.child_by_field_name("name") {
                        stack.push(name);
                    }
                    continue;
                }
                if n.kind() == "type" {
                    continue;
                }
                stack.extend(n.named_children());
            }
        }
        let mut globals = Vec::new();
        if let Some(body) = def.child_by_field_name("body") {
            body.preorder(|n, depth| match n.kind() {
                "function_definition" | "class_definition" if depth > 0 => {
                    if let Some(name) = n.child_by_field_name("name") {
                        locals.insert(self.text(name).to_string(), None);
                    }
                    false
                }
                "global_statement" | "nonlocal_statement" => {
                    globals.extend(n.named_children().map(|i| self.text(i).to_string()));
                    false
                }
                "assignment" | "augmented_assignment" | "for_statement" => {
                    if let Some(left) = n.child_by_field_name("left") {
                        collect_identifiers(self.module, left, &mut locals);
                    }
                    n.kind() == "for_statement"
                }
                "as_pattern_target" => {
                    collect_identifiers(self.module, n, &mut locals);
                    false
                }
                "import_statement" | "import_from_statement" => {
                    for (name, target) in super::scope::resolve_import(self.ev.set, self.m, n) {
                        let path = match target {
                            Imported::External(p) => Some(p),
                            _ => None,
                        };
                        locals.insert(name, path);
                    }
                    false
                }
                // Only statements bind names; expressions (calls, strings, …) are not entered.
                kind => {
                    kind == "block"
                        || kind == "expression_statement"
                        || kind.ends_with("_statement")
                        || kind.ends_with("_clause")
                        || matches!(kind, "decorated_definition" | "with_item" | "as_pattern")
                }
            });
        }
        for g in globals {
            locals.remove(&g);
        }
        locals
    }

    fn check_targets(&mut self, target: Node<'t>, frame: usize, how: &'static str) {
        match target.kind() {
            "attribute" | "subscript" => {
                if let Some(path) = self.path(frame, target) {
                    if path.starts_with("sys.modules[") {
                        self.report(target, path, "sys.modules write");
                    } else if is_core(&path) {
                        self.report(target, path, how);
                    }
                }
            }
            "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "expression_list"
            | "tuple"
            | "list"
            | "parenthesized_expression" => {
                let parts: Vec<Node<'t>> = target.named_children().collect();
                for p in parts {
                    self.check_targets(p, frame, how);
                }
            }
            _ => {}
        }
    }

    fn literal(&self, node: Option<Node<'t>>) -> Option<String> {
        let node = node?;
        match self.ev.eval(self.m, node, None) {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    fn check_call(&mut self, call: Node<'t>, frame: usize) {
        let (Some(func), Some(args)) = (
            call.child_by_field_name("function"),
            call.child_by_field_name("arguments"),
        ) else {
            return;
        };
        // Cheap pre-filter: only setattr/delattr, mock.patch*, mutators, and calls of
        // package-local functions can be core overrides.
        let func_text = self.text(func);
        let last = func_text.rsplit('.').next().unwrap_or(func_text);
        let local_function = func.kind() == "identifier"
            && matches!(
                self.ev.scopes.modules[self.m].names.get(func_text),
                Some(Binding::Def(_) | Binding::Import(_))
            );
        if !(local_function
            || matches!(
                last,
                "setattr" | "delattr" | "patch" | "object" | "dict" | "multiple"
            )
            || MUTATORS.contains(&last))
        {
            return;
        }
        // The callee (a mutating method, `mock.patch`) or an argument (of `setattr`, of a
        // helper) must be rooted at a name a root import binds.
        let rooted = |n: Option<Node<'t>>| {
            n.and_then(chain_root)
                .is_some_and(|r| self.roots.contains(self.text(r)))
        };
        if !rooted(Some(func))
            && !args.named_children().any(|a| {
                rooted(if a.kind() == "keyword_argument" {
                    a.child_by_field_name("value")
                } else {
                    Some(a)
                })
            })
        {
            return;
        }
        let positional: Vec<Node<'t>> = args
            .named_children()
            .filter(|a| {
                !matches!(
                    a.kind(),
                    "keyword_argument" | "comment" | "list_splat" | "dictionary_splat"
                )
            })
            .collect();
        // setattr / delattr (the builtins, unless shadowed)
        if func.kind() == "identifier" {
            let name = self.text(func);
            let builtin = self.resolve_name(frame, name).is_none()
                && !self.is_local(frame, name)
                && !self.ev.scopes.modules[self.m].names.contains_key(name);
            if builtin && (name == "setattr" || name == "delattr") {
                if let Some(path) = positional.first().and_then(|o| self.path(frame, *o)) {
                    let attr = self
                        .literal(positional.get(1).copied())
                        .unwrap_or_else(|| "<attr>".to_string());
                    if path == "sys.modules" || is_core(&path) {
                        self.report(
                            call,
                            format!("{path}.{attr}"),
                            if name == "setattr" {
                                "setattr"
                            } else {
                                "delattr"
                            },
                        );
                    }
                }
                return;
            }
        }
        let callee = self.path(frame, func);
        if let Some(callee) = &callee {
            // unittest.mock.patch and friends
            let patch = ["unittest.mock.patch", "mock.patch"]
                .iter()
                .find_map(|base| callee.strip_prefix(base).map(|rest| rest.to_string()));
            if let Some(variant) = patch {
                self.check_patch(call, frame, &variant, &positional);
                return;
            }
            // Mutating methods on core attributes and sys.modules.
            if let Some((object, method)) = callee.rsplit_once('.')
                && MUTATORS.contains(&method)
                && (object == "sys.modules"
                    || (is_core(object) && (object.contains('.') || object.contains('['))))
            {
                let how = if object == "sys.modules" {
                    "sys.modules write"
                } else {
                    "mutation"
                };
                self.report(call, format!("{object}.{method}(…)"), how);
                return;
            }
        }
        // A package-local helper that mutates a parameter, called with a core object.
        let target = self.ev.eval(self.m, func, None);
        if let Val::Func(hm, def) = target
            && def.kind() == "function_definition"
        {
            let summary = self.summary(hm, def);
            for (index, param, spec) in summary {
                let arg = positional.get(index).copied().or_else(|| {
                    args.named_children()
                        .filter(|a| a.kind() == "keyword_argument")
                        .find(|a| {
                            a.child_by_field_name("name")
                                .is_some_and(|n| self.text(n) == param)
                        })
                        .and_then(|a| a.child_by_field_name("value"))
                });
                let Some(path) = arg.and_then(|a| self.path(frame, a)) else {
                    continue;
                };
                if !is_core(&path) && path != "sys.modules" {
                    continue;
                }
                let attr = match spec {
                    AttrSpec::Literal(a) => a,
                    AttrSpec::Param(j) => self
                        .literal(positional.get(j).copied())
                        .unwrap_or_else(|| "<attr>".to_string()),
                    AttrSpec::Unknown => "<attr>".to_string(),
                };
                self.report(
                    call,
                    format!("{path}.{attr}"),
                    "helper mutating its argument",
                );
            }
        }
    }

    /// `unittest.mock.patch`, `.object`, `.multiple`, `.dict` aimed at core (or
    /// `sys.modules`).
    fn check_patch(
        &mut self,
        call: Node<'t>,
        frame: usize,
        variant: &str,
        positional: &[Node<'t>],
    ) {
        match variant {
            "" => {
                if let Some(target) = self.literal(positional.first().copied())
                    && is_core(&target)
                {
                    self.report(call, target, "mock.patch");
                }
            }
            ".object" | ".multiple" => {
                if let Some(path) = positional.first().and_then(|o| self.path(frame, *o))
                    && is_core(&path)
                {
                    let attr = self
                        .literal(positional.get(1).copied())
                        .map(|a| format!(".{a}"))
                        .unwrap_or_default();
                    self.report(call, format!("{path}{attr}"), "mock.patch");
                }
            }
            ".dict" => {
                let target = positional
                    .first()
                    .and_then(|o| self.path(frame, *o).or_else(|| self.literal(Some(*o))));
                if let Some(target) = target
                    && (is_core(&target) || target.starts_with("sys.modules"))
                {
                    self.report(call, target, "mock.patch");
                }
            }
            _ => {}
        }
    }

    fn is_local(&self, frame: usize, name: &str) -> bool {
        let mut f = Some(frame);
        while let Some(i) = f {
            if i == 0 {
                return false;
            }
            if self.locals(i).contains_key(name) {
                return true;
            }
            f = self.index.scopes[i].parent;
        }
        false
    }

    /// Which parameters a function mutates (by index and name), and how the attribute is named.
    fn summary(&mut self, hm: ModId, def: Node<'t>) -> Vec<(usize, String, AttrSpec)> {
        if let Some(s) = self.summaries.get(&def.id()) {
            return s.clone();
        }
        let module = &self.ev.set.modules[hm];
        let mut names = Vec::new();
        if let Some(params) = def.child_by_field_name("parameters") {
            for p in params.named_children() {
                let name = match p.kind() {
                    "identifier" => Some(module.text_of(p).to_string()),
                    "default_parameter" | "typed_default_parameter" => p
                        .child_by_field_name("name")
                        .map(|n| module.text_of(n).to_string()),
                    "typed_parameter" => p
                        .named_child(0)
                        .filter(|n| n.kind() == "identifier")
                        .map(|n| module.text_of(n).to_string()),
                    _ => None,
                };
                if let Some(n) = name {
                    names.push(n);
                }
            }
        }
        let index_of = |n: Node<'_>| -> Option<usize> {
            if n.kind() == "identifier" {
                names.iter().position(|p| p == module.text_of(n))
            } else {
                None
            }
        };
        let mut out: Vec<(usize, String, AttrSpec)> = Vec::new();
        if let Some(body) = def.child_by_field_name("body") {
            let mut stack = vec![body];
            while let Some(n) = stack.pop() {
                if matches!(
                    n.kind(),
                    "function_definition" | "class_definition" | "lambda"
                ) {
                    continue;
                }
                match n.kind() {
                    "call" => {
                        let func = n.child_by_field_name("function");
                        if func.is_some_and(|f| matches!(module.text_of(f), "setattr" | "delattr"))
                            && let Some(args) = n.child_by_field_name("arguments")
                        {
                            let pos: Vec<Node<'_>> = args
                                .named_children()
                                .filter(|a| a.kind() != "keyword_argument")
                                .collect();
                            if let Some(i) = pos.first().and_then(|p| index_of(*p)) {
                                let spec = match pos.get(1) {
                                    Some(a) if index_of(*a).is_some() => {
                                        AttrSpec::Param(index_of(*a).unwrap_or(0))
                                    }
                                    Some(a) => match self.ev.eval(hm, *a, None) {
                                        Val::Str(s) => AttrSpec::Literal(s),
                                        _ => AttrSpec::Unknown,
                                    },
                                    None => AttrSpec::Unknown,
                                };
                                out.push((i, names[i].clone(), spec));
                            }
                        }
                    }
                    "assignment" | "augmented_assignment" => {
                        if let Some(left) = n.child_by_field_name("left")
                            && matches!(left.kind(), "attribute" | "subscript")
                        {
                            let base = left
                                .child_by_field_name("object")
                                .or_else(|| left.child_by_field_name("value"));
                            if let Some(i) = base.and_then(index_of) {
                                let spec = match left.child_by_field_name("attribute") {
                                    Some(a) => AttrSpec::Literal(module.text_of(a).to_string()),
                                    None => AttrSpec::Literal(format!(
                                        "[{}]",
                                        left.child_by_field_name("subscript")
                                            .map(|s| module.text_of(s))
                                            .unwrap_or("…")
                                    )),
                                };
                                out.push((i, names[i].clone(), spec));
                            }
                        }
                    }
                    _ => {}
                }
                stack.extend(n.named_children());
            }
        }
        self.summaries.insert(def.id(), out.clone());
        out
    }
}

fn collect_identifiers(
    module: &PyModule,
    node: Node<'_>,
    into: &mut HashMap<String, Option<String>>,
) {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "identifier" => {
                into.insert(module.text_of(n).to_string(), None);
            }
            "attribute" | "subscript" => {}
            _ => {
                stack.extend(n.named_children());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::static_py::{scope, source};

    /// The overrides found in a package of these files, as `target (file)`.
    fn overrides_in(files: &[(&str, &str)]) -> Vec<String> {
        let dir = super::super::test_package(files);
        let root = crate::pkgfs::PackageRoot::open(dir.path()).unwrap();
        let set = source::SourceSet::load(&root, None, &mut Vec::new());
        let indexes: Vec<Index<'_>> = set.modules.iter().map(|m| m.index()).collect();
        let scopes = scope::Scopes::build(&set);
        let ev = Evaluator::new(&set, &scopes, 100_000);
        let mut found: Vec<String> = find(&ev, &indexes)
            .into_iter()
            .map(|o| format!("{} ({})", o.target, o.file))
            .collect();
        found.sort();
        found
    }

    /// A module is scanned only when it imports a root, and a call only when a part of it is
    /// rooted at a name such an import binds (`root_names`): each root, through each shape of
    /// import and of call, alone in its module, is still found; a module importing none
    /// reports nothing, whatever it writes.
    #[test]
    fn every_root_is_found_through_every_shape_of_import() {
        let found = overrides_in(&[
            (
                "__init__.py",
                "from . import a, b, c, d, e, f, g, h, i\n\ndef register(ctx):\n    pass\n",
            ),
            (
                "a.py",
                "import sys as system\nsystem.modules['agent'] = None\n",
            ),
            (
                "b.py",
                "def hook():\n    from hermes_cli import config\n    config.load = None\n",
            ),
            (
                "c.py",
                "from unittest import mock\nmock.patch('run_agent.AIAgent.chat').start()\n",
            ),
            ("d.py", "import mock\nmock.patch.dict('sys.modules', {})\n"),
            (
                "e.py",
                "try:\n    import tools.registry as reg\nexcept ImportError:\n    reg = None\nreg.registry.dispatch = None\n",
            ),
            ("f.py", "from .g import poke\nimport agent\n\npoke(agent)\n"),
            (
                "h.py",
                "from .g import poke\nimport agent as core\n\ndef run():\n    poke(module=core.sub)\n",
            ),
            (
                "i.py",
                "def t():\n    from unittest.mock import patch\n    patch('hermes_cli.main.run')\n",
            ),
            (
                "g.py",
                "import os\nos.environ.update({})\n\ndef poke(module):\n    module.hooked = True\n\nclass X:\n    pass\nX.y = 1\n",
            ),
        ]);
        assert_eq!(
            found,
            [
                "agent.hooked (f.py)",
                "agent.sub.hooked (h.py)",
                "hermes_cli.config.load (b.py)",
                "hermes_cli.main.run (i.py)",
                "run_agent.AIAgent.chat (c.py)",
                "sys.modules (d.py)",
                "sys.modules['agent'] (a.py)",
                "tools.registry.registry.dispatch (e.py)",
            ]
        );
    }

    #[test]
    fn only_writes_to_hermes_itself_patch_hermes() {
        assert!(patches_hermes("run_agent.AIAgent.chat"));
        assert!(patches_hermes("cron.jobs.CRON_DIR"));
        assert!(patches_hermes("sys.modules[\"agent.context_engine\"]"));
        assert!(patches_hermes("sys.modules['tools']"));
        // The plugin's own package under another name, or a key computed at run time.
        assert!(!patches_hermes("sys.modules[\"brain\"]"));
        assert!(!patches_hermes("sys.modules[PACKAGE_NAME]"));
        assert!(!patches_hermes("sys.modules.pop(…)"));
    }
}
