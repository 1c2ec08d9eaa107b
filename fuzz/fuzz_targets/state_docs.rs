//! The readers of what the manager writes and the agent trusts — `generation.json` (with its
//! lock) and `installed.json` — on arbitrary text: they refuse or read, never panic, and what
//! they read writes back to a document that reads as the same value.
#![no_main]

use hermes_plugins::generation::doc::GenerationDoc;
use hermes_plugins::resolve::lock::Lock;
use hermes_plugins::state::installed::Installed;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("hermes-plugins-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    match choice % 3 {
        0 => {
            let path = dir.join("generation.json");
            std::fs::write(&path, rest).expect("write generation.json");
            let Ok(doc) = GenerationDoc::read(&dir) else {
                return;
            };
            std::fs::write(&path, doc.to_json()).expect("write generation.json");
            let again = GenerationDoc::read(&dir).expect("what was read reads back");
            assert_eq!(doc, again);
        }
        1 => {
            let path = dir.join("installed.json");
            std::fs::write(&path, rest).expect("write installed.json");
            let Ok(installed) = Installed::read(&path) else {
                return;
            };
            std::fs::write(&path, installed.to_json()).expect("write installed.json");
            let again = Installed::read(&path).expect("what was read reads back");
            assert_eq!(installed, again);
        }
        _ => {
            let Ok(lock) = serde_json::from_slice::<Lock>(rest) else {
                return;
            };
            let again: Lock = serde_json::from_str(&lock.to_json()).expect("the lock reads back");
            assert_eq!(lock, again);
        }
    }
});
