//! The package manager's operations, composed from the modules below it: `install`,
//! `enable`, `disable`, `remove`, `sync`, `update`, `rollback` (mutating, one writer at a
//! time, journaled) and the read-only views (`list`, `show`, `env`).
//!
//! Every mutating operation follows one path ([`apply::apply`]): work out each profile's new
//! selection, and from it the generation's inputs; if they equal the current generation's,
//! only the user files change (GEN-5); otherwise ask for dependency consent, resolve (a
//! conflict changes nothing), build the generation in staging, publish it, apply the
//! `config.yaml` / `installed.json` edits and switch `current` — all inside one journaled
//! transaction.

mod admission;
pub mod apply;
pub mod gc;
pub mod generations;
pub mod install;
pub mod outdated;
pub mod pack;
pub mod plan;
mod prepare;
pub mod pypi;
pub mod query;
pub mod reads;
pub mod refusal;
pub mod remove;
pub mod resolution;
pub mod update;
pub mod views;

pub use refusal::Refusal;

use std::path::PathBuf;

use crate::exit::Code;
use crate::generation::journal::{self, Recovery};
use crate::generation::writer_lock::{LockError, WriterLock};
use crate::home::Layout;
use crate::resolve::engine::{IndexConfig, UvCache};
use crate::resolve::inputs::CoreInputs;
use crate::source::FetchOptions;

/// How dependency consent (CAP-6) is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepsConsent {
    /// `--yes-deps`: yes in advance.
    Yes,
    /// `--no-deps`: fetch only; never enable.
    No,
    /// Ask (interactive) or refuse (non-interactive).
    Ask,
    /// The change adds no plugin itself (`disable`, `remove`), so anything it would install
    /// comes from a selection edited by hand and waiting for `sync`: asked (interactive) or
    /// refused naming `sync --yes-deps`, never installed unasked.
    Pending,
}

pub use crate::consent::prompt::{NoInput, Prompter};

/// Where progress and notes go (stderr in the CLI; silent with `--json`).
pub trait Feedback {
    /// A phase starts (`resolving`, `installing 12 packages`).
    fn phase(&mut self, message: &str);
    /// A note for the user (`plugin weather is unreviewed`).
    fn note(&mut self, message: &str);
    /// Git transfer progress.
    fn transfer(&mut self, received: usize, total: usize);
    /// The current phase is over.
    fn done(&mut self);
}

/// Feedback that goes nowhere.
#[derive(Debug, Default)]
pub struct Silent;

impl Feedback for Silent {
    fn phase(&mut self, _message: &str) {}
    fn note(&mut self, _message: &str) {}
    fn transfer(&mut self, _received: usize, _total: usize) {}
    fn done(&mut self) {}
}

/// Feedback kept to be told later, in order (work done on another thread): its notes;
/// phases and transfer progress, which would interleave, are left out.
#[derive(Debug, Default)]
pub struct Notes(Vec<String>);

impl Notes {
    /// Tells the kept notes to `feedback`.
    pub fn replay(self, feedback: &mut dyn Feedback) {
        for note in self.0 {
            feedback.note(&note);
        }
    }
}

impl Feedback for Notes {
    fn phase(&mut self, _message: &str) {}
    fn note(&mut self, message: &str) {
        self.0.push(message.to_string());
    }
    fn transfer(&mut self, _received: usize, _total: usize) {}
    fn done(&mut self) {}
}

