//! Diagnostics: what a check found, where, and how to fix it; plus the table of check ids.
//!
//! Every finding carries a stable check id (see [`CheckId`]), a severity, a message that says
//! what is wrong, an optional fix hint, and a location: a file relative to the package root
//! with a 1-based line and column. Where a finding is about a component of a package (a
//! portable skill or MCP server) it names the component as `skill:<dir>` or `mcp:<server>`.

use std::fmt;

use serde::Serialize;

use crate::located::Pos;

/// How serious a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Informational; never fails anything.
    Info,
    /// Fails only under `--strict`.
    Warning,
    /// Fails validation.
    Error,
}

impl Severity {
    /// The lowercase name used in every output format.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! checks {
    ($( $variant:ident => $id:literal, $spec:literal, $severity:ident, $title:literal, $help:literal; )*) => {
        /// A stable check id. The string form (`manifest`, `requires-env`, …) is what reports,
        /// SARIF rules and CI scripts use; it never changes once released.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum CheckId {
            $(
                #[doc = $title]
                $variant,
            )*
        }

        impl CheckId {
            /// Every check, in documentation order.
            pub const ALL: &'static [CheckId] = &[$(CheckId::$variant,)*];

            /// The stable string id.
            pub fn as_str(self) -> &'static str {
                match self { $(CheckId::$variant => $id,)* }
            }

            /// The spec feature this check implements (e.g. `VAL-5`).
            pub fn spec(self) -> &'static str {
                match self { $(CheckId::$variant => $spec,)* }
            }

            /// The usual severity of this check's findings (individual findings may differ).
            pub fn default_severity(self) -> Severity {
                match self { $(CheckId::$variant => Severity::$severity,)* }
            }

            /// A one-line title.
            pub fn title(self) -> &'static str {
                match self { $(CheckId::$variant => $title,)* }
            }

            /// A paragraph on what the check looks at and how to satisfy it.
            pub fn help(self) -> &'static str {
                match self { $(CheckId::$variant => $help,)* }
            }
        }
    };
}

