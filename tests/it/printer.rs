//! The printer: `--quiet`, `--color` and `NO_COLOR` decided once, for every command alike.

use crate::common::{bin, fixture, run};

const INFO_FIXTURE: &str = "python/dynamic-tool-name";

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
    assert!(
        loud.stdout.contains("info[declared-tools]"),
        "{}",
        loud.stdout
    );
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

/// Every command and subcommand, as `hermes-plugins-<path>` page names.
fn page_names(command: &clap::Command, name: &str, out: &mut Vec<String>) {
    out.push(name.to_string());
    for sub in command.get_subcommands().filter(|c| c.get_name() != "help") {
        page_names(sub, &format!("{name}-{}", sub.get_name()), out);
    }
}

/// `man --out DIR` writes a page for every command (as the command-line definition has
/// them), each of which groff formats without a warning; `man catalog review` prints that
/// command's page; an unknown command is a usage error.
#[test]
fn manual_pages_for_every_command() {
    use clap::CommandFactory;
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["man", "--out", dir.path().to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut expected = Vec::new();
    page_names(
        &hermes_plugins::cli::Cli::command(),
        "hermes-plugins",
        &mut expected,
    );
    expected.sort();
    let mut written: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .trim_end_matches(".1")
                .to_string()
        })
        .collect();
    written.sort();
    assert_eq!(written, expected);
    assert!(written.contains(&"hermes-plugins-catalog-review".to_string()));
    if std::process::Command::new("groff")
        .arg("--version")
        .output()
        .is_ok()
    {
        for name in &written {
            let page = dir.path().join(format!("{name}.1"));
            let formatted = std::process::Command::new("groff")
                .args(["-man", "-Tutf8", "-ww"])
                .arg(&page)
                .output()
                .unwrap();
            // Bold and underline come as overstrikes (`N\bN`): keep the last of each.
            let mut text = String::new();
            for c in String::from_utf8_lossy(&formatted.stdout).chars() {
                if c == '\u{8}' {
                    text.pop();
                } else {
                    text.push(c);
                }
            }
            assert!(formatted.status.success(), "{name}");
            assert!(
                formatted.stderr.is_empty(),
                "{name}: {}",
                String::from_utf8_lossy(&formatted.stderr)
            );
            assert!(
                text.contains("NAME") && text.contains(name.as_str()),
                "{name}: {text}"
            );
        }
    } else {
        eprintln!("groff is not installed: the pages' formatting is not checked");
    }

    let page = run(&["man", "catalog", "review"]);
    assert_eq!(page.code, 0, "{}", page.stderr);
    assert!(
        page.stdout.starts_with(".ie \\n(.g .ds Aq") || page.stdout.contains(".TH"),
        "{}",
        page.stdout
    );
    assert!(
        page.stdout.contains("hermes\\-plugins\\-catalog\\-review") && page.stdout.contains("base"),
        "{}",
        page.stdout
    );
    let bad = run(&["man", "catalog", "nope"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("nope"), "{}", bad.stderr);
    // `--json` promises one JSON document: roff, shell scripts, a program's own output and
    // another report format refuse it.
    for args in [
        &["--json", "man"][..],
        &["--json", "completions", "bash"][..],
        &["--json", "exec", "--", "true"][..],
        &[
            "--json",
            "validate",
            "--format",
            "sarif",
            "fixtures/plugins",
        ][..],
    ] {
        let refused = run(args);
        assert_eq!(refused.code, 2, "{args:?}: {}", refused.stdout);
        let doc: serde_json::Value = serde_json::from_str(&refused.stdout).unwrap();
        assert!(
            doc["error"]["message"].as_str().unwrap().contains("--json"),
            "{doc:#}"
        );
    }
}

