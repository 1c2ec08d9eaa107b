//! The native manifest: `plugin.yaml` (or `plugin.yml`) v1 and v2, typed field by field.
//!
//! Every field of MAN-1/MAN-2 is read into a typed value that remembers its position.
//! Legacy spellings are accepted: `hooks` (for `provides_hooks`), `pip_dependencies` (merged
//! with `python_dependencies` by the declarations reader), `password` (for `secret`).
//! Unknown fields are kept as warnings with a "did you mean".

use crate::diag::{CheckId, DiagnosticExt, Severity, Sink, did_you_mean};
use crate::known;
use crate::located::{Dialect, Entry, Node, Pos, Value};

use super::fields::{FieldReader, Mode, Spanned};

/// The plugin kind (MAN-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A general plugin, opted in through `plugins.enabled` (the default).
    Standalone,
    /// A pluggable backend for a core tool.
    Backend,
    /// One active provider of a category (memory providers).
    Exclusive,
    /// A gateway platform adapter.
    Platform,
    /// An LLM provider.
    ModelProvider,
}

impl Kind {
    /// The spelling used in manifests.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Standalone => "standalone",
            Kind::Backend => "backend",
            Kind::Exclusive => "exclusive",
            Kind::Platform => "platform",
            Kind::ModelProvider => "model-provider",
        }
    }

    fn parse(text: &str) -> Option<Kind> {
        Some(match text.trim().to_ascii_lowercase().as_str() {
            "standalone" => Kind::Standalone,
            "backend" => Kind::Backend,
            "exclusive" => Kind::Exclusive,
            "platform" => Kind::Platform,
            "model-provider" => Kind::ModelProvider,
            _ => return None,
        })
    }
}

/// One program a plugin needs on the host (`external_dependencies` item).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExternalDependency {
    /// What it is (`ffmpeg`).
    pub name: Option<String>,
    /// How to install it.
    pub install: Option<String>,
    /// A command that succeeds when it is present.
    pub check: Option<String>,
    /// Where the item is.
    pub pos: Pos,
}

/// The author: a plain string or a `{name, email, url}` mapping.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Author {
    /// Display name.
    pub name: Option<String>,
    /// E-mail address.
    pub email: Option<String>,
    /// Home page.
    pub url: Option<String>,
    /// Where the field was written.
    pub pos: Pos,
}

impl Author {
    /// "name, email, url" for display.
    pub fn display(&self) -> String {
        [&self.name, &self.email, &self.url]
            .into_iter()
            .flatten()
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One `requires_env` / `optional_env` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvVar {
    /// The variable name.
    pub name: Spanned<String>,
    /// What it is for, shown when prompting.
    pub description: Option<String>,
    /// Where to obtain it.
    pub url: Option<String>,
    /// The prompt text (platform plugins).
    pub prompt: Option<String>,
    /// Whether input is hidden (`secret`, or its synonym `password`).
    pub secret: bool,
    /// Where `password: true` was written without `secret: true` (Hermes's install prompt
    /// reads only `secret`).
    pub password_only: Option<Pos>,
}

/// A `provides_locales` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct LocaleDecl {
    /// Lowercase BCP-47-like id (`pl`, `pt-br`, `zh-hant`).
    pub id: Spanned<String>,
    /// The language's own name, shown in language switchers.
    pub endonym: Option<String>,
    /// Right-to-left script.
    pub rtl: bool,
}

/// A `requires_plugins` entry: another plugin this one works with (advisory).
#[derive(Debug, Clone, PartialEq)]
pub struct PluginRequirement {
    /// The other plugin's key or name.
    pub id: Spanned<String>,
    /// A PEP 440 specifier set its version must satisfy, as written.
    pub version_range: Option<Spanned<String>>,
}

/// The declared type of a `config_schema` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigType {
    /// `str` / `string`.
    Str,
    /// `int` / `integer`.
    Int,
    /// `float` / `number` (integers allowed).
    Number,
    /// `bool` / `boolean`.
    Bool,
    /// `list` / `array`.
    List,
    /// `dict` / `object`.
    Dict,
    /// `secret`: stored in `.env`, never in config.
    Secret,
}

