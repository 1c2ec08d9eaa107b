//! Tests of the `plugins.entries` edits.

use serde_json::json;

use super::*;
use crate::state::config_edit::{disable, enable};

const SAMPLE: &str = "# settings
model: gpt-x
plugins:
  enabled: [weather]
  entries:
    weather:                       # comments kept
      granted_capabilities:
        - tools.override
      # about consent
      capabilities_consent:
        hash: 3f2a9c
        granted_at: \"2026-11-30T10:00:00Z\"
      allow_tool_override: true    # trailing
      llm:
        allow_model_override: true
    news:
      allow_tool_override: false
other: 1
";

fn b(v: bool) -> EntryValue {
    EntryValue::Bool(v)
}

fn s(v: &str) -> EntryValue {
    EntryValue::Str(v.to_string())
}

fn list(items: &[&str]) -> EntryValue {
    EntryValue::List(items.iter().map(|i| (*i).to_string()).collect())
}

fn map(entries: &[(&str, EntryValue)]) -> EntryValue {
    EntryValue::Map(
        entries
            .iter()
            .map(|(k, v)| ((*k).to_string(), v.clone()))
            .collect(),
    )
}

fn consent() -> EntryValue {
    map(&[
        ("hash", s("3f2a9c")),
        ("granted_at", s("2026-11-30T10:00:00Z")),
    ])
}

/// Sets, checks the value reads back, and checks setting again changes nothing.
fn set(text: &str, id: &str, path: &[&str], value: &EntryValue) -> String {
    let out = set_entry(text, id, path, value).unwrap();
    assert_eq!(
        read_entry(&out, id, path).unwrap(),
        Some(value.json()),
        "{out}"
    );
    assert_eq!(set_entry(&out, id, path, value).unwrap(), out, "idempotent");
    out
}

/// Removes, checks the value is gone, and checks removing again changes nothing.
fn remove(text: &str, id: &str, path: &[&str]) -> String {
    let out = remove_entry(text, id, path).unwrap();
    assert_eq!(read_entry(&out, id, path).unwrap(), None, "{out}");
    assert_eq!(remove_entry(&out, id, path).unwrap(), out, "idempotent");
    out
}

// --- creating plugins, entries and the entry ---------------------------------------------

#[test]
fn new_entry_in_a_file_without_plugins() {
    let path = ["allow_tool_override"];
    let expected =
        "model: gpt-x\nplugins:\n  entries:\n    weather:\n      allow_tool_override: true\n";
    assert_eq!(set("model: gpt-x\n", "weather", &path, &b(true)), expected);
    assert_eq!(set("model: gpt-x", "weather", &path, &b(true)), expected);
    assert_eq!(
        set("", "weather", &path, &b(true)),
        "plugins:\n  entries:\n    weather:\n      allow_tool_override: true\n"
    );
    assert_eq!(
        set("# only a comment\n", "weather", &path, &b(false)),
        "# only a comment\nplugins:\n  entries:\n    weather:\n      allow_tool_override: false\n"
    );
    assert_eq!(
        set("---\nx: 1\n...\n", "weather", &path, &b(true)),
        "---\nx: 1\nplugins:\n  entries:\n    weather:\n      allow_tool_override: true\n...\n"
    );
}

#[test]
fn new_entry_in_plugins_without_entries() {
    let text = "plugins:\n  enabled: [weather]\n  # end of plugins\nother: 1\n";
    assert_eq!(
        set(text, "weather", &["allow_tool_override"], &b(true)),
        "plugins:\n  enabled: [weather]\n  entries:\n    weather:\n      allow_tool_override: true\n  # end of plugins\nother: 1\n"
    );
    // A null `plugins:` (with a comment) and a null `entries:`.
    assert_eq!(
        set(
            "plugins: ~  # later\nother: 1\n",
            "weather",
            &["x"],
            &b(true)
        ),
        "plugins:  # later\n  entries:\n    weather:\n      x: true\nother: 1\n"
    );
    assert_eq!(
        set(
            "plugins:\n  entries:\nother: 1\n",
            "weather",
            &["x"],
            &b(true)
        ),
        "plugins:\n  entries:\n    weather:\n      x: true\nother: 1\n"
    );
    // An empty `{}` becomes a block mapping.
    assert_eq!(
        set(
            "plugins:\n  entries: {}  # none\n",
            "weather",
            &["x"],
            &b(true)
        ),
        "plugins:\n  entries:  # none\n    weather:\n      x: true\n"
    );
    assert_eq!(
        set(
            "plugins:\n  entries:\n    weather: {}\n",
            "weather",
            &["x"],
            &b(true)
        ),
        "plugins:\n  entries:\n    weather:\n      x: true\n"
    );
}

