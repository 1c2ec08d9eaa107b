//! The catalog toolchain's library API (CAT-1, CAT-2, CAT-5, SRC-4) on the fixture catalogs:
//! a good catalog has no findings; every defect fixture has exactly the findings it is named
//! after; the JSON Schemas in catalog-schema/ agree with the Rust rules; URL normalisation.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;
use hermes_plugins::catalog::finding::{self as ids, CatalogFinding};
use hermes_plugins::catalog::{self, check, report, search};
use hermes_plugins::diag::{CheckId, Severity};
use hermes_plugins::located::{Limits, yaml};
use hermes_plugins::repo_url as url;

use Severity::{Error as E, Warning as W};

/// `(check id, severity, line)` of a finding.
type Expected = (CheckId, Severity, u32);

/// Every file of fixtures/catalog/defects/ and exactly the findings it must produce. A new
/// fixture without a row here fails `every_defect_has_exactly_its_findings`.
const DEFECTS: &[(&str, &[Expected])] = &[
    ("capabilities-unknown-key.yaml", &[(ids::ENTRY_FIELD, W, 6)]),
    ("category-unknown.yaml", &[(ids::ENTRY_FIELD, W, 6)]),
    ("components-unknown.yaml", &[(ids::ENTRY_FIELD, E, 6)]),
    ("control-char-in-repo.yaml", &[(ids::ENTRY_FIELD, E, 2)]),
    ("description-missing.yaml", &[(ids::ENTRY_FIELD, E, 1)]),
    ("desktop-id-bad.yaml", &[(ids::ENTRY_FIELD, E, 6)]),
    ("docs-url-not-https.yaml", &[(ids::ENTRY_FIELD, E, 5)]),
    ("duplicate-name-a.yaml", &[]),
    (
        "duplicate-name-b.yaml",
        &[(ids::ENTRY_FILENAME, W, 1), (ids::DUPLICATE_NAME, E, 1)],
    ),
    ("duplicate-repo-a.yaml", &[]),
    ("duplicate-repo-b.yaml", &[(ids::DUPLICATE_REPO, W, 2)]),
    ("image-off-github.yaml", &[(ids::ENTRY_FIELD, W, 6)]),
    ("invalid-yaml.yaml", &[(ids::YAML, E, 5)]),
    ("listed-in-removed.yaml", &[(ids::ENTRY_REMOVED, E, 1)]),
    ("maintainer-empty.yaml", &[(ids::ENTRY_FIELD, E, 4)]),
    ("maintainer-missing.yaml", &[(ids::ENTRY_FIELD, E, 1)]),
    ("name-bad-chars.yaml", &[(ids::ENTRY_FIELD, E, 1)]),
    ("name-mismatch.yaml", &[(ids::ENTRY_FILENAME, W, 1)]),
    ("not-a-mapping.yaml", &[(ids::YAML, E, 1)]),
    ("platforms-unknown.yaml", &[(ids::ENTRY_FIELD, E, 5)]),
    ("readme-string.yaml", &[(ids::ENTRY_FIELD, E, 6)]),
    ("removed.yaml", &[]),
    ("repo-credentials.yaml", &[(ids::ENTRY_FIELD, E, 2)]),
    ("repo-in-removed.yaml", &[(ids::ENTRY_REMOVED, E, 2)]),
    ("repo-not-https.yaml", &[(ids::ENTRY_FIELD, E, 2)]),
    ("repo-ssh.yaml", &[(ids::ENTRY_FIELD, E, 2)]),
    ("requires-env-lowercase.yaml", &[(ids::ENTRY_FIELD, W, 6)]),
    (
        "requires-hermes-calver.yaml",
        &[(ids::REQUIRES_HERMES, W, 5)],
    ),
    (
        "requires-hermes-no-operator.yaml",
        &[(ids::REQUIRES_HERMES, E, 6)],
    ),
    (
        "requires-plugins-missing.yaml",
        &[(ids::REQUIRES_PLUGINS, E, 6)],
    ),
    (
        "requires-plugins-self.yaml",
        &[(ids::REQUIRES_PLUGINS, E, 5)],
    ),
    ("screenshots-too-many.yaml", &[(ids::ENTRY_FIELD, E, 12)]),
    ("sha-missing.yaml", &[(ids::ENTRY_FIELD, E, 1)]),
    ("sha-short.yaml", &[(ids::ENTRY_FIELD, E, 3)]),
    ("sha-uppercase.yaml", &[(ids::ENTRY_FIELD, E, 3)]),
    ("subdir-absolute.yaml", &[(ids::ENTRY_FIELD, E, 5)]),
    ("subdir-dotdot.yaml", &[(ids::ENTRY_FIELD, E, 5)]),
    ("tags-not-list.yaml", &[(ids::ENTRY_FIELD, E, 5)]),
    ("tier-invalid.yaml", &[(ids::ENTRY_FIELD, E, 5)]),
    ("unknown-key-typo.yaml", &[(ids::UNKNOWN_KEY, W, 5)]),
    ("version-not-string.yaml", &[(ids::ENTRY_FIELD, E, 5)]),
    ("version-pattern.yaml", &[(ids::ENTRY_FIELD, W, 6)]),
];

