//! Asking a Python interpreter a question: `python -I -c SCRIPT ARGS…`, one JSON value read
//! from its stdout. Isolated (`-I`: no `PYTHONPATH`, no user site, no script directory), so
//! the answer is the interpreter's own environment. The one way the package manager learns
//! something from an interpreter it does not run through uv (an installed Hermes's
//! distributions, its site-packages, what it can import).

use std::ffi::OsStr;
use std::path::Path;

/// Python (standard library only) defining `hermes_version()`: the Hermes release an
/// interpreter runs, found as Hermes itself finds it (the install stamp, then a checkout's
/// tags, then the distribution's version). Prepended to every script that asks an installed
/// Hermes which release it is, so they all answer alike.
pub const HERMES_VERSION: &str = include_str!("hermes_version.py");

/// Runs `script` in `python` with `args` and parses what it prints as JSON. The error says
/// why, for people: the interpreter could not be started, or it printed no JSON (with its
/// stderr, where Python's own error is).
pub fn ask<T: serde::de::DeserializeOwned>(
    python: &Path,
    script: &str,
    args: &[&OsStr],
) -> Result<T, String> {
    let out = std::process::Command::new(python)
        .args(["-I", "-c", script])
        .args(args)
        .output()
        .map_err(|e| format!("cannot run it: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).map_err(|e| {
        format!(
            "it did not answer ({e}): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )
    })
}

#[cfg(all(test, unix))] // a python3 on PATH
mod tests {
    use super::ask;
    use std::path::Path;

    #[test]
    fn answers_and_failures() {
        let python = Path::new("python3");
        let n: Vec<String> = ask(
            python,
            "import json, sys; print(json.dumps(sys.argv[1:]))",
            &["a".as_ref(), "b".as_ref()],
        )
        .unwrap();
        assert_eq!(n, ["a", "b"]);
        let e = ask::<u32>(python, "raise SystemExit('no answer')", &[]).unwrap_err();
        assert!(e.contains("no answer"), "{e}");
        let e = ask::<u32>(Path::new("/nonexistent/python"), "", &[]).unwrap_err();
        assert!(e.contains("cannot run it"), "{e}");
    }
}
