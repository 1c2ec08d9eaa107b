//! A whole plugin directory through the loader and every static check `validate` runs
//! (plugin.yaml v1/v2, plugin.json, mcp.json, skills/*/SKILL.md, pyproject.toml, the Python
//! analysis — no probe): it finishes (libFuzzer's `-timeout` is the time bound; `fuzz/run.sh`
//! sets 10 s), never panics, and every finding about a file lies inside that file's text.
#![no_main]

#[path = "positions.rs"]
mod positions;
#[path = "tree.rs"]
mod tree;

use hermes_plugins::check::{self, Context};
use hermes_plugins::package::{self, fields::Mode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let tree = tree::write(input, "plugin.yaml");
    let Ok(loaded) = package::load_dir(&tree.dir, Mode::Validate) else {
        return;
    };
    let outcome = check::run(&loaded, &Context::default()).expect("no probe, no failure");
    positions::check_findings(&outcome.findings, |file| tree.text(file));
});
