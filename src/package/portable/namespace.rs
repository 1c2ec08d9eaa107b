//! The skill namespace of a portable package: `agent-plugin-<slug>-<hash>` (MAN-5).

use sha2::{Digest, Sha256};

/// The namespace for a portable package's skills, derived from its plugin key.
///
/// `slug` is the key lowercased with every character outside `[a-z0-9_-]` replaced by `-`,
/// leading and trailing `-`/`_` stripped (`plugin` if nothing is left); `hash` is the first 8
/// hex digits of the SHA-256 of the original key's UTF-8 bytes. Two keys that sanitise to the
/// same slug still get different namespaces.
pub fn skill_namespace(key: &str) -> String {
    let slug: String = key
        .chars()
        .flat_map(char::to_lowercase)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let slug = slug.trim_matches(|c| c == '-' || c == '_');
    let slug = if slug.is_empty() { "plugin" } else { slug };
    let digest = Sha256::digest(key.as_bytes());
    let hash = crate::hash::hex(&digest[..4]);
    format!("agent-plugin-{slug}-{hash}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_matches_the_reference_algorithm() {
        // Expected values computed independently with Python's hashlib.
        assert_eq!(skill_namespace("pstack"), "agent-plugin-pstack-7171b73f");
        assert_eq!(
            skill_namespace("tools/My Plugin"),
            "agent-plugin-tools-my-plugin-8ebc5293"
        );
        assert_eq!(skill_namespace("__"), "agent-plugin-plugin-9911f4d2");
        assert_eq!(skill_namespace("a/b"), "agent-plugin-a-b-c14cddc0");
        assert_eq!(skill_namespace("a-b"), "agent-plugin-a-b-d44362d6");
    }
}
