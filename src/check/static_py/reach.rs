//! Which Python files of a package can run, and so are worth parsing: the files Hermes, the
//! agent or an installer start (the *entries*), and every file one of those could import.
//!
//! Entries, from what Hermes 0.19.0 and the agent do with a plugin directory:
//! - the root `__init__.py` (`register(ctx)`), or the entry-point module of a pip-distributed
//!   plugin;
//! - the root `cli.py` (a memory provider's `hermes <provider> …` commands,
//!   `plugins/memory/__init__.py` imports it);
//! - every file under the root `dashboard/` (the web dashboard imports the file its
//!   `manifest.json` names as `api`, which must be inside `dashboard/`);
//! - every file under a `skills/` directory (scripts the agent runs);
//! - the root `setup.py` (run by pip when the plugin is installed from source).
//!
//! "Could import" is over-approximated with words, not imports: a file is reached when its
//! module name (`tools` for `tools.py` and for `tools/__init__.py`) is a whole word anywhere in
//! a reached file — code, strings or comments — or in a file that tells
//! Hermes, the agent or an installer what to run: the manifests (`plugin.yaml`, `plugin.json`,
//! `mcp.json`, `hooks.json`), `pyproject.toml` and `setup.cfg` (entry points), and every file
//! under `skills/`, `dashboard/` and `hooks/`. A reached module's parent packages are reached
//! (importing `a.b.c` runs `a` and `a.b`). Every static import names its target this way, and
//! so do `importlib.import_module("…")`, `runpy` and `subprocess` of a literal path; an import
//! of a computed name is itself a `dynamic-code` finding of the security scan.
//!
//! What is not reached — test suites, benchmarks, maintainer scripts — is never imported by
//! any entry: the security scan's byte-level patterns still read every byte of it
//! (`security::scan`), and a file they match is parsed and analysed like a reached one, so a
//! finding there is reported with the precision of the analysis (a `curl … | sh` in a
//! docstring is not code).

use std::collections::HashMap;

/// Whether the package-relative path `rel` of a Python file is an entry (the entry-point
/// module of a pip-distributed plugin is one too; the caller knows it by its dotted name).
pub fn is_entry(rel: &str) -> bool {
    if matches!(rel, "__init__.py" | "cli.py" | "setup.py") {
        return true;
    }
    let parts: Vec<&str> = rel.split('/').collect();
    let dirs = &parts[..parts.len() - 1];
    dirs.first() == Some(&"dashboard") || dirs.contains(&"skills")
}

/// Whether the non-Python file `rel` names what Hermes, the agent or an installer runs, so
/// the module names in it are reached.
pub fn is_declaration(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let name = parts[parts.len() - 1];
    let dirs = &parts[..parts.len() - 1];
    matches!(
        name,
        "plugin.yaml"
            | "plugin.yml"
            | "plugin.json"
            | "mcp.json"
            | ".mcp.json"
            | "hooks.json"
            | "pyproject.toml"
            | "setup.cfg"
    ) || matches!(dirs.first(), Some(&"dashboard" | &"hooks"))
        || dirs.contains(&"skills")
}

/// The relative paths of the parent packages' `__init__.py` of `rel` (`a/b/c.py`:
/// `a/__init__.py`, `a/b/__init__.py`), whether they exist or not.
pub fn parent_inits(rel: &str) -> impl Iterator<Item = String> + '_ {
    rel.match_indices('/')
        .map(|(at, _)| format!("{}/__init__.py", &rel[..at]))
}

/// The module name a file is imported by: its stem, or its directory's name for an
/// `__init__.py` (`""` for the root one).
fn import_name(rel: &str) -> &str {
    let without = rel.strip_suffix(".py").unwrap_or(rel);
    match without.strip_suffix("/__init__") {
        Some(dir) => dir.rsplit('/').next().unwrap_or(dir),
        None if without == "__init__" => "",
        None => without.rsplit('/').next().unwrap_or(without),
    }
}

/// Whether a byte is part of a word ([`Names::named_in`]'s sense): an ASCII letter, digit or
/// `_` — a byte of an ASCII identifier.
pub(super) const fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// [`is_word_byte`] of every byte, looked up rather than compared in the text scan.
static WORD_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = is_word_byte(b as u8);
        b += 1;
    }
    table
};

