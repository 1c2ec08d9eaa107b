//! Plugins that are Python distributions on the package index (`pypi:NAME[…]`): which release
//! and which wheel, chosen as the generation's resolution will choose them, fetched and
//! admitted like every wheel of a lock, and kept in the store as a tree holding that one
//! wheel. The generation's environment installs the distribution by name and version
//! ([`crate::resolve::inputs::plugin_from_dir`]); [`check_locked_wheels`] holds the lock to
//! the very file that was validated.

use std::path::Path;

use super::{Context, Feedback, ManagerError};
use crate::exit::Code;
use crate::generation::wheels::{self, WheelPin};
use crate::resolve::engine::Session;
use crate::resolve::inputs::{Labelled, PluginInput, Source};
use crate::resolve::lock::Lock;
use crate::source::{Fetched, PackagePin, Provenance, SourceSpec};

/// The release of `requirement` a generation with this plugin alone would install: resolved
/// with core, the quarantine, the indexes and the current lock's versions preferred (not the
/// distribution's own: an update looks for its newest release), as the generation's
/// resolution will be — whose answer, when the generation asks exactly this with the release
/// pinned, this resolution is ([`crate::resolve::remember_narrowed`]).
pub fn release(
    cx: &Context,
    spec: &SourceSpec,
    requirement: &str,
) -> Result<crate::resolve::lock::LockPackage, ManagerError> {
    choose(cx, spec, requirement).map(|(package, _)| package)
}

/// [`release`], and the whole lock it was chosen with.
fn choose(
    cx: &Context,
    spec: &SourceSpec,
    requirement: &str,
) -> Result<(crate::resolve::lock::LockPackage, Lock), ManagerError> {
    let parsed = crate::source::spec::pypi_requirement(requirement)
        .map_err(|e| ManagerError::Usage(e.to_string()))?;
    let name = parsed.name.to_string();
    let input = |requirement: uv_pep508::Requirement<uv_pep508::VerbatimUrl>| PluginInput {
        name: name.clone(),
        dir: cx.layout.home.clone(),
        requirements: vec![Labelled {
            source: Source::Plugin(name.clone()),
            raw: requirement.to_string(),
            requirement,
        }],
        excluded: Vec::new(),
    };
    let previous = super::reads::current_doc(cx).map(|d| {
        let mut lock = d.lock;
        lock.packages.retain(|p| p.name != name);
        lock
    });
    let asked = super::resolution::request(cx, vec![input(parsed.clone())], previous);
    let lock = crate::resolve::run_remembered(&asked, &cx.resolutions)?.lock;
    let package = lock
        .packages
        .iter()
        .find(|p| p.name == name)
        .cloned()
        .ok_or_else(|| {
            ManagerError::coded(
                Code::NotFound,
                format!("{}: the resolution has no {name}", spec.display()),
            )
        })?;
    if let Ok(version) = package.version.parse::<uv_pep440::Version>() {
        let mut pinned = parsed;
        pinned.version_or_url = Some(uv_pep508::VersionOrUrl::VersionSpecifier(
            uv_pep440::VersionSpecifiers::from(uv_pep440::VersionSpecifier::equals_version(
                version,
            )),
        ));
        let narrowed = crate::resolve::Request {
            plugins: vec![input(pinned)],
            ..asked.clone()
        };
        crate::resolve::remember_narrowed(&cx.resolutions, &asked, &narrowed);
    }
    Ok((package, lock))
}

