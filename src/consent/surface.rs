//! A plugin's surface (CAP-7): everything it adds to Hermes that a user consents to — tools,
//! hooks, middleware, Python dependencies, capabilities, `requires_auth` providers, MCP
//! servers (with their trust), skills, and a `desktop/` half — and the difference between two
//! versions of it. Read from the package without executing it: the manifest plus the static
//! registrations of `register(ctx)`.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;

use crate::check::static_py::{self, registrations::RegKind};
use crate::package::{self, Content, Mode};

/// What a package exposes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Surface {
    /// Tool names (declared or registered).
    pub tools: BTreeSet<String>,
    /// Hook names.
    pub hooks: BTreeSet<String>,
    /// Middleware names.
    pub middleware: BTreeSet<String>,
    /// Python requirements as declared.
    pub dependencies: BTreeSet<String>,
    /// Capability ids declared.
    pub capabilities: BTreeSet<String>,
    /// Auth providers required.
    pub requires_auth: BTreeSet<String>,
    /// MCP servers as `name (trust)`.
    pub mcp_servers: BTreeSet<String>,
    /// Skill names.
    pub skills: BTreeSet<String>,
    /// Whether it ships a `desktop/` half.
    pub desktop: bool,
}

impl Surface {
    /// Reads the surface of the package in `dir`.
    pub fn of(dir: &Path) -> std::io::Result<Surface> {
        let loaded = package::load_dir(dir, Mode::Runtime)?;
        let mut s = Surface {
            desktop: dir.join("desktop").is_dir(),
            ..Surface::default()
        };
        match &loaded.content {
            Content::Native(native) => {
                if let Some(m) = &native.manifest {
                    s.tools
                        .extend(m.provides_tools.iter().map(|t| t.value.clone()));
                    s.hooks
                        .extend(m.provides_hooks.iter().map(|t| t.value.clone()));
                    s.middleware
                        .extend(m.provides_middleware.iter().map(|t| t.value.clone()));
                    s.capabilities
                        .extend(m.capabilities.iter().map(|t| t.value.clone()));
                    s.requires_auth
                        .extend(m.requires_auth.iter().map(|t| t.value.clone()));
                }
                s.dependencies
                    .extend(native.declarations.managed.iter().map(|r| r.raw.clone()));
                s.dependencies.extend(
                    native
                        .declarations
                        .unmanaged
                        .iter()
                        .map(|(r, _)| r.raw.clone()),
                );
                if let Some(root) = &loaded.root {
                    let analysis = static_py::analyze(root);
                    for r in &analysis.registrations.found {
                        let set = match r.kind {
                            RegKind::Tool => &mut s.tools,
                            RegKind::Hook => &mut s.hooks,
                            RegKind::Middleware => &mut s.middleware,
                        };
                        set.insert(r.name.clone());
                    }
                }
            }
            Content::Pip(p) => {
                // A pip plugin declares capabilities as `<plugin-id>.<capability-id>`.
                s.capabilities.extend(
                    p.capabilities
                        .iter()
                        .filter_map(|c| c.name.split_once('.').map(|(_, cap)| cap.to_string())),
                );
            }
            Content::Portable(p) => {
                s.skills.extend(p.skills.iter().map(|k| k.name.clone()));
                s.mcp_servers.extend(
                    p.mcp
                        .servers
                        .iter()
                        .map(|m| format!("{} ({})", m.name, m.trust.as_str())),
                );
            }
        }
        Ok(s)
    }
}

/// One category of additions or removals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// `tool`, `hook`, `middleware`, `dependency`, `capability`, `requires_auth`,
    /// `mcp_server`, `skill`, `desktop`.
    pub kind: &'static str,
    /// The item.
    pub item: String,
}

/// The difference between an installed surface and a candidate.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SurfaceDiff {
    /// New in the candidate: these need consent.
    pub added: Vec<Change>,
    /// Gone from the candidate: shown, not asked.
    pub removed: Vec<Change>,
}

impl SurfaceDiff {
    /// From `old` to `new`.
    pub fn between(old: &Surface, new: &Surface) -> SurfaceDiff {
        let mut diff = SurfaceDiff::default();
        let sets: [(&'static str, &BTreeSet<String>, &BTreeSet<String>); 8] = [
            ("tool", &old.tools, &new.tools),
            ("hook", &old.hooks, &new.hooks),
            ("middleware", &old.middleware, &new.middleware),
            ("dependency", &old.dependencies, &new.dependencies),
            ("capability", &old.capabilities, &new.capabilities),
            ("requires_auth", &old.requires_auth, &new.requires_auth),
            ("mcp_server", &old.mcp_servers, &new.mcp_servers),
            ("skill", &old.skills, &new.skills),
        ];
        for (kind, a, b) in sets {
            diff.added.extend(b.difference(a).map(|i| Change {
                kind,
                item: i.clone(),
            }));
            diff.removed.extend(a.difference(b).map(|i| Change {
                kind,
                item: i.clone(),
            }));
        }
        match (old.desktop, new.desktop) {
            (false, true) => diff.added.push(Change {
                kind: "desktop",
                item: "desktop/ half".into(),
            }),
            (true, false) => diff.removed.push(Change {
                kind: "desktop",
                item: "desktop/ half".into(),
            }),
            _ => {}
        }
        diff
    }

    /// Additions of one kind.
    pub fn added_of(&self, kind: &str) -> Vec<&str> {
        self.added
            .iter()
            .filter(|c| c.kind == kind)
            .map(|c| c.item.as_str())
            .collect()
    }

    /// Whether nothing is added or removed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
    }

    /// Human lines: `+ tool forecast`, `- hook on_start`.
    pub fn lines(&self) -> Vec<String> {
        self.added
            .iter()
            .map(|c| format!("+ {} {}", c.kind, c.item))
            .chain(
                self.removed
                    .iter()
                    .map(|c| format!("- {} {}", c.kind, c.item)),
            )
            .collect()
    }
}
