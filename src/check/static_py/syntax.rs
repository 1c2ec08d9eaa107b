//! The syntax tree the checks walk: a module parsed by Astral's `ruff_python_parser`, laid
//! out as one flat tree whose node kinds and field names are tree-sitter-python's.
//!
//! Why this shape:
//! - ruff's parser is the fastest error-tolerant Python parser in Rust (8.5× tree-sitter on
//!   the real-plugin corpus, `bench-parsers/`), and it is what ruff itself runs on all the
//!   Python there is.
//! - The checks are pattern matches over a uniform tree ("every call whose `function` is an
//!   `attribute` …", "every string"); a flat array in pre-order makes those walks a loop and
//!   each step an index, which typed AST visitors are not. The vocabulary is the grammar the
//!   checks were first written against (`call`, `keyword_argument`, field `function`, …), so
//!   each rule reads as before and the move from tree-sitter changed no finding on the corpus
//!   (`docs/benchmarks.md`).
//!
//! What the layout leaves out, because no check needs it: comments, the parentheses around
//! an expression (a parenthesized expression *is* the expression here), escape sequences as
//! nodes of their own, and the inside of `match` patterns. Node ranges are byte offsets into
//! the module's text.
//!
//! Untrusted code can nest as deep as its size allows (`-` × 2,000,000 is one file of 2 MB):
//! ruff's parser spills its stack to the heap, the conversion grows its stack the same way,
//! and the parsed AST (dropped recursively by Rust) is dropped on a stack sized for its depth.

use ruff_python_ast::{
    self as ast, ArgOrKeyword, Expr, InterpolatedStringElement, Operator, Stmt, StringFlags,
    UnaryOp,
};
use ruff_text_size::{Ranged, TextRange};

/// A field of a node in its parent (tree-sitter-python's field names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Field {
    None,
    Alias,
    Alternative,
    Argument,
    Arguments,
    Attribute,
    Body,
    Cause,
    Condition,
    Consequence,
    Definition,
    Expression,
    FormatSpecifier,
    Function,
    Guard,
    Key,
    Left,
    ModuleName,
    Name,
    Object,
    Operator,
    Operators,
    Parameters,
    ReturnType,
    Right,
    Subject,
    Subscript,
    Superclasses,
    Type,
    TypeConversion,
    TypeParameters,
    Value,
}

impl Field {
    /// The field called `name` (`None` for a name no node carries).
    ///
    /// Always inlined: the checks name fields with literals, so the match folds to a
    /// constant at each call (looking the name up on every call was 2 % of a cold
    /// `validate`).
    #[inline(always)]
    fn named(name: &str) -> Option<Field> {
        Some(match name {
            "alias" => Field::Alias,
            "alternative" => Field::Alternative,
            "argument" => Field::Argument,
            "arguments" => Field::Arguments,
            "attribute" => Field::Attribute,
            "body" => Field::Body,
            "cause" => Field::Cause,
            "condition" => Field::Condition,
            "consequence" => Field::Consequence,
            "definition" => Field::Definition,
            "expression" => Field::Expression,
            "format_specifier" => Field::FormatSpecifier,
            "function" => Field::Function,
            "guard" => Field::Guard,
            "key" => Field::Key,
            "left" => Field::Left,
            "module_name" => Field::ModuleName,
            "name" => Field::Name,
            "object" => Field::Object,
            "operator" => Field::Operator,
            "operators" => Field::Operators,
            "parameters" => Field::Parameters,
            "return_type" => Field::ReturnType,
            "right" => Field::Right,
            "subject" => Field::Subject,
            "subscript" => Field::Subscript,
            "superclasses" => Field::Superclasses,
            "type" => Field::Type,
            "type_conversion" => Field::TypeConversion,
            "type_parameters" => Field::TypeParameters,
            "value" => Field::Value,
            _ => return None,
        })
    }

    /// The field's name, as [`Field::named`] takes it.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Field::None => return None,
            Field::Alias => "alias",
            Field::Alternative => "alternative",
            Field::Argument => "argument",
            Field::Arguments => "arguments",
            Field::Attribute => "attribute",
            Field::Body => "body",
            Field::Cause => "cause",
            Field::Condition => "condition",
            Field::Consequence => "consequence",
            Field::Definition => "definition",
            Field::Expression => "expression",
            Field::FormatSpecifier => "format_specifier",
            Field::Function => "function",
            Field::Guard => "guard",
            Field::Key => "key",
            Field::Left => "left",
            Field::ModuleName => "module_name",
            Field::Name => "name",
            Field::Object => "object",
            Field::Operator => "operator",
            Field::Operators => "operators",
            Field::Parameters => "parameters",
            Field::ReturnType => "return_type",
            Field::Right => "right",
            Field::Subject => "subject",
            Field::Subscript => "subscript",
            Field::Superclasses => "superclasses",
            Field::Type => "type",
            Field::TypeConversion => "type_conversion",
            Field::TypeParameters => "type_parameters",
            Field::Value => "value",
        })
    }
}

/// One node: 24 bytes. Nodes are numbered in pre-order, so a node's subtree is the nodes
/// from it to `subtree_end`, its first child (if any) is the next node, and each child's
/// `subtree_end` is the next child: children need no list of their own.
///
/// Why so small: a real plugin's modules lay out into about a node per 5 bytes of source,
/// and these arrays were the largest part of a cold `validate`'s peak memory, each page of
/// it a page fault (48 bytes a node and a 4-byte child list before).
#[derive(Debug, Clone, Copy)]
struct NodeData {
    /// Index into [`Tree::kinds`].
    kind: u16,
    field: Field,
    named: bool,
    start: u32,
    end: u32,
    parent: u32,
    /// One past the last node of this node's subtree.
    subtree_end: u32,
    depth: u32,
}

const _: () = assert!(std::mem::size_of::<NodeData>() == 24);

/// A parsed module.
pub struct Tree {
    nodes: Vec<NodeData>,
    /// The kind of each [`NodeData::kind`].
    kinds: Vec<&'static str>,
    /// Byte offset of each line's start.
    line_starts: Vec<u32>,
    has_error: bool,
    depth: u32,
}

/// A node of a [`Tree`]: a cheap, copyable handle.
#[derive(Clone, Copy)]
pub struct Node<'t> {
    tree: &'t Tree,
    id: u32,
}

impl std::fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} [{}..{}]",
            self.kind(),
            self.start_byte(),
            self.end_byte()
        )
    }
}

impl PartialEq for Node<'_> {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.tree, other.tree) && self.id == other.id
    }
}

impl Eq for Node<'_> {}

impl Tree {
    /// Parses `text` as a module. Never fails: a syntax error leaves what ruff recovered
    /// around it (and [`Tree::has_error`]).
    ///
    /// ruff's AST is only read here, to lay it out, then dropped.
    pub fn parse(text: &str) -> Tree {
        let parsed = ruff_python_parser::parse_unchecked_source(text, ast::PySourceType::Python);
        let tree = Tree::lay_out(text, &parsed);
        // Rust drops an AST recursively: give the drop a stack as deep as the tree (a few
        // hundred bytes per level, with room to spare).
        if tree.depth > 1_000 {
            let size = (tree.depth as usize)
                .saturating_mul(1024)
                .saturating_add(1 << 20);
            stacker::grow(size, move || drop(parsed));
        } else {
            drop(parsed);
        }
        tree
    }

