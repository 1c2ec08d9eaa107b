//! Static analysis of a package's Python sources, parsed with ruff's parser (`syntax`). Nothing is
//! imported or run.
//!
//! The abstract model, in one place:
//! - **Reach** (`reach`): which `.py` files can run — what Hermes, the agent or an installer
//!   starts, and what those name — so only they (and files the byte-level patterns match) are
//!   parsed; the rest is seen by the security scan's byte-level patterns.
//! - **Sources** (`source`): the `.py` files that can run, parsed error-tolerantly;
//!   module names relative to the plugin package; relative imports and package-local absolute
//!   imports (`import tools`, `from plugins.<dir>.x import y`) resolve to those modules.
//! - **Scopes** (`scope`): module-level `def`, `class`, assignments and imports (also inside
//!   module-level `if`/`try`), flow-insensitive.
//! - **Values** (`eval`): string constants (escapes, concatenation, known f-strings, `+`, `%`,
//!   `.format`), numbers, booleans, `None`, list/tuple/set/dict literals, subscripts of known
//!   collections, attribute chains through local modules, functions and lambdas, `ctx`, and
//!   dotted paths of external imports. Anything else is unknown — never guessed.
//! - **Registrations** (`registrations`): `register(ctx)` interpreted with loops over known
//!   collections unrolled, both branches of conditionals taken, and package-local helpers that
//!   receive `ctx` followed.
//! - **Pattern checks**: core overrides (`overrides`), credential access (`credentials`), the
//!   security scan (`security`), JS self-updaters (`selfupdate`).

pub mod credentials;
pub mod eval;
pub mod finding;
pub mod load_imports;
pub mod overrides;
pub mod reach;
pub mod registrations;
pub mod scope;
pub mod security;
pub mod selfupdate;
pub mod shell_patterns;
pub mod source;
pub mod syntax;

use crate::diag::Diagnostic;
use crate::pkgfs::PackageRoot;

pub use registrations::{RegKind, Registrations};
pub use security::{SecurityFinding, Verdict};

/// Evaluation steps allowed per package (a bound on hostile or enormous code).
const FUEL: usize = 2_000_000;

/// Everything the static analysis found in one package.
#[derive(Debug, Clone)]
pub struct StaticAnalysis {
    /// How many Python modules were analysed.
    pub modules: usize,
    /// Whether the package has a root `__init__.py`.
    pub has_init: bool,
    /// What `register(ctx)` registers.
    pub registrations: Registrations,
    /// Core overrides (VAL-14).
    pub overrides: Vec<overrides::Override>,
    /// Direct credential access (VAL-15).
    pub credentials: Vec<credentials::CredentialAccess>,
    /// Security findings (VAL-16).
    pub security: Vec<SecurityFinding>,
    /// The security verdict.
    pub verdict: Verdict,
    /// JS self-updaters (VAL-20).
    pub self_updaters: Vec<selfupdate::SelfUpdater>,
    /// Outside modules imported while the plugin loads (what the agent's environment must
    /// provide).
    pub load_imports: Vec<load_imports::LoadImport>,
    /// Files that could not be analysed.
    pub notes: Vec<Diagnostic>,
}

/// The relative paths of test modules that no package code imports (directly or through
/// other test modules it imports): only those are exempt from the override and credential
/// rules.
fn exempt_tests<'t>(
    set: &'t source::SourceSet,
    indexes: &[source::Index<'t>],
) -> std::collections::HashSet<&'t str> {
    let mut reached: Vec<bool> = set.modules.iter().map(|m| !m.is_test).collect();
    let mut queue: Vec<usize> = (0..set.modules.len()).filter(|m| reached[*m]).collect();
    while let Some(m) = queue.pop() {
        for stmt in &indexes[m].imports {
            for (_, target) in scope::resolve_import(set, m, *stmt) {
                let mut targets = Vec::new();
                match target {
                    scope::Imported::Module(id) => targets.push(id),
                    scope::Imported::Attr(id, attr) => {
                        targets.push(id);
                        // `from .tests import payload` where `payload` is a submodule.
                        let dotted = source::SourceSet::join(&set.modules[id].dotted, &attr);
                        targets.extend(set.module(&dotted));
                    }
                    _ => {}
                }
                for id in targets {
                    if !reached[id] {
                        reached[id] = true;
                        queue.push(id);
                    }
                }
            }
        }
    }
    set.modules
        .iter()
        .zip(reached)
        .filter(|(m, r)| m.is_test && !r)
        .map(|(m, _)| m.rel.as_str())
        .collect()
}

