//! Phase 2, consent (CAP-2…CAP-10), the one place the user is asked: surface additions of
//! replaced plugins, capability grants per profile and plugin, `requires_env` values —
//! decided now (or, when planning, listed) and written with the generation by
//! [`super::publish`]. What a grant covers, what an update adds and what is asked is decided
//! in [`crate::consent`]; this module asks, notes and records.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::Change;
use super::select::Selected;
use crate::consent::audit::{self, AuditEntry};
use crate::consent::capabilities::{self, Question};
use crate::consent::declared::Declared;
use crate::consent::env_file;
use crate::consent::prompt::NOT_A_SANDBOX;
use crate::consent::surface::{Surface, SurfaceDiff};
use crate::exit::Code;
use crate::generation::doc::GenerationDoc;
use crate::known;
use crate::manager::plan::PlanItem;
use crate::manager::{Context, Feedback, ManagerError, Prompter};
use crate::state::installed::Installed;
use crate::store::Store;

/// What consent decided, to be written with the generation.
#[derive(Debug, Default)]
pub(super) struct Decisions {
    /// Audit entries to append after the commit.
    pub audit: Vec<AuditEntry>,
    /// New `.env` texts, by file (each profile has its own), when values were entered.
    pub env_texts: std::collections::BTreeMap<std::path::PathBuf, String>,
    /// Whether surface additions were accepted (dependency additions included).
    pub surface_accepted: bool,
    /// Planning (`--dry-run`): what would be asked is recorded here instead of asked.
    pub plan: Option<Vec<PlanItem>>,
}

/// The code of a consent not given: nobody could answer (`consent-required`), or the answer
/// was no (`consent-refused`).
pub(super) fn refusal_code(prompter: &dyn Prompter) -> Code {
    if prompter.interactive() {
        Code::ConsentRefused
    } else {
        Code::ConsentRequired
    }
}

/// Who is asked, where notes go, and where the answers are kept — for the length of the phase.
pub(super) struct Asker<'a> {
    prompter: &'a mut dyn Prompter,
    feedback: &'a mut dyn Feedback,
    decisions: &'a mut Decisions,
}

impl<'a> Asker<'a> {
    /// Asks through `prompter`, notes through `feedback`, keeps the answers in `decisions`.
    pub fn new(
        prompter: &'a mut dyn Prompter,
        feedback: &'a mut dyn Feedback,
        decisions: &'a mut Decisions,
    ) -> Asker<'a> {
        Asker {
            prompter,
            feedback,
            decisions,
        }
    }
}

/// A plugin in a profile, with where it comes from (see [`capabilities::origin`]).
struct Subject<'a> {
    profile: &'a str,
    /// The profile's config file (where its grants are recorded).
    config: &'a std::path::Path,
    key: &'a str,
    origin: &'a str,
}

/// Each plugin's declared facts, read from its store tree once.
pub(super) struct Manifests<'a> {
    store: &'a Store,
    installed: &'a Installed,
    read: BTreeMap<String, Declared>,
}

impl<'a> Manifests<'a> {
    /// Reads lazily from `store` the plugins `installed` records.
    pub fn new(store: &'a Store, installed: &'a Installed) -> Manifests<'a> {
        Manifests {
            store,
            installed,
            read: BTreeMap::new(),
        }
    }

    /// What `key` declares (nothing, for a key that is not installed).
    pub fn of(&mut self, key: &str) -> &Declared {
        let (store, installed) = (self.store, self.installed);
        self.read.entry(key.to_string()).or_insert_with(|| {
            installed
                .plugins
                .get(key)
                .map(|p| Declared::read(&store.path_of(&p.store_key)))
                .unwrap_or_default()
        })
    }
}

