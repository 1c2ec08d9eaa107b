//! The printer: `--quiet`, `--color` and `NO_COLOR` decided once, for every command alike.

use crate::common::{bin, fixture, run};

const INFO_FIXTURE: &str = "ctx-calls/main-only-api";

fn stdout_of(cmd: &mut assert_cmd::Command) -> String {
    let out = cmd.output().expect("runs");
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

#[test]
fn quiet_drops_notes_and_informational_findings_but_keeps_results() {
    let home = tempfile::tempdir().unwrap();
    let home_arg = home.path().to_str().unwrap();
    let loud = run(&["--home", home_arg, "exec", "--", "true"]);
    assert_eq!(loud.code, 0, "{}", loud.stderr);
    assert!(
        loud.stderr.contains("note: no generation is published"),
        "{}",
        loud.stderr
    );
    let quiet = run(&["--home", home_arg, "-q", "exec", "--", "true"]);
    assert_eq!(quiet.code, 0, "{}", quiet.stderr);
    assert_eq!(quiet.stderr, "", "--quiet printed notes");

    let path = fixture(INFO_FIXTURE);
    let path = path.to_str().unwrap();
    let loud = run(&["validate", path]);
    assert!(loud.stdout.contains("info[ctx-call]"), "{}", loud.stdout);
    let quiet = run(&["validate", "--quiet", path]);
    assert_eq!(quiet.code, 0);
    assert!(!quiet.stdout.contains("info["), "{}", quiet.stdout);
    assert!(
        quiet.stdout.contains("ok: 1 package(s)"),
        "{}",
        quiet.stdout
    );

    // What was written where is a status line: -q drops it, the file is still written.
    let out = home.path().join("nix.lock.json");
    let loud = run(&[
        "--home",
        home_arg,
        "nix",
        "lock",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(loud.code, 0, "{}", loud.stderr);
    assert!(loud.stderr.contains("wrote "), "{}", loud.stderr);
    std::fs::remove_file(&out).unwrap();
    let quiet = run(&[
        "--home",
        home_arg,
        "-q",
        "nix",
        "lock",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(quiet.code, 0, "{}", quiet.stderr);
    assert_eq!(quiet.stderr, "");
    assert!(out.is_file());
}

#[test]
fn colour_is_decided_once_from_the_flag_and_no_color() {
    let path = fixture(INFO_FIXTURE);
    // `bin()` sets NO_COLOR and stdout is a pipe: auto means none, always wins over both.
    let auto = stdout_of(bin().args(["validate", path.to_str().unwrap()]));
    assert!(!auto.contains('\u{1b}'), "{auto}");
    let always = stdout_of(bin().args(["validate", "--color", "always", path.to_str().unwrap()]));
    assert!(always.contains("\u{1b}["), "{always}");
    let never = stdout_of(bin().env_remove("NO_COLOR").args([
        "validate",
        "--color",
        "never",
        path.to_str().unwrap(),
    ]));
    assert!(!never.contains('\u{1b}'), "{never}");
    // JSON is never coloured, whatever the flag says.
    let json = stdout_of(bin().args([
        "validate",
        "--json",
        "--color",
        "always",
        path.to_str().unwrap(),
    ]));
    assert!(!json.contains('\u{1b}'), "{json}");
    serde_json::from_str::<serde_json::Value>(&json).expect("one JSON document");
}