impl ConfigType {
    /// Parses a type name (case-insensitive).
    pub fn parse(text: &str) -> Option<ConfigType> {
        Some(match text.to_ascii_lowercase().as_str() {
            "str" | "string" => ConfigType::Str,
            "int" | "integer" => ConfigType::Int,
            "float" | "number" => ConfigType::Number,
            "bool" | "boolean" => ConfigType::Bool,
            "list" | "array" => ConfigType::List,
            // `mapping` and `map` as upstream main's `hermes plugins validate` accepts them.
            "dict" | "object" | "mapping" | "map" => ConfigType::Dict,
            "secret" => ConfigType::Secret,
            _ => return None,
        })
    }

    /// Whether a value of this tree type satisfies the declared type (a boolean is not a number).
    pub fn accepts(self, value: &Value) -> bool {
        match self {
            ConfigType::Str | ConfigType::Secret => matches!(value, Value::Str(_)),
            ConfigType::Int => matches!(value, Value::Int(_)),
            ConfigType::Number => matches!(value, Value::Int(_) | Value::Float(_)),
            ConfigType::Bool => matches!(value, Value::Bool(_)),
            ConfigType::List => matches!(value, Value::Seq(_)),
            ConfigType::Dict => matches!(value, Value::Map(_)),
        }
    }
}

/// One `config_schema` setting.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigField {
    /// The setting key.
    pub key: Spanned<String>,
    /// The declared type, if known.
    pub kind: Option<Spanned<ConfigType>>,
    /// The raw type text (kept when unknown).
    pub type_text: Option<Spanned<String>>,
    /// The default value as written.
    pub default: Option<Node>,
    /// Display label (`label` or `title`).
    pub label: Option<String>,
    /// Help text.
    pub description: Option<String>,
    /// Whether the setting must be set.
    pub required: bool,
    /// Allowed values (`choices` or `enum`).
    pub choices: Option<Spanned<Vec<Node>>>,
    /// For secrets: the `.env` variable that holds the value.
    pub env: Option<Spanned<String>>,
}

/// `python_runtime`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PythonRuntime {
    /// The plugin owns its interpreter; its dependencies stay out of the shared environment.
    External,
}

/// A typed `plugin.yaml`. A field documented by nothing else is the manifest key of the same
/// name, as written there (with its position where it is `Spanned`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Manifest {
    /// `manifest_version` (1 when absent or invalid).
    pub manifest_version: i64,
    /// Where `manifest_version` was written.
    pub manifest_version_pos: Option<Pos>,
    pub name: Option<Spanned<String>>,
    pub version: Option<Spanned<String>>,
    pub description: Option<Spanned<String>>,
    pub author: Option<Author>,
    /// `kind` (standalone when absent or unknown).
    pub kind: Option<Spanned<Kind>>,
    pub label: Option<Spanned<String>>,
    pub provides_tools: Vec<Spanned<String>>,
    /// `provides_hooks` plus the legacy `hooks`.
    pub provides_hooks: Vec<Spanned<String>>,
    pub provides_middleware: Vec<Spanned<String>>,
    pub requires_env: Vec<EnvVar>,
    pub optional_env: Vec<EnvVar>,
    pub capabilities: Vec<Spanned<String>>,
    pub requires_auth: Vec<Spanned<String>>,
    pub provides_locales: Vec<LocaleDecl>,
    /// Where `provides_locales` was written.
    pub provides_locales_pos: Option<Pos>,
    pub platforms: Vec<Spanned<String>>,
    /// `external_dependencies` (programs the plugin needs on the host), as Hermes reads them
    /// (`hermes_cli/web_server.py` `_memory_provider_setup_manifest`, `memory_setup.py`).
    pub external_dependencies: Vec<ExternalDependency>,
    pub provides_web_providers: Vec<Spanned<String>>,
    pub provides_browser_providers: Vec<Spanned<String>>,
    /// `pip_dependencies` (legacy).
    pub pip_dependencies: Vec<Spanned<String>>,
    pub python_dependencies: Vec<Spanned<String>>,
    pub requires_hermes: Option<Spanned<String>>,
    pub api_version: Option<Spanned<i64>>,
    pub license: Option<Spanned<String>>,
    pub homepage: Option<Spanned<String>>,
    pub tags: Vec<Spanned<String>>,
    pub requires_plugins: Vec<PluginRequirement>,
    pub config_schema: Vec<ConfigField>,
    pub python_runtime: Option<Spanned<PythonRuntime>>,
    /// `emits` (event-bus names, advisory).
    pub emits: Vec<Spanned<String>>,
    /// `listens` (event-bus names, advisory).
    pub listens: Vec<Spanned<String>>,
    /// Every top-level field written in the file, with its key position.
    pub present: Vec<Spanned<String>>,
    /// Top-level fields written with no value (`name:`).
    pub null_fields: Vec<String>,
}