    fn lay_out(text: &str, parsed: &ruff_python_parser::Parsed<ast::ModModule>) -> Tree {
        let has_error = parsed.has_syntax_errors();
        let mut builder = Builder::new(text);
        let module = parsed.syntax();
        builder.node("module", Field::None, 0, len32(text), true, |b| {
            for stmt in &module.body {
                b.stmt(stmt);
            }
        });
        let mut line_starts = vec![0];
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| len32(&text[..=i])));
        Tree {
            nodes: builder.nodes,
            kinds: builder.kinds.names,
            line_starts,
            has_error,
            depth: builder.max_depth,
        }
    }

    /// The module node.
    pub fn root_node(&self) -> Node<'_> {
        Node { tree: self, id: 0 }
    }

    /// Whether the parser reported a syntax error.
    pub fn has_error(&self) -> bool {
        self.has_error
    }

    /// `class` of each kind in this tree, to be indexed by [`Node::kind_index`]: a walk that
    /// tells many kinds apart asks once per kind instead of comparing every node's kind as
    /// text.
    pub fn classify<C>(&self, class: impl FnMut(&'static str) -> C) -> Vec<C> {
        self.kinds.iter().copied().map(class).collect()
    }

    /// How deep the tree nests.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The 0-based line of a byte offset, and the offset of that line's start.
    pub fn line_of(&self, byte: usize) -> (usize, usize) {
        let byte = u32::try_from(byte).unwrap_or(u32::MAX);
        let line = self
            .line_starts
            .partition_point(|s| *s <= byte)
            .saturating_sub(1);
        (line, self.line_starts[line] as usize)
    }
}

impl<'t> Node<'t> {
    fn data(&self) -> &'t NodeData {
        &self.tree.nodes[self.id as usize]
    }

    fn at(&self, id: u32) -> Node<'t> {
        Node {
            tree: self.tree,
            id,
        }
    }

    /// The node's kind (tree-sitter-python's name for it).
    pub fn kind(&self) -> &'static str {
        self.tree.kinds[usize::from(self.data().kind)]
    }

    /// Where this node's kind is in [`Tree::classify`]'s answer.
    #[inline]
    pub fn kind_index(&self) -> usize {
        usize::from(self.data().kind)
    }

    /// An identity, unique within the tree.
    pub fn id(&self) -> usize {
        self.id as usize
    }

    /// Whether this is a named node (not an operator token).
    pub fn is_named(&self) -> bool {
        self.data().named
    }

    /// Byte offset of the start.
    pub fn start_byte(&self) -> usize {
        self.data().start as usize
    }

    /// Byte offset of the end.
    pub fn end_byte(&self) -> usize {
        self.data().end as usize
    }

    /// Depth below the root.
    pub fn depth(&self) -> usize {
        self.data().depth as usize
    }

    /// The enclosing node.
    pub fn parent(&self) -> Option<Node<'t>> {
        (self.id != 0).then(|| self.at(self.data().parent))
    }

    /// All children, operator tokens included: the first is the next node, each next one
    /// where the one before's subtree ends.
    pub fn children(&self) -> impl Iterator<Item = Node<'t>> + 't {
        let tree = self.tree;
        let end = self.data().subtree_end;
        let mut next = self.id + 1;
        std::iter::from_fn(move || {
            let id = next;
            (id < end).then(|| {
                next = tree.nodes[id as usize].subtree_end;
                Node { tree, id }
            })
        })
    }

    /// The named children.
    pub fn named_children(&self) -> impl Iterator<Item = Node<'t>> + 't {
        self.children().filter(Node::is_named)
    }

    /// The `i`-th named child.
    pub fn named_child(&self, i: usize) -> Option<Node<'t>> {
        self.named_children().nth(i)
    }

    /// How many named children there are.
    pub fn named_child_count(&self) -> usize {
        self.named_children().count()
    }

    /// The first child in field `name`.
    #[inline]
    pub fn child_by_field_name(&self, name: &str) -> Option<Node<'t>> {
        self.children_by_field_name(name).next()
    }

    /// The children in field `name`.
    #[inline]
    pub fn children_by_field_name(&self, name: &str) -> impl Iterator<Item = Node<'t>> + 't {
        let field = Field::named(name);
        self.children()
            .filter(move |c| field.is_some_and(|f| c.data().field == f))
    }

    /// The field this node is in, within its parent.
    pub fn field(&self) -> Field {
        self.data().field
    }

    /// The named sibling before this one.
    pub fn prev_named_sibling(&self) -> Option<Node<'t>> {
        self.parent()?
            .children()
            .take_while(|c| c.id != self.id)
            .filter(Node::is_named)
            .last()
    }

    /// Visits the named nodes of this subtree (this one included) in pre-order, each with its
    /// depth below this node; `visit` returns whether to go into the node.
    pub fn preorder(&self, mut visit: impl FnMut(Node<'t>, usize) -> bool) {
        let base = self.data().depth;
        let end = self.data().subtree_end;
        let mut id = self.id;
        while id < end {
            let data = &self.tree.nodes[id as usize];
            if data.named && visit(self.at(id), (data.depth - base) as usize) {
                id += 1;
            } else {
                id = data.subtree_end;
            }
        }
    }
}

fn len32(text: &str) -> u32 {
    u32::try_from(text.len()).unwrap_or(u32::MAX)
}

/// The kinds of one tree, each given a number the first time it is seen.
struct Kinds {
    names: Vec<&'static str>,
    /// The number of a recently seen kind, by where its text is: the builder passes string
    /// literals, so each node's kind is found here by one compare.
    recent: [(usize, usize, u16); 256],
}

impl Kinds {
    fn new() -> Kinds {
        Kinds {
            names: Vec::new(),
            recent: [(0, 0, 0); 256],
        }
    }

    #[inline]
    fn number(&mut self, kind: &'static str) -> u16 {
        let (at, len) = (kind.as_ptr() as usize, kind.len());
        let slot = &mut self.recent[((at >> 3) ^ (at >> 11) ^ len) & 255];
        if slot.0 == at && slot.1 == len {
            return slot.2;
        }
        let number = match self.names.iter().position(|k| *k == kind) {
            Some(i) => i,
            None => {
                self.names.push(kind);
                self.names.len() - 1
            }
        };
        // The kinds are the builder's own string literals: a few hundred at most.
        let number = u16::try_from(number).expect("fewer than 65,536 node kinds");
        *slot = (at, len, number);
        number
    }
}

/// Lays ruff's AST out as a [`Tree`].
struct Builder<'s> {
    src: &'s [u8],
    nodes: Vec<NodeData>,
    kinds: Kinds,
    parent: u32,
    depth: u32,
    max_depth: u32,
}

impl<'s> Builder<'s> {
    fn new(src: &'s str) -> Self {
        Builder {
            src: src.as_bytes(),
            // Room for one node per 4 bytes: one per 6, the first estimate, had the arrays
            // grow and be copied on the real corpus (16 M instructions of copying,
            // callgrind); room never written to is never touched (peak RSS unchanged).
            nodes: Vec::with_capacity(src.len() / 4 + 1),
            kinds: Kinds::new(),
            parent: 0,
            depth: 0,
            max_depth: 0,
        }
    }

