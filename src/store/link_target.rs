//! Whether a symlink's target stays inside the tree it is copied with, judged lexically.

use std::path::{Component, Path};

/// Why a symlink target is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LinkProblem {
    /// The target is absolute.
    Absolute,
    /// The target's `..` climb above the root of the tree.
    Escapes,
    /// A `..` follows a name. Lexically fine, but if that name is itself a symlink the `..`
    /// climbs from wherever it leads (`d/up -> ..` plus `l -> d/up/..` reaches the root's
    /// parent), so only leading `..` are accepted.
    DotDotAfterName,
}

/// Checks the target of the symlink at `link` (relative to the tree root).
///
/// The directories above `link` are real directories of the tree (the copy never follows
/// symlinks), so leading `..` climb through them; each name after that either is a real entry
/// or a symlink that passed this same check, which keeps every resolution inside the tree.
pub(super) fn check(link: &Path, target: &Path) -> Result<(), LinkProblem> {
    // How many directories the link's own directory is below the root.
    let mut depth = link.components().count().saturating_sub(1);
    let mut after_name = false;
    let mut dot_dot_after_name = false;
    for component in target.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => return Err(LinkProblem::Absolute),
            Component::CurDir => {}
            Component::ParentDir => {
                dot_dot_after_name |= after_name;
                depth = depth.checked_sub(1).ok_or(LinkProblem::Escapes)?;
            }
            Component::Normal(_) => {
                after_name = true;
                depth += 1;
            }
        }
    }
    if dot_dot_after_name {
        return Err(LinkProblem::DotDotAfterName);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_str(link: &str, target: &str) -> Result<(), LinkProblem> {
        check(Path::new(link), Path::new(target))
    }

    #[test]
    fn targets_inside_the_tree_are_accepted() {
        assert_eq!(check_str("link", "file"), Ok(()));
        assert_eq!(check_str("link", "."), Ok(()));
        assert_eq!(check_str("link", "./a/b/"), Ok(()));
        assert_eq!(check_str("a/link", ".."), Ok(()));
        assert_eq!(check_str("a/b/link", "../../c/d"), Ok(()));
        assert_eq!(check_str("a/b/link", "./.././x"), Ok(()));
    }

    #[test]
    fn absolute_targets_are_refused() {
        assert_eq!(check_str("link", "/etc/passwd"), Err(LinkProblem::Absolute));
        assert_eq!(check_str("a/link", "/"), Err(LinkProblem::Absolute));
    }

    #[test]
    fn climbing_above_the_root_is_refused() {
        assert_eq!(check_str("link", ".."), Err(LinkProblem::Escapes));
        assert_eq!(check_str("a/link", "../.."), Err(LinkProblem::Escapes));
        assert_eq!(
            check_str("a/b/x", "../../../etc/passwd"),
            Err(LinkProblem::Escapes)
        );
        // Escaping wins over the milder complaint when both apply.
        assert_eq!(check_str("link", "a/../../x"), Err(LinkProblem::Escapes));
    }

    #[test]
    fn dot_dot_after_a_name_is_refused() {
        assert_eq!(check_str("l", "d/up/.."), Err(LinkProblem::DotDotAfterName));
        assert_eq!(
            check_str("a/l", "../b/../c"),
            Err(LinkProblem::DotDotAfterName)
        );
    }
}
