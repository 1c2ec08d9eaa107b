//! Wheels checked before anything unpacks them. Every wheel of a lock is downloaded into
//! `pm/cache/wheels/<sha256>/<file>` through uv's client (its TLS, proxy and authentication
//! settings), or read where it is in a local `--find-links` directory, and admitted only
//! after:
//!
//! - its sha256 equals the lock's (when the index gave one);
//! - its size and its entry count are within [`WheelLimits`], and the bytes it unpacks to —
//!   counted while decompressing, not taken from its headers — stay under the limit and under
//!   [`WheelLimits::max_ratio`] times its size (a decompression bomb is refused before a byte of
//!   it reaches the disk);
//! - no entry name is absolute or climbs with `..`;
//! - its `*.dist-info/RECORD` lists every file with the sha256 and size the file really has,
//!   and lists nothing that is missing.
//!
//! uv then installs from the directories holding the admitted files (as `--find-links`, no
//! index), so it unpacks only what was checked. A cached wheel was checked before it was
//! renamed into the cache and is not checked again.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use sha2::{Digest, Sha256};

use crate::resolve::engine::{EngineError, Session};

/// Bounds on one wheel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WheelLimits {
    /// Largest unpacked size, in bytes (default 4 GiB), and largest download.
    pub max_unpacked: u64,
    /// Largest ratio of unpacked to packed bytes for wheels that unpack to more than
    /// [`RATIO_FLOOR`] (default 100: ordinary wheels compress 2–10×, a bomb 1000×).
    pub max_ratio: u64,
    /// Most entries in the archive (default 100 000).
    pub max_entries: usize,
}

/// Wheels that unpack to less than this are never refused for their ratio.
pub const RATIO_FLOOR: u64 = 64 * 1024 * 1024;

impl Default for WheelLimits {
    fn default() -> Self {
        WheelLimits {
            max_unpacked: 4 * 1024 * 1024 * 1024,
            max_ratio: 100,
            max_entries: 100_000,
        }
    }
}

/// One wheel a lock asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelPin {
    /// `name==version`, for messages.
    pub label: String,
    /// The wheel's file name.
    pub filename: String,
    /// Where it is (`https://…`, `file://…`).
    pub url: String,
    /// The lock's sha256 (hex), when known.
    pub sha256: Option<String>,
}

/// Why a wheel was refused.
#[derive(Debug, thiserror::Error)]
#[error("{label} ({filename}): {message}")]
pub struct WheelError {
    /// `name==version`.
    pub label: String,
    /// The file name.
    pub filename: String,
    /// What is wrong.
    pub message: String,
}

/// One line of a wheel's `RECORD`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordEntry {
    /// The path, relative to the wheel root (to `site-packages` once installed).
    pub path: String,
    /// `sha256=<urlsafe base64, no padding>` digest, when given.
    pub sha256: Option<String>,
    /// Size in bytes, when given.
    pub size: Option<u64>,
}

/// Parses a `RECORD` (CSV: path, hash, size; paths with commas are quoted).
pub fn parse_record(text: &str) -> Result<Vec<RecordEntry>, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut out = Vec::new();
    for (i, row) in reader.records().enumerate() {
        let row = row.map_err(|e| format!("RECORD line {}: {e}", i + 1))?;
        let Some(path) = row.get(0).filter(|p| !p.is_empty()) else {
            continue;
        };
        let sha256 = match row.get(1).filter(|h| !h.is_empty()) {
            None => None,
            Some(h) => match h.split_once('=') {
                Some(("sha256", digest)) => Some(digest.to_string()),
                Some((algorithm, _)) => {
                    return Err(format!(
                        "RECORD line {} uses {algorithm}; wheels record sha256",
                        i + 1
                    ));
                }
                None => return Err(format!("RECORD line {}: malformed hash `{h}`", i + 1)),
            },
        };
        let size = match row.get(2).filter(|s| !s.is_empty()) {
            None => None,
            Some(s) => Some(
                s.parse::<u64>()
                    .map_err(|_| format!("RECORD line {}: malformed size `{s}`", i + 1))?,
            ),
        };
        out.push(RecordEntry {
            path: path.to_string(),
            sha256,
            size,
        });
    }
    Ok(out)
}