    /// Adds a node and, through `build`, its children.
    fn node(
        &mut self,
        kind: &'static str,
        field: Field,
        start: u32,
        end: u32,
        named: bool,
        build: impl FnOnce(&mut Self),
    ) -> u32 {
        let id = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX);
        let kind = self.kinds.number(kind);
        self.nodes.push(NodeData {
            kind,
            field,
            named,
            start,
            end: end.max(start),
            parent: self.parent,
            subtree_end: 0,
            depth: self.depth,
        });
        let parent = std::mem::replace(&mut self.parent, id);
        self.depth += 1;
        self.max_depth = self.max_depth.max(self.depth);
        if self.depth.is_multiple_of(16) {
            // Deep nesting is hostile or generated code: grow the stack rather than overflow.
            stacker::maybe_grow(128 * 1024, 4 << 20, || build(self));
        } else {
            build(self);
        }
        self.depth -= 1;
        self.parent = parent;
        self.nodes[id as usize].subtree_end = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX);
        id
    }

    fn leaf(&mut self, kind: &'static str, field: Field, range: (u32, u32)) -> u32 {
        self.node(kind, field, range.0, range.1, true, |_| {})
    }

    /// An operator token (an unnamed node), found from `from` on.
    fn token(&mut self, field: Field, from: u32, text: &'static str) {
        let range = self.find(from, text, b")");
        self.node(text, field, range.0, range.1, false, |_| {});
    }

    fn ranged(
        &mut self,
        kind: &'static str,
        field: Field,
        of: &impl Ranged,
        build: impl FnOnce(&mut Self),
    ) -> u32 {
        let r = of.range();
        self.node(
            kind,
            field,
            r.start().to_u32(),
            r.end().to_u32(),
            true,
            build,
        )
    }

    fn ident(&mut self, field: Field, id: &ast::Identifier) -> u32 {
        self.leaf("identifier", field, span(id.range))
    }

    /// The first position from `at` that is not whitespace, a line continuation, a comment
    /// or one of `also`.
    fn skip(&self, mut at: usize, also: &[u8]) -> usize {
        while let Some(&c) = self.src.get(at) {
            match c {
                b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' => at += 1,
                b'\\' => at += 1,
                b'#' => {
                    at = memchr::memchr(b'\n', &self.src[at..]).map_or(self.src.len(), |i| at + i);
                }
                c if also.contains(&c) => at += 1,
                _ => break,
            }
        }
        at
    }

    /// The range of `text` (words separated by any space: `not in`), the first token from
    /// `from` on past trivia and `also`; an empty range at `from` if it is not there.
    fn find(&self, from: u32, text: &str, also: &[u8]) -> (u32, u32) {
        let start = self.skip(from as usize, also);
        let mut at = start;
        for (i, word) in text.split(' ').enumerate() {
            if i > 0 {
                at = self.skip(at, &[]);
            }
            if !self.src[at.min(self.src.len())..].starts_with(word.as_bytes()) {
                return (from, from);
            }
            at += word.len();
        }
        (to32(start), to32(at))
    }

    fn block(&mut self, field: Field, body: &[Stmt]) {
        let (Some(first), Some(last)) = (body.first(), body.last()) else {
            return;
        };
        let (start, end) = (first.start().to_u32(), last.end().to_u32());
        self.node("block", field, start, end, true, |b| {
            for stmt in body {
                b.stmt(stmt);
            }
        });
    }

    /// A clause introduced by `keyword` after `after` (`else:`, `finally:`), holding `body`.
    fn clause(
        &mut self,
        kind: &'static str,
        field: Field,
        after: u32,
        keyword: &str,
        body: &[Stmt],
        body_field: Field,
    ) {
        let Some(last) = body.last() else { return };
        let (start, _) = self.find(after, keyword, b";");
        self.node(kind, field, start, last.end().to_u32(), true, |b| {
            b.block(body_field, body)
        });
    }

    fn stmt(&mut self, stmt: &Stmt) {
        let range = span(stmt.range());
        match stmt {
            Stmt::FunctionDef(def) => self.function(def),
            Stmt::ClassDef(class) => self.class(class),
            Stmt::Return(s) => {
                self.statement("return_statement", range, |b| {
                    if let Some(v) = &s.value {
                        b.expr(Field::None, v);
                    }
                });
            }
            Stmt::Delete(s) => {
                self.statement("delete_statement", range, |b| match s.targets.as_slice() {
                    [one] => {
                        b.expr(Field::None, one);
                    }
                    [first, .., last] => {
                        b.node(
                            "expression_list",
                            Field::None,
                            first.start().to_u32(),
                            last.end().to_u32(),
                            true,
                            |b| {
                                for t in &s.targets {
                                    b.expr(Field::None, t);
                                }
                            },
                        );
                    }
                    [] => {}
                });
            }
            Stmt::TypeAlias(s) => {
                self.statement("type_alias_statement", range, |b| {
                    b.type_node(Field::Left, &s.name);
                    b.type_node(Field::Right, &s.value);
                });
            }
            Stmt::Assign(s) => {
                self.statement("expression_statement", range, |b| {
                    b.assignment(Field::None, &s.targets, &s.value, range.1);
                });
            }
            Stmt::AugAssign(s) => {
                self.statement("expression_statement", range, |b| {
                    b.statement("augmented_assignment", range, |b| {
                        b.pattern(Field::Left, &s.target);
                        b.token(Field::Operator, s.target.end().to_u32(), aug_operator(s.op));
                        b.expr(Field::Right, &s.value);
                    });
                });
            }
            Stmt::AnnAssign(s) => {
                self.statement("expression_statement", range, |b| {
                    b.statement("assignment", range, |b| {
                        b.pattern(Field::Left, &s.target);
                        b.type_node(Field::Type, &s.annotation);
                        if let Some(v) = &s.value {
                            b.expr(Field::Right, v);
                        }
                    });
                });
            }
            Stmt::For(s) => {
                self.statement("for_statement", range, |b| {
                    b.pattern(Field::Left, &s.target);
                    b.expr(Field::Right, &s.iter);
                    b.loop_body(range, &s.body, &s.orelse);
                });
            }
            Stmt::While(s) => {
                self.statement("while_statement", range, |b| {
                    b.expr(Field::Condition, &s.test);
                    b.loop_body(range, &s.body, &s.orelse);
                });
            }
            Stmt::If(s) => {
                self.statement("if_statement", range, |b| {
                    b.expr(Field::Condition, &s.test);
                    b.block(Field::Consequence, &s.body);
                    for clause in &s.elif_else_clauses {
                        match &clause.test {
                            Some(test) => {
                                b.ranged("elif_clause", Field::Alternative, clause, |b| {
                                    b.expr(Field::Condition, test);
                                    b.block(Field::Consequence, &clause.body);
                                });
                            }
                            None => {
                                b.ranged("else_clause", Field::Alternative, clause, |b| {
                                    b.block(Field::Body, &clause.body);
                                });
                            }
                        }
                    }
                });
            }
            Stmt::With(s) => {
                self.statement("with_statement", range, |b| {
                    if let Some(last) = s.items.last() {
                        // From just after `with`: a parenthesized clause starts at its `(`.
                        let mut at = range.0 as usize;
                        if s.is_async {
                            at = b.skip(at + "async".len(), &[]);
                        }
                        let start = to32(b.skip(at + "with".len(), &[]));
                        b.node(
                            "with_clause",
                            Field::None,
                            start,
                            last.end().to_u32(),
                            true,
                            |b| {
                                for item in &s.items {
                                    b.with_item(item);
                                }
                            },
                        );
                    }
                    b.block(Field::Body, &s.body);
                });
            }
            Stmt::Match(s) => {
                self.statement("match_statement", range, |b| {
                    b.expr(Field::Subject, &s.subject);
                    if let (Some(first), Some(last)) = (s.cases.first(), s.cases.last()) {
                        b.node(
                            "block",
                            Field::Body,
                            first.start().to_u32(),
                            last.end().to_u32(),
                            true,
                            |b| {
                                for case in &s.cases {
                                    b.ranged("case_clause", Field::Alternative, case, |b| {
                                        if let Some(guard) = &case.guard {
                                            b.node(
                                                "if_clause",
                                                Field::Guard,
                                                guard.start().to_u32(),
                                                guard.end().to_u32(),
                                                true,
                                                |b| {
                                                    b.expr(Field::None, guard);
                                                },
                                            );
                                        }
                                        b.block(Field::Consequence, &case.body);
                                    });
                                }
                            },
                        );
                    }
                });
            }
            Stmt::Raise(s) => {
                self.statement("raise_statement", range, |b| {
                    if let Some(exc) = &s.exc {
                        b.expr(Field::None, exc);
                    }
                    if let Some(cause) = &s.cause {
                        b.expr(Field::Cause, cause);
                    }
                });
            }
            Stmt::Try(s) => self.try_statement(s, range),
            Stmt::Assert(s) => {
                self.statement("assert_statement", range, |b| {
                    b.expr(Field::None, &s.test);
                    if let Some(msg) = &s.msg {
                        b.expr(Field::None, msg);
                    }
                });
            }
            Stmt::Import(s) => {
                self.statement("import_statement", range, |b| {
                    for alias in &s.names {
                        b.alias(alias);
                    }
                });
            }
            Stmt::ImportFrom(s) => self.import_from(s, range),
            Stmt::Global(s) => self.names("global_statement", range, &s.names),
            Stmt::Nonlocal(s) => self.names("nonlocal_statement", range, &s.names),
            Stmt::Expr(s) => {
                self.statement("expression_statement", range, |b| match s.value.as_ref() {
                    Expr::Tuple(t) if !t.parenthesized => {
                        for e in &t.elts {
                            b.expr(Field::None, e);
                        }
                    }
                    v => {
                        b.expr(Field::None, v);
                    }
                });
            }
            Stmt::Pass(_) => {
                self.leaf("pass_statement", Field::None, range);
            }
            Stmt::Break(_) => {
                self.leaf("break_statement", Field::None, range);
            }
            Stmt::Continue(_) => {
                self.leaf("continue_statement", Field::None, range);
            }
            Stmt::IpyEscapeCommand(_) => {
                self.leaf("ERROR", Field::None, range);
            }
        }
    }

    /// The body of a `for` or `while` loop and its `else:`.
    fn loop_body(&mut self, range: (u32, u32), body: &[Stmt], orelse: &[Stmt]) {
        self.block(Field::Body, body);
        let after = body.last().map_or(range.0, |l| l.end().to_u32());
        self.clause(
            "else_clause",
            Field::Alternative,
            after,
            "else",
            orelse,
            Field::Body,
        );
    }

    /// A node spanning statement `range`, outside any field.
    fn statement(
        &mut self,
        kind: &'static str,
        range: (u32, u32),
        build: impl FnOnce(&mut Self),
    ) -> u32 {
        self.node(kind, Field::None, range.0, range.1, true, build)
    }

    /// `global a, b` / `nonlocal a, b`.
    fn names(&mut self, kind: &'static str, range: (u32, u32), names: &[ast::Identifier]) {
        self.statement(kind, range, |b| {
            for name in names {
                b.ident(Field::None, name);
            }
        });
    }

    /// `a = b = value`: tree-sitter nests the chain to the right.
    /// Every link ends where the statement does (after a closing parenthesis of the value).
    fn assignment(&mut self, field: Field, targets: &[Expr], value: &Expr, end: u32) {
        let Some((first, rest)) = targets.split_first() else {
            self.expr(field, value);
            return;
        };
        self.node(
            "assignment",
            field,
            first.start().to_u32(),
            end,
            true,
            |b| {
                b.pattern(Field::Left, first);
                b.assignment(Field::Right, rest, value, end);
            },
        );
    }

    fn function(&mut self, def: &ast::StmtFunctionDef) {
        self.definition(
            "function_definition",
            span(def.range),
            &def.decorator_list,
            |b| {
                b.ident(Field::Name, &def.name);
                if let Some(tp) = &def.type_params {
                    b.ranged("type_parameter", Field::TypeParameters, tp.as_ref(), |_| {});
                }
                b.parameters("parameters", Field::Parameters, &def.parameters);
                if let Some(ret) = &def.returns {
                    b.type_node(Field::ReturnType, ret);
                }
                b.block(Field::Body, &def.body);
            },
        );
    }

    fn class(&mut self, class: &ast::StmtClassDef) {
        self.definition(
            "class_definition",
            span(class.range),
            &class.decorator_list,
            |b| {
                b.ident(Field::Name, &class.name);
                if let Some(tp) = &class.type_params {
                    b.ranged("type_parameter", Field::TypeParameters, tp.as_ref(), |_| {});
                }
                if let Some(args) = &class.arguments {
                    b.argument_list(Field::Superclasses, args);
                }
                b.block(Field::Body, &class.body);
            },
        );
    }

    /// A `def` or `class` (`range` is ruff's: from the first decorator), inside a
    /// `decorated_definition` when it has decorators; the definition itself then starts at
    /// its keyword.
    fn definition(
        &mut self,
        kind: &'static str,
        range: (u32, u32),
        decorators: &[ast::Decorator],
        build: impl FnOnce(&mut Self),
    ) {
        let Some(last) = decorators.last() else {
            self.node(kind, Field::None, range.0, range.1, true, build);
            return;
        };
        let start = to32(self.skip(last.end().to_usize(), &[]));
        self.statement("decorated_definition", range, |b| {
            b.decorators(decorators);
            b.node(kind, Field::Definition, start, range.1, true, build);
        });
    }

    fn decorators(&mut self, decorators: &[ast::Decorator]) {
        for d in decorators {
            self.ranged("decorator", Field::None, d, |b| {
                b.expr(Field::None, &d.expression);
            });
        }
    }

    fn try_statement(&mut self, s: &ast::StmtTry, range: (u32, u32)) {
        self.statement("try_statement", range, |b| {
            b.block(Field::Body, &s.body);
            let mut after = s.body.last().map_or(range.0, |l| l.end().to_u32());
            for handler in &s.handlers {
                let ast::ExceptHandler::ExceptHandler(h) = handler;
                b.ranged("except_clause", Field::None, h, |b| {
                    match (&h.type_, &h.name) {
                        // `except E as e`: an `as_pattern`, as in `with`.
                        (Some(t), Some(name)) => {
                            b.node(
                                "as_pattern",
                                Field::Value,
                                t.start().to_u32(),
                                name.range.end().to_u32(),
                                true,
                                |b| {
                                    b.expr(Field::None, t);
                                    b.ranged("as_pattern_target", Field::Alias, name, |b| {
                                        b.ident(Field::None, name);
                                    });
                                },
                            );
                        }
                        (Some(t), None) => match t.as_ref() {
                            Expr::Tuple(t) if !t.parenthesized => {
                                for e in &t.elts {
                                    b.expr(Field::Value, e);
                                }
                            }
                            t => {
                                b.expr(Field::Value, t);
                            }
                        },
                        (None, _) => {}
                    }
                    b.block(Field::None, &h.body);
                });
                after = h.range.end().to_u32();
            }
            b.clause(
                "else_clause",
                Field::None,
                after,
                "else",
                &s.orelse,
                Field::Body,
            );
            if let Some(last) = s.orelse.last() {
                after = last.end().to_u32();
            }
            b.clause(
                "finally_clause",
                Field::None,
                after,
                "finally",
                &s.finalbody,
                Field::None,
            );
        });
    }

    fn with_item(&mut self, item: &ast::WithItem) {
        self.ranged("with_item", Field::None, item, |b| {
            match &item.optional_vars {
                None => {
                    b.expr(Field::Value, &item.context_expr);
                }
                Some(target) => {
                    let start = item.context_expr.start().to_u32();
                    b.node(
                        "as_pattern",
                        Field::Value,
                        start,
                        target.end().to_u32(),
                        true,
                        |b| {
                            b.expr(Field::None, &item.context_expr);
                            b.ranged("as_pattern_target", Field::Alias, target.as_ref(), |b| {
                                b.expr(Field::None, target);
                            });
                        },
                    );
                }
            }
        });
    }

    fn alias(&mut self, alias: &ast::Alias) {
        match &alias.asname {
            None => {
                self.dotted_name(Field::Name, &alias.name);
            }
            Some(asname) => {
                self.ranged("aliased_import", Field::Name, alias, |b| {
                    b.dotted_name(Field::Name, &alias.name);
                    b.ident(Field::Alias, asname);
                });
            }
        }
    }

    /// `a.b.c` as a `dotted_name` of identifiers.
    fn dotted_name(&mut self, field: Field, name: &ast::Identifier) {
        let (start, end) = span(name.range);
        self.node("dotted_name", field, start, end, true, |b| {
            let mut at = start as usize;
            while at < end as usize {
                let from = b.skip(at, b".");
                let mut to = from;
                while to < end as usize
                    && !matches!(b.src[to], b'.' | b' ' | b'\t' | b'\\' | b'\n' | b'\r')
                {
                    to += 1;
                }
                if to > from {
                    b.leaf("identifier", Field::None, (to32(from), to32(to)));
                }
                at = to.max(from + 1);
            }
        });
    }

    fn import_from(&mut self, s: &ast::StmtImportFrom, range: (u32, u32)) {
        let future = s.level == 0
            && s.module
                .as_ref()
                .is_some_and(|m| m.id.as_str() == "__future__");
        let kind = if future {
            "future_import_statement"
        } else {
            "import_from_statement"
        };
        self.node(kind, Field::None, range.0, range.1, true, |b| {
            if !future {
                if s.level > 0 {
                    // `from` and the dots: `from ..pkg import x`.
                    let dots = b.skip(range.0 as usize + 4, &[]);
                    let mut end = dots;
                    while b.src.get(end) == Some(&b'.') {
                        end += 1;
                    }
                    let rel_end = s
                        .module
                        .as_ref()
                        .map_or(to32(end), |m| m.range.end().to_u32());
                    b.node(
                        "relative_import",
                        Field::ModuleName,
                        to32(dots),
                        rel_end,
                        true,
                        |b| {
                            b.leaf("import_prefix", Field::None, (to32(dots), to32(end)));
                            if let Some(m) = &s.module {
                                b.dotted_name(Field::None, m);
                            }
                        },
                    );
                } else if let Some(m) = &s.module {
                    b.dotted_name(Field::ModuleName, m);
                }
            }
            for alias in &s.names {
                if alias.name.id.as_str() == "*" {
                    b.leaf("wildcard_import", Field::None, span(alias.range));
                } else {
                    b.alias(alias);
                }
            }
        });
    }

    fn parameters(&mut self, kind: &'static str, field: Field, p: &ast::Parameters) {
        self.ranged(kind, field, p, |b| {
            let mut at = p.range.start().to_u32();
            for param in &p.posonlyargs {
                b.parameter(param);
                at = param.range.end().to_u32();
            }
            if !p.posonlyargs.is_empty() {
                let sep = b.find(at, "/", b"(,");
                b.leaf("positional_separator", Field::None, sep);
            }
            for param in &p.args {
                b.parameter(param);
                at = param.range.end().to_u32();
            }
            if let Some(var) = &p.vararg {
                b.splat_parameter(at, "*", "list_splat_pattern", var);
                at = var.range.end().to_u32();
            } else if !p.kwonlyargs.is_empty() {
                let sep = b.find(at, "*", b"(,");
                b.leaf("keyword_separator", Field::None, sep);
            }
            for param in &p.kwonlyargs {
                b.parameter(param);
                at = param.range.end().to_u32();
            }
            if let Some(kw) = &p.kwarg {
                b.splat_parameter(at, "**", "dictionary_splat_pattern", kw);
            }
        });
    }

    fn parameter(&mut self, p: &ast::ParameterWithDefault) {
        let name = &p.parameter.name;
        match (&p.parameter.annotation, &p.default) {
            (None, None) => {
                self.ident(Field::None, name);
            }
            (Some(ann), None) => {
                self.ranged("typed_parameter", Field::None, p, |b| {
                    b.ident(Field::None, name);
                    b.type_node(Field::Type, ann);
                });
            }
            (None, Some(default)) => {
                self.ranged("default_parameter", Field::None, p, |b| {
                    b.ident(Field::Name, name);
                    b.expr(Field::Value, default);
                });
            }
            (Some(ann), Some(default)) => {
                self.ranged("typed_default_parameter", Field::None, p, |b| {
                    b.ident(Field::Name, name);
                    b.type_node(Field::Type, ann);
                    b.expr(Field::Value, default);
                });
            }
        }
    }

    /// `*args` / `**kwargs`, annotated or not.
    fn splat_parameter(&mut self, after: u32, star: &str, kind: &'static str, p: &ast::Parameter) {
        let (start, _) = self.find(after, star, b"(,");
        let name_end = p.name.range.end().to_u32();
        let pattern = |b: &mut Self, field: Field| {
            b.node(kind, field, start, name_end, true, |b| {
                b.ident(Field::None, &p.name);
            });
        };
        match &p.annotation {
            None => pattern(self, Field::None),
            Some(ann) => {
                self.node(
                    "typed_parameter",
                    Field::None,
                    start,
                    ann.end().to_u32(),
                    true,
                    |b| {
                        pattern(b, Field::None);
                        b.type_node(Field::Type, ann);
                    },
                );
            }
        }
    }

    /// An annotation: tree-sitter wraps it in a `type` node.
    fn type_node(&mut self, field: Field, e: &Expr) {
        self.ranged("type", field, e, |b| {
            b.expr(Field::None, e);
        });
    }

    fn argument_list(&mut self, field: Field, args: &ast::Arguments) {
        self.ranged("argument_list", field, args, |b| {
            for arg in args.iter_source_order() {
                match arg {
                    ArgOrKeyword::Arg(Expr::Starred(s)) => {
                        b.ranged("list_splat", Field::None, s, |b| {
                            b.expr(Field::None, &s.value);
                        });
                    }
                    ArgOrKeyword::Arg(e) => {
                        b.expr(Field::None, e);
                    }
                    ArgOrKeyword::Keyword(kw) => match &kw.arg {
                        Some(name) => {
                            b.ranged("keyword_argument", Field::None, kw, |b| {
                                b.ident(Field::Name, name);
                                b.expr(Field::Value, &kw.value);
                            });
                        }
                        None => {
                            b.ranged("dictionary_splat", Field::None, kw, |b| {
                                b.expr(Field::None, &kw.value);
                            });
                        }
                    },
                }
            }
        });
    }

    /// An assignment target: tuples and lists are patterns there.
    fn pattern(&mut self, field: Field, e: &Expr) -> u32 {
        match e {
            Expr::Tuple(t) => {
                let kind = if t.parenthesized {
                    "tuple_pattern"
                } else {
                    "pattern_list"
                };
                self.ranged(kind, field, t, |b| {
                    for e in &t.elts {
                        b.pattern(Field::None, e);
                    }
                })
            }
            Expr::List(l) => self.ranged("list_pattern", field, l, |b| {
                for e in &l.elts {
                    b.pattern(Field::None, e);
                }
            }),
            Expr::Starred(s) => self.ranged("list_splat_pattern", field, s, |b| {
                b.pattern(Field::None, &s.value);
            }),
            e => self.expr(field, e),
        }
    }

    /// A list, set or generator comprehension: `body` is its element.
    fn element_comprehension(
        &mut self,
        kind: &'static str,
        field: Field,
        range: TextRange,
        elt: &Expr,
        generators: &[ast::Comprehension],
    ) -> u32 {
        self.comprehension(
            kind,
            field,
            range,
            |b| {
                b.expr(Field::Body, elt);
            },
            generators,
        )
    }

    fn comprehension(
        &mut self,
        kind: &'static str,
        field: Field,
        range: TextRange,
        body: impl FnOnce(&mut Self),
        generators: &[ast::Comprehension],
    ) -> u32 {
        self.node(
            kind,
            field,
            range.start().to_u32(),
            range.end().to_u32(),
            true,
            |b| {
                body(b);
                for g in generators {
                    let start = g.range.start().to_u32();
                    b.node(
                        "for_in_clause",
                        Field::None,
                        start,
                        g.iter.end().to_u32(),
                        true,
                        |b| {
                            b.pattern(Field::Left, &g.target);
                            b.expr(Field::Right, &g.iter);
                        },
                    );
                    let mut after = g.iter.end().to_u32();
                    for cond in &g.ifs {
                        let (start, _) = b.find(after, "if", b")");
                        b.node(
                            "if_clause",
                            Field::None,
                            start,
                            cond.end().to_u32(),
                            true,
                            |b| {
                                b.expr(Field::None, cond);
                            },
                        );
                        after = cond.end().to_u32();
                    }
                }
            },
        )
    }

    fn expr(&mut self, field: Field, e: &Expr) -> u32 {
        let range = span(e.range());
        match e {
            Expr::BoolOp(op) => self.bool_chain(field, range, &op.values, op.op.as_str()),
            Expr::Named(n) => self.ranged("named_expression", field, n, |b| {
                b.expr(Field::Name, &n.target);
                b.expr(Field::Value, &n.value);
            }),
            Expr::BinOp(op) => self.ranged("binary_operator", field, op, |b| {
                b.expr(Field::Left, &op.left);
                b.token(Field::Operator, op.left.end().to_u32(), op.op.as_str());
                b.expr(Field::Right, &op.right);
            }),
            Expr::UnaryOp(op) => match op.op {
                UnaryOp::Not => self.ranged("not_operator", field, op, |b| {
                    b.expr(Field::Argument, &op.operand);
                }),
                other => self.ranged("unary_operator", field, op, |b| {
                    b.token(Field::Operator, range.0, other.as_str());
                    b.expr(Field::Argument, &op.operand);
                }),
            },
            Expr::Lambda(l) => self.ranged("lambda", field, l, |b| {
                if let Some(p) = &l.parameters {
                    b.parameters("lambda_parameters", Field::Parameters, p);
                }
                b.expr(Field::Body, &l.body);
            }),
            Expr::If(i) => self.ranged("conditional_expression", field, i, |b| {
                b.expr(Field::None, &i.body);
                b.expr(Field::None, &i.test);
                b.expr(Field::None, &i.orelse);
            }),
            Expr::Dict(d) => self.ranged("dictionary", field, d, |b| {
                let mut after = range.0 + 1;
                for item in &d.items {
                    match &item.key {
                        Some(key) => {
                            // From the `(` of a parenthesized key.
                            let start = to32(b.skip(after as usize, b",)"));
                            b.node(
                                "pair",
                                Field::None,
                                start,
                                item.value.end().to_u32(),
                                true,
                                |b| {
                                    b.expr(Field::Key, key);
                                    b.expr(Field::Value, &item.value);
                                },
                            );
                        }
                        None => {
                            let (start, _) = b.find(after, "**", b",)");
                            b.node(
                                "dictionary_splat",
                                Field::None,
                                start,
                                item.value.end().to_u32(),
                                true,
                                |b| {
                                    b.expr(Field::None, &item.value);
                                },
                            );
                        }
                    }
                    after = item.value.end().to_u32();
                }
            }),
            Expr::Set(s) => self.ranged("set", field, s, |b| b.elements(&s.elts)),
            Expr::ListComp(c) => self.element_comprehension(
                "list_comprehension",
                field,
                c.range,
                &c.elt,
                &c.generators,
            ),
            Expr::SetComp(c) => self.element_comprehension(
                "set_comprehension",
                field,
                c.range,
                &c.elt,
                &c.generators,
            ),
            Expr::Generator(c) => self.element_comprehension(
                "generator_expression",
                field,
                c.range,
                &c.elt,
                &c.generators,
            ),
            Expr::DictComp(c) => self.comprehension(
                "dictionary_comprehension",
                field,
                c.range,
                |b| {
                    let value_end = c.value.end().to_u32();
                    match &c.key {
                        Some(key) => {
                            let start = to32(b.skip(range.0 as usize + 1, &[]));
                            b.node("pair", Field::Body, start, value_end, true, |b| {
                                b.expr(Field::Key, key);
                                b.expr(Field::Value, &c.value);
                            });
                        }
                        None => {
                            b.expr(Field::Body, &c.value);
                        }
                    }
                },
                &c.generators,
            ),
            Expr::Await(a) => self.ranged("await", field, a, |b| {
                b.expr(Field::None, &a.value);
            }),
            Expr::Yield(y) => self.ranged("yield", field, y, |b| {
                if let Some(v) = &y.value {
                    b.expr(Field::None, v);
                }
            }),
            Expr::YieldFrom(y) => self.ranged("yield", field, y, |b| {
                b.expr(Field::None, &y.value);
            }),
            Expr::Compare(c) => self.ranged("comparison_operator", field, c, |b| {
                b.expr(Field::None, &c.left);
                let mut after = c.left.end().to_u32();
                for (op, right) in c.ops.iter().zip(c.comparators.iter()) {
                    b.token(Field::Operators, after, op.as_str());
                    b.expr(Field::None, right);
                    after = right.end().to_u32();
                }
            }),
            Expr::Call(call) => self.node("call", field, range.0, range.1, true, |b| {
                b.expr(Field::Function, &call.func);
                let args = &call.arguments;
                match (&*args.args, args.keywords.is_empty()) {
                    // `f(x for x in y)`: the generator is the argument list.
                    ([Expr::Generator(g)], true) if !g.parenthesized => {
                        b.element_comprehension(
                            "generator_expression",
                            Field::Arguments,
                            args.range,
                            &g.elt,
                            &g.generators,
                        );
                    }
                    _ => b.argument_list(Field::Arguments, args),
                }
            }),
            Expr::FString(f) => {
                let parts = f.value.iter().map(|p| match p {
                    ast::FStringPart::Literal(l) => StringPart::plain(l.range, l.flags),
                    ast::FStringPart::FString(f) => {
                        StringPart::interpolated(f.range, f.flags, &f.elements)
                    }
                });
                self.strings(field, range, parts)
            }
            Expr::TString(t) => self.strings(
                field,
                range,
                t.value
                    .iter()
                    .map(|t| StringPart::interpolated(t.range, t.flags, &t.elements)),
            ),
            Expr::StringLiteral(s) => self.strings(
                field,
                range,
                s.value.iter().map(|l| StringPart::plain(l.range, l.flags)),
            ),
            Expr::BytesLiteral(s) => self.strings(
                field,
                range,
                s.value.iter().map(|l| StringPart::plain(l.range, l.flags)),
            ),
            Expr::NumberLiteral(n) => {
                let kind = match &n.value {
                    ast::Number::Int(_) => "integer",
                    ast::Number::Float(_) => "float",
                    ast::Number::Complex { .. } => {
                        let text = &self.src[range.0 as usize..range.1 as usize];
                        let is_hex = text.len() > 1 && matches!(text[1], b'x' | b'X');
                        if !is_hex && text.iter().any(|c| matches!(c, b'.' | b'e' | b'E')) {
                            "float"
                        } else {
                            "integer"
                        }
                    }
                };
                self.leaf(kind, field, range)
            }
            Expr::BooleanLiteral(b) => {
                self.leaf(if b.value { "true" } else { "false" }, field, range)
            }
            Expr::NoneLiteral(_) => self.leaf("none", field, range),
            Expr::EllipsisLiteral(_) => self.leaf("ellipsis", field, range),
            Expr::Attribute(a) => self.ranged("attribute", field, a, |b| {
                b.expr(Field::Object, &a.value);
                b.ident(Field::Attribute, &a.attr);
            }),
            Expr::Subscript(s) => self.ranged("subscript", field, s, |b| {
                b.expr(Field::Value, &s.value);
                match s.slice.as_ref() {
                    Expr::Tuple(t) if !t.parenthesized => {
                        for e in &t.elts {
                            b.expr(Field::Subscript, e);
                        }
                    }
                    slice => {
                        b.expr(Field::Subscript, slice);
                    }
                }
            }),
            Expr::Starred(s) => self.ranged("list_splat", field, s, |b| {
                b.expr(Field::None, &s.value);
            }),
            Expr::Name(_) => self.leaf("identifier", field, range),
            Expr::List(l) => self.ranged("list", field, l, |b| b.elements(&l.elts)),
            Expr::Tuple(t) => {
                let kind = if t.parenthesized {
                    "tuple"
                } else {
                    "expression_list"
                };
                self.ranged(kind, field, t, |b| b.elements(&t.elts))
            }
            Expr::Slice(s) => self.ranged("slice", field, s, |b| {
                for part in [&s.lower, &s.upper, &s.step].into_iter().flatten() {
                    b.expr(Field::None, part);
                }
            }),
            Expr::IpyEscapeCommand(_) => self.leaf("ERROR", field, range),
        }
    }

    fn elements(&mut self, elts: &[Expr]) {
        for e in elts {
            self.expr(Field::None, e);
        }
    }

    /// `a and b and c`: tree-sitter nests the chain to the left; every link starts where the
    /// chain does (a parenthesis before `a` included), the outermost ends where it does.
    fn bool_chain(
        &mut self,
        field: Field,
        range: (u32, u32),
        values: &[Expr],
        op: &'static str,
    ) -> u32 {
        let Some((last, rest)) = values.split_last() else {
            return self.leaf("ERROR", field, range);
        };
        if rest.is_empty() {
            return self.expr(field, last);
        }
        self.node("boolean_operator", field, range.0, range.1, true, |b| {
            let after = rest.last().map_or(range.0, |l| l.end().to_u32());
            if let [only] = rest {
                b.expr(Field::Left, only);
            } else {
                b.bool_chain(Field::Left, (range.0, after), rest, op);
            }
            b.token(Field::Operator, after, op);
            b.expr(Field::Right, last);
        })
    }

    /// A string, or adjacent strings (`concatenated_string`).
    fn strings<'a>(
        &mut self,
        field: Field,
        range: (u32, u32),
        parts: impl Iterator<Item = StringPart<'a>>,
    ) -> u32 {
        let parts: Vec<StringPart<'a>> = parts.collect();
        match parts.as_slice() {
            [one] => self.string(field, one),
            _ => self.node("concatenated_string", field, range.0, range.1, true, |b| {
                for part in &parts {
                    b.string(Field::None, part);
                }
            }),
        }
    }

    fn string(&mut self, field: Field, part: &StringPart<'_>) -> u32 {
        let (start, end) = span(part.range);
        let open = (start + part.opener).min(end);
        let close = end.saturating_sub(part.closer).max(open);
        self.node("string", field, start, end, true, |b| {
            b.leaf("string_start", Field::None, (start, open));
            let at = b.interpolated(open, close, part.elements);
            if close > at {
                b.leaf("string_content", Field::None, (at, close));
            }
            if end > close {
                b.leaf("string_end", Field::None, (close, end));
            }
        })
    }

    /// The content and interpolations of a string from `open` to `close`; returns where the
    /// last interpolation ended.
    fn interpolated(
        &mut self,
        open: u32,
        close: u32,
        elements: &[InterpolatedStringElement],
    ) -> u32 {
        let mut at = open;
        for element in elements {
            let InterpolatedStringElement::Interpolation(i) = element else {
                continue;
            };
            let (start, end) = span(i.range);
            if start > at && start <= close {
                self.leaf("string_content", Field::None, (at, start));
            }
            self.node("interpolation", Field::None, start, end, true, |b| {
                b.expr(Field::Expression, &i.expression);
                if i.conversion != ast::ConversionFlag::None {
                    let (bang, _) = b.find(i.expression.end().to_u32(), "!", b")=");
                    b.leaf(
                        "type_conversion",
                        Field::TypeConversion,
                        (bang, (bang + 2).min(end)),
                    );
                }
                if let Some(spec) = &i.format_spec {
                    let (s, e) = span(spec.range);
                    b.node(
                        "format_specifier",
                        Field::FormatSpecifier,
                        s.saturating_sub(1),
                        e,
                        true,
                        |b| {
                            for el in &spec.elements {
                                if let InterpolatedStringElement::Interpolation(inner) = el {
                                    b.ranged("format_expression", Field::None, inner, |b| {
                                        b.expr(Field::Expression, &inner.expression);
                                    });
                                }
                            }
                        },
                    );
                }
            });
            at = end;
        }
        at
    }
}

