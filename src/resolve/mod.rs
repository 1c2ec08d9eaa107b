//! Resolution of Hermes core together with the enabled plugins (RES-1…RES-6).
//!
//! [`run`] gathers the labelled requirements of core and the plugins, computes the
//! quarantine, asks uv's resolver ([`engine`], the only uv-facing code) for one environment
//! for the target interpreter, and turns the answer into a [`lock::Lock`] — or, when there is
//! no solution, into a [`conflict::Conflict`] that names plugins, packages, versions and dates.

#[cfg(feature = "manager")]
pub mod conflict;
#[cfg(feature = "manager")]
pub mod core_environment;
#[cfg(feature = "manager")]
pub mod engine;
#[cfg(feature = "manager")]
pub mod inputs;
pub mod lock;
#[cfg(feature = "manager")]
pub mod memo;
#[cfg(feature = "manager")]
pub mod quarantine;

#[cfg(feature = "manager")]
mod request;

#[cfg(feature = "manager")]
pub use request::{
    BatchResolver, Failure, Outcome, Request, remember_narrowed, run, run_remembered,
};
