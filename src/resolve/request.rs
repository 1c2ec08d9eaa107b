//! One resolution: a [`Request`] run through uv's resolver into a lock or a conflict.

use super::{conflict, engine, inputs, lock, memo, quarantine};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::PathBuf;

use crate::exit::Code;
use uv_normalize::PackageName;
use uv_pep440::Version;

use engine::{EngineError, EngineRequest, FileKind, IndexConfig, Resolved};
use inputs::{CoreInputs, Labelled, PluginInput, Source};
use lock::{Lock, LockCore, LockExcluded, LockInput, LockPackage, LockPython};
use quarantine::Quarantine;

/// Everything one resolution needs.
#[derive(Debug, Clone)]
pub struct Request {
    /// Hermes core (its requirements, lock and exemptions), if given.
    pub core: Option<CoreInputs>,
    /// Extras of core selected.
    pub extras: Vec<String>,
    /// The plugins whose requirements join core's.
    pub plugins: Vec<PluginInput>,
    /// The target interpreter.
    pub python: PathBuf,
    /// uv's caches.
    pub cache: super::engine::UvCache,
    /// Where packages come from.
    pub index: IndexConfig,
    /// Quarantine window in days.
    pub quarantine_days: u32,
    /// "Now".
    pub now: jiff::Timestamp,
    /// The previous lock, whose versions are preferred and against which changes are shown.
    pub previous: Option<Lock>,
}

/// A successful resolution.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The lock.
    pub lock: Lock,
    /// The quarantine applied.
    pub quarantine: Quarantine,
}

/// Why there is no lock.
#[derive(Debug)]
pub enum Failure {
    /// The requirements conflict (exit 1).
    Conflict(Box<conflict::Conflict>),
    /// The index (`Code::Network`), interpreter (`Code::Interpreter`) or cache is not usable
    /// (exit 3): the code, what failed, and the errors that caused it.
    Environment(Code, String, Vec<String>),
}

impl Failure {
    /// The failure of an engine error, coded by what was not usable.
    fn of_engine(e: EngineError) -> Failure {
        Failure::Environment(e.code(), e.to_string(), e.causes())
    }
}

impl Request {
    /// What the lock records as its inputs: each source's requirements as written, and the
    /// requirements left out. Two requests with equal inputs (and equal core, interpreter and
    /// index) resolve to the same lock.
    pub fn lock_inputs(&self) -> (Vec<LockInput>, Vec<LockExcluded>) {
        let mut inputs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for l in self.labelled() {
            inputs
                .entry(l.source.label())
                .or_default()
                .insert(l.raw.clone());
        }
        for p in &self.plugins {
            inputs
                .entry(Source::Plugin(p.name.clone()).label())
                .or_default();
        }
        let mut inputs: Vec<LockInput> = inputs
            .into_iter()
            .map(|(source, reqs)| LockInput {
                source,
                requirements: reqs.into_iter().collect(),
            })
            .collect();
        inputs.sort_by_key(|i| (i.source != "core", i.source.clone()));
        let mut excluded: Vec<LockExcluded> = self
            .plugins
            .iter()
            .flat_map(|p| p.excluded.iter())
            .map(|e| LockExcluded {
                source: e.source.label(),
                requirement: e.raw.clone(),
                reason: e.reason.as_str().to_string(),
            })
            .collect();
        excluded.sort_by(|a, b| (&a.source, &a.requirement).cmp(&(&b.source, &b.requirement)));
        (inputs, excluded)
    }

    /// All labelled requirements: core's, then each plugin's.
    pub fn labelled(&self) -> Vec<Labelled> {
        let mut out: Vec<Labelled> = self
            .core
            .iter()
            .flat_map(|c| c.requirements.iter().cloned())
            .collect();
        for p in &self.plugins {
            out.extend(p.requirements.iter().cloned());
        }
        out
    }
}

/// Runs the resolution.
pub fn run(request: &Request) -> Result<Outcome, Failure> {
    let quarantine = quarantine_of(request)?;
    let labelled = request.labelled();
    let engine_request = engine_request(request, &labelled, &quarantine);
    finish(
        request,
        &labelled,
        quarantine,
        engine::resolve(engine_request),
    )
}

/// [`run`], answered from `memo` when this process already resolved what decides the answer
/// (and remembered there when not).
pub fn run_remembered(request: &Request, memo: &memo::Memo) -> Result<Outcome, Failure> {
    let quarantine = quarantine_of(request)?;
    let labelled = request.labelled();
    let engine_request = engine_request(request, &labelled, &quarantine);
    let decisive = memo::Decisive::of(&engine_request);
    let result = match memo.get(&decisive) {
        Some(resolved) => {
            tracing::debug!("resolution answered by an earlier one of this run");
            Ok(resolved)
        }
        None => {
            let result = engine::resolve(engine_request);
            if let Ok(resolved) = &result {
                memo.put(decisive, resolved.clone());
            }
            result
        }
    };
    finish(request, &labelled, quarantine, result)
}

