//! Parses every `.py` file under the given directories with tree-sitter-python and with
//! ruff_python_parser, interleaved, and prints the median time of each and what each found:
//! files with syntax errors, calls, function definitions (with lambdas), import statements.
//! The counts agree when both parsers see the same program; the times are what a static
//! analysis on either would start from.

use std::time::{Duration, Instant};

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
    if args.is_empty() {
        eprintln!("usage: bench-parsers [--runs N] DIR...");
        std::process::exit(2);
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
