//! VAL-19: no file or symlink of the package resolves outside the package root.

use walkdir::WalkDir;

use crate::diag::{CheckId, Diagnostic};
use crate::located::Pos;
use crate::pkgfs::{PackageRoot, ReadError};

/// How many entries are examined before giving up (a hostile tree must not hang validation).
const MAX_ENTRIES: usize = 50_000;
/// How deep the walk goes.
const MAX_DEPTH: usize = 32;

/// Walks the package (without following symlinks) and reports symlinks that escape the root,
/// loop, or dangle, and special files that cannot be part of a package.
pub fn check(root: &PackageRoot, out: &mut Vec<Diagnostic>) {
    let walker = WalkDir::new(root.path())
        .follow_links(false)
        .max_depth(MAX_DEPTH)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || e.file_name() != ".git");
    for (count, entry) in walker.enumerate() {
        if count >= MAX_ENTRIES {
            out.push(Diagnostic::warning(
                CheckId::Paths,
                ".",
                Pos::START,
                format!(
                    "the package has more than {MAX_ENTRIES} entries; the rest were not examined"
                ),
            ));
            return;
        }
        let Ok(entry) = entry else { continue };
        let rel = root.relative(entry.path());
        let ft = entry.file_type();
        if ft.is_symlink() {
            let target = std::fs::read_link(entry.path())
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            match root.resolve(&rel) {
                Ok(_) => {}
                Err(ReadError::Escapes { .. }) => out.push(
                    Diagnostic::error(
                        CheckId::Paths,
                        &rel,
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
                        &rel,
                        Pos::START,
                        format!("symlink `{rel}` is part of a symlink loop"),
                    )
                    .value(&target),
                ),
                Err(ReadError::Missing) => out.push(
                    Diagnostic::warning(
                        CheckId::Paths,
                        &rel,
                        Pos::START,
                        format!("symlink `{rel}` points to nothing"),
                    )
                    .value(&target),
                ),
                Err(e) => out.push(
                    Diagnostic::error(
                        CheckId::Paths,
                        &rel,
                        Pos::START,
                        format!("symlink `{rel}` {e}"),
                    )
                    .value(&target),
                ),
            }
        } else if !ft.is_file() && !ft.is_dir() {
            out.push(
                Diagnostic::error(CheckId::Paths, &rel, Pos::START, format!("`{rel}` is a special file (FIFO, socket or device), which a package cannot contain"))
                    .hint("Remove it."),
            );
        }
    }
}
