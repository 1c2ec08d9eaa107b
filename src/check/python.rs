//! The Python source checks as findings: declared vs registered (VAL-10), hook names and
//! callback signatures (VAL-11), built-in collisions (VAL-12), core overrides (VAL-14),
//! credential access (VAL-15), the security scan (VAL-16) and self-updaters (VAL-20).

use std::collections::BTreeSet;

use crate::diag::{CheckId, Diagnostic, Severity, did_you_mean};
use crate::known;
use crate::located::Pos;
use crate::package::manifest::{Kind, Manifest};

use super::probe::ProbeResult;
use super::static_py::registrations::{Callback, Registrations};
use super::static_py::security::Level;
use super::static_py::{RegKind, StaticAnalysis};

/// A registration, from static analysis or from the probe.
#[derive(Debug, Clone)]
struct Seen {
    kind: RegKind,
    name: String,
    file: String,
    pos: Pos,
    override_builtin: bool,
    callback: Option<Callback>,
}

fn check_for(kind: RegKind) -> CheckId {
    match kind {
        RegKind::Tool => CheckId::DeclaredTools,
        RegKind::Hook => CheckId::DeclaredHooks,
        RegKind::Middleware => CheckId::DeclaredMiddleware,
    }
}

fn manifest_field(kind: RegKind) -> &'static str {
    match kind {
        RegKind::Tool => "provides_tools",
        RegKind::Hook => "provides_hooks",
        RegKind::Middleware => "provides_middleware",
    }
}

/// The registrations to check: what the probe saw when it ran (pointing at `register()`,
/// since the probe knows names, not places), else what the static analysis found.
fn seen_registrations(probe_ok: Option<&ProbeResult>, regs: &Registrations) -> Vec<Seen> {
    match probe_ok {
        Some(p) => p
            .registrations()
            .into_iter()
            .map(|(kind, name, override_builtin, accepts_kwargs)| Seen {
                kind,
                // The probe knows names, not places: point at register().
                file: regs
                    .entry
                    .as_deref()
                    .and_then(|e| e.rsplit_once(':'))
                    .map_or("__init__.py".to_string(), |(f, _)| f.to_string()),
                pos: regs
                    .entry
                    .as_deref()
                    .and_then(|e| e.rsplit_once(':'))
                    .and_then(|(_, l)| l.parse().ok())
                    .map_or(Pos::START, |l| Pos::new(l, 1)),
                override_builtin,
                callback: accepts_kwargs.map(|ok| Callback {
                    name: name.clone(),
                    file: String::new(),
                    pos: Pos::START,
                    accepts_kwargs: ok,
                }),
                name,
            })
            .collect(),
        None => regs
            .found
            .iter()
            .map(|r| Seen {
                kind: r.kind,
                name: r.name.clone(),
                file: r.file.clone(),
                pos: r.pos,
                override_builtin: r.override_builtin,
                callback: r.callback.clone(),
            })
            .collect(),
    }
}