/// The word bytes of a block of at most 64 bytes: bit `i` set when byte `i` is one.
fn word_mask(bytes: &[u8]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if let Ok(block) = <&[u8; 64]>::try_from(bytes) {
        // SAFETY: SSE2 is part of every x86_64 target (the baseline rustc compiles for).
        return unsafe { word_mask_sse2(block) };
    }
    word_mask_bytes(bytes)
}

/// [`word_mask`] a byte at a time, through [`WORD_BYTE`].
fn word_mask_bytes(bytes: &[u8]) -> u64 {
    let mut mask = 0u64;
    for (i, b) in bytes.iter().enumerate() {
        mask |= u64::from(WORD_BYTE[usize::from(*b)]) << i;
    }
    mask
}

/// [`word_mask`] of a full block, 16 bytes at a time with SSE2 (which every x86_64 has):
/// the byte-at-a-time loop was the larger part of the reach's cost on the real corpus
/// (callgrind).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn word_mask_sse2(block: &[u8; 64]) -> u64 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_sub_epi8,
    };
    /// Lanes of `x` at most `n`, unsigned: `min(x, n) == x`.
    #[target_feature(enable = "sse2")]
    fn at_most(x: __m128i, n: u8) -> __m128i {
        _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(n as i8)), x)
    }
    let mut mask = 0u64;
    for (k, lanes) in block.chunks_exact(16).enumerate() {
        // SAFETY: `lanes` is 16 readable bytes; the load has no alignment requirement.
        let v = unsafe { _mm_loadu_si128(lanes.as_ptr().cast::<__m128i>()) };
        // A letter of either case is `a`..=`z` once bit 5 is set; no other byte becomes one.
        let letter = at_most(
            _mm_sub_epi8(
                _mm_or_si128(v, _mm_set1_epi8(0x20)),
                _mm_set1_epi8(b'a' as i8),
            ),
            25,
        );
        let digit = at_most(_mm_sub_epi8(v, _mm_set1_epi8(b'0' as i8)), 9);
        let underscore = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'_' as i8));
        let word = _mm_or_si128(_mm_or_si128(letter, digit), underscore);
        let bits = _mm_movemask_epi8(word) as u32 as u16;
        mask |= u64::from(bits) << (16 * k);
    }
    mask
}

/// Whether `name` is one word.
fn is_word(name: &str) -> bool {
    name.bytes().all(is_word_byte)
}

/// Finds, in a text, the files whose module name is a whole word of it.
///
/// A whole word is a maximal run of word bytes, so the text is split into its runs and each
/// run is looked up among the names: only when some name has its first byte and its length,
/// and then by a binary search among the names of that first byte. Measured with callgrind
/// on the real corpus: the search by words took fewer instructions than the Aho-Corasick DFA
/// it replaced (which had to be built for each package), and the binary search fewer than a
/// SipHash table (a fast hash with a fixed seed is ruled out: the names are the plugin's own
/// file names, docs/dependencies.md, `rustc-hash`). Before either, an overlapping search
/// was a tenth of a cold `validate`.
pub struct Names {
    /// For each first byte, the distinct names starting with it, sorted by length and then
    /// bytes, each with its index into [`Names::files`]. A name is looked up in O(log n)
    /// comparisons whatever names a plugin chooses.
    by_first: Vec<Vec<(Box<[u8]>, usize)>>,
    /// For each first byte, bit `n` set when some name starting with it is `n` bytes long
    /// (bit 63: 63 bytes or more): most words are not looked up at all.
    lengths: Box<[u64; 256]>,
    /// The files of each name (indices into the list [`Names::new`] was given).
    files: Vec<Vec<usize>>,
    /// Files whose name is not one word (`my-tool.py`: no `import` statement names it, a
    /// computed or `importlib` import can): reached whatever the texts say.
    pub unnamed: Vec<usize>,
}

/// The bit in [`Names::lengths`] for a word of `len` bytes.
fn length_bit(len: usize) -> u64 {
    1 << len.min(63)
}

