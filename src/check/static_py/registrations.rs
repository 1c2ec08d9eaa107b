//! What `register(ctx)` registers, found by interpreting it abstractly.
//!
//! Starting from `register` in `__init__.py` (defined there or imported from a package-local
//! module), statements are interpreted with the plugin context bound to its parameter:
//! `ctx.register_tool/hook/middleware(...)` calls are recorded; calls to package-local
//! functions that receive `ctx` are followed (with their arguments bound); `for` loops over
//! known collections are unrolled; both branches of `if`/`try` are taken (a registration that
//! *can* happen is reported). A name that cannot be determined is recorded as undetermined with
//! its location and expression — never guessed — and so is `ctx` handed to code that cannot be
//! followed.

use std::collections::HashSet;

use super::syntax::Node;

use crate::located::Pos;

use super::eval::{Env, Evaluator, Partial, Val};
use super::scope::ModId;
use super::source::SourceSet;

/// What a registration registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RegKind {
    /// `register_tool`.
    Tool,
    /// `register_hook`.
    Hook,
    /// `register_middleware`.
    Middleware,
}

impl RegKind {
    /// `tool`, `hook` or `middleware`.
    pub fn as_str(self) -> &'static str {
        match self {
            RegKind::Tool => "tool",
            RegKind::Hook => "hook",
            RegKind::Middleware => "middleware",
        }
    }
}

/// A callback's signature facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callback {
    /// Its name (or `<lambda>`).
    pub name: String,
    /// Where it is defined.
    pub file: String,
    /// Its position.
    pub pos: Pos,
    /// Whether it accepts `**kwargs`.
    pub accepts_kwargs: bool,
}

/// One registration found statically.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    /// Tool, hook or middleware.
    pub kind: RegKind,
    /// The registered name.
    pub name: String,
    /// The file of the registering call.
    pub file: String,
    /// Its position.
    pub pos: Pos,
    /// For tools: `override=True` was passed.
    pub override_builtin: bool,
    /// For hooks and middleware: the callback, when it could be resolved.
    pub callback: Option<Callback>,
}

/// A registration call whose name could not be determined statically, or a hand-off of
/// `ctx` to code that cannot be followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undetermined {
    /// What was being registered (`None` for a `ctx` hand-off).
    pub kind: Option<RegKind>,
    pub file: String,
    /// Position.
    pub pos: Pos,
    /// The expression that could not be evaluated (or the call `ctx` was passed to).
    pub expression: String,
    /// Whether it is dynamic code (`exec`, `eval`, `compile`, `__import__` of a computed
    /// name, `getattr` on ctx with a computed name, `locals()`/`globals()`, dunder access to
    /// ctx): reported by the security scan too.
    pub dynamic: bool,
    /// Whether a whole module was not read (too large, not UTF-8): nothing in it is known,
    /// which no literal name would change.
    pub unanalysed: bool,
}

/// One call on the plugin context met while interpreting `register(ctx)`, with what is known
/// of its arguments (for the `ctx-call` check against each release's signatures).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CtxCall {
    /// The method called.
    pub method: String,
    /// File of the call.
    pub file: String,
    /// Its position.
    pub pos: Pos,
    /// The call as written (shortened).
    pub text: String,
    /// Positional arguments passed.
    pub positional: usize,
    /// Keyword arguments passed.
    pub keywords: Vec<String>,
    /// A `*x`/`**x` whose contents are not known was passed too.
    pub opaque: bool,
    /// The method's absence is tolerated (`getattr(ctx, "m", None)`, `if hasattr(ctx, "m")`).
    pub absent_ok: bool,
    /// Any failure is tolerated (inside `try:` with a broad `except`).
    pub errors_ok: bool,
}

/// Everything `register(ctx)` was found to register.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Registrations {
    /// Whether a `register` function was found and interpreted.
    pub analyzed: bool,
    /// Why not, when it was not.
    pub reason: Option<String>,
    /// `file:line` of the `register` function interpreted.
    pub entry: Option<String>,
    /// Registrations, in source order, de-duplicated.
    pub found: Vec<Registration>,
    /// What could not be determined.
    pub undetermined: Vec<Undetermined>,
    /// Every call on ctx, in the order met.
    pub calls: Vec<CtxCall>,
}

impl Registrations {
    /// The registrations of one kind.
    pub fn of(&self, kind: RegKind) -> impl Iterator<Item = &Registration> {
        self.found.iter().filter(move |r| r.kind == kind)
    }

    /// Whether any registration of this kind (or a `ctx` hand-off) is undetermined.
    pub fn has_undetermined(&self, kind: RegKind) -> bool {
        self.undetermined
            .iter()
            .any(|u| u.kind.is_none_or(|k| k == kind))
    }
}

const MAX_CALL_DEPTH: usize = 12;
const MAX_LOOP: usize = 1000;

struct Interp<'e, 's, 't> {
    ev: &'e Evaluator<'s, 't>,
    /// Values produced by calls the interpreter ran (objects constructed with ctx).
    call_results: std::collections::HashMap<usize, Val<'t>>,
    out: Registrations,
    seen_calls: HashSet<(usize, usize, String)>,
    active: Vec<usize>,
    /// Methods whose absence is tolerated where the interpretation is now (`if hasattr(…)`).
    absent_ok: Vec<String>,
    /// How many enclosing `try:` blocks catch broadly.
    catching: usize,
}

/// Interprets `register(ctx)` of the package's `__init__.py`.
pub fn find(ev: &Evaluator<'_, '_>) -> Registrations {
    find_in(ev, None)
}

