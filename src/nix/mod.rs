//! NixOS support (NIX-1, NIX-2): NAR hashes of trees (the serialisation lives in
//! [`crate::store::nar`], which keys the store by the same digest), a lock of pinned plugins
//! with the hashes `fetchFromGitHub` / `fetchgit` compute ([`lock`]), a Nix expression for
//! `services.hermes-agent.extraPlugins` ([`expr`]), and an offline, bit-for-bit reproducible
//! build of a generation from pinned sources and pre-fetched wheels ([`build`], with
//! [`reproducible`] taking out what would make its venv depend on the time of the build).

pub mod build;
pub mod expr;
pub mod lock;
pub mod reproducible;

use std::path::Path;

use crate::store::nar;

/// The SRI NAR hash of a path (`sha256-…`), as `nix hash path --sri` prints it.
pub fn hash_path(path: &Path) -> std::io::Result<String> {
    Ok(nar::sri(&nar::nar_sha256(path)?))
}

/// The NAR SHA-256 in Nix base32, as `nix-hash --type sha256 --base32` prints it.
pub fn hash_path_base32(path: &Path) -> std::io::Result<String> {
    Ok(nar::nix_base32(&nar::nar_sha256(path)?))
}