impl Manifest {
    /// Whether the field was written in the file (whatever its value).
    pub fn has_field(&self, field: &str) -> bool {
        self.present.iter().any(|p| p.value == field)
    }

    /// Where a top-level field's key was written.
    pub fn field_pos(&self, field: &str) -> Option<Pos> {
        self.present
            .iter()
            .find(|p| p.value == field)
            .map(|p| p.pos)
    }

    /// Whether a top-level field was written with no value.
    pub fn is_null(&self, field: &str) -> bool {
        self.null_fields.iter().any(|f| f == field)
    }

    /// The effective kind.
    pub fn kind(&self) -> Kind {
        self.kind.as_ref().map_or(Kind::Standalone, |k| k.value)
    }

    /// Reads a manifest from its parsed tree (the root must already be known to be a mapping).
    pub fn from_tree(root: &Node, sink: &mut Sink<'_>, mode: Mode) -> Manifest {
        let mut reader = FieldReader::new(sink, Dialect::Yaml, mode);
        let entries = root.as_map().unwrap_or(&[]);
        let mut m = Manifest {
            manifest_version: 1,
            ..Manifest::default()
        };
        // manifest_version first: it decides how loud unknown fields are.
        if let Some(entry) = entries.iter().find(|e| e.key == "manifest_version") {
            m.manifest_version_pos = Some(entry.value.pos);
            if let Some(v) =
                reader.integer(CheckId::ManifestFields, "manifest_version", &entry.value)
            {
                if v.value < 1 {
                    reader
                        .report(
                            CheckId::ManifestFields,
                            reader.type_severity(),
                            v.pos,
                            "`manifest_version` must be 1 or greater; treating it as 1",
                        )
                        .with_value(v.value.to_string());
                } else {
                    m.manifest_version = v.value;
                }
            }
        }
        if m.manifest_version > known::SUPPORTED_MANIFEST_VERSION {
            let pos = m.manifest_version_pos.unwrap_or(Pos::START);
            reader
                .report(
                    CheckId::ManifestFields,
                    Severity::Warning,
                    pos,
                    format!(
                        "manifest_version {} is newer than this tool supports ({}); fields it does not know are ignored",
                        m.manifest_version,
                        known::SUPPORTED_MANIFEST_VERSION
                    ),
                )
                .with_value(m.manifest_version.to_string())
                .with_hint("Upgrade hermes-plugins (and Hermes), or declare manifest_version: 2 if the manifest uses nothing newer.");
        }
        let mut saw_provides_hooks = false;
        let mut saw_hooks = false;
        for entry in entries {
            m.present
                .push(Spanned::new(entry.key.clone(), entry.key_pos));
            let node = &entry.value;
            if node.is_null() {
                m.null_fields.push(entry.key.clone());
            }
            let check = CheckId::ManifestFields;
            match entry.key.as_str() {
                "manifest_version" => {}
                "name" => m.name = reader.string(check, "name", node),
                "version" => m.version = read_version(&mut reader, node),
                "description" => m.description = reader.string(check, "description", node),
                "author" => m.author = read_author(&mut reader, node),
                "kind" => m.kind = read_kind(&mut reader, node),
                "label" => m.label = reader.string(check, "label", node),
                "provides_tools" => {
                    m.provides_tools = reader.string_list(check, "provides_tools", node)
                }
                "provides_hooks" => {
                    saw_provides_hooks = true;
                    let hooks = reader.string_list(check, "provides_hooks", node);
                    merge_unique(&mut m.provides_hooks, hooks);
                }
                "hooks" => {
                    saw_hooks = true;
                    let hooks = reader.string_list(check, "hooks", node);
                    merge_unique(&mut m.provides_hooks, hooks);
                }
                "provides_middleware" => {
                    m.provides_middleware = reader.string_list(check, "provides_middleware", node)
                }
                "requires_env" => m.requires_env = read_env_list(&mut reader, "requires_env", node),
                "optional_env" => m.optional_env = read_env_list(&mut reader, "optional_env", node),
                "capabilities" => {
                    m.capabilities = reader.string_list(CheckId::Capabilities, "capabilities", node)
                }
                "requires_auth" => {
                    m.requires_auth =
                        reader.string_list(CheckId::RequiresAuth, "requires_auth", node)
                }
                "provides_locales" => {
                    m.provides_locales_pos = Some(node.pos);
                    m.provides_locales = read_locales(&mut reader, node);
                }
                "platforms" => m.platforms = reader.string_list(check, "platforms", node),
                "external_dependencies" => {
                    m.external_dependencies = read_external_dependencies(&mut reader, node)
                }
                "provides_web_providers" => {
                    m.provides_web_providers =
                        reader.string_list(check, "provides_web_providers", node)
                }
                "provides_browser_providers" => {
                    m.provides_browser_providers =
                        reader.string_list(check, "provides_browser_providers", node)
                }
                "pip_dependencies" => {
                    m.pip_dependencies =
                        reader.string_list(CheckId::PythonDependencies, "pip_dependencies", node)
                }
                "python_dependencies" => {
                    m.python_dependencies =
                        reader.string_list(CheckId::PythonDependencies, "python_dependencies", node)
                }
                "requires_hermes" => {
                    m.requires_hermes =
                        reader.string(CheckId::RequiresHermes, "requires_hermes", node)
                }
                "api_version" => m.api_version = reader.integer(check, "api_version", node),
                "license" => m.license = reader.string(check, "license", node),
                "homepage" => m.homepage = reader.string(check, "homepage", node),
                "tags" => m.tags = reader.string_list(check, "tags", node),
                "requires_plugins" => m.requires_plugins = read_requires_plugins(&mut reader, node),
                "config_schema" => m.config_schema = read_config_schema(&mut reader, node),
                "python_runtime" => m.python_runtime = read_python_runtime(&mut reader, node),
                "emits" => m.emits = reader.string_list(check, "emits", node),
                "listens" => m.listens = reader.string_list(check, "listens", node),
                "hermes" | "depends" => {}
                _ => unknown_field(&mut reader, entry, m.manifest_version),
            }
        }
        if saw_hooks && saw_provides_hooks {
            let pos = entries
                .iter()
                .find(|e| e.key == "hooks")
                .map_or(Pos::START, |e| e.key_pos);
            reader
                .report(
                    CheckId::ManifestFields,
                    Severity::Info,
                    pos,
                    "both `provides_hooks` and the legacy `hooks` are present; their lists are combined",
                )
                .with_hint("Keep only provides_hooks.");
        }
        m
    }
}