/// Asks (or plans) everything the change needs consent for; edits the profiles' texts and
/// fills in the selections' grants. Returns the surface diffs of replaced plugins.
pub(super) fn consent(
    cx: &Context,
    change: &Change,
    installed: &Installed,
    selected: &mut Selected,
    current: Option<&GenerationDoc>,
    manifests: &mut Manifests,
    mut asker: Asker,
) -> Result<BTreeMap<String, SurfaceDiff>, ManagerError> {
    change.grants.check()?;
    let store = manifests.store;
    let replaced: Vec<(String, PathBuf, PathBuf)> = selected
        .keys
        .iter()
        .filter_map(|k| {
            let old = current?.plugin(k)?;
            let new = installed.plugins.get(k)?;
            (old.tree != new.tree).then(|| {
                (
                    k.clone(),
                    store.path_of(&old.store_key),
                    store.path_of(&new.store_key),
                )
            })
        })
        .collect();
    let diffs = asker.surface(
        &replaced,
        Accepted {
            surface: change.accept_surface,
            dependencies: change.deps == crate::manager::DepsConsent::Yes,
        },
    )?;
    let cap_changes = |key: &str, added: bool| -> Option<BTreeSet<String>> {
        diffs.get(key).map(|d| {
            let list = if added { &d.added } else { &d.removed };
            list.iter()
                .filter(|c| c.kind == "capability")
                .map(|c| c.item.clone())
                .collect()
        })
    };
    for (profile, state) in selected.states.iter_mut() {
        let Some(selection) = selected.selections.get_mut(profile) else {
            continue;
        };
        let mut consider: BTreeSet<String> = selection.enabled.iter().cloned().collect();
        if profile == &cx.profile {
            consider.extend(
                change
                    .grants
                    .targets
                    .iter()
                    .filter_map(|t| installed.find(t).map(|p| p.key.clone())),
            );
        }
        for key in consider {
            let Some(record) = installed.plugins.get(&key) else {
                continue;
            };
            let was_enabled = current.is_some_and(|d| {
                d.profiles
                    .get(profile)
                    .is_some_and(|s| s.enabled.contains(&key))
            });
            // A target may be named by key or by manifest name, as on the command line.
            let targeted = profile == &cx.profile
                && change
                    .grants
                    .targets
                    .iter()
                    .any(|t| installed.find(t).is_some_and(|p| p.key == key));
            let updated = diffs.contains_key(&key);
            let declared = manifests.of(&key).clone();
            let origin = capabilities::origin(&record.source);
            let recorded = capabilities::read(&state.text, &key).unwrap_or_default();
            let granted =
                if was_enabled && !updated && !targeted && !recorded.for_another_source(&origin) {
                    recorded.granted
                } else {
                    let added = cap_changes(&key, true);
                    let dropped = no_longer_declared(
                        cx,
                        store,
                        profile,
                        &key,
                        &declared.capabilities,
                        cap_changes(&key, false),
                        !was_enabled && !recorded.granted.is_empty(),
                    );
                    let (grant, revoke): (&[String], &[String]) = if targeted {
                        (&change.grants.grant, &change.grants.revoke)
                    } else {
                        (&[], &[])
                    };
                    let (text, granted) = asker.capabilities(
                        &Subject {
                            profile,
                            config: &state.config,
                            key: &key,
                            origin: &origin,
                        },
                        &state.text,
                        &Question {
                            declared: &declared.capabilities,
                            added: added.as_ref(),
                            no_longer_declared: &dropped,
                            grant,
                            revoke,
                        },
                    )?;
                    state.text = text;
                    granted
                };
            // Asked whenever a plugin comes into the profile or changes — by `enable`, by a
            // `sync` of a hand-edited selection, by `update` — not only when named.
            if selection.enabled.contains(&key) && (!was_enabled || updated) {
                asker.environment(cx, profile, &key, &declared)?;
            }
            if selection.enabled.contains(&key) && !granted.is_empty() {
                selection
                    .grants
                    .insert(key.clone(), granted.into_iter().collect());
            }
        }
    }
    Ok(diffs)
}

/// CAP-3's "no longer declared": the capabilities an update of the plugin now stops
/// declaring (`removed`, from its surface diff) — and, when it comes back into `profile`
/// after a stretch disabled (`returning`), those it declared when the profile last had it
/// enabled and does not declare now: an update while it was disabled has no surface diff,
/// and its grants must not outlive the declaration. Read from the newest generation that
/// selects it there (its store tree lives as long as that generation).
fn no_longer_declared(
    cx: &Context,
    store: &crate::store::Store,
    profile: &str,
    key: &str,
    declared: &BTreeSet<String>,
    removed: Option<BTreeSet<String>>,
    returning: bool,
) -> BTreeSet<String> {
    let mut out = removed.unwrap_or_default();
    if !returning {
        return out;
    }
    let layout = &cx.layout;
    let then = crate::generation::current::numbers(layout)
        .into_iter()
        .rev()
        .filter_map(|n| GenerationDoc::read(&layout.generation(n)).ok())
        .find(|doc| {
            doc.profiles
                .get(profile)
                .is_some_and(|s| s.enabled.iter().any(|k| k == key))
        });
    if let Some(plugin) = then.as_ref().and_then(|doc| doc.plugin(key)) {
        let before = Declared::read(&store.path_of(&plugin.store_key)).capabilities;
        out.extend(before.difference(declared).cloned());
    }
    out
}

