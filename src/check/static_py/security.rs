//! VAL-16 `security-scan`: patterns that make a package dangerous to install, with a verdict.
//!
//! Levels: `critical` (reverse shells, decode-and-exec, download-and-exec, symlinks escaping the
//! package), `high` (`eval`/`exec` of dynamic strings, `curl … | sh`, native executables),
//! `medium` (restricted-builtins `eval`, shell commands built at runtime, binary or compiled
//! files, opaque encoded blobs, oversized trees: > 400 files, > 10 MB, or a file > 1 MB).
//! Verdict: `dangerous` if anything is critical or high, `caution` if anything is medium,
//! else `safe`. Only `dangerous` fails validation.

use aho_corasick::AhoCorasick;
use std::io::Read;
use std::sync::LazyLock;

use super::syntax::Node;
use crate::located::Pos;
use crate::pkgfs::{Kind, PackageRoot, ReadError};

use super::eval::{Evaluator, Val};
use super::scope::ModId;
use super::shell_patterns::{
    HEAD, WINDOW, byte_patterns_match, check_text, lossy, scan_bytes, snippet_of,
};
use super::source::{Index, PyModule};

pub use super::finding::{Level, SecurityFinding, Verdict};

/// Limits for the oversized-tree finding.
pub const MAX_FILES: usize = 400;

/// Total size limit (10 MB).
pub const MAX_TOTAL_BYTES: u64 = 10 * 1000 * 1000;

/// Per-file size limit (1 MB).
pub const MAX_FILE_BYTES: u64 = 1000 * 1000;

/// A string of at least 2000 characters, all base64 alphabet or whitespace (what the
/// pattern `^[A-Za-z0-9+/=\s]{2000,}$` says; checked by hand because that regex compiles to
/// 2000 copies of its class — 4 % of a cold `validate` of the Hermes corpus).
fn is_base64_blob(value: &str) -> bool {
    value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=') || c.is_whitespace())
        && value.chars().nth(1999).is_some()
}

/// Words a string must contain to be worth matching against the shell patterns.
const SUSPICIOUS: &[&str] = &[
    "/dev/tcp", "bash", "nc ", "ncat", "socat", "mkfifo", "curl", "wget", "iex", "nvoke-", "sh -i",
];

/// [`SUSPICIOUS`] as one automaton: each string literal is searched once, not once per word.
/// Leftmost-first for its prefilter, as `shell_patterns`'s `NEEDED_SEARCH`: only whether a word is there is
/// asked, which the match kind does not change.
static SUSPICIOUS_WORDS: LazyLock<AhoCorasick> = LazyLock::new(|| {
    AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::LeftmostFirst)
        .build(SUSPICIOUS)
        .expect("literal words")
});

const DECODERS: &[&str] = &[
    "b64decode",
    "b85decode",
    "a85decode",
    "b32decode",
    "decompress",
    "unhexlify",
    "fromhex",
    "codecs.decode",
    "marshal.loads",
    "rot13",
    "zlib",
];

const FETCHERS: &[&str] = &[
    "urlopen",
    "requests.",
    "httpx.",
    "urllib",
    "aiohttp",
    "urlretrieve",
    "socket",
];

const MEDIA: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "webp", "ico", "bmp", "tif", "tiff", "pdf", "woff", "woff2",
    "ttf", "otf", "eot", "mp3", "wav", "ogg", "mp4", "webm", "avif", "heic",
];

const ARCHIVES: &[&str] = &[
    "zip", "tar", "gz", "tgz", "bz2", "xz", "7z", "whl", "jar", "rar",
];

/// Scans the Python sources (`indexes` are the modules' [`Index`]es) and the package tree.
pub fn scan<'t>(
    root: &PackageRoot,
    ev: &Evaluator<'_, 't>,
    indexes: &[Index<'t>],
) -> Vec<SecurityFinding> {
    let mut out = Vec::new();
    for (m, index) in indexes.iter().enumerate() {
        scan_python(ev, m, &ev.set.modules[m], index, &mut out);
    }
    // Parsed files were read whole by the analysis above; unreached ones were matched
    // against the byte-level patterns whole, without a match.
    let read: std::collections::HashMap<&str, (&str, usize)> = ev
        .set
        .heads()
        .map(|(rel, head, len)| (rel, (head, len)))
        .collect();
    scan_tree(root, &read, &mut out);
    out.sort_by(|a, b| (a.file.as_str(), a.pos).cmp(&(b.file.as_str(), b.pos)));
    out
}