fn merge_unique(into: &mut Vec<Spanned<String>>, items: Vec<Spanned<String>>) {
    let mut seen: std::collections::HashSet<String> =
        into.iter().map(|e| e.value.clone()).collect();
    for item in items {
        if seen.insert(item.value.clone()) {
            into.push(item);
        }
    }
}

fn unknown_field(reader: &mut FieldReader<'_, '_>, entry: &Entry, manifest_version: i64) {
    let known = known::MANIFEST_V1_FIELDS
        .iter()
        .chain(known::MANIFEST_V2_FIELDS)
        .copied();
    let suggestion = did_you_mean(&entry.key, known);
    let quiet = manifest_version < 2 && suggestion.is_none();
    let message = format!(
        "unknown field `{}` is ignored{}",
        entry.key,
        if quiet {
            " (a newer manifest field, or a typo?)"
        } else {
            ""
        }
    );
    let diag = reader.report(
        CheckId::ManifestFields,
        Severity::Warning,
        entry.key_pos,
        message,
    );
    diag.with_value(&entry.key);
    if let Some(s) = suggestion {
        diag.with_hint(format!("Did you mean `{s}`?"));
    }
}

fn read_version(reader: &mut FieldReader<'_, '_>, node: &Node) -> Option<Spanned<String>> {
    match &node.value {
        Value::Str(s) => Some(Spanned::new(s.clone(), node.pos)),
        Value::Null => None,
        Value::Int(_) | Value::Float(_) => {
            // Hermes itself stringifies a numeric version; keep that text at runtime.
            reader.wrong_type(CheckId::ManifestFields, "version", node, "a string");
            match reader.mode {
                Mode::Runtime => Some(Spanned::new(node.raw.clone(), node.pos)),
                Mode::Validate => None,
            }
        }
        _ => {
            reader.wrong_type(CheckId::ManifestFields, "version", node, "a string");
            None
        }
    }
}