/// Dynamic completion: `COMPLETE=bash hermes-plugins` prints the registration; sourced in a
/// real bash, TAB after `enable` offers the installed plugins' names (from `HERMES_HOME`),
/// filtered by what was typed, and options still complete.
#[test]
fn completion_offers_the_installed_plugins() {
    use crate::common::world::{World, file_url, git_plugin};
    let w = World::new();
    for name in ["weather", "news"] {
        let repo = w.tmp.path().join(name);
        git_plugin(&repo, None, name, "1.0.0", &[]);
        w.ok(&["install", &file_url(&repo)]);
    }
    let registration = w.cmd(&[]).env("COMPLETE", "bash").output().unwrap();
    assert!(registration.status.success());
    let script = w.tmp.path().join("complete.bash");
    std::fs::write(&script, &registration.stdout).unwrap();
    let complete_in = |home: &std::path::Path, words: &[&str]| {
        let line = words.join(" ");
        let current = words.last().unwrap();
        let previous = words[words.len() - 2];
        let program = format!(
            "source {}; COMP_WORDS=({line}); COMP_CWORD={}; COMP_TYPE=9; _clap_complete_hermes_plugins hermes-plugins '{current}' '{previous}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display(),
            words.len() - 1
        );
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(program)
            .env("HERMES_HOME", home)
            .output()
            .unwrap();
        let mut got: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .split(['\n', '\u{b}'])
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        got.sort();
        got
    };
    let complete = |words: &[&str]| complete_in(&w.home, words);
    assert_eq!(complete(&["hermes-plugins", "enable", "we"]), ["weather"]);
    // A `--home` on the line wins over HERMES_HOME, as when the line runs.
    let elsewhere = w.tmp.path().join("empty-home");
    std::fs::create_dir_all(&elsewhere).unwrap();
    assert!(complete_in(&elsewhere, &["hermes-plugins", "enable", "we"]).is_empty());
    let home = w.home.display().to_string();
    assert_eq!(
        complete_in(
            &elsewhere,
            &["hermes-plugins", "--home", &home, "enable", "we"]
        ),
        ["weather"]
    );
    assert_eq!(
        complete_in(
            &elsewhere,
            &["hermes-plugins", &format!("--home={home}"), "enable", "we"]
        ),
        ["weather"]
    );
    // Nothing typed: every installed plugin (and the options).
    let all: Vec<String> = complete(&["hermes-plugins", "remove", "''"])
        .into_iter()
        .filter(|c| !c.starts_with('-'))
        .collect();
    assert_eq!(all, ["news", "weather"]);
    assert_eq!(
        complete(&["hermes-plugins", "update", "weather", "n"]),
        ["news"]
    );
    assert!(complete(&["hermes-plugins", "enable", "--yes-d"]).contains(&"--yes-deps".to_string()));
}

/// Every command ends quietly when its reader closes stdout early (`… | head -1`), as
/// ripgrep and uv do: no panic, no backtrace, its own exit status. The pipe's read end is
/// closed before the command starts, so every write it makes meets `EPIPE`.
#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let home = tempfile::tempdir().unwrap();
    let home_arg = home.path().to_str().unwrap();
    let plugins = fixture("plugins");
    let plugins = plugins.to_str().unwrap();
    let catalog = crate::common::repo().join("fixtures/catalog/good");
    let catalog = catalog.to_str().unwrap();
    let cases: Vec<(Vec<&str>, i32)> = vec![
        (vec!["--help"], 0),
        (vec!["--version"], 0),
        (vec!["completions", "bash"], 0),
        (vec!["completions", "zsh"], 0),
        (vec!["man"], 0),
        (vec!["validate", plugins], 0),
        (vec!["validate", "--format", "json", plugins], 0),
        (vec!["validate", "--format", "sarif", plugins], 0),
        (vec!["search", "weather", "--catalog", catalog], 0),
        (vec!["--json", "search", "weather", "--catalog", catalog], 0),
        (vec!["catalog", "check", catalog], 0),
        (vec!["--home", home_arg, "list"], 0),
        (vec!["--home", home_arg, "--json", "env"], 1),
        (vec!["--home", home_arg, "generations", "list"], 0),
        // A failure keeps its own status: the error document is dropped, the message is not.
        (vec!["--json", "validate", "/nonexistent/plugin"], 2),
        (vec!["--json", "no-such-command"], 2),
    ];
    #[allow(deprecated)]
    let exe = assert_cmd::cargo::cargo_bin("hermes-plugins");
    for (args, expected) in cases {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = std::process::Command::new(&exe)
            .args(&args)
            .current_dir(crate::common::repo())
            .env("HERMES_PLUGINS_NO_CORE", "1")
            .env_remove("HERMES_HOME")
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{args:?}: {stderr}"
        );
        assert_eq!(out.status.code(), Some(expected), "{args:?}: {stderr}");
    }
}