fn push_py(
    out: &mut Vec<SecurityFinding>,
    module: &PyModule,
    node: Node<'_>,
    level: Level,
    rule: &'static str,
    message: String,
) {
    out.push(SecurityFinding {
        level,
        rule,
        message,
        file: module.rel.clone(),
        pos: module.pos(node),
        snippet: snippet_of(module.text_of(node)),
    });
}

fn scan_python<'t>(
    ev: &Evaluator<'_, 't>,
    m: ModId,
    module: &'t PyModule,
    index: &Index<'t>,
    out: &mut Vec<SecurityFinding>,
) {
    let uses_socket = module.text.contains("socket");
    for (node, _) in &index.calls {
        let func = node
            .child_by_field_name("function")
            .map(|f| module.text_of(f))
            .unwrap_or("");
        let last = func.rsplit('.').next().unwrap_or(func);
        if matches!(
            last,
            "eval"
                | "exec"
                | "compile"
                | "system"
                | "popen"
                | "run"
                | "call"
                | "Popen"
                | "check_output"
                | "check_call"
                | "spawn"
                | "dup2"
                | "__import__"
                | "import_module"
        ) {
            check_call(ev, m, module, *node, uses_socket, out);
        }
    }
    for (node, is_prose) in &index.strings {
        let raw = module.text_of(*node);
        if *is_prose || !(raw.len() >= 2000 || SUSPICIOUS_WORDS.is_match(raw)) {
            continue;
        }
        if let Val::Str(value) = ev.eval(m, *node, None) {
            check_text(&value, out, |level, rule, message| SecurityFinding {
                level,
                rule,
                message,
                file: module.rel.clone(),
                pos: module.pos(*node),
                snippet: snippet_of(module.text_of(*node)),
            });
            if value.len() >= 2000 && is_base64_blob(&value) {
                push_py(
                    out,
                    module,
                    *node,
                    Level::Medium,
                    "encoded-blob",
                    format!(
                        "an opaque encoded blob of {} characters cannot be reviewed",
                        value.len()
                    ),
                );
            }
        }
    }
}

fn check_call<'t>(
    ev: &Evaluator<'_, 't>,
    m: ModId,
    module: &'t PyModule,
    call: Node<'t>,
    uses_socket: bool,
    out: &mut Vec<SecurityFinding>,
) {
    let (Some(func), Some(args)) = (
        call.child_by_field_name("function"),
        call.child_by_field_name("arguments"),
    ) else {
        return;
    };
    let positional: Vec<Node<'t>> = args
        .named_children()
        .filter(|a| !matches!(a.kind(), "keyword_argument" | "comment"))
        .collect();
    let keyword = |name: &str| {
        args.named_children()
            .filter(|a| a.kind() == "keyword_argument")
            .find(|a| {
                a.child_by_field_name("name")
                    .is_some_and(|n| module.text_of(n) == name)
            })
            .and_then(|a| a.child_by_field_name("value"))
    };
    let name = module.text_of(func);
    let shadowed = ev.scopes.modules[m].names.contains_key(name);
    if func.kind() == "identifier" && !shadowed && matches!(name, "eval" | "exec" | "compile") {
        check_dynamic_code(ev, m, module, call, name, &positional, out);
        return;
    }
    let imports_computed = |what: &str| {
        positional
            .first()
            .is_some_and(|a| !matches!(ev.eval(m, *a, None), Val::Str(_)))
            .then(|| format!("{what} of a name computed at runtime: what it loads is not analysed"))
    };
    if func.kind() == "identifier" && !shadowed && name == "__import__" {
        if let Some(message) = imports_computed("__import__()") {
            push_py(out, module, call, Level::Medium, "dynamic-code", message);
        }
        return;
    }
    let path = match ev.eval(m, func, None) {
        Val::External(p) => p,
        _ => return,
    };
    if path == "importlib.import_module" {
        if let Some(message) = imports_computed("importlib.import_module()") {
            push_py(out, module, call, Level::Medium, "dynamic-code", message);
        }
        return;
    }
    match path.as_str() {
        "os.system"
        | "os.popen"
        | "subprocess.run"
        | "subprocess.call"
        | "subprocess.Popen"
        | "subprocess.check_output"
        | "subprocess.check_call" => {
            let via_shell = path.starts_with("os.")
                || keyword("shell").is_some_and(|v| module.text_of(v) == "True");
            if via_shell
                && let Some(cmd) = positional.first()
                && !matches!(ev.eval(m, *cmd, None), Val::Str(_))
            {
                let how = if path.starts_with("os.") {
                    ""
                } else {
                    "shell=True"
                };
                push_py(
                    out,
                    module,
                    call,
                    Level::Medium,
                    "shell-command",
                    format!("{path}({how}) of a command built at runtime"),
                );
            }
        }
        "pty.spawn" if uses_socket => {
            push_py(
                out,
                module,
                call,
                Level::Critical,
                "reverse-shell",
                "pty.spawn() of a shell in a module that opens sockets".into(),
            );
        }
        "os.dup2" if uses_socket && module.text_of(args).contains("fileno()") => {
            push_py(
                out,
                module,
                call,
                Level::Critical,
                "reverse-shell",
                "os.dup2() of a socket onto standard streams".into(),
            );
        }
        _ => {}
    }
}

