//! The consent step of [`super::apply`] (CAP-2…CAP-10): surface consent for replaced
//! plugins, capability grants per profile, and `requires_env` values — decided before
//! anything is written, recorded in the profiles' `config.yaml` text, `.env` and the audit log
//! as part of the same transaction.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::plan::PlanItem;
use super::{Feedback, ManagerError};
use crate::consent::audit::{self, AuditEntry};
use crate::consent::capabilities;
use crate::consent::env_file;
use crate::consent::prompt::{NOT_A_SANDBOX, Prompter};
use crate::consent::surface::{Surface, SurfaceDiff};
use crate::exit::Code;
use crate::known;
use crate::package::{self, Content, Mode};

/// Capability flags of the command (CAP-4).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrantFlags {
    /// The plugin keys the flags apply to (in the command's profile).
    pub targets: Vec<String>,
    /// `--grant CAP` (and `--allow-tool-override`).
    pub grant: Vec<String>,
    /// `--revoke CAP` (and `--no-allow-tool-override`).
    pub revoke: Vec<String>,
}

impl GrantFlags {
    /// Checks every id against the registry (unknown ids are a usage error).
    pub fn check(&self) -> Result<(), ManagerError> {
        for id in self.grant.iter().chain(&self.revoke) {
            if known::capability(id).is_none() {
                let ids: Vec<&str> = known::CAPABILITIES.iter().map(|c| c.id).collect();
                return Err(ManagerError::Usage(format!(
                    "unknown capability `{id}` (known: {})",
                    ids.join(", ")
                )));
            }
        }
        Ok(())
    }
}

/// What consent decided, to be written with the generation.
#[derive(Debug, Default)]
pub struct Decisions {
    /// Audit entries to append after the commit.
    pub audit: Vec<AuditEntry>,
    /// New `.env` text, when values were entered.
    pub env_text: Option<String>,
    /// Whether surface additions were accepted (dependency additions included).
    pub surface_accepted: bool,
    /// Planning (`--dry-run`): what would be asked is recorded here instead of asked.
    pub plan: Option<Vec<PlanItem>>,
}

/// One plugin's declared facts, from its store tree.
#[derive(Debug, Clone, Default)]
pub struct Declared {
    /// Capability ids.
    pub capabilities: BTreeSet<String>,
    /// `requires_env` entries.
    pub env: Vec<EnvRequirement>,
    /// `requires_hermes`, as written.
    pub requires_hermes: Option<String>,
    /// `requires_plugins`: the other plugin's id and its `version_range`, as written.
    pub requires_plugins: Vec<(String, Option<String>)>,
}

/// A `requires_env` entry: name, description, URL, secret.
pub type EnvRequirement = (String, Option<String>, Option<String>, bool);

impl Declared {
    /// The `requires_env` entries met neither by a variable set in the process (`set`) nor
    /// by a value in `.env` (`dotenv`, as parsed).
    pub fn missing_env<'a>(
        &'a self,
        set: &BTreeSet<String>,
        dotenv: &std::collections::BTreeMap<String, String>,
    ) -> Vec<&'a EnvRequirement> {
        self.env
            .iter()
            .filter(|(name, ..)| !set.contains(name) && !dotenv.contains_key(name))
            .collect()
    }
}

/// Reads what a plugin declares.
pub fn declared(dir: &Path) -> Declared {
    let mut d = Declared::default();
    if let Ok(loaded) = package::load_dir(dir, Mode::Runtime)
        && let Content::Native(n) = &loaded.content
        && let Some(m) = &n.manifest
    {
        d.capabilities = m.capabilities.iter().map(|c| c.value.clone()).collect();
        d.env = m
            .requires_env
            .iter()
            .map(|e| {
                (
                    e.name.value.clone(),
                    e.description.clone(),
                    e.url.clone(),
                    e.secret,
                )
            })
            .collect();
        d.requires_hermes = m.requires_hermes.as_ref().map(|s| s.value.clone());
        d.requires_plugins = m
            .requires_plugins
            .iter()
            .map(|r| {
                (
                    r.id.value.clone(),
                    r.version_range.as_ref().map(|v| v.value.clone()),
                )
            })
            .collect();
    }
    d
}

