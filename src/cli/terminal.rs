//! The terminal: prompts (stderr, answers from stdin, secrets with echo off), progress and
//! notes on stderr, consent plans for people, JSON documents on stdout.

use std::io::{BufRead, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use super::global::GlobalArgs;
use crate::manager::{Feedback, Prompter};

/// Prints a consent plan for people.
pub fn print_plan(printer: &super::Printer, plan: &crate::manager::plan::Plan, changes: &[String]) {
    use crate::manager::plan::PlanItem;
    outln!(
        printer,
        "Consent plan for `{}` (nothing was changed):",
        plan.operation
    );
    if plan.items.is_empty() {
        outln!(printer, "  nothing to ask");
    }
    for item in &plan.items {
        let how = match (item.flag(), item.required()) {
            (Some(f), true) => format!("  [{f}; required]"),
            (Some(f), false) => format!("  [{f}; optional]"),
            (None, _) => String::new(),
        };
        let line = match item {
            PlanItem::Dependencies {
                plugin,
                requires,
                installs,
            } => format!(
                "dependencies of `{plugin}`: {} (installs {})",
                requires.join(", "),
                installs.join(", ")
            ),
            PlanItem::Capability {
                plugin,
                profile,
                id,
                risk,
            } => format!("capability {id} for `{plugin}` (profile {profile}): it could {risk}"),
            PlanItem::Surface { plugin, added } => {
                format!("`{plugin}` adds: {}", added.join(", "))
            }
            PlanItem::Env { plugin, name, .. } => {
                format!("`{plugin}` needs {name} set (in the environment or .env) to load")
            }
            PlanItem::CorePatch { plugin, targets } => format!(
                "`{plugin}` patches Hermes internals at run time: {} (Hermes loads it; the catalog does not admit it)",
                targets.join(", ")
            ),
            PlanItem::Auth { plugin, providers } => {
                format!("`{plugin}` needs sign-in with {}", providers.join(", "))
            }
        };
        outln!(printer, "  - {line}{how}");
    }
    if !changes.is_empty() {
        outln!(printer, "Python packages against the current generation:");
        for c in changes {
            outln!(printer, "  {c}");
        }
    }
    let mut approve = plan.approve.clone();
    approve.push(format!("--plan {}", plan.hash));
    outln!(printer, "Approve with: {}", approve.join(" "));
}

/// Whether prompts may be shown (decided once by the printer).
pub fn interactive(global: &GlobalArgs) -> bool {
    global.printer.interactive()
}

/// Prompts on the terminal (stderr), answers from stdin; default no; secrets are read with
/// echo off.
#[derive(Debug, Default)]
pub struct TerminalPrompter;

impl Prompter for TerminalPrompter {
    fn confirm(&mut self, text: &str, question: &str) -> bool {
        let mut err = std::io::stderr();
        let _ = write!(err, "{}{question} [y/N] ", super::shown(text));
        let _ = err.flush();
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line).is_err() {
            return false;
        }
        matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
    }

    fn value(&mut self, text: &str, label: &str, secret: bool) -> Option<String> {
        let mut err = std::io::stderr();
        let _ = write!(
            err,
            "{}{}{}: ",
            super::shown(text),
            super::shown(label),
            if secret { " (hidden)" } else { "" }
        );
        let _ = err.flush();
        let line = if secret {
            rpassword::read_password().ok()?
        } else {
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line).ok()?;
            line
        };
        let value = line.trim_end_matches(['\n', '\r']).to_string();
        (!value.is_empty()).then_some(value)
    }

    fn interactive(&self) -> bool {
        true
    }
}

/// Progress and notes on stderr: a spinner (or a transfer bar) on a terminal, plain lines
/// otherwise; nothing but notes with `--json` or `-q`.
#[derive(Debug)]
pub struct StderrFeedback {
    printer: super::Printer,
    bar: Option<ProgressBar>,
}

impl StderrFeedback {
    /// Feedback for these global options.
    pub fn new(global: &GlobalArgs) -> StderrFeedback {
        StderrFeedback {
            printer: global.printer,
            bar: None,
        }
    }
}

impl Feedback for StderrFeedback {
    fn phase(&mut self, message: &str) {
        if self.printer.progress_bars() {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_message(super::shown(message));
            bar.enable_steady_tick(Duration::from_millis(100));
            self.bar = Some(bar);
        } else {
            tracing::debug!("{message}");
        }
    }

    fn note(&mut self, message: &str) {
        match &self.bar {
            Some(bar) if !self.printer.quiet() => {
                bar.println(format!("note: {}", super::shown(message)))
            }
            _ => self.printer.note(message),
        }
    }

    fn transfer(&mut self, received: usize, total: usize) {
        if let Some(bar) = &self.bar
            && total > 0
        {
            if bar.length() != Some(total as u64) {
                bar.set_length(total as u64);
                bar.set_style(
                    ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} objects")
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
            }
            bar.set_position(received as u64);
        }
    }

    fn done(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
