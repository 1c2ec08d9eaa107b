//! Parses every `.py` file under the given directories with tree-sitter-python and with
//! ruff_python_parser, interleaved, and prints the median time of each and what each found:
//! files with syntax errors, calls, function definitions (with lambdas), import statements.
//! The counts agree when both parsers see the same program; the times are what a static
//! analysis on either would start from.

use std::time::{Duration, Instant};

/// The project's syntax tree, to compare with tree-sitter's (`--compare`).
#[path = "../../src/check/static_py/syntax.rs"]
#[allow(dead_code)]
mod syntax;

/// Kinds tree-sitter has and the project's tree leaves out (see `syntax`).
const LEFT_OUT: &[&str] = &[
    "comment",
    "escape_sequence",
    "escape_interpolation",
    "line_continuation",
];

/// tree-sitter's named nodes as `field:kind@start` lines, nested by indentation;
/// parenthesized expressions are spliced into their parent.
fn ts_lines(node: tree_sitter::Node<'_>, field: Option<&str>, depth: usize, out: &mut Vec<String>) {
    let kind = node.kind();
    if LEFT_OUT.contains(&kind) {
        return;
    }
    let mut cursor = node.walk();
    if kind == "parenthesized_expression" {
        for child in node.named_children(&mut cursor) {
            ts_lines(child, field, depth, out);
        }
        return;
    }
    out.push(format!(
        "{}{}{kind}@{}-{}",
        "  ".repeat(depth),
        field.map(|f| format!("{f}:")).unwrap_or_default(),
        node.start_byte(),
        end_of(kind, node.end_byte())
    ));
    if matches!(kind, "case_clause" | "string_content" | "type") {
        // Left out of the project's tree: patterns; escapes inside content.
        if kind == "case_clause" {
            for (i, child) in node.children(&mut cursor).enumerate() {
                let f = node.field_name_for_child(i as u32);
                if child.is_named() && (f == Some("consequence") || f == Some("guard")) {
                    ts_lines(child, f, depth + 1, out);
                }
            }
        }
        return;
    }
    let children: Vec<_> = node.children(&mut cursor).collect();
    for (i, child) in children.into_iter().enumerate() {
        if child.is_named() {
            ts_lines(child, node.field_name_for_child(i as u32), depth + 1, out);
        }
    }
}

fn our_lines(node: syntax::Node<'_>, out: &mut Vec<String>) {
    node.preorder(|n, depth| {
        out.push(format!(
            "{}{}{}@{}-{}",
            "  ".repeat(depth),
            n.field()
                .name()
                .map(|f| format!("{f}:"))
                .unwrap_or_default(),
            n.kind(),
            n.start_byte(),
            end_of(n.kind(), n.end_byte())
        ));
        // Annotations are compared as a whole (tree-sitter has a grammar of its own for them).
        n.kind() != "type"
    });
}

/// The end compared: not where tree-sitter's statement-level nodes take the line break or
/// trailing comments in.
fn end_of(kind: &str, end: usize) -> String {
    if std::env::var_os("COMPARE_ENDS").is_none() {
        return String::new();
    }
    match kind {
        "module" | "block" => String::new(),
        _ => end.to_string(),
    }
}

/// Compares the two trees of every file; prints the first difference of each file that
/// differs and a count.
fn compare(paths: &[std::path::PathBuf]) {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .expect("grammar matches");
    let (mut same, mut differ, mut broken) = (0, 0, 0);
    for path in paths {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let tree = parser.parse(text.as_bytes(), None).expect("parses");
        if tree.root_node().has_error() {
            broken += 1;
            continue;
        }
        let mut theirs = Vec::new();
        ts_lines(tree.root_node(), None, 0, &mut theirs);
        let ours_tree = syntax::Tree::parse(&text);
        let mut ours = Vec::new();
        our_lines(ours_tree.root_node(), &mut ours);
        if theirs == ours {
            same += 1;
            continue;
        }
        differ += 1;
        let at = theirs
            .iter()
            .zip(&ours)
            .position(|(a, b)| a != b)
            .unwrap_or(theirs.len().min(ours.len()));
        println!("== {} (line {at})", path.display());
        for line in theirs.iter().skip(at.saturating_sub(3)).take(8) {
            println!("  ts   | {line}");
        }
        for line in ours.iter().skip(at.saturating_sub(3)).take(8) {
            println!("  ours | {line}");
        }
    }
    println!(
        "{same} files the same, {differ} differ, {broken} with tree-sitter errors (not compared)"
    );
}

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{Expr, Stmt};

