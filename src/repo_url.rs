//! Repository URL normalisation, so that the same repository written two ways is recognised
//! (a catalog's duplicate entries, the kill list, a consent recorded for a repository, a
//! pack's plugins). A leaf: the catalog, consent and the manager all compare through it.

/// The host of a URL as [`normalize`] reads it (lowercase; scheme, user info, port and a
/// leading `www.` dropped): what the host rules of catalog fields compare.
pub fn host(url: &str) -> String {
    normalize(url)
        .split('/')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Normalises a repository URL to `host/owner/repo` (lowercase) for comparison.
///
/// The scheme (`https://`, `http://`, `ssh://`, `git://`, `git+https://`, …), user info
/// (`git@`, `user:token@`), the port, a leading `www.`, a query or fragment, trailing `/` and
/// a trailing `.git` are dropped; the scp-like form `git@host:owner/repo` becomes
/// `host/owner/repo`; repeated slashes collapse. The result is only a comparison key, never a
/// URL to fetch.
pub fn normalize(url: &str) -> String {
    let text = url.trim();
    let (rest, had_scheme) = match text.find("://") {
        Some(i)
            if i > 0
                && text[..i]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-')) =>
        {
            (&text[i + 3..], true)
        }
        _ => (text, false),
    };
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let slash = rest.find('/');
    let colon = rest.find(':');
    // `git@host:owner/repo` (scp-like): the colon comes before any slash and is not a port.
    let scp_like = !had_scheme
        && match (colon, slash) {
            (Some(c), Some(s)) => c < s && !rest[c + 1..s].chars().all(|ch| ch.is_ascii_digit()),
            (Some(c), None) => !rest[c + 1..].chars().all(|ch| ch.is_ascii_digit()),
            _ => false,
        };
    let (authority, path) = if scp_like {
        let c = colon.unwrap_or_default();
        (&rest[..c], &rest[c + 1..])
    } else {
        match slash {
            Some(s) => (&rest[..s], &rest[s + 1..]),
            None => (rest, ""),
        }
    };
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let host = strip_port(host_port).to_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host);
    let mut path = path
        .split('/')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("/")
        .to_lowercase();
    while let Some(stripped) = path.strip_suffix(".git") {
        path = stripped.trim_end_matches('/').to_string();
    }
    if path.is_empty() {
        host.to_string()
    } else {
        format!("{host}/{path}")
    }
}

/// `host:port` → `host` (IPv6 literals in brackets keep their colons).
fn strip_port(host_port: &str) -> &str {
    if let Some(end) = host_port.find(']') {
        return &host_port[..=end];
    }
    match host_port.rfind(':') {
        Some(i) if host_port[i + 1..].chars().all(|c| c.is_ascii_digit()) => &host_port[..i],
        _ => host_port,
    }
}

#[cfg(test)]
mod tests {
    use super::{host, normalize};

    #[test]
    fn spellings_of_one_repository_agree() {
        for url in [
            "https://github.com/owner/repo",
            "https://github.com/Owner/Repo.git",
            "https://github.com/owner/repo/",
            "https://github.com/owner/repo.git/",
            "http://www.github.com/owner/repo",
            "HTTPS://GitHub.com/OWNER/repo",
            "ssh://git@github.com/owner/repo.git",
            "ssh://git@github.com:22/owner/repo.git",
            "git://github.com/owner/repo",
            "git+https://github.com/owner/repo",
            "git@github.com:owner/repo.git",
            "git@github.com:owner/repo",
            "https://user:token@github.com/owner/repo",
            "https://github.com:443/owner/repo",
            "https://github.com//owner//repo",
            "https://github.com/owner/repo?tab=readme#top",
            "github.com/owner/repo",
            "  https://github.com/owner/repo  ",
        ] {
            assert_eq!(normalize(url), "github.com/owner/repo", "{url}");
        }
    }

    #[test]
    fn hosts_as_the_host_rules_compare_them() {
        assert_eq!(
            host("https://raw.githubusercontent.com/o/r/sha/i.png"),
            "raw.githubusercontent.com"
        );
        assert_eq!(host("https://www.GitHub.com/o/r"), "github.com");
        assert_eq!(
            host("https://user:token@cdn.example.com:8443/i.png?x#y"),
            "cdn.example.com"
        );
    }

    #[test]
    fn different_repositories_stay_different() {
        assert_eq!(
            normalize("https://gitlab.com/group/sub/repo.git"),
            "gitlab.com/group/sub/repo"
        );
        assert_ne!(
            normalize("https://github.com/owner/repo"),
            normalize("https://github.com/owner/repo2")
        );
        assert_ne!(
            normalize("https://github.com/owner/repo"),
            normalize("https://gitlab.com/owner/repo")
        );
        assert_eq!(normalize("https://github.com"), "github.com");
        assert_eq!(normalize("localhost:8080/x"), "localhost/x");
        assert_eq!(normalize("https://[::1]:8443/a/b"), "[::1]/a/b");
    }
}
