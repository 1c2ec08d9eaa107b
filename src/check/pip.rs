//! MAN-8 `entry-points`: a pip-distributed plugin as Hermes's entry-point loader sees it. Every
//! `hermes_agent.plugins` entry point names a module the distribution holds, whose
//! `register(ctx)` is analysed like a directory plugin's; `module:object` entry points are
//! flagged (the 0.19.0 loader calls `register` on the loaded object); every
//! `hermes_agent.plugin_capabilities` declaration is `<plugin-id>.<capability-id>` for a declared
//! plugin, a known capability, pointing at the same object as the plugin.

use crate::diag::{CheckId, Diagnostic, Severity};
use crate::known;
use crate::package::PipPackage;
use crate::pkgfs::PackageRoot;

use super::static_py::{self, StaticAnalysis};

/// The module to analyse for `register(ctx)`: the first plugin entry point's (a memory
/// provider's when it registers only that), as a dotted name relative to the project root
/// (`src.my_pkg` in a src layout).
pub fn entry_module(package: &PipPackage) -> Option<String> {
    let first = package.main_entry()?;
    Some(if package.module_root == "." {
        first.module.clone()
    } else {
        format!("{}.{}", package.module_root.replace('/', "."), first.module)
    })
}

/// Analyses the package from its entry module.
pub fn analyze(root: &PackageRoot, package: &PipPackage) -> StaticAnalysis {
    static_py::analyze_entry(root, entry_module(package).as_deref())
}

/// The entry-point rules.
pub fn check(
    root: &PackageRoot,
    package: &PipPackage,
    analysis: &StaticAnalysis,
    file: &str,
    out: &mut Vec<Diagnostic>,
) {
    if package.registers_nothing() {
        out.push(
            Diagnostic::error(
                CheckId::EntryPoints,
                file,
                crate::located::Pos::START,
                format!(
                    "no `{}` (or `{}`) entry point: Hermes does not discover this distribution",
                    crate::package::pip::PLUGINS_GROUP,
                    crate::package::pip::MEMORY_PROVIDERS_GROUP
                ),
            )
            .hint("Add [project.entry-points.\"hermes_agent.plugins\"] with `my-plugin = \"my_plugin\"`."),
        );
        return;
    }
    for e in package.plugins.iter().chain(&package.memory_providers) {
        if package.module_file(root, &e.module).is_none() {
            out.push(
                Diagnostic::error(
                    CheckId::EntryPoints,
                    &e.file,
                    e.pos,
                    format!(
                        "entry point `{}` names module `{}`, which the distribution does not contain",
                        e.name, e.module
                    ),
                )
                .value(&e.value)
                .hint(format!(
                    "Ship `{}/__init__.py` (or `{}.py`){}.",
                    e.module.replace('.', "/"),
                    e.module.replace('.', "/"),
                    if package.module_root == "." { "" } else { " under src/" }
                )),
            );
        }
        // A memory provider's object may be a class, an instance or a function (0.20.4+
        // takes each); only the plugins group calls `register` on the object.
        if let Some(object) = e.object.as_ref().filter(|_| package.plugins.contains(e)) {
            out.push(
                Diagnostic::warning(
                    CheckId::EntryPoints,
                    &e.file,
                    e.pos,
                    format!(
                        "entry point `{}` names `{}:{object}`: Hermes {} load that object and call its `register`, so the object must be the module (or something with a `register` attribute), not the function",
                        e.name,
                        e.module,
                        no_entry_point_objects().join(", ")
                    ),
                )
                .value(&e.value)
                .hint(format!("Point the entry point at the module: `{} = \"{}\"`.", e.name, e.module)),
            );
        }
    }
    let regs = &analysis.registrations;
    if !regs.analyzed
        && let Some(reason) = &regs.reason
        && reason.contains("defines no register(ctx)")
        && let Some(e) = package.plugins.first()
    {
        out.push(
            Diagnostic::error(
                CheckId::EntryPoints,
                &e.file,
                e.pos,
                format!(
                    "{reason}: Hermes loads entry point `{}` and finds no register() function",
                    e.name
                ),
            )
            .value(&e.value)
            .hint("Define `def register(ctx):` in that module."),
        );
    }
    for c in &package.capabilities {
        let (plugin, capability) = c.name.split_once('.').unwrap_or((c.name.as_str(), ""));
        let Some(target) = package.plugins.iter().find(|p| p.name == plugin) else {
            out.push(
                Diagnostic::error(
                    CheckId::EntryPoints,
                    &c.file,
                    c.pos,
                    format!(
                        "capability `{}` is for plugin `{plugin}`, which no `{}` entry point declares",
                        c.name,
                        crate::package::pip::PLUGINS_GROUP
                    ),
                )
                .value(&c.name)
                .hint("Name capability entry points `<plugin-id>.<capability-id>` after a plugin entry point."),
            );
            continue;
        };
        if known::capability(capability).is_none() {
            let ids: Vec<&str> = known::CAPABILITIES.iter().map(|k| k.id).collect();
            let mut d = Diagnostic::warning(
                CheckId::EntryPoints,
                &c.file,
                c.pos,
                format!("capability `{capability}` is not known; Hermes ignores it"),
            )
            .value(&c.name);
            if let Some(s) = crate::diag::did_you_mean(capability, ids.iter().copied()) {
                d = d.hint(format!("Did you mean `{plugin}.{s}`?"));
            }
            out.push(d);
        }
        if c.value != target.value {
            out.push(
                Diagnostic::new(
                    CheckId::EntryPoints,
                    Severity::Warning,
                    &c.file,
                    c.pos,
                    format!(
                        "capability `{}` points at `{}`, plugin `{plugin}` at `{}`: they must name the same object",
                        c.name, c.value, target.value
                    ),
                )
                .value(&c.value)
                .hint(format!("Write `\"{}\" = \"{}\"`.", c.name, target.value)),
            );
        }
    }
}

/// The known versions whose loader calls `register` on an entry point's object (a function
/// has none): up to 0.19.0; 0.22 calls the function.
fn no_entry_point_objects() -> Vec<String> {
    let versions: Vec<&str> = crate::known::api::versions()
        .iter()
        .map(|v| v.version.as_str())
        .filter(|v| {
            crate::known::releases::release(v).is_some_and(|r| !r.takes_entry_point_objects())
        })
        .collect();
    crate::known::api::ranges(&versions)
}
