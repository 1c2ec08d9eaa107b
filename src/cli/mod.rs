//! The command line: argument definitions, global options, exit codes, and dispatch to one
//! module per command. Commands compose library modules; they hold no business rules.
//!
//! Output goes through the [`printer::Printer`] decided once in [`main`] (held in
//! [`GlobalArgs::printer`]): control characters from untrusted input are escaped and
//! credentials in URLs redacted.

/// One result line for people on stdout, through the printer: `outln!(printer, "…", …)`.
macro_rules! outln {
    ($printer:expr, $($arg:tt)*) => {
        $printer.line(&format!($($arg)*))
    };
}

pub mod activate;
pub mod capabilities;
pub mod catalog;
pub mod completions;
pub mod config;
pub mod conflict;
pub mod disable;
pub mod enable;
pub mod env_vars;
pub mod environment;
pub mod error;
pub mod exec;
pub mod generations;
pub mod global;
pub mod inspect;
pub mod install;
pub mod json;
pub mod man;
pub mod manage;
pub mod nix;
pub mod outdated;
pub mod pack;
pub mod printer;
pub mod remove;
pub mod resolve;
pub mod sbom;
pub mod select;
pub mod sync;
pub mod terminal;
pub mod update;
pub mod validate;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use env_vars::EnvVars;

pub use printer::{Printer, shown};

pub use crate::exit::{Code, Status};
pub use error::CliError;
pub use global::GlobalArgs;
pub use printer::ColorChoice;

/// hermes-plugins: the package manager and catalog toolchain for Hermes Agent plugins.
#[derive(Debug, Parser)]
#[command(
    name = "hermes-plugins",
    version,
    about = "Package manager and catalog toolchain for Hermes Agent plugins",
    long_about = "Validates Hermes Agent plugin packages (native plugin.yaml + register(ctx), and portable Agent Plugins v1 packages) without executing their code; resolves their Python dependencies together with Hermes core; installs them from the catalog, GitHub, git URLs or directories into numbered generations switched atomically (with consent for dependencies and capabilities, rollback and gc); runs Hermes on a generation (exec); and gives catalog reviewers and NixOS packagers their tools.\n\nEvery command works without a terminal and prints one JSON document with --json.\n\nExit codes: 0 success; 1 validation failure, refused consent or resolution conflict; 2 usage error; 3 environment error (I/O, network, lock busy, missing interpreter).",
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
    Enable(enable::EnableArgs),
    /// Disable a plugin in the profile (publishes a generation)
    Disable(disable::DisableArgs),
    /// Update plugins: new code and dependencies in one switch
    Update(update::UpdateArgs),
    /// Remove a plugin from every profile and from the installed set
    Remove(remove::RemoveArgs),
    /// Apply every profile's config.yaml selection; a no-op when nothing changed
    Sync(sync::SyncArgs),
    /// Show, grant or revoke a plugin's capabilities in the profile
    Capabilities(capabilities::CapabilitiesArgs),
    /// List installed plugins and their status
    List(inspect::ListArgs),
    /// Show one installed plugin: manifest, dependencies, provenance
    Show(inspect::ShowArgs),
    /// List, roll back or collect generations
    Generations(generations::GenerationsArgs),
    /// Check the current generation against its recorded hashes
    Verify,
    /// A CycloneDX 1.6 bill of materials of a generation: plugins, Python packages, who needs what
    Sbom(sbom::SbomArgs),
    /// Print what the agent needs to load the current generation
    Env,
    /// Run an agent (an unmodified Hermes) on the current generation, leased for its whole life
    Exec(exec::ExecArgs),
    /// Make a Hermes installation read the current generation by itself (no `exec`): a hook
    /// in its site-packages
    Activate(activate::ActivateArgs),
    /// Remove the hook `activate` put into a Hermes installation
    Deactivate(activate::ActivateArgs),
    /// Plugin packs (Hermes 0.22's hermes-pack.yaml): install one as a single generation, show, export
    Pack(pack::PackArgs),
    /// Show or change the recorded environment: Hermes core, interpreter, indexes
    Config(config::ConfigArgs),
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
    /// Print a manual page, or write them all (--out DIR)
    Man(man::ManArgs),
    /// What update could move: plugins against their sources, Python packages against the
    /// newest admitted versions
    Outdated(outdated::OutdatedArgs),
}

