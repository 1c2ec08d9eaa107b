//! Consent as data (for interfaces that cannot show prompts: Hermes's gateway, the desktop
//! app): `--dry-run --json` returns everything the operation would ask — dependencies and what
//! each pulls in, capabilities, surface additions, missing `requires_env`, `requires_auth` —
//! the exact flags that approve it, and a hash of it. Applying with `--plan HASH` recomputes
//! the plan and refuses if the hash differs: nobody approves something other than what they
//! were shown.

use serde::Serialize;

/// One thing an operation would ask for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum PlanItem {
    /// Python dependencies a plugin adds to the environment (CAP-6); `--yes-deps` approves.
    Dependencies {
        /// The plugin.
        plugin: String,
        /// Its requirements not in the current generation.
        requires: Vec<String>,
        /// What they install (`name version`).
        installs: Vec<String>,
    },
    /// A capability the plugin declares and the profile has not granted (CAP-2); optional:
    /// `--grant ID` grants it, leaving it off is allowed.
    Capability {
        /// The plugin.
        plugin: String,
        /// The profile.
        profile: String,
        /// The capability id.
        id: String,
        /// What it lets the plugin do.
        risk: String,
    },
    /// What a new version of the plugin adds to what it can do (CAP-7); `--yes` accepts.
    Surface {
        /// The plugin.
        plugin: String,
        /// The additions (`tool weather_alerts`, `capability llm.model_override`, …).
        added: Vec<String>,
    },
    /// An environment variable the plugin requires and nothing sets: until it is set (in the
    /// environment or `<home>/.env`) the plugin is not loaded.
    Env {
        /// The plugin.
        plugin: String,
        /// The variable.
        name: String,
        /// What it is for.
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// Where to get it.
        #[serde(skip_serializing_if = "Option::is_none")]
        url: Option<String>,
        /// Whether it is a secret.
        secret: bool,
    },
    /// Hermes internals the plugin's code rebinds at run time (`no-core-override`): Hermes
    /// loads it, the catalog does not admit it; `--allow-core-patch` approves.
    CorePatch {
        /// The plugin.
        plugin: String,
        /// What it patches (`run_agent.AIAgent.chat`, …), those not approved before.
        targets: Vec<String>,
    },
    /// Providers the plugin needs the user signed in with (informational).
    Auth {
        /// The plugin.
        plugin: String,
        /// Provider ids.
        providers: Vec<String>,
    },
}

impl PlanItem {
    /// The flag that approves this item, if one does.
    pub fn flag(&self) -> Option<String> {
        match self {
            PlanItem::Dependencies { .. } => Some("--yes-deps".into()),
            PlanItem::Capability { id, .. } => Some(format!("--grant {id}")),
            PlanItem::Surface { .. } => Some("--yes".into()),
            PlanItem::CorePatch { .. } => Some("--allow-core-patch".into()),
            PlanItem::Env { .. } | PlanItem::Auth { .. } => None,
        }
    }

    /// Whether the operation is refused unless this item is approved (capabilities are not:
    /// left off, the plugin runs without them).
    pub fn required(&self) -> bool {
        matches!(
            self,
            PlanItem::Dependencies { .. } | PlanItem::Surface { .. } | PlanItem::CorePatch { .. }
        )
    }
}

/// What an operation would ask, and how to approve it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// The operation (`enable weather`).
    pub operation: String,
    /// What it would ask.
    pub items: Vec<PlanItem>,
    /// The flags that approve every item that has one.
    pub approve: Vec<String>,
    /// The flags without which it is refused.
    pub required: Vec<String>,
    /// `sha256:` over the operation, the environment it would publish and the items: pass it
    /// back with `--plan`.
    pub hash: String,
}

impl Plan {
    /// The plan of `operation` that would publish the environment `digest` (inputs digest
    /// and the resolved packages), asking `items`.
    pub fn new(operation: &str, digest: &str, items: Vec<PlanItem>) -> Plan {
        let mut approve: Vec<String> = items.iter().filter_map(PlanItem::flag).collect();
        approve.sort();
        approve.dedup();
        let mut required: Vec<String> = items
            .iter()
            .filter(|i| i.required())
            .filter_map(PlanItem::flag)
            .collect();
        required.sort();
        required.dedup();
        let canonical = serde_json::json!({
            "operation": operation,
            "environment": digest,
            "items": items,
        });
        let hash = crate::hash::sha256_hex(canonical.to_string().as_bytes());
        Plan {
            operation: operation.to_string(),
            items,
            approve,
            required,
            hash: format!("sha256:{hash}"),
        }
    }
}

/// How an operation treats its consent plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum PlanMode {
    /// Ask (or refuse) as usual.
    #[default]
    Off,
    /// Record what would be asked, change nothing (`--dry-run`).
    Dry,
    /// Apply only if the plan's hash is this one (`--plan HASH`).
    Expect(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_hash_follow_the_items() {
        let items = vec![
            PlanItem::Dependencies {
                plugin: "w".into(),
                requires: vec!["httpx>=0.27".into()],
                installs: vec!["httpx 0.28.1".into()],
            },
            PlanItem::Capability {
                plugin: "w".into(),
                profile: "default".into(),
                id: "tools.override".into(),
                risk: "r".into(),
            },
        ];
        let plan = Plan::new("enable w", "sha256:x", items.clone());
        assert_eq!(plan.approve, ["--grant tools.override", "--yes-deps"]);
        assert_eq!(plan.required, ["--yes-deps"]);
        assert_eq!(plan, Plan::new("enable w", "sha256:x", items.clone()));
        assert_ne!(plan.hash, Plan::new("enable w", "sha256:y", items).hash);
    }
}
