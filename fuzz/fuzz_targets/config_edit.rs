//! The surgical config.yaml editor on arbitrary text: `enable`/`disable`/`forget` of a name
//! either refuse, or give a document whose selection, read back, is exactly the intended one.
#![no_main]

use std::path::Path;

use hermes_plugins::state::{config_edit, profiles};
use libfuzzer_sys::fuzz_target;

const NAMES: &[&str] = &["news", "weather", "tool-2", "cat/plug", "x_y"];

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let name = NAMES[(choice as usize / 3) % NAMES.len()];
    let op = choice % 3;
    let result = match op {
        0 => config_edit::enable(text, name),
        1 => config_edit::disable(text, name),
        _ => config_edit::forget(text, name),
    };
    let Ok(after) = result else {
        return;
    };
    let config = Path::new("config.yaml");
    // What the reader makes of the original: a document it rejects (a number in a list, say)
    // is only held to "no panic".
    let Ok(before) = profiles::profile_from_text("default", config, text) else {
        return;
    };
    let read = profiles::profile_from_text("default", config, &after)
        .unwrap_or_else(|e| panic!("the edited document does not read back: {e}\n{after}"));
    let (enabled, disabled) = (read.enabled.contains(name), read.disabled.contains(name));
    match op {
        0 => assert!(enabled && !disabled, "enable {name}:\n{after}"),
        1 => assert!(!enabled && disabled, "disable {name}:\n{after}"),
        _ => assert!(!enabled && !disabled, "forget {name}:\n{after}"),
    }
    // Every other name keeps its place.
    let others = |set: &std::collections::BTreeSet<String>| {
        set.iter()
            .filter(|n| *n != name)
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        others(&before.enabled),
        others(&read.enabled),
        "{text}\n---\n{after}"
    );
    assert_eq!(
        others(&before.disabled),
        others(&read.disabled),
        "{text}\n---\n{after}"
    );
});
