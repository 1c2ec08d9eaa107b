//! Phase 7, publication: build the generation in staging, publish it, edit the user files
//! (`config.yaml` of every profile, `installed.json`, `.env`) and switch `current` — one
//! journaled transaction; or, when the inputs did not change, only the user files.

use std::collections::BTreeMap;
use std::path::Path;

use super::Change;
use super::consent::Decisions;
use super::digest::{core_identity, index_record, input_changes, lock_changes};
use super::resolve::Resolved;
use super::select::ProfileState;
use crate::consent::audit;
use crate::exit::Code;
use crate::generation::build::{self, BuildInputs};
use crate::generation::doc::{self, GenPlugin, GenerationDoc, ProfileSelection, PythonEnv};
use crate::generation::transaction::Transaction;
use crate::manager::{Context, Feedback, ManagerError};
use crate::state::installed::Installed;

/// The user files a change edits: the `config.yaml` of every profile whose text changed,
/// `installed.json` when the change carries one, `.env` when values were entered (0600) —
/// and the audit entries appended once they are committed.
pub(in crate::manager) struct UserFiles<'a> {
    /// The operation, for the journal (`enable weather`, `rollback to 3`).
    pub operation: &'a str,
    /// Each edited `config.yaml` and its new text.
    pub configs: Vec<(&'a Path, &'a str)>,
    /// The installed state to write.
    pub installed: Option<&'a Installed>,
    /// The new `.env` texts, by file.
    pub env_texts: &'a std::collections::BTreeMap<std::path::PathBuf, String>,
    /// What was decided, to audit.
    pub audit: &'a [audit::AuditEntry],
}

impl<'a> UserFiles<'a> {
    /// The files `change` edits, with the profiles' texts as phase 1 and consent left them.
    pub(super) fn of(
        states: &'a BTreeMap<String, ProfileState>,
        change: &'a Change,
        decisions: &'a Decisions,
    ) -> UserFiles<'a> {
        UserFiles {
            operation: &change.operation,
            configs: states
                .values()
                .filter(|state| {
                    state.original.as_deref() != Some(state.text.as_str())
                        && !(state.original.is_none() && state.text.is_empty())
                })
                .map(|state| (state.config.as_path(), state.text.as_str()))
                .collect(),
            installed: change.installed.as_ref(),
            env_texts: &decisions.env_texts,
            audit: &decisions.audit,
        }
    }

    /// Adds the edits to `tx`.
    fn edit(&self, cx: &Context, tx: &mut Transaction) -> Result<(), ManagerError> {
        for (config, text) in &self.configs {
            tx.edit_file(config, text.as_bytes())?;
        }
        if let Some(new) = self.installed {
            tx.edit_file(&cx.layout.installed(), new.to_json().as_bytes())?;
        }
        for (file, text) in self.env_texts {
            tx.edit_file_mode(file, text.as_bytes(), Some(0o600))?;
        }
        Ok(())
    }
}

/// Edits the user files and points `current` at generation `to`, already published — the
/// current one when a change's inputs did not move, an older one on rollback — in one
/// transaction; then appends the audit.
pub(in crate::manager) fn switch(
    cx: &Context,
    files: &UserFiles,
    to: Option<u64>,
) -> Result<(), ManagerError> {
    let mut tx = Transaction::begin_switch(&cx.layout, files.operation, to)?;
    files.edit(cx, &mut tx)?;
    tx.commit()?;
    append_audit(cx, files.audit);
    Ok(())
}

/// Appends the audit entries of a committed operation; a failure is a warning naming the log
/// (the operation is done and stays done).
fn append_audit(cx: &Context, entries: &[audit::AuditEntry]) {
    let log = cx.layout.audit_log();
    if let Err(e) = audit::append(&log, entries) {
        tracing::warn!(
            "the change is committed, but {} could not be appended to: {e}",
            log.display()
        );
    }
}