/// The RECORD digest form of a sha256: url-safe base64 without padding.
pub fn record_digest(digest: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest)
}

fn safe_entry_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('/')
        && !name.contains('\\')
        && !name.contains('\0')
        && name.split('/').all(|seg| seg != "..")
}

/// Checks a wheel file: structure, bounds, and every file against its `RECORD` (see the
/// module documentation). Decompresses into a hasher only; nothing is written.
pub fn inspect(path: &Path, limits: &WheelLimits) -> Result<(), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open it: {e}"))?;
    let packed = file
        .metadata()
        .map_err(|e| format!("cannot read its size: {e}"))?
        .len();
    let mut archive =
        zip::ZipArchive::new(file).map_err(|e| format!("it is not a valid zip archive: {e}"))?;
    if archive.len() > limits.max_entries {
        return Err(format!(
            "it has {} entries; the limit is {}",
            archive.len(),
            limits.max_entries
        ));
    }
    // Every name first: unsafe names and the RECORD, before decompressing anything.
    let mut record_at = None;
    for i in 0..archive.len() {
        let entry = archive
            .by_index_raw(i)
            .map_err(|e| format!("entry {i} is damaged: {e}"))?;
        let name = entry.name().to_string();
        if !safe_entry_name(&name) {
            return Err(format!(
                "entry `{}` would be written outside the install directory",
                crate::text::escape(&name)
            ));
        }
        let parts: Vec<&str> = name.split('/').collect();
        if parts.len() == 2 && parts[0].ends_with(".dist-info") && parts[1] == "RECORD" {
            if record_at.is_some() {
                return Err("it has more than one .dist-info/RECORD".into());
            }
            record_at = Some(i);
        }
    }
    let Some(record_at) = record_at else {
        return Err("it has no .dist-info/RECORD".into());
    };
    let mut record_text = String::new();
    archive
        .by_index(record_at)
        .map_err(|e| format!("its RECORD is damaged: {e}"))?
        .take(64 * 1024 * 1024)
        .read_to_string(&mut record_text)
        .map_err(|e| format!("its RECORD cannot be read: {e}"))?;
    let record_name = archive
        .by_index_raw(record_at)
        .map(|e| e.name().to_string())
        .unwrap_or_default();
    let mut recorded: HashMap<String, RecordEntry> = parse_record(&record_text)?
        .into_iter()
        .map(|e| (e.path.clone(), e))
        .collect();
    let mut unpacked: u64 = 0;
    let mut buffer = vec![0u8; 64 * 1024];
    for i in 0..archive.len() {
        let mut entry = archive
            .by_index(i)
            .map_err(|e| format!("entry {i} is damaged: {e}"))?;
        if entry.is_dir() {
            continue;
        }
        let name = entry.name().to_string();
        let mut hasher = Sha256::new();
        let mut size: u64 = 0;
        loop {
            let n = entry
                .read(&mut buffer)
                .map_err(|e| format!("`{}` cannot be unpacked: {e}", crate::text::escape(&name)))?;
            if n == 0 {
                break;
            }
            size += n as u64;
            unpacked += n as u64;
            if unpacked > limits.max_unpacked {
                return Err(format!(
                    "it unpacks to more than {} bytes (the limit; HERMES_PLUGINS_MAX_WHEEL_SIZE raises it)",
                    limits.max_unpacked
                ));
            }
            if unpacked > RATIO_FLOOR && unpacked / packed.max(1) > limits.max_ratio {
                return Err(format!(
                    "it unpacks to more than {} times its size ({packed} bytes): a decompression bomb",
                    limits.max_ratio
                ));
            }
            hasher.update(&buffer[..n]);
        }
        let is_signature = name == record_name
            || name.ends_with(".dist-info/RECORD.jws")
            || name.ends_with(".dist-info/RECORD.p7s");
        match recorded.remove(&name) {
            None if is_signature => {}
            None => {
                return Err(format!(
                    "`{}` is not listed in its RECORD",
                    crate::text::escape(&name)
                ));
            }
            Some(line) => {
                if is_signature {
                    continue;
                }
                let Some(expected) = line.sha256 else {
                    return Err(format!(
                        "its RECORD gives no hash for `{}`",
                        crate::text::escape(&name)
                    ));
                };
                if record_digest(&hasher.finalize()) != expected {
                    return Err(format!(
                        "`{}` does not match the sha256 its RECORD gives",
                        crate::text::escape(&name)
                    ));
                }
                if line.size.is_some_and(|s| s != size) {
                    return Err(format!(
                        "`{}` is {size} bytes; its RECORD says {}",
                        crate::text::escape(&name),
                        line.size.unwrap_or_default()
                    ));
                }
            }
        }
    }
    if let Some(missing) = recorded.keys().find(|p| {
        // Files installed outside the wheel root (`../../bin/x`) and directories are not in it.
        !p.starts_with("..") && !p.ends_with('/')
    }) {
        return Err(format!(
            "its RECORD lists `{}`, which the wheel does not contain",
            crate::text::escape(missing)
        ));
    }
    Ok(())
}

