//! Explaining a failed resolution in plugin terms (RES-4).
//!
//! uv's derivation tree is not public in the pinned crates, so the explanation is rebuilt from
//! what we know: which input (core, an extra, a plugin) requires which range of each package
//! uv names, what versions the index lists and when they were uploaded, and the quarantine
//! cutoffs. Two requirements whose ranges share no listed version are a conflict between their
//! owners; versions held back by the quarantine are named with their upload date and the date
//! they become eligible. uv's own report is kept alongside as detail.

use std::collections::BTreeMap;

use serde::Serialize;
use uv_normalize::PackageName;
use uv_pep440::VersionSpecifiers;
use uv_pep508::VersionOrUrl;

use super::engine::Listed;
use super::inputs::Labelled;
use super::quarantine::{Cutoff, CutoffSource, Quarantine, date};

/// A requirement on a conflicting package, by owner.
#[derive(Debug, Clone, Serialize)]
pub struct Demand {
    /// `core` or `plugin:<name>`.
    pub source: String,
    /// Human description ("plugin `weather`").
    pub who: String,
    /// The requirement as written.
    pub requirement: String,
}

/// A release held back by the quarantine.
#[derive(Debug, Clone, Serialize)]
pub struct HeldBack {
    /// The version.
    pub version: String,
    /// Upload date (`YYYY-MM-DD`).
    pub uploaded: String,
    /// Date it becomes eligible (`YYYY-MM-DD`), when the window (not an exemption date) applies.
    pub eligible_from: Option<String>,
}

/// One package in the conflict.
#[derive(Debug, Clone, Serialize)]
pub struct ConflictPackage {
    /// Normalised name.
    pub name: String,
    /// Who requires what.
    pub required_by: Vec<Demand>,
    /// Versions the index lists.
    pub available: Vec<String>,
    /// Releases the quarantine holds back.
    pub held_back: Vec<HeldBack>,
    /// The quarantine cutoff for this package (`YYYY-MM-DD`), if any.
    pub cutoff: Option<String>,
}

/// A failed resolution, explained.
#[derive(Debug, Clone, Serialize)]
pub struct Conflict {
    /// Plain sentences naming plugins, core, packages, versions and dates.
    pub sentences: Vec<String>,
    /// The same as data.
    pub packages: Vec<ConflictPackage>,
    /// The plugins involved.
    pub plugins: Vec<String>,
    /// uv's report, for detail.
    pub detail: String,
    /// uv's hints.
    pub hints: Vec<String>,
}

fn specifiers(l: &Labelled) -> VersionSpecifiers {
    match &l.requirement.version_or_url {
        Some(VersionOrUrl::VersionSpecifier(s)) => s.clone(),
        _ => VersionSpecifiers::empty(),
    }
}

fn fmt_ms(ms: i64) -> Option<jiff::Timestamp> {
    jiff::Timestamp::from_millisecond(ms).ok()
}

/// Two owners whose ranges share no listed version.
fn pairwise(demands: &[&Labelled], versions: &[&Listed], sentences: &mut Vec<String>) {
    for (i, a) in demands.iter().enumerate() {
        for b in demands.iter().skip(i + 1) {
            if a.source == b.source {
                continue;
            }
            let (sa, sb) = (specifiers(a), specifiers(b));
            let overlap = versions
                .iter()
                .any(|l| sa.contains(&l.version) && sb.contains(&l.version));
            if !overlap && !versions.is_empty() {
                let (first, second) = if matches!(b.source, super::inputs::Source::Plugin(_))
                    && !matches!(a.source, super::inputs::Source::Plugin(_))
                {
                    (b, a)
                } else {
                    (a, b)
                };
                let verb = if specifiers(second)
                    .iter()
                    .all(|s| matches!(s.operator(), uv_pep440::Operator::Equal))
                    && !specifiers(second).is_empty()
                {
                    "pins"
                } else {
                    "requires"
                };
                sentences.push(format!(
                    "{} requires `{}`, but {} {verb} `{}`",
                    first.source.describe(),
                    first.raw,
                    second.source.describe(),
                    second.raw
                ));
            }
        }
    }
}

