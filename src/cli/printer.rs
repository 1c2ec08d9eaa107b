//! The printer: where the CLI's output goes, decided once per run (uv's `printer.rs`).
//!
//! [`Printer::new`] reads `--json`, `--quiet`, `--color`, `--no-input`, `NO_COLOR` and whether
//! stdin, stdout and stderr are terminals, once, in `cli::main`; commands ask it instead of
//! looking at flags or the terminal themselves:
//!
//! - results for people go to stdout ([`Printer::line`], [`Printer::rendered`]), and with
//!   `--json` one document and nothing else ([`Printer::document`]);
//! - notes and progress go to stderr and are dropped by `--quiet` ([`Printer::note`],
//!   [`Printer::progress_bars`]); warnings and errors always print ([`Printer::warning`],
//!   [`Printer::error`]);
//! - everything taken from untrusted input is escaped and credentials in URLs are redacted
//!   ([`shown`]).

use std::io::{IsTerminal, Write};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use super::env_vars::EnvVars;
use super::error::CliError;

/// Set once stdout's reader has gone (`EPIPE`, as in `hermes-plugins search x | head -1`):
/// later results are dropped quietly and the command finishes with its own exit status, as
/// ripgrep and uv end on a closed pipe — never a panic, never a half-done operation.
static STDOUT_GONE: AtomicBool = AtomicBool::new(false);

/// The first error writing stdout other than a closed pipe (a full disk under `> file`):
/// output stops and `cli::main` reports it (exit 3) unless the command already failed.
static STDOUT_FAILED: OnceLock<String> = OnceLock::new();

/// Writes `bytes` to stdout. A closed pipe ends output quietly (`Ok`); any other error stops
/// output and is returned (and remembered for [`stdout_failure`]).
pub fn write_stdout(bytes: &[u8]) -> std::io::Result<()> {
    if STDOUT_GONE.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) => {
            STDOUT_GONE.store(true, Ordering::Relaxed);
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                Ok(())
            } else {
                let _ = STDOUT_FAILED.set(format!("cannot write to stdout: {e}"));
                Err(e)
            }
        }
    }
}

/// Why stdout could not be written, if it failed for another reason than a closed pipe.
pub fn stdout_failure() -> Option<&'static str> {
    STDOUT_FAILED.get().map(String::as_str)
}

/// One line on stderr; a closed or failing stderr is ignored (there is nowhere left to say it).
fn to_stderr(text: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// Text as it may be shown: credentials in URLs redacted, control characters other than
/// newline and tab escaped (see [`crate::text`]).
pub fn shown(text: &str) -> String {
    crate::text::for_terminal(&crate::text::redact_credentials(text)).into_owned()
}

/// When to colour output (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when writing to a terminal (and `NO_COLOR` is unset).
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// The global options output depends on, as parsed (the printer knows nothing of clap's
/// structs: the options are handed to it, once).
#[derive(Debug, Clone, Copy)]
pub struct OutputOptions {
    /// `--json`.
    pub json: bool,
    /// `--quiet`.
    pub quiet: bool,
    /// `-v` given at least once.
    pub verbose: bool,
    /// `--no-input`.
    pub no_input: bool,
    /// `--color`.
    pub color: ColorChoice,
}

/// Where output goes and how it looks, decided once from the global options and the terminal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Printer {
    json: bool,
    quiet: bool,
    verbose: bool,
    color: bool,
    bars: bool,
    interactive: bool,
}

impl Printer {
    /// Decides, once: `--json`, `--quiet`, colour (`--color`, `NO_COLOR`, stdout a terminal),
    /// progress bars (stderr a terminal, neither `--json` nor `--quiet`) and prompts (stdin and
    /// stderr terminals, no `--no-input`).
    pub fn new(options: OutputOptions) -> Printer {
        let color = match options.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os(EnvVars::NO_COLOR).is_none() && std::io::stdout().is_terminal()
            }
        };
        let stderr_terminal = std::io::stderr().is_terminal();
        Printer {
            json: options.json,
            quiet: options.quiet,
            verbose: options.verbose,
            color,
            bars: stderr_terminal && !options.json && !options.quiet,
            interactive: !options.no_input && std::io::stdin().is_terminal() && stderr_terminal,
        }
    }

    /// Whether stdout carries one JSON document (`--json`).
    pub fn json(&self) -> bool {
        self.json
    }

    /// Whether `--quiet` asked for results and errors only.
    pub fn quiet(&self) -> bool {
        self.quiet
    }

    /// Whether `-v` asked for more detail (informational catalog findings).
    pub fn verbose(&self) -> bool {
        self.verbose
    }

    /// Whether renderers may colour stdout.
    pub fn color(&self) -> bool {
        self.color
    }

    /// Whether progress may be drawn as bars and spinners on stderr.
    pub fn progress_bars(&self) -> bool {
        self.bars
    }

    /// Whether prompts may be shown (someone can answer them).
    pub fn interactive(&self) -> bool {
        self.interactive
    }

    /// One line of a result for people, on stdout (through [`shown`]).
    pub fn line(&self, text: &str) {
        let _ = write_stdout(format!("{}\n", shown(text)).as_bytes());
    }

    /// A rendered document on stdout. `escaped`: the renderer already escaped what it took
    /// from untrusted input (JSON and SARIF through serde, the report renderers with
    /// [`crate::text`]), so only credentials are redacted; otherwise the text goes through
    /// [`shown`].
    pub fn rendered(&self, text: &str, escaped: bool) {
        if escaped {
            let _ = write_stdout(crate::text::redact_credentials(text).as_bytes());
        } else {
            let _ = write_stdout(shown(text).as_bytes());
        }
    }

    /// The `--json` document following `schema` on stdout, `"$schema"` first (serde escapes
    /// control characters; credentials in URLs are redacted).
    pub fn document(&self, schema: super::json::Schema, value: &serde_json::Value) {
        let doc = super::json::document(schema, value.clone());
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        let _ = write_stdout(format!("{}\n", crate::text::redact_credentials(&text)).as_bytes());
    }

    /// A note on stderr (`note: …`), dropped by `--quiet`.
    pub fn note(&self, text: &str) {
        if !self.quiet {
            to_stderr(format_args!("note: {}", shown(text)));
        }
    }

    /// A message on stderr that `--quiet` drops (what was written where).
    pub fn status(&self, text: &str) {
        if !self.quiet {
            to_stderr(format_args!("{}", shown(text)));
        }
    }

    /// A warning on stderr (`warning: …`); printed even with `--quiet`.
    pub fn warning(&self, text: &str) {
        to_stderr(format_args!("warning: {}", shown(text)));
    }

    /// Reports a failure: `error: …` and its causes (`Caused by:`) on stderr and, with
    /// `--json`, the error document on stdout.
    pub fn error(&self, err: &CliError) {
        if self.json {
            let text = serde_json::to_string_pretty(&err.to_json()).unwrap_or_default();
            let _ = write_stdout(format!("{text}\n").as_bytes());
        }
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(stderr, "error: {}", shown(&err.message));
        if !err.causes.is_empty() {
            let _ = writeln!(stderr, "\nCaused by:");
            for cause in &err.causes {
                let _ = writeln!(stderr, "  {}", shown(cause));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_escapes_control_characters_and_redacts_credentials() {
        let text = shown("https://user:secret@example.org/x \u{1b}[31mred\u{7}");
        assert!(!text.contains("secret"), "{text}");
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text}"
        );
        assert!(text.contains("example.org/x"), "{text}");
    }
}