fn init_logging(global: &GlobalArgs) {
    let debug_env = std::env::var(EnvVars::HERMES_PLUGINS_DEBUG)
        .is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
    let level = match (global.verbose, debug_env, global.quiet) {
        (_, _, true) => "error",
        (0, false, _) => "warn",
        (1, _, _) | (0, true, _) => "debug",
        _ => "trace",
    };
    // HERMES_PLUGINS_LOG takes a full filter (`uv_resolver=debug,hermes_plugins=trace`) and
    // adds timestamps: for looking inside uv's crates.
    let custom = std::env::var(EnvVars::HERMES_PLUGINS_LOG).ok();
    let filter = tracing_subscriber::EnvFilter::new(
        custom
            .clone()
            .unwrap_or_else(|| format!("hermes_plugins={level}")),
    );
    // Log lines carry URLs, paths and names from untrusted input: each line is redacted and
    // escaped (so the formatter's own colours are off).
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| LogLine(Vec::new()))
        .with_ansi(false);
    let _ = if custom.is_some() {
        builder.with_target(true).try_init()
    } else {
        builder.event_format(Plain).try_init()
    };
}

/// Log events as the rest of the output reads: `warning: …`, `error: …`, `note: …` (and
/// `debug: …`, `trace: …` under `-v`), not the formatter's ` WARN …`.
struct Plain;

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for Plain
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let prefix = match *event.metadata().level() {
            tracing::Level::ERROR => "error",
            tracing::Level::WARN => "warning",
            tracing::Level::INFO => "note",
            tracing::Level::DEBUG => "debug",
            tracing::Level::TRACE => "trace",
        };
        write!(writer, "{prefix}: ")?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// One log event, collected and written to stderr through [`shown`] when the formatter is done
/// with it.
struct LogLine(Vec<u8>);

impl Write for LogLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.0);
        let _ = std::io::stderr().write_all(shown(&text).as_bytes());
    }
}

/// Reports a failure through the printer and gives its exit code.
fn fail(err: &CliError, printer: &Printer) -> ExitCode {
    printer.error(err);
    ExitCode::from(err.status.code())
}

/// Whether `--json` is among the arguments (before a `--`, after which they belong to
/// `exec`'s command): usage errors are then reported as JSON too.
fn wants_json(args: &[std::ffi::OsString]) -> bool {
    args.iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--json" || a == "--format=json")
}

