//! State users own and the package manager reads: Hermes profiles and their `config.yaml`,
//! surgical edits of it, and the installed-plugins record.

pub mod config_edit;
pub mod installed;
pub mod profiles;
pub mod settings;