#[test]
fn new_entry_after_the_last_one() {
    let out = set(SAMPLE, "calendar", &["allow_tool_override"], &b(true));
    assert_eq!(
        out,
        SAMPLE.replace(
            "      allow_tool_override: false\n",
            "      allow_tool_override: false\n    calendar:\n      allow_tool_override: true\n"
        )
    );
}

// --- adding and replacing keys of an existing entry ---------------------------------------

#[test]
fn key_added_to_an_entry_with_comments() {
    let out = set(SAMPLE, "weather", &["timeout"], &s("30s"));
    assert_eq!(
        out,
        SAMPLE.replace(
            "        allow_model_override: true\n",
            "        allow_model_override: true\n      timeout: 30s\n"
        )
    );
}

#[test]
fn scalar_replaced_keeping_its_trailing_comment() {
    let out = set(SAMPLE, "weather", &["allow_tool_override"], &b(false));
    assert_eq!(
        out,
        SAMPLE.replace(
            "      allow_tool_override: true    # trailing\n",
            "      allow_tool_override: false    # trailing\n"
        )
    );
    let out = set(SAMPLE, "weather", &["allow_tool_override"], &s("ask me"));
    assert_eq!(
        out,
        SAMPLE.replace(
            "      allow_tool_override: true    # trailing\n",
            "      allow_tool_override: \"ask me\"    # trailing\n"
        )
    );
    // Quoted, null and tagged scalars are replaced with their quotes and tags.
    let text = "plugins:\n  entries:\n    w:\n      a: 'x'  # q\n      b: ~\n      c: !!str yes\n      d:\n";
    let out = set(text, "w", &["a"], &s("y"));
    let out = set(&out, "w", &["b"], &b(true));
    let out = set(&out, "w", &["c"], &b(true));
    let out = set(&out, "w", &["d"], &s("z"));
    assert_eq!(
        out,
        "plugins:\n  entries:\n    w:\n      a: y  # q\n      b: true\n      c: true\n      d: z\n"
    );
}

#[test]
fn block_list_replaced_as_a_block() {
    let out = set(
        SAMPLE,
        "weather",
        &["granted_capabilities"],
        &list(&["net.fetch", "tools.override"]),
    );
    assert_eq!(
        out,
        SAMPLE.replace(
            "        - tools.override\n",
            "        - net.fetch\n        - tools.override\n"
        )
    );
    // An empty list is written `[]`; a non-empty one replacing `[]` is a block again.
    let out = set(SAMPLE, "weather", &["granted_capabilities"], &list(&[]));
    assert_eq!(
        out,
        SAMPLE.replace(
            "      granted_capabilities:\n        - tools.override\n",
            "      granted_capabilities: []\n"
        )
    );
    let again = set(&out, "weather", &["granted_capabilities"], &list(&["a"]));
    assert_eq!(
        again,
        SAMPLE.replace("        - tools.override\n", "        - a\n")
    );
    // The old block's dash style is kept.
    let text = "plugins:\n  entries:\n    w:\n      caps:\n      -   a\n      -   b\n      x: 1\n";
    assert_eq!(
        set(text, "w", &["caps"], &list(&["c"])),
        "plugins:\n  entries:\n    w:\n      caps:\n      -   c\n      x: 1\n"
    );
}

#[test]
fn block_mapping_replaced_by_a_scalar_and_back() {
    let out = set(SAMPLE, "weather", &["llm"], &b(false));
    assert_eq!(
        out,
        SAMPLE.replace(
            "      llm:\n        allow_model_override: true\n",
            "      llm: false\n"
        )
    );
    let back = set(
        &out,
        "weather",
        &["llm"],
        &map(&[("allow_model_override", b(true))]),
    );
    assert_eq!(back, SAMPLE);
}

