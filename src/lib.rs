//! hermes-plugins: the package manager and catalog toolchain for Hermes Agent plugins.
//!
//! Everything that fetches, resolves, installs or talks to the user is behind the `manager`
//! feature (on by default). Without it the library is the parsers, validators, editors and
//! state readers — what `fuzz/` builds.

#[cfg(feature = "manager")]
pub mod agent;
pub mod catalog;
pub mod check;
#[cfg(feature = "manager")]
pub mod cli;
pub mod consent;
pub mod diag;
pub mod exit;
pub mod files;
pub mod generation;
pub mod hash;
pub mod hermes_core;
pub mod home;
pub mod interpreter;
pub mod known;
pub mod located;
#[cfg(feature = "manager")]
pub mod manager;
#[cfg(feature = "manager")]
pub mod nix;
pub mod pack;
pub mod package;
pub mod parallel;
pub mod pkgfs;
pub mod repo_url;
pub mod report;
pub mod resolve;
#[cfg(feature = "manager")]
pub mod sbom;
pub mod source;
pub mod state;
pub mod store;
pub mod text;
pub mod validation;