/// `external_dependencies`: a list of mappings `{name, install, check}` (all strings). Hermes's
/// readers skip anything that is not a mapping (`web_server.py`) or fail on it
/// (`memory_setup.py` calls `.get` on each item), so other items are reported and dropped.
fn read_external_dependencies(
    reader: &mut FieldReader<'_, '_>,
    node: &Node,
) -> Vec<ExternalDependency> {
    const KEYS: [&str; 3] = ["name", "install", "check"];
    let Value::Seq(items) = &node.value else {
        if !node.is_null() {
            reader.wrong_type(
                CheckId::ManifestFields,
                "external_dependencies",
                node,
                "a list of mappings with name, install and check",
            );
        }
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let field = format!("external_dependencies[{i}]");
        let Value::Map(entries) = &item.value else {
            let what = item.type_name(Dialect::Yaml);
            reader
                .report(
                    CheckId::ManifestFields,
                    reader.type_severity(),
                    item.pos,
                    format!("{field} is a {what}; Hermes reads each external dependency as a mapping {{name, install, check}}: the dashboard skips anything else and `hermes memory setup` fails on it"),
                )
                .with_value(item.snippet())
                .with_hint("Write it as `- {name: ffmpeg, check: \"ffmpeg -version\", install: \"apt install ffmpeg\"}`.");
            continue;
        };
        let mut dep = ExternalDependency {
            pos: item.pos,
            ..ExternalDependency::default()
        };
        for entry in entries {
            let key = format!("{field}.{}", entry.key);
            match entry.key.as_str() {
                "name" | "install" | "check" => {
                    let value = reader
                        .string(CheckId::ManifestFields, &key, &entry.value)
                        .map(|s| s.value);
                    match entry.key.as_str() {
                        "name" => dep.name = value,
                        "install" => dep.install = value,
                        _ => dep.check = value,
                    }
                }
                other => {
                    let suggestion = did_you_mean(other, KEYS);
                    let diag = reader.report(
                        CheckId::ManifestFields,
                        Severity::Warning,
                        entry.key_pos,
                        format!("unknown field `{other}` in {field} is ignored (Hermes reads name, install and check)"),
                    );
                    diag.with_value(other);
                    if let Some(s) = suggestion {
                        diag.with_hint(format!("Did you mean `{s}`?"));
                    }
                }
            }
        }
        out.push(dep);
    }
    out
}

fn read_author(reader: &mut FieldReader<'_, '_>, node: &Node) -> Option<Author> {
    match &node.value {
        Value::Str(s) => Some(Author {
            name: Some(s.clone()),
            pos: node.pos,
            ..Author::default()
        }),
        Value::Null => None,
        Value::Map(entries) => {
            let mut author = Author {
                pos: node.pos,
                ..Author::default()
            };
            for entry in entries {
                let field = format!("author.{}", entry.key);
                let value = reader
                    .string(CheckId::ManifestFields, &field, &entry.value)
                    .map(|s| s.value);
                match entry.key.as_str() {
                    "name" => author.name = value,
                    "email" => author.email = value,
                    "url" => author.url = value,
                    other => {
                        let suggestion = did_you_mean(other, ["name", "email", "url"]);
                        let diag = reader.report(
                            CheckId::ManifestFields,
                            Severity::Warning,
                            entry.key_pos,
                            format!("unknown author field `{other}` is ignored (author has name, email and url)"),
                        );
                        diag.with_value(other);
                        if let Some(s) = suggestion {
                            diag.with_hint(format!("Did you mean `{s}`?"));
                        }
                    }
                }
            }
            Some(author)
        }
        _ => {
            reader.wrong_type(
                CheckId::ManifestFields,
                "author",
                node,
                "a string or a mapping with name, email and url",
            );
            None
        }
    }
}

fn read_kind(reader: &mut FieldReader<'_, '_>, node: &Node) -> Option<Spanned<Kind>> {
    let text = reader.string(CheckId::ManifestFields, "kind", node)?;
    match Kind::parse(&text.value) {
        Some(kind) => Some(Spanned::new(kind, text.pos)),
        None => {
            let suggestion = did_you_mean(&text.value, known::KINDS.iter().copied());
            let diag = reader.report(
                CheckId::ManifestFields,
                Severity::Warning,
                text.pos,
                format!(
                    "unknown kind `{}`; Hermes treats the plugin as `standalone` (known kinds: {})",
                    text.value,
                    known::KINDS.join(", ")
                ),
            );
            diag.with_value(&text.value);
            if let Some(s) = suggestion {
                diag.with_hint(format!("Did you mean `{s}`?"));
            }
            None
        }
    }
}