/// What a parser found in the corpus.
#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
struct Found {
    with_errors: usize,
    calls: usize,
    functions: usize,
    imports: usize,
}

fn tree_sitter_pass(files: &[String]) -> Found {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .expect("grammar matches");
    let mut found = Found::default();
    for text in files {
        let tree = parser.parse(text.as_bytes(), None).expect("parses");
        let root = tree.root_node();
        found.with_errors += usize::from(root.has_error());
        let mut cursor = root.walk();
        loop {
            // Named nodes only: `lambda` and `import` are also keyword tokens.
            match cursor.node().kind() {
                _ if !cursor.node().is_named() => {}
                "call" => found.calls += 1,
                "function_definition" | "lambda" => found.functions += 1,
                "import_statement" | "import_from_statement" | "future_import_statement" => {
                    found.imports += 1
                }
                _ => {}
            }
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    break;
                }
            }
            if cursor.node() == root {
                break;
            }
        }
    }
    found
}

struct Counter(Found);

impl<'a> Visitor<'a> for Counter {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(_) => self.0.functions += 1,
            Stmt::Import(_) | Stmt::ImportFrom(_) => self.0.imports += 1,
            _ => {}
        }
        visitor::walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Call(_) => self.0.calls += 1,
            Expr::Lambda(_) => self.0.functions += 1,
            _ => {}
        }
        visitor::walk_expr(self, expr);
    }
}

fn ruff_pass(files: &[String]) -> Found {
    let mut counter = Counter(Found::default());
    for text in files {
        match ruff_python_parser::parse_module(text) {
            Ok(parsed) => counter.visit_body(&parsed.syntax().body),
            Err(_) => counter.0.with_errors += 1,
        }
    }
    counter.0
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let runs = match args.iter().position(|a| a == "--runs") {
        Some(i) => {
            let n = args.get(i + 1).and_then(|n| n.parse().ok()).unwrap_or(7);
            args.drain(i..(i + 2).min(args.len()));
            n
        }
        None => 7,
    };
    let compare_mode = match args.iter().position(|a| a == "--compare") {
        Some(i) => {
            args.remove(i);
            true
        }
        None => false,
    };
    if args.is_empty() {
        eprintln!("usage: bench-parsers [--runs N | --compare] DIR...");
        std::process::exit(2);
    }
    if compare_mode {
        let mut paths: Vec<std::path::PathBuf> = args
            .iter()
            .flat_map(|dir| {
                walkdir::WalkDir::new(dir)
                    .into_iter()
                    .filter_map(Result::ok)
            })
            .filter(|e| e.path().extension().is_some_and(|e| e == "py"))
            .map(|e| e.into_path())
            .collect();
        paths.sort();
        compare(&paths);
        return;
    }
    let mut files = Vec::new();
    for dir in &args {
        for entry in walkdir::WalkDir::new(dir)
            .into_iter()
            .filter_map(Result::ok)
        {
            if entry.path().extension().is_some_and(|e| e == "py")
                && let Ok(text) = std::fs::read_to_string(entry.path())
            {
                files.push(text);
            }
        }
    }
    let bytes: usize = files.iter().map(String::len).sum();
    println!(
        "{} files, {:.2} MB of Python; {runs} interleaved runs, one thread",
        files.len(),
        bytes as f64 / 1e6
    );
    let (mut ts, mut ruff) = (Vec::new(), Vec::new());
    let (mut ts_found, mut ruff_found) = (Found::default(), Found::default());
    for _ in 0..runs {
        let start = Instant::now();
        ts_found = tree_sitter_pass(&files);
        ts.push(start.elapsed());
        let start = Instant::now();
        ruff_found = ruff_pass(&files);
        ruff.push(start.elapsed());
    }
    let median = |t: &mut Vec<Duration>| {
        t.sort();
        t[t.len() / 2]
    };
    let (ts, ruff) = (median(&mut ts), median(&mut ruff));
    let rate = |d: Duration| bytes as f64 / 1e6 / d.as_secs_f64();
    println!(
        "tree-sitter-python   {:8.1} ms  {:6.1} MB/s  {ts_found:?}",
        ts.as_secs_f64() * 1e3,
        rate(ts)
    );
    println!(
        "ruff_python_parser   {:8.1} ms  {:6.1} MB/s  {ruff_found:?}",
        ruff.as_secs_f64() * 1e3,
        rate(ruff)
    );
    println!(
        "ratio (tree-sitter / ruff): {:.2}",
        ts.as_secs_f64() / ruff.as_secs_f64()
    );
}
