//! `pack install | show | export`: Hermes 0.22's plugin packs, installed as one generation.
//! That an exported pack parses with Hermes 0.22.2's own `parse_pack` is
//! `conformance::agent`'s.

use crate::common;

use common::world::*;
use serde_json::Value;

/// A world with two plugins in git repositories (`weather` at the root of one, `news` in a
/// subdirectory of another): their `file://` URLs and commits.
pub fn two_plugins(w: &World) -> [(String, String); 2] {
    let weather = w.tmp.path().join("weather-repo");
    let weather_commit = git_plugin(&weather, None, "weather", "1.0.0", &["weatherlib>=1,<2"]);
    let news = w.tmp.path().join("news-repo");
    let news_commit = git_plugin(
        &news,
        Some("plugins/news"),
        "news",
        "1.0.0",
        &["newslib>=1"],
    );
    [
        (file_url(&weather), weather_commit),
        (file_url(&news), news_commit),
    ]
}

/// A pack of both, seeding `news`'s settings.
pub fn pack_text(w: &World, extra_seed: &str) -> String {
    let [(weather, wc), (news, nc)] = two_plugins(w);
    format!(
        "pack:\n  name: team-kit\n  description: Two plugins\nplugins:\n  - repo: {weather}\n    ref: {wc}\n  - repo: {news}\n    subdir: plugins/news\n    ref: {nc}\nconfig:\n  news:\n    units: metric\n    retries: 3\n    sources: [a, b]\n{extra_seed}skills:\n  - summarise\n"
    )
}

fn write(w: &World, text: &str) -> String {
    let path = w.tmp.path().join("hermes-pack.yaml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn a_pack_installs_as_one_generation_with_its_seeds() {
    let w = World::new();
    let file = write(&w, &pack_text(&w, ""));
    // A setting the user made before wins over the pack's seed.
    std::fs::write(
        w.home.join("config.yaml"),
        "plugins:\n  entries:\n    news:\n      units: imperial  # mine\n",
    )
    .unwrap();
    let shown = w.json(&["pack", "show", &file]);
    common::follows_its_schema(&shown, Some(0));
    assert_eq!(shown["plugins"].as_array().unwrap().len(), 2, "{shown:#}");

    let doc = w.json(&["pack", "install", &file, "--yes-deps"]);
    common::follows_its_schema(&doc, Some(0));
    assert_eq!(w.current(), Some(1), "exactly one generation: {doc:#}");
    let keys: Vec<&str> = doc["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["weather", "news"], "{doc:#}");
    assert_eq!(doc["seeded"], serde_json::json!(["news"]));
    assert_eq!(doc["skills"], serde_json::json!(["summarise"]));
    let env = w.json(&["env"]);
    let enabled: Vec<&str> = env["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["key"].as_str().unwrap())
        .collect();
    assert_eq!(enabled, ["news", "weather"], "{env:#}");
    let config = std::fs::read_to_string(w.home.join("config.yaml")).unwrap();
    assert!(config.contains("units: imperial  # mine"), "{config}");
    assert!(config.contains("retries: 3"), "{config}");
    assert!(config.contains("- a") && config.contains("- b"), "{config}");
    assert!(!config.contains("metric"), "{config}");

    // Exported, the pack names both at their commits and their settings; `show` reads it.
    let exported = w.json(&["pack", "export", "--name", "again"]);
    common::follows_its_schema(&exported, Some(0));
    let yaml = exported["yaml"].as_str().unwrap();
    let again = write(&w, yaml);
    let back = w.json(&["pack", "show", &again]);
    assert_eq!(back["pack"], "again");
    let sorted = |v: &Value| {
        let mut items = v.as_array().unwrap().clone();
        items.sort_by_key(|i| i["entry"].to_string());
        items
    };
    assert_eq!(
        sorted(&back["plugins"]),
        sorted(&shown["plugins"]),
        "{yaml}"
    );
    assert_eq!(back["seeded"], serde_json::json!(["news"]), "{yaml}");
}

#[test]
fn a_bad_pack_is_refused_by_name_and_nothing_is_published() {
    let w = World::new();
    let good = pack_text(&w, "");
    let refused = |text: &str, says: &str| {
        let file = write(&w, text);
        let (code, out, err) = w.run(&["pack", "install", &file, "--yes-deps"]);
        assert_eq!(code, Some(1), "{out}\n{err}");
        assert!(err.contains(says), "{err}");
        assert_eq!(w.current(), None, "published: {err}");
        let installed: Value = std::fs::read(w.pm().join("installed.json"))
            .map(|b| serde_json::from_slice(&b).unwrap())
            .unwrap_or(Value::Null);
        assert!(
            installed["plugins"]
                .as_object()
                .is_none_or(|p| p.is_empty()),
            "{installed:#}"
        );
    };
    // A branch where a commit belongs.
    let at = good.find("ref: ").unwrap() + "ref: ".len();
    let branch = format!("{}main{}", &good[..at], &good[at + 40..]);
    refused(&branch, "hermes-pack.yaml:5: plugin entry");
    // A secret-shaped seed.
    refused(
        &pack_text(&w, "    api_token: abc\n"),
        "secret-shaped key 'api_token'",
    );
    // The second plugin does not validate: the first is not installed either.
    let broken = w.tmp.path().join("broken-repo");
    std::fs::create_dir_all(&broken).unwrap();
    git2::Repository::init(&broken).unwrap();
    let bc = commit(
        &broken,
        &[("plugin.yaml".into(), "name: broken\nversion: [\n".into())],
        "broken",
    );
    refused(
        &good.replacen(
            "config:",
            &format!("  - repo: {}\n    ref: {bc}\nconfig:", file_url(&broken)),
            1,
        ),
        "broken",
    );
}