/// `eval`, `exec` or `compile` (the builtins): of a literal (not analysed), of code decoded or
/// downloaded at runtime, or of a dynamic string.
fn check_dynamic_code<'t>(
    ev: &Evaluator<'_, 't>,
    m: ModId,
    module: &'t PyModule,
    call: Node<'t>,
    name: &str,
    positional: &[Node<'t>],
    out: &mut Vec<SecurityFinding>,
) {
    let Some(source) = positional.first() else {
        return;
    };
    if matches!(ev.eval(m, *source, None), Val::Str(_)) {
        push_py(
            out,
            module,
            call,
            Level::Medium,
            "dynamic-code",
            format!("{name}() of a string literal: the code inside it is not analysed"),
        );
        return;
    }
    let source_text = module.text_of(*source);
    if DECODERS.iter().any(|d| source_text.contains(d)) {
        push_py(
            out,
            module,
            call,
            Level::Critical,
            "decode-and-exec",
            format!("{name}() runs code decoded at runtime"),
        );
    } else if FETCHERS.iter().any(|f| source_text.contains(f)) {
        push_py(
            out,
            module,
            call,
            Level::Critical,
            "download-and-exec",
            format!("{name}() runs code fetched at runtime"),
        );
    } else if name == "compile" {
        push_py(
            out,
            module,
            call,
            Level::Medium,
            "dynamic-exec",
            "compile() of a string built at runtime".into(),
        );
    } else if restricted_builtins(module, positional.get(1).copied()) {
        push_py(
            out,
            module,
            call,
            Level::Medium,
            "dynamic-exec",
            format!(
                "{name}() of a dynamic string with restricted builtins (still able to reach object internals)"
            ),
        );
    } else {
        push_py(
            out,
            module,
            call,
            Level::High,
            "dynamic-exec",
            format!("{name}() of a dynamic string runs arbitrary code"),
        );
    }
}

/// `eval(src, {"__builtins__": {}}, …)` or `{"__builtins__": None}`.
fn restricted_builtins(module: &PyModule, globals: Option<Node<'_>>) -> bool {
    let Some(globals) = globals else { return false };
    if globals.kind() != "dictionary" {
        return false;
    }
    globals.named_children().any(|pair| {
        pair.kind() == "pair"
            && pair
                .child_by_field_name("key")
                .is_some_and(|k| module.text_of(k).trim_matches(['"', '\'']) == "__builtins__")
            && pair
                .child_by_field_name("value")
                .is_some_and(|v| matches!(module.text_of(v).trim(), "{}" | "None" | "dict()"))
    })
}

