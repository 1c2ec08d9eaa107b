//! An environment built ahead. Installing a plugin from the package index chooses its release
//! by resolving, and that resolution is, in the common case, the generation's own lock
//! ([`crate::resolve::memo`]). So the environment is not left for the build: [`Ahead::open`]
//! creates an empty virtualenv in a scratch directory on its own thread while the release is
//! being resolved (a venv needs only the interpreter), [`Ahead::start`] installs the
//! resolution's packages into it while the plugin's wheel is validated, stored and consented
//! to, and the build takes it with one rename when the generation's packages turn out to be
//! those ([`Ahead::take`]).
//!
//! Nothing runs early: only a lock of wheels is installed ahead (a wheel is unpacked, never
//! executed; a source distribution would be built, so such a lock waits for the build), and
//! only once the operation was told to go ahead with the dependencies (`--yes-deps`, nothing
//! dry). The scratch directory is held like every other ([`super::scratch`]): a build nobody
//! takes is stopped and removed when the run ends (and a run that dies leaves it to the next
//! writer's recovery); one that is taken is removed with whatever is left in it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tokio::sync::oneshot;

use super::scratch::Scratch;
use super::venv::{self, InstallRequest, Installed, Pin};
use crate::home::Layout;
use crate::resolve::engine::{EngineError, UvCache};

/// The one environment a run may build ahead (shared by clones of the run's context).
#[derive(Debug, Clone, Default)]
pub struct Ahead(Arc<Mutex<Option<Running>>>);

type Outcome = (Scratch, Result<Installed, EngineError>);

/// A build ahead, from [`Ahead::open`] until it is taken or dropped.
#[derive(Debug)]
struct Running {
    python: PathBuf,
    /// The packages it installs, once [`Ahead::start`] gave them.
    pins: Option<Vec<Pin>>,
    /// Where [`Ahead::start`] sends them.
    request: Option<oneshot::Sender<InstallRequest>>,
    /// Dropped (or sent) to stop the build: its future is dropped wherever it is.
    cancel: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<Outcome>>,
}

impl Running {
    /// Waits for the build to end; `None` if its thread panicked.
    fn join(&mut self) -> Option<Outcome> {
        self.thread.take()?.join().ok()
    }
}

/// A build nobody took (the operation failed or stopped before publishing, no packages were
/// given, or the generation needs others) is stopped and waited for, so its scratch directory
/// goes with it and nothing is left half-written.
impl Drop for Running {
    fn drop(&mut self) {
        self.cancel.take();
        self.request.take();
        self.join();
    }
}

/// An environment built ahead and taken: its venv is `venv()`, inside a scratch directory that
/// is removed (with whatever is left in it) when this is dropped.
#[derive(Debug)]
pub struct Built {
    scratch: Scratch,
    /// What was installed, with paths under [`Built::root`].
    pub installed: Installed,
}

impl Built {
    /// The directory the venv sits in (`root/venv`).
    pub fn root(&self) -> &Path {
        self.scratch.path()
    }

    /// The venv.
    pub fn venv(&self) -> PathBuf {
        self.root().join("venv")
    }
}

fn stopped() -> EngineError {
    EngineError::Other("stopped: not needed".into())
}

impl Ahead {
    fn state(&self) -> std::sync::MutexGuard<'_, Option<Running>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts building ahead for `python`, unless a build is open already: a scratch directory
    /// of `layout` and an empty virtualenv in it, waiting for [`Ahead::start`] to give the
    /// packages.
    pub fn open(&self, layout: &Layout, python: &Path, cache: UvCache) {
        let mut state = self.state();
        if state.is_some() {
            return;
        }
        let scratch = match Scratch::new(layout, "ahead-") {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!("no environment is built ahead: {e}");
                return;
            }
        };
        let (request, requested) = oneshot::channel::<InstallRequest>();
        let (cancel, mut cancelled) = oneshot::channel::<()>();
        let venv_dir = scratch.path().join("venv");
        let base = python.to_path_buf();
        let spawned = std::thread::Builder::new()
            .name("hermes-plugins-ahead".into())
            .spawn(move || {
                let started = std::time::Instant::now();
                let installed = crate::resolve::engine::on_uv_thread("ahead", move || async move {
                    let env = tokio::select! {
                        env = venv::create(&base, &cache, &venv_dir) => env?,
                        _ = &mut cancelled => return Err(stopped()),
                    };
                    let mut request = tokio::select! {
                        request = requested => request.map_err(|_| stopped())?,
                        _ = &mut cancelled => return Err(stopped()),
                    };
                    request.venv = venv_dir;
                    tokio::select! {
                        installed = venv::fill(request, env) => installed,
                        _ = cancelled => Err(stopped()),
                    }
                });
                tracing::debug!("the environment ahead took {:?}", started.elapsed());
                (scratch, installed)
            });
        match spawned {
            Ok(thread) => {
                *state = Some(Running {
                    python: python.to_path_buf(),
                    pins: None,
                    request: Some(request),
                    cancel: Some(cancel),
                    thread: Some(thread),
                });
            }
            Err(e) => tracing::debug!("no environment is built ahead: {e}"),
        }
    }

    /// Gives the packages to install (`request.pins`, for `request.python`; its `venv` is the
    /// one [`Ahead::open`] made) if a build is open and waiting for them, and every pin is a
    /// wheel with its sha256 — otherwise nothing is built ahead. Returns whether it was given.
    pub fn start(&self, request: InstallRequest) -> bool {
        let mut state = self.state();
        let Some(running) = state.as_mut() else {
            return false;
        };
        let wheels = !request.pins.is_empty()
            && request
                .pins
                .iter()
                .all(|p| p.wheel.is_some() && p.sha256.is_some());
        if running.pins.is_some() || running.python != request.python || !wheels {
            return false;
        }
        let Some(sender) = running.request.take() else {
            return false;
        };
        let pins = request.pins.clone();
        if sender.send(request).is_err() {
            return false;
        }
        tracing::debug!("building the environment of {} packages ahead", pins.len());
        running.pins = Some(pins);
        true
    }

    /// The environment built ahead, if it is `pins` (in any order) for `python`: waits for it
    /// to be done. One that is not what is asked for is stopped (what it downloaded stays in
    /// the caches); one that failed is dropped — the build installs as if nothing had been
    /// tried, and reports its own errors.
    pub fn take(&self, pins: &[Pin], python: &Path) -> Option<Built> {
        let mut running = self.state().take()?;
        let Some(built_for) = &running.pins else {
            return None;
        };
        if running.python != python || !same_pins(built_for, pins) {
            tracing::debug!("the environment built ahead is not this generation's; stopped");
            return None;
        }
        match running.join() {
            Some((scratch, Ok(installed))) => Some(Built { scratch, installed }),
            Some((_, Err(e))) => {
                tracing::debug!("building the environment ahead failed: {e}");
                None
            }
            None => {
                tracing::debug!("the thread building the environment ahead panicked");
                None
            }
        }
    }
}

