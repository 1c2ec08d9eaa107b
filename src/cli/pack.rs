//! `pack install PACK.yaml | show PACK.yaml | export`: Hermes 0.22's plugin packs.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::json;

use super::error::CliError;
use super::global::GlobalArgs;
use super::json::Schema;
use super::manage::{self, EnvArgs, StderrFeedback, TerminalPrompter};
use crate::exit::Status;
use crate::manager::{self, DepsConsent};
use crate::pack::{self, Pack};

/// Arguments of `pack`.
#[derive(Debug, Args)]
pub struct PackArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: PackAction,
}

/// `pack` subcommands.
#[derive(Debug, Subcommand)]
pub enum PackAction {
    /// Install every plugin of a pack at its pinned commit, enabled and seeded, as one generation
    #[command(
        after_help = "Example:\n  hermes-plugins pack install team-kit.yaml --yes-deps\n\nEvery plugin is fetched at its commit and validated first; then all are stored, enabled in --profile and their plugins.entries seeds written where unset, published as ONE generation — or nothing changes. Skills the pack lists are shown, not installed."
    )]
    Install {
        /// The pack file (hermes-pack.yaml)
        file: PathBuf,
        /// Consent to the dependency changes without asking
        #[arg(long, conflicts_with = "no_deps")]
        yes_deps: bool,
        /// Refuse any dependency change
        #[arg(long)]
        no_deps: bool,
        /// Install despite validation errors (never despite a dangerous verdict)
        #[arg(long)]
        force: bool,
        /// Approve plugins that patch Hermes internals
        #[arg(long)]
        allow_core_patch: bool,
        /// Install even what the catalog's kill list names
        #[arg(long)]
        allow_removed: bool,
        /// Environment options (boxed: the variant would otherwise dwarf the others).
        #[command(flatten)]
        env: Box<EnvArgs>,
    },
    /// Read a pack and show what it would install (nothing is fetched)
    Show {
        /// The pack file (hermes-pack.yaml)
        file: PathBuf,
    },
    /// Write the installed plugins as a pack (git sources at their commits; settings without
    /// secrets or consent keys)
    #[command(
        after_help = "Example:\n  hermes-plugins pack export --name team-kit > team-kit.yaml"
    )]
    Export {
        /// The pack's name
        #[arg(long, default_value = "my-hermes-pack")]
        name: String,
        /// Only the plugins enabled in --profile
        #[arg(long)]
        enabled_only: bool,
    },
}

/// Reads and parses a pack file (at most [`pack::MAX_BYTES`]).
fn read(file: &std::path::Path) -> Result<Pack, CliError> {
    let shown = file.display().to_string();
    let bytes = crate::files::read_regular(file, pack::MAX_BYTES as u64 + 1)
        .map_err(|e| CliError::usage(format!("{shown}: {e}")))?
        .ok_or_else(|| CliError::usage(format!("{shown}: no such pack file")))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| CliError::usage(format!("{shown}: a pack is UTF-8 text")))?;
    pack::parse(&text, &shown)
        .map_err(|e| CliError::coded(crate::exit::Code::Invalid, e.to_string()))
}