/// The order of [`Names::by_first`]: by length, then by bytes.
fn by_length(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

impl Names {
    /// The names of `rels` (package-relative paths of Python files).
    pub fn new<'a>(rels: impl IntoIterator<Item = &'a str>) -> Names {
        let mut ids: HashMap<&str, usize> = HashMap::new();
        let mut lengths = Box::new([0; 256]);
        let mut files: Vec<Vec<usize>> = Vec::new();
        let mut unnamed = Vec::new();
        for (i, rel) in rels.into_iter().enumerate() {
            let name = import_name(rel);
            if name.is_empty() {
                continue;
            }
            if !is_word(name) {
                unnamed.push(i);
                continue;
            }
            let id = *ids.entry(name).or_insert_with(|| {
                files.push(Vec::new());
                files.len() - 1
            });
            lengths[usize::from(name.as_bytes()[0])] |= length_bit(name.len());
            files[id].push(i);
        }
        let mut by_first: Vec<Vec<(Box<[u8]>, usize)>> = vec![Vec::new(); 256];
        for (name, id) in ids {
            by_first[usize::from(name.as_bytes()[0])].push((name.as_bytes().into(), id));
        }
        for names in &mut by_first {
            names.sort_by(|(a, _), (b, _)| by_length(a, b));
        }
        Names {
            by_first,
            lengths,
            files,
            unnamed,
        }
    }

    /// Calls `found` with every file whose name is a whole word of `text` (a word: a run of
    /// ASCII letters, digits and `_`; any other byte ends one, so a name next to a non-ASCII
    /// letter counts — more files reached, never fewer). Letter case counts, as it does for
    /// Python's imports.
    pub fn named_in(&self, text: &[u8], mut found: impl FnMut(usize)) {
        if self.files.is_empty() {
            return;
        }
        let mut seen = vec![false; self.files.len()];
        let mut look = |word: &[u8]| {
            let first = usize::from(word[0]);
            if self.lengths[first] & length_bit(word.len()) == 0 {
                return;
            }
            let names = &self.by_first[first];
            if let Ok(i) = names.binary_search_by(|(name, _)| by_length(name, word)) {
                let id = names[i].1;
                if !seen[id] {
                    seen[id] = true;
                    for file in &self.files[id] {
                        found(*file);
                    }
                }
            }
        };
        // The text is read 64 bytes at a time into a mask of its word bytes; the words start
        // and end where the mask changes. A branch on each byte (word or not?) was taken the
        // other way every few bytes: the loop cost more in time than in instructions.
        let mut open: Option<usize> = None;
        for (block, bytes) in text.chunks(64).enumerate() {
            let at = block * 64;
            let mask = word_mask(bytes);
            let mut edges = mask ^ ((mask << 1) | u64::from(open.is_some()));
            while edges != 0 {
                let i = edges.trailing_zeros() as usize;
                edges &= edges - 1;
                if mask >> i & 1 == 1 {
                    open = Some(at + i);
                } else if let Some(start) = open.take() {
                    look(&text[start..at + i]);
                }
            }
        }
        if let Some(start) = open {
            look(&text[start..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_what_hermes_and_the_agent_start() {
        for rel in [
            "__init__.py",
            "cli.py",
            "setup.py",
            "dashboard/plugin_api.py",
            "dashboard/api/routes.py",
            "skills/report/scripts/make.py",
            "vendor/skills/x/run.py",
        ] {
            assert!(is_entry(rel), "{rel}");
        }
        for rel in [
            "tools.py",
            "sub/__init__.py",
            "sub/cli.py",
            "tests/test_x.py",
            "skills.py",
            "a/dashboard/x.py",
        ] {
            assert!(!is_entry(rel), "{rel}");
        }
    }

    #[test]
    fn declarations_name_what_runs() {
        for rel in [
            "plugin.yaml",
            "pyproject.toml",
            ".mcp.json",
            "skills/x/SKILL.md",
            "hooks/run.sh",
            "dashboard/manifest.json",
        ] {
            assert!(is_declaration(rel), "{rel}");
        }
        for rel in ["README.md", ".github/workflows/ci.yml", "docs/usage.md"] {
            assert!(!is_declaration(rel), "{rel}");
        }
    }

    #[test]
    fn parents_and_names() {
        assert_eq!(
            parent_inits("a/b/c.py").collect::<Vec<_>>(),
            ["a/__init__.py", "a/b/__init__.py"]
        );
        assert_eq!(parent_inits("c.py").count(), 0);
        assert_eq!(import_name("__init__.py"), "");
        assert_eq!(import_name("tools.py"), "tools");
        assert_eq!(import_name("a/node/__init__.py"), "node");
        assert_eq!(import_name("a/node/client.py"), "client");
    }

    /// Whole words only, in the same letter case, each file once; a name inside a longer word
    /// (`tools` in `toolset`, `xtools`) is not a mention.
    #[test]
    fn names_are_whole_words() {
        let rels = [
            "tools.py",
            "node/__init__.py",
            "node/client.py",
            "x.py",
            "__init__.py",
        ];
        let names = Names::new(rels);
        let found = |text: &str| {
            let mut out = Vec::new();
            names.named_in(text.as_bytes(), |f| out.push(rels[f]));
            out.sort_unstable();
            out
        };
        assert_eq!(
            found("from .node.client import C  # toolset xtools\nx=1"),
            ["node/__init__.py", "node/client.py", "x.py"]
        );
        assert_eq!(found("import TOOLS"), Vec::<&str>::new());
        assert_eq!(found("toolset, x_y, tools_"), Vec::<&str>::new());
        assert_eq!(found("é tools é"), ["tools.py"]);
        // A longer name failing the word test does not hide a shorter whole word after it.
        let rels = ["tool.py", "tools.py", "set.py", "my-tool.py"];
        let names = Names::new(rels);
        let mut out = Vec::new();
        names.named_in(b"toolsetx tool,set", |f| out.push(rels[f]));
        out.sort_unstable();
        assert_eq!(out, ["set.py", "tool.py"]);
        assert_eq!(names.unnamed, [3]);
    }

    /// The lookup (first byte and length, then a binary search) against the plain reading:
    /// split the text at every non-word byte and keep the pieces that are a name. Names share
    /// first bytes and lengths, as a package's do (`a`, `ab`, `abc`, `aa`, `ba`, …).
    #[test]
    fn a_block_s_word_bytes_are_the_same_read_at_once() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut blocks: Vec<[u8; 64]> = (0..=255u8)
            .collect::<Vec<u8>>()
            .chunks(64)
            .map(|c| c.try_into().unwrap())
            .collect();
        for _ in 0..1_000 {
            blocks.push(std::array::from_fn(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            }));
        }
        for block in &blocks {
            assert_eq!(word_mask(block), word_mask_bytes(block), "{block:?}");
        }
    }

    #[test]
    fn finds_what_splitting_into_words_finds() {
        let alphabet = [b'a', b'b', b'_', b'1', b' ', b'.', b'\n', 0xc3, 0xa9];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut rels = Vec::new();
        for len in 1..=4 {
            for _ in 0..6 {
                let name: String = (0..len)
                    .map(|i| ['a', 'b', '_', '1'][next(if i == 0 { 3 } else { 4 })])
                    .collect();
                rels.push(format!("{name}.py"));
            }
        }
        rels.sort();
        rels.dedup();
        let names = Names::new(rels.iter().map(String::as_str));
        let name = import_name(&rels[0]);
        // Words across and at the ends of the 64-byte blocks `named_in` reads.
        let mut texts: Vec<Vec<u8>> = Vec::new();
        for pad in [0, 1, 62, 63, 64, 65, 127, 128] {
            texts.push(format!("{}{name}", " ".repeat(pad)).into_bytes());
            texts.push(format!("{} {name} ", "_".repeat(pad)).into_bytes());
            texts.push(format!("{}{name}", "b".repeat(pad)).into_bytes());
        }
        for _ in 0..2_000 {
            texts.push(
                (0..next(300))
                    .map(|_| alphabet[next(alphabet.len())])
                    .collect(),
            );
        }
        for text in texts {
            let mut found = Vec::new();
            names.named_in(&text, |f| found.push(f));
            found.sort_unstable();
            let words: std::collections::HashSet<&[u8]> =
                text.split(|b| !is_word_byte(*b)).collect();
            let expected: Vec<usize> = (0..rels.len())
                .filter(|i| words.contains(import_name(&rels[*i]).as_bytes()))
                .collect();
            assert_eq!(found, expected, "{:?}", String::from_utf8_lossy(&text));
        }
    }
}