checks! {
    Layout => "layout", "MAN-4", Error,
        "Plugin directory layout and plugin keys",
        "Plugins live at <root>/<plugin>/ or <root>/<category>/<plugin>/ with plugin.yaml (or plugin.yml) or plugin.json at their root. Keys must be unique within a root; plugin.yaml wins over plugin.yml and over plugin.json in the same directory.";
    Manifest => "manifest", "VAL-1", Error,
        "plugin.yaml parses as a YAML mapping",
        "The manifest must be readable UTF-8 (a BOM is fine) holding exactly one YAML document whose top level is a mapping of field names to values.";
    ManifestFields => "manifest-fields", "VAL-2", Error,
        "Manifest fields are present and well-typed",
        "name, version and description must be present and strings; every other field must have the type MAN-1/MAN-2 gives it. Unknown fields are ignored with a warning (check the spelling).";
    RequiresHermes => "requires-hermes", "VAL-3", Error,
        "requires_hermes is a valid version constraint",
        "requires_hermes is a comma-separated list of comparator clauses such as `>=0.19, <1.0`. Hermes versions are 0.x.y: a date-like (CalVer) floor such as `>=2025.1` can never match.";
    ConfigSchema => "config-schema", "VAL-4", Error,
        "config_schema entries are well-formed",
        "config_schema maps each setting key to {type, default, label|title, description, required, choices|enum, env}. The default must match the type (a boolean is not an integer), choices must contain the default, and a secret entry names its .env variable with env and never carries a value.";
    RequiresEnv => "requires-env", "VAL-5", Error,
        "requires_env / optional_env entries are well-formed",
        "Each entry is either a variable name or a mapping with name (plus description, url, prompt, secret/password). Names are UPPER_SNAKE_CASE: ^[A-Z][A-Z0-9_]*$.";
    Loadable => "loadable", "VAL-6", Error,
        "The package has something to load",
        "A native package needs __init__.py (exposing register(ctx)), desktop/plugin.js, plugin.json, or provides_locales with a locales/ directory next to plugin.yaml. A pip-layout package needs a directory-plugin wrapper: a root __init__.py that imports and re-exports register.";
    PythonDependencies => "python-dependencies", "VAL-7", Error,
        "Python dependency declarations are valid PEP 508",
        "Dependencies come from pyproject.toml [project].dependencies, else python_dependencies + pip_dependencies in plugin.yaml. Each must parse as PEP 508; direct-URL requirements are not managed (use python_runtime: external); a dependency on hermes-agent itself is dropped.";
    DependencyBounds => "dependency-bounds", "VAL-8", Warning,
        "Dependencies have an upper bound",
        "A bare lower bound accepts every future release unchecked. Use >=floor,<next_major (before 1.0, e.g. >=0.29,<0.32).";
    DependencyExcludesCorePin => "dependency-quarantine", "VAL-9", Error,
        "Dependencies admit Hermes core's locked versions",
        "Plugins share one environment with Hermes core. A requirement that excludes the version core's uv.lock pins for the same package can never be resolved together with core.";
    Capabilities => "capabilities", "VAL-13", Warning,
        "Declared capabilities are known",
        "capabilities lists privileged host surfaces the plugin asks consent for. Unknown ids are ignored at runtime.";
    Locales => "locales", "VAL-17", Error,
        "Language packs are complete and text-only",
        "Each provides_locales id needs a parseable locales/<id>.yaml whose leaves are all strings; <id>.tui.yaml and <id>.desktop.yaml are optional. Locale files for undeclared ids are never loaded.";
    RequiresAuth => "requires-auth", "VAL-18", Warning,
        "requires_auth names known providers",
        "requires_auth lists the provider ids whose signed-in credentials the plugin uses through credentialed_provider_request(...).";
    Paths => "paths", "VAL-19", Error,
        "No file or symlink resolves outside the package",
        "Every file and symlink in the package must resolve inside the package root; a symlink that escapes it (or loops) would let the package read or ship files it does not contain.";
    DeclaredTools => "declared-tools", "VAL-10", Error,
        "Registered tools match provides_tools",
        "Tools registered by register(ctx) (found statically, or with --probe at runtime) must be declared in provides_tools; a declared tool that is never registered is a warning. A name that cannot be determined statically is reported, never guessed.";
    DeclaredHooks => "declared-hooks", "VAL-10", Error,
        "Registered hooks match provides_hooks",
        "Hooks registered by register(ctx) must be declared in provides_hooks (or the legacy hooks); a declared hook that is never registered is a warning.";
    DeclaredMiddleware => "declared-middleware", "VAL-10", Error,
        "Registered middleware matches provides_middleware",
        "Middleware registered by register(ctx) must be declared in provides_middleware; declared but never registered is a warning.";
    HookNames => "hook-names", "VAL-11", Warning,
        "Hook names are known and callbacks accept **kwargs",
        "Hook names must be plugin hooks of Hermes 0.19.0 (pre_tool_call, post_llm_call, on_session_end, …). Gateway event names such as agent:end belong in HOOK.yaml. Callbacks should accept **kwargs so new keyword arguments do not break them.";
    BuiltinCollisions => "builtin-collisions", "VAL-12", Error,
        "No silent replacement of built-in tools",
        "Registering a tool with the name of a Hermes built-in needs override=True and the tools.override capability in the manifest; without them the registration fails at load time.";
    NoCoreOverride => "no-core-override", "VAL-14", Error,
        "Plugin code does not rebind Hermes internals",
        "Assigning to, setattr/delattr on, deleting from, or mutating attributes of Hermes modules (run_agent, agent, tools, hermes_cli, gateway, …), writing sys.modules, or mock.patch-ing Hermes paths at runtime is not an extension point; the catalog rejects it. Use ctx.register_* APIs, hooks and middleware.";
    CredentialAccess => "credential-access", "VAL-15", Error,
        "No direct access to credential files",
        "Plugins must not read or write .env, auth.json, ~/.codex/auth.json or other tools' credential files, or refresh OAuth tokens themselves (catalog rule 11). Use get_secret(...) and credentialed_provider_request(...).";
    SecurityScan => "security-scan", "VAL-16", Warning,
        "Security scan",
        "Reverse shells, decode-and-exec, download-and-exec and escaping symlinks (critical), eval/exec of dynamic strings, curl | sh and native executables (high) make the package dangerous (an error). Restricted eval, runtime shell commands, binary or compiled files, opaque blobs and oversized trees (medium) are warnings.";
    SelfUpdater => "self-updater", "VAL-20", Error,
        "No self-updating JavaScript",
        "JS/TS code that downloads from releases/latest or raw.githubusercontent.com and writes files replaces reviewed code with unreviewed code (catalog rule 3).";
    CtxCall => "ctx-call", "VAL-21", Error,
        "Calls on ctx fit the real PluginContext",
        "Every call register(ctx) makes on ctx is bound to the PluginContext signatures of each Hermes release (0.13.0 and newer, from PyPI) and of upstream main, as Python binds it: a missing required argument, an unknown keyword, too many positional arguments or a method the release does not have makes register(ctx) raise, and Hermes does not load the plugin. A call that fits no version is an error; one that fits only newer versions narrows where the plugin loads (compatibility.loads_on). Calls guarded by getattr(ctx, name, None), hasattr(ctx, name) or a try/except that catches the failure are tolerated.";
    EntryPoints => "entry-points", "MAN-8", Error,
        "pip-distributed plugins declare loadable entry points",
        "A pip-distributed plugin declares [project.entry-points.\"hermes_agent.plugins\"] (name = \"module\") in pyproject.toml, or the same group in a wheel's entry_points.txt. Hermes loads the object the entry point names and calls its register(ctx): the module must be in the distribution and define register. Capabilities go in hermes_agent.plugin_capabilities as \"<plugin-id>.<capability-id>\" pointing at the same object.";
    PortableManifest => "portable-manifest", "VAL-P1", Error,
        "plugin.json follows Agent Plugins v1.0.0",
        "plugin.json needs $schema = https://agent-plugins.org/schemas/1.0.0/plugin.schema.json and a name of 1-64 characters matching ^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?$ without `--` or `..`. Unknown top-level fields are ignored; any other violation rejects the package.";
    Skills => "skills", "VAL-P2", Error,
        "Portable skills are valid Agent Skills",
        "Each skills/<dir>/SKILL.md starts with YAML frontmatter between --- lines with name (equal to <dir>, 1-64 chars, ^[a-z0-9]+(-[a-z0-9]+)*$) and description (1-1024 chars). A bad skill is skipped; its siblings still load.";
    Mcp => "mcp", "VAL-P3", Error,
        "mcp.json servers are valid and safe to start",
        "mcp.json holds exactly $schema and mcpServers. stdio commands are one executable token (a bare name or a ./ path inside the package); cwd stays inside its root; streamable-http URLs are absolute https (http only for loopback) without userinfo or fragment. A bad entry is skipped; a bad file disables MCP for the package only.";
    HermesExtension => "hermes-extension", "VAL-P4", Error,
        "The com.nousresearch.hermes extension is valid",
        "extensions.\"com.nousresearch.hermes\".servers.<name> must name an mcp.json server and may set trust (untrusted|full), app, requires and liveness.";
    CatalogYaml => "catalog-yaml", "CAT-1", Error,
        "Catalog files are readable YAML mappings",
        "Each catalog file is UTF-8 text of at most 1 MiB holding exactly one YAML document whose top level is a mapping. A key written twice keeps its last value and is reported as a warning.";
    CatalogEntryField => "catalog-entry-field", "CAT-1", Error,
        "Catalog entry fields are present and well-formed",
        "name ([a-z0-9_-]{1,64}), repo (an https:// URL without credentials, query, fragment, whitespace or control characters), sha (40 lowercase hex) and maintainer (non-empty) are required. subdir is [A-Za-z0-9._/-]+ without empty, `.` or `..` segments and not absolute; tier is official or community; platforms are linux, macos, windows; docs_url, image and screenshots (at most 6) are https URLs; capabilities maps provides_tools, provides_hooks, provides_middleware and requires_env to lists of strings; tags, known_issues and requires_plugins are lists of strings; every other field is a string.";
    CatalogUnknownKey => "catalog-unknown-key", "CAT-1", Warning,
        "Catalog files use only known keys",
        "Keys CAT-1 does not define are ignored; they are usually misspellings of a known key (check the suggestion).";
    CatalogEntryFilename => "catalog-entry-filename", "CAT-1", Warning,
        "An entry lives in <name>.yaml",
        "One file per entry, named after the entry, so that `install NAME` finds it directly and reviewers see renames.";
    CatalogRequiresHermes => "catalog-requires-hermes", "CAT-1", Error,
        "requires_hermes is a valid version constraint",
        "requires_hermes is a comma-separated list of comparator clauses such as `>=0.19, <1.0`. Hermes versions are 0.x.y: a date-like (CalVer) floor can never match.";
    CatalogRemovedFile => "catalog-removed-file", "SRC-4", Error,
        "removed.yaml is a well-formed kill list",
        "removed.yaml holds `removed:`, a list of mappings with name (required, [a-z0-9_-]{1,64}), repo (a repository URL), reason (a string) and date (YYYY-MM-DD). Install, update and enable refuse listed plugins.";
    CatalogDuplicateName => "catalog-duplicate-name", "CAT-2", Error,
        "Entry names are unique",
        "Two entries with the same name make `install NAME` ambiguous. Rename one or delete the duplicate.";
    CatalogDuplicateRepo => "catalog-duplicate-repo", "CAT-2", Error,
        "Each repository and subdirectory is listed once",
        "Repositories are compared after normalisation (scheme, www., user, .git and case ignored). Entries of the same repository are fine when their subdir differs. The same repository and subdir at the same commit is an error; at another commit, a warning (a renamed entry whose old file remains, which upstream's validator accepts).";
    CatalogRequiresPlugins => "catalog-requires-plugins", "CAT-2", Error,
        "requires_plugins is satisfiable within the catalog",
        "Every name in requires_plugins must be another entry of the same catalog, so that installing the entry can install what it needs.";
    CatalogEntryRemoved => "catalog-entry-removed", "SRC-4", Error,
        "No entry is on the kill list",
        "An entry whose name or (normalised) repository is listed in removed.yaml would be refused at install; remove the entry or take it off the kill list.";
    CatalogCapabilitiesMismatch => "catalog-capabilities-mismatch", "CAT-3", Error,
        "The entry's capabilities block matches the package",
        "List exactly the tools, hooks, middleware and required environment variables the package provides.";
    CatalogNameMismatch => "catalog-name-mismatch", "CAT-3", Warning,
        "The entry is named like the package",
        "Use the package's manifest name as the entry name.";
}

