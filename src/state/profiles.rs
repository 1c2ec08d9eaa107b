//! Hermes profiles and the plugins each one enables (STATE-1, RES-1).
//!
//! The default profile's configuration is `<home>/config.yaml`; named profiles live at
//! `<home>/profiles/<name>/config.yaml`. A profile's selection is `plugins.enabled` minus
//! `plugins.disabled` (deny wins).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::located::{Limits, Node, yaml};
use crate::pkgfs::{ReadError, read_limited_text};

/// Largest config.yaml read (4 MiB).
const CONFIG_LIMIT: u64 = 4 * 1024 * 1024;

/// One profile's plugin selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// `default` or the profile directory's name.
    pub name: String,
    /// The config file.
    pub config: PathBuf,
    /// Keys (or names) in `plugins.enabled`.
    pub enabled: BTreeSet<String>,
    /// Keys (or names) in `plugins.disabled`.
    pub disabled: BTreeSet<String>,
    /// `memory.provider`: the memory provider Hermes activates, named by its directory in
    /// `<home>/plugins/` (Hermes's memory loader reads no `plugins.enabled`).
    pub memory_provider: Option<String>,
}

impl Profile {
    /// The effective selection: enabled and not disabled.
    pub fn selected(&self) -> impl Iterator<Item = &String> {
        self.enabled.iter().filter(|k| !self.disabled.contains(*k))
    }
}

/// Why a profile's configuration could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// Reading failed.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: ReadError,
    },
    /// Not valid YAML, or `plugins.enabled`/`disabled` of the wrong shape.
    #[error("{path}:{line}:{column}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        line: u32,
        column: u32,
        /// What is wrong.
        message: String,
    },
}

/// Reads one profile's `config.yaml`; a missing file is an empty selection.
pub fn read_profile(name: &str, config: &Path) -> Result<Profile, ProfileError> {
    let text = match read_limited_text(config, CONFIG_LIMIT) {
        Ok(t) => t,
        Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return profile_from_text(name, config, "");
        }
        Err(source) => {
            return Err(ProfileError::Read {
                path: config.to_path_buf(),
                source,
            });
        }
    };
    profile_from_text(name, config, &text)
}

/// One profile's selection from the text of its `config.yaml` (`config` names it in errors).
pub fn profile_from_text(name: &str, config: &Path, text: &str) -> Result<Profile, ProfileError> {
    let mut profile = Profile {
        name: name.to_string(),
        config: config.to_path_buf(),
        enabled: BTreeSet::new(),
        disabled: BTreeSet::new(),
        memory_provider: None,
    };
    let invalid = |pos: crate::located::Pos, message: String| ProfileError::Invalid {
        path: config.to_path_buf(),
        line: pos.line,
        column: pos.column,
        message,
    };
    let parsed = yaml::parse(
        text,
        Limits {
            max_depth: 64,
            max_nodes: 1_000_000,
        },
    )
    .map_err(|e| invalid(e.pos, e.message))?;
    profile.memory_provider = parsed
        .root
        .get("memory")
        .and_then(|m| m.value.get("provider"))
        .and_then(|p| p.value.as_str())
        .filter(|p| !p.is_empty())
        .map(str::to_string);
    let Some(plugins) = parsed.root.get("plugins") else {
        return Ok(profile);
    };
    let list = |key: &str| -> Result<BTreeSet<String>, ProfileError> {
        let Some(entry) = plugins.value.get(key) else {
            return Ok(BTreeSet::new());
        };
        match entry.value.as_seq() {
            Some(items) => items
                .iter()
                .map(|i: &Node| {
                    i.as_str().map(str::to_string).ok_or_else(|| {
                        invalid(i.pos, format!("plugins.{key} entries must be plugin names"))
                    })
                })
                .collect(),
            None if entry.value.is_null() => Ok(BTreeSet::new()),
            None => Err(invalid(
                entry.value.pos,
                format!("plugins.{key} must be a list of plugin names"),
            )),
        }
    };
    profile.enabled = list("enabled")?;
    profile.disabled = list("disabled")?;
    Ok(profile)
}

/// The profiles under `home`: the default one, then named ones in name order. The default
/// profile's error is returned as an error; named profiles that cannot be read are returned
/// as warnings (and skipped).
pub fn read_profiles(home: &Path) -> Result<(Vec<Profile>, Vec<ProfileError>), ProfileError> {
    let mut profiles = vec![read_profile("default", &home.join("config.yaml"))?];
    let mut warnings = Vec::new();
    let dir = home.join("profiles");
    if let Ok(entries) = std::fs::read_dir(&dir) {
        let mut names: Vec<String> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            // Hermes lists only directories named like profiles; so do we.
            .filter(|name| name != "default" && crate::home::is_profile(name))
            .collect();
        names.sort();
        for name in names {
            match read_profile(&name, &dir.join(&name).join("config.yaml")) {
                Ok(p) => profiles.push(p),
                Err(e) => warnings.push(e),
            }
        }
    }
    Ok((profiles, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_and_errors() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join("config.yaml"),
            "plugins:\n  enabled: [a, b]\n  disabled: [b]\n",
        )
        .unwrap();
        std::fs::create_dir_all(home.path().join("profiles/work")).unwrap();
        std::fs::write(
            home.path().join("profiles/work/config.yaml"),
            "plugins:\n  enabled:\n    - c\n",
        )
        .unwrap();
        std::fs::create_dir_all(home.path().join("profiles/broken")).unwrap();
        std::fs::write(
            home.path().join("profiles/broken/config.yaml"),
            "plugins: [unclosed\n",
        )
        .unwrap();
        let (profiles, warnings) = read_profiles(home.path()).unwrap();
        assert_eq!(profiles.len(), 2);
        assert_eq!(profiles[0].selected().collect::<Vec<_>>(), ["a"]);
        assert_eq!(profiles[1].selected().collect::<Vec<_>>(), ["c"]);
        assert_eq!(warnings.len(), 1);
        std::fs::write(
            home.path().join("config.yaml"),
            "plugins:\n  enabled: yes\n",
        )
        .unwrap();
        assert!(read_profiles(home.path()).is_err());
    }
}