fn read_env_list(reader: &mut FieldReader<'_, '_>, field: &str, node: &Node) -> Vec<EnvVar> {
    let check = CheckId::RequiresEnv;
    let mut out = Vec::new();
    for (index, item) in reader.list(check, field, node).iter().enumerate() {
        let label = format!("{field}[{index}]");
        match &item.value {
            Value::Str(name) => out.push(EnvVar {
                name: Spanned::new(name.clone(), item.pos),
                description: None,
                url: None,
                prompt: None,
                secret: false,
                password_only: None,
            }),
            Value::Map(entries) => {
                let mut name = None;
                let mut var = EnvVar {
                    name: Spanned::new(String::new(), item.pos),
                    description: None,
                    url: None,
                    prompt: None,
                    secret: false,
                    password_only: None,
                };
                let mut said_secret = false;
                for entry in entries {
                    let sub = format!("{label}.{}", entry.key);
                    match entry.key.as_str() {
                        "name" => name = reader.string(check, &sub, &entry.value),
                        "description" => {
                            var.description =
                                reader.string(check, &sub, &entry.value).map(|s| s.value)
                        }
                        "url" => {
                            var.url = reader.string(check, &sub, &entry.value).map(|s| s.value)
                        }
                        "prompt" => {
                            var.prompt = reader.string(check, &sub, &entry.value).map(|s| s.value)
                        }
                        "secret" | "password" => {
                            if let Some(b) = reader.boolean(check, &sub, &entry.value) {
                                var.secret |= b.value;
                                if entry.key == "secret" {
                                    said_secret |= b.value;
                                } else if b.value {
                                    var.password_only = Some(entry.key_pos);
                                }
                            }
                        }
                        other => {
                            let suggestion =
                                did_you_mean(other, known::ENV_ENTRY_KEYS.iter().copied());
                            let diag = reader.report(
                                check,
                                Severity::Warning,
                                entry.key_pos,
                                format!("unknown key `{other}` in {label} is ignored"),
                            );
                            diag.with_value(other);
                            if let Some(s) = suggestion {
                                diag.with_hint(format!("Did you mean `{s}`?"));
                            }
                        }
                    }
                }
                if said_secret {
                    var.password_only = None;
                }
                match name {
                    Some(n) => {
                        var.name = n;
                        out.push(var);
                    }
                    None => {
                        let severity = reader.type_severity();
                        reader
                            .report(check, severity, item.pos, format!("{label} has no `name`"))
                            .with_hint("Write the variable name: `- name: MY_API_KEY`.");
                    }
                }
            }
            _ => {
                reader.wrong_type(
                    check,
                    &label,
                    item,
                    "a variable name or a mapping with `name`",
                );
            }
        }
    }
    out
}

fn read_locales(reader: &mut FieldReader<'_, '_>, node: &Node) -> Vec<LocaleDecl> {
    let check = CheckId::Locales;
    let mut out = Vec::new();
    for (index, item) in reader
        .list(check, "provides_locales", node)
        .iter()
        .enumerate()
    {
        let label = format!("provides_locales[{index}]");
        let Some(entries) = item.as_map() else {
            reader.wrong_type(check, &label, item, "a mapping with id, endonym and rtl");
            continue;
        };
        let mut id = None;
        let mut decl_endonym = None;
        let mut rtl = false;
        for entry in entries {
            let sub = format!("{label}.{}", entry.key);
            match entry.key.as_str() {
                "id" => id = reader.string(check, &sub, &entry.value),
                "endonym" => {
                    decl_endonym = reader.string(check, &sub, &entry.value).map(|s| s.value)
                }
                "rtl" => {
                    rtl = reader
                        .boolean(check, &sub, &entry.value)
                        .is_some_and(|b| b.value)
                }
                other => {
                    reader
                        .report(
                            check,
                            Severity::Warning,
                            entry.key_pos,
                            format!("unknown key `{other}` in {label} is ignored"),
                        )
                        .with_value(other);
                }
            }
        }
        match id {
            Some(id) => out.push(LocaleDecl {
                id,
                endonym: decl_endonym,
                rtl,
            }),
            None => {
                let severity = reader.type_severity();
                reader
                    .report(check, severity, item.pos, format!("{label} has no `id`"))
                    .with_hint("Give the language id, e.g. `id: pl`.");
            }
        }
    }
    out
}

