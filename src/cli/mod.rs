//! The command line: argument definitions, global options, exit codes, and dispatch to one
//! module per command. Commands compose library modules; they hold no business rules.

pub mod catalog;
pub mod completions;
pub mod generations;
pub mod inspect;
pub mod install;
pub mod manage;
pub mod nix;
pub mod resolve;
pub mod select;
pub mod update;
pub mod validate;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Exit status of a command (SPEC §10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// 0: success.
    Ok,
    /// 1: validation failure, refused consent, or resolution conflict.
    Failed,
    /// 2: usage error.
    Usage,
    /// 3: environment error (I/O, network, lock busy, missing interpreter).
    Environment,
}

impl Status {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Status::Ok => 0,
            Status::Failed => 1,
            Status::Usage => 2,
            Status::Environment => 3,
        }
    }
}

/// A command failure to report to the user (never a panic or a stack trace).
#[derive(Debug)]
pub struct CliError {
    /// Exit status.
    pub status: Status,
    /// What went wrong and what to do.
    pub message: String,
    /// Structured detail for `--json` (a conflict's plugins, packages, versions, dates).
    pub details: Option<serde_json::Value>,
}

impl CliError {
    fn new(status: Status, message: impl Into<String>) -> Self {
        CliError {
            status,
            message: message.into(),
            details: None,
        }
    }

    /// A refusal: validation failed, consent refused, a conflict (exit 1).
    pub fn failed(message: impl Into<String>) -> Self {
        CliError::new(Status::Failed, message)
    }

    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError::new(Status::Usage, message)
    }

    /// An environment error (exit 3).
    pub fn environment(message: impl Into<String>) -> Self {
        CliError::new(Status::Environment, message)
    }
}

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour when writing to a terminal (and `NO_COLOR` is unset).
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Options every command accepts.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Hermes home directory [default: $HERMES_HOME, else ~/.hermes]
    #[arg(long, global = true, env = "HERMES_HOME", value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Profile to act on; named profiles live at <home>/profiles/<name>/
    #[arg(long, global = true, default_value = "default", value_name = "NAME")]
    pub profile: String,
    /// Print one JSON document on stdout and nothing else there
    #[arg(long, global = true)]
    pub json: bool,
    /// Never prompt (implied when stdin is not a terminal)
    #[arg(long, global = true)]
    pub no_input: bool,
    /// More detail on stderr (discovery, resolution); repeat for more
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Less output: only what failed
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Colour output
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "auto",
        value_name = "WHEN"
    )]
    pub color: ColorChoice,
}

impl GlobalArgs {
    /// Whether stdout output should be coloured.
    pub fn stdout_color(&self) -> bool {
        match self.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal()
            }
        }
    }
}

/// hermes-plugins: the package manager and catalog toolchain for Hermes Agent plugins.
#[derive(Debug, Parser)]
#[command(
    name = "hermes-plugins",
    version,
    about = "Package manager and catalog toolchain for Hermes Agent plugins",
    long_about = "Validates Hermes Agent plugin packages (native plugin.yaml + register(ctx), and portable Agent Plugins v1 packages) without executing their code.\n\nExit codes: 0 success; 1 validation failure, refused consent or resolution conflict; 2 usage error; 3 environment error (I/O, network, lock busy, missing interpreter).",
    after_help = "Examples:\n  hermes-plugins validate ~/.hermes/plugins\n  hermes-plugins validate ./my-plugin --strict --format github\n  hermes-plugins completions bash > ~/.local/share/bash-completion/completions/hermes-plugins"
)]
pub struct Cli {
    /// Options shared by every command.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate plugin packages without executing their code
    Validate(validate::ValidateArgs),
    /// Resolve Hermes core together with plugins (uv's resolver, under the quarantine) and print the lock
    Resolve(resolve::ResolveArgs),
    /// Install a plugin (catalog name, owner/repo, git URL, directory); disabled unless --enable
    Install(install::InstallArgs),
    /// Enable an installed plugin in the profile (publishes a generation)
    Enable(select::EnableArgs),
    /// Disable a plugin in the profile (publishes a generation)
    Disable(select::DisableArgs),
    /// Update plugins: new code and dependencies in one switch
    Update(update::UpdateArgs),
    /// Remove a plugin from every profile and from the installed set
    Remove(select::RemoveArgs),
    /// Apply every profile's config.yaml selection; a no-op when nothing changed
    Sync(select::SyncArgs),
    /// Show, grant or revoke a plugin's capabilities in the profile
    Capabilities(select::CapabilitiesArgs),
    /// List installed plugins and their status
    List(inspect::ListArgs),
    /// Show one installed plugin: manifest, dependencies, provenance
    Show(inspect::ShowArgs),
    /// List, roll back or collect generations
    Generations(generations::GenerationsArgs),
    /// Check the current generation against its recorded hashes
    Verify,
    /// Print what the agent needs to load the current generation
    Env,
    /// Catalog reviewer tools: check entries, review a change, resolve every entry with core
    Catalog(catalog::CatalogArgs),
    /// Search the catalog by name, description, tags and tool names
    Search(catalog::SearchArgs),
    /// NixOS: NAR hashes, a lock of pinned plugins, a Nix expression
    Nix(nix::NixArgs),
    /// Build a generation offline and reproducibly from a Nix lock and pre-fetched wheels
    Build(nix::BuildArgs),
    /// Print a shell completion script
    Completions(completions::CompletionsArgs),
}