#[test]
fn flow_values_are_rewritten_in_flow_style() {
    let text = "plugins:\n  entries:\n    weather:\n      granted_capabilities: [a, b]  # caps\n      llm: {x: true}\n";
    assert_eq!(
        set(
            text,
            "weather",
            &["granted_capabilities"],
            &list(&["a", "c d"])
        ),
        "plugins:\n  entries:\n    weather:\n      granted_capabilities: [a, \"c d\"]  # caps\n      llm: {x: true}\n"
    );
    assert_eq!(
        set(text, "weather", &["granted_capabilities"], &list(&[])),
        "plugins:\n  entries:\n    weather:\n      granted_capabilities: []  # caps\n      llm: {x: true}\n"
    );
    assert_eq!(
        set(text, "weather", &["granted_capabilities"], &b(true)),
        "plugins:\n  entries:\n    weather:\n      granted_capabilities: true  # caps\n      llm: {x: true}\n"
    );
    // A key added to a flow mapping, a value replaced inside one, the whole one replaced.
    assert_eq!(
        set(text, "weather", &["llm", "allow_model_override"], &b(true)),
        "plugins:\n  entries:\n    weather:\n      granted_capabilities: [a, b]  # caps\n      llm: {x: true, allow_model_override: true}\n"
    );
    assert_eq!(
        set(text, "weather", &["llm", "x"], &list(&["p", "q"])),
        "plugins:\n  entries:\n    weather:\n      granted_capabilities: [a, b]  # caps\n      llm: {x: [p, q]}\n"
    );
    assert_eq!(
        set(
            text,
            "weather",
            &["llm"],
            &map(&[("y", b(false)), ("z", map(&[("w", s("1"))]))])
        ),
        "plugins:\n  entries:\n    weather:\n      granted_capabilities: [a, b]  # caps\n      llm: {y: false, z: {w: \"1\"}}\n"
    );
    // A multi-line flow list, and one on the line after its key.
    let text =
        "plugins:\n  entries:\n    w:\n      caps: [\n        a,\n        b\n      ]\n      x: 1\n";
    assert_eq!(
        set(text, "w", &["caps"], &list(&["c"])),
        "plugins:\n  entries:\n    w:\n      caps: [c]\n      x: 1\n"
    );
    let text = "plugins:\n  entries:\n    w:\n      caps:\n        [a]\n";
    assert_eq!(
        set(text, "w", &["caps"], &list(&["c", "d"])),
        "plugins:\n  entries:\n    w:\n      caps:\n        [c, d]\n"
    );
    // Keys without a value, or without a `:`.
    let text = "plugins:\n  entries:\n    w: {a:, e, 'q': x}\n";
    assert_eq!(
        set(text, "w", &["a"], &b(true)),
        "plugins:\n  entries:\n    w: {a: true, e, 'q': x}\n"
    );
    assert_eq!(
        set(text, "w", &["e"], &list(&["x"])),
        "plugins:\n  entries:\n    w: {a:, e: [x], 'q': x}\n"
    );
    assert_eq!(
        set(text, "w", &["q"], &s("y")),
        "plugins:\n  entries:\n    w: {a:, e, 'q': y}\n"
    );
    // Flow mappings all the way down.
    let text = "plugins: {entries: {weather: {a: 1}}}\n";
    assert_eq!(
        set(text, "weather", &["b"], &b(true)),
        "plugins: {entries: {weather: {a: 1, b: true}}}\n"
    );
    assert_eq!(
        set(text, "news", &["b"], &b(true)),
        "plugins: {entries: {weather: {a: 1}, news: {b: true}}}\n"
    );
    assert_eq!(
        set("plugins: {enabled: [a]}\n", "a", &["b"], &b(true)),
        "plugins: {enabled: [a], entries: {a: {b: true}}}\n"
    );
}

#[test]
fn unusual_value_layouts_are_replaced_whole() {
    let text = "plugins:\n  entries:\n    w:\n      note: |\n        two\n        lines\n      caps:\n      - a\n      - b\n      long: one\n        two\n      next:\n        \"line\"\n      z: 1\n";
    assert_eq!(
        set(text, "w", &["note"], &s("short")),
        "plugins:\n  entries:\n    w:\n      note: short\n      caps:\n      - a\n      - b\n      long: one\n        two\n      next:\n        \"line\"\n      z: 1\n"
    );
    assert_eq!(
        set(text, "w", &["note"], &list(&["x"])),
        "plugins:\n  entries:\n    w:\n      note:\n        - x\n      caps:\n      - a\n      - b\n      long: one\n        two\n      next:\n        \"line\"\n      z: 1\n"
    );
    assert_eq!(
        set(text, "w", &["caps"], &list(&["c"])),
        "plugins:\n  entries:\n    w:\n      note: |\n        two\n        lines\n      caps:\n      - c\n      long: one\n        two\n      next:\n        \"line\"\n      z: 1\n"
    );
    assert_eq!(
        set(text, "w", &["long"], &b(true)),
        "plugins:\n  entries:\n    w:\n      note: |\n        two\n        lines\n      caps:\n      - a\n      - b\n      long: true\n      next:\n        \"line\"\n      z: 1\n"
    );
    assert_eq!(
        set(text, "w", &["next"], &s("other")),
        "plugins:\n  entries:\n    w:\n      note: |\n        two\n        lines\n      caps:\n      - a\n      - b\n      long: one\n        two\n      next: other\n      z: 1\n"
    );
    assert_eq!(
        remove(text, "w", &["caps"]),
        "plugins:\n  entries:\n    w:\n      note: |\n        two\n        lines\n      long: one\n        two\n      next:\n        \"line\"\n      z: 1\n"
    );
    assert_eq!(
        remove(text, "w", &["long"]),
        "plugins:\n  entries:\n    w:\n      note: |\n        two\n        lines\n      caps:\n      - a\n      - b\n      next:\n        \"line\"\n      z: 1\n"
    );
}