/// Findings for a native package from its static analysis (and probe, when run).
pub fn native_findings(
    analysis: &StaticAnalysis,
    manifest: &Manifest,
    manifest_file: &str,
    probe: Option<&ProbeResult>,
    out: &mut Vec<Diagnostic>,
) {
    hook_names_in_manifest(manifest, manifest_file, out);
    let probe_ok = probe.filter(|p| p.completed());
    let regs = &analysis.registrations;
    let seen = seen_registrations(probe_ok, regs);
    let analyzed = probe_ok.is_some() || regs.analyzed;
    if analysis.has_init && !analyzed && manifest.kind() != Kind::ModelProvider {
        let reason = probe
            .and_then(|p| p.error.clone())
            .or_else(|| regs.reason.clone())
            .unwrap_or_else(|| "register(ctx) could not be analysed".into());
        if regs.reason.as_deref() == Some("__init__.py defines no register(ctx)") {
            out.push(
                Diagnostic::error(CheckId::Loadable, "__init__.py", Pos::START, "__init__.py defines no register(ctx): Hermes has nothing to call")
                    .hint("Define `def register(ctx):` in __init__.py (or import it there from a submodule)."),
            );
        } else {
            out.push(
                Diagnostic::warning(
                    CheckId::DeclaredTools,
                    "__init__.py",
                    Pos::START,
                    format!("registrations were not verified: {reason}"),
                )
                .hint("Run validate with --probe to see what register(ctx) registers at runtime."),
            );
        }
    }
    if analyzed {
        for kind in [RegKind::Tool, RegKind::Hook, RegKind::Middleware] {
            compare(
                kind,
                &seen,
                manifest,
                manifest_file,
                analysis,
                probe_ok.is_some(),
                out,
            );
        }
    }
    if probe_ok.is_none() {
        for u in &regs.undetermined {
            let check = u.kind.map_or(CheckId::DeclaredTools, check_for);
            let what = match u.kind {
                Some(k) => format!(
                    "the name of this {} registration cannot be determined statically: `{}` ({}:{})",
                    k.as_str(),
                    u.expression,
                    u.file,
                    u.pos.line
                ),
                None => format!(
                    "{} ({}:{}); what it registers is not known statically",
                    u.expression, u.file, u.pos.line
                ),
            };
            let hint = if u.unanalysed {
                "The module was not read, so nothing it registers is known: keep each Python file under the size analysed (split a large one; generated data belongs in a data file), or run validate with --probe to see the real registrations."
            } else {
                "Use a literal name or a module-level constant, or run validate with --probe to see the real registrations."
            };
            out.push(
                Diagnostic::warning(check, &u.file, u.pos, what)
                    .value(&u.expression)
                    .hint(hint),
            );
        }
    }
    // VAL-11: hooks registered but unknown, and callbacks without **kwargs.
    let declared_hooks: BTreeSet<&str> = manifest
        .provides_hooks
        .iter()
        .map(|h| h.value.as_str())
        .collect();
    for s in seen.iter().filter(|s| s.kind == RegKind::Hook) {
        if !declared_hooks.contains(s.name.as_str())
            && let Some(d) = hook_finding(&s.name, &s.file, s.pos)
        {
            out.push(d);
        }
        if let Some(cb) = &s.callback
            && !cb.accepts_kwargs
        {
            let location = if cb.file.is_empty() {
                String::new()
            } else {
                format!(" (defined at {}:{})", cb.file, cb.pos.line)
            };
            out.push(
                Diagnostic::warning(
                    CheckId::HookNames,
                    &s.file,
                    s.pos,
                    format!("hook callback `{}` for `{}` does not accept **kwargs{location}; Hermes adds keyword arguments over time", cb.name, s.name),
                )
                .value(&cb.name)
                .hint(format!("Add **kwargs to the signature of {}.", cb.name)),
            );
        }
    }
    // VAL-12: built-in tool names.
    let has_override_capability = manifest
        .capabilities
        .iter()
        .any(|c| c.value == "tools.override");
    for s in seen.iter().filter(|s| s.kind == RegKind::Tool) {
        let builtin_in = builtin_in(&s.name);
        if builtin_in.is_empty() {
            continue;
        }
        if !s.override_builtin {
            out.push(
                Diagnostic::warning(
                    CheckId::BuiltinCollisions,
                    &s.file,
                    s.pos,
                    format!(
                        "tool `{}` has the name of a built-in of Hermes {}: without override=True those releases reject this registration (the rest of the plugin loads)",
                        s.name,
                        builtin_in.join(", ")
                    ),
                )
                .value(&s.name)
                .hint("Rename the tool, or pass override=True and declare `capabilities: [tools.override]` (the user must consent)."),
            );
        } else if !has_override_capability {
            out.push(
                Diagnostic::warning(
                    CheckId::BuiltinCollisions,
                    &s.file,
                    s.pos,
                    format!("tool `{}` overrides a Hermes built-in but the manifest does not declare the tools.override capability: installers never ask for it, and Hermes 0.18 and later refuse the plugin unless the user grants it by hand (`--grant tools.override`)", s.name),
                )
                .value(&s.name)
                .hint("Add `capabilities: [tools.override]` to plugin.yaml."),
            );
        }
    }
    shared_findings(analysis, out);
    if let Some(p) = probe {
        probe_findings(p, analysis, manifest, manifest_file, out);
    }
}

