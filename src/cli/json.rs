//! The JSON contract: every `--json` document names the JSON Schema (in `catalog-schema/`)
//! it follows in a leading `"$schema"` member, the schema's `$id`.

use serde_json::{Map, Value};

/// The schema a document follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schema {
    /// Any failure: `{"error": {code, exit_code, message, details?}}`.
    Error,
    List,
    Show,
    Env,
    Verify,
    Capabilities,
    /// `generations list`.
    Generations,
    /// `install`, `enable`, `disable`, `remove`, `sync`, `update`, `generations rollback|gc`.
    Operation,
    Resolve,
    Search,
    /// `nix hash`, `nix lock`, `nix expr`, `build`.
    Nix,
    /// `validate`, `catalog check`.
    ValidateReport,
    /// `catalog review`.
    Review,
    /// `catalog resolve-all`.
    ResolveAll,
    Config,
    Outdated,
    /// `catalog update`.
    CatalogUpdate,
    /// `activate`, `deactivate`.
    Activate,
    /// `pack install`, `pack show`, `pack export`.
    Pack,
}

impl Schema {
    /// Every document schema (the docs name each: a test checks).
    pub const ALL: [Schema; 19] = [
        Schema::Error,
        Schema::List,
        Schema::Show,
        Schema::Env,
        Schema::Verify,
        Schema::Capabilities,
        Schema::Generations,
        Schema::Operation,
        Schema::Resolve,
        Schema::Search,
        Schema::Nix,
        Schema::ValidateReport,
        Schema::Review,
        Schema::ResolveAll,
        Schema::Config,
        Schema::Outdated,
        Schema::CatalogUpdate,
        Schema::Activate,
        Schema::Pack,
    ];

    /// The schema's file name in `catalog-schema/`.
    pub fn file(self) -> &'static str {
        match self {
            Schema::Error => "error.schema.json",
            Schema::List => "list.schema.json",
            Schema::Show => "show.schema.json",
            Schema::Env => "env.schema.json",
            Schema::Verify => "verify.schema.json",
            Schema::Capabilities => "capabilities.schema.json",
            Schema::Generations => "generations.schema.json",
            Schema::Operation => "operation.schema.json",
            Schema::Resolve => "resolve.schema.json",
            Schema::Search => "search.schema.json",
            Schema::Nix => "nix.schema.json",
            Schema::ValidateReport => "validate-report.schema.json",
            Schema::Review => "review.schema.json",
            Schema::ResolveAll => "resolve-all.schema.json",
            Schema::Config => "config.schema.json",
            Schema::Outdated => "outdated.schema.json",
            Schema::CatalogUpdate => "catalog-update.schema.json",
            Schema::Activate => "activate.schema.json",
            Schema::Pack => "pack.schema.json",
        }
    }

    /// The schema's `$id`, the value of `"$schema"`.
    pub fn id(self) -> String {
        format!("urn:hermes-plugins:catalog-schema:{}", self.file())
    }
}

/// `value` (an object) with `"$schema"` first.
pub fn document(schema: Schema, value: Value) -> Value {
    let mut out = Map::new();
    out.insert("$schema".into(), Value::String(schema.id()));
    match value {
        Value::Object(map) => out.extend(map.into_iter().filter(|(k, _)| k != "$schema")),
        other => {
            out.insert("value".into(), other);
        }
    }
    Value::Object(out)
}

/// `value` serialised as a pretty document following `schema`, with a final newline.
pub fn text(schema: Schema, value: &impl serde::Serialize) -> String {
    let value = serde_json::to_value(value).unwrap_or(Value::Null);
    serde_json::to_string_pretty(&document(schema, value)).unwrap_or_default() + "\n"
}
