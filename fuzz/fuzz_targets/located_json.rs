//! The located JSON parser on arbitrary text: it returns or refuses (never panics, within
//! its limits), and every position it reports lies inside the input.
#![no_main]

#[path = "positions.rs"]
mod positions;

use hermes_plugins::located::{Limits, json};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let limits = Limits {
        max_depth: 64,
        max_nodes: 100_000,
    };
    positions::check(text, &json::parse(text, limits));
});
