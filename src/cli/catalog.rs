//! `catalog check | review | resolve-all` and `search`: the catalog reviewer's tools.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};

use crate::catalog::{self, resolve_all, review};
use crate::manager::ManagerError;
use crate::report;

use super::error::CliError;
use super::global::GlobalArgs;
use super::manage::{ResolverArgs, home};
use super::validate::OutputFormat;
use crate::exit::Status;

/// Arguments of `catalog`.
#[derive(Debug, Args)]
pub struct CatalogArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: CatalogAction,
}

/// Output of `catalog review`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReviewFormat {
    /// Text for people
    Human,
    /// Markdown, ready to paste as a PR comment
    Markdown,
    /// One JSON document
    Json,
    /// GitHub Actions workflow annotations
    Github,
    /// SARIF 2.1.0
    Sarif,
}

/// Output of `catalog resolve-all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ResolveAllFormat {
    /// Text for people
    Human,
    /// One JSON document
    Json,
    /// GitHub Actions workflow annotations (`::error file=<entry>::<name>: <stage>: <reason>`)
    Github,
}

/// `catalog` subcommands.
#[derive(Debug, Subcommand)]
pub enum CatalogAction {
    /// Check catalog entries and removed.yaml: fields, duplicates, requires_plugins, the kill list
    #[command(
        after_help = "Examples:\n  hermes-plugins catalog check plugin-catalog/\n  hermes-plugins catalog check plugin-catalog/weather.yaml --format github"
    )]
    Check {
        /// Catalog directories or entry files
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Output format
        #[arg(long, value_enum, default_value = "human")]
        format: OutputFormat,
        /// Treat warnings as failures
        #[arg(long)]
        strict: bool,
    },
    /// Review an added or changed entry: fetch at its sha, validate, compare with --base
    #[command(
        after_help = "Examples:\n  hermes-plugins catalog review plugin-catalog/weather.yaml --format markdown\n  git show main:plugin-catalog/weather.yaml > /tmp/old.yaml\n  hermes-plugins catalog review plugin-catalog/weather.yaml --base /tmp/old.yaml --format markdown"
    )]
    Review {
        /// The entry file
        entry: PathBuf,
        /// The entry as it was before the change
        #[arg(long, value_name = "FILE")]
        base: Option<PathBuf>,
        /// Output format
        #[arg(long, value_enum, default_value = "human")]
        format: ReviewFormat,
    },
    /// Fetch the remote catalogs (git URLs or JSON feeds) now, whatever the age of their
    /// cached copies
    #[command(
        after_help = "Examples:\n  hermes-plugins catalog update --catalog https://hermes-agent.nousresearch.com/docs/api/plugin-catalog.json\n  HERMES_PLUGINS_CATALOG=https://github.com/acme/hermes.git#plugin-catalog hermes-plugins catalog update\n  hermes-plugins catalog update --catalog ./private-catalog --catalog https://example.org/plugin-catalog.json\n\nRemote catalogs are otherwise refreshed when their copy in pm/cache/catalogs is older than HERMES_PLUGINS_CATALOG_TTL seconds (default 6 h), before install, update and enable read them."
    )]
    Update {
        /// Catalog: a git URL (`#subdir`) or a JSON feed URL; repeatable [default:
        /// $HERMES_PLUGINS_CATALOG, space-separated, else the
        /// official feed Hermes reads; `none`: no catalog]
        #[arg(long = "catalog", value_name = "URL")]
        catalogs: Vec<PathBuf>,
    },
    /// Resolve every entry with Hermes core (alone, then together; bisect conflicts)
    #[command(
        name = "resolve-all",
        after_help = "Example:\n  hermes-plugins catalog resolve-all plugin-catalog/ --core ../hermes-agent --format github"
    )]
    ResolveAll {
        /// The catalog directory
        dir: PathBuf,
        /// Output format
        #[arg(long, value_enum, default_value = "human")]
        format: ResolveAllFormat,
        /// Resolution options.
        #[command(flatten)]
        resolver: ResolverArgs,
    },
}

/// Arguments of `search`.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  hermes-plugins search weather --catalog plugin-catalog/")]
pub struct SearchArgs {
    /// Words to look for in names, descriptions, tags and tool names
    pub query: String,
    /// Catalog: a directory, a git URL (`#subdir`) or a JSON feed URL; repeatable, the first
    /// listed has precedence [default: $HERMES_PLUGINS_CATALOG, space-separated, else the
    /// official feed Hermes reads; `none`: no catalog]
    #[arg(long = "catalog", value_name = "DIR|URL")]
    pub catalogs: Vec<PathBuf>,
}

