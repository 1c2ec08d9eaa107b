//! Generations (GEN-1…GEN-9): immutable numbered plugin environments under
//! `<home>/pm/generations/<N>`, published atomically and switched through the `current`
//! symlink; rollback, gc with reader leases, verify; one writer at a time; a journal so a
//! crash never leaves anything half-done.
//!
//! - [`doc`]: `generation.json` (where things live is [`crate::home::Layout`]);
//! - [`build`]: venv + lock install ([`venv`], the uv-facing half) + plugin links, or the
//!   current generation's venv carried over by hard links when the lock is the same
//!   ([`reuse`]), or the one installed while the plugin was still being checked ([`ahead`]);
//! - [`current`]: which generations exist and which one is current;
//! - [`transaction`]: the journaled transaction and the `current` switch; [`journal`]: recovery;
//! - [`gc`], [`verify`]; [`writer_lock`]; [`lease`]: readers' leases; [`faults`]: named crash
//!   points for tests.

#[cfg(feature = "manager")]
pub mod ahead;
#[cfg(feature = "manager")]
pub mod build;
pub mod current;
pub mod doc;
pub mod faults;
pub mod gc;
pub mod journal;
pub mod lease;
#[cfg(feature = "manager")]
pub mod reuse;
pub mod scratch;
pub mod transaction;
#[cfg(feature = "manager")]
pub mod venv;
#[cfg(feature = "manager")]
pub mod verify;
#[cfg(feature = "manager")]
pub mod wheels;
pub mod writer_lock;
