//! Which generations exist and which one `current` points to: read-only queries of
//! `pm/generations` and `pm/current`, shared by the writers (publish, journal recovery, gc)
//! and the readers (lease, list, env).

use crate::home::Layout;

/// The generation `current` points to, if any.
pub fn current_number(layout: &Layout) -> Option<u64> {
    let target = std::fs::read_link(layout.current()).ok()?;
    target.file_name()?.to_str()?.parse().ok()
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