fn render(
    report: &report::Report,
    format: OutputFormat,
    global: &GlobalArgs,
    rules: &[report::Rule],
) -> String {
    match format {
        OutputFormat::Human => report::human::render(
            report,
            report::human::Options {
                color: global.printer.color(),
                show_info: global.printer.verbose(),
                items: "entry file(s)",
            },
        ),
        OutputFormat::Json => super::json::text(super::json::Schema::ValidateReport, report),
        OutputFormat::Github => report::github::render(report, "catalog check", "entry file(s)"),
        OutputFormat::Sarif => report::sarif::render(report, rules) + "\n",
    }
}

/// Runs `catalog`.
pub fn run(args: &CatalogArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    match &args.action {
        CatalogAction::Update { catalogs } => update(catalogs, global),
        CatalogAction::Check {
            paths,
            format,
            strict,
        } => check(paths, *format, *strict, global),
        CatalogAction::Review {
            entry,
            base,
            format,
        } => review_entry(entry, base.as_deref(), *format, global),
        CatalogAction::ResolveAll {
            dir,
            format,
            resolver,
        } => resolve_all_entries(dir, *format, resolver, global),
    }
}

/// `catalog update`: every remote catalog fetched now.
fn update(catalogs: &[PathBuf], global: &GlobalArgs) -> Result<Status, CliError> {
    let layout = crate::home::Layout::new(&super::manage::home(global));
    let values = super::manage::required_catalog_values(catalogs)?.values;
    let mut updated = Vec::new();
    for value in &values {
        let dir = super::manage::catalog_dir(value, &layout, super::manage::Refresh::Now, global)?;
        let entries = crate::source::catalog::entry_files(&dir).map_or(0, |files| files.len());
        updated.push(serde_json::json!({
            "catalog": value.to_string_lossy(),
            "directory": dir,
            "entries": entries,
        }));
        if !global.printer.json() {
            outln!(
                global.printer,
                "{}: {entries} entries in {}",
                crate::text::escape(&value.to_string_lossy()),
                dir.display()
            );
        }
    }
    if global.printer.json() {
        global.printer.document(
            super::json::Schema::CatalogUpdate,
            &serde_json::json!({ "catalogs": updated }),
        );
    }
    Ok(Status::Ok)
}

/// `catalog check PATH...`: the entry rules, as a report.
fn check(
    paths: &[PathBuf],
    format: OutputFormat,
    strict: bool,
    global: &GlobalArgs,
) -> Result<Status, CliError> {
    for p in paths {
        if !p.exists() {
            return Err(CliError::usage(format!(
                "{}: no such file or directory",
                p.display()
            )));
        }
    }
    let outcome = catalog::check::check(paths);
    let report = catalog::report::to_report(&outcome, strict);
    let format = if global.printer.json() {
        OutputFormat::Json
    } else {
        format
    };
    global.printer.rendered(
        &render(&report, format, global, &catalog::finding::rules()),
        true,
    );
    Ok(if report.summary.failed == 0 {
        Status::Ok
    } else {
        Status::Failed
    })
}

/// `catalog review ENTRY [--base OLD]`: the entry's pinned code fetched and reviewed.
fn review_entry(
    entry: &Path,
    base: Option<&Path>,
    format: ReviewFormat,
    global: &GlobalArgs,
) -> Result<Status, CliError> {
    let scratch = tempfile::tempdir().map_err(|e| CliError::environment(e.to_string()))?;
    let r = review::review(entry, base, scratch.path()).map_err(|e| match e {
        review::ReviewError::Entry(m) => CliError::coded(crate::exit::Code::Invalid, m),
        review::ReviewError::Network(m) => CliError::coded(crate::exit::Code::Network, m),
        review::ReviewError::Fetch(m) => CliError::coded(crate::exit::Code::Invalid, m),
    })?;
    let format = if global.printer.json() {
        ReviewFormat::Json
    } else {
        format
    };
    let text = match format {
        ReviewFormat::Human => review::human(&r),
        ReviewFormat::Markdown => review::markdown(&r),
        ReviewFormat::Json => super::json::text(super::json::Schema::Review, &r),
        ReviewFormat::Github => {
            // The report holds the entry file and the plugin it pins, not two packages.
            report::github::render(
                &review::to_report(&r),
                "catalog review",
                "checked (the entry file and the plugin it pins)",
            )
        }
        ReviewFormat::Sarif => {
            report::sarif::render(&review::to_report(&r), &review::rules()) + "\n"
        }
    };
    global.printer.rendered(
        &text,
        matches!(format, ReviewFormat::Json | ReviewFormat::Sarif),
    );
    Ok(if r.ok { Status::Ok } else { Status::Failed })
}

