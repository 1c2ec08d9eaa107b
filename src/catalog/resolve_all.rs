//! `catalog resolve-all` (CAT-4): every entry resolved with Hermes core under the quarantine,
//! each alone and then all together; when the joint resolution fails, bisection names the
//! entry whose addition breaks it and the first partner it conflicts with, and the search
//! repeats without that entry until the rest resolves. All resolutions share one uv session,
//! so index metadata is fetched once; the entries' repositories are fetched first, several at
//! a time.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::entry::Entry;
use crate::resolve::inputs::{self, PluginInput};
use crate::resolve::{BatchResolver, Failure, Request};
use crate::source::{self, git};

/// What happened to one entry.
#[derive(Debug, Clone, Serialize)]
pub struct EntryResult {
    /// Entry name.
    pub name: String,
    /// The entry file.
    pub file: PathBuf,
    /// Whether it passed every stage.
    pub ok: bool,
    /// The stage that failed: `fetch`, `manifest`, `resolve` (alone), `joint`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage: Option<&'static str>,
    /// Why, in one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Packages resolved alone with core.
    pub packages: usize,
}

/// The whole run.
#[derive(Debug, Clone, Serialize)]
pub struct ResolveAll {
    /// Per entry, in name order.
    pub entries: Vec<EntryResult>,
    /// Whether every entry that resolves alone also resolves together with all the others
    /// (after removing the culprits found).
    pub joint_ok: bool,
    /// Conflicting pairs found by bisection: (entry whose addition breaks, its partner).
    pub conflicts: Vec<(String, String)>,
    /// How many resolutions ran.
    pub resolutions: usize,
    /// Whether Hermes core took part (the human lines say what the counts are counted with).
    #[serde(skip)]
    pub with_core: bool,
}

fn first_sentence(f: &Failure) -> String {
    match f {
        Failure::Conflict(c) => c
            .sentences
            .first()
            .cloned()
            .unwrap_or_else(|| "no solution".to_string()),
        Failure::Environment(_, m, _) => m.clone(),
    }
}

/// An entry fetched at its pin, its requirements labelled by the entry's name (which reviewers
/// know); the stage (`fetch`, `manifest`) and reason when that fails.
fn entry_input(entry: &Entry, checkout: &Path, git_cache: &Path) -> Fetched {
    git::checkout_sha_cached(&entry.repo, &entry.sha, git_cache, checkout, &mut |_, _| {})
        .map_err(|e| ("fetch", e.to_string()))?;
    let dir = source::contained_subdir(checkout, entry.subdir.as_deref())
        .map_err(|e| ("fetch", e.to_string()))?;
    let mut input = inputs::plugin_from_dir(&dir).map_err(|e| ("manifest", e.to_string()))?;
    input.name = entry.name.clone();
    for r in &mut input.requirements {
        r.source = inputs::Source::Plugin(entry.name.clone());
    }
    Ok(input)
}

/// An entry's requirements, or the stage that failed and why.
type Fetched = Result<PluginInput, (&'static str, String)>;

/// How many repositories are fetched at once.
const FETCH_JOBS: usize = 4;

/// Every entry fetched at its pin (see [`entry_input`]), [`FETCH_JOBS`] repositories at a
/// time; entries of the same repository go one after the other in one worker, so its cached
/// bare repository is fetched into once. Results are in `entries`' order.
fn fetch_all(entries: &[&Entry], scratch: &Path, git_cache: &Path) -> Vec<Fetched> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut by_repo: std::collections::HashMap<String, usize> = Default::default();
    for (i, entry) in entries.iter().enumerate() {
        let repo = crate::repo_url::normalize(&entry.repo);
        let group = *by_repo.entry(repo).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[group].push(i);
    }
    let fetched = crate::parallel::map(&groups, FETCH_JOBS, None, |group| {
        group
            .iter()
            .map(|&i| {
                let input = entry_input(entries[i], &scratch.join(format!("{i}")), git_cache);
                (i, input)
            })
            .collect::<Vec<_>>()
    });
    let mut results: Vec<Option<Fetched>> = (0..entries.len()).map(|_| None).collect();
    for (i, input) in fetched.into_iter().flatten() {
        results[i] = Some(input);
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(("fetch", "not fetched".to_string()))))
        .collect()
}