/// Resolves `requirement` ([`release`]), downloads and admits that release's wheel, and puts
/// it alone in `scratch/wheel/`: the package directory install validates and stores.
pub fn fetch(
    cx: &Context,
    spec: &SourceSpec,
    requirement: &str,
    scratch: &Path,
    feedback: &mut dyn Feedback,
) -> Result<Fetched, ManagerError> {
    feedback.phase(&format!("resolving {}", spec.display()));
    let chosen = choose(cx, spec, requirement);
    feedback.done();
    let (package, lock) = chosen?;
    let label = format!("{}=={}", package.name, package.version);
    let (Some(filename), Some(url)) = (&package.file, &package.url) else {
        return Err(not_a_wheel(spec, &label));
    };
    if package.kind != "wheel" || !filename.ends_with(".whl") {
        return Err(not_a_wheel(spec, &label));
    }
    let pin = WheelPin {
        label: label.clone(),
        filename: filename.clone(),
        url: url.clone(),
        sha256: package.sha256.clone(),
    };
    feedback.phase(&format!("downloading {filename}"));
    let (python, caches, index) = (cx.python.clone(), cx.uv_cache(), cx.index.clone());
    let (cache, limits) = (cx.layout.wheel_cache(), cx.wheel_limits);
    let admitted = crate::resolve::engine::on_uv_thread("fetch-wheel", move || async move {
        let dirs = wheels::admit(&[pin], &cache, &limits, || async {
            Session::open(&python, &caches, &index, &uv_types::HashStrategy::None).await
        })
        .await?;
        Ok(dirs)
    });
    feedback.done();
    let dir = admitted
        .map_err(|e| ManagerError::coded(Code::Network, format!("{label}: {e}")))?
        .into_iter()
        .next()
        .ok_or_else(|| ManagerError::coded(Code::Io, format!("{label}: nothing was admitted")))?;
    start_ahead(cx, &lock);
    let file = dir.join(filename);
    let sha256 = crate::hash::sha256_file_bounded(&file, cx.wheel_limits.max_unpacked)
        .map(|d| crate::hash::hex(&d))
        .map_err(|e| ManagerError::coded(Code::Io, format!("{}: {e}", file.display())))?;
    let package_dir = scratch.join("wheel");
    std::fs::create_dir_all(&package_dir).map_err(ManagerError::environment)?;
    std::fs::copy(&file, package_dir.join(filename))
        .map_err(|e| ManagerError::coded(Code::Io, format!("{}: {e}", package_dir.display())))?;
    let pin = PackagePin {
        name: package.name.clone(),
        version: package.version.clone(),
        filename: filename.clone(),
        sha256,
    };
    Ok(Fetched {
        dir: package_dir,
        provenance: Provenance::of_wheel(
            spec.clone(),
            Some(crate::text::strip_credentials(url)),
            pin,
        ),
    })
}

/// Installs `lock`'s environment ahead, while the admitted wheel is validated and stored
/// ([`crate::generation::ahead`]): with no other plugin's requirements, the generation asks
/// for exactly this lock.
fn start_ahead(cx: &Context, lock: &Lock) {
    let Ok(pins) = crate::generation::build::pins(lock) else {
        return;
    };
    cx.ahead.start(crate::generation::venv::InstallRequest {
        python: cx.python.clone(),
        cache: cx.uv_cache(),
        index: cx.index.clone(),
        pins,
        venv: std::path::PathBuf::new(),
        wheel_cache: cx.layout.wheel_cache(),
        wheel_limits: cx.wheel_limits,
    });
}

fn not_a_wheel(spec: &SourceSpec, label: &str) -> ManagerError {
    super::Refusal::NoWheel {
        spec: spec.display(),
        release: label.to_string(),
    }
    .into()
}

/// Holds a lock to the wheels that were validated: for every plugin installed from the index
/// (`pins`), the lock must install that distribution at that version from the very same file
/// (its sha256), or nothing is published — a version the resolver moved, or an index that now
/// serves other bytes under that name, is not what was checked.
pub fn check_locked_wheels(lock: &Lock, pins: &[(&str, &PackagePin)]) -> Result<(), ManagerError> {
    for (key, pin) in pins {
        let locked = lock.packages.iter().find(|p| p.name == pin.name);
        let same = locked.is_some_and(|p| {
            p.version == pin.version
                && p.sha256
                    .as_deref()
                    .is_some_and(|s| s.eq_ignore_ascii_case(&pin.sha256))
        });
        if !same {
            let found = locked.map_or_else(
                || "does not install it".to_string(),
                |p| {
                    format!(
                        "installs {}=={} from {} (sha256 {})",
                        p.name,
                        p.version,
                        p.file.as_deref().unwrap_or("?"),
                        p.sha256.as_deref().unwrap_or("unknown")
                    )
                },
            );
            return Err(ManagerError::coded(
                Code::Conflict,
                format!(
                    "plugin `{key}` is the wheel {} (sha256 {}), validated when it was installed; the resolution {found}: nothing was changed — `hermes-plugins update {key}` validates the release the index serves now",
                    pin.filename, pin.sha256
                ),
            ));
        }
    }
    Ok(())
}