/// Versions that satisfy every demand but are too new for the quarantine: the sentence
/// blaming the demands that leave no admitted version, and each held-back version.
fn quarantined(
    name: &PackageName,
    demands: &[&Labelled],
    versions: &[&Listed],
    (c, quarantine): (&Cutoff, &Quarantine),
    sentences: &mut Vec<String>,
    held_back: &mut Vec<HeldBack>,
) {
    let admitted = |l: &Listed| l.uploaded_ms.is_some_and(|ms| ms < c.at.as_millisecond());
    let satisfying: Vec<&&Listed> = versions
        .iter()
        .filter(|l| demands.iter().all(|d| specifiers(d).contains(&l.version)))
        .collect();
    let any_admitted = satisfying.iter().any(|l| admitted(l));
    if !any_admitted && !satisfying.is_empty() {
        // Blame the demands that alone leave no admitted version; failing that, every
        // demand that narrows the range at all.
        let narrowing: Vec<&&Labelled> = demands
            .iter()
            .filter(|d| !specifiers(d).is_empty())
            .collect();
        let excluding: Vec<&&Labelled> = narrowing
            .iter()
            .copied()
            .filter(|d| {
                let spec = specifiers(d);
                !versions
                    .iter()
                    .any(|l| admitted(l) && spec.contains(&l.version))
            })
            .collect();
        let blamed = if excluding.is_empty() {
            narrowing
        } else {
            excluding
        };
        let who = blamed
            .iter()
            .map(|d| format!("{} requires `{}`", d.source.describe(), d.raw))
            .collect::<Vec<_>>()
            .join(" and ");
        for l in &satisfying {
            let Some(uploaded) = l.uploaded_ms.and_then(fmt_ms) else {
                held_back.push(HeldBack {
                    version: l.version.to_string(),
                    uploaded: "unknown".into(),
                    eligible_from: None,
                });
                continue;
            };
            let eligible = quarantine.eligible_from(name, uploaded).map(date);
            held_back.push(HeldBack {
                version: l.version.to_string(),
                uploaded: date(uploaded),
                eligible_from: eligible,
            });
        }
        let newest = satisfying.iter().max_by(|a, b| a.version.cmp(&b.version));
        if let Some(newest) = newest {
            let rule = match &c.source {
                CutoffSource::Window => match newest.uploaded_ms.and_then(fmt_ms) {
                    Some(up) => format!(
                        "{name} {} was uploaded {}; the core quarantine admits it from {}",
                        newest.version,
                        date(up),
                        quarantine
                            .eligible_from(name, up)
                            .map(date)
                            .unwrap_or_default()
                    ),
                    None => format!(
                        "{name} {} has no upload time, so the core quarantine never admits it",
                        newest.version
                    ),
                },
                CutoffSource::Exemption(text) => format!(
                    "{name} {} is newer than core's exemption date {text} for {name}",
                    newest.version
                ),
            };
            if who.is_empty() {
                sentences.push(rule);
            } else {
                sentences.push(format!("{who}: {rule}"));
            }
        }
    }
}

