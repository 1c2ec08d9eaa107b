//! VAL-20 `self-updater` (catalog rule 3): JavaScript/TypeScript that downloads its own update
//! (`releases/latest`, `raw.githubusercontent.com`) and writes files. A catalog entry pins a
//! reviewed commit; code that replaces itself bypasses that review.

use crate::located::Pos;
use crate::pkgfs::PackageRoot;

/// One self-updater.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelfUpdater {
    pub file: String,
    /// Line of the download URL.
    pub pos: Pos,
    /// The URL marker found.
    pub source: String,
    /// The write call found.
    pub writer: String,
}

const EXTENSIONS: &[&str] = &["js", "mjs", "cjs", "ts", "mts", "cts", "jsx", "tsx"];
const SOURCES: &[&str] = &["releases/latest", "raw.githubusercontent.com"];
const WRITERS: &[&str] = &[
    "writeFileSync",
    "writeFile",
    "createWriteStream",
    "appendFileSync",
    "copyFileSync",
    "Bun.write",
    "Deno.writeFile",
    "Deno.writeTextFile",
];

/// Finds self-updating JS/TS files in the package.
pub fn find(root: &PackageRoot) -> Vec<SelfUpdater> {
    let mut out = Vec::new();
    // Vendored dependencies (`node_modules/`) fetch and write files for their own reasons; the
    // rule is about the plugin's own code.
    for entry in root
        .tree()
        .entries
        .iter()
        .filter(|e| !e.rel.split('/').any(|s| s == "node_modules"))
    {
        let path = entry.path.as_path();
        if entry.kind != crate::pkgfs::Kind::File
            || !path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| EXTENSIONS.contains(&e))
        {
            continue;
        }
        let Ok(raw) = crate::pkgfs::read_limited_text(path, 4 * 1024 * 1024) else {
            continue;
        };
        let code = strip_comments(&raw);
        let Some(writer) = WRITERS.iter().find(|w| code.contains(*w)) else {
            continue;
        };
        for (i, line) in code.lines().enumerate() {
            if let Some(source) = SOURCES.iter().find(|s| line.contains(*s)) {
                out.push(SelfUpdater {
                    file: entry.rel.clone(),
                    pos: Pos::new(u32::try_from(i + 1).unwrap_or(u32::MAX), 1),
                    source: (*source).to_string(),
                    writer: (*writer).to_string(),
                });
                break;
            }
        }
    }
    out
}

/// Removes `//` and `/* */` comments outside string literals, keeping line breaks so line
/// numbers stay true.
pub fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' | '`' => {
                quote = Some(c);
                out.push(c);
            }
            '/' if chars.peek() == Some(&'/') => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = ' ';
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                    }
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_stripped_but_strings_kept() {
        let js =
            "const u = 'https://x//y'; // releases/latest\n/* raw.githubusercontent.com\n */ f()";
        let s = strip_comments(js);
        assert!(s.contains("'https://x//y'"));
        assert!(!s.contains("releases/latest"));
        assert!(!s.contains("raw.githubusercontent.com"));
        assert_eq!(s.lines().count(), 3);
    }
}
