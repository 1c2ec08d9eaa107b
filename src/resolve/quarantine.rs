//! The 14-day quarantine (RES-3): packages Hermes core pins itself (the registry packages of
//! core's `uv.lock`) may not resolve to a release uploaded within the window. Core's
//! `[tool.uv] exclude-newer-package` exemptions are honoured (`false`: no cutoff; a date: that
//! date). Packages only plugins use have no cutoff.

use std::collections::BTreeMap;
use std::str::FromStr;

use jiff::{SignedDuration, Timestamp};
use uv_normalize::PackageName;

use crate::hermes_core::{CoreLock, CoreProject};

/// Default window.
pub const DEFAULT_DAYS: u32 = 14;

/// Why a package has the cutoff it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CutoffSource {
    /// The quarantine window.
    Window,
    /// Core's exemption with a date (as written).
    Exemption(String),
}

/// A package's cutoff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cutoff {
    /// Releases uploaded at or after this instant are held back.
    pub at: Timestamp,
    /// Why.
    pub source: CutoffSource,
}

/// The quarantine in force for one resolution.
#[derive(Debug, Clone)]
pub struct Quarantine {
    /// Window length in days.
    pub days: u32,
    /// "Now".
    pub now: Timestamp,
    /// Cutoffs of quarantined packages.
    pub cutoffs: BTreeMap<PackageName, Cutoff>,
    /// Core packages exempted entirely (`exclude-newer-package = { x = false }`).
    pub exempt: Vec<PackageName>,
}

impl Quarantine {
    /// The quarantine for core's lock and exemptions at `now`.
    pub fn compute(
        lock: &CoreLock,
        project: &CoreProject,
        days: u32,
        now: Timestamp,
    ) -> Result<Quarantine, String> {
        let window_start = now
            .checked_sub(SignedDuration::from_hours(24 * i64::from(days)))
            .map_err(|e| format!("quarantine window of {days} days: {e}"))?;
        let mut exemptions: BTreeMap<PackageName, Option<(Timestamp, String)>> = BTreeMap::new();
        for (name, value) in &project.exclude_newer_package {
            let package = PackageName::from_str(name)
                .map_err(|e| format!("exclude-newer-package: `{name}`: {e}"))?;
            if value == "false" {
                exemptions.insert(package, None);
            } else {
                let at = parse_cutoff(value)
                    .map_err(|e| format!("exclude-newer-package.{name} = \"{value}\": {e}"))?;
                exemptions.insert(package, Some((at, value.clone())));
            }
        }
        let mut cutoffs = BTreeMap::new();
        let mut exempt = Vec::new();
        for name in lock.packages.keys() {
            match exemptions.get(name) {
                Some(None) => exempt.push(name.clone()),
                Some(Some((at, text))) => {
                    cutoffs.insert(
                        name.clone(),
                        Cutoff {
                            at: *at,
                            source: CutoffSource::Exemption(text.clone()),
                        },
                    );
                }
                None => {
                    cutoffs.insert(
                        name.clone(),
                        Cutoff {
                            at: window_start,
                            source: CutoffSource::Window,
                        },
                    );
                }
            }
        }
        Ok(Quarantine {
            days,
            now,
            cutoffs,
            exempt,
        })
    }

    /// When a release uploaded at `uploaded` becomes eligible under this package's rule.
    pub fn eligible_from(&self, name: &PackageName, uploaded: Timestamp) -> Option<Timestamp> {
        match &self.cutoffs.get(name)?.source {
            CutoffSource::Window => uploaded
                .checked_add(SignedDuration::from_hours(24 * i64::from(self.days)))
                .ok(),
            CutoffSource::Exemption(_) => None,
        }
    }
}

/// Parses a cutoff like uv does: an RFC 3339 timestamp, or a date meaning "through that day".
pub fn parse_cutoff(text: &str) -> Result<Timestamp, String> {
    uv_resolver::ExcludeNewerValue::from_str(text).map(|v| v.timestamp())
}

/// `2026-11-25` for a timestamp (UTC).
pub fn date(t: Timestamp) -> String {
    t.strftime("%Y-%m-%d").to_string()
}