/// What an error of a check stops (seed 003: some checks say Hermes cannot load the plugin,
/// others that the catalog will not admit it — undeclared tools load fine).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Hermes would not load the plugin (or it cannot be installed safely): `install`,
    /// `update` refuse it (unless `--force`), as `validate` does.
    Load,
    /// A catalog-admission rule: an error in `validate` and `catalog review`, a warning at
    /// `install` and `update` — Hermes loads the plugin all the same.
    Admission,
}

impl Gate {
    /// `load` or `admission`, as documentation and messages name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Gate::Load => "load",
            Gate::Admission => "admission",
        }
    }
}

/// Which tool a check belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// `validate`: rules on a plugin package.
    Package,
    /// `catalog check`: rules on catalog files and between entries.
    Catalog,
    /// `catalog review`: an entry against the package it pins.
    Review,
}

impl CheckId {
    /// Which tool reports this check.
    pub fn family(self) -> Family {
        match self {
            CheckId::CatalogCapabilitiesMismatch | CheckId::CatalogNameMismatch => Family::Review,
            c if c.as_str().starts_with("catalog-") => Family::Catalog,
            _ => Family::Package,
        }
    }

    /// What an error of this check stops (see [`Gate`]). `no-core-override` is admission:
    /// Hermes loads such a plugin, so installing it is asked like a capability instead
    /// (`--allow-core-patch`); a `dangerous` security verdict is refused whatever its check.
    pub fn gate(self) -> Gate {
        match self {
            CheckId::Layout
            | CheckId::Manifest
            | CheckId::Loadable
            | CheckId::PythonDependencies
            | CheckId::BuiltinCollisions
            | CheckId::CtxCall
            | CheckId::Paths
            | CheckId::EntryPoints
            | CheckId::PortableManifest
            | CheckId::HermesExtension => Gate::Load,
            CheckId::ManifestFields
            | CheckId::RequiresHermes
            | CheckId::ConfigSchema
            | CheckId::RequiresEnv
            | CheckId::DependencyBounds
            | CheckId::DependencyExcludesCorePin
            | CheckId::Capabilities
            | CheckId::Locales
            | CheckId::RequiresAuth
            | CheckId::DeclaredTools
            | CheckId::DeclaredHooks
            | CheckId::DeclaredMiddleware
            | CheckId::HookNames
            | CheckId::NoCoreOverride
            | CheckId::CredentialAccess
            | CheckId::SecurityScan
            | CheckId::SelfUpdater
            | CheckId::Skills
            | CheckId::Mcp => Gate::Admission,
            // Catalog files and entries are not plugins: their rules only admit.
            _ => Gate::Admission,
        }
    }

