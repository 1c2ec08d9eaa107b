//! Validation checks (`hermes-plugins validate`).
//!
//! Loading (`package`) already reports what makes a manifest unreadable or mistyped; the
//! checks here apply the rules on top of the typed package. Each family lives in its own
//! module and returns located [`Diagnostic`]s; nothing here prints. Python sources are
//! analysed statically (`static_py`, never executed); `probe` runs `register(ctx)` in a child
//! interpreter only when asked to.

pub mod compat;
pub mod config_schema;
pub mod dependencies;
pub mod loadable;
pub mod locales;
pub mod manifest_rules;
pub mod paths;
pub mod pip;
pub mod probe;
pub mod python;
pub mod static_py;

use crate::diag::{Diagnostic, Severity};
use crate::hermes_core::CoreLock;
use crate::package::{Content, LoadedPackage};

/// What the checks may consult besides the package.
#[derive(Debug, Default, Clone, Copy)]
pub struct Context<'a> {
    /// Hermes core's lock, for VAL-9 (`--core`).
    pub core: Option<&'a CoreLock>,
    /// Run `register(ctx)` in a child interpreter (`--probe`).
    pub probe: Option<&'a probe::ProbeOptions>,
}

/// Everything validation found about one package.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Loader and check findings, ordered by file and position.
    pub findings: Vec<Diagnostic>,
    /// The static analysis of the package's sources.
    pub analysis: Option<static_py::StaticAnalysis>,
    /// The probe's observations, when `--probe` ran.
    pub probe: Option<probe::ProbeResult>,
    /// The Hermes versions the package loads on (VAL-21).
    pub compatibility: compat::Compatibility,
}

/// A directory plugin without `register` in `__init__.py` whose project also declares pip
/// entry points: say which way Hermes loads it instead of only "nothing to call".
fn explain_entry_points(out: &mut [Diagnostic]) {
    for d in out.iter_mut().filter(|d| {
        d.check == crate::diag::CheckId::Loadable
            && d.message
                .starts_with("__init__.py defines no register(ctx)")
    }) {
        d.message.push_str(
            "; the project also declares `hermes_agent.plugins` entry points, but a directory with plugin.yaml is loaded as a directory plugin",
        );
        d.hint = Some("Define register(ctx) in __init__.py (re-export it from the entry-point module), or drop plugin.yaml and ship it as a pip package (`hermes-plugins validate pyproject.toml`).".into());
    }
}

/// Runs every check on a loaded package. Fails only if `--probe` cannot start its interpreter.
pub fn run(package: &LoadedPackage, cx: &Context<'_>) -> Result<Outcome, probe::ProbeError> {
    let mut out = package.diagnostics.clone();
    let analysis = match (&package.content, &package.root) {
        (Content::Pip(p), Some(root)) => Some(pip::analyze(root, p)),
        (_, root) => root.as_ref().map(static_py::analyze),
    };
    let mut probe_result = None;
    match &package.content {
        Content::Native(native) => {
            if let Some(manifest) = &native.manifest {
                let file = native.manifest_file.as_str();
                manifest_rules::check(manifest, file, &mut out);
                config_schema::check(manifest, file, &mut out);
                dependencies::check(&native.declarations, cx.core, &mut out);
                if let Some(root) = &package.root {
                    dependencies::undeclared(root, &native.declarations, file, cx.core, &mut out);
                    loadable::check(root, manifest, file, &mut out);
                    locales::check(root, manifest, file, &mut out);
                }
                if let (Some(options), Some(a)) = (cx.probe, &analysis)
                    && a.has_init
                {
                    probe_result = Some(if options.hermes {
                        // Declared capabilities granted, as consent would record them.
                        let grants: Vec<&str> = manifest
                            .capabilities
                            .iter()
                            .filter_map(|c| crate::known::capability(&c.value))
                            .map(|c| c.legacy_key)
                            .collect();
                        probe::run_hermes(&package.dir, &package.key, &grants, options)?
                    } else {
                        probe::run(&package.dir, options)?
                    });
                }
                if let Some(a) = &analysis {
                    python::native_findings(a, manifest, file, probe_result.as_ref(), &mut out);
                    if let Some(root) = &package.root
                        && crate::package::pip::declares_plugins(root.path())
                    {
                        explain_entry_points(&mut out);
                    }
                }
            } else if let Some(a) = &analysis {
                python::shared_findings(a, &mut out);
            }
        }
        Content::Pip(p) => {
            if let (Some(root), Some(a)) = (&package.root, &analysis) {
                pip::check(root, p, a, package.manifest_file(), &mut out);
                python::shared_findings(a, &mut out);
            }
        }
        Content::Portable(portable) => {
            if let Some(spec) = portable
                .extension
                .as_ref()
                .and_then(|e| e.requires_hermes.as_ref())
            {
                manifest_rules::check_requires_hermes(spec, "plugin.json", &mut out);
            }
            if let Some(a) = &analysis {
                python::shared_findings(a, &mut out);
            }
        }
    }
    if let Some(root) = &package.root {
        paths::check(root, &mut out);
    }
    let compatibility = compat::check(package, analysis.as_ref(), &mut out);
    out.sort_by(|a, b| {
        (a.file.as_str(), a.pos, std::cmp::Reverse(a.severity)).cmp(&(
            b.file.as_str(),
            b.pos,
            std::cmp::Reverse(b.severity),
        ))
    });
    out.dedup();
    Ok(Outcome {
        findings: out,
        analysis,
        probe: probe_result,
        compatibility,
    })
}

/// Runs [`run`] on every package, on as many threads as the machine has cores; results are in
/// the packages' order.
pub fn run_all<P: std::borrow::Borrow<LoadedPackage> + Sync>(
    packages: &[P],
    cx: &Context<'_>,
) -> Vec<Result<Outcome, probe::ProbeError>> {
    let order = crate::parallel::largest_first(packages, |p| source_bytes(p.borrow()));
    crate::parallel::map(packages, crate::parallel::cores(), Some(order), |p| {
        run(p.borrow(), cx)
    })
}

/// Bytes of Python source in a package (the main cost of validating it).
fn source_bytes(package: &LoadedPackage) -> u64 {
    let Some(root) = &package.root else { return 0 };
    root.tree().files_with_extension("py").map(|e| e.size).sum()
}

/// Whether findings fail validation: any error, or any warning under `--strict`.
pub fn fails(findings: &[Diagnostic], strict: bool) -> bool {
    findings
        .iter()
        .any(|d| d.severity == Severity::Error || (strict && d.severity == Severity::Warning))
}

/// Every check as a rule description, for renderers that list rules (SARIF).
pub fn rules() -> Vec<crate::report::Rule> {
    crate::diag::CheckId::of(crate::diag::Family::Package)
        .map(crate::diag::CheckId::rule)
        .collect()
}
