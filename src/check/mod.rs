//! Validation checks (`hermes-plugins validate`).
//!
//! Loading (`package`) already reports what makes a manifest unreadable or mistyped; the
//! checks here apply the rules on top of the typed package. Each family lives in its own
//! module and returns located [`Diagnostic`]s; nothing here prints.
//!
//! The Python source checks (registrations, hook names, core overrides, credentials, the
//! security scan) belong in a `static_py` family next to these.

pub mod config_schema;
pub mod dependencies;
pub mod loadable;
pub mod locales;
pub mod manifest_rules;
pub mod paths;

use crate::diag::{Diagnostic, Severity};
use crate::hermes_core::CoreLock;
use crate::package::{Content, LoadedPackage};

/// What the checks may consult besides the package.
#[derive(Debug, Default, Clone, Copy)]
pub struct Context<'a> {
    /// Hermes core's lock, for VAL-9 (`--core`).
    pub core: Option<&'a CoreLock>,
}

/// Runs every check on a loaded package; returns the loader's findings plus the checks',
/// sorted by file, line and column.
pub fn run(package: &LoadedPackage, cx: &Context<'_>) -> Vec<Diagnostic> {
    let mut out = package.diagnostics.clone();
    match &package.content {
        Content::Native(native) => {
            if let Some(manifest) = &native.manifest {
                let file = native.manifest_file.as_str();
                manifest_rules::check(manifest, file, &mut out);
                config_schema::check(manifest, file, &mut out);
                dependencies::check(&native.declarations, cx.core, &mut out);
                if let Some(root) = &package.root {
                    loadable::check(root, manifest, file, &mut out);
                    locales::check(root, manifest, file, &mut out);
                }
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
        }
    }
    if let Some(root) = &package.root {
        paths::check(root, &mut out);
    }
    out.sort_by(|a, b| {
        (a.file.as_str(), a.pos, std::cmp::Reverse(a.severity)).cmp(&(
            b.file.as_str(),
            b.pos,
            std::cmp::Reverse(b.severity),
        ))
    });
    out.dedup();
    out
}

/// Whether findings fail validation: any error, or any warning under `--strict`.
pub fn fails(findings: &[Diagnostic], strict: bool) -> bool {
    findings
        .iter()
        .any(|d| d.severity == Severity::Error || (strict && d.severity == Severity::Warning))
}