/// One demand and no listed version in its range, or nothing listed at all.
fn out_of_range(
    name: &PackageName,
    demands: &[&Labelled],
    versions: &[&Listed],
    sentences: &mut Vec<String>,
) {
    if demands.len() == 1 && !versions.is_empty() {
        let d = demands[0];
        let spec = specifiers(d);
        if !versions.iter().any(|l| spec.contains(&l.version)) {
            sentences.push(format!(
                "{} requires `{}`, but {name} is offered only at {}",
                d.source.describe(),
                d.raw,
                versions
                    .iter()
                    .map(|l| l.version.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    if versions.is_empty() && !demands.is_empty() {
        for d in demands {
            sentences.push(format!(
                "{} requires `{}`, but no index or --find-links location offers {name}",
                d.source.describe(),
                d.raw
            ));
        }
    }
}

/// A conflict no two direct requirements show: the plugins' requirements meet core's only
/// through the dependencies of the releases the index offers (a plugin requires
/// `opentelemetry-sdk`, every release of which pins its own `opentelemetry-api`, while the
/// installed Hermes has another). Named by owner as far as the inputs tell; uv's derivation,
/// kept as detail, says which release depends on what.
fn through_dependencies(
    packages: &[PackageName],
    inputs: &[Labelled],
    sentences: &mut Vec<String>,
) {
    let named = |l: &&Labelled| packages.contains(&l.requirement.name);
    let mut by_plugin: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    let mut core = Vec::new();
    for l in inputs.iter().filter(named) {
        match &l.source {
            super::inputs::Source::Plugin(_) => by_plugin
                .entry(l.source.describe())
                .or_default()
                .push(l.raw.as_str()),
            _ => core.push(format!("`{}`", l.raw)),
        }
    }
    if by_plugin.is_empty() || core.is_empty() {
        return;
    }
    core.sort();
    core.dedup();
    for (who, requirements) in by_plugin {
        sentences.push(format!(
            "{who} requires {}, and no release of what that needs, as the index offers them, fits Hermes core's {} (see uv's derivation for which release depends on what): a generation adds to Hermes's environment and never changes what it has",
            requirements
                .iter()
                .map(|r| format!("`{r}`"))
                .collect::<Vec<_>>()
                .join(", "),
            core.join(", ")
        ));
    }
}

/// Builds the explanation.
pub fn explain(
    packages: &[PackageName],
    listed: &BTreeMap<PackageName, Vec<Listed>>,
    inputs: &[Labelled],
    quarantine: &Quarantine,
    report: &str,
    hints: &[String],
) -> Conflict {
    let mut sentences = Vec::new();
    let mut out_packages = Vec::new();
    let mut plugins = std::collections::BTreeSet::new();
    for name in packages {
        let demands: Vec<&Labelled> = inputs
            .iter()
            .filter(|l| &l.requirement.name == name)
            .collect();
        let versions: Vec<&Listed> = listed
            .get(name)
            .map(|v| v.iter().collect())
            .unwrap_or_default();
        let cutoff = quarantine.cutoffs.get(name);
        let mut held_back = Vec::new();
        for d in &demands {
            if let super::inputs::Source::Plugin(p) = &d.source {
                plugins.insert(p.clone());
            }
        }
        // 1. Pairwise: two owners whose ranges share no listed version.
        pairwise(&demands, &versions, &mut sentences);
        // 2. Quarantine: versions that satisfy every demand but are too new.
        if let Some(c) = cutoff {
            quarantined(
                name,
                &demands,
                &versions,
                (c, quarantine),
                &mut sentences,
                &mut held_back,
            );
        }
        // 3. Nothing at all in range.
        out_of_range(name, &demands, &versions, &mut sentences);
        if !demands.is_empty() || !held_back.is_empty() {
            out_packages.push(ConflictPackage {
                name: name.to_string(),
                required_by: demands
                    .iter()
                    .map(|d| Demand {
                        source: d.source.label(),
                        who: d.source.describe(),
                        requirement: d.raw.clone(),
                    })
                    .collect(),
                available: versions.iter().map(|l| l.version.to_string()).collect(),
                held_back,
                cutoff: cutoff.map(|c| date(c.at)),
            });
        }
    }
    sentences.dedup();
    // An index that refused to answer (401, 403) lists nothing: that comes first, and "no
    // index offers X" would be untrue.
    let refusals: Vec<&String> = hints
        .iter()
        .filter(|h| {
            h.contains("401 Unauthorized")
                || h.contains("403 Forbidden")
                || h.contains("authentication credentials")
        })
        .collect();
    if !refusals.is_empty() {
        for s in &mut sentences {
            if let Some(i) = s.find(", but no index or --find-links location offers ") {
                *s = format!("{}, but the index refused to list it", &s[..i]);
            }
        }
        for (i, h) in refusals.into_iter().enumerate() {
            sentences.insert(i, h.clone());
        }
    }
    if sentences.is_empty() {
        through_dependencies(packages, inputs, &mut sentences);
    }
    if sentences.is_empty() {
        sentences.push(format!(
            "uv found no solution: {}",
            report
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    Conflict {
        sentences,
        packages: out_packages,
        plugins: plugins.into_iter().collect(),
        detail: report.to_string(),
        hints: hints.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::str::FromStr;

    use uv_normalize::PackageName;

    use super::explain;
    use crate::resolve::inputs::{Labelled, Source};
    use crate::resolve::quarantine::Quarantine;

    fn labelled(source: Source, raw: &str) -> Labelled {
        Labelled {
            source,
            raw: raw.to_string(),
            requirement: uv_pep508::Requirement::from_str(raw).unwrap(),
        }
    }

    /// The plugin and core meet only through a dependency's dependency: both owners are named,
    /// not only uv's derivation.
    #[test]
    fn a_conflict_through_dependencies_names_the_plugin_and_what_core_has() {
        let names: Vec<PackageName> = ["opentelemetry-sdk", "opentelemetry-api"]
            .iter()
            .map(|n| PackageName::from_str(n).unwrap())
            .collect();
        let inputs = [
            labelled(Source::Plugin("otel".into()), "opentelemetry-sdk>=1.27"),
            labelled(Source::Core, "opentelemetry-api==1.45.3"),
            labelled(Source::Core, "httpx==0.28.1"),
        ];
        let listed = |versions: &[&str]| -> Vec<crate::resolve::engine::Listed> {
            versions
                .iter()
                .map(|v| crate::resolve::engine::Listed {
                    version: v.parse().unwrap(),
                    uploaded_ms: None,
                })
                .collect()
        };
        let offered = BTreeMap::from([
            (names[0].clone(), listed(&["1.27.0", "1.45.2"])),
            (names[1].clone(), listed(&["1.27.0", "1.45.2", "1.45.3"])),
        ]);
        let conflict = explain(
            &names,
            &offered,
            &inputs,
            &Quarantine {
                days: 14,
                now: jiff::Timestamp::UNIX_EPOCH,
                cutoffs: BTreeMap::new(),
                exempt: Vec::new(),
            },
            "Because opentelemetry-sdk>=1.27 depends on opentelemetry-api<=1.45.2 …",
            &[],
        );
        assert_eq!(conflict.sentences.len(), 1, "{:?}", conflict.sentences);
        let s = &conflict.sentences[0];
        assert!(
            s.starts_with("plugin `otel` requires `opentelemetry-sdk>=1.27`")
                && s.contains("Hermes core's `opentelemetry-api==1.45.3`")
                && !s.contains("httpx"),
            "{s}"
        );
        assert_eq!(conflict.plugins, ["otel"]);
    }
}
