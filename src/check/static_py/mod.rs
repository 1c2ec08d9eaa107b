//! Static analysis of a package's Python sources with tree-sitter. Nothing is imported or run.
//!
//! The abstract model, in one place:
//! - **Sources** (`source`): every non-test `.py` file of the package, parsed error-tolerantly;
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
pub mod overrides;
pub mod registrations;
pub mod scope;
pub mod security;
pub mod selfupdate;
pub mod source;

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
    /// Files that could not be analysed.
    pub notes: Vec<Diagnostic>,
}

/// Analyses the package at `root`.
pub fn analyze(root: &PackageRoot) -> StaticAnalysis {
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
    let set = source::SourceSet::load(root, &mut notes);
    lap("parsing");
    let indexes: Vec<source::Index<'_>> = set.modules.iter().map(source::PyModule::index).collect();
    lap("indexing");
    let scopes = scope::Scopes::build(&set);
    let ev = eval::Evaluator::new(&set, &scopes, FUEL);
    let registrations = registrations::find(&ev);
    lap("registrations");
    let overrides = overrides::find(&ev, &indexes);
    lap("core overrides");
    let credentials = credentials::find(&ev, &indexes);
    lap("credential access");
    let security = security::scan(root, &ev, &indexes);
    lap("security scan");
    let verdict = Verdict::of(&security);
    StaticAnalysis {
        modules: set.modules.len(),
        has_init: set.root_module().is_some(),
        registrations,
        overrides,
        credentials,
        security,
        verdict,
        self_updaters: selfupdate::find(root),
        notes,
    }
}