#[test]
fn nested_key_creates_its_mapping() {
    let text = "plugins:\n  entries:\n    weather:\n      allow_tool_override: true\n";
    assert_eq!(
        set(text, "weather", &["llm", "allow_model_override"], &b(true)),
        "plugins:\n  entries:\n    weather:\n      allow_tool_override: true\n      llm:\n        allow_model_override: true\n"
    );
    // Into the existing `llm:` of the sample.
    let out = set(
        SAMPLE,
        "weather",
        &["llm", "allow_tool_override"],
        &b(false),
    );
    assert_eq!(
        out,
        SAMPLE.replace(
            "        allow_model_override: true\n",
            "        allow_model_override: true\n        allow_tool_override: false\n"
        )
    );
}

#[test]
fn map_with_a_quoted_timestamp() {
    let text = "plugins:\n  entries:\n    weather:\n      allow_tool_override: true\n";
    let out = set(text, "weather", &["capabilities_consent"], &consent());
    assert_eq!(
        out,
        "plugins:\n  entries:\n    weather:\n      allow_tool_override: true\n      capabilities_consent:\n        hash: 3f2a9c\n        granted_at: \"2026-11-30T10:00:00Z\"\n"
    );
    assert_eq!(
        read_entry(&out, "weather", &["capabilities_consent"]).unwrap(),
        Some(json!({"hash": "3f2a9c", "granted_at": "2026-11-30T10:00:00Z"}))
    );
    // The sample already holds exactly this value.
    assert_eq!(
        set(SAMPLE, "weather", &["capabilities_consent"], &consent()),
        SAMPLE
    );
    // Strings YAML 1.1 would read as something else are quoted.
    for (value, written) in [
        ("2026-11-30", "\"2026-11-30\""),
        ("2026-11-30 10:00:00", "\"2026-11-30 10:00:00\""),
        ("yes", "\"yes\""),
        ("0755", "\"0755\""),
        ("1e3", "1e3"),
        ("", "\"\""),
        ("a\nb", "\"a\\nb\""),
    ] {
        let out = set(text, "weather", &["v"], &s(value));
        assert_eq!(out, format!("{text}      v: {written}\n"), "{value:?}");
    }
    // An unquoted timestamp is a date, not the string: it is rewritten quoted.
    let text = "plugins:\n  entries:\n    w:\n      at: 2026-11-30T10:00:00Z\n";
    assert_eq!(
        set(text, "w", &["at"], &s("2026-11-30T10:00:00Z")),
        "plugins:\n  entries:\n    w:\n      at: \"2026-11-30T10:00:00Z\"\n"
    );
    // The whole entry as one nested mapping, lists inside.
    let out = set(
        "plugins:\n  enabled: [w]\n",
        "w",
        &[],
        &map(&[
            ("granted_capabilities", list(&["tools.override"])),
            ("capabilities_consent", consent()),
            ("empty", map(&[])),
        ]),
    );
    assert_eq!(
        out,
        "plugins:\n  enabled: [w]\n  entries:\n    w:\n      granted_capabilities:\n        - tools.override\n      capabilities_consent:\n        hash: 3f2a9c\n        granted_at: \"2026-11-30T10:00:00Z\"\n      empty: {}\n"
    );
}