use crate::hash::hex;

fn refuse(pin: &WheelPin, message: impl Into<String>) -> EngineError {
    EngineError::Other(
        WheelError {
            label: pin.label.clone(),
            filename: pin.filename.clone(),
            message: message.into(),
        }
        .to_string(),
    )
}

/// Where an admitted wheel is kept: `<cache>/<sha256>/<filename>`.
fn cached_path(cache: &Path, sha256: &str, filename: &str) -> PathBuf {
    cache.join(sha256).join(filename)
}

/// Whether a wheel file name is one plain file name (it becomes a path component).
fn plain_filename(name: &str) -> bool {
    name.ends_with(".whl")
        && !name.contains('/')
        && !name.contains('\\')
        && !name.starts_with('.')
        && !name.chars().any(char::is_control)
}

/// Fetches and admits every wheel (see the module documentation) and returns the
/// directories that hold them — the only `--find-links` sources of the installation that
/// follows. Downloaded wheels are kept in `cache/<sha256>/<file>` (one directory per wheel, so
/// its path, and uv's unpacked copy of it, stay the same from one generation to the next);
/// local wheels (`file://`, from `--find-links` directories) are checked where they are.
/// `session` is opened only when something must be downloaded.
pub async fn admit<F, Fut>(
    pins: &[WheelPin],
    cache: &Path,
    limits: &WheelLimits,
    session: F,
) -> Result<Vec<PathBuf>, EngineError>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<Session, EngineError>>,
{
    let mut session_once = Some(session);
    let mut opened: Option<Session> = None;
    let mut dirs: Vec<PathBuf> = Vec::new();
    for pin in pins {
        if !plain_filename(&pin.filename) {
            return Err(refuse(pin, "the lock names an invalid wheel file name"));
        }
        let dir = if pin.url.starts_with("file:") {
            admit_local(pin, limits).await?
        } else {
            if let Some(sha) = &pin.sha256
                && crate::files::open_regular(&cached_path(cache, sha, &pin.filename)).is_ok()
            {
                dirs.push(cache.join(sha));
                continue;
            }
            if opened.is_none()
                && let Some(open) = session_once.take()
            {
                opened = Some(open().await?);
            }
            let Some(s) = opened.as_ref() else {
                return Err(refuse(pin, "no client to download it with"));
            };
            admit_remote(s, pin, cache, limits).await?
        };
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    Ok(dirs)
}

/// Checks a local wheel in place; returns its directory.
async fn admit_local(pin: &WheelPin, limits: &WheelLimits) -> Result<PathBuf, EngineError> {
    let path = url::Url::parse(&pin.url)
        .ok()
        .and_then(|u| u.to_file_path().ok())
        .ok_or_else(|| refuse(pin, "its file URL is not a local path"))?;
    let digest = crate::hash::sha256_file_bounded(&path, limits.max_unpacked)
        .map_err(|e| refuse(pin, e.to_string()))?;
    check_digest(pin, &digest)?;
    inspect_blocking(pin, path.clone(), limits).await?;
    path.parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| refuse(pin, "it has no directory"))
}

