//! Nix archive (NAR) serialisation of a file tree, and the hash encodings Nix prints for it.
//!
//! A NAR is a canonical byte stream for a tree: only names, file contents, the executable bit
//! and symlink targets go in (no timestamps, owners or other mode bits), and directory entries
//! are sorted by the bytes of their names. Its SHA-256 is what Nix calls the tree's "NAR hash",
//! so a store key here is the same string Nix would print for the tree (`nix hash path
//! --type sha256 --base32`).
//!
//! Every string in the stream is its length as a little-endian `u64`, the bytes, and zero
//! padding to a multiple of 8. The archive is `"nix-archive-1"` followed by the root node:
//!
//! ```text
//! node = "(" "type" ( "regular" ["executable" ""] "contents" <bytes>
//!                   | "symlink" "target" <target>
//!                   | "directory" { "entry" "(" "name" <name> "node" <node> ")" }* ) ")"
//! ```

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;

use crate::files::os::{self, special_kind};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};

/// The first string of every archive.
const MAGIC: &[u8] = b"nix-archive-1";

/// The alphabet of Nix's base32 (no `e`, `o`, `t`, `u`).
const NIX_BASE32: &[u8; 32] = b"0123456789abcdfghijklmnpqrsvwxyz";

/// The SRI prefix of a SHA-256 digest.
const SRI_SHA256: &str = "sha256-";

/// Writes the NAR serialisation of the tree at `path` (not following a symlink there) to `out`.
///
/// File contents are streamed, never held in memory. Fails on FIFOs, sockets and devices
/// (a NAR cannot represent them), and when a file changes size while it is being read. Errors
/// name the path they happened on.
pub fn write_nar<W: Write + ?Sized>(path: &Path, out: &mut W) -> io::Result<()> {
    write_str(out, MAGIC)?;
    write_node(path, out)
}

/// The SHA-256 of the NAR serialisation of the tree at `path` (its Nix "NAR hash").
pub fn nar_sha256(path: &Path) -> io::Result<[u8; 32]> {
    let mut hasher = HashWriter(Sha256::new());
    write_nar(path, &mut hasher)?;
    Ok(hasher.0.finalize().into())
}

/// The SRI form of a SHA-256 digest: `sha256-` and the digest in standard, padded base64.
pub fn sri(digest: &[u8; 32]) -> String {
    format!("{SRI_SHA256}{}", STANDARD.encode(digest))
}

/// The digest in an SRI `sha256-<base64>` string, if it is exactly that (canonical padded
/// base64 of 32 bytes).
pub fn parse_sri(sri: &str) -> Option<[u8; 32]> {
    let encoded = sri.strip_prefix(SRI_SHA256)?;
    STANDARD.decode(encoded).ok()?.try_into().ok()
}

/// `bytes` in Nix's base32: its alphabet, its (little-endian, last group first) bit order, and
/// `ceil(len * 8 / 5)` characters (52 for a SHA-256 digest).
pub fn nix_base32(bytes: &[u8]) -> String {
    let len = (bytes.len() * 8).div_ceil(5);
    (0..len)
        .rev()
        .map(|n| {
            let bit = n * 5;
            let (byte, shift) = (bit / 8, bit % 8);
            let mut value = u16::from(bytes[byte]) >> shift;
            if let Some(next) = bytes.get(byte + 1) {
                value |= u16::from(*next) << (8 - shift);
            }
            char::from(NIX_BASE32[usize::from(value & 0x1f)])
        })
        .collect()
}

/// Whether `s` could be a Nix base32 SHA-256 digest (52 characters of the alphabet).
pub fn is_nix_base32_sha256(s: &str) -> bool {
    s.len() == 52 && s.bytes().all(|b| NIX_BASE32.contains(&b))
}

/// Opens `path` for reading without following a symlink there and without blocking if it
/// turned into a FIFO since it was looked at; the caller checks what it got.
pub(super) fn open_no_follow(path: &Path) -> io::Result<File> {
    os::no_follow(OpenOptions::new().read(true)).open(path)
}

/// Adds `path` to an I/O error's message, keeping its kind.
fn at(path: &Path) -> impl FnOnce(io::Error) -> io::Error + '_ {
    move |e| io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// Writes one NAR string: length, bytes, padding.
fn write_str<W: Write + ?Sized>(out: &mut W, s: &[u8]) -> io::Result<()> {
    out.write_all(&(s.len() as u64).to_le_bytes())?;
    out.write_all(s)?;
    write_padding(out, s.len() as u64)
}

/// Writes the zero bytes that pad `len` bytes to a multiple of 8.
fn write_padding<W: Write + ?Sized>(out: &mut W, len: u64) -> io::Result<()> {
    let pad = (8 - len % 8) % 8;
    out.write_all(&[0; 8][..pad as usize])
}

