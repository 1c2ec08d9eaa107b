//! The `.env` writer on arbitrary files and values: setting `KEY` either refuses (a NUL, or a
//! file that would not read the new line back) or
//! gives a file from which the reader (python-dotenv's semantics) reads exactly the value,
//! and every other key as before.
#![no_main]

use hermes_plugins::consent::env_file;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    // The value, then the file, split at the first \u{1}.
    let (value, text) = input.split_once('\u{1}').unwrap_or((input, ""));
    let after = match env_file::set(text, "FUZZ_KEY", value) {
        Ok(after) => after,
        // A NUL, or a file that would swallow the new line: refused, never written wrong.
        Err(env_file::EnvError::Nul(_) | env_file::EnvError::Unreadable(_)) => return,
        Err(e) => panic!("unexpected refusal: {e}"),
    };
    let read = env_file::values(&after, &|_| None);
    assert_eq!(
        read.get("FUZZ_KEY").map(String::as_str),
        Some(value),
        "file before:\n{text:?}\nafter:\n{after:?}"
    );
    let before = env_file::values(text, &|_| None);
    let raw = env_file::parse(text);
    for (key, old) in &before {
        // A value that refers to FUZZ_KEY changes with it, as it should.
        let refers = raw.get(key).is_some_and(|r| r.contains("${FUZZ_KEY"));
        if key != "FUZZ_KEY" && !refers {
            assert_eq!(
                read.get(key),
                Some(old),
                "{key} changed:\n{text:?}\n{after:?}"
            );
        }
    }
});