fn read_requires_plugins(reader: &mut FieldReader<'_, '_>, node: &Node) -> Vec<PluginRequirement> {
    let check = CheckId::ManifestFields;
    let mut out = Vec::new();
    for (index, item) in reader
        .list(check, "requires_plugins", node)
        .iter()
        .enumerate()
    {
        let label = format!("requires_plugins[{index}]");
        match &item.value {
            Value::Str(id) if !id.trim().is_empty() => out.push(PluginRequirement {
                id: Spanned::new(id.clone(), item.pos),
                version_range: None,
            }),
            Value::Map(entries) => {
                let mut id = None;
                let mut range = None;
                for entry in entries {
                    let sub = format!("{label}.{}", entry.key);
                    match entry.key.as_str() {
                        "id" => id = reader.string(check, &sub, &entry.value),
                        "version_range" => range = reader.string(check, &sub, &entry.value),
                        other => {
                            reader
                                .report(
                                    check,
                                    Severity::Warning,
                                    entry.key_pos,
                                    format!("unknown key `{other}` in {label} is ignored"),
                                )
                                .with_value(other);
                        }
                    }
                }
                match id.filter(|i| !i.value.trim().is_empty()) {
                    Some(id) => out.push(PluginRequirement {
                        id,
                        version_range: range,
                    }),
                    None => {
                        let severity = reader.type_severity();
                        reader
                            .report(check, severity, item.pos, format!("{label} has no plugin `id`"))
                            .with_hint("Write `- id: other-plugin` (optionally with version_range: \">=1.0,<2\").");
                    }
                }
            }
            _ => {
                reader.wrong_type(
                    check,
                    &label,
                    item,
                    "a plugin id or a mapping with `id` and `version_range`",
                );
            }
        }
    }
    out
}

fn read_config_schema(reader: &mut FieldReader<'_, '_>, node: &Node) -> Vec<ConfigField> {
    let check = CheckId::ConfigSchema;
    let mut out = Vec::new();
    for entry in reader.map(check, "config_schema", node) {
        let label = format!("config_schema.{}", entry.key);
        let Some(fields) = entry.value.as_map() else {
            reader.wrong_type(
                check,
                &label,
                &entry.value,
                "a mapping such as {type: str, default: \"\"}",
            );
            continue;
        };
        let mut field = ConfigField {
            key: Spanned::new(entry.key.clone(), entry.key_pos),
            kind: None,
            type_text: None,
            default: None,
            label: None,
            description: None,
            required: false,
            choices: None,
            env: None,
        };
        for f in fields {
            let sub = format!("{label}.{}", f.key);
            match f.key.as_str() {
                "type" => {
                    if let Some(text) = reader.string(check, &sub, &f.value) {
                        match ConfigType::parse(&text.value) {
                            Some(kind) => field.kind = Some(Spanned::new(kind, text.pos)),
                            None => {
                                let suggestion =
                                    did_you_mean(&text.value, known::CONFIG_TYPES.iter().copied());
                                let severity = reader.type_severity();
                                let diag = reader.report(
                                    check,
                                    severity,
                                    text.pos,
                                    format!(
                                        "{sub} `{}` is not a known type (known: {})",
                                        text.value,
                                        known::CONFIG_TYPES.join(", ")
                                    ),
                                );
                                diag.with_value(&text.value);
                                if let Some(s) = suggestion {
                                    diag.with_hint(format!("Did you mean `{s}`?"));
                                }
                            }
                        }
                        field.type_text = Some(text);
                    }
                }
                "default" => field.default = Some(f.value.clone()),
                "label" | "title" => {
                    field.label = reader.string(check, &sub, &f.value).map(|s| s.value)
                }
                "description" => {
                    field.description = reader.string(check, &sub, &f.value).map(|s| s.value)
                }
                "required" => {
                    field.required = reader
                        .boolean(check, &sub, &f.value)
                        .is_some_and(|b| b.value)
                }
                "choices" | "enum" => {
                    let items = reader.list(check, &sub, &f.value).to_vec();
                    if matches!(f.value.value, Value::Seq(_)) {
                        field.choices = Some(Spanned::new(items, f.value.pos));
                    }
                }
                "env" => field.env = reader.string(check, &sub, &f.value),
                other => {
                    let suggestion = did_you_mean(other, known::CONFIG_ENTRY_KEYS.iter().copied());
                    let diag = reader.report(
                        check,
                        Severity::Warning,
                        f.key_pos,
                        format!("unknown key `{other}` in {label} is ignored"),
                    );
                    diag.with_value(other);
                    if let Some(s) = suggestion {
                        diag.with_hint(format!("Did you mean `{s}`?"));
                    }
                }
            }
        }
        out.push(field);
    }
    out
}

