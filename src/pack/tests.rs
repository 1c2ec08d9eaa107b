use super::*;

const SHA: &str = "0123456789abcdef0123456789ABCDEF01234567";

fn pack(body: &str) -> Result<Pack, PackError> {
    parse(body, "pack.yaml")
}

#[test]
fn the_0_22_forms_are_read() {
    let p = pack(&format!(
        "pack:\n  name: ' Team kit '\n  author: me\n  version: 2\nplugins:\n  - name: weather\n    ref: {SHA}\n  - source: github:acme/tools\n    version: {SHA}\n    subdir: /plugins/x/\nconfig:\n  weather:\n    units: metric\n    retries: 3\n    ratio: 0.5\n    nested: {{a: [x, y]}}\nskills: [one, ' ', two]\n"
    ))
    .unwrap();
    assert_eq!(p.name, "Team kit");
    assert_eq!((p.author.as_str(), p.version.as_str()), ("me", "2"));
    assert_eq!(p.plugins[0].name.as_deref(), Some("weather"));
    assert_eq!(p.plugins[0].commit, SHA.to_ascii_lowercase());
    assert_eq!(p.plugins[1].repo.as_deref(), Some("acme/tools"));
    assert_eq!(p.plugins[1].subdir.as_deref(), Some("plugins/x"));
    assert_eq!(p.plugins[1].display(), "acme/tools/plugins/x");
    assert_eq!(p.plugins[1].line, 8);
    let seed = p.plugins[0].seed(&p, "weather").unwrap();
    assert_eq!(seed[0], ("units".into(), EntryValue::Str("metric".into())));
    assert_eq!(seed[1], ("retries".into(), EntryValue::Int(3)));
    assert_eq!(seed[2], ("ratio".into(), EntryValue::Float(0.5)));
    assert_eq!(p.skills, ["one", "two"]);
}

#[test]
fn what_hermes_refuses_is_refused_at_its_line() {
    let cases = [
        ("plugins: []\n", 0, "no `name`"),
        ("name: x\n", 0, "non-empty `plugins`"),
        (
            "name: x\nplugins:\n  - repo: a/b\n    ref: main\n",
            3,
            "ref `main`",
        ),
        ("name: x\nplugins:\n  - repo: a/b\n", 3, "ref none"),
        ("name: x\nplugins:\n  - ref: 0123\n", 3, "needs `name`"),
        (
            &format!(
                "name: x\nplugins:\n  - name: a\n    ref: {SHA}\nconfig:\n  a:\n    api_key: k\n"
            ),
            7,
            "secret-shaped key 'api_key'",
        ),
        (
            &format!(
                "name: x\nplugins:\n  - name: a\n    ref: {SHA}\nconfig:\n  a:\n    deep:\n      - {{Auth_Header: x}}\n"
            ),
            7,
            "secret-shaped key 'deep.Auth_Header'",
        ),
        (
            &format!(
                "name: x\nplugins:\n  - name: a\n    ref: {SHA}\nconfig:\n  a:\n    allow_tool_override: true\n"
            ),
            7,
            "reserved key 'allow_tool_override'",
        ),
        (
            &format!("name: x\nplugins:\n  - name: a\n    ref: {SHA}\nconfig:\n  a: 3\n"),
            6,
            "must be a mapping",
        ),
    ];
    for (text, line, says) in cases {
        let e = pack(text).unwrap_err();
        assert!(e.message.contains(says), "{text}: {e}");
        if line > 0 {
            assert_eq!(e.line, line, "{text}: {e}");
        }
    }
    assert!(pack(&"x".repeat(MAX_BYTES + 1)).is_err());
}

#[test]
fn forbidden_keys_follow_hermes() {
    for key in [
        "token",
        "GitHub_Token",
        "passwd",
        "password",
        "apikey",
        "api-key",
        "private_key",
        "credentials",
        "author",
    ] {
        assert_eq!(forbidden(key), Some(Forbidden::Secret), "{key}");
    }
    for key in [
        "granted_capabilities",
        "capabilities_consent",
        "allow_anything",
    ] {
        assert_eq!(forbidden(key), Some(Forbidden::Reserved), "{key}");
    }
    for key in ["units", "model", "max_results", "pass"] {
        assert_eq!(forbidden(key), None, "{key}");
    }
}

#[test]
fn an_export_reads_back_and_carries_no_secret() {
    let exported = Exported {
        name: "my pack: \"quoted\"".into(),
        plugins: vec![
            ExportedEntry {
                repo: "acme/tools".into(),
                commit: SHA.to_ascii_lowercase(),
                subdir: Some("plugins/x".into()),
            },
            ExportedEntry {
                repo: "https://git.example/y.git".into(),
                commit: SHA.to_ascii_lowercase(),
                subdir: None,
            },
        ],
        config: vec![(
            "x".into(),
            serde_json::json!({"units": "metric", "token": "s3cret", "n": 2, "yes": {"auth": 1, "k": ["1"]}}),
        )],
        warnings: vec!["local: no git provenance".into()],
    };
    let text = render(&exported);
    assert!(!text.contains("s3cret") && !text.contains("auth"), "{text}");
    assert!(
        text.starts_with("# WARNING (not exported): local"),
        "{text}"
    );
    let back = pack(&text).unwrap();
    assert_eq!(back.name, "my pack: \"quoted\"");
    assert_eq!(back.plugins.len(), 2);
    assert_eq!(back.plugins[0].display(), "acme/tools/plugins/x");
    let seed = back.plugins[0].seed(&back, "x").unwrap();
    assert_eq!(seed[0], ("units".into(), EntryValue::Str("metric".into())));
    assert_eq!(seed[1], ("n".into(), EntryValue::Int(2)));
}
