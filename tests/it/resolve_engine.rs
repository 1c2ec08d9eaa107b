//! The uv engine against the loopback test index.

use crate::common;

use std::collections::BTreeMap;
use std::str::FromStr;

use common::index::{TestIndex, Wheel};
use hermes_plugins::resolve::engine::{self, EngineError, EngineRequest, IndexConfig};
use uv_normalize::PackageName;

fn python() -> std::path::PathBuf {
    which("python3")
}

fn which(name: &str) -> std::path::PathBuf {
    std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .find(|c| c.is_file())
        })
        .expect("python3 on PATH")
}

fn request(index: &TestIndex, cache: &std::path::Path, reqs: &[&str]) -> EngineRequest {
    EngineRequest {
        python: python(),
        cache: hermes_plugins::resolve::engine::UvCache::at(cache),
        index: IndexConfig {
            index_url: Some(index.url()),
            ..IndexConfig::default()
        },
        requirements: reqs.iter().map(|r| r.parse().unwrap()).collect(),
        preferences: Vec::new(),
        constraints: Vec::new(),
        cutoffs: BTreeMap::new(),
    }
}

#[test]
fn resolves_against_the_test_index() {
    let index = TestIndex::start(&[
        Wheel::new("alpha", "1.0.0", "2026-01-01T00:00:00Z"),
        Wheel::new("alpha", "2.0.0", "2026-06-01T00:00:00Z"),
        Wheel::new("beta", "1.0.0", "2026-01-01T00:00:00Z").requires("alpha<2"),
    ]);
    let cache = tempfile::tempdir().unwrap();
    let resolved = engine::resolve(request(&index, cache.path(), &["beta"])).expect("resolves");
    let got: Vec<(String, String)> = resolved
        .packages
        .iter()
        .map(|p| (p.name.to_string(), p.version.to_string()))
        .collect();
    assert_eq!(
        got,
        [
            ("alpha".to_string(), "1.0.0".to_string()),
            ("beta".to_string(), "1.0.0".to_string())
        ]
    );
    assert!(
        resolved.packages[0]
            .sha256
            .as_deref()
            .is_some_and(|h| h.len() == 64)
    );
    assert!(
        resolved.packages[0]
            .url
            .as_deref()
            .unwrap()
            .ends_with("alpha-1.0.0-py3-none-any.whl")
    );
    assert!(resolved.edges.contains(&(
        Some(PackageName::from_str("beta").unwrap()),
        PackageName::from_str("alpha").unwrap()
    )));

    // A cutoff before alpha 2.0.0 keeps `alpha` at 1.0.0.
    let mut req = request(&index, cache.path(), &["alpha"]);
    req.cutoffs.insert(
        PackageName::from_str("alpha").unwrap(),
        "2026-03-01T00:00:00Z".parse().unwrap(),
    );
    let resolved = engine::resolve(req).expect("resolves");
    assert_eq!(resolved.packages[0].version.to_string(), "1.0.0");

    // And with `alpha>=2` the cutoff makes it unsatisfiable.
    let mut req = request(&index, cache.path(), &["alpha>=2"]);
    req.cutoffs.insert(
        PackageName::from_str("alpha").unwrap(),
        "2026-03-01T00:00:00Z".parse().unwrap(),
    );
    match engine::resolve(req) {
        Err(EngineError::NoSolution(no)) => {
            let alpha = &no.listed[&PackageName::from_str("alpha").unwrap()];
            assert_eq!(alpha.len(), 2, "{}", no.report);
            assert!(alpha[1].uploaded_ms.is_some());
        }
        other => panic!("expected no solution, got {other:?}"),
    }
}
