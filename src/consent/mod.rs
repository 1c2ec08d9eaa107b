//! Consent (CAP-1…CAP-10): what a plugin can do ([`surface`]), which capabilities a user
//! granted ([`capabilities`], kept in each profile's `config.yaml`; what a grant covers and
//! what is asked, decided there), what it declares ([`declared`]), the values it needs
//! ([`env_file`], `<home>/.env`), how the user is asked ([`prompt`]), and the record of every
//! decision ([`audit`]). Consent is a record and a switch, not a sandbox.

pub mod audit;
pub mod capabilities;
pub mod declared;
pub mod env_file;
pub mod prompt;
pub mod surface;
