//! Which generations exist and which one `current` points to: read-only queries of
//! `pm/generations` and `pm/current`, shared by the writers (publish, journal recovery, gc)
//! and the readers (lease, list, env).

use crate::home::Layout;

/// The generation `current` points to, if any.
pub fn current_number(layout: &Layout) -> Option<u64> {
    let target = pointer(&layout.current())?;
    target.file_name()?.to_str()?.parse().ok()
}

/// What `current` holds: `generations/<N>`, the target of the symbolic link on Unix; on
/// Windows, where a symbolic link needs a privilege and a junction cannot be replaced
/// atomically, the one line of the small file `current` (docs/generations.md).
fn pointer(current: &std::path::Path) -> Option<std::path::PathBuf> {
    #[cfg(unix)]
    {
        std::fs::read_link(current).ok()
    }
    #[cfg(windows)]
    {
        let text = crate::files::read_regular_text(current, 4096).ok()??;
        Some(std::path::PathBuf::from(text.trim_end()))
    }
}

/// Published generation numbers, ascending.
pub fn numbers(layout: &Layout) -> Vec<u64> {
    let mut out: Vec<u64> = std::fs::read_dir(layout.generations())
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    out.sort_unstable();
    out
}