/// Remembers `asked`'s answer (resolved through `memo`) as `narrowed`'s too, where `narrowed`
/// differs from `asked` only by requirements that pin a package to the version the answer
/// has (`NAME` became `NAME==` the version chosen): the answer satisfies it, and the resolver
/// has nothing left to choose differently. Anything else is not remembered.
pub fn remember_narrowed(memo: &memo::Memo, asked: &Request, narrowed: &Request) {
    let engine_of = |request: &Request| {
        let quarantine = quarantine_of(request).ok()?;
        Some(engine_request(request, &request.labelled(), &quarantine))
    };
    let (Some(asked), Some(narrowed)) = (engine_of(asked), engine_of(narrowed)) else {
        return;
    };
    let Some(answer) = memo.get(&memo::Decisive::of(&asked)) else {
        return;
    };
    let kept: Vec<String> = asked.requirements.iter().map(ToString::to_string).collect();
    let narrows = narrowed
        .requirements
        .iter()
        .filter(|r| !kept.contains(&r.to_string()))
        .all(|r| memo::pins_to(r, &answer));
    let dropped = asked.requirements.iter().all(|a| {
        narrowed
            .requirements
            .iter()
            .any(|n| n.to_string() == a.to_string() || n.name == a.name)
    });
    let same_otherwise = asked.python == narrowed.python
        && asked.index == narrowed.index
        && asked.cutoffs == narrowed.cutoffs
        && memo::same_requirements(&asked.constraints, &narrowed.constraints);
    if narrows && dropped && same_otherwise {
        memo.put(memo::Decisive::of(&narrowed), answer);
    }
}

/// Many resolutions sharing core, interpreter, index, quarantine and the index metadata
/// fetched so far (catalog `resolve-all` and its bisection).
pub struct BatchResolver {
    base: Request,
    quarantine: Quarantine,
    template: EngineRequest,
    batch: engine::Batch,
}

impl BatchResolver {
    /// Starts the shared session; `base.plugins` is ignored.
    pub fn start(base: &Request) -> Result<BatchResolver, Failure> {
        let quarantine = quarantine_of(base)?;
        let base = Request {
            plugins: Vec::new(),
            ..base.clone()
        };
        let template = engine_request(&base, &[], &quarantine);
        let batch = engine::Batch::start(&template).map_err(Failure::of_engine)?;
        Ok(BatchResolver {
            base,
            quarantine,
            template,
            batch,
        })
    }

    /// Resolves core together with `plugins`.
    pub fn run(&self, plugins: &[PluginInput]) -> Result<Outcome, Failure> {
        let request = Request {
            plugins: plugins.to_vec(),
            ..self.base.clone()
        };
        let labelled = request.labelled();
        let wanted = engine_request(&request, &labelled, &self.quarantine);
        let result = self
            .batch
            .resolve(wanted.requirements, wanted.preferences, &self.template);
        finish(&request, &labelled, self.quarantine.clone(), result)
    }
}

fn quarantine_of(request: &Request) -> Result<Quarantine, Failure> {
    match &request.core {
        // An installed Hermes's versions are exact constraints: nothing newer can be picked.
        Some(core) if core.origin == inputs::CoreOrigin::Installed => Ok(Quarantine {
            days: request.quarantine_days,
            now: request.now,
            cutoffs: BTreeMap::new(),
            exempt: Vec::new(),
        }),
        Some(core) => Quarantine::compute(
            &core.lock,
            &core.project,
            request.quarantine_days,
            request.now,
        )
        .map_err(|m| Failure::Environment(Code::Environment, m, Vec::new())),
        None => Ok(Quarantine {
            days: request.quarantine_days,
            now: request.now,
            cutoffs: BTreeMap::new(),
            exempt: Vec::new(),
        }),
    }
}

