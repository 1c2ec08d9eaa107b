//! The security scan's findings and its verdict (VAL-16): what the byte-level patterns
//! (`shell_patterns`) and the rules on Python (`security`) both produce.

use crate::located::Pos;

/// How bad a security finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Worth knowing.
    Medium,
    /// Makes the package dangerous.
    High,
    /// Makes the package dangerous; almost certainly malicious.
    Critical,
}

impl Level {
    /// `medium`, `high` or `critical`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Medium => "medium",
            Level::High => "high",
            Level::Critical => "critical",
        }
    }
}

/// The overall verdict of the scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing found.
    Safe,
    /// Medium findings only.
    Caution,
    /// A high or critical finding.
    Dangerous,
}

impl Verdict {
    /// `safe`, `caution` or `dangerous`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Safe => "safe",
            Verdict::Caution => "caution",
            Verdict::Dangerous => "dangerous",
        }
    }

    /// The verdict for a set of findings.
    pub fn of(findings: &[SecurityFinding]) -> Verdict {
        match findings.iter().map(|f| f.level).max() {
            Some(Level::Critical | Level::High) => Verdict::Dangerous,
            Some(Level::Medium) => Verdict::Caution,
            None => Verdict::Safe,
        }
    }
}

/// One security finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecurityFinding {
    /// Severity.
    pub level: Level,
    /// Short rule name (`reverse-shell`, `dynamic-exec`, …).
    pub rule: &'static str,
    /// What was found.
    pub message: String,
    /// File (`.` for the package as a whole).
    pub file: String,
    /// Position.
    pub pos: Pos,
    /// The offending text, shortened.
    pub snippet: String,
}

impl SecurityFinding {
    /// The finding's stable id, `<rule>@<file>:<line>` (`pipe-to-shell@setup.sh:12`): what
    /// `install --accept-finding` names to accept it for one plugin.
    pub fn id(&self) -> String {
        format!("{}@{}:{}", self.rule, self.file, self.pos.line)
    }

    /// Whether `install`/`update` need an explicit acceptance of it: it makes the verdict
    /// `dangerous`, or it is code the analysis could not read (a module too large or beyond
    /// the file cap, a file the walk could not examine) — not known to be safe either.
    pub fn blocks(&self) -> bool {
        self.level >= Level::High || matches!(self.rule, "unanalysed-source" | "unexamined")
    }
}