/// Downloads a wheel into the cache, checks it, and returns its cache directory.
async fn admit_remote(
    session: &Session,
    pin: &WheelPin,
    cache: &Path,
    limits: &WheelLimits,
) -> Result<PathBuf, EngineError> {
    let cache_error = |e: std::io::Error| EngineError::Other(format!("{}: {e}", cache.display()));
    std::fs::create_dir_all(cache).map_err(cache_error)?;
    let tmp = tempfile::Builder::new()
        .prefix(".download-")
        .tempfile_in(cache)
        .map_err(cache_error)?;
    let digest = download(session, pin, tmp.path(), limits.max_unpacked).await?;
    check_digest(pin, &digest)?;
    inspect_blocking(pin, tmp.path().to_path_buf(), limits).await?;
    let sha = hex(&digest);
    let dir = cache.join(&sha);
    std::fs::create_dir_all(&dir).map_err(cache_error)?;
    let path = dir.join(&pin.filename);
    tmp.persist(&path)
        .map_err(|e| EngineError::Other(format!("{}: {}", path.display(), e.error)))?;
    Ok(dir)
}

fn check_digest(pin: &WheelPin, digest: &[u8]) -> Result<(), EngineError> {
    let actual = hex(digest);
    match &pin.sha256 {
        Some(expected) if !expected.eq_ignore_ascii_case(&actual) => Err(refuse(
            pin,
            format!(
                "its sha256 is {actual}; the lock says {expected} (fetched from {}; a truncated or altered file)",
                crate::text::redact_credentials(&pin.url)
            ),
        )),
        _ => Ok(()),
    }
}

async fn inspect_blocking(
    pin: &WheelPin,
    path: PathBuf,
    limits: &WheelLimits,
) -> Result<(), EngineError> {
    let limits = *limits;
    tokio::task::spawn_blocking(move || inspect(&path, &limits))
        .await
        .map_err(|e| EngineError::Other(e.to_string()))?
        .map_err(|m| refuse(pin, m))
}