/// Everything an operation needs to know about its environment.
#[derive(Debug, Clone)]
pub struct Context {
    /// Where things live.
    pub layout: Layout,
    /// The profile acted on (`default` or a name under `profiles/`).
    pub profile: String,
    /// Hermes core, when configured.
    pub core: Option<CoreInputs>,
    /// Whether `core` was decided (a core, or `--no-core`): a generation is never resolved
    /// against an environment nobody chose.
    pub core_known: bool,
    /// Core extras.
    pub extras: Vec<String>,
    /// The target interpreter.
    pub python: PathBuf,
    /// The cache every home shares for what uv learns about interpreters (`None`: each
    /// home's own; see [`UvCache`]).
    pub interpreter_cache: Option<PathBuf>,
    /// Where packages come from.
    pub index: IndexConfig,
    /// Quarantine window (days).
    pub quarantine_days: u32,
    /// "Now" for the quarantine.
    pub now: jiff::Timestamp,
    /// Catalog and GitHub configuration.
    pub fetch: FetchOptions,
    /// Bounds on each wheel installed.
    pub wheel_limits: crate::generation::wheels::WheelLimits,
    /// How long to wait for another writer (`None`: as long as it takes).
    pub lock_wait: Option<std::time::Duration>,
    /// `SOURCE_DATE_EPOCH`: the creation time recorded in generations (reproducible builds).
    pub source_date_epoch: Option<i64>,
    /// The names of the environment variables set for this process (a plugin's
    /// `requires_env` is met by any of them, or by `.env`).
    pub env_names: std::collections::BTreeSet<String>,
    /// `--ignore-requires-hermes`: publish plugins whose `requires_hermes` excludes the
    /// core's version (recorded per plugin in `installed.json`).
    pub ignore_requires_hermes: bool,
    /// `--locked` / `--frozen`: how far the lock may move.
    pub lock_mode: LockMode,
    /// The resolutions this run has made (the release of a `pypi:` plugin chosen is the
    /// generation's answer when the generation asks the same).
    pub resolutions: crate::resolve::memo::Memo,
    /// The environment this run may install while a plugin is still being checked
    /// (`install pypi:… --enable --yes-deps`), taken by the build when it is the generation's.
    pub ahead: crate::generation::ahead::Ahead,
}

/// How an operation may treat the current generation's lock (uv's and cargo's flags).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LockMode {
    /// Resolve when something that decides the lock changed; reuse it otherwise.
    #[default]
    Resolve,
    /// `--locked`: resolve as usual, but refuse (`lock-changed`) if the lock would change.
    Locked,
    /// `--frozen`: never resolve; install the current lock as it is, refused
    /// (`lock-changed`) when there is none or it was resolved for other requirements.
    Frozen,
}

/// uv's caches of the home at `layout`, with interpreter facts in `interpreters` (the
/// user's cache) when given.
pub fn uv_cache(layout: &Layout, interpreters: Option<PathBuf>) -> UvCache {
    UvCache {
        home: layout.uv_cache(),
        interpreters,
    }
}

/// The installed set of the context's home (`pm/installed.json`); unreadable is an
/// environment error with its cause.
pub fn installed(cx: &Context) -> Result<crate::state::installed::Installed, ManagerError> {
    crate::state::installed::Installed::read(&cx.layout.installed())
        .map_err(ManagerError::environment)
}

impl Context {
    /// uv's caches for this home.
    pub fn uv_cache(&self) -> UvCache {
        uv_cache(&self.layout, self.interpreter_cache.clone())
    }

    /// The config file of a profile.
    pub fn config_path(&self, profile: &str) -> PathBuf {
        self.layout.config(profile)
    }
}

/// Why an operation failed; the CLI maps each to an exit status.
#[derive(Debug, thiserror::Error)]
pub enum ManagerError {
    /// Refused (exit 1, code `refused`): one of the operations' refusals. Conflicts,
    /// validation and consent have their own variants and codes.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// A resolution conflict (exit 1), with its explanation.
    #[error("{}", .0.sentences.join("\n"))]
    Conflict(Box<crate::resolve::conflict::Conflict>),
    /// The request makes no sense (exit 2).
    #[error("{0}")]
    Usage(String),
    /// A failure with a specific code (its exit status follows from the code).
    #[error("{1}")]
    Coded(Code, String),
    /// Consent that was needed and not given (`consent-required` with nobody to ask,
    /// `consent-refused` when refused at a prompt): what was asked, what came of it (by
    /// default [`apply::NOTHING_CHANGED`]; an operation that kept part of its work says so
    /// here, as a field, never by rewriting the text) and the way past it.
    #[error("{asked}: {outcome} ({way})")]
    NotConsented {
        /// `consent-required` or `consent-refused`.
        code: Code,
        /// What was asked, as shown.
        asked: String,
        /// What came of the operation.
        outcome: String,
        /// The flag or command that gives the consent.
        way: String,
    },
    /// A failure with a code and the errors that caused it (`Caused by:`, JSON `causes`).
    #[error("{message}")]
    Caused {
        /// The stable code.
        code: Code,
        /// What failed.
        message: String,
        /// The errors below it, outermost first.
        causes: Vec<String>,
    },
}

