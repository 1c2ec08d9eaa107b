//! The abstract evaluator: what an expression denotes, statically.
//!
//! Understood: string literals (with escapes, adjacent concatenation, f-strings whose
//! interpolations are themselves known, `+` and `%`/`.format` with known operands), numbers,
//! booleans, `None`, list/tuple/set/dict literals (with `*`/`**` splats of known values),
//! subscripts of known lists and dicts, names bound at module level or locally, attribute
//! chains through package-local modules, `dict(k=…)`, `list()/tuple()/sorted()` of known
//! sequences, `.items()/.keys()/.values()`, functions and lambdas (as references), the plugin
//! context `ctx`, and dotted paths of things imported from outside the package. Everything
//! else is [`Val::Unknown`] — never a guess.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use super::syntax::Node;

use super::scope::{Binding, Imported, ModId, Scopes};
use super::source::SourceSet;

/// An abstract value.
#[derive(Debug, Clone)]
pub enum Val<'t> {
    /// A known string.
    Str(String),
    /// A known integer.
    Int(i64),
    /// A known boolean.
    Bool(bool),
    None,
    /// Some number whose value does not matter.
    Num,
    /// A list, tuple or set of values.
    Seq(Vec<Val<'t>>),
    /// A dict literal.
    Dict(Vec<(Val<'t>, Val<'t>)>),
    /// A package-local module.
    Module(ModId),
    /// A function (`def` or `lambda`) defined in a module.
    Func(ModId, Node<'t>),
    /// A class defined in a module.
    Class(ModId, Node<'t>),
    /// An instance of a package class, with the attributes assigned while interpreting.
    Instance(Rc<Instance<'t>>),
    /// A method bound to an instance.
    Method(Rc<Instance<'t>>, ModId, Node<'t>),
    /// Something imported from outside the package, by dotted path.
    External(String),
    /// The plugin context passed to `register(ctx)`.
    Ctx,
    /// A method of the plugin context taken as a value (`reg = ctx.register_tool`); `true`
    /// when taken defensively (`getattr(ctx, "m", None)`), so that its absence is tolerated.
    CtxMethod(String, bool),
    /// `functools.partial(func, *args, **kwargs)`.
    Partial(Rc<Partial<'t>>),
    /// Not known statically.
    Unknown,
}

impl Val<'_> {
    /// The string, if known.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    fn key_eq(&self, other: &Val<'_>) -> bool {
        match (self, other) {
            (Val::Str(a), Val::Str(b)) => a == b,
            (Val::Int(a), Val::Int(b)) => a == b,
            (Val::Bool(a), Val::Bool(b)) => a == b,
            _ => false,
        }
    }

    /// Whether the value is, or contains, the plugin context.
    pub fn holds_ctx(&self) -> bool {
        match self {
            Val::Ctx | Val::CtxMethod(..) => true,
            Val::Partial(p) => {
                p.func.holds_ctx()
                    || p.args.iter().any(Val::holds_ctx)
                    || p.kwargs.iter().any(|(_, v)| v.holds_ctx())
            }
            Val::Instance(inst) | Val::Method(inst, ..) => inst.attrs.try_borrow().is_ok_and(|a| {
                a.values()
                    .any(|v| matches!(v, Val::Ctx | Val::CtxMethod(..)))
            }),
            Val::Seq(items) => items.iter().any(Val::holds_ctx),
            Val::Dict(pairs) => pairs.iter().any(|(_, v)| v.holds_ctx()),
            _ => false,
        }
    }
}

/// A `functools.partial`: the function and the arguments bound so far.
#[derive(Debug)]
pub struct Partial<'t> {
    /// What is called.
    pub func: Val<'t>,
    /// Positional arguments bound first.
    pub args: Vec<Val<'t>>,
    /// Keyword arguments bound.
    pub kwargs: Vec<(String, Val<'t>)>,
}

/// An object of a package-defined class.
#[derive(Debug)]
pub struct Instance<'t> {
    /// The module defining the class.
    pub module: ModId,
    /// The `class_definition`.
    pub class: Node<'t>,
    /// Instance attributes (`self.x = …`) seen so far.
    pub attrs: RefCell<HashMap<String, Val<'t>>>,
}

impl<'t> Instance<'t> {
    /// A fresh instance of a class.
    pub fn new(module: ModId, class: Node<'t>) -> Rc<Self> {
        Rc::new(Instance {
            module,
            class,
            attrs: RefCell::new(HashMap::new()),
        })
    }
}

/// Local variables of a function being interpreted.
pub type Env<'t> = HashMap<String, Val<'t>>;

/// Evaluates expressions over a [`SourceSet`], with a fuel budget and cycle guard.
pub struct Evaluator<'s, 't> {
    /// The sources.
    pub set: &'t SourceSet,
    /// Their module scopes.
    pub scopes: &'s Scopes<'t>,
    in_progress: RefCell<Vec<(ModId, String)>>,
    fuel: Cell<usize>,
    /// Bytes of strings the evaluator may still build.
    bytes: Cell<usize>,
}

const MAX_DEPTH: usize = 48;
const MAX_SEQ: usize = 4096;
/// Longest string the evaluator builds (1 MiB); a longer one is unknown.
pub const MAX_STR: usize = 1 << 20;
/// Bytes of strings built per package (64 MiB): with it, hostile code that multiplies
/// strings (`'{0}' * n`, nested f-strings) costs bounded memory.
pub const MAX_BYTES: usize = 64 << 20;

impl<'s, 't> Evaluator<'s, 't> {
    /// An evaluator with `fuel` evaluation steps.
    pub fn new(set: &'t SourceSet, scopes: &'s Scopes<'t>, fuel: usize) -> Self {
        Evaluator {
            set,
            scopes,
            in_progress: RefCell::new(Vec::new()),
            fuel: Cell::new(fuel),
            bytes: Cell::new(MAX_BYTES),
        }
    }

    /// Charges a built value against the byte budget: a string over [`MAX_STR`], or once the
    /// budget is spent, becomes unknown.
    fn charge(&self, v: Val<'t>) -> Val<'t> {
        match v {
            Val::Str(s) => {
                let left = self.bytes.get();
                if s.len() > MAX_STR || s.len() > left {
                    self.bytes.set(left.saturating_sub(s.len()));
                    Val::Unknown
                } else {
                    self.bytes.set(left - s.len());
                    Val::Str(s)
                }
            }
            other => other,
        }
    }

    /// Whether the budget is spent.
    pub fn exhausted(&self) -> bool {
        self.fuel.get() == 0
    }

    fn burn(&self) -> bool {
        let f = self.fuel.get();
        if f == 0 {
            return false;
        }
        self.fuel.set(f - 1);
        true
    }

    /// The value of a module-level name of module `m`.
    pub fn lookup(&self, m: ModId, name: &str) -> Val<'t> {
        self.lookup_depth(m, name, 0)
    }

    fn lookup_depth(&self, m: ModId, name: &str, depth: usize) -> Val<'t> {
        if depth > MAX_DEPTH || !self.burn() {
            return Val::Unknown;
        }
        let scope = &self.scopes.modules[m];
        let Some(binding) = scope.names.get(name).copied() else {
            for star in &scope.star {
                if *star != m {
                    let v = self.lookup_depth(*star, name, depth + 1);
                    if !matches!(v, Val::Unknown) {
                        return v;
                    }
                }
            }
            // A submodule of a package is reachable as an attribute.
            let dotted = SourceSet::join(&self.set.modules[m].dotted, name);
            if self.set.modules[m].is_package
                && let Some(id) = self.set.module(&dotted)
            {
                return Val::Module(id);
            }
            return Val::Unknown;
        };
        match binding {
            Binding::Def(node) => Val::Func(m, node),
            Binding::Class(node) => Val::Class(m, node),
            Binding::Opaque => Val::Unknown,
            Binding::Import(i) => match &scope.imports[i] {
                Imported::Module(id) => Val::Module(*id),
                Imported::Attr(id, attr) => {
                    let sub = SourceSet::join(&self.set.modules[*id].dotted, attr);
                    match self.set.module(&sub) {
                        Some(s) => Val::Module(s),
                        None if *id == m => Val::Unknown,
                        None => self.lookup_depth(*id, attr, depth + 1),
                    }
                }
                Imported::External(path) => Val::External(path.clone()),
                Imported::Unresolved => Val::Unknown,
            },
            Binding::Value(expr) => {
                let key = (m, name.to_string());
                if self.in_progress.borrow().contains(&key) {
                    return Val::Unknown;
                }
                self.in_progress.borrow_mut().push(key);
                let v = self.eval_depth(m, expr, None, depth + 1);
                self.in_progress.borrow_mut().pop();
                v
            }
        }
    }

    /// The value of expression `node` in module `m`, with optional local variables.
    pub fn eval(&self, m: ModId, node: Node<'t>, env: Option<&Env<'t>>) -> Val<'t> {
        self.eval_depth(m, node, env, 0)
    }

    fn eval_depth(&self, m: ModId, node: Node<'t>, env: Option<&Env<'t>>, depth: usize) -> Val<'t> {
        if depth > MAX_DEPTH || !self.burn() {
            return Val::Unknown;
        }
        let v = self.eval_node(m, node, env, depth);
        self.charge(v)
    }

    fn eval_node(&self, m: ModId, node: Node<'t>, env: Option<&Env<'t>>, depth: usize) -> Val<'t> {
        let module = &self.set.modules[m];
        let ev = |n: Node<'t>| self.eval_depth(m, n, env, depth + 1);
        match node.kind() {
            "string" => self.string(m, node, env, depth),
            "concatenated_string" => {
                let mut out = String::new();
                for part in node.named_children() {
                    match self.string(m, part, env, depth) {
                        Val::Str(s) if out.len() + s.len() <= MAX_STR => out.push_str(&s),
                        _ => return Val::Unknown,
                    }
                }
                Val::Str(out)
            }
            "integer" => module
                .text_of(node)
                .replace('_', "")
                .parse()
                .map_or(Val::Num, Val::Int),
            "float" => Val::Num,
            "true" => Val::Bool(true),
            "false" => Val::Bool(false),
            "none" => Val::None,
            "parenthesized_expression" => node.named_child(0).map_or(Val::Unknown, ev),
            "identifier" => {
                let name = module.text_of(node);
                if let Some(v) = env.and_then(|e| e.get(name)) {
                    return v.clone();
                }
                self.lookup_depth(m, name, depth + 1)
            }
            "attribute" => {
                let (Some(obj), Some(attr)) = (
                    node.child_by_field_name("object"),
                    node.child_by_field_name("attribute"),
                ) else {
                    return Val::Unknown;
                };
                let attr = module.text_of(attr);
                self.member(ev(obj), attr, depth)
            }
            "subscript" => {
                let (Some(value), Some(index)) = (
                    node.child_by_field_name("value"),
                    node.child_by_field_name("subscript"),
                ) else {
                    return Val::Unknown;
                };
                index_into(ev(value), &ev(index))
            }
            "list" | "tuple" | "set" | "expression_list" => {
                let mut items = Vec::new();
                for child in node.named_children() {
                    if child.kind() == "list_splat" {
                        match child.named_child(0).map(ev) {
                            Some(Val::Seq(inner)) => items.extend(inner),
                            _ => return Val::Unknown,
                        }
                    } else if child.kind() != "comment" {
                        items.push(ev(child));
                    }
                    if items.len() > MAX_SEQ {
                        return Val::Unknown;
                    }
                }
                Val::Seq(items)
            }
            "dictionary" => {
                let mut pairs: Vec<(Val<'t>, Val<'t>)> = Vec::new();
                for child in node.named_children() {
                    match child.kind() {
                        "pair" => {
                            let k = child.child_by_field_name("key").map_or(Val::Unknown, ev);
                            let v = child.child_by_field_name("value").map_or(Val::Unknown, ev);
                            insert_pair(&mut pairs, k, v);
                        }
                        "dictionary_splat" => match child.named_child(0).map(ev) {
                            Some(Val::Dict(inner)) => {
                                for (k, v) in inner {
                                    insert_pair(&mut pairs, k, v);
                                }
                            }
                            _ => return Val::Unknown,
                        },
                        _ => {}
                    }
                    if pairs.len() > MAX_SEQ {
                        return Val::Unknown;
                    }
                }
                Val::Dict(pairs)
            }
            "binary_operator" => {
                let (Some(l), Some(r), Some(op)) = (
                    node.child_by_field_name("left"),
                    node.child_by_field_name("right"),
                    node.child_by_field_name("operator"),
                ) else {
                    return Val::Unknown;
                };
                match (module.text_of(op), ev(l), ev(r)) {
                    ("+", Val::Str(a), Val::Str(b)) if a.len() + b.len() <= MAX_STR => {
                        Val::Str(a + &b)
                    }
                    ("+", Val::Seq(mut a), Val::Seq(b)) if a.len() + b.len() <= MAX_SEQ => {
                        a.extend(b);
                        Val::Seq(a)
                    }
                    ("+", Val::Int(a), Val::Int(b)) => a.checked_add(b).map_or(Val::Num, Val::Int),
                    ("%", Val::Str(fmt), args) => percent_format(&fmt, &args),
                    _ => Val::Unknown,
                }
            }
            "lambda" => Val::Func(m, node),
            "call" => self.call(m, node, env, depth),
            _ => Val::Unknown,
        }
    }

    /// `value.attr`: a module's name, an extended external path, a ctx method, an instance
    /// attribute or bound method, or a class member.
    pub fn member(&self, value: Val<'t>, attr: &str, depth: usize) -> Val<'t> {
        match value {
            Val::Module(id) => self.lookup_depth(id, attr, depth + 1),
            Val::External(path) => Val::External(format!("{path}.{attr}")),
            Val::Ctx => Val::CtxMethod(attr.to_string(), false),
            Val::Instance(inst) => {
                if let Some(v) = inst.attrs.borrow().get(attr) {
                    return v.clone();
                }
                match self.class_member(inst.module, inst.class, attr, depth) {
                    Val::Func(fm, def) if def.kind() == "function_definition" => {
                        Val::Method(inst, fm, def)
                    }
                    other => other,
                }
            }
            Val::Class(cm, class) => self.class_member(cm, class, attr, depth),
            _ => Val::Unknown,
        }
    }

    /// A member of a package class (a method or a class-level value), looking through
    /// package-local base classes.
    pub fn class_member(&self, m: ModId, class: Node<'t>, name: &str, depth: usize) -> Val<'t> {
        if depth > MAX_DEPTH || !self.burn() {
            return Val::Unknown;
        }
        let module = &self.set.modules[m];
        if let Some(body) = class.child_by_field_name("body") {
            for stmt in body.named_children() {
                let def = if stmt.kind() == "decorated_definition" {
                    stmt.child_by_field_name("definition")
                } else {
                    Some(stmt)
                };
                let Some(def) = def else { continue };
                match def.kind() {
                    "function_definition"
                        if def
                            .child_by_field_name("name")
                            .is_some_and(|n| module.text_of(n) == name) =>
                    {
                        return Val::Func(m, def);
                    }
                    "expression_statement" => {
                        if let Some(assign) =
                            def.named_child(0).filter(|a| a.kind() == "assignment")
                            && assign.child_by_field_name("left").is_some_and(|l| {
                                l.kind() == "identifier" && module.text_of(l) == name
                            })
                            && let Some(right) = assign.child_by_field_name("right")
                        {
                            return self.eval_depth(m, right, None, depth + 1);
                        }
                    }
                    _ => {}
                }
            }
        }
        if let Some(bases) = class.child_by_field_name("superclasses") {
            let bases: Vec<Node<'t>> = bases.named_children().collect();
            for base in bases {
                if let Val::Class(bm, bclass) = self.eval_depth(m, base, None, depth + 1)
                    && bclass.id() != class.id()
                {
                    let v = self.class_member(bm, bclass, name, depth + 1);
                    if !matches!(v, Val::Unknown) {
                        return v;
                    }
                }
            }
        }
        Val::Unknown
    }

    fn call(&self, m: ModId, node: Node<'t>, env: Option<&Env<'t>>, depth: usize) -> Val<'t> {
        let module = &self.set.modules[m];
        let (Some(func), Some(args)) = (
            node.child_by_field_name("function"),
            node.child_by_field_name("arguments"),
        ) else {
            return Val::Unknown;
        };
        let ev = |n: Node<'t>| self.eval_depth(m, n, env, depth + 1);
        let positional: Vec<Node<'t>> = {
            args.named_children()
                .filter(|a| !matches!(a.kind(), "keyword_argument" | "comment"))
                .collect()
        };
        let callee = ev(func);
        if let Val::Class(cm, class) = callee {
            return Val::Instance(Instance::new(cm, class));
        }
        if let Val::External(path) = &callee
            && path == "functools.partial"
            && let Some(first) = positional.first()
        {
            return self.partial(m, *first, &positional[1..], args, env, depth);
        }
        match func.kind() {
            "identifier" => {
                let name = module.text_of(func);
                let shadowed = env.is_some_and(|e| e.contains_key(name))
                    || self.scopes.modules[m].names.contains_key(name);
                if shadowed {
                    return Val::Unknown;
                }
                match name {
                    "getattr" if (2..=3).contains(&positional.len()) => {
                        match (ev(positional[1]), ev(positional[0])) {
                            // A default makes a missing method tolerated.
                            (Val::Str(attr), Val::Ctx) => {
                                Val::CtxMethod(attr, positional.len() == 3)
                            }
                            (Val::Str(attr), obj) => self.member(obj, &attr, depth),
                            _ => Val::Unknown,
                        }
                    }
                    "dict" if positional.is_empty() => {
                        let mut pairs = Vec::new();
                        for kw in args
                            .named_children()
                            .filter(|a| a.kind() == "keyword_argument")
                        {
                            let k = kw
                                .child_by_field_name("name")
                                .map(|n| module.text_of(n).to_string());
                            let v = kw.child_by_field_name("value").map_or(Val::Unknown, ev);
                            if let Some(k) = k {
                                insert_pair(&mut pairs, Val::Str(k), v);
                            }
                        }
                        Val::Dict(pairs)
                    }
                    "list" | "tuple" | "sorted" | "set" | "frozenset" if positional.len() == 1 => {
                        match ev(positional[0]) {
                            Val::Seq(items) => Val::Seq(items),
                            Val::Dict(pairs) => {
                                Val::Seq(pairs.into_iter().map(|(k, _)| k).collect())
                            }
                            _ => Val::Unknown,
                        }
                    }
                    "str" if positional.len() == 1 => match ev(positional[0]) {
                        Val::Str(s) => Val::Str(s),
                        Val::Int(i) => Val::Str(i.to_string()),
                        _ => Val::Unknown,
                    },
                    "enumerate" if positional.len() == 1 => match ev(positional[0]) {
                        Val::Seq(items) => Val::Seq(
                            items
                                .into_iter()
                                .enumerate()
                                .map(|(i, v)| Val::Seq(vec![Val::Int(i as i64), v]))
                                .collect(),
                        ),
                        _ => Val::Unknown,
                    },
                    _ => Val::Unknown,
                }
            }
            "attribute" => {
                let (Some(obj), Some(method)) = (
                    func.child_by_field_name("object"),
                    func.child_by_field_name("attribute"),
                ) else {
                    return Val::Unknown;
                };
                let method = module.text_of(method);
                match (ev(obj), method) {
                    (Val::Dict(pairs), "items") => Val::Seq(
                        pairs
                            .into_iter()
                            .map(|(k, v)| Val::Seq(vec![k, v]))
                            .collect(),
                    ),
                    (Val::Dict(pairs), "keys") => {
                        Val::Seq(pairs.into_iter().map(|(k, _)| k).collect())
                    }
                    (Val::Dict(pairs), "values") => {
                        Val::Seq(pairs.into_iter().map(|(_, v)| v).collect())
                    }
                    (Val::Dict(pairs), "get") if !positional.is_empty() => {
                        let key = ev(positional[0]);
                        pairs
                            .into_iter()
                            .find(|(k, _)| k.key_eq(&key))
                            .map(|(_, v)| v)
                            .unwrap_or_else(|| positional.get(1).map_or(Val::None, |d| ev(*d)))
                    }
                    (Val::Str(s), "lower") => Val::Str(s.to_lowercase()),
                    (Val::Str(s), "upper") => Val::Str(s.to_uppercase()),
                    (Val::Str(s), "strip") if positional.is_empty() => {
                        Val::Str(s.trim().to_string())
                    }
                    (Val::Str(s), "format") => {
                        let mut values: Vec<Val<'t>> = positional.iter().map(|p| ev(*p)).collect();
                        let mut named = Vec::new();
                        for kw in args
                            .named_children()
                            .filter(|a| a.kind() == "keyword_argument")
                        {
                            if let (Some(k), Some(v)) = (
                                kw.child_by_field_name("name"),
                                kw.child_by_field_name("value"),
                            ) {
                                named.push((module.text_of(k).to_string(), ev(v)));
                            }
                        }
                        brace_format(&s, &mut values, &named)
                    }
                    _ => Val::Unknown,
                }
            }
            _ => Val::Unknown,
        }
    }

    /// `functools.partial(first, *rest, **kwargs)`.
    fn partial(
        &self,
        m: ModId,
        first: Node<'t>,
        rest: &[Node<'t>],
        args: Node<'t>,
        env: Option<&Env<'t>>,
        depth: usize,
    ) -> Val<'t> {
        let module = &self.set.modules[m];
        let ev = |n: Node<'t>| self.eval_depth(m, n, env, depth + 1);
        let mut kwargs = Vec::new();
        for a in args.named_children() {
            match a.kind() {
                "keyword_argument" => {
                    if let (Some(k), Some(v)) = (
                        a.child_by_field_name("name"),
                        a.child_by_field_name("value"),
                    ) {
                        kwargs.push((module.text_of(k).to_string(), ev(v)));
                    }
                }
                "list_splat" | "dictionary_splat" => return Val::Unknown,
                _ => {}
            }
        }
        Val::Partial(Rc::new(Partial {
            func: ev(first),
            args: rest.iter().map(|n| ev(*n)).collect(),
            kwargs,
        }))
    }

    /// The value of a `string` node: escapes decoded, f-string interpolations filled in when known.
    fn string(&self, m: ModId, node: Node<'t>, env: Option<&Env<'t>>, depth: usize) -> Val<'t> {
        if node.kind() != "string" {
            return self.eval_depth(m, node, env, depth + 1);
        }
        let module = &self.set.modules[m];
        let mut prefix = String::new();
        let mut out = String::new();
        for child in node.children() {
            match child.kind() {
                "string_start" => {
                    prefix = module
                        .text_of(child)
                        .chars()
                        .take_while(|ch| ch.is_ascii_alphabetic())
                        .collect::<String>()
                        .to_ascii_lowercase();
                    if prefix.contains('b') {
                        return Val::Unknown;
                    }
                }
                "string_content" => {
                    let text = module.text_of(child);
                    if prefix.contains('r') {
                        out.push_str(text);
                    } else {
                        out.push_str(&decode_escapes(text, prefix.contains('f')));
                    }
                    if out.len() > MAX_STR {
                        return Val::Unknown;
                    }
                }
                "interpolation" => {
                    if child.child_by_field_name("format_specifier").is_some()
                        || child.child_by_field_name("type_conversion").is_some()
                    {
                        return Val::Unknown;
                    }
                    match child
                        .child_by_field_name("expression")
                        .map(|e| self.eval_depth(m, e, env, depth + 1))
                    {
                        Some(Val::Str(s)) if out.len() + s.len() <= MAX_STR => out.push_str(&s),
                        Some(Val::Int(i)) => out.push_str(&i.to_string()),
                        _ => return Val::Unknown,
                    }
                }
                _ => {}
            }
        }
        Val::Str(out)
    }
}

