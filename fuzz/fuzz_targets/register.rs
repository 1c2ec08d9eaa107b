//! One `__init__.py` through the analysis of `register(ctx)` — the ctx-call binder that finds
//! registrations (direct calls, names bound to ctx methods, `getattr(ctx, …)(…)`, closures,
//! partials, computed callees) and the security scan: it finishes (libFuzzer's `-timeout`),
//! never panics, and every finding lies inside the file.
#![no_main]

#[path = "positions.rs"]
mod positions;
#[path = "tree.rs"]
mod tree;

use hermes_plugins::check::{self, Context};
use hermes_plugins::package::{self, fields::Mode};
use libfuzzer_sys::fuzz_target;

const MANIFEST: &str = "name: p\nversion: \"1\"\ndescription: d\nprovides_tools: [t]\n";

fuzz_target!(|data: &[u8]| {
    let Ok(code) = std::str::from_utf8(data) else {
        return;
    };
    let input = format!("#%% plugin.yaml\n{MANIFEST}#%% __init__.py\n{code}");
    let tree = tree::write(&input, "plugin.yaml");
    let Ok(loaded) = package::load_dir(&tree.dir, Mode::Validate) else {
        return;
    };
    let outcome = check::run(&loaded, &Context::default()).expect("no probe, no failure");
    positions::check_findings(&outcome.findings, |file| tree.text(file));
});
