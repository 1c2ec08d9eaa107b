//! `validate --probe[=PYTHON]`: import the plugin and call `register(ctx)` in a child
//! interpreter with a recording stub context, to compare the real registrations with what
//! static analysis found.
//!
//! The child gets a throwaway `HERMES_HOME` and working directory, sockets refused, stdin
//! closed, and a timeout (its whole process group is killed). It writes its result after each
//! phase (`import`, `register`, `done`), so `os._exit`, crashes and hangs are reported with
//! the phase they happened in. This runs plugin code: it is opt-in and not a sandbox.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::static_py::RegKind;

/// The probe script run in the child interpreter.
pub const PROBE_SCRIPT: &str = include_str!("probe.py");

/// How to run the probe.
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// The interpreter (`python3` by default).
    pub python: String,
    /// How long one plugin may take.
    pub timeout: Duration,
    /// Load through the real `PluginManager` of the Hermes installed for `python` instead of
    /// the recording context (`--probe-hermes`).
    pub hermes: bool,
}

/// The loader script of `--probe-hermes` (also what the conformance test runs).
pub const HERMES_LOAD_SCRIPT: &str = include_str!("hermes_load.py");

/// Loads the plugin in `dir` (key `key`) through the real Hermes installed for
/// `options.python`, with `grants` (legacy config keys) set, and reports what it registered
/// or why it failed, in the probe's terms.
pub fn run_hermes(
    dir: &Path,
    key: &str,
    grants: &[&str],
    options: &ProbeOptions,
) -> Result<ProbeResult, ProbeError> {
    let work = tempfile::Builder::new()
        .prefix("hermes-plugins-probe-hermes-")
        .tempdir()?;
    let script = work.path().join("hermes_load.py");
    std::fs::write(&script, HERMES_LOAD_SCRIPT)?;
    let plugin = dir.canonicalize()?;
    let started = Instant::now();
    let out = Command::new(&options.python)
        .arg("-B")
        .arg(&script)
        .arg(format!("{key}={}#{}", plugin.display(), grants.join(",")))
        .current_dir(work.path())
        .env(
            "HERMES_CONFORMANCE_TIMEOUT",
            options.timeout.as_secs_f64().to_string(),
        )
        .env_remove("PYTHONPATH")
        .stdin(Stdio::null())
        .output()
        .map_err(|source| ProbeError::Interpreter {
            python: options.python.clone(),
            source,
        })?;
    let duration = started.elapsed();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let entry = &report[key];
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    let error = if let Some(e) = entry["harness_error"].as_str() {
        Some(format!("Hermes could not run: {e}"))
    } else if entry["known"] != true {
        Some(format!(
            "Hermes {} does not discover this plugin",
            if out.status.success() {
                "(the one installed)"
            } else {
                ""
            }
        ))
    } else {
        entry["error"]
            .as_str()
            .filter(|e| !e.starts_with("exclusive plugin"))
            .map(|e| format!("register(ctx) raised under Hermes: {e}"))
    };
    Ok(ProbeResult {
        phase: "done".into(),
        error,
        // Hermes registers a built-in tool's name only with override=True.
        tools: strings(&entry["tools"])
            .into_iter()
            .map(|t| {
                let builtin = crate::known::BUILTIN_TOOLS.contains(&t.as_str());
                (t, builtin)
            })
            .collect(),
        hooks: strings(&entry["hooks"])
            .into_iter()
            .map(|h| (h, None))
            .collect(),
        middleware: strings(&entry["middleware"]),
        duration,
        ..ProbeResult::default()
    })
}

