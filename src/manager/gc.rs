//! Collecting old generations and the store trees only they used (GEN-6): `generations gc`,
//! and the home's `keep-generations` policy after every publication. Below `apply` (which
//! runs the policy after a switch); takes nothing from it.

use std::collections::BTreeSet;

use super::{Context, ManagerError, installed};
use crate::generation::gc::{self, GcReport};

/// The home's policy after a publication (GEN-6, `keep-generations` in `pm/settings.json`):
/// every generation beyond the newest N — other than current, its parent and any an agent
/// holds — and the store trees only they used are collected. Runs after the switch, under the
/// same writer lock; a failure is a warning (the publication is done and stays done).
pub(super) fn collect_by_policy(cx: &Context) -> Option<GcReport> {
    let settings = match crate::state::settings::Settings::read(&cx.layout.settings()) {
        Ok(settings) => settings,
        Err(e) => {
            tracing::warn!("old generations were not collected: {e}");
            return None;
        }
    };
    let keep = settings.keep_generations()?;
    match collect_garbage(cx, keep, None) {
        Ok(report) => {
            if !report.removed_generations.is_empty() {
                tracing::info!(
                    "collected generation(s) {:?} (keep-generations {keep})",
                    report.removed_generations
                );
            }
            Some(report)
        }
        Err(e) => {
            tracing::warn!(
                "old generations were not collected ({}): {e}",
                crate::exit::layers(&e).join(": ")
            );
            None
        }
    }
}

/// `generations gc [--keep N]`.
pub fn collect_garbage(
    cx: &Context,
    keep: usize,
    older_than: Option<jiff::SignedDuration>,
) -> Result<GcReport, ManagerError> {
    let newer_than = match older_than {
        Some(age) => Some(
            jiff::Timestamp::now()
                .checked_sub(age)
                .map_err(|e| ManagerError::Usage(format!("--older-than: {e}")))?,
        ),
        None => None,
    };
    let installed = installed(cx)?;
    let trees: BTreeSet<String> = installed
        .plugins
        .values()
        .map(|p| p.store_key.clone())
        .collect();
    Ok(gc::collect(&cx.layout, keep, newer_than, &trees)?)
}
