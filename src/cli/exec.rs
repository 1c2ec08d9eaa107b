//! `exec -- COMMAND [ARGS…]`: runs an agent on the current generation (see [`crate::agent`]).

use std::ffi::OsString;

use clap::Args;

use crate::agent;
use crate::generation::lease::Lease;
use crate::home::Layout;

use super::error::CliError;
use super::global::GlobalArgs;
use super::manage;
use crate::exit::Status;

/// Arguments of `exec`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hermes-plugins exec -- hermes chat\n  hermes-plugins --profile work exec -- hermes gateway\n  hermes-plugins exec -- ~/.hermes/venv/bin/python -c 'from hermes_cli.plugins import discover_plugins; discover_plugins()'\n\nThe command replaces this process (on Windows, which cannot, this process waits for it and exits with its code). It runs with HERMES_HOME set to the profile's home and the generation's Python runtime on PYTHONPATH; an unmodified Hermes then loads exactly the generation's enabled plugins (not <home>/plugins), with their dependencies importable and only the granted capabilities honoured. The generation stays leased (generations gc keeps it) until the command and every process that inherits the lease exits; a later switch is seen only by new processes."
)]
pub struct ExecArgs {
    /// The command and its arguments
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    pub command: Vec<OsString>,
}

/// Runs `exec`: returns only when the command could not be started.
pub fn run(args: &ExecArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let layout = Layout::new(&manage::home(global));
    let agent_home = layout.profile_home(&global.profile);
    manage::require_profile(&layout, &global.profile)?;
    if !agent_home.is_dir() {
        return Err(CliError::coded(
            crate::exit::Code::NotFound,
            format!("the Hermes home {} does not exist", agent_home.display()),
        ));
    }
    let lease = Lease::acquire(&layout).map_err(|e| {
        CliError::environment(format!(
            "cannot lease the current generation under {}: {e}",
            layout.pm.display()
        ))
    })?;
    if lease.is_none() {
        global.printer.note(&format!(
            "no generation is published under {} yet: the agent runs with no managed plugins",
            layout.pm.display()
        ));
    }
    let runtime = agent::runtime_dir(&layout).map_err(|e| {
        CliError::environment(format!(
            "cannot write the agent runtime under {}: {e}",
            layout.runtime().display()
        ))
    })?;
    let fd = match &lease {
        Some(l) => Some(lease_fd(l)?),
        None => None,
    };
    let mut env = agent::command_env(
        &layout,
        &global.profile,
        lease.as_ref().map(|l| (l, fd.flatten())),
        &runtime,
        std::env::var_os(super::env_vars::EnvVars::PYTHONPATH),
    );
    // `hermes plugins …` inside the command is served by this very binary.
    if let Ok(binary) = std::env::current_exe() {
        env.push((agent::BIN_VAR, binary.into_os_string()));
    }
    let (program, rest) = args
        .command
        .split_first()
        .ok_or_else(|| CliError::usage("exec needs a command after `--`"))?;
    let mut command = std::process::Command::new(program);
    command.args(rest).envs(env);
    hand_over(command, lease).map_err(|error| {
        CliError::environment(format!(
            "cannot run `{}`: {error}",
            program.to_string_lossy()
        ))
    })
}

/// The descriptor the command inherits the lease through (Unix), or none: on Windows this
/// process keeps the lease while it waits ([`hand_over`]).
fn lease_fd(lease: &Lease) -> Result<Option<i32>, CliError> {
    #[cfg(unix)]
    {
        lease
            .inheritable_fd()
            .map(Some)
            .map_err(|e| CliError::environment(format!("cannot pass the lease on: {e}")))
    }
    #[cfg(windows)]
    {
        let _ = lease;
        Ok(None)
    }
}

/// Becomes the command (`exec(2)`: the lease goes with the inherited descriptor); returns
/// only the error of starting it.
#[cfg(unix)]
fn hand_over(mut command: std::process::Command, lease: Option<Lease>) -> std::io::Result<Status> {
    use std::os::unix::process::CommandExt;
    let error = command.exec();
    drop(lease);
    Err(error)
}

/// Windows has no `exec`: runs the command as a child, holding the lease until it exits, and
/// exits with its code (as `uv run` does there). Ctrl+C reaches the child through the console;
/// this process ignores it, so it outlives the child and the lease is not released early.
#[cfg(windows)]
fn hand_over(mut command: std::process::Command, lease: Option<Lease>) -> std::io::Result<Status> {
    // SAFETY: a null handler with TRUE makes this process ignore Ctrl+C; nothing else changes.
    unsafe {
        windows_sys::Win32::System::Console::SetConsoleCtrlHandler(None, 1);
    }
    let status = command.status()?;
    drop(lease);
    std::process::exit(status.code().unwrap_or(1));
}
