//! hermes-plugins: the package manager and catalog toolchain for Hermes Agent plugins.

pub mod agent;
pub mod catalog;
pub mod check;
pub mod cli;
pub mod consent;
pub mod diag;
pub mod exit;
pub mod files;
pub mod generation;
pub mod hash;
pub mod hermes_core;
pub mod home;
pub mod known;
pub mod located;
pub mod manager;
pub mod nix;
pub mod package;
pub mod pkgfs;
pub mod report;
pub mod resolve;
pub mod source;
pub mod state;
pub mod store;
pub mod text;
