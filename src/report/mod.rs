//! Reports: what `validate` found, as data, and its renderings (human text, JSON, GitHub
//! workflow annotations, SARIF 2.1.0).
//!
//! This module knows nothing about checks: findings carry their check id as a string, and the
//! SARIF renderer receives the rule descriptions as data ([`Rule`]).

pub mod cache;
pub mod github;
pub mod human;
pub mod sarif;

use serde::{Deserialize, Serialize};

/// Where a package loads: a verdict per known Hermes version with the reasons, the versions it
/// loads on (oldest first; `main` is upstream's development branch), the oldest, and what needs
/// a newer Hermes than any release.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompatibilityReport {
    /// Versions it loads on.
    pub loads_on: Vec<String>,
    /// The oldest of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    /// Features no release reads yet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub needs_newer: Vec<String>,
    /// Every known version: whether the package loads there.
    #[serde(default)]
    pub loads: std::collections::BTreeMap<String, bool>,
    /// Why it does not load, for each version where it does not.
    #[serde(default)]
    pub why_not: std::collections::BTreeMap<String, Vec<LoadReason>>,
    /// Registrations a version's loader rejects one by one while the rest loads.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub rejected: std::collections::BTreeMap<String, Vec<String>>,
    /// One line for people (`loads on Hermes 0.17.0 – 0.19.0, main`).
    pub summary: String,
}

/// Why a package does not load on one version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadReason {
    /// The check that says so.
    pub check: String,
    /// For people.
    pub message: String,
}

impl std::fmt::Display for LoadReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The whole validation report (the `--format json` document).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// The program that made the report.
    pub tool: Tool,
    /// Whether warnings count as failures.
    pub strict: bool,
    /// One entry per package.
    pub packages: Vec<PackageReport>,
    /// Counts over all packages.
    pub summary: Summary,
}

/// The program that made a report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tool {
    /// `hermes-plugins`.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// One package's results.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PackageReport {
    /// The package directory as reached from the path given.
    pub path: String,
    /// The plugin key (`<category>/<dir>` or the name).
    pub key: String,
    /// The plugin's name.
    pub name: String,
    /// Its declared version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `native-v1`, `native-v2` or `portable`.
    pub format: String,
    /// For native packages: the plugin kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Whether the package would load at all.
    pub accepted: bool,
    /// Whether it passes validation (no errors; no warnings under `--strict`).
    pub ok: bool,
    /// Counts of this package's findings.
    pub counts: Counts,
    /// Findings, ordered by file and position.
    pub findings: Vec<Finding>,
    /// For native packages: declared capabilities (consent is asked for these).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Vec<String>>,
    /// For native packages: provider ids whose signed-in credentials the plugin uses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requires_auth: Option<Vec<String>>,
    /// For native packages: the managed Python requirements, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub python_dependencies: Option<Vec<String>>,
    /// For packages with Python code: what register(ctx) registers, found statically.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registrations: Option<RegistrationsReport>,
    /// The security scan's verdict and counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub security: Option<SecurityReport>,
    /// What `--probe` observed, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeReport>,
    /// The Hermes versions the package loads on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compatibility: Option<CompatibilityReport>,
    /// For portable packages: the skill namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skill_namespace: Option<String>,
    /// For portable packages: the skills that would load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<SkillReport>>,
    /// For portable packages: the MCP servers that would load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<Vec<ServerReport>>,
}

impl PackageReport {
    /// A report for something that is not a plugin package (a catalog entry, a review's
    /// package summary): only path, names, format, findings and the verdict.
    pub fn plain(
        path: String,
        key: String,
        name: String,
        format: &str,
        accepted: bool,
        ok: bool,
        findings: Vec<Finding>,
    ) -> PackageReport {
        PackageReport {
            path,
            key,
            name,
            version: None,
            format: format.to_string(),
            kind: None,
            accepted,
            ok,
            counts: Counts::of(&findings),
            findings,
            capabilities: None,
            requires_auth: None,
            python_dependencies: None,
            registrations: None,
            security: None,
            probe: None,
            compatibility: None,
            skill_namespace: None,
            skills: None,
            mcp_servers: None,
        }
    }
}

/// Registrations found by static analysis of `register(ctx)`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RegistrationsReport {
    /// Whether register(ctx) was found and interpreted.
    pub analyzed: bool,
    /// Why not, or why the result may be incomplete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `file:line` of the register function.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    pub tools: Vec<RegistrationEntry>,
    pub hooks: Vec<RegistrationEntry>,
    pub middleware: Vec<RegistrationEntry>,
    /// Registration calls (or hand-offs of ctx) whose names are not known statically.
    pub undetermined: Vec<UndeterminedEntry>,
}

