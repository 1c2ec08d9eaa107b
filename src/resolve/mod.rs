//! Resolution of Hermes core together with the enabled plugins (RES-1…RES-6).

pub mod engine;
