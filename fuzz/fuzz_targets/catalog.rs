//! Catalog entry files and `removed.yaml` (what catalog pull requests change) through their
//! readers: never a panic, and every finding lies inside the file's text.
#![no_main]

#[path = "positions.rs"]
mod positions;

use hermes_plugins::catalog::{entry, removed};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("hermes-plugins-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let findings = if choice % 2 == 0 {
        let path = dir.join("weather.yaml");
        std::fs::write(&path, text).expect("write the entry");
        let (_, findings) = entry::load(&path);
        findings
    } else {
        let path = dir.join("removed.yaml");
        std::fs::write(&path, text).expect("write removed.yaml");
        let (_, findings) = removed::load(&path);
        findings
    };
    positions::check_findings(&findings, |_| Some(text));
});