/// Interprets `register(ctx)` of module `entry` (dotted, relative to the analysed root; a pip
/// plugin's entry point), or of the root `__init__.py` when `None`.
pub fn find_in(ev: &Evaluator<'_, '_>, entry: Option<&str>) -> Registrations {
    let set = ev.set;
    let found = match entry {
        Some(module) => set.module(module),
        None => set.root_module(),
    };
    let Some(root) = found else {
        return Registrations {
            reason: Some(match entry {
                Some(module) => format!("module `{module}` is not in the package"),
                None => "the package has no __init__.py".into(),
            }),
            ..Registrations::default()
        };
    };
    let mut interp = Interp {
        ev,
        call_results: std::collections::HashMap::new(),
        out: Registrations::default(),
        seen_calls: HashSet::new(),
        active: Vec::new(),
        absent_ok: Vec::new(),
        catching: 0,
    };
    match ev.lookup(root, "register") {
        Val::Func(m, def) if def.kind() == "function_definition" => {
            interp.out.analyzed = true;
            interp.out.entry = Some(set.modules[m].at(def));
            interp.call_function(m, def, vec![Val::Ctx], Vec::new(), 0);
        }
        Val::Method(inst, m, def) => {
            interp.out.analyzed = true;
            interp.out.entry = Some(set.modules[m].at(def));
            interp.call_function(m, def, vec![Val::Instance(inst), Val::Ctx], Vec::new(), 0);
        }
        Val::Unknown
            if !ev.scopes.modules[root].names.contains_key("register")
                && ev.scopes.modules[root].star.is_empty() =>
        {
            interp.out.reason = Some(match entry {
                Some(module) => format!("module `{module}` defines no register(ctx)"),
                None => "__init__.py defines no register(ctx)".into(),
            });
        }
        other => {
            interp.out.reason = Some(format!(
                "register in __init__.py is {} and cannot be followed statically",
                describe(&other)
            ));
        }
    }
    if ev.exhausted() {
        interp.out.reason = Some("the analysis budget ran out; results may be incomplete".into());
    }
    interp.out
}

fn describe(v: &Val<'_>) -> String {
    match v {
        Val::External(path) => format!("imported from `{path}`"),
        Val::Class(..) => "a class".into(),
        Val::Func(..) => "a lambda".into(),
        _ => "not a plain function".into(),
    }
}

/// Parameter kinds of a function definition.
enum Param {
    Plain(String),
    Default(String),
    Star(String),
    DoubleStar(String),
    KeywordOnlyMarker,
}

fn params<'t>(set: &SourceSet, m: ModId, def: Node<'t>) -> Vec<Param> {
    let module = &set.modules[m];
    let Some(list) = def.child_by_field_name("parameters") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in list.named_children() {
        let name_of = |n: Node<'_>| module.text_of(n).to_string();
        match p.kind() {
            "identifier" => out.push(Param::Plain(name_of(p))),
            "typed_parameter" => {
                let inner = p.named_children().next();
                match inner {
                    Some(i) if i.kind() == "identifier" => out.push(Param::Plain(name_of(i))),
                    Some(i) if i.kind() == "list_splat_pattern" => out.push(Param::Star(
                        i.named_child(0).map(name_of).unwrap_or_default(),
                    )),
                    Some(i) if i.kind() == "dictionary_splat_pattern" => out.push(
                        Param::DoubleStar(i.named_child(0).map(name_of).unwrap_or_default()),
                    ),
                    _ => {}
                }
            }
            "default_parameter" | "typed_default_parameter" => {
                if let Some(n) = p.child_by_field_name("name") {
                    out.push(Param::Default(name_of(n)));
                }
            }
            "list_splat_pattern" => out.push(Param::Star(
                p.named_child(0).map(name_of).unwrap_or_default(),
            )),
            "dictionary_splat_pattern" => out.push(Param::DoubleStar(
                p.named_child(0).map(name_of).unwrap_or_default(),
            )),
            "keyword_separator" => out.push(Param::KeywordOnlyMarker),
            _ => {}
        }
    }
    out
}

/// Whether a function or lambda accepts `**kwargs`.
pub fn accepts_kwargs(def: Node<'_>) -> bool {
    let Some(list) = def.child_by_field_name("parameters") else {
        return false;
    };
    list.named_children().any(|p| {
        p.kind() == "dictionary_splat_pattern"
            || (p.kind() == "typed_parameter" && {
                p.named_children()
                    .any(|i| i.kind() == "dictionary_splat_pattern")
            })
    })
}