/// Runs `pack`.
pub fn run(args: &PackArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    match &args.action {
        PackAction::Show { file } => {
            let pack = read(file)?;
            let seeded: Vec<&String> = pack.config.iter().map(|(id, _)| id).collect();
            if global.printer.json() {
                let plugins: Vec<_> = pack
                    .plugins
                    .iter()
                    .map(|e| json!({"entry": e.display(), "commit": e.commit}))
                    .collect();
                global.printer.document(
                    Schema::Pack,
                    &json!({"action": "show", "pack": pack.name, "plugins": plugins,
                            "seeded": seeded, "skills": pack.skills}),
                );
            } else {
                outln!(
                    global.printer,
                    "Pack {} ({} plugins)",
                    pack.name,
                    pack.plugins.len()
                );
                for e in &pack.plugins {
                    outln!(global.printer, "  {} @ {}", e.display(), &e.commit[..12]);
                }
                if !seeded.is_empty() {
                    let ids: Vec<&str> = seeded.iter().map(|s| s.as_str()).collect();
                    outln!(global.printer, "Seeds settings of: {}", ids.join(", "));
                }
                if !pack.skills.is_empty() {
                    outln!(
                        global.printer,
                        "Lists skills (not installed): {}",
                        pack.skills.join(", ")
                    );
                }
            }
            Ok(Status::Ok)
        }
        PackAction::Install {
            file,
            yes_deps,
            no_deps,
            force,
            allow_core_patch,
            allow_removed,
            env,
        } => {
            let cx = manage::context(env, global, true)?;
            let request = manager::pack::PackRequest {
                pack: read(file)?,
                deps: match (yes_deps, no_deps) {
                    (true, _) => DepsConsent::Yes,
                    (_, true) => DepsConsent::No,
                    _ => DepsConsent::Ask,
                },
                force: *force,
                allow_core_patch: *allow_core_patch,
                allow_removed: *allow_removed,
            };
            let mut feedback = StderrFeedback::new(global);
            let outcome = if manage::interactive(global) {
                manager::pack::install(&cx, &request, &mut TerminalPrompter, &mut feedback)
            } else {
                manager::pack::install(&cx, &request, &mut manager::NoInput, &mut feedback)
            }
            .map_err(|e| manage::failure(e, global))?;
            if global.printer.json() {
                let plugins: Vec<_> = outcome
                    .plugins
                    .iter()
                    .zip(&request.pack.plugins)
                    .map(
                        |((entry, key), e)| json!({"entry": entry, "commit": e.commit, "key": key}),
                    )
                    .collect();
                global.printer.document(
                    Schema::Pack,
                    &json!({"action": "install", "pack": outcome.pack, "plugins": plugins,
                            "seeded": outcome.seeded, "skills": outcome.skills,
                            "warnings": outcome.warnings, "generation": outcome.applied}),
                );
            } else {
                for w in &outcome.warnings {
                    global.printer.warning(w);
                }
                for (entry, key) in &outcome.plugins {
                    outln!(global.printer, "Installed {entry} as {key}");
                }
                if !outcome.seeded.is_empty() {
                    outln!(
                        global.printer,
                        "Seeded settings of: {}",
                        outcome.seeded.join(", ")
                    );
                }
                if !outcome.skills.is_empty() {
                    outln!(
                        global.printer,
                        "Skills listed by the pack, not installed: {}",
                        outcome.skills.join(", ")
                    );
                }
                outln!(
                    global.printer,
                    "Pack {}: {} plugins enabled in profile `{}`; generation {} is current",
                    outcome.pack,
                    outcome.plugins.len(),
                    cx.profile,
                    outcome.applied.generation.unwrap_or(0)
                );
            }
            Ok(Status::Ok)
        }
        PackAction::Export { name, enabled_only } => {
            let cx = manage::read_context(global)?;
            let exported = manager::pack::export(&cx, name, *enabled_only)
                .map_err(|e| manage::failure(e, global))?;
            let text = pack::render(&exported);
            if global.printer.json() {
                let plugins: Vec<_> = exported
                    .plugins
                    .iter()
                    .map(|p| {
                        let entry = match &p.subdir {
                            Some(sub) => format!("{}/{sub}", p.repo),
                            None => p.repo.clone(),
                        };
                        json!({"entry": entry, "commit": p.commit})
                    })
                    .collect();
                let seeded: Vec<&String> = exported.config.iter().map(|(id, _)| id).collect();
                global.printer.document(
                    Schema::Pack,
                    &json!({"action": "export", "pack": exported.name, "plugins": plugins,
                            "seeded": seeded, "warnings": exported.warnings, "yaml": text}),
                );
            } else {
                for w in &exported.warnings {
                    global.printer.warning(w);
                }
                // Strings in it are JSON-escaped; keys are plain words or JSON-escaped.
                global.printer.rendered(&text, true);
            }
            Ok(Status::Ok)
        }
    }
}