/// Entries whose name, repo or sha is unusable, so no entry model comes out.
const NOT_LOADED: &[&str] = &[
    "invalid-yaml.yaml",
    "not-a-mapping.yaml",
    "sha-missing.yaml",
];

fn catalog_dir(name: &str) -> PathBuf {
    fixture("catalog").join(name)
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

fn summary(findings: &[CatalogFinding]) -> Vec<Expected> {
    let mut out: Vec<Expected> = findings
        .iter()
        .map(|f| (f.check, f.severity, f.pos.line))
        .collect();
    out.sort();
    out
}

/// Every file of the outcome (entries and the kill list) with its findings.
fn per_file(outcome: &check::CheckOutcome) -> BTreeMap<String, Vec<CatalogFinding>> {
    let mut map = BTreeMap::new();
    for (path, _, findings) in &outcome.entries {
        assert!(map.insert(file_name(path), findings.clone()).is_none());
    }
    if let Some((path, _, findings)) = &outcome.removed {
        assert!(map.insert(file_name(path), findings.clone()).is_none());
    }
    map
}

#[test]
fn good_catalog_has_no_findings() {
    let outcome = check::check(&[catalog_dir("good")]);
    let findings: Vec<&CatalogFinding> = outcome.findings().collect();
    assert!(findings.is_empty(), "{findings:#?}");
    assert!(!outcome.fails(true));
    let names: Vec<&str> = outcome.loaded().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["notes", "weather-alerts", "weather", "web-search"]);
    let (_, removed, _) = outcome
        .removed
        .as_ref()
        .expect("removed.yaml is the kill list");
    assert_eq!(removed.len(), 2);
    assert_eq!(removed[0].date.as_deref(), Some("2025-03-14"));

    let weather = outcome.loaded().find(|e| e.name == "weather").unwrap();
    assert_eq!(weather.subdir.as_deref(), Some("plugins/weather"));
    assert_eq!(weather.requires_plugins, ["web-search"]);
    let caps = weather.capabilities.as_ref().unwrap();
    assert_eq!(caps.provides_tools, ["weather_now", "weather_forecast"]);
    assert_eq!(caps.provides_middleware, ["units"]);
    assert_eq!(caps.requires_env, ["WEATHER_API_KEY"]);
    let web = outcome.loaded().find(|e| e.name == "web-search").unwrap();
    assert_eq!(web.version.as_deref(), Some("2.1.0"));
    assert_eq!(web.platforms, ["linux", "macos", "windows"]);
    assert_eq!(web.screenshots.len(), 2);
    assert_eq!(web.known_issues.len(), 1);
    assert_eq!(web.maintainer.as_deref(), Some("@nous-research"));

    // The same catalog given as files (entries and the kill list) gives the same result.
    let mut files: Vec<PathBuf> = std::fs::read_dir(catalog_dir("good"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.reverse();
    let again = check::check(&files);
    assert_eq!(again.findings().count(), 0);
    let names_again: Vec<&str> = again.loaded().map(|e| e.name.as_str()).collect();
    assert_eq!(names_again, names);
    assert!(again.removed.is_some());
}

#[test]
fn every_defect_has_exactly_its_findings() {
    let outcome = check::check(&[catalog_dir("defects")]);
    let actual = per_file(&outcome);
    let expected: BTreeMap<&str, &[Expected]> = DEFECTS.iter().copied().collect();
    assert_eq!(expected.len(), DEFECTS.len(), "a file is listed twice");
    for (file, findings) in &actual {
        let want = expected.get(file.as_str()).unwrap_or_else(|| {
            panic!(
                "fixtures/catalog/defects/{file} has no expectation in DEFECTS; it produced {:?}",
                summary(findings)
            )
        });
        let mut want = want.to_vec();
        want.sort();
        assert_eq!(summary(findings), want, "{file}: {findings:#?}");
        for f in findings {
            assert!(
                f.hint.is_some(),
                "{file}: finding without a fix hint: {f:#?}"
            );
            assert!(!f.message.is_empty());
            assert_eq!(file_name(Path::new(&f.file)), *file);
        }
    }
    for file in expected.keys() {
        assert!(
            actual.contains_key(*file),
            "DEFECTS lists {file}, which is not in fixtures/catalog/defects/"
        );
    }
    for (path, entry, _) in &outcome.entries {
        let name = file_name(path);
        assert_eq!(
            entry.is_none(),
            NOT_LOADED.contains(&name.as_str()),
            "{name}: entry loaded = {}",
            entry.is_some()
        );
    }
}

#[test]
fn findings_quote_values_and_name_the_first_occurrence() {
    let outcome = check::check(&[catalog_dir("defects")]);
    let files = per_file(&outcome);
    let one = |file: &str| -> CatalogFinding {
        files[file]
            .iter()
            .find(|f| f.severity == E)
            .cloned()
            .unwrap_or_else(|| panic!("{file} has an error"))
    };

    let sha = one("sha-uppercase.yaml");
    assert_eq!((sha.pos.line, sha.pos.column), (3, 6));
    let upper = sha.value.clone().unwrap();
    assert!(sha.hint.unwrap().contains(&upper.to_lowercase()));

    let dup = one("duplicate-name-b.yaml");
    assert!(
        dup.message.contains("duplicate-name-a.yaml:1:7"),
        "{}",
        dup.message
    );

    let repo = files["duplicate-repo-b.yaml"][0].clone();
    assert!(
        repo.message.contains("`duplicate-repo-a`"),
        "{}",
        repo.message
    );

    let typo = &files["unknown-key-typo.yaml"][0];
    assert!(typo.hint.as_deref().unwrap().contains("`description`"));
    assert_eq!(typo.value.as_deref(), Some("descripton"));

    let tier = one("tier-invalid.yaml");
    assert!(tier.hint.unwrap().contains("`official`"));

    let ctrl = one("control-char-in-repo.yaml");
    assert!(ctrl.message.contains("U+0007"), "{}", ctrl.message);
    assert!(
        ctrl.value.unwrap().contains("\\u{7}"),
        "control characters are escaped"
    );

    let ssh = one("repo-ssh.yaml");
    assert!(
        ssh.hint
            .unwrap()
            .contains("https://github.com/example/repo-ssh"),
        "the hint offers the https form"
    );

    let removed = one("repo-in-removed.yaml");
    assert!(removed.message.contains("`old-mirror`") && removed.message.contains("Superseded"));

    let yaml_error = one("invalid-yaml.yaml");
    assert!(
        yaml_error.message.contains("not valid YAML"),
        "{}",
        yaml_error.message
    );

    let version = one("version-not-string.yaml");
    assert!(version.message.contains("must be a string, found number"));
    assert_eq!(version.value.as_deref(), Some("1.0"));
}

#[test]
fn removed_yaml_rules() {
    let path = catalog_dir("removed-bad").join("removed.yaml");
    let (list, findings) = catalog::removed::load(&path);
    let names: Vec<&str> = list.iter().map(|r| r.name.as_str()).collect();
    // Upstream takes any non-empty name (`Bad Name` blocks by name, with a warning).
    assert_eq!(
        names,
        ["fine", "Bad Name", "spaced-repo", "wrong-date", "extra-key"]
    );
    assert_eq!(
        list[2].repo, None,
        "a rejected repo is not used for blocking"
    );
    let mut want: Vec<Expected> = vec![
        (ids::UNKNOWN_KEY, W, 11),
        (ids::UNKNOWN_KEY, W, 13),
        // Unquoted, YAML reads it as a date; upstream wants a string.
        (ids::REMOVED_FILE, E, 3),
        (ids::REMOVED_FILE, E, 4),
        (ids::REMOVED_FILE, W, 5),
        (ids::REMOVED_FILE, E, 7),
        (ids::REMOVED_FILE, W, 9),
        (ids::REMOVED_FILE, E, 12),
    ];
    want.sort();
    assert_eq!(summary(&findings), want, "{findings:#?}");
    // Through check(): a directory holding only a kill list.
    let outcome = check::check(&[catalog_dir("removed-bad")]);
    assert!(outcome.entries.is_empty());
    assert_eq!(outcome.removed.as_ref().unwrap().2.len(), findings.len());
}

#[test]
fn kill_list_blocks_by_name_and_normalised_repo() {
    let (list, findings) = catalog::removed::load(&catalog_dir("good").join("removed.yaml"));
    assert!(findings.is_empty());
    let hit = |name: &str, repo: Option<&str>| {
        catalog::blocked(&list, Some(name), repo).map(|r| r.name.clone())
    };
    assert_eq!(hit("old-tool", None), Some("old-tool".into()));
    assert_eq!(
        hit("renamed-miner", Some("https://github.com/Bad-Actor/miner")),
        Some("crypto-miner".into())
    );
    assert_eq!(
        hit("weather", Some("https://github.com/bad-actor/other")),
        None
    );
}

/// Whether a finding's rule is one a JSON Schema can express about the document alone. Not
/// expressible: the file-name rule, requires_hermes clause parsing, duplicate YAML keys (lost
/// when the tree becomes JSON), and the cross-entry rules (duplicate names and repos,
/// requires_plugins within the catalog, the kill list), which need the whole catalog.
fn schema_expressible(f: &CatalogFinding) -> bool {
    !(ids::CROSS_ENTRY_CHECKS.contains(&f.check)
        || f.check == ids::ENTRY_FILENAME
        || f.check == ids::REQUIRES_HERMES
        || (f.check == ids::YAML && f.severity == W))
}

#[test]
fn schemas_agree_with_the_rules_on_every_fixture() {
    let entry_schema = validator(&repo().join("catalog-schema/catalog-entry.schema.json"));
    let removed_schema = validator(&repo().join("catalog-schema/removed.schema.json"));
    let mut verdicts = BTreeMap::new();
    for dir in ["good", "defects", "removed-bad"] {
        let outcome = check::check(&[catalog_dir(dir)]);
        for (file, findings) in per_file(&outcome) {
            let path = catalog_dir(dir).join(&file);
            let text = std::fs::read_to_string(&path).unwrap();
            let Ok(parsed) = yaml::parse(&text, Limits::default()) else {
                // Not YAML at all: no document for a schema to judge; the rules say so.
                assert!(
                    findings
                        .iter()
                        .any(|f| f.check == ids::YAML && f.severity == E)
                );
                continue;
            };
            let doc = parsed.root.to_json();
            let schema = if file == "removed.yaml" {
                &removed_schema
            } else {
                &entry_schema
            };
            // The schemas reject unknown keys (for editors), so warnings count here too.
            let rules_valid = !findings.iter().any(schema_expressible);
            let schema_valid = schema.is_valid(&doc);
            assert_eq!(
                schema_valid,
                rules_valid,
                "{dir}/{file}: schema says {schema_valid}, rules say {rules_valid}\nschema: {:?}\nrules: {findings:#?}",
                violations(schema, &doc)
            );
            *verdicts.entry(schema_valid).or_insert(0) += 1;
        }
    }
    assert!(
        verdicts[&true] >= 10 && verdicts[&false] >= 20,
        "{verdicts:?}"
    );
}

#[test]
fn report_has_one_package_per_file() {
    let dir = catalog_dir("defects");
    let outcome = check::check(std::slice::from_ref(&dir));
    let r = report::to_report(&outcome, false);
    assert_eq!(r.packages.len(), DEFECTS.len());
    assert_eq!(r.summary.packages, DEFECTS.len());
    let by_file: BTreeMap<String, &hermes_plugins::report::PackageReport> = r
        .packages
        .iter()
        .map(|p| (file_name(Path::new(&p.path)), p))
        .collect();
    let ok_files: Vec<&str> = by_file
        .iter()
        .filter(|(_, p)| p.ok)
        .map(|(f, _)| f.as_str())
        .collect();
    assert_eq!(
        ok_files,
        [
            // Warnings only: what upstream accepts and we explain.
            "capabilities-unknown-key.yaml",
            "category-unknown.yaml",
            "duplicate-name-a.yaml",
            "duplicate-repo-a.yaml",
            "duplicate-repo-b.yaml",
            "image-off-github.yaml",
            "name-mismatch.yaml",
            "removed.yaml",
            "requires-env-lowercase.yaml",
            "requires-hermes-calver.yaml",
            "unknown-key-typo.yaml",
            "version-pattern.yaml"
        ]
    );
    let strict = report::to_report(&outcome, true);
    assert_eq!(strict.summary.ok, 3, "warnings fail under --strict");

    let b = by_file["duplicate-name-b.yaml"];
    assert_eq!(
        (b.key.as_str(), b.format.as_str()),
        ("duplicate-name-a", "catalog-entry")
    );
    assert!(b.accepted && !b.ok);
    assert_eq!(b.counts.errors, 1);
    assert_eq!(b.counts.warnings, 1);
    assert_eq!(b.findings[0].file, b.path);
    let broken = by_file["invalid-yaml.yaml"];
    assert_eq!(broken.key, "invalid-yaml");
    assert!(!broken.accepted);
    assert_eq!(by_file["removed.yaml"].format, "catalog-removed");

    // Every check id in the report is described by rules(), with its spec id.
    let rules = catalog::rules();
    for p in &r.packages {
        for f in &p.findings {
            let rule = rules
                .iter()
                .find(|x| x.id == f.check)
                .expect("rule described");
            assert!(["CAT-1", "CAT-2", "SRC-4"].contains(&rule.spec));
        }
    }
}

#[test]
fn search_ranks_the_good_catalog() {
    let outcome = check::check(&[catalog_dir("good")]);
    let entries: Vec<catalog::Entry> = outcome.loaded().cloned().collect();
    let hits = search::search(&entries, "Weather");
    let got: Vec<(&str, &[&str])> = hits
        .iter()
        .map(|h| (h.name.as_str(), h.matched.as_slice()))
        .collect();
    assert_eq!(
        got,
        [
            ("weather", &["name", "tools", "tags"][..]),
            ("weather-alerts", &["name", "description"][..]),
        ]
    );
    assert_eq!(hits[0].tools, 2);
    assert_eq!(hits[0].tier, "community");

    let by_tool = search::search(&entries, "fetch_clean");
    assert_eq!(by_tool.len(), 1);
    assert_eq!(
        (by_tool[0].name.as_str(), by_tool[0].matched.as_slice()),
        ("web-search", &["tools"][..])
    );

    let by_tag = search::search(&entries, "research");
    assert_eq!(by_tag.len(), 1);
    assert_eq!(by_tag[0].matched, ["tags"]);
    assert!(search::search(&entries, "no such thing").is_empty());
}

#[test]
fn url_normalisation() {
    let key = "github.com/owner/repo";
    for spelling in [
        "https://github.com/owner/repo",
        "https://github.com/Owner/Repo.git",
        "http://www.github.com/owner/repo/",
        "ssh://git@github.com/owner/repo.git",
        "git://github.com/owner/repo",
        "git@github.com:owner/repo.git",
        "https://x-access-token:secret@github.com/owner/repo",
    ] {
        assert_eq!(url::normalize(spelling), key, "{spelling}");
    }
    assert_eq!(
        url::normalize("https://gitlab.com/Group/Sub/Repo.git/"),
        "gitlab.com/group/sub/repo"
    );
    assert_ne!(
        url::normalize("https://github.com/owner/repo"),
        url::normalize("https://github.com/owner/repo-two")
    );
}

/// Shapes of real upstream catalog entries (written for this test; the facts from upstream's
/// `plugin-catalog/`): `readme: false`/`true`, `subdir: ""`, a lowercase `requires_env` name,
/// a forked catalog's `requires_rabbit`, `onboarding`, `components`/`desktop_id`, an empty
/// `requires_hermes`. Upstream's validator accepts them all: `catalog check` passes, with
/// exactly our warnings (and fails only under `--strict`).
#[test]
fn real_upstream_shapes_pass_with_only_our_warnings() {
    let outcome = check::check(&[catalog_dir("upstream-shapes")]);
    let mut got: Vec<(String, Expected)> = per_file(&outcome)
        .into_iter()
        .flat_map(|(file, findings)| {
            summary(&findings)
                .into_iter()
                .map(move |s| (file.clone(), s))
                .collect::<Vec<_>>()
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("fork-search.yaml".to_string(), (ids::UNKNOWN_KEY, W, 7)),
            ("lowmem.yaml".to_string(), (ids::ENTRY_FIELD, W, 17)),
        ]
    );
    assert!(!outcome.fails(false));
    assert!(outcome.fails(true));
    let lowmem = outcome.loaded().find(|e| e.name == "lowmem").unwrap();
    assert_eq!(lowmem.subdir, None);
    assert_eq!(lowmem.readme, Some(false));
    let desk = outcome.loaded().find(|e| e.name == "desk-theme").unwrap();
    assert_eq!(desk.components, ["desktop-ui"]);
    assert_eq!(desk.desktop_id.as_deref(), Some("desk-theme"));
    // The binary agrees: exit 0, and 1 under --strict.
    let run = |strict: bool| {
        let mut args = vec!["catalog", "check"];
        if strict {
            args.push("--strict");
        }
        let dir = catalog_dir("upstream-shapes");
        args.push(dir.to_str().unwrap());
        crate::common::run(&args).code
    };
    assert_eq!(run(false), 0);
    assert_eq!(run(true), 1);
}
