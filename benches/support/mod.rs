//! What the benches share.

use std::path::PathBuf;
use std::process::Command;

/// The real interpreter behind `python3` (not a wrapper script), asked once: what both
/// hermes-plugins and uv are given, so they build for the same Python.
pub fn python() -> PathBuf {
    static PYTHON: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let out = Command::new("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .expect("python3 runs");
            PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
        })
        .clone()
}
