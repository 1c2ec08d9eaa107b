//! NAR serialisation of arbitrary trees (any byte names, nesting, empty and executable files,
//! symlinks to anything): the archive parses back — with a reader written here from the
//! format, independent of the writer — to exactly the tree on disk, entries in strictly
//! increasing byte order as Nix requires.
#![no_main]

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use hermes_plugins::store::nar::write_nar;
use libfuzzer_sys::fuzz_target;

/// A tree as the archive describes it.
#[derive(Debug, PartialEq, Eq)]
enum Node {
    File { executable: bool, contents: Vec<u8> },
    Symlink(Vec<u8>),
    Dir(BTreeMap<Vec<u8>, Node>),
}

/// Reads the archive format: strings are a little-endian u64 length, the bytes, zero padding
/// to a multiple of 8.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn bytes(&mut self) -> Vec<u8> {
        let len = u64::from_le_bytes(self.0[..8].try_into().unwrap()) as usize;
        let padded = len.div_ceil(8) * 8;
        let out = self.0[8..8 + len].to_vec();
        assert!(self.0[8 + len..8 + padded].iter().all(|&b| b == 0), "padding");
        self.0 = &self.0[8 + padded..];
        out
    }

    fn expect(&mut self, s: &str) {
        assert_eq!(self.bytes(), s.as_bytes(), "expected {s:?}");
    }

    fn node(&mut self) -> Node {
        self.expect("(");
        self.expect("type");
        let kind = self.bytes();
        let node = match kind.as_slice() {
            b"regular" => {
                let mut tag = self.bytes();
                let executable = tag == b"executable";
                if executable {
                    self.expect("");
                    tag = self.bytes();
                }
                assert_eq!(tag, b"contents");
                let contents = self.bytes();
                Node::File { executable, contents }
            }
            b"symlink" => {
                self.expect("target");
                Node::Symlink(self.bytes())
            }
            b"directory" => {
                let mut entries = BTreeMap::new();
                let mut last: Option<Vec<u8>> = None;
                loop {
                    let save = self.0;
                    if self.bytes() != b"entry" {
                        self.0 = save;
                        break;
                    }
                    self.expect("(");
                    self.expect("name");
                    let name = self.bytes();
                    assert!(last.as_ref().is_none_or(|l| *l < name), "entries out of order");
                    assert!(!name.is_empty() && name != b"." && name != b".." && !name.contains(&b'/'));
                    self.expect("node");
                    let child = self.node();
                    self.expect(")");
                    last = Some(name.clone());
                    entries.insert(name, child);
                }
                Node::Dir(entries)
            }
            other => panic!("unknown type {other:?}"),
        };
        self.expect(")");
        node
    }
}

/// The tree on disk, read with the standard library.
fn on_disk(path: &Path) -> Node {
    let meta = std::fs::symlink_metadata(path).unwrap();
    if meta.file_type().is_symlink() {
        Node::Symlink(std::fs::read_link(path).unwrap().as_os_str().as_bytes().to_vec())
    } else if meta.is_dir() {
        let mut entries = BTreeMap::new();
        for e in std::fs::read_dir(path).unwrap() {
            let e = e.unwrap();
            entries.insert(e.file_name().as_bytes().to_vec(), on_disk(&e.path()));
        }
        Node::Dir(entries)
    } else {
        Node::File {
            executable: meta.permissions().mode() & 0o100 != 0,
            contents: std::fs::read(path).unwrap(),
        }
    }
}

/// Builds a tree from the input: each step is a kind byte, a name (up to a NUL; no `/`), and
/// for files and symlinks the contents or target (up to the next NUL). Kind bit 3 descends
/// into the new directory; bit 4 climbs out of the current one first.
fn build(root: &Path, mut data: &[u8]) {
    let mut dir = root.to_path_buf();
    let mut depth = 0;
    let mut count = 0;
    while let Some((&kind, rest)) = data.split_first() {
        if count == 64 {
            break;
        }
        count += 1;
        let (name, rest) = split_nul(rest);
        let (body, rest) = split_nul(rest);
        data = rest;
        if kind & 0x10 != 0 && depth > 0 {
            dir.pop();
            depth -= 1;
        }
        let name: Vec<u8> = name.iter().copied().filter(|&b| b != b'/').take(64).collect();
        if name.is_empty() || name == b"." || name == b".." {
            continue;
        }
        let path = dir.join(OsStr::from_bytes(&name));
        if std::fs::symlink_metadata(&path).is_ok() {
            continue;
        }
        match kind % 4 {
            0 | 1 => {
                std::fs::write(&path, body).unwrap();
                let mode = if kind % 4 == 1 { 0o755 } else { 0o644 };
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            }
            2 => {
                if !body.is_empty() {
                    std::os::unix::fs::symlink(OsStr::from_bytes(body), &path).unwrap();
                }
            }
            _ => {
                std::fs::create_dir(&path).unwrap();
                if kind & 0x8 != 0 && depth < 8 {
                    dir = path;
                    depth += 1;
                }
            }
        }
    }
}

fn split_nul(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

fuzz_target!(|data: &[u8]| {
    let scratch = std::env::temp_dir().join(format!("hermes-plugins-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let root = scratch.join("tree");
    std::fs::create_dir_all(&root).unwrap();
    build(&root, data);
    let mut nar = Vec::new();
    write_nar(&root, &mut nar).expect("a tree of files, directories and symlinks serialises");
    let mut reader = Reader(&nar);
    reader.expect("nix-archive-1");
    let parsed = reader.node();
    assert!(reader.0.is_empty(), "trailing bytes");
    assert_eq!(parsed, on_disk(&root));
});