#[test]
fn category_ids_and_keys_that_need_quotes() {
    let text = "plugins:\n  enabled: [tools/weather]\n";
    let out = set(text, "tools/weather", &["allow_tool_override"], &b(true));
    assert_eq!(
        out,
        "plugins:\n  enabled: [tools/weather]\n  entries:\n    tools/weather:\n      allow_tool_override: true\n"
    );
    let out = set(&out, "my plugin", &["on"], &b(true));
    assert_eq!(
        out,
        "plugins:\n  enabled: [tools/weather]\n  entries:\n    tools/weather:\n      allow_tool_override: true\n    \"my plugin\":\n      \"on\": true\n"
    );
    assert_eq!(
        read_entry(&out, "my plugin", &["on"]).unwrap(),
        Some(json!(true))
    );
    // Quoted keys in the file are matched unquoted.
    let text = "plugins:\n  entries:\n    \"tools/weather\":\n      'x': 1\n";
    assert_eq!(
        set(text, "tools/weather", &["x"], &b(true)),
        "plugins:\n  entries:\n    \"tools/weather\":\n      'x': true\n"
    );
}

// --- line endings and indentation ----------------------------------------------------------

#[test]
fn crlf_files_stay_crlf() {
    let text = SAMPLE.replace('\n', "\r\n");
    let out = set(&text, "weather", &["llm", "extra"], &list(&["a"]));
    assert_eq!(
        out,
        text.replace(
            "        allow_model_override: true\r\n",
            "        allow_model_override: true\r\n        extra:\r\n          - a\r\n"
        )
    );
    let out = set(
        &text,
        "weather",
        &["granted_capabilities"],
        &list(&["x", "y"]),
    );
    assert_eq!(
        out,
        text.replace(
            "        - tools.override\r\n",
            "        - x\r\n        - y\r\n"
        )
    );
    let out = remove(&text, "weather", &["llm"]);
    assert_eq!(
        out,
        text.replace("      llm:\r\n        allow_model_override: true\r\n", "")
    );
    assert_eq!(
        set("a: 1\r\n", "w", &["x"], &b(true)),
        "a: 1\r\nplugins:\r\n  entries:\r\n    w:\r\n      x: true\r\n"
    );
}

#[test]
fn four_space_indentation() {
    let text = "plugins:\n    enabled:\n        - weather\n    entries:\n        weather:\n            allow_tool_override: true\n";
    assert_eq!(
        set(text, "weather", &["llm", "allow_model_override"], &b(true)),
        format!("{text}            llm:\n                allow_model_override: true\n")
    );
    assert_eq!(
        set(text, "news", &["caps"], &list(&["a"])),
        format!("{text}        news:\n            caps:\n                - a\n")
    );
    assert_eq!(
        set("a:\n    b: 1\n", "w", &["x"], &b(true)),
        "a:\n    b: 1\nplugins:\n    entries:\n        w:\n            x: true\n"
    );
    // Siblings decide the indentation of a new key, the file's step the levels below it.
    let text = "plugins:\n  entries:\n      weather:\n        a: 1\n";
    assert_eq!(
        set(text, "news", &["b"], &b(true)),
        "plugins:\n  entries:\n      weather:\n        a: 1\n      news:\n        b: true\n"
    );
}

#[test]
fn missing_final_newline_stays_missing() {
    let text = "plugins:\n  entries:\n    w:\n      a: 1";
    assert_eq!(
        set(text, "w", &["b"], &b(true)),
        "plugins:\n  entries:\n    w:\n      a: 1\n      b: true"
    );
    assert_eq!(
        remove(
            "plugins:\n  entries:\n    w:\n      a: 1\n      b: 2",
            "w",
            &["b"]
        ),
        "plugins:\n  entries:\n    w:\n      a: 1"
    );
    assert_eq!(remove(text, "w", &["a"]), "plugins:\n  entries:\n    w: {}");
}

#[test]
fn byte_order_mark_is_kept() {
    let text = "\u{feff}plugins:\n  entries:\n    w:\n      a: 1\n";
    assert_eq!(
        set(text, "w", &["a"], &b(true)),
        "\u{feff}plugins:\n  entries:\n    w:\n      a: true\n"
    );
    assert_eq!(read_entry(text, "w", &["a"]).unwrap(), Some(json!(1)));
}

// --- removing ------------------------------------------------------------------------------

#[test]
fn removing_a_scalar_takes_its_line_and_comment() {
    let out = remove(SAMPLE, "weather", &["allow_tool_override"]);
    assert_eq!(
        out,
        SAMPLE.replace("      allow_tool_override: true    # trailing\n", "")
    );
}

