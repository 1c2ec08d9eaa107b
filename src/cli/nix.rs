//! `nix hash | lock | expr` and `build --offline`.

use super::env_vars::EnvVars;
use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::files::write_atomically;
use crate::home::Layout;
use crate::nix::{self, build, expr, lock};
use crate::state::installed::Installed;

use super::error::CliError;
use super::global::GlobalArgs;
use super::json::Schema;
use super::manage::{self, find_python, home};
use crate::exit::Status;

/// Arguments of `nix`.
#[derive(Debug, Args)]
pub struct NixArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: NixAction,
}

/// `nix` subcommands.
#[derive(Debug, Subcommand)]
pub enum NixAction {
    /// Print the SRI NAR hash of a path (what `nix hash path --sri` prints)
    #[command(
        after_help = "Example:\n  hermes-plugins nix hash ./my-plugin\n  hermes-plugins nix hash ./my-plugin --base32   # what nix-hash --type sha256 --base32 prints"
    )]
    Hash {
        /// The file or directory
        path: PathBuf,
        /// Print the digest in Nix base32 instead
        #[arg(long)]
        base32: bool,
    },
    /// Pin every installed plugin for Nix: fetcher, rev, subdir, NAR hash (JSON)
    #[command(after_help = "Example:\n  hermes-plugins nix lock --out hermes-plugins.lock.json")]
    Lock {
        /// Write the lock here instead of stdout
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Print a Nix expression for services.hermes-agent.extraPlugins and extraPythonPackages
    #[command(
        after_help = "Examples:\n  hermes-plugins nix expr > plugins.nix\n  hermes-plugins nix expr --from-json hermes-plugins.lock.json > plugins.nix"
    )]
    Expr {
        /// Use this lock instead of pinning the installed plugins now
        #[arg(long, value_name = "FILE", conflicts_with = "from_json")]
        lock: Option<PathBuf>,
        /// Emit an expression that reads this lock file with builtins.fromJSON
        #[arg(long, value_name = "FILE")]
        from_json: Option<String>,
        /// Only services.hermes-agent.extraPlugins: leave the plugins' Python packages out of
        /// extraPythonPackages (you provide them)
        #[arg(long)]
        plugins_only: bool,
    },
}

/// Arguments of `build`.
#[derive(Debug, Args)]
#[command(
    after_help = "Example (inside a Nix derivation):\n  hermes-plugins build --offline --lock hermes-plugins.lock.json --wheels $wheels --out $out --source weather=${weatherSrc}\n\nNo network is used: plugin sources come from --source (or the local store), packages only from --wheels. The result is bit-for-bit reproducible; its one timestamp is SOURCE_DATE_EPOCH (0 when unset)."
)]
pub struct BuildArgs {
    /// Required: build without network (the only mode)
    #[arg(long, required = true)]
    pub offline: bool,
    /// The Nix lock (`nix lock`)
    #[arg(long, value_name = "FILE")]
    pub lock: PathBuf,
    /// Directory of pre-fetched wheels
    #[arg(long, value_name = "DIR")]
    pub wheels: PathBuf,
    /// The generation directory to create
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// A plugin's fetched source (the repository tree or the plugin directory), by key
    #[arg(long = "source", value_name = "KEY=PATH")]
    pub sources: Vec<String>,
    /// Target interpreter [default: $HERMES_PLUGINS_PYTHON, else python3 on PATH]
    #[arg(long, env = EnvVars::HERMES_PLUGINS_PYTHON, value_name = "PYTHON")]
    pub python: Option<PathBuf>,
}

fn make_lock(global: &GlobalArgs) -> Result<lock::NixLock, CliError> {
    let layout = Layout::new(&home(global));
    let installed =
        Installed::read(&layout.installed()).map_err(|e| CliError::environment(e.to_string()))?;
    let python = crate::manager::reads::current_doc(&manage::read_context(global)?).map(|d| d.lock);
    let scratch = tempfile::tempdir().map_err(|e| CliError::environment(e.to_string()))?;
    lock::make(&installed, python, &layout.git_cache(), scratch.path())
        .map_err(|e| CliError::environment(e.to_string()))
}

