//! The refusals of the operations (exit 1, code `refused`): each a case with what it is about
//! and what to do, worded in one place. Validation, consent and resolution conflicts have
//! their own [`super::ManagerError`] variants and codes.

use std::path::PathBuf;

/// Why an operation refused.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// The source could not be used as a plugin (a subdirectory outside the checkout, `--ref`
    /// where there are no revisions, a local wheel that cannot be read).
    #[error(transparent)]
    Source(crate::source::FetchError),
    /// The fetched tree cannot be copied as the store keeps trees (a link leaving it, a
    /// special file, too large).
    #[error(transparent)]
    Tree(crate::store::StoreError),
    /// A name that cannot be a plugin key (a path, a reserved name).
    #[error(transparent)]
    Key(crate::home::key::KeyError),
    /// A project tree of a pip-distributed plugin, not its release.
    #[error(
        "{shown} is the source of a pip-distributed plugin ({}): install its release from the package index (`hermes-plugins install pypi:{}`), which Hermes discovers through its entry points; from source trees hermes-plugins installs plugin directories (plugin.yaml or plugin.json)",
        .project.as_deref().unwrap_or("a Python project"),
        .project.as_deref().unwrap_or("NAME")
    )]
    ProjectSource {
        /// The source as shown.
        shown: String,
        /// The project's name, when its metadata gives one.
        project: Option<String>,
    },
    /// A release on the index with only a source distribution.
    #[error(
        "{spec}: {release} has no wheel for this interpreter (only a source distribution): hermes-plugins installs plugins from the package index as wheels, the files it can check before anything runs"
    )]
    NoWheel {
        /// The source as shown.
        spec: String,
        /// `name==version`.
        release: String,
    },
    /// Two plugins Hermes would import under the same module name.
    #[error(
        "`{key}` would import as `{module}`, as the installed `{other}` does; Hermes cannot load both (remove `{other}` first)"
    )]
    SameModule {
        /// The plugin asked for.
        key: String,
        /// The module name both map to.
        module: String,
        /// The installed one.
        other: String,
    },
    /// `--no-deps` for a plugin whose dependencies a profile uses now.
    #[error(
        "`{key}` is enabled; --no-deps cannot replace an active plugin (disable it first, or consent with --yes-deps)"
    )]
    ActiveWithoutDeps {
        /// The plugin.
        key: String,
    },
    /// An update whose new version carries another name.
    #[error("`{key}` now calls itself `{new}`; install it under its new name instead")]
    Renamed {
        /// The installed key.
        key: String,
        /// The name the new version gives.
        new: String,
    },
    /// Another run kept changing a plugin while it was being fetched.
    #[error(
        "`{key}` changed while it was being fetched, {attempts} times (other hermes-plugins runs keep changing it); nothing was updated, run the update again later"
    )]
    KeptChanging {
        /// The plugin.
        key: String,
        /// How many times it was fetched.
        attempts: usize,
    },
    /// `rollback` with no target from a generation without a parent.
    #[error("generation {0} has no parent to roll back to (name one: `hermes-plugins rollback N`)")]
    NoParent(u64),
    /// A profile's config file that cannot be read or edited as asked (its YAML, its
    /// recorded grants).
    #[error("{}: {source}", .path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: crate::state::config_edit::EditError,
    },
}
