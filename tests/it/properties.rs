//! Property tests on stable against reference implementations (issue 17), each over seeded
//! random inputs (the seed and case are printed with a failure; `HERMES_PLUGINS_PROPERTY_CASES`
//! sets how many, default 200):
//!
//! - the surgical `config.yaml` editor either refuses or yields a document that PyYAML (what
//!   Hermes reads config.yaml with) parses to exactly the intended selection, every other key
//!   equal and every comment kept;
//! - the `.env` writer's values read back verbatim through our reader (`env_file::values`,
//!   python-dotenv's interpolation included) and through python-dotenv itself (what Hermes
//!   reads `.env` with), other bindings untouched;
//! - our NAR hash equals `nix-hash` on random trees.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use common::synthetic::Rng;
use hermes_plugins::state::config_edit;
use serde_json::{Value, json};

fn cases() -> u64 {
    std::env::var("HERMES_PLUGINS_PROPERTY_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

fn pick<'a>(rng: &mut Rng, from: &[&'a str]) -> &'a str {
    from[rng.below(from.len() as u64) as usize]
}

const NAMES: &[&str] = &["news", "weather", "tool-2", "x_y", "cat/plug"];

/// A name as YAML may write it.
fn written(rng: &mut Rng, name: &str) -> String {
    match rng.below(3) {
        0 => format!("\"{name}\""),
        1 => format!("'{name}'"),
        _ => name.to_string(),
    }
}

/// A random list of names in one of the styles people write.
fn list(rng: &mut Rng, key: &str, indent: &str, nl: &str) -> String {
    let mut names: Vec<&str> = NAMES.iter().copied().filter(|_| rng.chance(40)).collect();
    names.dedup();
    let items: Vec<String> = names.iter().map(|n| written(rng, n)).collect();
    match rng.below(5) {
        0 => format!("{indent}{key}: [{}]{nl}", items.join(", ")),
        1 if items.is_empty() => format!("{indent}{key}:{nl}"),
        1 | 2 => {
            let dash = if rng.chance(50) {
                indent.to_string()
            } else {
                format!("{indent}  ")
            };
            let mut out = format!("{indent}{key}:{nl}");
            for item in &items {
                out.push_str(&format!("{dash}- {item}"));
                if rng.chance(20) {
                    out.push_str("  # why");
                }
                out.push_str(nl);
                if rng.chance(15) {
                    out.push_str(&format!("{dash}# a note between items{nl}"));
                }
            }
            out
        }
        3 => format!("{indent}{key}: []{nl}"),
        _ => format!("{indent}{key}:   # nothing yet{nl}"),
    }
}

/// A random config.yaml: comments, other keys, and a `plugins` section in some shape.
fn document(rng: &mut Rng) -> String {
    let nl = if rng.chance(15) { "\r\n" } else { "\n" };
    let mut out = String::new();
    if rng.chance(30) {
        out.push_str(&format!("# Hermes configuration{nl}"));
    }
    let others = [
        format!("model:{nl}  default: anthropic/claude-sonnet-4  # main{nl}"),
        format!("toolsets: [web, terminal]{nl}"),
        format!("display:{nl}  skin: default{nl}  compact: true{nl}"),
        format!("memory_enabled: false{nl}"),
    ];
    let mut sections: Vec<String> = others.iter().filter(|_| rng.chance(50)).cloned().collect();
    let plugins = match rng.below(6) {
        0 => None,
        1 => Some(format!("plugins:{nl}")),
        2 => Some(format!("plugins: {{}}{nl}")),
        _ => {
            let indent = pick(rng, &["  ", "    "]);
            let mut p = format!("plugins:{nl}");
            if rng.chance(85) {
                p.push_str(&list(rng, "enabled", indent, nl));
            }
            if rng.chance(20) {
                p.push_str(&format!("{indent}# the ones to keep off{nl}"));
            }
            if rng.chance(60) {
                p.push_str(&list(rng, "disabled", indent, nl));
            }
            if rng.chance(15) {
                p.push_str(&format!("{indent}auto_update: true{nl}"));
            }
            Some(p)
        }
    };
    if let Some(p) = plugins {
        let at = rng.below(sections.len() as u64 + 1) as usize;
        sections.insert(at, p);
    }
    for s in sections {
        out.push_str(&s);
        if rng.chance(20) {
            out.push_str(nl);
        }
    }
    out
}