    /// The checks of one tool, in documentation order.
    pub fn of(family: Family) -> impl Iterator<Item = CheckId> {
        CheckId::ALL
            .iter()
            .copied()
            .filter(move |c| c.family() == family)
    }

    /// This check as a rule description, for renderers that list rules (SARIF).
    pub fn rule(self) -> crate::report::Rule {
        crate::report::Rule {
            id: self.as_str(),
            spec: self.spec(),
            title: self.title(),
            help: self.help(),
            default_severity: self.default_severity().as_str(),
        }
    }
}

impl fmt::Display for CheckId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    /// Which check produced it.
    pub check: CheckId,
    /// How serious it is.
    pub severity: Severity,
    /// What is wrong.
    pub message: String,
    /// How to fix it, when there is something specific to say.
    pub hint: Option<String>,
    /// The file, relative to the package root, with `/` separators.
    pub file: String,
    /// Where in the file (1:1 when the finding is about the file as a whole).
    pub pos: Pos,
    /// The component it concerns (`skill:<dir>`, `mcp:<server>`, `mcp`, …).
    pub component: Option<String>,
    /// The offending value as written.
    pub value: Option<String>,
}

impl Diagnostic {
    /// This diagnostic as a report finding, its file shown as `file` (positions at least
    /// 1:1): the one conversion `validate` and `catalog review` use.
    pub fn to_finding(&self, file: String) -> crate::report::Finding {
        crate::report::Finding {
            check: self.check.as_str().to_string(),
            severity: self.severity.as_str().to_string(),
            message: self.message.clone(),
            hint: self.hint.clone(),
            file,
            line: self.pos.line.max(1),
            column: self.pos.column.max(1),
            component: self.component.clone(),
            value: self.value.clone(),
        }
    }