fn init_logging(global: &GlobalArgs) {
    let debug_env = std::env::var("HERMES_PLUGINS_DEBUG")
        .is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
    let level = match (global.verbose, debug_env, global.quiet) {
        (_, _, true) => "error",
        (0, false, _) => "warn",
        (1, _, _) | (0, true, _) => "debug",
        _ => "trace",
    };
    // HERMES_PLUGINS_LOG takes a full filter (`uv_resolver=debug,hermes_plugins=trace`) and
    // adds timestamps: for looking inside uv's crates.
    let custom = std::env::var("HERMES_PLUGINS_LOG").ok();
    let filter = tracing_subscriber::EnvFilter::new(
        custom
            .clone()
            .unwrap_or_else(|| format!("hermes_plugins={level}")),
    );
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    let _ = if custom.is_some() {
        builder.with_target(true).try_init()
    } else {
        builder.with_target(false).without_time().try_init()
    };
}

/// Parses arguments, runs the command and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(match err.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                _ => Status::Usage.code(),
            });
        }
    };
    init_logging(&cli.global);
    let result = match &cli.command {
        Command::Validate(args) => validate::run(args, &cli.global),
        Command::Resolve(args) => resolve::run(args, &cli.global),
        Command::Install(args) => install::run(args, &cli.global),
        Command::Enable(args) => select::enable(args, &cli.global),
        Command::Disable(args) => select::disable(args, &cli.global),
        Command::Update(args) => update::run(args, &cli.global),
        Command::Remove(args) => select::remove(args, &cli.global),
        Command::Sync(args) => select::sync(args, &cli.global),
        Command::Capabilities(args) => select::capabilities(args, &cli.global),
        Command::List(args) => inspect::list(args, &cli.global),
        Command::Show(args) => inspect::show(args, &cli.global),
        Command::Generations(args) => generations::run(args, &cli.global),
        Command::Verify => inspect::verify(&cli.global),
        Command::Env => inspect::env(&cli.global),
        Command::Catalog(args) => catalog::run(args, &cli.global),
        Command::Search(args) => catalog::search(args, &cli.global),
        Command::Nix(args) => nix::run(args, &cli.global),
        Command::Build(args) => nix::build(args, &cli.global),
        Command::Completions(args) => completions::run(args),
    };
    match result {
        Ok(status) => ExitCode::from(status.code()),
        Err(err) => {
            if cli.global.json {
                let mut doc = serde_json::json!({ "error": { "exit_code": err.status.code(), "message": err.message } });
                if let Some(details) = &err.details {
                    doc["error"]["details"] = details.clone();
                }
                let _ = writeln!(
                    std::io::stdout(),
                    "{}",
                    serde_json::to_string_pretty(&doc).unwrap_or_default()
                );
            }
            let _ = writeln!(std::io::stderr(), "error: {}", err.message);
            ExitCode::from(err.status.code())
        }
    }
}
