//! VAL-4: `config_schema` entries make sense — defaults match types (a boolean is not a
//! number), choices contain the default and match the type, secrets name their `.env`
//! variable and never carry a value.

use crate::diag::{CheckId, Diagnostic};
use crate::located::{Dialect, Node, Value};
use crate::package::Spanned;
use crate::package::manifest::{ConfigField, ConfigType, Manifest};

/// Runs the config_schema rules.
pub fn check(m: &Manifest, file: &str, out: &mut Vec<Diagnostic>) {
    for field in &m.config_schema {
        check_field(field, file, out);
    }
}

fn type_word(kind: ConfigType) -> &'static str {
    match kind {
        ConfigType::Str => "a string",
        ConfigType::Int => "an integer",
        ConfigType::Number => "a number",
        ConfigType::Bool => "true or false",
        ConfigType::List => "a list",
        ConfigType::Dict => "a mapping",
        ConfigType::Secret => "a secret",
    }
}

fn check_field(field: &ConfigField, file: &str, out: &mut Vec<Diagnostic>) {
    let key = &field.key.value;
    let label = format!("config_schema.{key}");
    if field.type_text.is_none() {
        out.push(
            Diagnostic::warning(
                CheckId::ConfigSchema,
                file,
                field.key.pos,
                format!("{label} has no `type`; its values are not type-checked"),
            )
            .value(key)
            .hint("Add `type:` (str, int, float, bool, list, dict or secret)."),
        );
    }
    let kind = field.kind.as_ref().map(|k| k.value);
    if kind == Some(ConfigType::Secret) {
        check_secret(field, &label, file, out);
        return;
    }
    if let (Some(kind), Some(default)) = (kind, &field.default)
        && !default.is_null()
        && !kind.accepts(&default.value)
    {
        {
            let mut d = Diagnostic::error(
                CheckId::ConfigSchema,
                file,
                default.pos,
                format!(
                    "{label}.default must be {} to match its type, not {}",
                    type_word(kind),
                    default.type_name(Dialect::Yaml)
                ),
            )
            .value(default.snippet());
            if matches!(default.value, Value::Bool(_))
                && matches!(kind, ConfigType::Int | ConfigType::Number)
            {
                d = d.hint("A boolean is not a number here; use 0/1 or change the type to bool.");
            } else if kind == ConfigType::Str && !default.raw.is_empty() {
                d = d.hint(format!("Quote it: \"{}\".", default.raw));
            }
            out.push(d);
        }
    }
    if let Some(choices) = &field.choices {
        check_choices(field, choices, kind, &label, file, out);
    }
}

/// A secret entry carries no value (`default`), names its `.env` variable, has no choices.
fn check_secret(field: &ConfigField, label: &str, file: &str, out: &mut Vec<Diagnostic>) {
    let key = &field.key.value;
    if let Some(default) = &field.default {
        out.push(
            Diagnostic::error(
                CheckId::ConfigSchema,
                file,
                default.pos,
                format!("{label} is a secret and must not carry a value (default)"),
            )
            .value(default.snippet())
            .hint("Secrets live in .env: remove the default and name the variable with `env:`."),
        );
    }
    match &field.env {
        None => out.push(
            Diagnostic::error(
                CheckId::ConfigSchema,
                file,
                field.key.pos,
                format!("{label} is a secret but has no `env` naming its .env variable"),
            )
            .value(key)
            .hint(format!("Add `env: {}`.", key.to_ascii_uppercase())),
        ),
        Some(env) if !crate::package::fields::is_env_name(&env.value) => out.push(
            Diagnostic::error(
                CheckId::ConfigSchema,
                file,
                env.pos,
                format!(
                    "{label}.env `{}` is not an UPPER_SNAKE_CASE variable name",
                    env.value
                ),
            )
            .value(&env.value),
        ),
        Some(_) => {}
    }
    if let Some(choices) = &field.choices {
        out.push(
            Diagnostic::warning(
                CheckId::ConfigSchema,
                file,
                choices.pos,
                format!("{label} is a secret; choices are ignored"),
            )
            .value(format!("{} choice(s)", choices.value.len())),
        );
    }
}

/// `choices`: not empty, each of the field's type, containing the default.
fn check_choices(
    field: &ConfigField,
    choices: &Spanned<Vec<Node>>,
    kind: Option<ConfigType>,
    label: &str,
    file: &str,
    out: &mut Vec<Diagnostic>,
) {
    if choices.value.is_empty() {
        out.push(
            Diagnostic::error(
                CheckId::ConfigSchema,
                file,
                choices.pos,
                format!("{label}.choices is empty"),
            )
            .hint("List the allowed values, or remove choices."),
        );
    }
    if let Some(kind) = kind {
        for choice in &choices.value {
            if !kind.accepts(&choice.value) {
                out.push(
                    Diagnostic::error(
                        CheckId::ConfigSchema,
                        file,
                        choice.pos,
                        format!(
                            "{label}.choices item must be {} to match its type, not {}",
                            type_word(kind),
                            choice.type_name(Dialect::Yaml)
                        ),
                    )
                    .value(choice.snippet()),
                );
            }
        }
    }
    if let Some(default) = &field.default
        && !default.is_null()
        && !choices.value.iter().any(|c| c.value == default.value)
    {
        {
            out.push(
                Diagnostic::error(
                    CheckId::ConfigSchema,
                    file,
                    default.pos,
                    format!("{label}.default is not one of its choices"),
                )
                .value(default.snippet())
                .hint(format!(
                    "Choices: {}.",
                    choices
                        .value
                        .iter()
                        .map(|c| c.snippet())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
        }
    }
}