/// Writes the node for `path`.
fn write_node<W: Write + ?Sized>(path: &Path, out: &mut W) -> io::Result<()> {
    let file_type = fs::symlink_metadata(path).map_err(at(path))?.file_type();
    write_str(out, b"(")?;
    write_str(out, b"type")?;
    if file_type.is_file() {
        write_regular(path, out)?;
    } else if file_type.is_symlink() {
        let target = fs::read_link(path).map_err(at(path))?;
        write_str(out, b"symlink")?;
        write_str(out, b"target")?;
        write_str(out, &os::name_bytes(target.as_os_str()).map_err(at(path))?)?;
    } else if file_type.is_dir() {
        write_str(out, b"directory")?;
        let names = fs::read_dir(path)
            .and_then(|entries| {
                entries
                    .map(|entry| entry.map(|e| e.file_name()))
                    .collect::<io::Result<Vec<OsString>>>()
            })
            .map_err(at(path))?;
        let mut names = names
            .into_iter()
            .map(|name| Ok((os::name_bytes(&name)?.into_owned(), name)))
            .collect::<io::Result<Vec<(Vec<u8>, OsString)>>>()
            .map_err(at(path))?;
        names.sort();
        for (bytes, name) in names {
            write_str(out, b"entry")?;
            write_str(out, b"(")?;
            write_str(out, b"name")?;
            write_str(out, &bytes)?;
            write_str(out, b"node")?;
            write_node(&path.join(&name), out)?;
            write_str(out, b")")?;
        }
    } else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is a {}, which a NAR cannot hold",
                path.display(),
                special_kind(file_type)
            ),
        ));
    }
    write_str(out, b")")
}

/// Writes the body of a regular-file node, streaming the contents.
fn write_regular<W: Write + ?Sized>(path: &Path, out: &mut W) -> io::Result<()> {
    let mut file = open_no_follow(path).map_err(at(path))?;
    let meta = file.metadata().map_err(at(path))?;
    if !meta.is_file() || meta.file_type().is_symlink() {
        return Err(io::Error::other(format!(
            "{} stopped being a regular file while it was archived",
            path.display()
        )));
    }
    write_str(out, b"regular")?;
    if os::is_executable(&meta) {
        write_str(out, b"executable")?;
        write_str(out, b"")?;
    }
    write_str(out, b"contents")?;
    let len = meta.len();
    out.write_all(&len.to_le_bytes())?;
    let copied = io::copy(&mut (&mut file).take(len), out).map_err(at(path))?;
    let grew = file.read(&mut [0; 1]).map_err(at(path))? != 0;
    if copied != len || grew {
        return Err(io::Error::other(format!(
            "{} changed size while it was archived",
            path.display()
        )));
    }
    write_padding(out, len)
}

/// An `io::Write` that feeds a SHA-256.
struct HashWriter(Sha256);

impl Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(all(test, unix))]
mod tests {
    //! Expected values come from two places:
    //!
    //! * NixOS/nix `tests/hash.sh` (upstream test vectors): the base32 and SRI forms of
    //!   sha256("abc"), the base32 of a sha1 and a sha512 digest, and the md5 of the NAR of a
    //!   directory holding `hello` = "Hello World\n" (plain, executable, and as a symlink to `x`).
    //! * An independent Python 3 implementation of NAR and Nix base32 written from the format
    //!   description (not from this code). It reproduces every upstream vector above, including
    //!   the three NAR md5s; its SHA-256s of those same NARs and of the other trees below are
    //!   the expected values here.

    use std::fs;
    use std::os::unix::fs::{PermissionsExt, symlink};
    use std::path::Path;

    use sha2::{Digest, Sha256};

    use super::*;

