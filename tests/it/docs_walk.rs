//! What the documents say, the binary does (issue 31): a walk through every fenced command
//! block of README.md and docs/*.md, as `trycmd` does for cargo.
//!
//! - A `console` block is run: each `$ hermes-plugins …` line against the fixtures (the
//!   repository is the working directory; each block has its own empty home, shared by its
//!   commands in order; no catalog, no core), and the lines after it, up to the next `$`, are
//!   its expected output — stdout and stderr as a terminal shows them, the home's path written
//!   `<home>`. `...` on a line of its own stands for any lines, `[..]` for any text within a
//!   line; a trailing `# exits N` on the command is its expected exit status (else 0).
//! - Any other command block (`sh`, or a bare fence whose lines start with `hermes-plugins` or
//!   `$ `) is marked on the line before its fence: `<!-- not run: REASON -->` (every
//!   `hermes-plugins` command in it must still parse with the binary's own arguments — no flag
//!   or subcommand it does not have) or `<!-- synopsis: REASON -->` (placeholders such as
//!   `[--home H]`; not parsed).
//! - A `hermes-plugins …` code span in a table row (integration.md's mapping of `hermes
//!   plugins …`) must parse the same way, its optional parts (`[--yes]`) given and the first
//!   of alternatives (`A\|B`) taken.
//!
//! So a document that drifts from the binary — an output, a flag, an exit status — fails here.

use std::path::{Path, PathBuf};

use clap::Parser;

use crate::common::{repo, std_bin};

/// One fenced block of a document.
#[derive(Debug)]
struct Block {
    /// `docs/x.md:LINE` of the opening fence.
    place: String,
    /// The fence's info string (`sh`, `console`, empty).
    lang: String,
    /// The lines between the fences, each with its line number.
    body: Vec<(usize, String)>,
    /// The `<!-- … -->` comment on the line before the fence, if any.
    marker: Option<String>,
}

/// The documents walked: README.md and every docs/*.md.
fn documents() -> Vec<PathBuf> {
    let root = repo();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    docs.insert(0, root.join("README.md"));
    docs
}

fn blocks(path: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(path).expect("readable document");
    let name = path
        .strip_prefix(repo())
        .unwrap_or(path)
        .display()
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(lang) = lines[i].strip_prefix("```") else {
            i += 1;
            continue;
        };
        let marker = i
            .checked_sub(1)
            .map(|p| lines[p].trim())
            .filter(|l| l.starts_with("<!--") && l.ends_with("-->"))
            .map(|l| {
                l.trim_start_matches("<!--")
                    .trim_end_matches("-->")
                    .trim()
                    .to_string()
            });
        let start = i;
        let mut body = Vec::new();
        i += 1;
        while i < lines.len() && !lines[i].starts_with("```") {
            body.push((i + 1, lines[i].to_string()));
            i += 1;
        }
        out.push(Block {
            place: format!("{name}:{}", start + 1),
            lang: lang.trim().to_string(),
            body,
            marker,
        });
        i += 1;
    }
    out
}

/// Whether a block holds commands (rather than a file, an output or a diagram).
fn is_commands(block: &Block) -> bool {
    match block.lang.as_str() {
        "sh" | "bash" | "shell" | "console" => true,
        "" => block.body.iter().any(|(_, l)| {
            let l = l.trim_start();
            l.starts_with("hermes-plugins ") || l.starts_with("$ ")
        }),
        _ => false,
    }
}

/// The shell words of a command line, without a trailing comment; `None` when the quoting
/// does not close.
fn words(line: &str) -> Option<Vec<String>> {
    let mut words = shlex::split(line)?;
    if let Some(at) = words.iter().position(|w| w.starts_with('#')) {
        words.truncate(at);
    }
    Some(words)
}

/// Each `hermes-plugins` invocation of a line (a pipeline or `&&` list may hold several;
/// redirections end one): its arguments after the program name.
fn invocations(line: &str) -> Option<Vec<Vec<String>>> {
    let mut out = Vec::new();
    let mut current: Option<Vec<String>> = None;
    let mut skip_next = false;
    for word in words(line)? {
        if skip_next {
            skip_next = false;
            continue;
        }
        match word.as_str() {
            "&&" | "||" | "|" | ";" => {
                out.extend(current.take());
            }
            ">" | ">>" | "<" | "2>" | "2>&1" => {
                out.extend(current.take());
                skip_next = word != "2>&1";
            }
            "hermes-plugins" if current.is_none() => current = Some(Vec::new()),
            _ => {
                if let Some(args) = current.as_mut() {
                    args.push(word);
                }
            }
        }
    }
    out.extend(current);
    Some(out)
}

