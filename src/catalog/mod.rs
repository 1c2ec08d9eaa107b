//! The catalog toolchain (CAT-1…CAT-5, SRC-4): the entry model and its rules, `catalog
//! check`, `catalog review`, `catalog resolve-all`, `search`, and the removal kill list.
//!
//! The pieces: [`entry`] (one entry file and its CAT-1 rules), [`removed`] (the SRC-4 kill
//! list), [`check`](mod@check) (a whole catalog, with the CAT-2 cross-entry rules),
//! [`search`](mod@search) (CAT-5), [`report`] (an outcome as a `validate`-style report),
//! [`finding`] (findings and the table of check ids) and [`url`] (repository URL
//! normalisation).

pub mod check;
pub mod entry;
mod fields;
pub mod finding;
pub mod removed;
pub mod report;
#[cfg(feature = "manager")]
pub mod resolve_all;
#[cfg(feature = "manager")]
pub mod review;
pub mod search;

pub use check::{CheckOutcome, check};
pub use entry::{Entry, EntryCapabilities};
pub use finding::{CatalogFinding, rules};
pub use removed::{Removed, blocked};
pub use search::{Hit, search};