fn engine_request(
    request: &Request,
    labelled: &[Labelled],
    quarantine: &Quarantine,
) -> EngineRequest {
    // Core's pins first (RES-2), then the previous lock's versions for everything else.
    let mut preferences: BTreeMap<PackageName, Version> = BTreeMap::new();
    if let Some(previous) = &request.previous {
        for p in &previous.packages {
            if let (Ok(name), Ok(version)) =
                (p.name.parse::<PackageName>(), p.version.parse::<Version>())
            {
                preferences.insert(name, version);
            }
        }
    }
    if let Some(core) = &request.core {
        for (name, locked) in &core.lock.packages {
            preferences.insert(name.clone(), locked.version.clone());
        }
    }
    EngineRequest {
        python: request.python.clone(),
        cache: request.cache.clone(),
        index: request.index.clone(),
        requirements: labelled.iter().map(|l| l.requirement.clone()).collect(),
        preferences: preferences.into_iter().collect(),
        constraints: request
            .core
            .iter()
            .flat_map(|c| c.constraints.iter().cloned())
            .collect(),
        cutoffs: quarantine
            .cutoffs
            .iter()
            .map(|(n, c)| (n.clone(), c.at))
            .collect(),
    }
}

fn finish(
    request: &Request,
    labelled: &[Labelled],
    quarantine: Quarantine,
    result: Result<Resolved, EngineError>,
) -> Result<Outcome, Failure> {
    match result {
        Ok(resolved) => Ok(Outcome {
            lock: build_lock(request, labelled, resolved),
            quarantine,
        }),
        Err(EngineError::NoSolution(no)) => {
            // An installed core's constraints are demands of core too: the explanation names
            // them (`core requires httpx==0.28.1`).
            let mut demands = labelled.to_vec();
            if let Some(core) = &request.core {
                demands.extend(core.constraints.iter().map(|c| Labelled {
                    source: Source::Core,
                    raw: c.to_string(),
                    requirement: c.clone(),
                }));
            }
            Err(Failure::Conflict(Box::new(conflict::explain(
                &no.packages,
                &no.listed,
                &demands,
                &quarantine,
                &no.report,
                &no.hints,
            ))))
        }
        Err(e) => Err(Failure::of_engine(e)),
    }
}

fn build_lock(request: &Request, labelled: &[Labelled], resolved: Resolved) -> Lock {
    // Labels of the inputs that require each package directly.
    let mut direct: BTreeMap<PackageName, BTreeSet<String>> = BTreeMap::new();
    for l in labelled {
        direct
            .entry(l.requirement.name.clone())
            .or_default()
            .insert(l.source.label());
    }
    let mut children: BTreeMap<Option<PackageName>, BTreeSet<PackageName>> = BTreeMap::new();
    for (parent, child) in &resolved.edges {
        children
            .entry(parent.clone())
            .or_default()
            .insert(child.clone());
    }
    // Propagate labels from the direct requirements down the dependency edges.
    let mut required_by: BTreeMap<PackageName, BTreeSet<String>> = BTreeMap::new();
    let mut queue: VecDeque<(PackageName, String)> = VecDeque::new();
    for root_child in children.get(&None).into_iter().flatten() {
        for label in direct.get(root_child).into_iter().flatten() {
            queue.push_back((root_child.clone(), label.clone()));
        }
    }
    while let Some((name, label)) = queue.pop_front() {
        if !required_by
            .entry(name.clone())
            .or_default()
            .insert(label.clone())
        {
            continue;
        }
        for child in children.get(&Some(name.clone())).into_iter().flatten() {
            queue.push_back((child.clone(), label.clone()));
        }
    }
    let packages = resolved
        .packages
        .iter()
        .map(|p| {
            let mut labels: Vec<String> = required_by
                .get(&p.name)
                .map(|s| s.iter().cloned().collect())
                .unwrap_or_default();
            labels.sort_by_key(|l| (l != "core", l.clone()));
            LockPackage {
                name: p.name.to_string(),
                version: p.version.to_string(),
                index: p.index.clone(),
                kind: match p.kind {
                    FileKind::Wheel => "wheel".to_string(),
                    FileKind::Sdist => "sdist".to_string(),
                },
                file: p.filename.clone(),
                url: p.url.clone(),
                sha256: p.sha256.clone(),
                required_by: labels,
                dependencies: children
                    .get(&Some(p.name.clone()))
                    .map(|c| c.iter().map(ToString::to_string).collect())
                    .unwrap_or_default(),
            }
        })
        .collect();
    let (inputs, excluded) = request.lock_inputs();
    Lock {
        lock_version: lock::LOCK_VERSION,
        python: LockPython {
            version: resolved.python.version.clone(),
            implementation: resolved.python.implementation.clone(),
            sys_platform: resolved.python.sys_platform.clone(),
            platform_machine: resolved.python.platform_machine.clone(),
        },
        core: request.core.as_ref().map(|c| LockCore {
            name: c.project.name.clone(),
            version: c.project.version.clone(),
            extras: request.extras.clone(),
        }),
        inputs,
        excluded,
        packages,
    }
}