/// The command lines of a block: `\`-continued lines joined; in a `console` block only the
/// `$ ` lines.
fn command_lines(block: &Block) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    // A block showing a session (`$ ` prompts) holds commands on those lines only.
    let prompts = block.lang == "console" || block.body.iter().any(|(_, l)| l.starts_with("$ "));
    for (n, raw) in &block.body {
        let line = if prompts {
            match (raw.strip_prefix("$ "), &pending) {
                (Some(cmd), _) => cmd.to_string(),
                (None, Some(_)) => raw.trim().to_string(),
                (None, None) => continue,
            }
        } else {
            raw.trim()
                .strip_prefix("$ ")
                .unwrap_or(raw.trim())
                .to_string()
        };
        let (start, mut text) = pending.take().unwrap_or((*n, String::new()));
        match line.strip_suffix('\\') {
            Some(head) => {
                text.push_str(head);
                text.push(' ');
                pending = Some((start, text));
            }
            None => {
                text.push_str(&line);
                out.push((start, text));
            }
        }
    }
    out.extend(pending);
    out
}

/// Whether `actual` matches `expected` (`...` lines, `[..]` within a line).
fn matches(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if e == "..." => (0..=actual.len()).any(|k| matches(rest, &actual[k..])),
        Some((e, rest)) => actual
            .split_first()
            .is_some_and(|(a, more)| line_matches(e, a) && matches(rest, more)),
    }
}