/// Opens a package file for reading without blocking on a FIFO swapped in after the walk.
fn open_package_file(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    crate::files::os::no_follow(std::fs::OpenOptions::new().read(true)).open(path)
}

/// Whether `rel` is documentation for people: a README, changelog or other Markdown, reST or
/// text file, or a wheel's `*.dist-info/` metadata (whose `METADATA` carries the README as the
/// long description). Neither Hermes nor the agent reads these; a skill's files are not
/// documentation (the agent follows them), so nothing under a `skills` directory and no
/// `SKILL.md` is.
fn is_documentation(rel: &str) -> bool {
    let mut segments = rel.split('/');
    let name = segments
        .next_back()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let dirs: Vec<&str> = rel.split('/').collect();
    let dirs = &dirs[..dirs.len().saturating_sub(1)];
    if name == "skill.md" || dirs.iter().any(|d| d.eq_ignore_ascii_case("skills")) {
        return false;
    }
    if dirs.first().is_some_and(|d| d.ends_with(".dist-info")) {
        return true;
    }
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or_default();
    matches!(ext, "md" | "markdown" | "rst" | "txt")
        || ["readme", "changelog", "changes", "history"]
            .iter()
            .any(|stem| name.starts_with(stem))
}

/// A `curl … | sh` in documentation tells a person how to install something by hand; the
/// plugin does not run it. Reported for the reviewer (medium), not a dangerous verdict that
/// blocks the install. A reverse shell stays critical wherever it is written.
fn demote_documentation(rel: &str, found: &mut [SecurityFinding]) {
    if !is_documentation(rel) {
        return;
    }
    for f in found.iter_mut().filter(|f| f.rule == "pipe-to-shell") {
        f.level = Level::Medium;
        f.message = format!(
            "{} (in documentation: an instruction to its reader, not code the plugin runs)",
            f.message
        );
    }
}