#[test]
fn removing_a_block_list_or_mapping_takes_its_block() {
    let out = remove(SAMPLE, "weather", &["granted_capabilities"]);
    assert_eq!(
        out,
        SAMPLE.replace(
            "      granted_capabilities:\n        - tools.override\n",
            ""
        )
    );
    // The comment line before the key stays.
    let out = remove(SAMPLE, "weather", &["capabilities_consent"]);
    assert_eq!(
        out,
        SAMPLE.replace(
            "      capabilities_consent:\n        hash: 3f2a9c\n        granted_at: \"2026-11-30T10:00:00Z\"\n",
            ""
        )
    );
    // A whole entry.
    let out = remove(SAMPLE, "news", &[]);
    assert_eq!(
        out,
        SAMPLE.replace("    news:\n      allow_tool_override: false\n", "")
    );
}

#[test]
fn removing_the_last_key_leaves_an_empty_mapping() {
    let out = remove(SAMPLE, "weather", &["llm", "allow_model_override"]);
    assert_eq!(
        out,
        SAMPLE.replace(
            "      llm:\n        allow_model_override: true\n",
            "      llm: {}\n"
        )
    );
    let out = remove(SAMPLE, "news", &["allow_tool_override"]);
    assert_eq!(
        out,
        SAMPLE.replace(
            "    news:\n      allow_tool_override: false\n",
            "    news: {}\n"
        )
    );
    assert_eq!(read_entry(&out, "news", &[]).unwrap(), Some(json!({})));
    // The key line's comment stays; setting again writes a block.
    let text = "plugins:\n  entries:\n    w:   # mine\n      a: 1\n";
    let out = remove(text, "w", &["a"]);
    assert_eq!(out, "plugins:\n  entries:\n    w: {}   # mine\n");
    assert_eq!(
        set(&out, "w", &["a"], &b(true)),
        "plugins:\n  entries:\n    w:   # mine\n      a: true\n"
    );
    // The last entry of `entries`.
    assert_eq!(
        remove("plugins:\n  entries:\n    w:\n      a: 1\nx: 2\n", "w", &[]),
        "plugins:\n  entries: {}\nx: 2\n"
    );
}

#[test]
fn removing_from_flow_mappings() {
    let text = "plugins:\n  entries:\n    w: {a: 1, b: [x, y], c: {d: 2}}\n";
    assert_eq!(
        remove(text, "w", &["a"]),
        "plugins:\n  entries:\n    w: {b: [x, y], c: {d: 2}}\n"
    );
    assert_eq!(
        remove(text, "w", &["b"]),
        "plugins:\n  entries:\n    w: {a: 1, c: {d: 2}}\n"
    );
    assert_eq!(
        remove(text, "w", &["c"]),
        "plugins:\n  entries:\n    w: {a: 1, b: [x, y]}\n"
    );
    assert_eq!(
        remove(text, "w", &["c", "d"]),
        "plugins:\n  entries:\n    w: {a: 1, b: [x, y], c: {}}\n"
    );
}

#[test]
fn removing_what_is_absent_changes_nothing() {
    for path in [&["nope"][..], &["llm", "nope"], &["nope", "x"]] {
        assert_eq!(remove_entry(SAMPLE, "weather", path).unwrap(), SAMPLE);
    }
    assert_eq!(remove_entry(SAMPLE, "calendar", &["x"]).unwrap(), SAMPLE);
    assert_eq!(remove_entry("", "w", &["x"]).unwrap(), "");
    assert_eq!(remove_entry("plugins:\n", "w", &[]).unwrap(), "plugins:\n");
}

// --- reading -------------------------------------------------------------------------------

#[test]
fn read_entry_returns_json() {
    let read = |id: &str, path: &[&str]| read_entry(SAMPLE, id, path).unwrap();
    assert_eq!(read("weather", &["allow_tool_override"]), Some(json!(true)));
    assert_eq!(
        read("weather", &["granted_capabilities"]),
        Some(json!(["tools.override"]))
    );
    assert_eq!(
        read("weather", &["capabilities_consent", "granted_at"]),
        Some(json!("2026-11-30T10:00:00Z"))
    );
    assert_eq!(
        read("weather", &["llm"]),
        Some(json!({"allow_model_override": true}))
    );
    assert_eq!(
        read("news", &[]),
        Some(json!({"allow_tool_override": false}))
    );
    assert_eq!(read("weather", &["missing"]), None);
    assert_eq!(read("weather", &["llm", "missing"]), None);
    assert_eq!(read("calendar", &[]), None);
    assert_eq!(read_entry("", "w", &[]).unwrap(), None);
    assert_eq!(
        read_entry("plugins:\n  entries:\n", "w", &["a"]).unwrap(),
        None
    );
    // Aliases are followed when only reading.
    let text = "base: &b {x: 1}\nplugins:\n  entries:\n    w: *b\n";
    assert_eq!(read_entry(text, "w", &["x"]).unwrap(), Some(json!(1)));
}

