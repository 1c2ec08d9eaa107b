//! The resolutions one run of the binary has made, by what decided them: installing a
//! distribution from the package index resolves once to choose its release and once more for
//! the generation, and when the generation asks exactly what the first resolution answered,
//! the second is that answer (one resolution, not two).
//!
//! Only what uv's resolver is given decides its answer ([`Decisive`]): the interpreter, the
//! indexes, the requirements (not who asked for them: the lock's labels are built again for
//! each request), the constraints, the cutoffs and the preferred versions. A preference for a
//! package that a requirement pins to one exact version cannot change anything and is left
//! out, so that a release chosen with its old version preferred (an `update`) and then pinned
//! compares equal to the generation that pins it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use uv_normalize::PackageName;
use uv_pep440::{Operator, Version};
use uv_pep508::VersionOrUrl;

use super::engine::{EngineRequest, IndexConfig, Resolved};

/// What decides a resolution's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decisive {
    python: PathBuf,
    index: IndexConfig,
    requirements: Vec<String>,
    constraints: Vec<String>,
    preferences: Vec<(PackageName, Version)>,
    cutoffs: BTreeMap<PackageName, jiff::Timestamp>,
}

impl Decisive {
    /// The decisive part of `request`.
    pub fn of(request: &EngineRequest) -> Decisive {
        let sorted = |rs: &[uv_pep508::Requirement<uv_pep508::VerbatimUrl>]| {
            let mut out: Vec<String> = rs.iter().map(ToString::to_string).collect();
            out.sort();
            out.dedup();
            out
        };
        let pinned: Vec<&PackageName> = request
            .requirements
            .iter()
            .filter(|r| exact_pin(r))
            .map(|r| &r.name)
            .collect();
        let mut preferences: Vec<(PackageName, Version)> = request
            .preferences
            .iter()
            .filter(|(name, _)| !pinned.contains(&name))
            .cloned()
            .collect();
        preferences.sort();
        Decisive {
            python: request.python.clone(),
            index: request.index.clone(),
            requirements: sorted(&request.requirements),
            constraints: sorted(&request.constraints),
            preferences,
            cutoffs: request.cutoffs.clone(),
        }
    }
}

/// `name==X` (one version, no wildcard, no markers): the only version the resolver may pick.
fn exact_pin(r: &uv_pep508::Requirement<uv_pep508::VerbatimUrl>) -> bool {
    let Some(VersionOrUrl::VersionSpecifier(specifiers)) = &r.version_or_url else {
        return false;
    };
    r.marker.is_true()
        && specifiers.len() == 1
        && specifiers
            .iter()
            .all(|s| matches!(s.operator(), Operator::Equal | Operator::ExactEqual))
}

/// Whether `r` pins its package to exactly the version `answer` has.
pub fn pins_to(r: &uv_pep508::Requirement<uv_pep508::VerbatimUrl>, answer: &Resolved) -> bool {
    let Some(VersionOrUrl::VersionSpecifier(specifiers)) = &r.version_or_url else {
        return false;
    };
    exact_pin(r)
        && answer
            .packages
            .iter()
            .any(|p| p.name == r.name && specifiers.contains(&p.version))
}

/// Whether two lists hold the same requirements, in any order.
pub fn same_requirements(
    a: &[uv_pep508::Requirement<uv_pep508::VerbatimUrl>],
    b: &[uv_pep508::Requirement<uv_pep508::VerbatimUrl>],
) -> bool {
    let strings = |rs: &[uv_pep508::Requirement<uv_pep508::VerbatimUrl>]| {
        let mut out: Vec<String> = rs.iter().map(ToString::to_string).collect();
        out.sort();
        out
    };
    strings(a) == strings(b)
}

/// Resolutions made so far in this process (shared by clones: one run's operations share
/// it). Never written to disk: a later run resolves again, or reuses a generation's lock by
/// its resolution digest.
#[derive(Debug, Clone, Default)]
pub struct Memo(Arc<Mutex<Vec<(Decisive, Resolved)>>>);

impl Memo {
    /// The answer remembered for `decisive`, if any.
    pub(super) fn get(&self, decisive: &Decisive) -> Option<Resolved> {
        let held = self.0.lock().unwrap_or_else(|e| e.into_inner());
        held.iter()
            .find(|(d, _)| d == decisive)
            .map(|(_, r)| r.clone())
    }

    /// Remembers `resolved` as the answer for `decisive`.
    pub(super) fn put(&self, decisive: Decisive, resolved: Resolved) {
        let mut held = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if !held.iter().any(|(d, _)| *d == decisive) {
            held.push((decisive, resolved));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn request(requirements: &[&str], preferences: &[(&str, &str)]) -> EngineRequest {
        EngineRequest {
            python: PathBuf::from("/usr/bin/python3"),
            cache: super::super::engine::UvCache {
                home: PathBuf::from("/cache"),
                interpreters: None,
            },
            index: IndexConfig::default(),
            requirements: requirements
                .iter()
                .map(|r| uv_pep508::Requirement::from_str(r).unwrap())
                .collect(),
            preferences: preferences
                .iter()
                .map(|(n, v)| {
                    (
                        PackageName::from_str(n).unwrap(),
                        Version::from_str(v).unwrap(),
                    )
                })
                .collect(),
            constraints: Vec::new(),
            cutoffs: BTreeMap::new(),
        }
    }

    #[test]
    fn who_asked_and_in_which_order_does_not_decide() {
        assert_eq!(
            Decisive::of(&request(&["b>=1", "a==1.0"], &[("x", "1")])),
            Decisive::of(&request(&["a==1.0", "b>=1", "b>=1"], &[("x", "1")]))
        );
    }

    #[test]
    fn a_preference_decides_unless_a_requirement_pins_its_package() {
        // `a` pinned: its old version preferred or not, the answer is `a==2`.
        assert_eq!(
            Decisive::of(&request(&["a==2"], &[("a", "1"), ("x", "1")])),
            Decisive::of(&request(&["a==2"], &[("x", "1")]))
        );
        // `a` loose, or pinned with a wildcard: the preference can pick the version.
        assert_ne!(
            Decisive::of(&request(&["a>=1"], &[("a", "1")])),
            Decisive::of(&request(&["a>=1"], &[]))
        );
        assert_ne!(
            Decisive::of(&request(&["a==1.*"], &[("a", "1.0")])),
            Decisive::of(&request(&["a==1.*"], &[]))
        );
        assert_ne!(
            Decisive::of(&request(&["a==2"], &[("x", "1")])),
            Decisive::of(&request(&["a==2"], &[("x", "2")]))
        );
    }

    #[test]
    fn a_requirement_with_a_marker_is_no_exact_pin() {
        let r = uv_pep508::Requirement::from_str("a==1; python_version < '3'").unwrap();
        assert!(!exact_pin(&r));
        assert!(exact_pin(
            &uv_pep508::Requirement::from_str("a[extra]===1").unwrap()
        ));
    }
}