/// A conflicting pair `(j, k)` of `all`, whose members each resolve alone while all of them
/// together do not: the smallest `k` with `all[..=k]` failing, then the smallest `j < k` with
/// `all[..=j] + all[k]` failing — O(log n) resolutions each.
fn bisect(
    all: &[PluginInput],
    fails: &mut dyn FnMut(&[PluginInput]) -> Result<bool, Failure>,
) -> Result<(usize, usize), Failure> {
    let (mut lo, mut hi) = (1usize, all.len() - 1);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if fails(&all[..=mid])? {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let k = lo;
    let (mut lo, mut hi) = (0usize, k - 1);
    while lo < hi {
        let mid = (lo + hi) / 2;
        let mut set: Vec<PluginInput> = all[..=mid].to_vec();
        set.push(all[k].clone());
        if fails(&set)? {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok((lo, k))
}

/// A checked catalog's entries split into those that can be resolved and those that
/// cannot: (name, file, the first error) for each of the latter, which [`resolve_all`]
/// reports as failed without fetching them.
pub fn usable(outcome: super::check::CheckOutcome) -> (Vec<Entry>, Vec<(String, PathBuf, String)>) {
    let mut entries = Vec::new();
    let mut unusable = Vec::new();
    for (file, entry, findings) in outcome.entries {
        match entry {
            Some(e) => entries.push(e),
            None => unusable.push((
                file.file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                file.clone(),
                findings
                    .iter()
                    .find(|f| f.severity == crate::diag::Severity::Error)
                    .map_or_else(|| "unusable entry".to_string(), |f| f.message.clone()),
            )),
        }
    }
    (entries, unusable)
}

/// Resolves every entry. `base` gives core, interpreter, index and quarantine; `git_cache`
/// holds bare repositories reused across runs; `scratch` is an empty directory for the
/// checkouts. Environment failures of the resolver are errors.
/// `unusable` are entry files that could not be read as entries: `(name, file, reason)`;
/// they are reported at the `entry` stage.
pub fn resolve_all(
    entries: &[Entry],
    unusable: &[(String, PathBuf, String)],
    base: &Request,
    git_cache: &Path,
    scratch: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<ResolveAll, Failure> {
    let resolver = BatchResolver::start(base)?;
    let mut resolutions = 0usize;
    let mut results: Vec<EntryResult> = unusable
        .iter()
        .map(|(name, file, reason)| EntryResult {
            name: name.clone(),
            file: file.clone(),
            ok: false,
            stage: Some("entry"),
            reason: Some(reason.clone()),
            packages: 0,
        })
        .collect();
    let mut inputs_ok: Vec<(usize, PluginInput)> = Vec::new();
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    progress(&format!(
        "fetching {} entries at their pins ({FETCH_JOBS} repositories at a time)",
        sorted.len()
    ));
    let fetched = fetch_all(&sorted, scratch, git_cache);
    for (entry, fetched) in sorted.iter().zip(fetched) {
        let mut result = EntryResult {
            name: entry.name.clone(),
            file: entry.file.clone(),
            ok: false,
            stage: None,
            reason: None,
            packages: 0,
        };
        let input = match fetched {
            Ok(input) => input,
            Err((stage, reason)) => {
                result.stage = Some(stage);
                result.reason = Some(reason);
                results.push(result);
                continue;
            }
        };
        progress(&format!("{}: resolving alone", entry.name));
        resolutions += 1;
        match resolver.run(std::slice::from_ref(&input)) {
            Ok(o) => {
                result.ok = true;
                result.packages = o.lock.packages.len();
                inputs_ok.push((results.len(), input));
            }
            Err(Failure::Environment(c, m, why)) => return Err(Failure::Environment(c, m, why)),
            Err(f) => {
                result.stage = Some("resolve");
                result.reason = Some(first_sentence(&f));
            }
        }
        results.push(result);
    }

    // Joint resolution, with bisection on failure.
    let mut conflicts = Vec::new();
    let mut pool: Vec<(usize, PluginInput)> = inputs_ok;
    let mut joint_ok = true;
    loop {
        if pool.len() < 2 {
            break;
        }
        progress(&format!("resolving {} entries together", pool.len()));
        let all: Vec<PluginInput> = pool.iter().map(|(_, p)| p.clone()).collect();
        resolutions += 1;
        let failure = match resolver.run(&all) {
            Ok(_) => break,
            Err(Failure::Environment(c, m, why)) => return Err(Failure::Environment(c, m, why)),
            Err(f) => f,
        };
        joint_ok = false;
        let mut fails = |set: &[PluginInput]| -> Result<bool, Failure> {
            resolutions += 1;
            match resolver.run(set) {
                Ok(_) => Ok(false),
                Err(Failure::Environment(c, m, why)) => Err(Failure::Environment(c, m, why)),
                Err(_) => Ok(true),
            }
        };
        let (j, k) = bisect(&all, &mut fails)?;
        let (ki, kname) = (pool[k].0, pool[k].1.name.clone());
        let (ji, jname) = (pool[j].0, pool[j].1.name.clone());
        // The pair's own explanation, when the two alone already conflict.
        let mut pair = vec![all[j].clone(), all[k].clone()];
        resolutions += 1;
        let reason = match resolver.run(&pair) {
            Err(Failure::Environment(c, m, why)) => return Err(Failure::Environment(c, m, why)),
            Err(f) => first_sentence(&f),
            Ok(_) => {
                pair.clear();
                first_sentence(&failure)
            }
        };
        results[ki].ok = false;
        results[ki].stage = Some("joint");
        results[ki].reason = Some(format!("conflicts with `{jname}`: {reason}"));
        if results[ji].ok {
            results[ji].ok = false;
            results[ji].stage = Some("joint");
            results[ji].reason = Some(format!("conflicts with `{kname}`: {reason}"));
        }
        conflicts.push((kname, jname));
        pool.remove(k);
    }
    results.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(ResolveAll {
        entries: results,
        joint_ok,
        conflicts,
        resolutions,
        with_core: base.core.is_some(),
    })
}

/// GitHub annotation lines: `::error file=<entry>::<name>: <stage>: <reason>`.
pub fn github(report: &ResolveAll) -> String {
    let mut out = String::new();
    for e in report.entries.iter().filter(|e| !e.ok) {
        let reason = e
            .reason
            .as_deref()
            .unwrap_or("failed")
            .replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A");
        out.push_str(&format!(
            "::error file={}::{}: {}: {}\n",
            e.file.display(),
            e.name,
            e.stage.unwrap_or("resolve"),
            reason
        ));
    }
    out
}

/// Human lines.
pub fn human(report: &ResolveAll) -> String {
    let mut out = String::new();
    for e in &report.entries {
        match (e.ok, e.stage) {
            (true, _) => out.push_str(&format!(
                "✓ {} ({} package(s){})\n",
                e.name,
                e.packages,
                if report.with_core {
                    " with core"
                } else {
                    ", without core"
                }
            )),
            (false, stage) => out.push_str(&format!(
                "✗ {}: {}: {}\n",
                e.name,
                stage.unwrap_or("resolve"),
                e.reason.as_deref().unwrap_or("failed")
            )),
        }
    }
    let failed = report.entries.iter().filter(|e| !e.ok).count();
    out.push_str(&format!(
        "{} entries, {} failed; together: {}; {} resolutions\n",
        report.entries.len(),
        failed,
        if report.joint_ok {
            "ok"
        } else {
            "conflicts found"
        },
        report.resolutions
    ));
    out
}