/// What a command's flags accepted in advance of the additions of replaced plugins.
#[derive(Clone, Copy)]
struct Accepted {
    /// `--yes`: everything added.
    surface: bool,
    /// `--yes-deps`: added dependencies (what dependency consent is about).
    dependencies: bool,
}

impl Asker<'_> {
    /// Surface consent (CAP-7) for plugins whose code changes: additions need `--yes` or a
    /// yes at the prompt (added dependencies alone: `--yes-deps` too); removals are shown.
    /// Returns each replaced plugin's diff.
    fn surface(
        &mut self,
        replaced: &[(String, PathBuf, PathBuf)],
        accept: Accepted,
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
                self.feedback.note(&format!(
                    "`{key}` no longer provides: {}",
                    diff.removed
                        .iter()
                        .map(|c| format!("{} {}", c.kind, c.item))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            if !diff.added.is_empty() {
                self.accept_additions(key, &diff, accept)?;
            }
            diffs.insert(key.clone(), diff);
        }
        Ok(diffs)
    }

    /// Asks (or plans) the additions of one replaced plugin; refused is an error that
    /// changes nothing.
    fn accept_additions(
        &mut self,
        key: &str,
        diff: &SurfaceDiff,
        accept: Accepted,
    ) -> Result<(), ManagerError> {
        let only_dependencies = diff.added.iter().all(|c| c.kind == "dependency");
        if accept.dependencies && only_dependencies && !accept.surface {
            self.decisions.surface_accepted = true;
            self.decisions.audit.push(AuditEntry::now(
                "*",
                key,
                "update",
                diff.added
                    .iter()
                    .map(|c| format!("{} {}", c.kind, c.item))
                    .collect(),
                "--yes-deps",
            ));
            return Ok(());
        }
        let accept = accept.surface;
        let lines = diff.lines();
        if let Some(plan) = self.decisions.plan.as_mut() {
            plan.push(PlanItem::Surface {
                plugin: key.to_string(),
                added: lines,
            });
            return Ok(());
        }
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
        let interactive = self.prompter.interactive();
        let (ok, by) = if accept {
            (true, "--yes")
        } else if interactive {
            (
                self.prompter.confirm(&text, "Accept these additions?"),
                "prompt",
            )
        } else {
            (false, "")
        };
        if !ok {
            return Err(ManagerError::coded(
                refusal_code(&*self.prompter),
                format!(
                    "{text}the additions were not accepted: nothing was changed{}",
                    if interactive {
                        ""
                    } else {
                        " (pass --yes to accept them)"
                    }
                ),
            ));
        }
        self.decisions.surface_accepted = true;
        self.decisions.audit.push(AuditEntry::now(
            "*",
            key,
            "update",
            diff.added
                .iter()
                .map(|c| format!("{} {}", c.kind, c.item))
                .collect(),
            by,
        ));
        Ok(())
    }

    /// The recorded grants of the subject, unless they were given to a plugin from another
    /// source: those do not carry over (revoked, audited, asked again). Returns what stands
    /// and the declared-set hash answered for it.
    fn standing(
        &mut self,
        at: &Subject,
        recorded: capabilities::Grants,
    ) -> (BTreeSet<String>, Option<String>) {
        if !recorded.for_another_source(at.origin) {
            return (recorded.granted, recorded.hash);
        }
        if !recorded.granted.is_empty() {
            self.decisions.audit.push(AuditEntry::now(
                at.profile,
                at.key,
                "revoke",
                recorded.granted.iter().cloned().collect(),
                "source changed",
            ));
            self.feedback.note(&format!(
                "`{}` now comes from {}; what was granted to it from {} is asked again",
                at.key,
                at.origin,
                recorded.source.as_deref().unwrap_or_default()
            ));
        }
        (BTreeSet::new(), None)
    }

    /// Capability consent (CAP-2…CAP-4) for one plugin in one profile: decides the question
    /// against the recorded grants ([`capabilities::decide`]), asks what is left to ask (or
    /// plans it), audits every change. Returns the new config text (or the same text when
    /// nothing changes) and what is granted.
    fn capabilities(
        &mut self,
        at: &Subject,
        text: &str,
        question: &Question,
    ) -> Result<(String, BTreeSet<String>), ManagerError> {
        let edit_err = |source| crate::manager::Refusal::Config {
            path: at.config.to_path_buf(),
            source,
        };
        let recorded = capabilities::read(text, at.key).map_err(edit_err)?;
        let source_changed = recorded.source.as_deref() != Some(at.origin);
        let another_source = recorded.for_another_source(at.origin);
        let (before, hash) = self.standing(at, recorded);
        // What an update added counts only against grants that carry over.
        let question = Question {
            added: question.added.filter(|_| !another_source),
            ..*question
        };
        let mut decision = capabilities::decide(&before, hash.as_deref(), &question);
        let (profile, key) = (at.profile, at.key);
        for id in &decision.unknown {
            self.feedback.note(&format!(
                "`{key}` declares an unknown capability `{id}`; it is ignored"
            ));
        }
        let mut prompted_yes = Vec::new();
        let mut refused = Vec::new();
        for c in std::mem::take(&mut decision.ask) {
            if let Some(plan) = self.decisions.plan.as_mut() {
                plan.push(PlanItem::Capability {
                    plugin: key.to_string(),
                    profile: profile.to_string(),
                    id: c.id.to_string(),
                    risk: c.risk.to_string(),
                });
                continue;
            }
            let yes = self.prompter.interactive()
                && self.prompter.confirm(
                    &format!(
                        "`{key}` (profile {profile}) asks for the capability {}:\n  it could {}.\n{NOT_A_SANDBOX}\n",
                        c.id, c.risk
                    ),
                    &format!("Grant {}?", c.id),
                );
            if yes {
                decision.granted.insert(c.id.to_string());
                prompted_yes.push(c.id.to_string());
            } else {
                refused.push(c.id.to_string());
                self.feedback.note(&format!(
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
        let refused_by = if self.prompter.interactive() {
            "prompt"
        } else {
            "non-interactive"
        };
        for (items, action, by) in [
            (std::mem::take(&mut decision.dropped), "revoke", "update"),
            (
                std::mem::take(&mut decision.flag_granted),
                "grant",
                "--grant",
            ),
            (
                std::mem::take(&mut decision.flag_revoked),
                "revoke",
                "--revoke",
            ),
            (prompted_yes, "grant", "prompt"),
            (refused, "refuse", refused_by),
        ] {
            if !items.is_empty() {
                self.decisions
                    .audit
                    .push(AuditEntry::now(profile, key, action, items, by));
            }
        }
        if decision.rewrites(&before, &question, source_changed) {
            let out = capabilities::write(
                text,
                key,
                &decision.granted,
                question.declared,
                &audit::now(),
                at.origin,
            )
            .map_err(edit_err)?;
            Ok((out, decision.granted))
        } else {
            Ok((text.to_string(), decision.granted))
        }
    }

    /// `requires_env` (CAP-10): asks for missing variables (interactive) or lists them.
    fn environment(
        &mut self,
        cx: &Context,
        profile: &str,
        key: &str,
        declared: &Declared,
    ) -> Result<(), ManagerError> {
        let env_path = cx.layout.env_file(profile);
        let current_text = match self.decisions.env_texts.get(&env_path) {
            Some(t) => t.clone(),
            None => crate::manager::read_user_file(&env_path)?.unwrap_or_default(),
        };
        let known = env_file::parse(&current_text);
        let missing = declared.missing_env(&cx.env_names, &known);
        if missing.is_empty() {
            return Ok(());
        }
        if let Some(plan) = self.decisions.plan.as_mut() {
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
        if !self.prompter.interactive() {
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
                self.feedback.note(&format!(
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
            match self.prompter.value(&info, name, *secret) {
                Some(v) if !v.is_empty() => match env_file::set(&text, name, &v) {
                    Ok(updated) => {
                        text = updated;
                        set.push(name.clone());
                    }
                    Err(e) => self.feedback.note(&format!(
                        "{name} left unset ({e}): `{key}` stays disabled until it is set"
                    )),
                },
                _ => self.feedback.note(&format!(
                    "{name} left unset: `{key}` stays disabled until it is set"
                )),
            }
        }
        if !set.is_empty() {
            self.decisions.env_texts.insert(env_path, text);
            self.decisions
                .audit
                .push(AuditEntry::now(profile, key, "env", set, "prompt"));
        }
        Ok(())
    }
}