fn same_pins(a: &[Pin], b: &[Pin]) -> bool {
    let key = |p: &Pin| {
        (
            p.name.clone(),
            p.version.clone(),
            p.sha256.as_ref().map(|s| s.to_ascii_lowercase()),
            p.wheel.clone(),
        )
    };
    let mut a: Vec<_> = a.iter().map(key).collect();
    let mut b: Vec<_> = b.iter().map(key).collect();
    a.sort();
    b.sort();
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(name: &str, version: &str, sha: Option<&str>) -> Pin {
        Pin {
            name: name.parse().unwrap(),
            version: version.parse().unwrap(),
            sha256: sha.map(str::to_string),
            wheel: Some((
                format!("{name}-{version}-py3-none-any.whl"),
                format!("https://x/{name}"),
            )),
        }
    }

    #[test]
    fn pins_compare_as_sets_with_hashes_in_any_case() {
        let a = [pin("a", "1", Some("AB")), pin("b", "2", Some("cd"))];
        let b = [pin("b", "2", Some("CD")), pin("a", "1", Some("ab"))];
        assert!(same_pins(&a, &b));
        assert!(!same_pins(&a, &[pin("a", "1", Some("ab"))]));
        assert!(!same_pins(
            &a,
            &[pin("a", "1", Some("ab")), pin("b", "3", Some("cd"))]
        ));
    }

    #[test]
    fn only_hashed_wheels_are_built_ahead_and_what_is_not_taken_leaves_nothing() {
        let home = tempfile::tempdir().unwrap();
        let layout = Layout::new(home.path());
        let python = Path::new("/nonexistent/python3");
        let cache = UvCache {
            home: home.path().join("cache"),
            interpreters: None,
        };
        let request = |pins: Vec<Pin>| InstallRequest {
            python: python.to_path_buf(),
            cache: cache.clone(),
            index: Default::default(),
            pins,
            venv: PathBuf::new(),
            wheel_cache: home.path().join("wheels"),
            wheel_limits: Default::default(),
        };
        let wanted = || vec![pin("a", "1", Some("ab"))];
        let ahead = Ahead::default();
        // Not opened: nothing to give the packages to.
        assert!(!ahead.start(request(wanted())));
        ahead.open(&layout, python, cache.clone());
        let mut sdist = pin("b", "1", Some("cd"));
        sdist.wheel = None;
        assert!(!ahead.start(request(vec![pin("a", "1", Some("ab")), sdist])));
        assert!(!ahead.start(request(vec![pin("a", "1", None)])));
        assert!(!ahead.start(request(Vec::new())));
        assert!(ahead.start(request(wanted())));
        assert!(!ahead.start(request(wanted())), "given once");
        // There is no such interpreter: the build fails, is taken as nothing, and its scratch
        // directory is gone.
        assert!(ahead.take(&wanted(), python).is_none());
        assert_eq!(std::fs::read_dir(layout.tmp()).unwrap().count(), 0);
        assert!(ahead.take(&wanted(), python).is_none());
        // Opened and never given anything, or given other packages: stopped, nothing left.
        let ahead = Ahead::default();
        ahead.open(&layout, python, cache.clone());
        assert!(ahead.take(&wanted(), python).is_none());
        ahead.open(&layout, python, cache.clone());
        drop(ahead);
        let ahead = Ahead::default();
        ahead.open(&layout, python, cache.clone());
        assert!(ahead.start(request(wanted())));
        assert!(ahead.take(&[pin("a", "2", Some("ab"))], python).is_none());
        assert_eq!(std::fs::read_dir(layout.tmp()).unwrap().count(), 0);
    }
}