/// Analyses the package at `root`.
pub fn analyze(root: &PackageRoot) -> StaticAnalysis {
    analyze_entry(root, None)
}

/// Analyses the package at `root`, interpreting `register(ctx)` of module `entry` (dotted,
/// relative to `root`) instead of the root `__init__.py` when given.
pub fn analyze_entry(root: &PackageRoot, entry: Option<&str>) -> StaticAnalysis {
    let mut notes = Vec::new();
    let mut clock = std::time::Instant::now();
    let mut lap = |phase: &str| {
        tracing::trace!(
            "static analysis of {}: {phase} took {:?}",
            root.path().display(),
            clock.elapsed()
        );
        clock = std::time::Instant::now();
    };
    let set = source::SourceSet::load(root, entry, &mut notes);
    lap("parsing");
    // One walk per module, on the cores nothing else uses.
    let indexes: Vec<source::Index<'_>> = crate::parallel::map(
        &set.modules,
        crate::parallel::spare_cores(),
        Some(crate::parallel::largest_first(&set.modules, |m| {
            m.text.len() as u64
        })),
        source::PyModule::index,
    );
    lap("indexing");
    let scopes = scope::Scopes::build(&set);
    let ev = eval::Evaluator::new(&set, &scopes, FUEL);
    let mut registrations = registrations::find_in(&ev, entry);
    lap("registrations");
    // Test code is exempt from the override and credential rules only where no package code
    // imports it: a payload in `tests/` imported by `__init__.py` is package code.
    let exempt = exempt_tests(&set, &indexes);
    let mut overrides = overrides::find(&ev, &indexes);
    overrides.retain(|o| !exempt.contains(o.file.as_str()));
    lap("core overrides");
    let mut credentials = credentials::find(&ev, &indexes);
    credentials.retain(|c| !exempt.contains(c.file.as_str()));
    lap("credential access");
    let mut security = security::scan(root, &ev, &indexes);
    // What was not analysed is not known to be safe, and dynamic code hides what it does.
    for u in &set.unanalysed {
        security.push(SecurityFinding {
            level: security::Level::Medium,
            rule: "unanalysed-source",
            message: format!("`{}` was not analysed: {}", u.rel, u.reason),
            file: u.rel.clone(),
            pos: crate::located::Pos::START,
            snippet: String::new(),
        });
        registrations
            .undetermined
            .push(registrations::Undetermined {
                kind: None,
                file: u.rel.clone(),
                pos: crate::located::Pos::START,
                expression: format!("`{}` was not analysed ({})", u.rel, u.reason),
                dynamic: false,
                unanalysed: true,
            });
    }
    for u in registrations.undetermined.iter().filter(|u| u.dynamic) {
        // The scan may already have judged the same call (a decoded or fetched `exec`).
        if security.iter().any(|f| f.file == u.file && f.pos == u.pos) {
            continue;
        }
        security.push(SecurityFinding {
            level: security::Level::Medium,
            rule: "dynamic-code",
            message: format!("{}: what it does cannot be reviewed", u.expression),
            file: u.file.clone(),
            pos: u.pos,
            snippet: String::new(),
        });
    }
    security.sort_by(|a, b| (a.file.as_str(), a.pos).cmp(&(b.file.as_str(), b.pos)));
    security.dedup();
    lap("security scan");
    let verdict = Verdict::of(&security);
    let load_imports = load_imports::find(&set, &indexes);
    StaticAnalysis {
        modules: set.modules.len(),
        has_init: set.root_module().is_some(),
        registrations,
        overrides,
        credentials,
        security,
        verdict,
        self_updaters: selfupdate::find(root),
        load_imports,
        notes,
    }
}

/// A package directory holding `files` (relative path, contents), for the analysis's tests.
#[cfg(test)]
pub(crate) fn test_package<T: AsRef<[u8]>>(files: &[(&str, T)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, body) in files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    }
    dir
}