/// One registration.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RegistrationEntry {
    /// The registered name.
    pub name: String,
    /// File of the registering call.
    pub file: String,
    /// Its line.
    pub line: u32,
    /// For tools: whether `override=True` was passed.
    #[serde(rename = "override", skip_serializing_if = "Option::is_none")]
    pub override_builtin: Option<bool>,
    /// For hooks and middleware: the callback, when resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback: Option<CallbackReport>,
}

/// A hook or middleware callback.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CallbackReport {
    /// Function name (`<lambda>` for lambdas).
    pub name: String,
    /// Where it is defined.
    pub file: String,
    /// Its line.
    pub line: u32,
    /// Whether it accepts `**kwargs`.
    pub accepts_kwargs: bool,
}

/// A registration whose name could not be determined statically.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UndeterminedEntry {
    /// `tool`, `hook`, `middleware`, or absent for ctx handed to code that cannot be followed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub file: String,
    pub line: u32,
    /// The expression (or call) that could not be evaluated.
    pub expression: String,
}

/// The security scan's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SecurityReport {
    /// `safe`, `caution` or `dangerous`.
    pub verdict: String,
    /// Critical findings.
    pub critical: usize,
    /// High findings.
    pub high: usize,
    /// Medium findings.
    pub medium: usize,
}

/// What `--probe` observed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeReport {
    /// Whether register(ctx) ran to completion without raising.
    pub ok: bool,
    /// The last phase reached (`import`, `register`, `done`, `timeout`).
    pub phase: String,
    /// What went wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Wall time of the child interpreter.
    pub duration_ms: u64,
    /// Tools registered.
    pub tools: Vec<String>,
    /// Hooks registered.
    pub hooks: Vec<String>,
    /// Middleware registered.
    pub middleware: Vec<String>,
    /// Slash commands registered.
    pub commands: Vec<String>,
    /// CLI commands registered.
    pub cli_commands: Vec<String>,
    /// Platforms registered.
    pub platforms: Vec<String>,
    /// Network calls refused during import and registration.
    pub network_attempts: Vec<String>,
}

/// A skill that would load.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SkillReport {
    /// Skill name (= its directory).
    pub name: String,
    /// Its description.
    pub description: String,
    /// `<namespace>:<name>`, how the agent refers to it.
    pub qualified_name: String,
}

/// An MCP server that would load.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerReport {
    /// Server name as written.
    pub name: String,
    /// `stdio` or `streamable-http`.
    pub transport: String,
    /// `full` or `untrusted`.
    pub trust: String,
    /// For stdio: the command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// For stdio: the arguments as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// For streamable-http: the URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// One finding.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    /// Stable check id.
    pub check: String,
    /// `error`, `warning` or `info`.
    pub severity: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The file, as a path from where the command ran.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// The component concerned (`skill:<dir>`, `mcp:<server>`, `mcp`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub component: Option<String>,
    /// The offending value as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// Error, warning and info counts.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Counts {
    pub errors: usize,
    pub warnings: usize,
    /// Informational notes.
    pub infos: usize,
}

impl Counts {
    /// Counts the findings by severity.
    pub fn of(findings: &[Finding]) -> Counts {
        let mut c = Counts::default();
        for f in findings {
            match f.severity.as_str() {
                "error" => c.errors += 1,
                "warning" => c.warnings += 1,
                _ => c.infos += 1,
            }
        }
        c
    }
}

/// Totals over the report.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Summary {
    /// Packages validated.
    pub packages: usize,
    /// Packages that pass.
    pub ok: usize,
    /// Packages that fail.
    pub failed: usize,
    /// All errors.
    pub errors: usize,
    /// All warnings.
    pub warnings: usize,
    /// All informational notes.
    pub infos: usize,
}

impl Summary {
    /// Sums the packages' counts.
    pub fn of(packages: &[PackageReport]) -> Summary {
        let mut s = Summary {
            packages: packages.len(),
            ..Summary::default()
        };
        for p in packages {
            if p.ok {
                s.ok += 1;
            } else {
                s.failed += 1;
            }
            s.errors += p.counts.errors;
            s.warnings += p.counts.warnings;
            s.infos += p.counts.infos;
        }
        s
    }
}

/// A check's description, for renderers that list rules (SARIF).
#[derive(Debug, Clone)]
pub struct Rule {
    /// Stable check id.
    pub id: &'static str,
    /// The spec feature it implements.
    pub spec: &'static str,
    /// One-line title.
    pub title: &'static str,
    /// What it checks and how to satisfy it.
    pub help: &'static str,
    /// `error`, `warning` or `info`.
    pub default_severity: &'static str,
}

/// Renders the JSON report (pretty-printed, one document).
pub fn to_json(report: &Report) -> String {
    serde_json::to_string_pretty(report).expect("reports serialise")
}
