//! Generations (GEN-1…GEN-9): immutable numbered plugin environments under
//! `<home>/pm/generations/<N>`, published atomically and switched through the `current`
//! symlink; rollback, gc with reader leases, verify; one writer at a time; a journal so a
//! crash never leaves anything half-done.
//!
//! - [`layout`]: where things live; [`doc`]: `generation.json`;
//! - [`build`]: venv + lock install ([`install`], the uv-facing half) + plugin links;
//! - [`publish`]: the journaled transaction and the `current` switch; [`journal`]: recovery;
//! - [`gc`], [`verify`]; [`writer_lock`]; [`faults`]: named crash points for tests.

pub mod build;
pub mod doc;
pub mod faults;
pub mod gc;
pub mod install;
pub mod journal;
pub mod layout;
pub mod publish;
pub mod verify;
pub mod writer_lock;