// --- errors --------------------------------------------------------------------------------

#[test]
fn wrong_types_on_the_path_are_refused() {
    let err = set_entry("plugins:\n  entries: 3\n", "w", &["a"], &b(true)).unwrap_err();
    assert_eq!(
        err,
        EditError::WrongType {
            path: "plugins.entries".into(),
            line: 2,
            found: "integer",
            expected: "a mapping",
        }
    );
    assert_eq!(
        err.to_string(),
        "line 2: plugins.entries is a integer, but it must be a mapping; fix it by hand"
    );
    let text = "plugins:\n  entries:\n    tools/weather: true\n";
    let err = set_entry(text, "tools/weather", &["a"], &b(true)).unwrap_err();
    assert_eq!(
        err,
        EditError::WrongType {
            path: "plugins.entries.tools/weather".into(),
            line: 3,
            found: "boolean",
            expected: "a mapping",
        }
    );
    assert_eq!(
        remove_entry(text, "tools/weather", &["a"]),
        Err(err.clone())
    );
    assert_eq!(
        remove_entry(text, "tools/weather", &["a", "b"]),
        Err(err.clone())
    );
    assert_eq!(read_entry(text, "tools/weather", &["a"]), Err(err));
    let err = set_entry("plugins: [a]\n", "w", &["a"], &b(true)).unwrap_err();
    assert!(
        matches!(&err, EditError::WrongType { path, line: 1, found: "list", .. } if path == "plugins"),
        "{err:?}"
    );
    let err = set_entry("- a\n", "w", &["a"], &b(true)).unwrap_err();
    assert!(
        matches!(&err, EditError::WrongType { path, .. } if path == "the top level"),
        "{err:?}"
    );
    let err = set_entry("null\n", "w", &["a"], &b(true)).unwrap_err();
    assert!(
        matches!(err, EditError::WrongType { found: "null", .. }),
        "{err:?}"
    );
    // The value's own type does not matter: it is replaced.
    assert_eq!(
        set(
            "plugins:\n  entries:\n    w: 3\n",
            "w",
            &[],
            &map(&[("a", b(true))])
        ),
        "plugins:\n  entries:\n    w:\n      a: true\n"
    );
}

#[test]
fn anchors_aliases_and_merge_keys_on_the_path_are_refused() {
    let cases = [
        ("plugins: &p\n  entries:\n    w:\n      a: 1\nx: *p\n", 1),
        ("plugins:\n  entries: &e\n    w:\n      a: 1\nx: *e\n", 2),
        ("base: &b\n  a: 1\nplugins:\n  entries:\n    w: *b\n", 5),
        ("plugins:\n  entries:\n    w:\n      a: &a 1\nx: *a\n", 4),
        (
            "base: &b\n  a: 1\nplugins:\n  entries:\n    w:\n      <<: *b\n      c: 2\n",
            2,
        ),
        (
            "base: &b {a: 1}\nplugins:\n  entries:\n    w: {<<: *b, c: 2}\n",
            4,
        ),
    ];
    for (text, line) in cases {
        let err = set_entry(text, "w", &["a"], &b(true)).unwrap_err();
        assert!(
            matches!(err, EditError::Anchor { line: l, .. } if l == line),
            "{text}: {err:?}"
        );
        assert!(
            err.to_string().contains("anchor, alias or merge key"),
            "{err}"
        );
    }
    // A key merged from a flow mapping written in the entry itself.
    let text = "plugins:\n  entries:\n    w:\n      <<: {z: 1}\n      y: 2\n";
    let err = set_entry(text, "w", &["z"], &b(true)).unwrap_err();
    assert_eq!(
        err,
        EditError::Anchor {
            path: "plugins.entries.w.z".into(),
            line: 4
        }
    );
    let err = remove_entry(cases[2].0, "w", &["a"]).unwrap_err();
    assert!(matches!(err, EditError::Anchor { .. }), "{err:?}");
    // Anchors elsewhere do not matter; a key next to a merge can be set.
    let text = "x: &x 1\ny: *x\nplugins:\n  entries:\n    w:\n      a: 1\n";
    assert_eq!(
        set(text, "w", &["a"], &b(true)),
        "x: &x 1\ny: *x\nplugins:\n  entries:\n    w:\n      a: true\n"
    );
    let text = cases[4].0;
    assert_eq!(
        set(text, "w", &["c"], &b(true)),
        "base: &b\n  a: 1\nplugins:\n  entries:\n    w:\n      <<: *b\n      c: true\n"
    );
}