impl From<crate::resolve::Failure> for ManagerError {
    /// A resolution that failed: a conflict stays one; an environment failure keeps its
    /// code and causes.
    fn from(failure: crate::resolve::Failure) -> Self {
        match failure {
            crate::resolve::Failure::Conflict(c) => ManagerError::Conflict(c),
            crate::resolve::Failure::Environment(code, message, causes) => ManagerError::Caused {
                code,
                message,
                causes,
            },
        }
    }
}

impl ManagerError {
    /// The stable code of this failure.
    pub fn code(&self) -> Code {
        match self {
            ManagerError::Refused(_) => Code::Refused,
            ManagerError::Conflict(_) => Code::Conflict,
            ManagerError::Usage(_) => Code::Usage,
            ManagerError::Coded(code, _)
            | ManagerError::Caused { code, .. }
            | ManagerError::NotConsented { code, .. } => *code,
        }
    }

    /// A failure with `code`.
    pub fn coded(code: Code, message: impl Into<String>) -> ManagerError {
        ManagerError::Coded(code, message.into())
    }

    /// An environment failure (exit 3): `error` in its own words, with what caused it.
    pub fn environment(error: impl std::error::Error + 'static) -> ManagerError {
        let mut layers = crate::exit::layers(&error).into_iter();
        ManagerError::Caused {
            code: Code::Environment,
            message: layers.next().unwrap_or_else(|| error.to_string()),
            causes: layers.collect(),
        }
    }

    /// A failure with `code`, caused by `error` (and what caused it).
    pub fn caused(
        code: Code,
        message: impl Into<String>,
        error: &(dyn std::error::Error + 'static),
    ) -> ManagerError {
        let causes = crate::exit::layers(error);
        ManagerError::Caused {
            code,
            message: message.into(),
            causes,
        }
    }
}

impl From<std::io::Error> for ManagerError {
    fn from(e: std::io::Error) -> Self {
        ManagerError::Coded(Code::Io, e.to_string())
    }
}

impl From<LockError> for ManagerError {
    fn from(e: LockError) -> Self {
        let code = match e {
            LockError::Busy { .. } => Code::LockBusy,
            LockError::Io { .. } => Code::Io,
        };
        let causes = crate::exit::causes(&e);
        ManagerError::Caused {
            code,
            message: e.to_string(),
            causes,
        }
    }
}

/// A user file (`config.yaml`, `.env`) as text, `None` when it does not exist. Any other
/// failure is an error naming the file: an unreadable file is never taken for an empty one
/// (which the edit would then overwrite).
pub(crate) fn read_user_file(path: &std::path::Path) -> Result<Option<String>, ManagerError> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ManagerError::caused(
            Code::Io,
            format!("cannot read {}", path.display()),
            &e,
        )),
    }
}

/// The writer lock (waiting at most `cx.lock_wait`) plus crash recovery: what every mutating
/// command starts with.
pub fn begin_writing(
    cx: &Context,
    command: &str,
    feedback: &mut dyn Feedback,
) -> Result<WriterLock, ManagerError> {
    let layout = &cx.layout;
    std::fs::create_dir_all(&layout.pm)?;
    let mut waiting = false;
    let lock = WriterLock::acquire(&layout.lock_file(), command, cx.lock_wait, &mut |m| {
        feedback.note(m);
        feedback.phase(m);
        waiting = true;
    });
    if waiting {
        feedback.done();
    }
    let lock = lock?;
    match journal::recover(layout)? {
        Recovery::Clean => {}
        Recovery::Completed(op) => feedback.note(&format!(
            "finished an interrupted `{op}` (it had already switched)"
        )),
        Recovery::RolledBack(op) => feedback.note(&format!(
            "undid an interrupted `{op}`: nothing it started is visible"
        )),
    }
    Ok(lock)
}