/// `enable`, `disable` or `forget` of a name: the selection it must leave.
#[derive(Debug, Clone, Copy)]
enum Op {
    Enable,
    Disable,
    Forget,
}

#[test]
fn the_config_editor_changes_exactly_the_selection_as_pyyaml_reads_it() {
    let Some(python) = common::hermes_python() else {
        eprintln!("no Hermes venv (HERMES_PLUGINS_HERMES_PYTHON): skipping the PyYAML comparison");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(0xc0f1_6001);
    let mut cases_json = Vec::new();
    let mut refused = 0;
    for case in 0..cases() {
        let before = document(&mut rng);
        let name = pick(&mut rng, NAMES);
        let op = [Op::Enable, Op::Disable, Op::Forget][rng.below(3) as usize];
        let result = match op {
            Op::Enable => config_edit::enable(&before, name),
            Op::Disable => config_edit::disable(&before, name),
            Op::Forget => config_edit::forget(&before, name),
        };
        let after = match result {
            Ok(after) => after,
            Err(e) => {
                assert!(!e.to_string().is_empty(), "case {case}");
                refused += 1;
                continue;
            }
        };
        // Every comment line of the original survives (only list lines are rewritten).
        for line in before.lines().filter(|l| l.trim_start().starts_with('#')) {
            assert!(
                after.contains(line),
                "case {case} ({op:?} {name}) lost `{line}`:\n{before}\n---\n{after}"
            );
        }
        let b = tmp.path().join(format!("{case}-before.yaml"));
        let a = tmp.path().join(format!("{case}-after.yaml"));
        std::fs::write(&b, &before).unwrap();
        std::fs::write(&a, &after).unwrap();
        cases_json.push(
            json!({"case": case, "before": b, "after": a, "op": format!("{op:?}"), "name": name}),
        );
    }
    let manifest = tmp.path().join("cases.json");
    std::fs::write(&manifest, Value::Array(cases_json.clone()).to_string()).unwrap();
    let out = Command::new(&python)
        .arg("-c")
        .arg(PYYAML_CHECK)
        .arg(&manifest)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&common::succeeded(out)).unwrap();
    let problems = report["problems"].as_array().unwrap();
    assert!(
        problems.is_empty(),
        "{} of {} edits disagree with PyYAML:\n{:#}",
        problems.len(),
        cases_json.len(),
        Value::Array(problems.clone())
    );
    eprintln!(
        "config editor: {} edits checked with PyYAML, {refused} refused",
        cases_json.len()
    );
    assert!(
        cases_json.len() as u64 > cases() / 2,
        "most documents must be editable"
    );
}

/// For each case: PyYAML's view of before and after; the named plugin where the operation
/// puts it, every other name where it was, every other key equal.
const PYYAML_CHECK: &str = r#"
import json, sys, yaml
problems = []
def lists(doc):
    plugins = (doc or {}).get("plugins") or {}
    return set(plugins.get("enabled") or []), set(plugins.get("disabled") or [])
def rest(doc):
    doc = dict(doc or {})
    plugins = dict(doc.pop("plugins", None) or {})
    plugins.pop("enabled", None); plugins.pop("disabled", None)
    return doc, plugins
for case in json.load(open(sys.argv[1])):
    before = yaml.safe_load(open(case["before"], encoding="utf-8"))
    after = yaml.safe_load(open(case["after"], encoding="utf-8"))
    name, op = case["name"], case["op"]
    (be, bd), (ae, ad) = lists(before), lists(after)
    want_e = (be | {name}) if op == "Enable" else (be - {name})
    want_d = (bd | {name}) if op == "Disable" else (bd - {name})
    if (ae, ad) != (want_e, want_d) or rest(before) != rest(after):
        problems.append({"case": case["case"], "op": op, "name": name,
                         "before": open(case["before"]).read(), "after": open(case["after"]).read()})
print(json.dumps({"problems": problems}))
"#;