    /// A finding of `check` with the given severity.
    pub fn new(
        check: CheckId,
        severity: Severity,
        file: impl Into<String>,
        pos: Pos,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            check,
            severity,
            message: message.into(),
            hint: None,
            file: file.into(),
            pos,
            component: None,
            value: None,
        }
    }

    /// An error finding.
    pub fn error(
        check: CheckId,
        file: impl Into<String>,
        pos: Pos,
        message: impl Into<String>,
    ) -> Self {
        Self::new(check, Severity::Error, file, pos, message)
    }

    /// A warning finding.
    pub fn warning(
        check: CheckId,
        file: impl Into<String>,
        pos: Pos,
        message: impl Into<String>,
    ) -> Self {
        Self::new(check, Severity::Warning, file, pos, message)
    }

    /// An informational finding.
    pub fn info(
        check: CheckId,
        file: impl Into<String>,
        pos: Pos,
        message: impl Into<String>,
    ) -> Self {
        Self::new(check, Severity::Info, file, pos, message)
    }

    /// Adds a fix hint.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Names the component the finding concerns.
    #[must_use]
    pub fn component(mut self, component: impl Into<String>) -> Self {
        self.component = Some(component.into());
        self
    }

    /// Records the offending value as written (shortened and escaped for one-line output).
    #[must_use]
    pub fn value(mut self, value: impl AsRef<str>) -> Self {
        self.value = Some(crate::located::truncate_chars(value.as_ref(), 120));
        self
    }
}