/// What a publication needs besides the user files.
pub(super) struct Publication {
    /// The inputs digest.
    pub digest: String,
    /// The plugins.
    pub plugins: Vec<GenPlugin>,
    /// The per-profile selections and grants.
    pub selections: BTreeMap<String, ProfileSelection>,
    /// The resolution.
    pub resolved: Resolved,
}

/// Builds, publishes, edits and switches; returns the new generation's number and the change
/// lines (inputs, then packages) against `current`.
pub(super) fn publish(
    cx: &Context,
    files: &UserFiles,
    publication: Publication,
    current: Option<&GenerationDoc>,
    previous: Option<u64>,
    feedback: &mut dyn Feedback,
) -> Result<(u64, Vec<String>), ManagerError> {
    let started = std::time::Instant::now();
    let operation = files.operation;
    let Publication {
        digest,
        plugins,
        selections,
        resolved,
    } = publication;
    let lock = resolved.lock;
    let resolution_digest = resolved.digest;
    // The environment to carry over: that of the generation whose lock was reused, else the
    // current one's.
    let reuse_from = resolved.earlier.as_ref().or(current);
    let new_doc = GenerationDoc {
        format: doc::GENERATION_FORMAT,
        number: 0,
        parent: previous,
        created: doc::created_at(cx.source_date_epoch),
        operation: operation.to_string(),
        inputs_digest: digest,
        resolution_digest: resolution_digest.clone(),
        index: Some(index_record(&cx.index)),
        core: core_identity(cx),
        python: PythonEnv {
            base: cx.python.display().to_string(),
            version: lock.python.version.clone(),
            venv: String::new(),
            executable: String::new(),
            site_packages: String::new(),
        },
        plugins,
        profiles: selections,
        lock: lock.clone(),
    };
    let (mut tx, staging) = Transaction::begin_build(&cx.layout, operation)?;
    let mut new_doc = new_doc;
    new_doc.number = tx.target().unwrap_or(1);
    feedback.phase(&format!(
        "building generation {} ({} packages)",
        new_doc.number,
        lock.packages.len()
    ));
    let built = build::build(
        &staging,
        &BuildInputs {
            python: cx.python.clone(),
            cache: cx.uv_cache(),
            index: cx.index.clone(),
            store: cx.layout.store(),
            wheel_cache: cx.layout.wheel_cache(),
            wheel_limits: cx.wheel_limits,
            ahead: cx.ahead.clone(),
            reuse: reuse_from.and_then(|c| {
                let python = crate::generation::reuse::Python {
                    asked: &cx.python,
                    as_before: c.resolution_digest.is_some()
                        && c.resolution_digest == resolution_digest,
                };
                crate::generation::reuse::reusable(
                    &cx.layout.generation(c.number),
                    c,
                    &lock,
                    &python,
                )
                .inspect_err(|why| {
                    tracing::debug!("the venv of generation {} is not reused: {why}", c.number)
                })
                .ok()
            }),
        },
        new_doc,
    );
    feedback.done();
    tracing::debug!("built the generation in {:?}", started.elapsed());
    let built = match built {
        Ok(doc) => doc,
        Err(e) => {
            tx.abort()?;
            let code = match &e {
                build::BuildError::Install(engine) => engine.code(),
                build::BuildError::Io(_) => Code::Io,
                _ => Code::Environment,
            };
            let causes = match &e {
                build::BuildError::Install(engine) => engine.causes(),
                other => crate::exit::causes(other),
            };
            return Err(ManagerError::Caused {
                code,
                message: e.to_string(),
                causes,
            });
        }
    };
    let steps = (|| -> Result<(), ManagerError> {
        tx.publish_staging()?;
        files.edit(cx, &mut tx)?;
        Ok(())
    })();
    if let Err(e) = steps {
        tx.abort()?;
        return Err(e);
    }
    tx.commit()?;
    append_audit(cx, files.audit);
    tracing::debug!("published in {:?}", started.elapsed());
    let changes = current
        .map(|old| input_changes(old, &built))
        .unwrap_or_default()
        .into_iter()
        .chain(lock_changes(current, &lock))
        .collect();
    Ok((built.number, changes))
}