/// The kill-list entry (SRC-4) naming `name` or `repo` in any configured catalog's
/// `removed.yaml` (each catalog's kill list applies, whatever its precedence), if any. A kill
/// list that cannot be read fails closed: an error naming its first problem (file, line, what
/// is wrong), never an empty list.
pub fn removed_entry(
    cx: &Context,
    name: Option<&str>,
    repo: Option<&str>,
) -> Result<Option<(String, crate::catalog::Removed)>, ManagerError> {
    for catalog in &cx.fetch.catalogs {
        let path = catalog.dir.join("removed.yaml");
        if !path.exists() {
            continue;
        }
        // The kill list as the user knows it: a local catalog's file, else the catalog they
        // named (a feed or git URL), not our cached copy of it.
        let shown = if std::path::Path::new(&catalog.given) == catalog.dir {
            path.display().to_string()
        } else {
            format!("removed list of the catalog {}", catalog.given)
        };
        let (list, findings) = crate::catalog::removed::load(&path);
        if let Some(bad) = findings
            .iter()
            .find(|f| f.severity == crate::diag::Severity::Error)
        {
            return Err(ManagerError::coded(
                Code::Removed,
                format!(
                    "the catalog's kill list ({shown}, line {}) cannot be read ({}): nothing is installed while it is broken; check it with `hermes-plugins catalog check {}`",
                    bad.pos.line, bad.message, catalog.given
                ),
            ));
        }
        if let Some(hit) = crate::catalog::removed::blocked(&list, name, repo) {
            return Ok(Some((shown, hit.clone())));
        }
    }
    Ok(None)
}

/// The kill list (SRC-4) before anything is fetched: a catalog entry by its name and its
/// repository, a GitHub or git source by its normalised URL (a directory is checked by its
/// manifest name once read, with [`check_removed`]).
pub fn check_removed_source(
    cx: &Context,
    spec: &crate::source::SourceSpec,
    allow: bool,
    feedback: &mut dyn Feedback,
) -> Result<(), ManagerError> {
    use crate::source::SourceSpec;
    let (name, repo) = match spec {
        SourceSpec::Catalog { name } => (
            Some(name.clone()),
            crate::source::catalog::lookup(&cx.fetch, name)
                .ok()
                .map(|pin| pin.repo),
        ),
        SourceSpec::Github { owner, repo, .. } => {
            (None, Some(format!("https://github.com/{owner}/{repo}")))
        }
        SourceSpec::Git { url, .. } => (None, Some(url.clone())),
        // A directory or a distribution is checked by its plugin name once read.
        SourceSpec::Path { .. } | SourceSpec::Pypi { .. } | SourceSpec::Wheel { .. } => {
            (None, None)
        }
    };
    if name.is_none() && repo.is_none() {
        return Ok(());
    }
    let label = name.clone().unwrap_or_else(|| spec.display());
    check_removed_as(
        cx,
        &label,
        name.as_deref(),
        repo.as_deref(),
        allow,
        feedback,
    )
}

/// The kill list (SRC-4): refuses a plugin the catalog's `removed.yaml` lists (by name or by
/// normalised repository URL) unless `allow` (`--allow-removed`), which only warns.
pub fn check_removed(
    cx: &Context,
    name: &str,
    repo: Option<&str>,
    allow: bool,
    feedback: &mut dyn Feedback,
) -> Result<(), ManagerError> {
    check_removed_as(cx, name, Some(name), repo, allow, feedback)
}

fn check_removed_as(
    cx: &Context,
    label: &str,
    name: Option<&str>,
    repo: Option<&str>,
    allow: bool,
    feedback: &mut dyn Feedback,
) -> Result<(), ManagerError> {
    let Some((shown, hit)) = removed_entry(cx, name, repo)? else {
        return Ok(());
    };
    let why = format!(
        "`{}` is on the catalog's removal list ({}{}{})",
        crate::text::escape(label),
        shown,
        hit.reason
            .as_deref()
            .map(|r| format!(": {r}"))
            .unwrap_or_default(),
        hit.date
            .as_deref()
            .map(|d| format!(", {d}"))
            .unwrap_or_default()
    );
    if allow {
        feedback.note(&format!("{why}; continuing because of --allow-removed"));
        Ok(())
    } else {
        Err(ManagerError::coded(
            Code::Removed,
            format!("{why}; pass --allow-removed to use it anyway"),
        ))
    }
}
