//! What the operations read of the home besides `installed.json`: the current generation's
//! document, and which `requires_env` variables a stored plugin still lacks. A leaf of
//! `manager`: `apply` and the reads (`query`) both take these, and neither takes the other.

use super::{Context, ManagerError};
use crate::generation::doc::GenerationDoc;
use crate::store::Store;

/// The current generation's document, if there is one.
pub fn current_doc(cx: &Context) -> Option<GenerationDoc> {
    let n = crate::generation::current::current_number(&cx.layout)?;
    GenerationDoc::read(&cx.layout.generation(n)).ok()
}

/// Missing `requires_env` variables of a plugin (neither in the process environment nor in
/// the profile's own `.env`, the one Hermes reads for it: `<home>/.env` for `default`,
/// `<home>/profiles/<name>/.env` for another). A `.env` that exists but cannot be read is an error, never "nothing
/// set": what Hermes will see cannot be told (its writer refuses the same file).
pub fn missing_env(cx: &Context, store_key: &str) -> Result<Vec<String>, ManagerError> {
    let store = match Store::open(cx.layout.store()) {
        Ok(s) => s,
        Err(_) => return Ok(Vec::new()),
    };
    let declared = crate::consent::declared::Declared::read(&store.path_of(store_key));
    if declared.env.is_empty() {
        return Ok(Vec::new());
    }
    let file = super::read_user_file(&cx.layout.env_file(&cx.profile))?.unwrap_or_default();
    let known = crate::consent::env_file::parse(&file);
    Ok(declared
        .missing_env(&cx.env_names, &known)
        .into_iter()
        .map(|(n, ..)| n.clone())
        .collect())
}
