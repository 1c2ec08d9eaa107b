//! Where things live under `<HERMES_HOME>` and its `pm/` (GEN-1).

use std::path::{Path, PathBuf};

use super::key::{KeyError, join_key};

/// The package manager's directory layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// `HERMES_HOME`.
    pub home: PathBuf,
    /// `<home>/pm`.
    pub pm: PathBuf,
}

impl Layout {
    /// The layout for a Hermes home (made absolute against the working directory).
    pub fn new(home: &Path) -> Layout {
        let home = std::path::absolute(home).unwrap_or_else(|_| home.to_path_buf());
        Layout {
            pm: home.join("pm"),
            home,
        }
    }

    /// `pm/generations`: one directory per published generation.
    pub fn generations(&self) -> PathBuf {
        self.pm.join("generations")
    }

    /// `pm/generations/<n>`.
    pub fn generation(&self, number: u64) -> PathBuf {
        self.generations().join(number.to_string())
    }

    /// `pm/current`: the symlink to the active generation.
    pub fn current(&self) -> PathBuf {
        self.pm.join("current")
    }

    /// `pm/store`: content-addressed plugin trees.
    pub fn store(&self) -> PathBuf {
        self.pm.join("store")
    }

    /// `pm/cache/uv`: uv's cache (downloads, built wheels, index metadata).
    pub fn uv_cache(&self) -> PathBuf {
        self.pm.join("cache").join("uv")
    }

    /// `pm/cache/git`: bare repositories of pinned sources (catalog review, `nix lock`).
    pub fn git_cache(&self) -> PathBuf {
        self.pm.join("cache").join("git")
    }

    /// `pm/cache/catalogs`: remote catalogs (git, JSON feeds) as directories of entry files.
    pub fn catalog_cache(&self) -> PathBuf {
        self.pm.join("cache").join("catalogs")
    }

    /// `pm/runtime`: the `exec` bootstrap, one directory per content digest.
    pub fn runtime(&self) -> PathBuf {
        self.pm.join("runtime")
    }

    /// `pm/cache/wheels`: wheels admitted after their checks, by sha256.
    pub fn wheel_cache(&self) -> PathBuf {
        self.pm.join("cache").join("wheels")
    }

    /// `pm/lock`: the writer lock.
    pub fn lock_file(&self) -> PathBuf {
        self.pm.join("lock")
    }

    /// `pm/journal.json`: the in-flight operation, if any.
    pub fn journal(&self) -> PathBuf {
        self.pm.join("journal.json")
    }

    /// `pm/installed.json` (STATE-2).
    pub fn installed(&self) -> PathBuf {
        self.pm.join("installed.json")
    }

    /// `pm/tmp`: scratch space for fetches (same file system as the store).
    pub fn tmp(&self) -> PathBuf {
        self.pm.join("tmp")
    }

    /// `pm/backups`: copies of user files taken before an edit, until the edit is committed.
    pub fn backups(&self) -> PathBuf {
        self.pm.join("backups")
    }

    /// `<home>/plugin-data/<key>`: a plugin's own data (never inside a generation). Fails for
    /// anything that is not a plugin key, so the path is always inside `plugin-data/`.
    pub fn plugin_data(&self, key: &str) -> Result<PathBuf, KeyError> {
        join_key(&self.home.join("plugin-data"), key)
    }

    /// `pm/settings.json`: the recorded core, interpreter and indexes.
    pub fn settings(&self) -> PathBuf {
        self.pm.join("settings.json")
    }

    /// `pm/audit.log`: who granted what, when.
    pub fn audit_log(&self) -> PathBuf {
        self.pm.join("audit.log")
    }

    /// `<profile home>/.env`: the environment file Hermes reads with python-dotenv for
    /// `profile` (`<home>/.env` for `default`, `<home>/profiles/<name>/.env` for another,
    /// as Hermes's `HERMES_HOME` for that profile is its own directory).
    pub fn env_file(&self, profile: &str) -> PathBuf {
        self.profile_home(profile).join(".env")
    }

    /// `<home>/profiles`: one directory per named profile.
    pub fn profiles(&self) -> PathBuf {
        self.home.join("profiles")
    }

    /// A profile's own home: `<home>` for `default`, else `<home>/profiles/<name>` (what
    /// Hermes's `HERMES_HOME` is for that profile).
    pub fn profile_home(&self, profile: &str) -> PathBuf {
        if profile == "default" {
            self.home.clone()
        } else {
            self.profiles().join(profile)
        }
    }

    /// A profile's own `plugins/` (the upstream layout: plugins placed by hand, which Hermes
    /// loads itself).
    pub fn user_plugins(&self, profile: &str) -> PathBuf {
        self.profile_home(profile).join("plugins")
    }

    /// The `config.yaml` of a profile: `<home>/config.yaml` for `default`, else
    /// `<home>/profiles/<name>/config.yaml`.
    pub fn config(&self, profile: &str) -> PathBuf {
        if profile == "default" {
            self.home.join("config.yaml")
        } else {
            self.profiles().join(profile).join("config.yaml")
        }
    }
}
