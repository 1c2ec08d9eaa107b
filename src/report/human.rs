//! Human-readable report: one line per package, its findings indented beneath, a summary.
//! Every string that comes from a package (keys, versions, paths, messages quoting values)
//! is escaped: only this renderer's own colours reach the terminal.

use anstyle::{AnsiColor, Effects, Style};

use crate::text::{escape as one, for_terminal as lines};

use super::{Finding, PackageReport, Report};

/// Rendering options.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Emit ANSI colours.
    pub color: bool,
    /// Show informational notes.
    pub show_info: bool,
    /// What the summary counts: `package(s)` (validate), `entry file(s)` (catalog check).
    pub items: &'static str,
}

struct Paint {
    color: bool,
}

impl Paint {
    fn paint(&self, style: Style, text: &str) -> String {
        if self.color {
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_string()
        }
    }
}

fn severity_style(severity: &str) -> Style {
    match severity {
        "error" => AnsiColor::Red.on_default().effects(Effects::BOLD),
        "warning" => AnsiColor::Yellow.on_default().effects(Effects::BOLD),
        _ => AnsiColor::Cyan.on_default(),
    }
}

/// Renders the report as text.
pub fn render(report: &Report, options: Options) -> String {
    let p = Paint {
        color: options.color,
    };
    let mut out = String::new();
    for package in &report.packages {
        render_package(&mut out, package, options, &p);
    }
    let s = report.summary;
    let verdict = if s.failed == 0 {
        p.paint(AnsiColor::Green.on_default().effects(Effects::BOLD), "ok")
    } else {
        p.paint(AnsiColor::Red.on_default().effects(Effects::BOLD), "failed")
    };
    out.push_str(&format!(
        "\n{verdict}: {} {}, {} passed, {} failed; {} error(s), {} warning(s), {} note(s){}\n",
        s.packages,
        options.items,
        s.ok,
        s.failed,
        s.errors,
        s.warnings,
        s.infos,
        if report.strict {
            " (strict: warnings fail)"
        } else {
            ""
        }
    ));
    out
}

fn render_package(out: &mut String, package: &PackageReport, options: Options, p: &Paint) {
    let mark = if package.ok {
        p.paint(AnsiColor::Green.on_default(), "✓")
    } else {
        p.paint(AnsiColor::Red.on_default(), "✗")
    };
    let version = package
        .version
        .as_deref()
        .map(|v| format!(" v{}", one(v)))
        .unwrap_or_default();
    let bold = Style::new().effects(Effects::BOLD);
    let mut line = format!(
        "{mark} {}{version} ({}) {}",
        p.paint(bold, &one(&package.key)),
        package.format,
        p.paint(Style::new().effects(Effects::DIMMED), &one(&package.path))
    );
    if !package.accepted {
        line.push_str(&format!(
            " — {}",
            p.paint(severity_style("error"), "would not load")
        ));
    }
    out.push_str(&line);
    out.push('\n');
    if package.accepted
        && let Some(c) = &package.compatibility
    {
        out.push_str(&format!("    {}\n", c.summary));
        if !c.loads_on.is_empty() {
            for (versions, reasons) in grouped(&c.why_not) {
                out.push_str(&format!(
                    "    not on {}: {}\n",
                    ranges(&versions),
                    one(&reasons.join("; "))
                ));
            }
        }
        for (versions, rejected) in grouped(&c.rejected) {
            out.push_str(&format!(
                "    {} reject{} one by one (the rest loads): {}\n",
                ranges(&versions),
                if versions.len() == 1 { "s" } else { "" },
                one(&rejected.join("; "))
            ));
        }
    }
    if package.accepted
        && let (Some(skills), Some(servers)) = (&package.skills, &package.mcp_servers)
    {
        {
            let skill_names: Vec<String> = skills.iter().map(|s| one(&s.name).into()).collect();
            let server_names: Vec<String> = servers
                .iter()
                .map(|s| format!("{} ({}, trust {})", one(&s.name), s.transport, s.trust))
                .collect();
            out.push_str(&format!(
                "    loads skills: [{}]; MCP servers: [{}]\n",
                skill_names.join(", "),
                server_names.join(", ")
            ));
        }
    }
    for f in &package.findings {
        if f.severity == "info" && !options.show_info {
            continue;
        }
        render_finding(out, f, p);
    }
}

fn render_finding(out: &mut String, f: &Finding, p: &Paint) {
    let head = p.paint(
        severity_style(&f.severity),
        &format!("{}[{}]", f.severity, f.check),
    );
    let component = f
        .component
        .as_deref()
        .map(|c| format!(" ({})", one(c)))
        .unwrap_or_default();
    out.push_str(&format!(
        "  {head} {}:{}:{}{component}: {}\n",
        one(&f.file),
        f.line,
        f.column,
        lines(&f.message)
    ));
    if let Some(value) = &f.value {
        out.push_str(&format!("      value: {}\n", one(value)));
    }
    if let Some(hint) = &f.hint {
        out.push_str(&format!(
            "      {} {}\n",
            p.paint(AnsiColor::Green.on_default(), "fix:"),
            lines(hint)
        ));
    }
}

/// Versions that share the same list, each list once, in the order first seen.
fn grouped<T: ToString>(
    per_version: &std::collections::BTreeMap<String, Vec<T>>,
) -> Vec<(Vec<String>, Vec<String>)> {
    let mut groups: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    for (version, items) in per_version {
        let items: Vec<String> = items.iter().map(ToString::to_string).collect();
        match groups.iter_mut().find(|(_, same)| *same == items) {
            Some((versions, _)) => versions.push(version.clone()),
            None => groups.push((vec![version.clone()], items)),
        }
    }
    groups
}

/// Versions for people, neighbours collapsed (`0.13.0 – 0.19.0, main`).
fn ranges(versions: &[String]) -> String {
    let names: Vec<&str> = versions.iter().map(String::as_str).collect();
    crate::known::api::ranges(&names).join(", ")
}