fn line_matches(expected: &str, actual: &str) -> bool {
    let parts: Vec<&str> = expected.split("[..]").collect();
    if parts.len() == 1 {
        return expected == actual;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !actual.starts_with(first) || !actual[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &actual[first.len()..actual.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Runs a `console` block; returns what did not match.
fn run_console(block: &Block) -> Vec<String> {
    let home = tempfile::tempdir().expect("tempdir");
    let mut failures = Vec::new();
    let body: Vec<&(usize, String)> = block.body.iter().collect();
    let mut i = 0;
    while i < body.len() {
        let (n, line) = body[i];
        let Some(command) = line.strip_prefix("$ ") else {
            failures.push(format!(
                "{}: line {n} is output before any `$ ` command",
                block.place
            ));
            i += 1;
            continue;
        };
        i += 1;
        let mut expected: Vec<String> = Vec::new();
        while i < body.len() && !body[i].1.starts_with("$ ") {
            expected.push(body[i].1.clone());
            i += 1;
        }
        while expected.last().is_some_and(|l| l.trim().is_empty()) {
            expected.pop();
        }
        let status: i32 = command
            .rsplit_once("# exits ")
            .and_then(|(_, s)| s.trim().parse().ok())
            .unwrap_or(0);
        let Some(mut argv) = words(command) else {
            failures.push(format!("{}: line {n}: unbalanced quotes", block.place));
            continue;
        };
        if argv.first().map(String::as_str) != Some("hermes-plugins") {
            failures.push(format!(
                "{}: line {n}: a console block runs `hermes-plugins` only: {command}",
                block.place
            ));
            continue;
        }
        argv.remove(0);
        let output = tempfile::NamedTempFile::new().expect("output file");
        let file = output.reopen().expect("output");
        let code = std_bin()
            .args(&argv)
            .env("HERMES_HOME", home.path())
            .env("COLUMNS", "100")
            .stdin(std::process::Stdio::null())
            .stdout(file.try_clone().expect("dup"))
            .stderr(file)
            .status()
            .expect("runs")
            .code();
        let text = std::fs::read_to_string(output.path()).expect("utf-8 output");
        let home_path = home.path().display().to_string();
        let actual: Vec<String> = text
            .replace(&home_path, "<home>")
            .lines()
            .map(str::to_string)
            .collect();
        if code != Some(status) || !matches(&expected, &actual) {
            failures.push(format!(
                "{}: line {n}: `{command}`\n  exit: documented {status}, got {code:?}\n  documented:\n{}\n  got:\n{}",
                block.place,
                indent(&expected),
                indent(&actual)
            ));
        }
    }
    failures
}

fn indent(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| format!("    | {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every command block is run or says why not; every command it shows parses; every run
/// gives the documented output and exit status.
#[test]
fn every_documented_command_is_run_or_says_why_not() {
    let mut failures = Vec::new();
    let (mut run, mut parsed, mut marked) = (0, 0, 0);
    for doc in documents() {
        for block in blocks(&doc) {
            if !is_commands(&block) {
                continue;
            }
            let synopsis = block
                .marker
                .as_deref()
                .is_some_and(|m| m.starts_with("synopsis:"));
            if block.lang == "console" {
                run += 1;
                failures.extend(run_console(&block));
            } else {
                match block.marker.as_deref() {
                    Some(m)
                        if (m.starts_with("not run:") || m.starts_with("synopsis:"))
                            && m.split_once(':').is_some_and(|(_, why)| !why.trim().is_empty()) =>
                    {
                        marked += 1;
                    }
                    _ => failures.push(format!(
                        "{}: a command block that is neither run (```console) nor marked `<!-- not run: REASON -->` or `<!-- synopsis: REASON -->` on the line before its fence",
                        block.place
                    )),
                }
            }
            if synopsis {
                continue;
            }
            for (n, line) in command_lines(&block) {
                let Some(calls) = invocations(&line) else {
                    failures.push(format!("{}: line {n}: unbalanced quotes", block.place));
                    continue;
                };
                for args in calls {
                    parsed += 1;
                    let argv = std::iter::once("hermes-plugins".to_string()).chain(args);
                    let parsed = hermes_plugins::cli::Cli::try_parse_from(argv);
                    // `--help` and `--version` parse as clap's "errors" that print and exit 0.
                    let shown = |e: &clap::Error| {
                        matches!(
                            e.kind(),
                            clap::error::ErrorKind::DisplayHelp
                                | clap::error::ErrorKind::DisplayVersion
                        )
                    };
                    if let Err(e) = &parsed
                        && !shown(e)
                    {
                        failures.push(format!(
                            "{}: line {n}: `{line}` does not parse: {}",
                            block.place,
                            e.render().to_string().lines().next().unwrap_or_default()
                        ));
                    }
                }
            }
        }
    }
    // Commands in tables (integration.md's mapping of `hermes plugins …`, the benchmarks'
    // rows): each must parse too, optional parts (`[--yes]`) included, the first of
    // alternatives (`A\|B`) taken, placeholders (`NAME`) as values.
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let shown = doc
            .strip_prefix(repo())
            .unwrap_or(&doc)
            .display()
            .to_string();
        for (i, line) in text.lines().enumerate() {
            if !line.trim_start().starts_with('|') {
                continue;
            }
            for span in line.split('`').skip(1).step_by(2) {
                let Some(rest) = span.strip_prefix("hermes-plugins ") else {
                    continue;
                };
                let command = table_command(rest);
                parsed += 1;
                let Some(args) = words(&command) else {
                    failures.push(format!("{shown}:{}: `{span}`: unbalanced quotes", i + 1));
                    continue;
                };
                let argv = std::iter::once("hermes-plugins".to_string()).chain(args);
                // A table may name a command without its operands; flags and subcommands it
                // gives must exist.
                if let Err(e) = hermes_plugins::cli::Cli::try_parse_from(argv)
                    && !matches!(
                        e.kind(),
                        clap::error::ErrorKind::MissingRequiredArgument
                            | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                    )
                {
                    failures.push(format!(
                        "{shown}:{}: `{span}` (as `{command}`) does not parse: {}",
                        i + 1,
                        e.render().to_string().lines().next().unwrap_or_default()
                    ));
                }
            }
        }
    }
    eprintln!("docs walk: {run} block(s) run, {marked} marked, {parsed} command(s) parsed");
    assert!(
        run >= 3,
        "the documents run at least three console blocks (found {run})"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A command as a table writes it, as arguments: `[--yes]` is given, `A\|B` is `A`, `…` is
/// nothing.
fn table_command(text: &str) -> String {
    let mut out = String::new();
    let mut alternative = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '[' | ']' => alternative = false,
            '…' => {}
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                alternative = true;
            }
            ' ' => {
                alternative = false;
                out.push(' ');
            }
            c if !alternative => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The walk's own pieces: a drifted output, flag or quoting is caught, not waved through.
#[test]
fn the_walk_catches_drift() {
    let lines = |s: &[&str]| s.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    assert!(matches(
        &lines(&["a", "...", "z"]),
        &lines(&["a", "b", "c", "z"])
    ));
    assert!(matches(&lines(&["a", "..."]), &lines(&["a"])));
    assert!(!matches(&lines(&["a", "z"]), &lines(&["a", "b", "z"])));
    assert!(line_matches(
        "from [..]/demo at [..]",
        "from /x/y/demo at abc"
    ));
    assert!(!line_matches(
        "from [..]/demo at [..]",
        "from /x/y/other at abc"
    ));
    assert_eq!(
        invocations("hermes-plugins verify && hermes-plugins env --json # what loads"),
        Some(vec![
            vec!["verify".to_string()],
            vec!["env".into(), "--json".into()]
        ])
    );
    assert_eq!(
        invocations("hermes-plugins nix expr > out.nix"),
        Some(vec![vec!["nix".to_string(), "expr".into()]])
    );
    assert_eq!(invocations("echo 'open"), None);
    let unknown = hermes_plugins::cli::Cli::try_parse_from([
        "hermes-plugins",
        "validate",
        "--no-such-flag",
        ".",
    ]);
    assert!(unknown.is_err(), "an unknown flag does not parse");
}

/// Every schema in `catalog-schema/` is named in the README's list, and every `--json`
/// document's schema in report-format.md's table of which command prints which.
#[test]
fn every_schema_is_named_where_the_docs_list_them() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README");
    let report = std::fs::read_to_string(repo().join("docs/report-format.md")).expect("doc");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(repo().join("catalog-schema")).expect("catalog-schema/") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        let Some(stem) = name.strip_suffix(".schema.json") else {
            continue;
        };
        let named = [format!("`{name}`"), format!("`{stem}`")]
            .iter()
            .any(|n| readme.contains(n.as_str()))
            || (stem.starts_with("plugin-yaml-v") && readme.contains("`plugin-yaml-v1/v2`"));
        if !named {
            missing.push(format!("README.md does not name {name}"));
        }
    }
    for schema in hermes_plugins::cli::json::Schema::ALL {
        if !report.contains(&format!("`{}`", schema.file())) {
            missing.push(format!(
                "docs/report-format.md does not name {}",
                schema.file()
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
