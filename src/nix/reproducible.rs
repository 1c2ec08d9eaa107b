//! What makes an offline build's venv depend on when it was built, taken out: uv writes
//! `<name>.dist-info/uv_cache.json` into every installed distribution with the time its cache
//! entry was made (for deciding later whether to reinstall; nothing reads it in a generation,
//! which is never modified). Each is rewritten with the build's one timestamp
//! (`SOURCE_DATE_EPOCH`, else the epoch) and its line in the distribution's `RECORD` updated
//! to the new sha256 and size, so the RECORD stays true.

use std::path::Path;

use base64::Engine as _;
use sha2::{Digest, Sha256};

/// The install record uv adds to a distribution.
const UV_CACHE_INFO: &str = "uv_cache.json";

/// Rewrites every `*.dist-info/uv_cache.json` under `site_packages` with timestamp `epoch`
/// (seconds) and fixes its `RECORD` line. Returns how many were rewritten.
pub fn normalize_install_records(site_packages: &Path, epoch: i64) -> std::io::Result<usize> {
    let mut rewritten = 0;
    let mut entries: Vec<_> = std::fs::read_dir(site_packages)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".dist-info") || !entry.file_type()?.is_dir() {
            continue;
        }
        let info = entry.path().join(UV_CACHE_INFO);
        let Some(text) = crate::files::read_regular(&info, crate::files::STATE_LIMIT)? else {
            continue;
        };
        let normalized = with_timestamp(&text, epoch).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: {e}", info.display()),
            )
        })?;
        std::fs::write(&info, &normalized)?;
        update_record(&entry.path().join("RECORD"), &name, normalized.as_bytes())?;
        rewritten += 1;
    }
    Ok(rewritten)
}

/// uv's cache info with its `timestamp` set to `epoch` seconds and no nanoseconds; every
/// other member kept as it was.
fn with_timestamp(text: &[u8], epoch: i64) -> Result<String, serde_json::Error> {
    let mut value: serde_json::Value = serde_json::from_slice(text)?;
    if let Some(object) = value.as_object_mut()
        && object.contains_key("timestamp")
    {
        object.insert(
            "timestamp".into(),
            serde_json::json!({ "secs_since_epoch": epoch, "nanos_since_epoch": 0 }),
        );
    }
    serde_json::to_string(&value)
}

/// Replaces the `RECORD` line of `<dist_info>/uv_cache.json` with the new content's hash and
/// size (the wheel RECORD format: `path,sha256=<urlsafe base64, no padding>,size`).
fn update_record(record: &Path, dist_info: &str, content: &[u8]) -> std::io::Result<()> {
    let Some(text) = crate::files::read_regular_text(record, crate::files::STATE_LIMIT)? else {
        return Ok(());
    };
    let path = format!("{dist_info}/{UV_CACHE_INFO}");
    let digest = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(content));
    let line = format!("{path},sha256={digest},{}", content.len());
    let mut out = String::with_capacity(text.len());
    for l in text.lines() {
        if l.split(',').next() == Some(path.as_str()) {
            out.push_str(&line);
        } else {
            out.push_str(l);
        }
        out.push('\n');
    }
    std::fs::write(record, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_and_records_are_rewritten_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let dist = tmp.path().join("weatherlib-1.0.0.dist-info");
        std::fs::create_dir_all(&dist).unwrap();
        std::fs::write(
            dist.join(UV_CACHE_INFO),
            r#"{"timestamp":{"secs_since_epoch":1796159454,"nanos_since_epoch":292101616},"commit":null,"tags":null,"env":{},"directories":{}}"#,
        )
        .unwrap();
        std::fs::write(
            dist.join("RECORD"),
            "weatherlib/__init__.py,sha256=abc,10\nweatherlib-1.0.0.dist-info/uv_cache.json,sha256=old,127\nweatherlib-1.0.0.dist-info/RECORD,,\n",
        )
        .unwrap();
        // A distribution without uv's record is left alone.
        std::fs::create_dir_all(tmp.path().join("other-1.0.dist-info")).unwrap();
        assert_eq!(
            normalize_install_records(tmp.path(), 1_700_000_000).unwrap(),
            1
        );
        let info = std::fs::read_to_string(dist.join(UV_CACHE_INFO)).unwrap();
        assert_eq!(
            info,
            r#"{"timestamp":{"secs_since_epoch":1700000000,"nanos_since_epoch":0},"commit":null,"tags":null,"env":{},"directories":{}}"#
        );
        let record = std::fs::read_to_string(dist.join("RECORD")).unwrap();
        let digest = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(Sha256::digest(info.as_bytes()));
        assert_eq!(
            record,
            format!(
                "weatherlib/__init__.py,sha256=abc,10\nweatherlib-1.0.0.dist-info/uv_cache.json,sha256={digest},{}\nweatherlib-1.0.0.dist-info/RECORD,,\n",
                info.len()
            )
        );
        // Idempotent.
        normalize_install_records(tmp.path(), 1_700_000_000).unwrap();
        assert_eq!(
            std::fs::read_to_string(dist.join("RECORD")).unwrap(),
            record
        );
    }
}