fn read_python_runtime(
    reader: &mut FieldReader<'_, '_>,
    node: &Node,
) -> Option<Spanned<PythonRuntime>> {
    let text = reader.string(CheckId::PythonDependencies, "python_runtime", node)?;
    if text.value == "external" {
        return Some(Spanned::new(PythonRuntime::External, text.pos));
    }
    let severity = reader.type_severity();
    reader
        .report(
            CheckId::PythonDependencies,
            severity,
            text.pos,
            format!("python_runtime `{}` is not supported; the only value is `external`", text.value),
        )
        .with_value(&text.value)
        .with_hint("Remove python_runtime to share Hermes' environment, or write `python_runtime: external`.");
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::located::{Limits, yaml};

    fn read(text: &str, mode: Mode) -> (Manifest, Vec<crate::diag::Diagnostic>) {
        let root = yaml::parse(text, Limits::default()).unwrap().root;
        let mut out = Vec::new();
        let mut sink = Sink::new("plugin.yaml", &mut out);
        let m = Manifest::from_tree(&root, &mut sink, mode);
        (m, out)
    }

    #[test]
    fn runtime_mode_degrades_field_by_field() {
        let text = "name: p\nversion: 1.0\nprovides_tools: calc\nkind: platform\nhooks: [on_session_end]\n";
        let (m, out) = read(text, Mode::Runtime);
        assert!(
            out.iter().all(|d| d.severity == Severity::Warning),
            "{out:?}"
        );
        assert_eq!(out.len(), 2);
        assert_eq!(
            m.version.as_ref().unwrap().value,
            "1.0",
            "Hermes stringifies a numeric version"
        );
        assert!(
            m.provides_tools.is_empty(),
            "a wrong type falls back to the default"
        );
        assert_eq!(m.kind(), Kind::Platform, "other fields still load");
        assert_eq!(
            m.provides_hooks[0].value, "on_session_end",
            "legacy `hooks` is read"
        );
        let (m, out) = read(text, Mode::Validate);
        assert_eq!(
            out.iter().filter(|d| d.severity == Severity::Error).count(),
            2
        );
        assert!(m.version.is_none());
    }

    #[test]
    fn env_entries_mix_strings_and_mappings() {
        let text =
            "requires_env:\n  - A_KEY\n  - name: B_TOKEN\n    password: true\n    prompt: Token\n";
        let (m, out) = read(text, Mode::Validate);
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(m.requires_env.len(), 2);
        assert!(!m.requires_env[0].secret && m.requires_env[1].secret);
        assert_eq!(m.requires_env[1].prompt.as_deref(), Some("Token"));
        assert!(m.requires_env[1].password_only.is_some());
        let (m, _) = read(
            "requires_env:\n  - name: B_TOKEN\n    password: true\n    secret: true\n",
            Mode::Validate,
        );
        assert!(m.requires_env[0].password_only.is_none());
    }

    #[test]
    fn config_types_take_upstream_aliases() {
        for name in ["dict", "object", "mapping", "Map"] {
            assert_eq!(ConfigType::parse(name), Some(ConfigType::Dict), "{name}");
        }
        assert_eq!(ConfigType::parse("hash"), None);
        for name in known::CONFIG_TYPES {
            assert!(ConfigType::parse(name).is_some(), "{name}");
        }
    }

    #[test]
    fn empty_fields_are_remembered() {
        let (m, _) = read("name:\nversion: 1.0.0\n", Mode::Validate);
        assert!(m.name.is_none() && m.is_null("name") && !m.is_null("version"));
        assert_eq!(m.field_pos("name").map(|p| p.line), Some(1));
    }
}