/// A growing list of findings for one file, so loaders don't repeat the file name.
#[derive(Debug)]
pub struct Sink<'a> {
    /// The file findings are attributed to.
    pub file: String,
    /// Where findings go.
    pub out: &'a mut Vec<Diagnostic>,
}

impl<'a> Sink<'a> {
    /// A sink writing findings about `file` into `out`.
    pub fn new(file: impl Into<String>, out: &'a mut Vec<Diagnostic>) -> Self {
        Sink {
            file: file.into(),
            out,
        }
    }

    /// Records a finding about this file.
    pub fn push(
        &mut self,
        check: CheckId,
        severity: Severity,
        pos: Pos,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        self.out.push(Diagnostic::new(
            check,
            severity,
            self.file.clone(),
            pos,
            message,
        ));
        self.out.last_mut().expect("just pushed")
    }
}

/// Extension methods to decorate the finding a [`Sink`] just recorded.
pub trait DiagnosticExt {
    /// Adds a fix hint.
    fn with_hint(&mut self, hint: impl Into<String>) -> &mut Self;
    /// Records the offending value.
    fn with_value(&mut self, value: impl AsRef<str>) -> &mut Self;
    /// Names the component.
    fn with_component(&mut self, component: impl Into<String>) -> &mut Self;
}

impl DiagnosticExt for Diagnostic {
    fn with_hint(&mut self, hint: impl Into<String>) -> &mut Self {
        self.hint = Some(hint.into());
        self
    }
    fn with_value(&mut self, value: impl AsRef<str>) -> &mut Self {
        self.value = Some(crate::located::truncate_chars(value.as_ref(), 120));
        self
    }
    fn with_component(&mut self, component: impl Into<String>) -> &mut Self {
        self.component = Some(component.into());
        self
    }
}

/// Suggests the closest known name for a misspelt one ("did you mean …").
pub fn did_you_mean<'a>(input: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lowered = input.to_ascii_lowercase();
    known
        .into_iter()
        .map(|k| (k, strsim::jaro_winkler(&lowered, k)))
        .filter(|(_, score)| *score >= 0.85)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(k, _)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/checks.md gives every package check's gate as `gate()` does (one truth).
    #[test]
    fn the_documented_gates_are_the_gates() {
        let doc = include_str!("../docs/checks.md");
        for check in CheckId::of(Family::Package) {
            let row = doc
                .lines()
                .find(|l| l.starts_with(&format!("| `{}` |", check.as_str())))
                .unwrap_or_else(|| panic!("docs/checks.md has no row for {check}"));
            let gate = row.split(" | ").nth(3).unwrap_or_default();
            assert_eq!(gate, check.gate().as_str(), "{row}");
        }
        assert_eq!(CheckId::DeclaredTools.gate(), Gate::Admission);
        assert_eq!(CheckId::CtxCall.gate(), Gate::Load);
    }

    #[test]
    fn check_ids_are_unique_and_kebab() {
        let mut seen = std::collections::HashSet::new();
        for id in CheckId::ALL {
            assert!(seen.insert(id.as_str()), "duplicate id {id}");
            assert!(
                id.as_str()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '-')
            );
        }
    }

    #[test]
    fn suggestions() {
        let known = ["provides_tools", "provides_hooks", "requires_env"];
        assert_eq!(did_you_mean("provide_tools", known), Some("provides_tools"));
        assert_eq!(did_you_mean("requires_envs", known), Some("requires_env"));
        assert_eq!(did_you_mean("zzz", known), None);
    }
}
