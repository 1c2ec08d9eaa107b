//! Named fault-injection points for crash-safety tests: when `HERMES_PLUGINS_FAULT` names a
//! point, the process aborts there (SIGABRT: no destructors, no cleanup — as a crash would).

/// Every point, in the order a publication passes them.
pub const POINTS: &[&str] = &[
    "after-journal",
    "after-venv",
    "after-install",
    "after-plugins",
    "after-fsync",
    "after-rename",
    "after-config",
    "after-switch",
];

/// Aborts the process if `HERMES_PLUGINS_FAULT` names `point`.
pub fn point(point: &str) {
    if std::env::var("HERMES_PLUGINS_FAULT").is_ok_and(|v| v == point) {
        eprintln!("hermes-plugins: fault injected at {point}; aborting");
        std::process::abort();
    }
}