/// Findings every package gets from its sources, native or portable: VAL-14, 15, 16, 20.
pub fn shared_findings(analysis: &StaticAnalysis, out: &mut Vec<Diagnostic>) {
    out.extend(analysis.notes.iter().cloned());
    for o in &analysis.overrides {
        out.push(
            Diagnostic::error(
                CheckId::NoCoreOverride,
                &o.file,
                o.pos,
                format!("rebinds a Hermes internal at runtime ({}): {} ({}:{})", o.how, o.target, o.file, o.pos.line),
            )
            .value(&o.target)
            .hint("Use a documented extension point (ctx.register_*, hooks, middleware) instead of patching Hermes; the catalog rejects core overrides."),
        );
    }
    for c in &analysis.credentials {
        out.push(
            Diagnostic::error(
                CheckId::CredentialAccess,
                &c.file,
                c.pos,
                format!("accesses credentials directly: {} ({}:{})", c.what, c.file, c.pos.line),
            )
            .value(&c.snippet)
            .hint("Read secrets with get_secret(\"NAME\") and call providers with credentialed_provider_request(...); never open .env or auth.json yourself."),
        );
    }
    for f in &analysis.security {
        let severity = match f.level {
            Level::Critical | Level::High => Severity::Error,
            Level::Medium => Severity::Warning,
        };
        let mut d = Diagnostic::new(
            CheckId::SecurityScan,
            severity,
            &f.file,
            f.pos,
            format!("[{}] {}: {}", f.level.as_str(), f.rule, f.message),
        );
        if !f.snippet.is_empty() {
            d = d.value(&f.snippet);
        }
        out.push(d);
    }
    for s in &analysis.self_updaters {
        out.push(
            Diagnostic::error(
                CheckId::SelfUpdater,
                &s.file,
                s.pos,
                format!("self-updating code: downloads from `{}` and writes files ({})", s.source, s.writer),
            )
            .value(&s.source)
            .hint("Ship updates through the catalog (a new pinned commit), not from inside the plugin."),
        );
    }
}

fn compare(
    kind: RegKind,
    seen: &[Seen],
    m: &Manifest,
    manifest_file: &str,
    analysis: &StaticAnalysis,
    from_probe: bool,
    out: &mut Vec<Diagnostic>,
) {
    let check = check_for(kind);
    let field = manifest_field(kind);
    let declared = match kind {
        RegKind::Tool => &m.provides_tools,
        RegKind::Hook => &m.provides_hooks,
        RegKind::Middleware => &m.provides_middleware,
    };
    let declared_names: BTreeSet<&str> = declared.iter().map(|d| d.value.as_str()).collect();
    let mut reported = BTreeSet::new();
    for s in seen.iter().filter(|s| s.kind == kind) {
        if !declared_names.contains(s.name.as_str()) && reported.insert(s.name.clone()) {
            let source = if from_probe {
                " by register(ctx) under --probe"
            } else {
                ""
            };
            out.push(
                Diagnostic::error(
                    check,
                    &s.file,
                    s.pos,
                    format!(
                        "{} `{}` is registered{} ({}:{}) but not declared in {field}",
                        kind.as_str(),
                        s.name,
                        source,
                        s.file,
                        s.pos.line
                    ),
                )
                .value(&s.name)
                .hint(format!("Add `{}` to {field} in {manifest_file}.", s.name)),
            );
        }
    }
    let registered: BTreeSet<&str> = seen
        .iter()
        .filter(|s| s.kind == kind)
        .map(|s| s.name.as_str())
        .collect();
    let undetermined = (!from_probe)
        .then(|| {
            analysis
                .registrations
                .undetermined
                .iter()
                .find(|u| u.kind.is_none_or(|k| k == kind))
        })
        .flatten();
    for d in declared {
        if registered.contains(d.value.as_str()) {
            continue;
        }
        let diag = match undetermined {
            Some(u) => Diagnostic::info(
                check,
                manifest_file,
                d.pos,
                format!(
                    "declared {} `{}` was not found statically; it may be the registration at {}:{} whose name is not known",
                    kind.as_str(),
                    d.value,
                    u.file,
                    u.pos.line
                ),
            ),
            None => Diagnostic::warning(
                check,
                manifest_file,
                d.pos,
                format!(
                    "{} `{}` is declared in {field} but register(ctx) never registers it",
                    kind.as_str(),
                    d.value
                ),
            )
            .hint(format!(
                "Remove it from {field}, or register it in register(ctx)."
            )),
        };
        out.push(diag.value(&d.value));
    }
}