/// Why the probe could not run at all (an environment problem, exit 3).
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The interpreter could not be started.
    #[error("cannot run the probe interpreter `{python}`: {source}")]
    Interpreter {
        /// The interpreter given.
        python: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// Temporary files could not be created.
    #[error("cannot prepare the probe: {0}")]
    Io(#[from] std::io::Error),
}

#[derive(Debug, Clone, Default, Deserialize)]
struct RawTool {
    name: String,
    #[serde(default)]
    r#override: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct RawHook {
    name: String,
    accepts_kwargs: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct RawMiddleware {
    name: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct Raw {
    phase: String,
    #[serde(default)]
    tools: Vec<RawTool>,
    #[serde(default)]
    hooks: Vec<RawHook>,
    #[serde(default)]
    middleware: Vec<RawMiddleware>,
    #[serde(default)]
    commands: Vec<String>,
    #[serde(default)]
    cli_commands: Vec<String>,
    #[serde(default)]
    platforms: Vec<String>,
    #[serde(default)]
    network_attempts: Vec<String>,
    error: Option<String>,
}

/// What the probe observed.
#[derive(Debug, Clone, Default)]
pub struct ProbeResult {
    /// The last phase reached: `setup`, `import`, `register` or `done`.
    pub phase: String,
    /// What went wrong, if anything (import error, exception, exit, timeout).
    pub error: Option<String>,
    /// Tools registered, with `override=`.
    pub tools: Vec<(String, bool)>,
    /// Hooks registered, with whether the callback accepts `**kwargs`.
    pub hooks: Vec<(String, Option<bool>)>,
    /// Middleware registered.
    pub middleware: Vec<String>,
    /// Slash commands registered.
    pub commands: Vec<String>,
    /// CLI commands registered.
    pub cli_commands: Vec<String>,
    /// Platforms registered.
    pub platforms: Vec<String>,
    /// Network calls that were refused.
    pub network_attempts: Vec<String>,
    /// Wall time of the child.
    pub duration: Duration,
}

impl ProbeResult {
    /// Whether `register(ctx)` ran to its end (possibly raising).
    pub fn completed(&self) -> bool {
        self.phase == "done"
            && !self.error.as_deref().is_some_and(|e| {
                e.starts_with("import failed") || e.starts_with("the module has no")
            })
    }

    /// Registrations as (kind, name, override, accepts_kwargs).
    pub fn registrations(&self) -> Vec<(RegKind, String, bool, Option<bool>)> {
        let mut out: Vec<(RegKind, String, bool, Option<bool>)> = Vec::new();
        out.extend(
            self.tools
                .iter()
                .map(|(n, o)| (RegKind::Tool, n.clone(), *o, None)),
        );
        out.extend(
            self.hooks
                .iter()
                .map(|(n, k)| (RegKind::Hook, n.clone(), false, *k)),
        );
        out.extend(
            self.middleware
                .iter()
                .map(|n| (RegKind::Middleware, n.clone(), false, None)),
        );
        out
    }
}

/// Runs the probe on the plugin in `dir`.
pub fn run(dir: &Path, options: &ProbeOptions) -> Result<ProbeResult, ProbeError> {
    let work = tempfile::Builder::new()
        .prefix("hermes-plugins-probe-")
        .tempdir()?;
    let script = work.path().join("probe.py");
    std::fs::write(&script, PROBE_SCRIPT)?;
    // The recording ctx has the newest release's methods and signatures.
    let api = work.path().join("api.json");
    let release = crate::known::api::latest_release();
    std::fs::write(
        &api,
        serde_json::json!({
            "version": release.version,
            "methods": release.methods,
            "properties": release.properties,
        })
        .to_string(),
    )?;
    let home = work.path().join("home");
    std::fs::create_dir(&home)?;
    let result_path = work.path().join("result.json");
    let plugin = dir.canonicalize()?;
    let started = Instant::now();
    let mut command = Command::new(&options.python);
    command
        .arg("-B")
        .arg(&script)
        .arg(&plugin)
        .arg(&result_path)
        .arg(&api)
        .current_dir(work.path())
        .env("HERMES_HOME", &home)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONUNBUFFERED", "1")
        .env_remove("PYTHONPATH")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    own_group(&mut command);
    let mut child = command.spawn().map_err(|source| ProbeError::Interpreter {
        python: options.python.clone(),
        source,
    })?;
    let mut stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.take(64 * 1024).read_to_end(&mut buf);
            // Drain the rest so the child never blocks on a full pipe.
            let _ = std::io::copy(s, &mut std::io::sink());
        }
        buf
    });
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if started.elapsed() >= options.timeout {
            timed_out = true;
            kill_group(child.id());
            let _ = child.kill();
            break child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    kill_group(child.id());
    let duration = started.elapsed();
    let stderr_text = String::from_utf8_lossy(&reader.join().unwrap_or_default()).into_owned();
    let raw: Raw = std::fs::read_to_string(&result_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let phase = if raw.phase.is_empty() {
        "setup".to_string()
    } else {
        raw.phase.clone()
    };
    let mut error = raw.error.clone();
    if timed_out {
        error = Some(format!(
            "timed out after {} s during {phase}",
            options.timeout.as_secs_f64()
        ));
    } else if phase != "done" {
        let code = status
            .and_then(|s| s.code())
            .map_or("a signal".to_string(), |c| format!("status {c}"));
        let tail = stderr_text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        error = Some(format!(
            "the interpreter exited with {code} during {phase}{}",
            if tail.is_empty() {
                String::new()
            } else {
                format!(": {}", crate::located::truncate_chars(tail, 200))
            }
        ));
    }
    Ok(ProbeResult {
        phase: if timed_out { "timeout".into() } else { phase },
        error,
        tools: raw
            .tools
            .into_iter()
            .map(|t| (t.name, t.r#override))
            .collect(),
        hooks: raw
            .hooks
            .into_iter()
            .map(|h| (h.name, h.accepts_kwargs))
            .collect(),
        middleware: raw.middleware.into_iter().map(|m| m.name).collect(),
        commands: raw.commands,
        cli_commands: raw.cli_commands,
        platforms: raw.platforms,
        network_attempts: raw.network_attempts,
        duration,
    })
}

/// Starts the child in a process group of its own, so [`kill_group`] reaches what it spawns.
fn own_group(command: &mut Command) {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(command, 0);
    #[cfg(windows)]
    let _ = command;
}

/// Kills a process group (the child and anything it spawned). On Windows only the child is
/// killed (`Child::kill`, by the caller): a process it started itself outlives it.
#[cfg(windows)]
fn kill_group(_pid: u32) {}

/// Kills a process group (the child and anything it spawned).
#[cfg(unix)]
fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: killpg only sends a signal; a stale group id fails with ESRCH, which is ignored.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
}