/// `catalog resolve-all DIR`: every entry resolved with core, alone and together.
fn resolve_all_entries(
    dir: &Path,
    format: ResolveAllFormat,
    resolver: &ResolverArgs,
    global: &GlobalArgs,
) -> Result<Status, CliError> {
    // A catalog is resolved against the core named here, never a home's settings.
    let found = resolver.environment(&crate::state::settings::Settings::default())?;
    let now = super::env_vars::now().map_err(CliError::usage)?;
    let result = crate::manager::resolution::resolve_catalog(
        dir,
        found.against(now),
        &crate::home::Layout::new(&home(global)),
        // Progress is a log line: shown with -v, never with --quiet or on stdout.
        &mut |m| tracing::info!("{m}"),
    )
    .map_err(|e| match e {
        ManagerError::Conflict(c) => {
            CliError::coded(crate::exit::Code::Conflict, c.sentences.join("; "))
        }
        other => super::manage::failure(other, global),
    })?;
    let format = if global.printer.json() {
        ResolveAllFormat::Json
    } else {
        format
    };
    let text = match format {
        ResolveAllFormat::Human => resolve_all::human(&result),
        ResolveAllFormat::Json => super::json::text(super::json::Schema::ResolveAll, &result),
        ResolveAllFormat::Github => resolve_all::github(&result),
    };
    global
        .printer
        .rendered(&text, matches!(format, ResolveAllFormat::Json));
    Ok(if result.entries.iter().all(|e| e.ok) {
        Status::Ok
    } else {
        Status::Failed
    })
}

/// Runs `search`: every configured catalog's entries, an entry shadowed by one of the same
/// name in a catalog of higher precedence left out.
pub fn search(args: &SearchArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let layout = crate::home::Layout::new(&super::manage::home(global));
    let values = super::manage::required_catalog_values(&args.catalogs)?.values;
    let mut entries: Vec<catalog::entry::Entry> = Vec::new();
    let mut origin: std::collections::HashMap<String, String> = Default::default();
    for value in &values {
        let dir =
            super::manage::catalog_dir(value, &layout, super::manage::Refresh::WhenStale, global)?;
        // A catalog that is not there is an error, never "no entry matches".
        if !dir.is_dir() {
            return Err(CliError::usage(format!(
                "the catalog {} is not a directory (--catalog / HERMES_PLUGINS_CATALOG name a directory of entry files, a git URL or a JSON feed URL)",
                crate::text::escape(&dir.display().to_string())
            )));
        }
        let outcome = catalog::check::check(std::slice::from_ref(&dir));
        for entry in outcome.entries.into_iter().filter_map(|(_, e, _)| e) {
            if !origin.contains_key(&entry.name) {
                origin.insert(entry.name.clone(), value.to_string_lossy().into_owned());
                entries.push(entry);
            }
        }
    }
    let mut hits = catalog::search::search(&entries, &args.query);
    if values.len() > 1 {
        for hit in &mut hits {
            hit.catalog = origin.get(&hit.name).cloned();
        }
    }
    if global.printer.json() {
        global.printer.document(
            super::json::Schema::Search,
            &serde_json::json!({ "query": args.query, "results": hits }),
        );
    } else if hits.is_empty() {
        outln!(global.printer, "No catalog entry matches `{}`", args.query);
    } else {
        for h in &hits {
            // With several catalogs, where each hit comes from (as `--json` says).
            let from = h
                .catalog
                .as_deref()
                .map(|c| format!("  (from {c})"))
                .unwrap_or_default();
            outln!(
                global.printer,
                "{:<28} {:<10} {:>2} tool(s)  {}{from}",
                h.name,
                h.tier,
                h.tools,
                h.description.as_deref().unwrap_or("")
            );
        }
    }
    Ok(Status::Ok)
}
