//! Shared by the targets that read directories: an input is a small tree of files.
//!
//! Format: records `#%% <path>\n<content>`; text before the first header is `default`'s
//! content. Paths are `/`-separated names of `[A-Za-z0-9._-]` (no `.`/`..`), at most four
//! deep; bad paths, and files whose place a directory already took, are skipped. `fuzz/run.sh`
//! writes seeds in this format from the fixtures' and the corpus's plugin directories.

#![allow(dead_code)]

use std::path::PathBuf;

/// Marks the start of a record.
pub const HEADER: &str = "#%% ";

/// The files of one input, in order, each with its text.
pub struct Tree {
    /// The directory they were written to (emptied at every input).
    pub dir: PathBuf,
    /// `(path, text)` of every file written.
    pub files: Vec<(String, String)>,
}

impl Tree {
    /// The text of `path`, if this input wrote it.
    pub fn text(&self, path: &str) -> Option<&str> {
        self.files
            .iter()
            .rev()
            .find(|(p, _)| p == path)
            .map(|(_, t)| t.as_str())
    }
}

fn good_path(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    parts.len() <= 4
        && parts.iter().all(|p| {
            !p.is_empty()
                && *p != "."
                && *p != ".."
                && p.len() <= 64
                && p
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        })
}

/// Writes `input` as a tree under a scratch directory of this process (emptied first).
pub fn write(input: &str, default: &str) -> Tree {
    let dir = std::env::temp_dir().join(format!("hermes-plugins-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let mut records: Vec<(String, String)> = Vec::new();
    let mut rest = input;
    if !rest.starts_with(HEADER) {
        let end = rest.find(&format!("\n{HEADER}")).map_or(rest.len(), |i| i + 1);
        records.push((default.to_string(), rest[..end].to_string()));
        rest = &rest[end..];
    }
    while let Some(body) = rest.strip_prefix(HEADER) {
        let (path, after) = body.split_once('\n').unwrap_or((body, ""));
        let end = after.find(&format!("\n{HEADER}")).map_or(after.len(), |i| i + 1);
        records.push((path.trim().to_string(), after[..end].to_string()));
        rest = &after[end..];
    }
    let mut files = Vec::new();
    for (path, text) in records.into_iter().take(32) {
        if !good_path(&path) {
            continue;
        }
        let target = dir.join(&path);
        let parent_ok = target
            .parent()
            .is_some_and(|p| std::fs::create_dir_all(p).is_ok());
        if parent_ok && !target.is_dir() && std::fs::write(&target, &text).is_ok() {
            files.push((path, text));
        }
    }
    Tree { dir, files }
}
