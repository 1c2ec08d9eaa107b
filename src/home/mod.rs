//! The Hermes home as the package manager sees it: where every file lives ([`Layout`]) and
//! what may name a path inside it (plugin keys, [`key`]). Low in the stack: everything that
//! builds a path under `<home>` asks this module.

pub mod key;
mod layout;

pub use key::{KeyError, check_key, check_name, is_key, join_key};
pub use layout::Layout;

/// Whether `name` is a profile Hermes knows: `default`, or `[a-z0-9][a-z0-9_-]{0,63}` (Hermes's
/// own rule; it lists no other directory under `profiles/`). A profile name becomes a path
/// component (`profiles/<name>/config.yaml`), so nothing else is accepted.
pub fn is_profile(name: &str) -> bool {
    name == "default"
        || (!name.is_empty()
            && name.len() <= 64
            && name
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-'))
}