impl<'t> Interp<'_, '_, 't> {
    fn set(&self) -> &'t SourceSet {
        self.ev.set
    }

    fn call_function(
        &mut self,
        m: ModId,
        def: Node<'t>,
        args: Vec<Val<'t>>,
        kwargs: Vec<(String, Val<'t>)>,
        depth: usize,
    ) {
        self.call_closure(m, def, args, kwargs, depth, Env::new());
    }

    /// Calls a function whose free names come from `captured` (a closure defined inside the
    /// function being interpreted: its enclosing locals, `ctx` among them).
    fn call_closure(
        &mut self,
        m: ModId,
        def: Node<'t>,
        args: Vec<Val<'t>>,
        kwargs: Vec<(String, Val<'t>)>,
        depth: usize,
        captured: Env<'t>,
    ) {
        if depth > MAX_CALL_DEPTH || self.active.contains(&def.id()) || self.ev.exhausted() {
            return;
        }
        let mut env = captured;
        let mut positional = args.into_iter();
        let mut keyword_only = false;
        for p in params(self.set(), m, def) {
            match p {
                Param::KeywordOnlyMarker => keyword_only = true,
                Param::Plain(name) | Param::Default(name) => {
                    let from_kw = kwargs
                        .iter()
                        .find(|(k, _)| *k == name)
                        .map(|(_, v)| v.clone());
                    let value = if keyword_only {
                        from_kw
                    } else {
                        from_kw.or_else(|| positional.next())
                    };
                    env.insert(name, value.unwrap_or(Val::Unknown));
                }
                Param::Star(name) => {
                    keyword_only = true;
                    env.insert(name, Val::Seq(positional.by_ref().collect()));
                }
                Param::DoubleStar(name) => {
                    env.insert(
                        name,
                        Val::Dict(
                            kwargs
                                .iter()
                                .map(|(k, v)| (Val::Str(k.clone()), v.clone()))
                                .collect(),
                        ),
                    );
                }
            }
        }
        let Some(body) = def.child_by_field_name("body") else {
            return;
        };
        if def.kind() == "lambda" {
            self.scan_calls(m, body, &mut env, depth);
            return;
        }
        self.active.push(def.id());
        self.exec_block(m, body, &mut env, depth);
        self.active.pop();
    }

    fn exec_block(&mut self, m: ModId, block: Node<'t>, env: &mut Env<'t>, depth: usize) {
        let statements: Vec<Node<'t>> = block.named_children().collect();
        for stmt in statements {
            if self.ev.exhausted() {
                return;
            }
            self.exec_statement(m, stmt, env, depth);
        }
    }

    fn exec_statement(&mut self, m: ModId, stmt: Node<'t>, env: &mut Env<'t>, depth: usize) {
        let module = &self.set().modules[m];
        match stmt.kind() {
            "expression_statement" | "return_statement" => {
                let exprs: Vec<Node<'t>> = stmt.named_children().collect();
                for expr in exprs {
                    match expr.kind() {
                        "assignment" => self.assign(m, expr, env, depth),
                        "augmented_assignment" => {
                            if let Some(right) = expr.child_by_field_name("right") {
                                self.scan_calls(m, right, env, depth);
                            }
                            if let Some(left) = expr.child_by_field_name("left") {
                                bind_targets(module, left, Val::Unknown, env);
                            }
                        }
                        _ => self.scan_calls(m, expr, env, depth),
                    }
                }
            }
            "for_statement" => {
                let (Some(left), Some(right), Some(body)) = (
                    stmt.child_by_field_name("left"),
                    stmt.child_by_field_name("right"),
                    stmt.child_by_field_name("body"),
                ) else {
                    return;
                };
                self.scan_calls(m, right, env, depth);
                let items = match self.ev.eval(m, right, Some(env)) {
                    Val::Seq(items) => Some(items),
                    Val::Dict(pairs) => Some(pairs.into_iter().map(|(k, _)| k).collect()),
                    _ => None,
                };
                match items {
                    Some(items) => {
                        for item in items.into_iter().take(MAX_LOOP) {
                            bind_targets(module, left, item, env);
                            self.exec_block(m, body, env, depth);
                        }
                    }
                    None => {
                        bind_targets(module, left, Val::Unknown, env);
                        self.exec_block(m, body, env, depth);
                    }
                }
                if let Some(alt) = stmt
                    .child_by_field_name("alternative")
                    .and_then(|a| a.child_by_field_name("body"))
                {
                    self.exec_block(m, alt, env, depth);
                }
            }
            "if_statement" | "try_statement" | "while_statement" | "with_statement" => {
                if let Some(cond) = stmt.child_by_field_name("condition") {
                    self.scan_calls(m, cond, env, depth);
                }
                let children: Vec<Node<'t>> = stmt.named_children().collect();
                let consequence = stmt.child_by_field_name("consequence").map(|n| n.id());
                for child in children {
                    match child.kind() {
                        "block" => {
                            // `if hasattr(ctx, "m"):` tolerates the absence of `m` inside;
                            // `try:` with a broad `except` tolerates any failure inside.
                            let guarded = match stmt.child_by_field_name("condition") {
                                Some(cond) if Some(child.id()) == consequence => {
                                    self.hasattr_guards(m, cond, env)
                                }
                                _ => Vec::new(),
                            };
                            let catches =
                                stmt.kind() == "try_statement" && catches_broadly(module, stmt);
                            let before = self.absent_ok.len();
                            self.absent_ok.extend(guarded);
                            self.catching += usize::from(catches);
                            self.exec_block(m, child, env, depth);
                            self.catching -= usize::from(catches);
                            self.absent_ok.truncate(before);
                        }
                        "with_clause" => {
                            self.scan_calls(m, child, env, depth);
                            for item in child.named_children() {
                                if let Some(value) = item.child_by_field_name("value")
                                    && value.kind() == "as_pattern"
                                {
                                    for target in value
                                        .named_children()
                                        .filter(|t| t.kind() == "as_pattern_target")
                                    {
                                        bind_targets(module, target, Val::Unknown, env);
                                    }
                                }
                            }
                        }
                        "elif_clause" | "else_clause" | "except_clause" | "finally_clause" => {
                            let blocks: Vec<Node<'t>> = child
                                .named_children()
                                .filter(|b| b.kind() == "block")
                                .collect();
                            for b in blocks {
                                self.exec_block(m, b, env, depth);
                            }
                        }
                        _ => {}
                    }
                }
            }
            "function_definition" => {
                if let Some(name) = stmt.child_by_field_name("name") {
                    env.insert(module.text_of(name).to_string(), Val::Func(m, stmt));
                }
            }
            "decorated_definition" => {
                if let Some(def) = stmt.child_by_field_name("definition")
                    && def.kind() == "function_definition"
                    && let Some(name) = def.child_by_field_name("name")
                {
                    env.insert(module.text_of(name).to_string(), Val::Func(m, def));
                }
            }
            "import_statement" | "import_from_statement" => {
                for (name, target) in super::scope::resolve_import(self.set(), m, stmt) {
                    if name == "*" {
                        continue;
                    }
                    let value = match target {
                        super::scope::Imported::Module(id) => Val::Module(id),
                        super::scope::Imported::Attr(id, attr) => {
                            let sub = SourceSet::join(&self.set().modules[id].dotted, &attr);
                            match self.set().module(&sub) {
                                Some(s) => Val::Module(s),
                                None => self.ev.lookup(id, &attr),
                            }
                        }
                        super::scope::Imported::External(path) => Val::External(path),
                        super::scope::Imported::Unresolved => Val::Unknown,
                    };
                    env.insert(name, value);
                }
            }
            _ => {}
        }
    }

    fn assign(&mut self, m: ModId, assign: Node<'t>, env: &mut Env<'t>, depth: usize) {
        let module = &self.set().modules[m];
        let Some(right) = assign.child_by_field_name("right") else {
            return;
        };
        self.scan_calls(m, right, env, depth);
        let value = if right.kind() == "assignment" {
            self.assign(m, right, env, depth);
            Val::Unknown
        } else if let Some(v) = self.call_results.remove(&right.id()) {
            v
        } else {
            self.ev.eval(m, right, Some(env))
        };
        let Some(left) = assign.child_by_field_name("left") else {
            return;
        };
        // `self.x = value` on an object being interpreted.
        if left.kind() == "attribute"
            && let (Some(obj), Some(attr)) = (
                left.child_by_field_name("object"),
                left.child_by_field_name("attribute"),
            )
            && let Val::Instance(inst) = self.ev.eval(m, obj, Some(env))
        {
            inst.attrs
                .borrow_mut()
                .insert(module.text_of(attr).to_string(), value);
            return;
        }
        bind_targets(module, left, value, env);
    }

    /// Finds the calls inside an expression (outermost first, not descending into lambdas
    /// or comprehensions' own scopes) and handles each.
    fn scan_calls(&mut self, m: ModId, expr: Node<'t>, env: &mut Env<'t>, depth: usize) {
        let mut stack = vec![expr];
        let mut calls = Vec::new();
        while let Some(node) = stack.pop() {
            if matches!(
                node.kind(),
                "lambda" | "function_definition" | "class_definition"
            ) {
                continue;
            }
            if node.kind() == "call" {
                calls.push(node);
            }
            let children: Vec<Node<'t>> = node.named_children().collect();
            stack.extend(children.into_iter().rev());
        }
        // Innermost calls first, as Python evaluates them.
        for call in calls.into_iter().rev() {
            self.handle_call(m, call, env, depth);
        }
    }

    /// A call of `functools.partial(...)`: of a ctx method (a registration with the bound and
    /// the given arguments), or of a package function (followed).
    fn call_partial(
        &mut self,
        m: ModId,
        call: Node<'t>,
        args: Node<'t>,
        env: &mut Env<'t>,
        partial: &Partial<'t>,
        depth: usize,
    ) {
        let module = &self.set().modules[m];
        let (positional, keywords, opaque) = self.arguments(m, args, env);
        let mut all_positional = partial.args.clone();
        all_positional.extend(positional);
        let mut all_keywords = partial.kwargs.clone();
        all_keywords.extend(keywords);
        match &partial.func {
            Val::CtxMethod(method, guarded) => {
                self.ctx_call(
                    m,
                    call,
                    method,
                    *guarded,
                    all_positional.len(),
                    &all_keywords,
                    opaque,
                );
                if let Some(kind) = reg_kind(method) {
                    self.record_values(
                        m,
                        call,
                        kind,
                        &all_positional,
                        &all_keywords,
                        opaque,
                        || module.text_of(args).to_string(),
                    );
                }
            }
            Val::Func(m2, def) => {
                self.call_function(*m2, *def, all_positional, all_keywords, depth + 1);
            }
            _ => {}
        }
    }

    fn handle_call(&mut self, m: ModId, call: Node<'t>, env: &mut Env<'t>, depth: usize) {
        let (Some(func), Some(args)) = (
            call.child_by_field_name("function"),
            call.child_by_field_name("arguments"),
        ) else {
            return;
        };
        if let Some((method, guarded)) = self.ctx_method(m, func, env) {
            self.handle_ctx_call(m, call, args, &method, guarded, env);
            return;
        }
        // `functools.partial(ctx.register_hook, "name")(callback)`, or of a package function.
        if let Val::Partial(partial) = self.ev.eval(m, func, Some(env)) {
            self.call_partial(m, call, args, env, &partial, depth);
            return;
        }
        if self.dynamic_builtin(m, call, func, args, env) {
            return;
        }
        // A callee computed from ctx that does not resolve to a ctx method: what it calls
        // (and registers) is unknown, so it is reported, never dropped.
        if self.callee_mentions_ctx(m, func, env)
            && !matches!(
                self.ev.eval(m, func, Some(env)),
                Val::Func(..) | Val::Partial(_)
            )
        {
            let module = &self.set().modules[m];
            let shown = crate::located::truncate_chars(module.text_of(call), 80);
            self.dynamic(
                m,
                call,
                format!("a call whose callee is computed from ctx (`{shown}`)"),
            );
            return;
        }
        let (positional, keywords, opaque) = self.arguments(m, args, env);
        let callee = self.callee(m, func, env);
        let call_args = CallArgs {
            positional,
            keywords,
            opaque,
        };
        if self.follow_package_callee(m, call, &callee, &call_args, env, depth)
            || self.map_closure(m, call, func, &call_args, env, depth)
            || self.closure_escapes(m, call, func, &callee, &call_args, env)
        {
            return;
        }
        self.ctx_handed_on(m, call, func, callee, call_args, env, depth);
    }

    /// The ctx method a call's function names: `ctx.register_x` (unguarded), or a ctx method
    /// taken as a value earlier (`reg = ctx.register_tool`; guarded if taken under a check).
    fn ctx_method(
        &mut self,
        m: ModId,
        func: Node<'t>,
        env: &mut Env<'t>,
    ) -> Option<(String, bool)> {
        let module = &self.set().modules[m];
        match func.kind() {
            "attribute" => match (
                func.child_by_field_name("object"),
                func.child_by_field_name("attribute"),
            ) {
                (Some(obj), Some(method))
                    if matches!(self.ev.eval(m, obj, Some(env)), Val::Ctx) =>
                {
                    Some((module.text_of(method).to_string(), false))
                }
                _ => None,
            },
            // A name bound to a ctx method, or any computed callee that evaluates to one:
            // `getattr(ctx, "register_tool")(…)`, `(ctx.register_tool)(…)`, `[ctx.register_tool][0](…)`.
            _ => match self.ev.eval(m, func, Some(env)) {
                Val::CtxMethod(name, guarded) => Some((name, guarded)),
                _ => None,
            },
        }
    }

    /// Whether a computed callee (not a plain name or attribute) reaches ctx: some name in it
    /// evaluates to ctx or a value holding it (`{"t": ctx.register_tool}[k](…)`).
    fn callee_mentions_ctx(&self, m: ModId, func: Node<'t>, env: &Env<'t>) -> bool {
        if matches!(func.kind(), "identifier" | "attribute") {
            return false;
        }
        let mut stack = vec![func];
        while let Some(node) = stack.pop() {
            if node.kind() == "identifier" && self.ev.eval(m, node, Some(env)).holds_ctx() {
                return true;
            }
            stack.extend(node.named_children());
        }
        false
    }

    /// A call of a ctx method: checked against the API, recorded when it registers; a dunder
    /// reached through ctx is dynamic.
    fn handle_ctx_call(
        &mut self,
        m: ModId,
        call: Node<'t>,
        args: Node<'t>,
        method: &str,
        guarded: bool,
        env: &mut Env<'t>,
    ) {
        let module = &self.set().modules[m];
        let (positional, keywords, opaque) = self.arguments(m, args, env);
        self.ctx_call(
            m,
            call,
            method,
            guarded,
            positional.len(),
            &keywords,
            opaque,
        );
        if method.starts_with("__") {
            let what = format!("`{}` reaches ctx through `{method}`", module.text_of(call));
            self.dynamic(m, call, what);
            return;
        }
        if let Some(kind) = reg_kind(method) {
            self.record(m, call, args, kind, env);
        }
    }

    /// What a call calls. `Plugin(ctx).install()`: the object built by the inner call
    /// (already interpreted, innermost calls first) is the receiver.
    fn callee(&mut self, m: ModId, func: Node<'t>, env: &mut Env<'t>) -> Val<'t> {
        let module = &self.set().modules[m];
        match (
            func.kind(),
            func.child_by_field_name("object"),
            func.child_by_field_name("attribute"),
        ) {
            ("attribute", Some(obj), Some(attr)) if self.call_results.contains_key(&obj.id()) => {
                let receiver = self
                    .call_results
                    .get(&obj.id())
                    .cloned()
                    .unwrap_or(Val::Unknown);
                self.ev.member(receiver, module.text_of(attr), 0)
            }
            _ => self.ev.eval(m, func, Some(env)),
        }
    }

    /// Follows a call into the package's own code: methods of package objects and
    /// constructors when ctx is involved, and functions defined inside the interpreted one
    /// that use ctx from the enclosing scope. True when the call was a package method,
    /// class or such a closure (followed or not).
    fn follow_package_callee(
        &mut self,
        m: ModId,
        call: Node<'t>,
        callee: &Val<'t>,
        args: &CallArgs<'t>,
        env: &mut Env<'t>,
        depth: usize,
    ) -> bool {
        match callee {
            // Methods of package objects: followed when the object or the arguments carry ctx.
            Val::Method(inst, m2, def) => {
                if args.hold_ctx() || Val::Instance(inst.clone()).holds_ctx() {
                    let mut all = vec![Val::Instance(inst.clone())];
                    all.extend(args.positional.iter().cloned());
                    self.call_function(*m2, *def, all, args.keywords.clone(), depth + 1);
                }
                true
            }
            // Constructing a package object with ctx: run its __init__, keep the object.
            Val::Class(m2, class) => {
                if args.hold_ctx() {
                    let inst = super::eval::Instance::new(*m2, *class);
                    if let Val::Func(im, init) = self.ev.class_member(*m2, *class, "__init__", 0) {
                        let mut all = vec![Val::Instance(inst.clone())];
                        all.extend(args.positional.iter().cloned());
                        self.call_function(im, init, all, args.keywords.clone(), depth + 1);
                    }
                    self.call_results.insert(call.id(), Val::Instance(inst));
                }
                true
            }
            // A function defined inside the interpreted one that uses ctx from its enclosing
            // scope (`def add(n): ctx.register_tool(n, …)`; `lambda n: ctx.register_hook(…)`).
            Val::Func(m2, def) if *m2 == m && self.captures_ctx(m, *def, env) => {
                let memo = (
                    def.id(),
                    1,
                    format!("{:?}{:?}", args.positional, args.keywords),
                );
                if self.seen_calls.insert(memo) {
                    self.call_closure(
                        m,
                        *def,
                        args.positional.clone(),
                        args.keywords.clone(),
                        depth + 1,
                        env.clone(),
                    );
                }
                true
            }
            _ => false,
        }
    }

    /// `map(f, items)` / `filter(f, items)` with a function using ctx: called per item, or
    /// undetermined when the items are not known. True when the call was such a map.
    fn map_closure(
        &mut self,
        m: ModId,
        call: Node<'t>,
        func: Node<'t>,
        args: &CallArgs<'t>,
        env: &mut Env<'t>,
        depth: usize,
    ) -> bool {
        let module = &self.set().modules[m];
        let Some(name) = self.builtin_name(m, func, env) else {
            return false;
        };
        let Some(Val::Func(m2, def)) = args.positional.first() else {
            return false;
        };
        if !matches!(name, "map" | "filter") || *m2 != m || !self.captures_ctx(m, *def, env) {
            return false;
        }
        match args.positional.get(1) {
            Some(Val::Seq(items)) => {
                for item in items.iter().take(MAX_LOOP) {
                    self.call_closure(
                        m,
                        *def,
                        vec![item.clone()],
                        Vec::new(),
                        depth + 1,
                        env.clone(),
                    );
                }
            }
            _ => self.undetermined(
                m,
                call,
                None,
                format!(
                    "a function using ctx is mapped over values not known statically: `{}`",
                    module.text_of(call)
                ),
            ),
        }
        true
    }

    /// A function using ctx handed to code that cannot be followed: undetermined. True when
    /// that happened.
    fn closure_escapes(
        &mut self,
        m: ModId,
        call: Node<'t>,
        func: Node<'t>,
        callee: &Val<'t>,
        args: &CallArgs<'t>,
        env: &mut Env<'t>,
    ) -> bool {
        let module = &self.set().modules[m];
        let hands_closure = args.values().any(
            |v| matches!(v, Val::Func(m2, def) if *m2 == m && self.captures_ctx(m, *def, env)),
        );
        if !hands_closure || matches!(callee, Val::Func(..)) {
            return false;
        }
        self.undetermined(
            m,
            call,
            None,
            format!(
                "a function using ctx is passed to `{}`, which cannot be followed statically",
                module.text_of(func)
            ),
        );
        true
    }

    /// ctx (or an opaque splat) handed to another callee: a package function is followed;
    /// introspection builtins and `functools.partial` are harmless; anything else hides what
    /// it registers (undetermined).
    #[allow(clippy::too_many_arguments)]
    fn ctx_handed_on(
        &mut self,
        m: ModId,
        call: Node<'t>,
        func: Node<'t>,
        callee: Val<'t>,
        args: CallArgs<'t>,
        env: &mut Env<'t>,
        depth: usize,
    ) {
        if !(args.hold_ctx() || args.opaque) {
            return;
        }
        // Introspection builtins and `functools.partial` (evaluated as a value) hand ctx to
        // nothing that registers.
        if self
            .builtin_name(m, func, env)
            .is_some_and(is_introspection_builtin)
            || matches!(&callee, Val::External(p) if p == "functools.partial")
        {
            return;
        }
        let module = &self.set().modules[m];
        match callee {
            Val::Func(m2, def) => {
                let memo = (
                    def.id(),
                    0,
                    format!("{:?}{:?}", args.positional, args.keywords),
                );
                if self.seen_calls.insert(memo) {
                    self.call_function(m2, def, args.positional, args.keywords, depth + 1);
                }
            }
            _ if !args.hold_ctx() => {}
            other => {
                let callee = module.text_of(func).to_string();
                // Passing ctx to a class (a plugin object) or external code hides what it registers.
                let what = match other {
                    Val::External(path) => format!(
                        "ctx is passed to `{callee}` (from `{path}`), which is not part of the package"
                    ),
                    Val::Class(..) => format!("ctx is passed to class `{callee}`"),
                    _ => {
                        format!("ctx is passed to `{callee}`, which cannot be followed statically")
                    }
                };
                self.undetermined(m, call, None, what);
            }
        }
    }

    /// Evaluates call arguments: positional values, keyword values, and whether a splat
    /// could not be expanded.
    fn arguments(
        &self,
        m: ModId,
        args: Node<'t>,
        env: &Env<'t>,
    ) -> (Vec<Val<'t>>, Vec<(String, Val<'t>)>, bool) {
        let module = &self.set().modules[m];
        let mut positional = Vec::new();
        let mut keywords = Vec::new();
        let mut opaque = false;
        for a in args.named_children() {
            match a.kind() {
                "keyword_argument" => {
                    if let (Some(k), Some(v)) = (
                        a.child_by_field_name("name"),
                        a.child_by_field_name("value"),
                    ) {
                        keywords
                            .push((module.text_of(k).to_string(), self.ev.eval(m, v, Some(env))));
                    }
                }
                "list_splat" => match a.named_child(0).map(|n| self.ev.eval(m, n, Some(env))) {
                    Some(Val::Seq(items)) => positional.extend(items),
                    _ => opaque = true,
                },
                "dictionary_splat" => match a.named_child(0).map(|n| self.ev.eval(m, n, Some(env)))
                {
                    Some(Val::Dict(pairs)) => {
                        for (k, v) in pairs {
                            match k {
                                Val::Str(k) => keywords.push((k, v)),
                                _ => opaque = true,
                            }
                        }
                    }
                    _ => opaque = true,
                },
                "comment" => {}
                _ => positional.push(self.ev.eval(m, a, Some(env))),
            }
        }
        (positional, keywords, opaque)
    }

    fn record(&mut self, m: ModId, call: Node<'t>, args: Node<'t>, kind: RegKind, env: &Env<'t>) {
        let module = &self.set().modules[m];
        let (positional, keywords, opaque) = self.arguments(m, args, env);
        let name_expr = || -> String {
            let found = args.named_children().find(|a| {
                a.kind() != "keyword_argument"
                    || a.child_by_field_name("name").is_some_and(|n| {
                        matches!(
                            module.text_of(n),
                            "name" | "hook_name" | "hook" | "event" | "kind"
                        )
                    })
            });
            found.map_or_else(
                || module.text_of(args).to_string(),
                |a| module.text_of(a).to_string(),
            )
        };
        self.record_values(m, call, kind, &positional, &keywords, opaque, name_expr);
    }

    /// Records a registration from its evaluated arguments; `name_expr` gives the text shown
    /// when the name is not known.
    #[allow(clippy::too_many_arguments)]
    fn record_values(
        &mut self,
        m: ModId,
        call: Node<'t>,
        kind: RegKind,
        positional: &[Val<'t>],
        keywords: &[(String, Val<'t>)],
        opaque: bool,
        name_expr: impl FnOnce() -> String,
    ) {
        let module = &self.set().modules[m];
        let keyword = |names: &[&str]| {
            keywords
                .iter()
                .find(|(k, _)| names.contains(&k.as_str()))
                .map(|(_, v)| v.clone())
        };
        let name = keyword(&["name"]).or_else(|| match kind {
            RegKind::Tool => None,
            RegKind::Hook => keyword(&["hook_name", "hook", "event"]),
            RegKind::Middleware => keyword(&["kind"]),
        });
        let name = name.or_else(|| positional.first().cloned());
        let Some(Val::Str(name)) = name else {
            let _ = opaque;
            self.undetermined(m, call, Some(kind), name_expr());
            return;
        };
        let override_builtin =
            kind == RegKind::Tool && matches!(keyword(&["override"]), Some(Val::Bool(true)));
        let callback = match kind {
            RegKind::Tool => None,
            _ => keyword(&["callback", "handler", "fn", "func", "cb"])
                .or_else(|| positional.get(1).cloned())
                .and_then(|cb| match cb {
                    Val::Func(cm, def) | Val::Method(_, cm, def) => {
                        let cmod = &self.set().modules[cm];
                        Some(Callback {
                            name: def
                                .child_by_field_name("name")
                                .map_or("<lambda>".to_string(), |n| cmod.text_of(n).to_string()),
                            file: cmod.rel.clone(),
                            pos: cmod.pos(def),
                            accepts_kwargs: accepts_kwargs(def),
                        })
                    }
                    _ => None,
                }),
        };
        let registration = Registration {
            kind,
            name,
            file: module.rel.clone(),
            pos: module.pos(call),
            override_builtin,
            callback,
        };
        let duplicate = self.out.found.iter().any(|r| {
            r.kind == kind
                && r.name == registration.name
                && r.file == registration.file
                && r.pos == registration.pos
        });
        if !duplicate {
            self.out.found.push(registration);
        }
    }

    fn undetermined(&mut self, m: ModId, at: Node<'t>, kind: Option<RegKind>, expression: String) {
        self.push_undetermined(m, at, kind, expression, false);
    }

    /// Dynamic code in interpreted code: undetermined, and a security finding.
    fn dynamic(&mut self, m: ModId, at: Node<'t>, expression: String) {
        self.push_undetermined(m, at, None, expression, true);
    }

    fn push_undetermined(
        &mut self,
        m: ModId,
        at: Node<'t>,
        kind: Option<RegKind>,
        expression: String,
        dynamic: bool,
    ) {
        let module = &self.set().modules[m];
        let entry = Undetermined {
            kind,
            file: module.rel.clone(),
            pos: module.pos(at),
            expression: crate::located::truncate_chars(&expression, 160),
            dynamic,
            unanalysed: false,
        };
        if !self.out.undetermined.contains(&entry) {
            self.out.undetermined.push(entry);
        }
    }
}

impl<'t> Interp<'_, '_, 't> {
    /// Records a call on ctx with the guards in force.
    #[allow(clippy::too_many_arguments)]
    fn ctx_call(
        &mut self,
        m: ModId,
        call: Node<'t>,
        method: &str,
        guarded: bool,
        positional: usize,
        keywords: &[(String, Val<'t>)],
        opaque: bool,
    ) {
        if method.starts_with("__") {
            return;
        }
        let module = &self.set().modules[m];
        let entry = CtxCall {
            method: method.to_string(),
            file: module.rel.clone(),
            pos: module.pos(call),
            text: crate::located::truncate_chars(module.text_of(call), 120),
            positional,
            keywords: keywords.iter().map(|(k, _)| k.clone()).collect(),
            opaque,
            absent_ok: guarded || self.absent_ok.iter().any(|g| g == method),
            errors_ok: self.catching > 0,
        };
        if !self.out.calls.contains(&entry) {
            self.out.calls.push(entry);
        }
    }

    /// The methods a condition proves present: `hasattr(ctx, "m")` and
    /// `callable(getattr(ctx, "m", None))`, also inside `and`.
    fn hasattr_guards(&self, m: ModId, cond: Node<'t>, env: &Env<'t>) -> Vec<String> {
        let module = &self.set().modules[m];
        let mut out = Vec::new();
        cond.preorder(|node, _| {
            if node.kind() == "call"
                && let (Some(func), Some(args)) = (
                    node.child_by_field_name("function"),
                    node.child_by_field_name("arguments"),
                )
            {
                let list: Vec<Node<'t>> = args.named_children().collect();
                match (module.text_of(func), list.as_slice()) {
                    ("hasattr", [obj, name]) => {
                        if self.ev.eval(m, *obj, Some(env)).holds_ctx()
                            && let Val::Str(s) = self.ev.eval(m, *name, Some(env))
                        {
                            out.push(s);
                        }
                    }
                    ("callable", [value]) => {
                        if let Val::CtxMethod(s, _) = self.ev.eval(m, *value, Some(env)) {
                            out.push(s);
                        }
                    }
                    _ => {}
                }
            }
            // `not hasattr(…)` proves nothing for the body.
            node.kind() != "not_operator"
        });
        out
    }

    /// The builtin a call's function names (`exec`, `map`, …), when it is a bare name that
    /// nothing in scope shadows.
    fn builtin_name(&self, m: ModId, func: Node<'t>, env: &Env<'t>) -> Option<&'t str> {
        if func.kind() != "identifier" {
            return None;
        }
        let name = self.set().modules[m].text_of(func);
        let shadowed = env.contains_key(name) || self.ev.scopes.modules[m].names.contains_key(name);
        (!shadowed).then_some(name)
    }

    /// Whether the function or lambda `def` (defined in module `m`) reads a name that is
    /// bound to ctx (or something holding it) in `env` and that it does not bind itself.
    fn captures_ctx(&self, m: ModId, def: Node<'t>, env: &Env<'t>) -> bool {
        let module = &self.set().modules[m];
        let own: HashSet<String> = params(self.set(), m, def)
            .into_iter()
            .filter_map(|p| match p {
                Param::Plain(n) | Param::Default(n) | Param::Star(n) | Param::DoubleStar(n) => {
                    Some(n)
                }
                Param::KeywordOnlyMarker => None,
            })
            .collect();
        let Some(body) = def.child_by_field_name("body") else {
            return false;
        };
        let mut found = false;
        body.preorder(|node, _| {
            if found {
                return false;
            }
            if node.kind() == "identifier" {
                let name = module.text_of(node);
                if !own.contains(name) && env.get(name).is_some_and(Val::holds_ctx) {
                    found = true;
                }
            }
            true
        });
        found
    }

    /// Dynamic code reached from `register(ctx)`: `exec`/`eval`/`compile` (of anything: the
    /// code inside a string is not analysed), `__import__`/`importlib.import_module` of a
    /// computed name, `getattr`/`setattr`/`delattr` on ctx with a computed name, and
    /// `locals()`/`globals()`/`vars()`. Each is an undetermined, dynamic entry. Returns
    /// whether the call was one of them.
    fn dynamic_builtin(
        &mut self,
        m: ModId,
        call: Node<'t>,
        func: Node<'t>,
        args: Node<'t>,
        env: &Env<'t>,
    ) -> bool {
        let module = &self.set().modules[m];
        let first_args: Vec<Node<'t>> = {
            args.named_children()
                .filter(|a| !matches!(a.kind(), "keyword_argument" | "comment"))
                .collect()
        };
        let arg_is_literal = |i: usize| {
            first_args
                .get(i)
                .is_some_and(|a| matches!(self.ev.eval(m, *a, Some(env)), Val::Str(_)))
        };
        let shown = crate::located::truncate_chars(module.text_of(call), 80);
        let name = self.builtin_name(m, func, env);
        let what = match name {
            Some(n @ ("exec" | "eval" | "compile")) => Some(format!(
                "`{n}(…)` runs code that is not analysed (`{shown}`)"
            )),
            Some("__import__") if !arg_is_literal(0) => {
                Some(format!("`__import__` of a computed name (`{shown}`)"))
            }
            Some(n @ ("locals" | "globals" | "vars")) => Some(format!(
                "`{n}()` can reach ctx without naming it (`{shown}`)"
            )),
            Some(n @ ("getattr" | "setattr" | "delattr" | "hasattr"))
                if first_args
                    .first()
                    .is_some_and(|a| self.ev.eval(m, *a, Some(env)).holds_ctx())
                    && !arg_is_literal(1) =>
            {
                Some(format!(
                    "`{n}` on ctx with a computed attribute name (`{shown}`)"
                ))
            }
            _ => match self.ev.eval(m, func, Some(env)) {
                Val::External(path) if path == "importlib.import_module" && !arg_is_literal(0) => {
                    Some(format!(
                        "`importlib.import_module` of a computed name (`{shown}`)"
                    ))
                }
                _ => None,
            },
        };
        match what {
            Some(what) => {
                self.dynamic(m, call, what);
                true
            }
            None => false,
        }
    }
}

/// The kind of registration a ctx method makes, if it is one of the three checked ones.
fn reg_kind(method: &str) -> Option<RegKind> {
    match method {
        "register_tool" => Some(RegKind::Tool),
        "register_hook" => Some(RegKind::Hook),
        "register_middleware" => Some(RegKind::Middleware),
        _ => None,
    }
}

/// Whether a `try` statement has an `except` that catches `AttributeError`/`TypeError` (or
/// anything broader): what fails inside it does not stop `register(ctx)`.
fn catches_broadly(module: &super::source::PyModule, stmt: Node<'_>) -> bool {
    stmt.named_children()
        .filter(|n| n.kind() == "except_clause")
        .any(|clause| {
            let caught: Vec<Node<'_>> = clause
                .named_children()
                .filter(|n| n.kind() != "block")
                .collect();
            caught.is_empty()
                || caught.iter().any(|n| {
                    let text = module.text_of(*n);
                    ["Exception", "BaseException", "AttributeError", "TypeError"]
                        .iter()
                        .any(|name| text.contains(name))
                })
        })
}

/// Binds assignment or loop targets (`x`, `a, b`, `(a, b)`, `[a, b]`) to a value.
fn bind_targets<'t>(
    module: &super::source::PyModule,
    target: Node<'t>,
    value: Val<'t>,
    env: &mut Env<'t>,
) {
    match target.kind() {
        "identifier" => {
            env.insert(module.text_of(target).to_string(), value);
        }
        "pattern_list"
        | "tuple_pattern"
        | "list_pattern"
        | "expression_list"
        | "tuple"
        | "list"
        | "as_pattern_target"
        | "parenthesized_expression" => {
            let parts: Vec<Node<'t>> = target.named_children().collect();
            if target.kind() == "as_pattern_target" || target.kind() == "parenthesized_expression" {
                if let Some(inner) = parts.first() {
                    bind_targets(module, *inner, value, env);
                }
                return;
            }
            match value {
                Val::Seq(items) if items.len() == parts.len() => {
                    for (p, v) in parts.into_iter().zip(items) {
                        bind_targets(module, p, v, env);
                    }
                }
                _ => {
                    for p in parts {
                        bind_targets(module, p, Val::Unknown, env);
                    }
                }
            }
        }
        _ => {}
    }
}

/// A call's evaluated arguments.
struct CallArgs<'t> {
    positional: Vec<Val<'t>>,
    keywords: Vec<(String, Val<'t>)>,
    /// A splat that could not be expanded.
    opaque: bool,
}

impl<'t> CallArgs<'t> {
    /// Every argument value, positional then keyword.
    fn values(&self) -> impl Iterator<Item = &Val<'t>> {
        self.positional
            .iter()
            .chain(self.keywords.iter().map(|(_, v)| v))
    }

    /// Whether any argument carries ctx.
    fn hold_ctx(&self) -> bool {
        self.values().any(Val::holds_ctx)
    }
}

/// Builtins that only look at a value (ctx handed to them registers nothing).
fn is_introspection_builtin(name: &str) -> bool {
    matches!(
        name,
        "getattr"
            | "hasattr"
            | "callable"
            | "isinstance"
            | "issubclass"
            | "type"
            | "id"
            | "repr"
            | "str"
            | "len"
            | "bool"
            | "print"
    )
}
