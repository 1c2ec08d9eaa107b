//! VAL-19: no file or symlink of the package resolves outside the package root.

use crate::diag::{CheckId, Diagnostic};
use crate::located::Pos;
use crate::pkgfs::{Kind, PackageRoot, ReadError};

/// Walks the package (without following symlinks; see [`crate::pkgfs::tree`]) and reports
/// symlinks that escape the root, loop, or dangle, special files that cannot be part of a
/// package, and any part of the tree that could not be examined (an error: what was not
/// seen cannot be called contained).
pub fn check(root: &PackageRoot, out: &mut Vec<Diagnostic>) {
    let tree = root.tree();
    for u in &tree.unexamined {
        out.push(
            Diagnostic::error(
                CheckId::Paths,
                &u.rel,
                Pos::START,
                format!("`{}` was not examined: {}", u.rel, u.reason),
            )
            .hint("Make every file of the package readable, keep paths short, and ship only what the plugin needs."),
        );
    }
    for entry in &tree.entries {
        let rel = entry.rel.as_str();
        if entry.kind == Kind::Symlink {
            let target = std::fs::read_link(&entry.path)
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            match root.resolve(rel) {
                Ok(_) => {}
                Err(ReadError::Escapes { .. }) => out.push(
                    Diagnostic::error(
                        CheckId::Paths,
                        rel,
                        Pos::START,
                        format!("symlink `{rel}` resolves outside the package root"),
                    )
                    .value(&target)
                    .hint(
                        "Replace the symlink with the file itself, or point it inside the package.",
                    ),
                ),
                Err(ReadError::Loop) => out.push(
                    Diagnostic::error(
                        CheckId::Paths,
                        rel,
                        Pos::START,
                        format!("symlink `{rel}` is part of a symlink loop"),
                    )
                    .value(&target),
                ),
                Err(ReadError::Missing) => out.push(
                    Diagnostic::warning(
                        CheckId::Paths,
                        rel,
                        Pos::START,
                        format!("symlink `{rel}` points to nothing"),
                    )
                    .value(&target),
                ),
                Err(e) => out.push(
                    Diagnostic::error(
                        CheckId::Paths,
                        rel,
                        Pos::START,
                        format!("symlink `{rel}` {e}"),
                    )
                    .value(&target),
                ),
            }
        } else if entry.kind == Kind::Special {
            out.push(
                Diagnostic::error(CheckId::Paths, rel, Pos::START, format!("`{rel}` is a special file (FIFO, socket or device), which a package cannot contain"))
                    .hint("Remove it."),
            );
        }
    }
}
