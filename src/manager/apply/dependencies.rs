//! Phase 6, dependency consent (CAP-6): the requirements a plugin adds that the current
//! generation does not have, with what each pulls in, are approved (`--yes-deps`, a prompt)
//! or the change is refused; when planning they are listed instead.

use std::collections::{BTreeMap, BTreeSet};

use super::consent::{self, Decisions};
use super::{Change, NOTHING_CHANGED};
use crate::consent::audit;
use crate::consent::surface::SurfaceDiff;
use crate::exit::Code;
use crate::generation::doc::{GenPlugin, GenerationDoc};
use crate::manager::plan::PlanItem;
use crate::manager::{Context, DepsConsent, ManagerError, Prompter};
use crate::resolve::inputs::{self, PluginInput};
use crate::resolve::lock::Lock;

/// One plugin's new requirements: its name, what it requires, what that installs.
type Ask = (String, Vec<String>, Vec<String>);

/// The new requirements of each plugin, against the current generation's lock inputs. A
/// plugin whose surface additions were accepted (`diffs`) brought its requirements with them.
fn asks(
    plugins: &[GenPlugin],
    inputs: &[PluginInput],
    lock: &Lock,
    current: Option<&GenerationDoc>,
    diffs: &BTreeMap<String, SurfaceDiff>,
) -> Vec<Ask> {
    let old_inputs: BTreeMap<String, BTreeSet<String>> = current
        .map(|d| {
            d.lock
                .inputs
                .iter()
                .map(|i| (i.source.clone(), i.requirements.iter().cloned().collect()))
                .collect()
        })
        .unwrap_or_default();
    let surface_consented: BTreeSet<&str> = plugins
        .iter()
        .filter(|p| diffs.contains_key(&p.key))
        .map(|p| p.name.as_str())
        .collect();
    let mut out = Vec::new();
    for p in inputs {
        if surface_consented.contains(p.name.as_str()) {
            continue;
        }
        let label = inputs::Source::Plugin(p.name.clone()).label();
        let before = old_inputs.get(&label).cloned().unwrap_or_default();
        let added: Vec<String> = p
            .requirements
            .iter()
            .map(|r| r.raw.clone())
            .filter(|r| !before.contains(r))
            .collect();
        if added.is_empty() {
            continue;
        }
        let pulled: Vec<String> = lock
            .packages
            .iter()
            .filter(|pkg| pkg.required_by.contains(&label))
            .map(|pkg| format!("{} {}", pkg.name, pkg.version))
            .collect();
        out.push((p.name.clone(), added, pulled));
    }
    out
}

/// Asks for (or plans) dependency consent; refuses the change when it is not given.
#[allow(clippy::too_many_arguments)]
pub(super) fn consent(
    cx: &Context,
    change: &Change,
    plugins: &[GenPlugin],
    inputs: &[PluginInput],
    lock: &Lock,
    current: Option<&GenerationDoc>,
    diffs: &BTreeMap<String, SurfaceDiff>,
    prompter: &mut dyn Prompter,
    decisions: &mut Decisions,
) -> Result<(), ManagerError> {
    let asks = asks(plugins, inputs, lock, current, diffs);
    if asks.is_empty() {
        return Ok(());
    }
    if let Some(plan) = decisions.plan.as_mut() {
        plan.extend(
            asks.iter()
                .map(|(name, added, pulled)| PlanItem::Dependencies {
                    plugin: name.clone(),
                    requires: added.clone(),
                    installs: pulled.clone(),
                }),
        );
        return Ok(());
    }
    let mut text = String::from("Python dependencies to install:\n");
    for (name, added, pulled) in &asks {
        text.push_str(&format!(
            "  plugin `{name}` requires: {}\n",
            added.join(", ")
        ));
        if !pulled.is_empty() {
            text.push_str(&format!("    installs: {}\n", pulled.join(", ")));
        }
    }
    let granted = match change.deps {
        DepsConsent::Yes => true,
        DepsConsent::No => false,
        DepsConsent::Ask | DepsConsent::Pending => {
            prompter.confirm(&text, "Install these dependencies?")
        }
    };
    if !granted {
        let code = match change.deps {
            DepsConsent::No => Code::ConsentRefused,
            _ => consent::refusal_code(prompter),
        };
        let names: Vec<&str> = asks.iter().map(|(n, _, _)| n.as_str()).collect();
        let way = match change.deps {
            DepsConsent::Pending => format!(
                "`{}` installs nothing itself: config.yaml enables {} by hand, not yet synced; run `hermes-plugins sync --yes-deps` to consent, or take them off the list",
                change.operation,
                names.join(", ")
            ),
            _ => "pass --yes-deps to consent in advance".to_string(),
        };
        return Err(ManagerError::NotConsented {
            code,
            asked: format!(
                "{text}dependency consent not given for {}",
                names.join(", ")
            ),
            outcome: NOTHING_CHANGED.to_string(),
            way,
        });
    }
    for (name, added, _) in asks {
        // Audited under the plugin's key (what `show --audit` looks up), not its name.
        let key = plugins
            .iter()
            .find(|p| p.name == name)
            .map_or(name, |p| p.key.clone());
        let by = match change.deps {
            DepsConsent::Yes => "--yes-deps",
            _ => "prompt",
        };
        decisions.audit.push(audit::AuditEntry::now(
            cx.profile.clone(),
            key,
            "deps",
            added,
            by,
        ));
    }
    Ok(())
}