/// What to say of a hook name: nothing when every release from the first that calls it on
/// does (the newest included); a note when only some releases call it; a warning when none
/// does (a typo, or a gateway event name).
fn hook_finding(name: &str, file: &str, pos: Pos) -> Option<Diagnostic> {
    if name.contains(':') || name.contains('*') {
        return Some(Diagnostic::warning(
            CheckId::HookNames,
            file,
            pos,
            format!("`{name}` is a gateway event name, not a plugin hook"),
        )
        .value(name)
        .hint("Gateway events (session:start, agent:end, command:*) belong in a HOOK.yaml gateway hook, not in provides_hooks/register_hook."));
    }
    let calling = known::releases::versions_where(|r| r.hooks.iter().any(|h| h == name));
    let latest = known::api::latest_release().version.as_str();
    if calling.contains(&latest) {
        return None;
    }
    if !calling.is_empty() {
        return Some(
            Diagnostic::info(
                CheckId::HookNames,
                file,
                pos,
                format!(
                    "`{name}` is a plugin hook of Hermes {} only: Hermes {latest} never calls it",
                    known::api::ranges(&calling).join(", ")
                ),
            )
            .value(name),
        );
    }
    let mut d = Diagnostic::warning(
        CheckId::HookNames,
        file,
        pos,
        format!("`{name}` is not a plugin hook of any known Hermes (0.13.0 – {latest}, main)"),
    )
    .value(name);
    if let Some(s) = did_you_mean(name, known::releases::all_hooks()) {
        d = d.hint(format!("Did you mean `{s}`?"));
    }
    Some(d)
}

fn hook_names_in_manifest(m: &Manifest, file: &str, out: &mut Vec<Diagnostic>) {
    for h in &m.provides_hooks {
        out.extend(hook_finding(&h.value, file, h.pos));
    }
}

fn probe_findings(
    p: &ProbeResult,
    analysis: &StaticAnalysis,
    manifest: &Manifest,
    manifest_file: &str,
    out: &mut Vec<Diagnostic>,
) {
    // Model providers register themselves when imported; they have no register(ctx).
    let expected_no_register = manifest.kind() == Kind::ModelProvider
        && p.error
            .as_deref()
            .is_some_and(|e| e.starts_with("the module has no callable register"));
    if (!p.completed() || p.error.is_some()) && !expected_no_register {
        let reason = p
            .error
            .clone()
            .unwrap_or_else(|| "the probe did not complete".into());
        // What to do depends on why: a hang is not a missing dependency.
        let hint = if p.phase == "timeout" {
            "Importing the plugin or its register(ctx) did not finish in time: it may wait on the network or on input, which Hermes would wait for at every start. Make register(ctx) return promptly, or give the probe longer (--probe-timeout SECONDS)."
        } else if reason.contains("ModuleNotFoundError") || reason.contains("ImportError") {
            "Install the plugin's dependencies (and Hermes, for plugins importing its modules) into the probe interpreter: --probe=/path/to/python."
        } else {
            "register(ctx) raised or the interpreter stopped: run it under the probe interpreter to see the whole error. The static findings stand either way."
        };
        out.push(
            Diagnostic::warning(
                CheckId::Loadable,
                manifest_file,
                Pos::START,
                format!("--probe could not run register(ctx): {reason}"),
            )
            .hint(hint),
        );
        if !p.completed() {
            return;
        }
    }
    if !p.network_attempts.is_empty() {
        out.push(
            Diagnostic::info(
                CheckId::SecurityScan,
                manifest_file,
                Pos::START,
                format!("--probe: importing or registering the plugin tried to reach the network (blocked): {}", p.network_attempts.join(", ")),
            )
            .hint("Plugins should not touch the network while loading; defer it to tool calls."),
        );
    }
    for (kind, name, ..) in p.registrations() {
        let found = analysis.registrations.of(kind).any(|r| r.name == name);
        if !found {
            out.push(
                Diagnostic::info(check_for(kind), manifest_file, Pos::START, format!("static analysis and --probe disagree: {} `{name}` is registered at runtime but was not found statically", kind.as_str()))
                    .value(&name),
            );
        }
    }
    for r in &analysis.registrations.found {
        if !p
            .registrations()
            .iter()
            .any(|(k, n, ..)| *k == r.kind && *n == r.name)
        {
            out.push(
                Diagnostic::info(check_for(r.kind), &r.file, r.pos, format!("static analysis and --probe disagree: {} `{}` found statically ({}:{}) was not registered at runtime (a branch not taken?)", r.kind.as_str(), r.name, r.file, r.pos.line))
                    .value(&r.name),
            );
        }
    }
}

/// The known versions (ranges collapsed) whose built-in tools include `name`.
fn builtin_in(name: &str) -> Vec<String> {
    let versions: Vec<&str> = crate::known::api::versions()
        .iter()
        .map(|v| v.version.as_str())
        .filter(|v| crate::known::releases::release(v).is_some_and(|r| r.is_builtin_tool(name)))
        .collect();
    crate::known::api::ranges(&versions)
}