fn scan_tree(
    root: &PackageRoot,
    read: &std::collections::HashMap<&str, (&str, usize)>,
    out: &mut Vec<SecurityFinding>,
) {
    let tree_finding = |level, rule, message: String| SecurityFinding {
        level,
        rule,
        message,
        file: ".".into(),
        pos: Pos::START,
        snippet: String::new(),
    };
    let mut files = 0usize;
    let mut total: u64 = 0;
    let tree = root.tree();
    for u in &tree.unexamined {
        out.push(SecurityFinding {
            level: Level::Medium,
            rule: "unexamined",
            message: format!("`{}` was not scanned: {}", u.rel, u.reason),
            file: u.rel.clone(),
            pos: Pos::START,
            snippet: String::new(),
        });
    }
    for entry in &tree.entries {
        let rel = entry.rel.clone();
        let file_finding = |level, rule, message: String| SecurityFinding {
            level,
            rule,
            message,
            file: rel.clone(),
            pos: Pos::START,
            snippet: String::new(),
        };
        if entry.kind == Kind::Symlink {
            if let Err(ReadError::Escapes { target }) = root.resolve(&rel) {
                out.push(file_finding(
                    Level::Critical,
                    "symlink-escape",
                    format!("symlink escapes the package (to {target})"),
                ));
            }
            continue;
        }
        if entry.kind != Kind::File {
            continue;
        }
        files += 1;
        let size = entry.size;
        total += size;
        if size > MAX_FILE_BYTES {
            out.push(file_finding(
                Level::Medium,
                "oversized",
                format!("file of {} bytes (more than {MAX_FILE_BYTES})", size),
            ));
        }
        let ext = rel
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        // The head for the magic numbers; then every file the Python analysis did not parse
        // goes through the byte-level patterns (scan_bytes), whatever its size. A file read
        // whole already is not opened again, when its text is its bytes (the size says no BOM
        // was dropped from it).
        let in_memory = read
            .get(rel.as_str())
            .filter(|(_, len)| *len as u64 == size);
        let mut opened = None;
        let head: &[u8] = match in_memory {
            Some((head, _)) => head.as_bytes(),
            None => {
                let Ok(file) = open_package_file(&entry.path) else {
                    continue;
                };
                let (file, head) = opened.insert((file, Vec::with_capacity(HEAD)));
                let _ = file.take(HEAD as u64).read_to_end(head);
                head
            }
        };
        let executable_magic = head.starts_with(b"\x7fELF")
            || head.starts_with(&[0xfe, 0xed, 0xfa, 0xce])
            || head.starts_with(&[0xfe, 0xed, 0xfa, 0xcf])
            || head.starts_with(&[0xcf, 0xfa, 0xed, 0xfe])
            || head.starts_with(&[0xce, 0xfa, 0xed, 0xfe])
            || head.starts_with(&[0xca, 0xfe, 0xba, 0xbe])
            || (head.starts_with(b"MZ")
                && matches!(ext.as_str(), "exe" | "dll" | "sys" | "scr" | ""));
        if executable_magic || matches!(ext.as_str(), "so" | "dylib" | "dll" | "exe") {
            out.push(file_finding(
                Level::High,
                "native-executable",
                "native executable or library; its behaviour cannot be reviewed".into(),
            ));
            continue;
        }
        if ext == "pyc" || ext == "pyo" {
            out.push(file_finding(
                Level::Medium,
                "compiled-code",
                "compiled Python; ship the source instead (remove __pycache__)".into(),
            ));
            continue;
        }
        if head.contains(&0) {
            if ARCHIVES.contains(&ext.as_str()) {
                out.push(file_finding(
                    Level::Medium,
                    "archive",
                    "archive; its contents cannot be reviewed in place".into(),
                ));
                continue;
            } else if MEDIA.contains(&ext.as_str()) {
                continue;
            }
            out.push(file_finding(
                Level::Medium,
                "binary-file",
                "binary file of unknown type".into(),
            ));
        } else if MEDIA.contains(&ext.as_str()) {
            continue;
        }
        // Read whole already: parsed, or unreached without a match.
        let Some((mut file, head)) = opened.take() else {
            continue;
        };
        if read.contains_key(rel.as_str()) {
            continue;
        }
        if size <= WINDOW as u64 {
            // Most files match nothing: one pass over the whole text says so
            // (`byte_patterns_match`), and only a file that matches is scanned line by line.
            let mut bytes = head;
            if (&mut file)
                .take(WINDOW as u64 + 1 - bytes.len() as u64)
                .read_to_end(&mut bytes)
                .is_err()
            {
                continue;
            }
            if bytes.len() <= WINDOW && !byte_patterns_match(&lossy(&bytes)) {
                continue;
            }
            let before = out.len();
            scan_bytes(std::io::Cursor::new(bytes).chain(file), &rel, out);
            demote_documentation(&rel, &mut out[before..]);
            continue;
        }
        let before = out.len();
        scan_bytes(std::io::Cursor::new(head).chain(file), &rel, out);
        demote_documentation(&rel, &mut out[before..]);
    }
    if files > MAX_FILES {
        out.push(tree_finding(
            Level::Medium,
            "oversized",
            format!("the package has {files} files (more than {MAX_FILES})"),
        ));
    }
    if total > MAX_TOTAL_BYTES {
        out.push(tree_finding(
            Level::Medium,
            "oversized",
            format!("the package is {total} bytes (more than {MAX_TOTAL_BYTES})"),
        ));
    }
}

#[cfg(test)]
mod blob_tests {
    use super::is_base64_blob;

    #[test]
    fn the_blob_check_is_the_pattern() {
        let pattern = regex::Regex::new(r"^[A-Za-z0-9+/=\s]{2000,}$").unwrap();
        let long = "QUJD".repeat(500);
        let samples = [
            long.clone(),
            long[..1999].to_string(),
            format!("{long}\n"),
            format!("{}\u{a0}{}", &long[..1000], &long[..999]),
            format!("{}\u{2003}{}", &long[..1000], &long[..1000]),
            format!("{long}-"),
            format!("{long}\u{e9}"),
            format!("\u{3000}{long}"),
            "=".repeat(2000),
            " \n\t".repeat(700),
        ];
        for s in &samples {
            assert_eq!(is_base64_blob(s), pattern.is_match(s), "{:?}", &s[..20]);
        }
    }
}