/// Parses arguments, runs the command and returns the process exit code.
/// clap's "unexpected argument" for an option another command has (`list --audit`) suggests
/// the nearest option of this one and prints a usage line built from it (`Usage:
/// hermes-plugins list --quiet`); say which command takes it instead.
fn option_of_another_command(err: clap::Error, args: &[std::ffi::OsString]) -> clap::Error {
    use clap::CommandFactory;
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if err.kind() != ErrorKind::UnknownArgument {
        return err;
    }
    let Some(ContextValue::String(given)) = err.get(ContextKind::InvalidArg) else {
        return err;
    };
    let Some(long) = given
        .strip_prefix("--")
        .map(|l| l.split('=').next().unwrap_or(l))
    else {
        return err;
    };
    let mut root = Cli::command();
    let Some(used) = args
        .iter()
        .skip(1)
        .filter_map(|a| a.to_str())
        .find(|a| root.find_subcommand(a).is_some())
        .map(str::to_string)
    else {
        return err;
    };
    let takes = |c: &clap::Command| c.get_arguments().any(|a| a.get_long() == Some(long));
    let others: Vec<String> = root
        .get_subcommands()
        .flat_map(|c| {
            let mut found: Vec<String> = Vec::new();
            if takes(c) {
                found.push(c.get_name().to_string());
            }
            for s in c.get_subcommands() {
                if takes(s) {
                    found.push(format!("{} {}", c.get_name(), s.get_name()));
                }
            }
            found
        })
        .filter(|name| name != &used)
        .collect();
    if others.is_empty() {
        return err;
    }
    let shown = others
        .iter()
        .map(|o| format!("`{o}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let Some(command) = root.find_subcommand_mut(&used) else {
        return err;
    };
    let mut command = command.clone().bin_name(format!("hermes-plugins {used}"));
    command.error(
        ErrorKind::UnknownArgument,
        format!("unexpected argument '--{long}' found\n\n  tip: `--{long}` is an option of {shown}, not of `{used}` (see `hermes-plugins {} --help`)", others[0]),
    )
}

pub fn main() -> ExitCode {
    env_vars::keep_uv_credentials_in_cache();
    completions::answer_if_asked();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let mut cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(err) => {
            let err = option_of_another_command(err, &args);
            if matches!(
                err.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) {
                let _ = err.print();
                return ExitCode::SUCCESS;
            }
            if wants_json(&args) {
                // clap's message up to its usage line, on one line: "the following required
                // arguments were not provided: <SOURCE>", not its first line alone.
                let text = err.to_string();
                let message = text
                    .lines()
                    .take_while(|l| !l.starts_with("Usage:"))
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ");
                let message = match message.trim_start_matches("error: ") {
                    "" => "invalid arguments",
                    m => m,
                };
                let doc = CliError::usage(message).to_json();
                let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
                let _ = printer::write_stdout(format!("{text}\n").as_bytes());
            }
            let _ = err.print();
            return ExitCode::from(Status::Usage.code());
        }
    };
    let g = &cli.global;
    cli.global.printer = Printer::new(printer::OutputOptions {
        json: g.json,
        quiet: g.quiet,
        verbose: g.verbose > 0,
        no_input: g.no_input,
        color: g.color,
    });
    init_logging(&cli.global);
    if !crate::home::is_profile(&cli.global.profile) {
        let err = CliError::usage(format!(
            "`{}` is not a profile name: use `default` or 1-64 lowercase letters, digits, `_` and `-`, starting with a letter or digit (as Hermes does)",
            crate::text::escape(&cli.global.profile)
        ));
        return fail(&err, &cli.global.printer);
    }
    match env_vars::git_config() {
        Ok(config) => config.install(),
        Err(message) => return fail(&CliError::usage(message), &cli.global.printer),
    }
    let result = match &cli.command {
        Command::Validate(args) => validate::run(args, &cli.global),
        Command::Resolve(args) => resolve::run(args, &cli.global),
        Command::Install(args) => install::run(args, &cli.global),
        Command::Enable(args) => enable::enable(args, &cli.global),
        Command::Disable(args) => disable::disable(args, &cli.global),
        Command::Update(args) => update::run(args, &cli.global),
        Command::Remove(args) => remove::remove(args, &cli.global),
        Command::Sync(args) => sync::sync(args, &cli.global),
        Command::Capabilities(args) => capabilities::capabilities(args, &cli.global),
        Command::List(args) => inspect::list(args, &cli.global),
        Command::Show(args) => inspect::show(args, &cli.global),
        Command::Generations(args) => generations::run(args, &cli.global),
        Command::Verify => inspect::verify(&cli.global),
        Command::Sbom(args) => sbom::run(args, &cli.global),
        Command::Env => inspect::env(&cli.global),
        Command::Exec(_) if cli.global.printer.json() => Err(CliError::usage(
            "`exec` runs a program, whose output is its own; drop --json (`env --json` describes what it runs with)",
        )),
        Command::Exec(args) => exec::run(args, &cli.global),
        Command::Activate(args) => activate::activate(args, &cli.global),
        Command::Deactivate(args) => activate::deactivate(args, &cli.global),
        Command::Pack(args) => pack::run(args, &cli.global),
        Command::Config(args) => config::run(args, &cli.global),
        Command::Catalog(args) => catalog::run(args, &cli.global),
        Command::Search(args) => catalog::search(args, &cli.global),
        Command::Nix(args) => nix::run(args, &cli.global),
        Command::Build(args) => nix::build(args, &cli.global),
        // Their output is a file in another format; `--json` (one JSON document) is refused
        // rather than ignored.
        Command::Completions(_) | Command::Man(_) if cli.global.printer.json() => Err(
            CliError::usage("`man` and `completions` write roff and shell scripts; drop --json"),
        ),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(args, &cli.global),
        Command::Outdated(args) => outdated::run(args, &cli.global),
    };
    match result {
        Ok(status) => match printer::stdout_failure() {
            // The command succeeded but its result was not delivered (a full disk under
            // `> file`): that is an environment failure, not success.
            Some(message) if status == Status::Ok => fail(
                &CliError::environment(message.to_string()),
                &cli.global.printer,
            ),
            _ => ExitCode::from(status.code()),
        },
        Err(err) => fail(&err, &cli.global.printer),
    }
}
