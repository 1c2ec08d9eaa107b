//! `remove`: a plugin taken out of `installed.json` and every profile's selection, in one
//! publication.

use super::apply::GrantFlags;
use super::apply::{self, Applied, Change, SelectionEdit};
use super::plan::PlanMode;
use super::{Context, DepsConsent, Feedback, ManagerError, Prompter};
use crate::exit::Code;

/// `remove NAME`: gone from every profile's selection and from `installed.json`; its data
/// directory is kept unless `purge_data`.
pub fn remove(
    cx: &Context,
    name: &str,
    purge_data: bool,
    prompter: &mut dyn Prompter,
    feedback: &mut dyn Feedback,
) -> Result<Applied, ManagerError> {
    let mut installed = super::installed(cx)?;
    let key = installed
        .find(name)
        .map(|p| p.key.clone())
        .ok_or_else(|| ManagerError::coded(Code::NotFound, format!("`{name}` is not installed")))?;
    let plugin_name = installed.plugins.get(&key).map(|p| p.name.clone());
    installed.plugins.remove(&key);
    let (profiles, _) = crate::state::profiles::read_profiles(&cx.layout.home)
        .map_err(ManagerError::environment)?;
    let mut edits = Vec::new();
    // Every profile forgets it — its selection and every grant, wherever they are.
    for p in profiles {
        for n in [Some(key.clone()), plugin_name.clone()]
            .into_iter()
            .flatten()
        {
            edits.push((p.name.clone(), SelectionEdit::Forget(n)));
        }
    }
    let applied = apply::apply(
        cx,
        Change {
            operation: format!("remove {key}"),
            edits,
            installed: Some(installed),
            deps: DepsConsent::Pending,
            grants: GrantFlags::default(),
            accept_surface: true,
            plan: PlanMode::Off,
            plan_notes: Vec::new(),
        },
        prompter,
        feedback,
    )?;
    if purge_data {
        let data = cx.layout.plugin_data(&key).map_err(super::Refusal::Key)?;
        match std::fs::remove_dir_all(&data) {
            Ok(()) => feedback.note(&format!("removed {}", data.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(ManagerError::caused(
                    Code::Environment,
                    format!("cannot remove the plugin's data {}", data.display()),
                    &e,
                ));
            }
        }
    }
    Ok(applied)
}
