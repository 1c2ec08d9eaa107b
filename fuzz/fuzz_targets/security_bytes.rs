//! The byte-level security patterns that see every file the Python analysis does not parse
//! (any size, any bytes): they finish, never panic, report only lines the input has, at most
//! one finding per rule and line, and reading a line in small overlapping windows (as a huge
//! line is read) reports only rules that match that whole line. The quick check that skips
//! a file (`byte_patterns_match`, with its search for the strings every match holds) says
//! yes exactly when a pattern matches the whole text.
#![no_main]

use hermes_plugins::check::static_py::shell_patterns::{
    byte_patterns, byte_patterns_match, rules_matching,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // (Up to one window: a longer text is checked line by line, comment lines skipped.)
    assert!(
        text.len() > 1 << 20 || byte_patterns_match(&text) == !rules_matching(&text).is_empty(),
        "the quick check disagrees with the patterns"
    );
    let lines: Vec<&[u8]> = data.split(|b| *b == b'\n').collect();
    for (window, overlap) in [(1 << 20, 1 << 10), (64, 24), (7, 3)] {
        let found = byte_patterns(data, "f", window, overlap);
        let mut seen = std::collections::HashSet::new();
        for f in &found {
            let n = f.pos.line as usize;
            assert!(n >= 1 && n <= lines.len(), "line {n} of {}", lines.len());
            assert_eq!(f.file, "f");
            assert!(seen.insert((n, f.rule)), "{} twice at line {n}", f.rule);
            let whole = String::from_utf8_lossy(lines[n - 1]);
            assert!(
                rules_matching(&whole).contains(&f.rule),
                "windows of {window} invented {} at line {n}",
                f.rule
            );
        }
    }
});