/// A random value: printable text with what dotenv treats specially.
fn env_value(rng: &mut Rng) -> String {
    let pieces = [
        "a",
        "Z",
        "0",
        " ",
        "  ",
        "\"",
        "'",
        "\\",
        "\\n",
        "$",
        "${X}",
        "$X",
        "#",
        " # not a comment",
        "=",
        "\n",
        "\t",
        "é",
        "✓",
        "`",
        "{",
        "}",
        "\\\\",
        "${",
        "\r\n",
    ];
    let n = rng.below(8);
    (0..n).map(|_| pick(rng, &pieces)).collect()
}

#[test]
fn env_values_read_back_verbatim_through_our_reader_and_python_dotenv() {
    use hermes_plugins::consent::env_file;
    let mut rng = Rng::new(0xe0_0e57);
    let tmp = tempfile::tempdir().unwrap();
    let mut expected = Vec::new();
    let mut text = String::from("# kept\nEXISTING=untouched\nexport SHELLISH='single quoted'\n");
    for case in 0..cases() {
        let key = format!("K{}", rng.below(40));
        let value = env_value(&mut rng);
        let next = env_file::set(&text, &key, &value)
            .unwrap_or_else(|e| panic!("case {case}: {key}={value:?}: {e}"));
        let read = env_file::values(&next, &|_| None);
        assert_eq!(
            read.get(&key),
            Some(&value),
            "case {case}: {key}={value:?}\n{next}"
        );
        assert_eq!(
            read.get("EXISTING").map(String::as_str),
            Some("untouched"),
            "case {case}"
        );
        assert!(next.starts_with("# kept\n"), "case {case}");
        text = next;
        expected.retain(|(k, _): &(String, String)| k != &key);
        expected.push((key, value));
    }
    let path = tmp.path().join(".env");
    std::fs::write(&path, &text).unwrap();
    // As Hermes loads it (load_dotenv, override=True) and as dotenv_values reads it.
    let Some((values, loaded)) = crate::consent::read_by_python_dotenv(&path) else {
        return;
    };
    for (key, value) in &expected {
        for (how, read) in [("dotenv_values", &values), ("load_dotenv", &loaded)] {
            assert_eq!(
                read[key].as_str(),
                Some(value.as_str()),
                "python-dotenv's {how} reads {key} differently; file:\n{text}"
            );
        }
    }
    assert_eq!(values["EXISTING"], "untouched");
    eprintln!(
        ".env: {} keys written {} times, all read back by python-dotenv",
        expected.len(),
        cases()
    );
}

/// A random tree of files (random bytes, some executable), symlinks, empty and nested
/// directories, odd names.
fn random_tree(rng: &mut Rng, root: &Path, depth: u32) {
    use std::os::unix::fs::{PermissionsExt, symlink};
    std::fs::create_dir_all(root).unwrap();
    let names = ["a", "B", "_c", "d e", "ü", "x.py", "-dash", "..dots", "Z9"];
    let mut used = BTreeSet::new();
    for _ in 0..rng.below(6) {
        let name = pick(rng, &names);
        if !used.insert(name) {
            continue;
        }
        let path = root.join(name);
        match rng.below(5) {
            0 if depth < 3 => random_tree(rng, &path, depth + 1),
            1 => symlink(pick(rng, &names), &path).unwrap(),
            2 => std::fs::create_dir_all(&path).unwrap(),
            _ => {
                let len = rng.below(300) as usize;
                let bytes: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
                std::fs::write(&path, bytes).unwrap();
                if rng.chance(30) {
                    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                        .unwrap();
                }
            }
        }
    }
}

#[test]
fn nar_hashes_equal_nix_hash_on_random_trees() {
    let Some(nix_hash) = crate::nix::nix_tool("nix-hash") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(0x4a5_0001);
    let trees = (cases() / 8).max(5);
    for case in 0..trees {
        let root = tmp.path().join(format!("tree-{case}"));
        random_tree(&mut rng, &root, 0);
        let theirs = Command::new(&nix_hash)
            .args(["--type", "sha256", "--base32"])
            .arg(&root)
            .output()
            .unwrap();
        let theirs = String::from_utf8(common::succeeded(theirs)).unwrap();
        let ours = hermes_plugins::nix::hash_path_base32(&root).unwrap();
        assert_eq!(ours, theirs.trim(), "tree {case} (seed 0x4a5_0001)");
    }
    eprintln!("NAR: {trees} random trees equal nix-hash");
}