#[cfg(test)]
mod file_type_tests {
    use crate::pkgfs::PackageRoot;

    /// What a file's first bytes and name make of it, for files the analysis read whole
    /// (parsed or unreached `.py`, judged from the text in memory) and files it did not (read
    /// from disk): the same rules either way, and a BOM the decoder dropped does not make a
    /// `.py` whose bytes start with it an executable.
    #[test]
    fn heads_are_judged_the_same_from_memory_and_from_disk() {
        let dir = tempfile::tempdir().unwrap();
        // A NUL in the head's last byte, and one just past it.
        let mut nul_last = vec![b'x'; super::HEAD - 1];
        nul_last.push(0);
        let mut nul_late = vec![b'x'; super::HEAD];
        nul_late.push(0);
        let files: &[(&str, &[u8])] = &[
            (
                "__init__.py",
                b"import helper\ndef register(ctx):\n    pass\n",
            ),
            ("helper.py", b"\x7fELF = 1\n"),
            ("tests/test_x.py", b"x = 1\x00\n"),
            ("bom.py", b"\xef\xbb\xbf\x7fELF = 1\n"),
            ("last.py", &nul_last),
            ("late.py", &nul_late),
            ("tool", b"\x7fELF\x02\x01\x01\x00"),
            ("lib.so", b"anything"),
            ("mod.pyc", b"\x55\x0d\x0d\x0a"),
            ("data.zip", b"PK\x03\x04\x00\x00"),
            ("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00"),
            ("blob.dat", b"\x00\x01\x02"),
            ("notes.txt", b"plain text\n"),
        ];
        for (rel, bytes) in files {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        let root = PackageRoot::open(dir.path()).unwrap();
        let analysis = super::super::analyze(&root);
        let mut found: Vec<(String, &str)> = analysis
            .security
            .iter()
            .filter(|f| {
                matches!(
                    f.rule,
                    "native-executable" | "binary-file" | "compiled-code" | "archive"
                )
            })
            .map(|f| (f.file.clone(), f.rule))
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                ("blob.dat".to_string(), "binary-file"),
                ("data.zip".to_string(), "archive"),
                ("helper.py".to_string(), "native-executable"),
                ("last.py".to_string(), "binary-file"),
                ("lib.so".to_string(), "native-executable"),
                ("mod.pyc".to_string(), "compiled-code"),
                ("tests/test_x.py".to_string(), "binary-file"),
                ("tool".to_string(), "native-executable"),
            ]
        );
    }
}

#[cfg(test)]
mod documentation_tests {
    use super::{Level, SecurityFinding, demote_documentation, is_documentation};
    use crate::located::Pos;

    #[test]
    fn documentation_is_what_people_read_and_the_agent_does_not() {
        for rel in [
            "README.md",
            "my_pkg/README.md",
            "docs/install.rst",
            "CHANGELOG",
            "my_pkg-1.0.dist-info/METADATA",
            "notes.txt",
        ] {
            assert!(is_documentation(rel), "{rel}");
        }
        for rel in [
            "SKILL.md",
            "skills/setup/SKILL.md",
            "skills/setup/references/install.md",
            "install.sh",
            "my_pkg/__init__.py",
            "my_pkg/metadata.dist-info.py",
        ] {
            assert!(!is_documentation(rel), "{rel}");
        }
    }

    #[test]
    fn a_pipe_to_shell_in_documentation_is_reported_without_blocking() {
        let finding = |rule: &'static str| SecurityFinding {
            level: Level::High,
            rule,
            message: "m".into(),
            file: "README.md".into(),
            pos: Pos::START,
            snippet: String::new(),
        };
        let mut found = [finding("pipe-to-shell"), finding("reverse-shell")];
        demote_documentation("README.md", &mut found);
        assert!(!found[0].blocks() && found[0].message.contains("in documentation"));
        assert!(found[1].blocks(), "a reverse shell is never demoted");
        let mut code = [finding("pipe-to-shell")];
        demote_documentation("install.sh", &mut code);
        assert!(code[0].blocks());
    }
}