/// Downloads a wheel through uv's client, at most `limit` bytes, returning its sha256.
async fn download(
    session: &Session,
    pin: &WheelPin,
    to: &Path,
    limit: u64,
) -> Result<Vec<u8>, EngineError> {
    let url = uv_redacted::DisplaySafeUrl::parse(&pin.url)
        .map_err(|e| refuse(pin, format!("invalid URL: {e}")))?;
    let network = |message: String| EngineError::Download {
        url: crate::text::redact_credentials(&pin.url).into_owned(),
        message,
        causes: Vec::new(),
    };
    let mut response = session
        .client
        .uncached_client(&url)
        .get(pin.url.as_str())
        .send()
        .await
        .map_err(|e| {
            let (message, causes) = crate::resolve::engine::explain(&e);
            EngineError::Download {
                url: crate::text::redact_credentials(&pin.url).into_owned(),
                message,
                causes,
            }
        })?;
    if !response.status().is_success() {
        return Err(network(format!(
            "the server answered HTTP {}",
            response.status()
        )));
    }
    let mut output = std::fs::File::create(to)
        .map_err(|e| EngineError::Other(format!("{}: {e}", to.display())))?;
    let mut hasher = Sha256::new();
    let mut total: u64 = 0;
    // A body that ends early (the connection closed before the announced length) fails
    // here; one that is merely short fails the sha256 check after.
    while let Some(chunk) = response.chunk().await.map_err(|e| {
        network(format!(
            "the transfer broke off after {total} bytes ({})",
            crate::resolve::engine::explain(&e).0
        ))
    })? {
        total += chunk.len() as u64;
        if total > limit {
            return Err(refuse(
                pin,
                format!("the download is larger than {limit} bytes"),
            ));
        }
        hasher.update(&chunk);
        output
            .write_all(&chunk)
            .map_err(|e| EngineError::Other(format!("{}: {e}", to.display())))?;
    }
    Ok(hasher.finalize().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use zip::write::SimpleFileOptions;

    fn wheel(path: &Path, files: &[(&str, &[u8])], record: Option<String>) {
        let file = std::fs::File::create(path).unwrap();
        let mut zip = zip::ZipWriter::new(file);
        let options =
            SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        let mut lines = String::new();
        for (name, data) in files {
            zip.start_file(*name, options).unwrap();
            zip.write_all(data).unwrap();
            lines.push_str(&format!(
                "{name},sha256={},{}\n",
                record_digest(&Sha256::digest(data)),
                data.len()
            ));
        }
        lines.push_str("demo-1.0.dist-info/RECORD,,\n");
        zip.start_file("demo-1.0.dist-info/RECORD", options)
            .unwrap();
        zip.write_all(record.unwrap_or(lines).as_bytes()).unwrap();
        zip.finish().unwrap();
    }

    #[test]
    fn an_honest_wheel_passes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("demo-1.0-py3-none-any.whl");
        wheel(
            &path,
            &[
                ("demo/__init__.py", b"x = 1\n"),
                ("demo-1.0.dist-info/METADATA", b"Name: demo\n"),
            ],
            None,
        );
        inspect(&path, &WheelLimits::default()).unwrap();
    }

    #[test]
    fn a_lying_record_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("demo-1.0-py3-none-any.whl");
        let record = format!(
            "demo/__init__.py,sha256={},6\ndemo-1.0.dist-info/RECORD,,\n",
            record_digest(&Sha256::digest(b"other\n"))
        );
        wheel(&path, &[("demo/__init__.py", b"x = 1\n")], Some(record));
        let e = inspect(&path, &WheelLimits::default()).unwrap_err();
        assert!(e.contains("does not match the sha256"), "{e}");
    }

    #[test]
    fn unlisted_and_missing_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.whl");
        let record = "demo-1.0.dist-info/RECORD,,\n".to_string();
        wheel(&path, &[("demo/evil.py", b"x")], Some(record));
        let e = inspect(&path, &WheelLimits::default()).unwrap_err();
        assert!(e.contains("not listed"), "{e}");
        let path = dir.path().join("b.whl");
        let record = "demo/gone.py,sha256=abc,3\ndemo-1.0.dist-info/RECORD,,\n".to_string();
        wheel(&path, &[], Some(record));
        let e = inspect(&path, &WheelLimits::default()).unwrap_err();
        assert!(e.contains("does not contain"), "{e}");
    }

    #[test]
    fn bombs_and_escapes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bomb.whl");
        let zeros = vec![0u8; 8 * 1024 * 1024];
        wheel(&path, &[("demo/zeros.bin", &zeros)], None);
        let limits = WheelLimits {
            max_unpacked: 4 * 1024 * 1024,
            ..WheelLimits::default()
        };
        let e = inspect(&path, &limits).unwrap_err();
        assert!(e.contains("unpacks to more than"), "{e}");
        let path = dir.path().join("slip.whl");
        wheel(&path, &[("../../etc/x", b"x")], None);
        let e = inspect(&path, &WheelLimits::default()).unwrap_err();
        assert!(e.contains("outside the install directory"), "{e}");
    }

    #[test]
    fn a_high_compression_ratio_is_a_bomb_even_under_the_size_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bomb.whl");
        let zeros = vec![0u8; (RATIO_FLOOR + 8 * 1024 * 1024) as usize];
        wheel(&path, &[("demo/zeros.bin", &zeros)], None);
        let e = inspect(&path, &WheelLimits::default()).unwrap_err();
        assert!(e.contains("decompression bomb"), "{e}");
    }

    #[test]
    fn record_csv_with_quotes() {
        let r = parse_record("\"a,b.py\",sha256=xyz,3\nc.py,,\n").unwrap();
        assert_eq!(r[0].path, "a,b.py");
        assert_eq!(r[0].sha256.as_deref(), Some("xyz"));
        assert_eq!(r[0].size, Some(3));
        assert_eq!(r[1].sha256, None);
        assert!(parse_record("a.py,md5=x,1\n").is_err());
    }
}
