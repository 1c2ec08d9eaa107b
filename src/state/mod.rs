//! State users own and the package manager reads: Hermes profiles and their `config.yaml`.

pub mod profiles;