#[test]
fn other_refusals() {
    assert_eq!(
        set_entry("a: 1\n", "", &["x"], &b(true)),
        Err(EditError::EmptyName)
    );
    assert_eq!(
        remove_entry("a: 1\n", "", &["x"]),
        Err(EditError::EmptyName)
    );
    assert_eq!(read_entry("a: 1\n", "", &["x"]), Err(EditError::EmptyName));
    let err = set_entry(
        "a: 1\n",
        "w",
        &["m"],
        &map(&[("x", b(true)), ("x", b(false))]),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot write plugins.entries.w.m: the key `x` is given twice"
    );
    let err = set_entry("a: [1\n", "w", &["x"], &b(true)).unwrap_err();
    assert!(matches!(err, EditError::InvalidYaml { .. }), "{err:?}");
    // A key written twice.
    let text = "plugins:\n  entries:\n    w:\n      a: 1\n      a: 2\n";
    let err = set_entry(text, "w", &["a"], &b(true)).unwrap_err();
    assert!(
        matches!(&err, EditError::Layout { line: 5, detail, .. } if detail.contains("more than once")),
        "{err:?}"
    );
}

#[test]
fn self_check_refuses_a_wrong_result() {
    // A block scalar whose last line looks like a comment fools the line scanner.
    let text = "plugins:\n  entries:\n    w:\n      a: |\n        text\n        # not a comment\n";
    let err = set_entry(text, "w", &["b"], &b(true)).unwrap_err();
    assert!(matches!(err, EditError::SelfCheck { .. }), "{err:?}");
    let original = Doc::parse("a: 1\nplugins:\n  entries:\n    w: {x: 1}\n")
        .unwrap()
        .root;
    let keys = ["plugins", "entries", "w", "x"];
    assert!(
        check(
            &original,
            "a: 1\nplugins:\n  entries:\n    w: {x: true}\n",
            &keys,
            Some(&b(true))
        )
        .is_ok()
    );
    assert!(
        check(
            &original,
            "a: 2\nplugins:\n  entries:\n    w: {x: true}\n",
            &keys,
            Some(&b(true))
        )
        .is_err()
    );
    assert!(
        check(
            &original,
            "a: 1\nplugins:\n  entries:\n    w: {x: 1}\n",
            &keys,
            Some(&b(true))
        )
        .is_err()
    );
    assert!(
        check(
            &original,
            "a: 1\nplugins:\n  entries:\n    w: {}\n",
            &keys,
            None
        )
        .is_ok()
    );
    assert!(
        check(
            &original,
            "a: 1\nplugins:\n  entries:\n    w: {y: 1}\n",
            &keys,
            None
        )
        .is_err()
    );
}

#[test]
fn setting_the_same_value_twice_gives_identical_text() {
    let values = [
        (vec!["allow_tool_override"], b(true)),
        (vec!["granted_capabilities"], list(&["a", "b"])),
        (vec!["capabilities_consent"], consent()),
        (vec!["llm", "allow_model_override"], b(false)),
        (vec!["x", "y", "z"], list(&[])),
    ];
    for text in [
        SAMPLE,
        "",
        "plugins:\n  entries: {}\n",
        "plugins: {entries: {w: {}}}\n",
    ] {
        for (path, value) in &values {
            let once = set_entry(text, "w", path, value).unwrap();
            assert_eq!(set_entry(&once, "w", path, value).unwrap(), once);
        }
    }
    assert_eq!(
        set_entry(SAMPLE, "weather", &["allow_tool_override"], &b(true)).unwrap(),
        SAMPLE
    );
}

#[test]
fn selection_lists_and_entries_combine() {
    let out = enable("model: x\n", "weather").unwrap();
    let out = set(&out, "weather", &["allow_tool_override"], &b(true));
    let out = disable(&out, "weather").unwrap();
    assert_eq!(
        out,
        "model: x\nplugins:\n  enabled: []\n  entries:\n    weather:\n      allow_tool_override: true\n  disabled:\n    - weather\n"
    );
}