/// One string of a literal: its range, the lengths of its opener and closer, and its
/// interpolations (none for a plain string).
struct StringPart<'a> {
    range: TextRange,
    opener: u32,
    closer: u32,
    elements: &'a [InterpolatedStringElement],
}

impl<'a> StringPart<'a> {
    fn plain(range: TextRange, flags: impl StringFlags) -> Self {
        StringPart::interpolated(range, flags, &[])
    }

    fn interpolated(
        range: TextRange,
        flags: impl StringFlags,
        elements: &'a [InterpolatedStringElement],
    ) -> Self {
        StringPart {
            range,
            opener: flags.opener_len().to_u32(),
            closer: flags.closer_len().to_u32(),
            elements,
        }
    }
}

fn span(r: TextRange) -> (u32, u32) {
    (r.start().to_u32(), r.end().to_u32())
}

fn to32(at: usize) -> u32 {
    u32::try_from(at).unwrap_or(u32::MAX)
}

fn aug_operator(op: Operator) -> &'static str {
    match op {
        Operator::Add => "+=",
        Operator::Sub => "-=",
        Operator::Mult => "*=",
        Operator::MatMult => "@=",
        Operator::Div => "/=",
        Operator::Mod => "%=",
        Operator::Pow => "**=",
        Operator::LShift => "<<=",
        Operator::RShift => ">>=",
        Operator::BitOr => "|=",
        Operator::BitXor => "^=",
        Operator::BitAnd => "&=",
        Operator::FloorDiv => "//=",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two directions of the field-name table agree (it is written twice so that the
    /// lookup by name, on every `child_by_field_name`, is one `match`).
    #[test]
    fn field_names_round_trip() {
        use Field::*;
        let all = [
            None,
            Alias,
            Alternative,
            Argument,
            Arguments,
            Attribute,
            Body,
            Cause,
            Condition,
            Consequence,
            Definition,
            Expression,
            FormatSpecifier,
            Function,
            Guard,
            Key,
            Left,
            ModuleName,
            Name,
            Object,
            Operator,
            Operators,
            Parameters,
            ReturnType,
            Right,
            Subject,
            Subscript,
            Superclasses,
            Type,
            TypeConversion,
            TypeParameters,
            Value,
        ];
        assert_eq!(
            all.len(),
            Value as usize + 1,
            "a field is missing from this list"
        );
        for (i, field) in all.into_iter().enumerate() {
            assert_eq!(field as usize, i);
            match field.name() {
                Some(name) => assert_eq!(Field::named(name), Some(field), "{name}"),
                Option::None => assert_eq!(field, None),
            }
        }
        assert_eq!(Field::named("no_such_field"), Option::None);
    }

    /// The named nodes of a tree as an s-expression with fields, tree-sitter's way.
    fn sexp(node: Node<'_>) -> String {
        let mut out = String::new();
        let mut open: Vec<usize> = Vec::new();
        node.preorder(|n, depth| {
            while open.last().is_some_and(|d| *d >= depth) {
                open.pop();
                out.push(')');
            }
            if !out.is_empty() {
                out.push(' ');
            }
            if let Some(f) = n.field().name() {
                out.push_str(f);
                out.push_str(": ");
            }
            out.push('(');
            out.push_str(n.kind());
            open.push(depth);
            true
        });
        for _ in open {
            out.push(')');
        }
        out
    }

    fn tree(src: &str) -> String {
        let tree = Tree::parse(src);
        sexp(tree.root_node())
    }

    #[test]
    fn calls_attributes_and_arguments() {
        assert_eq!(
            tree("ctx.register_tool(name='x', *a, **k)\n"),
            "(module (expression_statement (call function: (attribute object: (identifier) attribute: (identifier)) arguments: (argument_list (keyword_argument name: (identifier) value: (string (string_start) (string_content) (string_end))) (list_splat (identifier)) (dictionary_splat (identifier))))))"
        );
    }

    #[test]
    fn assignments_nest_to_the_right() {
        assert_eq!(
            tree("a = b = 1\nx, y = 1, 2\n"),
            "(module (expression_statement (assignment left: (identifier) right: (assignment left: (identifier) right: (integer)))) (expression_statement (assignment left: (pattern_list (identifier) (identifier)) right: (expression_list (integer) (integer)))))"
        );
    }

    #[test]
    fn decorated_functions_start_at_def() {
        let src = "@dec\n# c\nasync def f(a, b: int = 1, *args, k, **kw) -> None:\n    return a\n";
        let t = Tree::parse(src);
        let decorated = t.root_node().named_child(0).unwrap();
        assert_eq!(decorated.kind(), "decorated_definition");
        let def = decorated.child_by_field_name("definition").unwrap();
        assert_eq!(&src[def.start_byte()..def.start_byte() + 5], "async");
        assert_eq!(
            sexp(def),
            "definition: (function_definition name: (identifier) parameters: (parameters (identifier) (typed_default_parameter name: (identifier) type: (type (identifier)) value: (integer)) (list_splat_pattern (identifier)) (identifier) (dictionary_splat_pattern (identifier))) return_type: (type (none)) body: (block (return_statement (identifier))))"
        );
    }

    #[test]
    fn operators_are_tokens_with_their_text() {
        let src = "x = (a) + # c\n  b if c not  in d else -e\n";
        let t = Tree::parse(src);
        let mut ops = Vec::new();
        let root = t.root_node();
        for id in 0..t.nodes.len() {
            let n = root.at(u32::try_from(id).unwrap());
            if !n.is_named() {
                ops.push(&src[n.start_byte()..n.end_byte()]);
            }
        }
        assert_eq!(ops, ["+", "not  in", "-"]);
    }

    #[test]
    fn f_strings_have_content_and_interpolations() {
        assert_eq!(
            tree("f'a{b!r:>{w}}c' 'd'\n"),
            "(module (expression_statement (concatenated_string (string (string_start) (string_content) (interpolation expression: (identifier) type_conversion: (type_conversion) format_specifier: (format_specifier (format_expression expression: (identifier)))) (string_content) (string_end)) (string (string_start) (string_content) (string_end)))))"
        );
    }

    #[test]
    fn imports() {
        assert_eq!(
            tree(
                "import a.b as c, d\nfrom ..x.y import z as w, v\nfrom . import *\nfrom __future__ import annotations\n"
            ),
            "(module (import_statement name: (aliased_import name: (dotted_name (identifier) (identifier)) alias: (identifier)) name: (dotted_name (identifier))) (import_from_statement module_name: (relative_import (import_prefix) (dotted_name (identifier) (identifier))) name: (aliased_import name: (dotted_name (identifier)) alias: (identifier)) name: (dotted_name (identifier))) (import_from_statement module_name: (relative_import (import_prefix)) (wildcard_import)) (future_import_statement name: (dotted_name (identifier))))"
        );
    }

    #[test]
    fn compound_statements() {
        assert_eq!(
            tree(
                "try:\n    pass\nexcept (A, B) as e:\n    pass\nelse:\n    pass\nfinally:\n    pass\nwith open(p) as f, g:\n    pass\n"
            ),
            "(module (try_statement body: (block (pass_statement)) (except_clause value: (as_pattern (tuple (identifier) (identifier)) alias: (as_pattern_target (identifier))) (block (pass_statement))) (else_clause body: (block (pass_statement))) (finally_clause (block (pass_statement)))) (with_statement (with_clause (with_item value: (as_pattern (call function: (identifier) arguments: (argument_list (identifier))) alias: (as_pattern_target (identifier)))) (with_item value: (identifier))) body: (block (pass_statement))))"
        );
    }

    /// Nesting as deep as a 2 MB file allows is parsed, laid out and dropped without
    /// overflowing the stack, on a thread with a small stack.
    #[test]
    fn deep_nesting_does_not_overflow() {
        let handle = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let src = format!(
                    "x = {}1\ny = {}0{}\n",
                    "-".repeat(200_000),
                    "a(".repeat(50_000),
                    ")".repeat(50_000)
                );
                let t = Tree::parse(&src);
                (t.depth(), t.root_node().named_child_count())
            })
            .unwrap();
        let (depth, statements) = handle.join().unwrap();
        assert!(depth > 200_000, "{depth}");
        assert_eq!(statements, 2);
    }

    /// A deep AST is dropped on a stack grown for it, on a thread with a small stack.
    #[test]
    fn a_deep_ast_is_dropped_without_overflow() {
        let handle = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let src = format!("x = {}1\n", "-".repeat(200_000));
                Tree::parse(&src).depth()
            })
            .unwrap();
        assert!(handle.join().unwrap() > 200_000);
    }
}
