//! [`CliError`]: how a command fails — an exit status, a stable code, a message, the causes —
//! and its `--json` document. Every command returns it; none prints a panic.

use super::json;
pub use crate::exit::Code;
use crate::exit::Status;

/// A command failure to report to the user (never a panic or a stack trace).
#[derive(Debug)]
pub struct CliError {
    /// Exit status.
    pub status: Status,
    /// The stable code (`--json`: `error.code`).
    pub code: Code,
    /// What went wrong and what to do.
    pub message: String,
    /// Structured detail for `--json` (a conflict's plugins, packages, versions, dates).
    pub details: Option<Box<serde_json::Value>>,
    /// The errors that caused it, outermost first (`Caused by:`; `--json`: `error.causes`).
    pub causes: Vec<String>,
}

impl CliError {
    /// A failure with `code` (its exit status follows from the code).
    pub fn coded(code: Code, message: impl Into<String>) -> Self {
        CliError {
            status: code.status(),
            code,
            message: message.into(),
            details: None,
            causes: Vec::new(),
        }
    }

    /// The same failure, with the errors that caused it.
    pub fn caused_by(mut self, causes: Vec<String>) -> Self {
        self.causes = causes;
        self
    }

    /// A refusal: validation failed, consent refused, a conflict (exit 1).
    pub fn failed(message: impl Into<String>) -> Self {
        CliError::coded(Code::Refused, message)
    }

    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError::coded(Code::Usage, message)
    }

    /// An environment error (exit 3).
    pub fn environment(message: impl Into<String>) -> Self {
        CliError::coded(Code::Environment, message)
    }

    /// The `--json` document of this failure.
    pub fn to_json(&self) -> serde_json::Value {
        let message = crate::text::redact_credentials(&self.message);
        let mut error = serde_json::json!({
            "code": self.code,
            "exit_code": self.status.code(),
            "message": message,
        });
        if let Some(details) = &self.details {
            error["details"] = (**details).clone();
        }
        if !self.causes.is_empty() {
            error["causes"] = self
                .causes
                .iter()
                .map(|c| crate::text::redact_credentials(c).into_owned())
                .collect();
        }
        json::document(json::Schema::Error, serde_json::json!({ "error": error }))
    }
}
