//! The integration tests, in one binary so the uv crates are linked once (cargo's
//! `tests/testsuite`, uv's `tests/it`). One module per area; shared harness in
//! `tests/common` (also used by `tests/hostile`, which CI runs again against the release
//! binary). Filter by module: `cargo test --test it -- consent::`.
//!
//! Unix only: the worlds these tests build (real Hermes venvs from
//! `make-hermes-venv.sh`, `bin/python`, symlinked trees, `exec`) are Unix ones; on Windows CI
//! runs the library's tests and the fixtures' report (docs/release.md, "Windows").
#![cfg(unix)]

#[path = "../common/mod.rs"]
mod common;

mod catalog_check;
mod catalog_tools;
mod consent;
mod crash;
mod disk;
mod docs_walk;
mod generations;
mod load;
mod network;
mod nix;
mod pack;
mod printer;
mod probe;
mod properties;
mod pypi;
mod python_checks;
mod resolve;
mod resolve_engine;
mod sbom;
mod schemas;
mod snapshots;
mod uv_parity;
mod validate_native;
mod validate_portable;