fn read_lock(path: &PathBuf) -> Result<(lock::NixLock, Vec<u8>), CliError> {
    let bytes = std::fs::read(path)
        .map_err(|e| CliError::environment(format!("{}: {e}", path.display())))?;
    let parsed = serde_json::from_slice(&bytes).map_err(|e| {
        CliError::usage(format!(
            "{}: not a hermes-plugins Nix lock: {e}",
            path.display()
        ))
    })?;
    Ok((parsed, bytes))
}

/// Runs `nix`.
pub fn run(args: &NixArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    match &args.action {
        NixAction::Hash { path, base32 } => {
            let hash = if *base32 {
                nix::hash_path_base32(path)
            } else {
                nix::hash_path(path)
            }
            .map_err(|e| CliError::environment(format!("{}: {e}", path.display())))?;
            if global.printer.json() {
                global.printer.document(
                    Schema::Nix,
                    &serde_json::json!({ "command": "nix hash", "path": path, "hash": hash }),
                );
            } else {
                outln!(global.printer, "{hash}");
            }
        }
        NixAction::Lock { out } => {
            let lock = make_lock(global)?;
            match out {
                Some(path) => {
                    write_atomically(path, lock.to_json().as_bytes())
                        .map_err(|e| CliError::environment(format!("{}: {e}", path.display())))?;
                    if global.printer.json() {
                        global.printer.document(
                            Schema::Nix,
                            &serde_json::json!({ "command": "nix lock", "out": path, "plugins": lock.plugins.len() }),
                        );
                    } else {
                        global.printer.status(&format!(
                            "wrote {} ({} plugin(s))",
                            path.display(),
                            lock.plugins.len()
                        ));
                    }
                }
                None if global.printer.json() => {
                    let parsed: serde_json::Value = serde_json::from_str(&lock.to_json())
                        .map_err(|e| CliError::environment(e.to_string()))?;
                    global.printer.document(
                        Schema::Nix,
                        &serde_json::json!({ "command": "nix lock", "plugins": lock.plugins.len(), "lock": parsed }),
                    );
                }
                None => global.printer.rendered(&lock.to_json(), true),
            }
        }
        NixAction::Expr {
            lock,
            from_json,
            plugins_only,
        } => {
            let options = expr::RenderOptions {
                plugins_only: *plugins_only,
            };
            let refused = |e: expr::ExprError| CliError::failed(e.to_string());
            let text = match (lock, from_json) {
                (_, Some(path)) => expr::render_from_json(path, options),
                (Some(path), None) => {
                    expr::render(&read_lock(path)?.0, options).map_err(refused)?
                }
                (None, None) => expr::render(&make_lock(global)?, options).map_err(refused)?,
            };
            if global.printer.json() {
                global.printer.document(
                    Schema::Nix,
                    &serde_json::json!({ "command": "nix expr", "expression": text }),
                );
            } else {
                global.printer.rendered(&text, false);
            }
        }
    }
    Ok(Status::Ok)
}

/// Runs `build`.
pub fn build(args: &BuildArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let (lock, lock_bytes) = read_lock(&args.lock)?;
    let mut sources = BTreeMap::new();
    for s in &args.sources {
        let (key, path) = s
            .split_once('=')
            .ok_or_else(|| CliError::usage(format!("--source {s}: expected KEY=PATH")))?;
        sources.insert(key.to_string(), PathBuf::from(path));
    }
    let request = build::BuildRequest {
        lock,
        lock_bytes,
        wheels: args.wheels.clone(),
        out: args.out.clone(),
        python: find_python(args.python.as_ref())?,
        sources,
        store: Some(Layout::new(&home(global)).store()),
        source_date_epoch: super::env_vars::source_date_epoch().map_err(CliError::usage)?,
    };
    let doc = build::build(&request).map_err(|e| match e {
        build::BuildError::Source(m) => CliError::failed(m),
        other => CliError::environment(other.to_string()),
    })?;
    let hash = nix::hash_path(&args.out).map_err(|e| CliError::environment(e.to_string()))?;
    if global.printer.json() {
        global.printer.document(
            Schema::Nix,
            &serde_json::json!({ "command": "build", "out": args.out, "hash": hash, "plugins": doc.plugins.len(), "packages": doc.lock.packages.len() }),
        );
    } else {
        outln!(
            global.printer,
            "built {} ({} plugin(s), {} package(s)); NAR hash {hash}",
            args.out.display(),
            doc.plugins.len(),
            doc.lock.packages.len()
        );
    }
    Ok(Status::Ok)
}