    fn write_file(path: &Path, contents: &[u8], mode: u32) {
        fs::write(path, contents).unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    use crate::hash::hex;

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn base32_matches_upstream_nix_vectors() {
        // Upstream: sha256("abc"), a 20-byte sha1 (exactly 32 groups) and a 64-byte sha512
        // (103 characters: the last group is partial).
        assert_eq!(
            nix_base32(&Sha256::digest(b"abc")),
            "1b8m03r63zqhnjf7l5wnldhh7c134ap5vpj0850ymkq1iyzicy5s"
        );
        assert_eq!(
            nix_base32(&unhex("800d59cfcd3c05e900cb4e214be48f6b886a08df")),
            "vw46m23bizj4n8afrc0fj19wrp7mj3c0"
        );
        assert_eq!(
            nix_base32(&unhex(
                "204a8fc6dda82f0a0ced7beb8e08a41657c16ef468b228a8279be331a703c33596fd15c1\
                 3b1b07f9aa1d3bea57789ca031ad85c7a71dd70354ec631238ca3445"
            )),
            "12k9jiq29iyqm03swfsgiw5mlqs173qazm3n7daz43infy12pyrcdf30fkk3qwv4yl2ick8yipc2mqnlh48xsvvxl60lbx8vp38yji0"
        );
    }

    #[test]
    fn base32_small_inputs() {
        // From the Python reference; 0xff → "7z" also by hand: 0xff >> 5 = 7, 0xff & 31 = 31.
        assert_eq!(nix_base32(&[]), "");
        assert_eq!(nix_base32(&[0x00]), "00");
        assert_eq!(nix_base32(&[0xff]), "7z");
        assert_eq!(nix_base32(&[1, 2, 3, 4, 5]), "0l2060h1");
        assert_eq!(
            nix_base32(&Sha256::digest(b"")),
            "0mdqa9w1p6cmli6976v4wi0sw9r4p5prkj7lzfd1877wk11c9c73"
        );
        assert!(is_nix_base32_sha256(&nix_base32(&Sha256::digest(b"x"))));
        assert!(!is_nix_base32_sha256(
            "0mdqa9w1p6cmli6976v4wi0sw9r4p5prkj7lzfd1877wk11c9c7e"
        ));
        assert!(!is_nix_base32_sha256("0mdqa9"));
    }

    #[test]
    fn sri_round_trips_and_matches_upstream() {
        let digest: [u8; 32] = Sha256::digest(b"abc").into();
        let s = sri(&digest);
        assert_eq!(s, "sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=");
        assert_eq!(parse_sri(&s), Some(digest));
        assert_eq!(
            parse_sri("sha512-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="),
            None
        );
        assert_eq!(
            parse_sri("sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0"),
            None
        );
        assert_eq!(parse_sri("sha256-YWJj"), None);
        assert_eq!(parse_sri("sha256-!!!"), None);
    }

    #[test]
    fn nar_of_a_single_file_is_byte_exact() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        write_file(&f, b"hello\n", 0o644);
        let mut bytes = Vec::new();
        write_nar(&f, &mut bytes).unwrap();
        assert_eq!(
            hex(&bytes),
            "0d000000000000006e69782d617263686976652d31000000\
             01000000000000002800000000000000\
             04000000000000007479706500000000\
             0700000000000000726567756c617200\
             0800000000000000636f6e74656e7473\
             060000000000000068656c6c6f0a0000\
             01000000000000002900000000000000"
        );
        let digest = nar_sha256(&f).unwrap();
        assert_eq!(digest, <[u8; 32]>::from(Sha256::digest(&bytes)));
        assert_eq!(
            hex(&digest),
            "1c37d01af40be2e80691de3cc3df44377a699afbb17c68f080964b2fd071fc13"
        );
    }

    #[test]
    fn nar_hash_of_upstream_hash_path_tree() {
        let dir = tempfile::tempdir().unwrap();
        let hello = dir.path().join("hello");
        write_file(&hello, b"Hello World\n", 0o644);
        assert_eq!(
            nix_base32(&nar_sha256(dir.path()).unwrap()),
            "09avx37fag4lg24q94pnlp9bsisr2gnyclxpbwqvbg5iss6bcc16"
        );
        // Any exec bit makes it executable; other mode bits do not matter.
        fs::set_permissions(&hello, fs::Permissions::from_mode(0o744)).unwrap();
        let exec = "01ilps6ganzx7j3xadsi5ji2hc8c97d90c80fyx3608qbhv506bb";
        assert_eq!(nix_base32(&nar_sha256(dir.path()).unwrap()), exec);
        fs::set_permissions(&hello, fs::Permissions::from_mode(0o410)).unwrap();
        assert_eq!(nix_base32(&nar_sha256(dir.path()).unwrap()), exec);
        fs::remove_file(&hello).unwrap();
        symlink("x", &hello).unwrap();
        assert_eq!(
            nix_base32(&nar_sha256(dir.path()).unwrap()),
            "06swwjklm4nh0d1agylw4i7xhspi7ckny3ajw8gjmbg71n7370mk"
        );
    }

    #[test]
    fn nar_hash_of_a_mixed_tree_sorts_names_by_bytes() {
        // B, _x, a, b.txt, empty: byte order, not case-insensitive or locale order.
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path();
        fs::create_dir(t.join("a")).unwrap();
        fs::create_dir(t.join("empty")).unwrap();
        write_file(&t.join("B"), b"upper\n", 0o644);
        write_file(&t.join("_x"), b"", 0o644);
        write_file(&t.join("a/run.sh"), b"#!/bin/sh\n", 0o755);
        write_file(&t.join("b.txt"), b"B", 0o644);
        symlink("run.sh", t.join("a/link")).unwrap();
        let mut bytes = Vec::new();
        write_nar(t, &mut bytes).unwrap();
        assert_eq!(bytes.len(), 1424);
        assert_eq!(
            nix_base32(&nar_sha256(t).unwrap()),
            "1xvqw2fg7vl85c1zp823qym9636jx0n8cdm3rxynx2q04v8iaya4"
        );
    }

    #[test]
    fn nar_hash_of_a_large_file_with_padding() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        let contents: Vec<u8> = (0..100_003u32)
            .map(|i| ((i * 31 + 7) % 251) as u8)
            .collect();
        write_file(&big, &contents, 0o644);
        assert_eq!(
            hex(&nar_sha256(&big).unwrap()),
            "a1a07b9593cde0463fe9f24af327e1e096209217197f3f1e181df0a44e6ee53b"
        );
    }

    #[test]
    fn sockets_cannot_be_archived() {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("sock");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let err = nar_sha256(dir.path()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("sock is a socket"), "{err}");
    }
}