fn insert_pair<'t>(pairs: &mut Vec<(Val<'t>, Val<'t>)>, k: Val<'t>, v: Val<'t>) {
    if let Some(existing) = pairs.iter_mut().find(|(ek, _)| ek.key_eq(&k)) {
        existing.1 = v;
    } else {
        pairs.push((k, v));
    }
}

/// `value[index]` for known lists and dicts.
pub fn index_into<'t>(value: Val<'t>, index: &Val<'t>) -> Val<'t> {
    match (value, index) {
        (Val::Dict(pairs), key) => pairs
            .into_iter()
            .find(|(k, _)| k.key_eq(key))
            .map_or(Val::Unknown, |(_, v)| v),
        (Val::Seq(items), Val::Int(i)) => {
            let len = items.len() as i64;
            let at = if *i < 0 { len + i } else { *i };
            usize::try_from(at)
                .ok()
                .and_then(|a| items.into_iter().nth(a))
                .unwrap_or(Val::Unknown)
        }
        _ => Val::Unknown,
    }
}

fn decode_escapes(text: &str, fstring: bool) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if fstring && (c == '{' || c == '}') && chars.peek() == Some(&c) {
            chars.next();
            out.push(c);
            continue;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('\\') => out.push('\\'),
            Some('\'') => out.push('\''),
            Some('"') => out.push('"'),
            Some('\n') => {}
            Some(kind @ ('x' | 'u' | 'U')) => {
                let len = match kind {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = (0..len).filter_map(|_| chars.next()).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => {
                        out.push('\\');
                        out.push(kind);
                        out.push_str(&hex);
                    }
                }
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn scalar_text(v: &Val<'_>) -> Option<String> {
    match v {
        Val::Str(s) => Some(s.clone()),
        Val::Int(i) => Some(i.to_string()),
        _ => None,
    }
}

/// `"fmt" % args` with `%s`/`%d` and known arguments.
fn percent_format<'t>(fmt: &str, args: &Val<'t>) -> Val<'t> {
    let values: Vec<Val<'t>> = match args {
        Val::Seq(items) => items.clone(),
        other => vec![other.clone()],
    };
    let mut out = String::new();
    let mut next = values.iter();
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some('s' | 'd' | 'r') => match next.next().and_then(scalar_text) {
                Some(s) if out.len() + s.len() <= MAX_STR => out.push_str(&s),
                _ => return Val::Unknown,
            },
            _ => return Val::Unknown,
        }
    }
    Val::Str(out)
}

/// `"{}".format(...)` with positional/indexed/named fields and known arguments.
fn brace_format<'t>(fmt: &str, values: &mut [Val<'t>], named: &[(String, Val<'t>)]) -> Val<'t> {
    let mut out = String::new();
    let mut auto = 0;
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let field: String = chars.by_ref().take_while(|c| *c != '}').collect();
                let value = if field.is_empty() {
                    auto += 1;
                    values.get(auto - 1).cloned()
                } else if let Ok(i) = field.parse::<usize>() {
                    values.get(i).cloned()
                } else {
                    named
                        .iter()
                        .find(|(k, _)| *k == field)
                        .map(|(_, v)| v.clone())
                };
                match value.as_ref().and_then(scalar_text) {
                    Some(s) if out.len() + s.len() <= MAX_STR => out.push_str(&s),
                    _ => return Val::Unknown,
                }
            }
            other => out.push(other),
        }
    }
    Val::Str(out)
}