/// The code of a consent not given: nobody could answer (`consent-required`), or the answer
/// was no (`consent-refused`).
pub fn consent_code(prompter: &dyn Prompter) -> Code {
    if prompter.interactive() {
        Code::ConsentRefused
    } else {
        Code::ConsentRequired
    }
}

fn entry(profile: &str, plugin: &str, action: &str, items: Vec<String>, by: &str) -> AuditEntry {
    AuditEntry::now(profile, plugin, action, items, by)
}

/// Surface consent (CAP-7) for plugins whose code changes: additions need `--yes` or a yes
/// at the prompt; removals are shown. Returns the capability ids each replaced plugin added.
pub fn surface(
    replaced: &[(String, std::path::PathBuf, std::path::PathBuf)],
    accept: bool,
    prompter: &mut dyn Prompter,
    feedback: &mut dyn Feedback,
    decisions: &mut Decisions,
) -> Result<BTreeMap<String, SurfaceDiff>, ManagerError> {
    let mut diffs = BTreeMap::new();
    for (key, old_dir, new_dir) in replaced {
        let old = Surface::of(old_dir).unwrap_or_default();
        let new = Surface::of(new_dir).map_err(|e| {
            ManagerError::caused(
                Code::Environment,
                format!("cannot read the new tree {}", new_dir.display()),
                &e,
            )
        })?;
        let diff = SurfaceDiff::between(&old, &new);
        if !diff.removed.is_empty() {
            feedback.note(&format!(
                "`{key}` no longer provides: {}",
                diff.removed
                    .iter()
                    .map(|c| format!("{} {}", c.kind, c.item))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !diff.added.is_empty() {
            let lines = diff.lines();
            let mut text = format!("`{key}` changes what it can do:\n");
            for l in &lines {
                text.push_str(&format!("  {l}\n"));
            }
            for id in diff.added_of("capability") {
                if let Some(c) = known::capability(id) {
                    text.push_str(&format!("  capability {id}: {}\n", c.risk));
                }
            }
            text.push_str(NOT_A_SANDBOX);
            text.push('\n');
            if let Some(plan) = decisions.plan.as_mut() {
                plan.push(PlanItem::Surface {
                    plugin: key.clone(),
                    added: lines,
                });
                diffs.insert(key.clone(), diff);
                continue;
            }
            let (ok, by) = if accept {
                (true, "--yes")
            } else if prompter.interactive() {
                (prompter.confirm(&text, "Accept these additions?"), "prompt")
            } else {
                (false, "")
            };
            if !ok {
                return Err(ManagerError::coded(
                    consent_code(prompter),
                    format!(
                        "{text}the additions were not accepted: nothing was changed{}",
                        if prompter.interactive() {
                            ""
                        } else {
                            " (pass --yes to accept them)"
                        }
                    ),
                ));
            }
            decisions.surface_accepted = true;
            decisions.audit.push(entry(
                "*",
                key,
                "update",
                diff.added
                    .iter()
                    .map(|c| format!("{} {}", c.kind, c.item))
                    .collect(),
                by,
            ));
        }
        diffs.insert(key.clone(), diff);
    }
    Ok(diffs)
}

/// What a plugin's recorded grants count for now.
struct Standing {
    /// Granted before this change.
    before: BTreeSet<String>,
    /// The declared-set hash answered before.
    hash: Option<String>,
    /// Whether the record was given to another source (then it counts for nothing).
    another_source: bool,
}

/// The recorded grants of `key`, unless they were given to a plugin from another source than
/// `origin`: those do not carry over (revoked, audited, asked again).
fn standing(
    profile: &str,
    key: &str,
    origin: &str,
    recorded: capabilities::Grants,
    feedback: &mut dyn Feedback,
    decisions: &mut Decisions,
) -> Standing {
    if !recorded.for_another_source(origin) {
        return Standing {
            before: recorded.granted,
            hash: recorded.hash,
            another_source: false,
        };
    }
    if !recorded.granted.is_empty() {
        decisions.audit.push(entry(
            profile,
            key,
            "revoke",
            recorded.granted.iter().cloned().collect(),
            "source changed",
        ));
        feedback.note(&format!(
            "`{key}` now comes from {origin}; what was granted to it from {} is asked again",
            recorded.source.as_deref().unwrap_or_default()
        ));
    }
    Standing {
        before: BTreeSet::new(),
        hash: None,
        another_source: true,
    }
}

/// Capability consent for one plugin (from `origin`, see [`grant_origin`]) in one profile;
/// returns the new config text (or the same text when nothing changes).
#[allow(clippy::too_many_arguments)]
pub fn capabilities_for(
    profile: &str,
    key: &str,
    origin: &str,
    text: &str,
    declared: &BTreeSet<String>,
    added_by_update: Option<&BTreeSet<String>>,
    removed_by_update: &BTreeSet<String>,
    flags: Option<&GrantFlags>,
    prompter: &mut dyn Prompter,
    feedback: &mut dyn Feedback,
    decisions: &mut Decisions,
) -> Result<(String, BTreeSet<String>), ManagerError> {
    let edit_err = |e: crate::state::config_edit::EditError| ManagerError::Refused(e.to_string());
    let recorded = capabilities::read(text, key).map_err(edit_err)?;
    let source_changed = recorded.source.as_deref() != Some(origin);
    let Standing {
        before,
        hash,
        another_source,
    } = standing(profile, key, origin, recorded, feedback, decisions);
    let added_by_update = if another_source {
        None
    } else {
        added_by_update
    };
    let (known_caps, unknown) = capabilities::split_known(declared);
    for id in &unknown {
        feedback.note(&format!(
            "`{key}` declares an unknown capability `{id}`; it is ignored"
        ));
    }
    let known_ids: BTreeSet<String> = known_caps.iter().map(|c| c.id.to_string()).collect();
    let mut granted = before.clone();
    // CAP-3: capabilities no longer declared are revoked.
    let dropped: Vec<String> = granted
        .iter()
        .filter(|g| removed_by_update.contains(*g))
        .cloned()
        .collect();
    for id in &dropped {
        granted.remove(id);
    }
    if !dropped.is_empty() {
        decisions
            .audit
            .push(entry(profile, key, "revoke", dropped.clone(), "update"));
    }
    let mut by_flag_grant = Vec::new();
    let mut by_flag_revoke = Vec::new();
    if let Some(f) = flags {
        for id in &f.grant {
            if granted.insert(id.clone()) {
                by_flag_grant.push(id.clone());
            }
        }
        for id in &f.revoke {
            if granted.remove(id) {
                by_flag_revoke.push(id.clone());
            }
        }
    }
    let flagged: BTreeSet<&String> = flags
        .map(|f| f.grant.iter().chain(&f.revoke).collect())
        .unwrap_or_default();
    // Ask once per declared set: skip when this set was answered before.
    let answered = hash.as_deref() == Some(capabilities::declared_hash(declared).as_str());
    let candidates: BTreeSet<String> = match added_by_update {
        Some(added) => added.intersection(&known_ids).cloned().collect(),
        None if answered => BTreeSet::new(),
        None => known_ids.clone(),
    };
    let mut prompted_yes = Vec::new();
    let mut refused = Vec::new();
    for c in known_caps {
        if !candidates.contains(c.id)
            || granted.contains(c.id)
            || flagged.contains(&c.id.to_string())
        {
            continue;
        }
        if let Some(plan) = decisions.plan.as_mut() {
            plan.push(PlanItem::Capability {
                plugin: key.to_string(),
                profile: profile.to_string(),
                id: c.id.to_string(),
                risk: c.risk.to_string(),
            });
            continue;
        }
        let yes = prompter.interactive()
            && prompter.confirm(
                &format!(
                    "`{key}` (profile {profile}) asks for the capability {}:\n  it could {}.\n{NOT_A_SANDBOX}\n",
                    c.id, c.risk
                ),
                &format!("Grant {}?", c.id),
            );
        if yes {
            granted.insert(c.id.to_string());
            prompted_yes.push(c.id.to_string());
        } else {
            refused.push(c.id.to_string());
            feedback.note(&format!(
                "capability {} of `{key}` is not granted (it stays off; grant it with `hermes-plugins capabilities {key} --grant {}`{})",
                c.id,
                c.id,
                if c.id == "tools.override" {
                    " or --allow-tool-override"
                } else {
                    ""
                }
            ));
        }
    }
    for (items, action, by) in [
        (by_flag_grant, "grant", "--grant"),
        (by_flag_revoke, "revoke", "--revoke"),
        (prompted_yes, "grant", "prompt"),
        (
            refused,
            "refuse",
            if prompter.interactive() {
                "prompt"
            } else {
                "non-interactive"
            },
        ),
    ] {
        if !items.is_empty() {
            decisions.audit.push(entry(profile, key, action, items, by));
        }
    }
    let record_needed = !declared.is_empty() || !granted.is_empty() || !before.is_empty();
    let changed = granted != before || !answered || source_changed;
    if record_needed && changed {
        let out = capabilities::write(text, key, &granted, declared, &audit::now(), origin)
            .map_err(edit_err)?;
        Ok((out, granted))
    } else {
        Ok((text.to_string(), granted))
    }
}

/// `requires_env` (CAP-10): asks for missing variables (interactive) or lists them.
pub fn environment(
    cx: &super::Context,
    profile: &str,
    key: &str,
    declared: &Declared,
    prompter: &mut dyn Prompter,
    feedback: &mut dyn Feedback,
    decisions: &mut Decisions,
) -> Result<(), ManagerError> {
    let env_path = cx.layout.env_file();
    let current_text = match &decisions.env_text {
        Some(t) => t.clone(),
        None => super::read_user_file(&env_path)?.unwrap_or_default(),
    };
    let known = env_file::parse(&current_text);
    let missing = declared.missing_env(&cx.env_names, &known);
    if missing.is_empty() {
        return Ok(());
    }
    if let Some(plan) = decisions.plan.as_mut() {
        plan.extend(
            missing
                .iter()
                .filter(|(name, ..)| !known::ENV_DENYLIST.contains(&name.as_str()))
                .map(|(name, description, url, secret)| PlanItem::Env {
                    plugin: key.to_string(),
                    name: name.clone(),
                    description: description.clone(),
                    url: url.clone(),
                    secret: *secret,
                }),
        );
        return Ok(());
    }
    if !prompter.interactive() {
        // Nobody to ask: the plugin is held back, which the operation's result says per
        // plugin (`Applied::held_back`, a warning on a terminal).
        return Ok(());
    }
    let mut text = current_text;
    let mut set = Vec::new();
    for (name, description, url, secret) in missing {
        if known::ENV_DENYLIST.contains(&name.as_str()) {
            // Never written for a plugin, as Hermes's own env writer refuses (they change
            // what runs); the validator reports the declaration as an error.
            feedback.note(&format!(
                "{name} is not written to .env for `{key}`: it changes what programs run; set it yourself if you mean it"
            ));
            continue;
        }
        let mut info = format!("`{key}` needs {name}");
        if let Some(d) = description {
            info.push_str(&format!(": {d}"));
        }
        if let Some(u) = url {
            info.push_str(&format!(" (get it at {u})"));
        }
        info.push('\n');
        match prompter.value(&info, name, *secret) {
            Some(v) if !v.is_empty() => match env_file::set(&text, name, &v) {
                Ok(updated) => {
                    text = updated;
                    set.push(name.clone());
                }
                Err(e) => feedback.note(&format!(
                    "{name} left unset ({e}): `{key}` stays disabled until it is set"
                )),
            },
            _ => feedback.note(&format!(
                "{name} left unset: `{key}` stays disabled until it is set"
            )),
        }
    }
    if !set.is_empty() {
        decisions.env_text = Some(text);
        decisions
            .audit
            .push(entry(profile, key, "env", set, "prompt"));
    }
    Ok(())
}

/// Where a plugin comes from, as its grants record it: the normalised repository URL (with
/// the subdirectory), else the directory it was copied from.
pub fn grant_origin(source: &crate::source::Provenance) -> String {
    match &source.url {
        Some(url) => {
            let repo = crate::catalog::url::normalize(url);
            match &source.subdir {
                Some(sub) => format!("{repo}#{sub}"),
                None => repo,
            }
        }
        None => source.spec.without_credentials().display(),
    }
}
