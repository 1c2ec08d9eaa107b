//! Git through libgit2 (`git2`): clone into a scratch directory, pick the revision (a
//! branch, tag or commit given with `--ref`, else the remote's default branch), check it out
//! and report the exact 40-hex commit (SRC-2).
//!
//! Every network operation is bounded ([`Timeouts`]): a connect timeout and a stall timeout
//! (no data for that long, or less than 1 KiB over that long) turn a server that accepts and
//! never answers, or trickles, into an error instead of a hang.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use git2::build::{CheckoutBuilder, RepoBuilder};
use git2::{FetchOptions, RemoteCallbacks, Repository};

/// What a checkout produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    /// The commit checked out (40 lowercase hex).
    pub commit: String,
    /// The branch followed when no revision was pinned (`main`), for `update`.
    pub tracked_ref: Option<String>,
}

/// Why git failed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// Cloning failed (unreachable, not a repository, authentication).
    #[error("cannot clone {url}: {message}")]
    Clone {
        /// The URL.
        url: String,
        /// libgit2's message.
        message: String,
    },
    /// The revision does not exist in the repository.
    #[error("{url} has no branch, tag or commit `{rev}`")]
    UnknownRev {
        /// The URL.
        url: String,
        /// The revision asked for.
        rev: String,
    },
    /// Anything else libgit2 reports.
    #[error("git: {0}")]
    Other(String),
}

/// Bounds on git network operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Connecting to the server.
    pub connect: Duration,
    /// The longest a transfer may go without data (or with less than [`LOW_SPEED_BYTES`]).
    pub stall: Duration,
}

/// A transfer slower than this many bytes per stall window counts as stalled.
pub const LOW_SPEED_BYTES: usize = 1024;

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(30),
            stall: Duration::from_secs(60),
        }
    }
}

/// How git reaches servers, decided once by the CLI from the environment (see
/// `cli::env_vars`) and installed for the process: libgit2's network options are global.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitConfig {
    /// Connect and stall limits.
    pub timeouts: Timeouts,
    /// A CA bundle (`GIT_SSL_CAINFO`, else `SSL_CERT_FILE`).
    pub ca_file: Option<std::path::PathBuf>,
    /// A CA directory (`SSL_CERT_DIR`).
    pub ca_dir: Option<std::path::PathBuf>,
    /// URL rewrites, `(prefix, replacement)`, first match wins (`url.<base>.insteadOf`).
    pub instead_of: Vec<(String, String)>,
    /// A token for GitHub (`GITHUB_TOKEN`, else `GH_TOKEN`): offered to [`Self::github_hosts`]
    /// only, over HTTPS (or loopback HTTP), when the server asks.
    pub github_token: Option<Secret>,
    /// The hosts the token is for: `github.com` and the host of `HERMES_PLUGINS_GITHUB`.
    pub github_hosts: Vec<String>,
    /// The proxies the environment names, as git and curl read them.
    pub proxies: Proxies,
    /// Whether an ssh-agent is reachable (`SSH_AUTH_SOCK` set): SSH keys come from it.
    pub ssh_agent: bool,
}

/// `http_proxy`, `https_proxy`, `all_proxy` and `no_proxy` (lower case first, then upper
/// case, as curl reads them): libgit2 is given the proxy explicitly for each URL.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Proxies {
    /// For `http://` URLs.
    pub http: Option<String>,
    /// For `https://` URLs.
    pub https: Option<String>,
    /// For either, when the scheme's own is unset.
    pub all: Option<String>,
    /// Hosts (and their subdomains) reached directly; `*` for every host.
    pub no_proxy: Vec<String>,
}

impl Proxies {
    /// The proxy for `url`, if one applies.
    pub fn for_url(&self, url: &str) -> Option<&str> {
        let parsed = url::Url::parse(url).ok()?;
        let host = parsed
            .host_str()?
            .trim_start_matches('[')
            .trim_end_matches(']');
        let bypass = self.no_proxy.iter().any(|entry| {
            let entry = entry
                .split(':')
                .next()
                .unwrap_or("")
                .trim_start_matches('.');
            entry == "*" || host == entry || host.ends_with(&format!(".{entry}"))
        });
        if bypass {
            return None;
        }
        let own = match parsed.scheme() {
            "http" => self.http.as_deref(),
            "https" => self.https.as_deref(),
            _ => return None,
        };
        own.or(self.all.as_deref())
    }
}

/// A credential: compared and moved like a string, never shown (`Debug` prints `***`).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

static CONFIG: Mutex<Option<GitConfig>> = Mutex::new(None);

impl GitConfig {
    /// Makes this the configuration of every git operation of this process. Nothing touches
    /// libgit2 until a git operation starts (initialising it costs milliseconds that commands
    /// without git should not pay).
    pub fn install(self) {
        if let Ok(mut c) = CONFIG.lock() {
            *c = Some(self);
        }
    }

    /// The configuration installed (the defaults when none was).
    fn configured() -> GitConfig {
        CONFIG
            .lock()
            .ok()
            .and_then(|c| c.clone())
            .unwrap_or_default()
    }
}

impl Timeouts {
    /// The bounds in force, applied to libgit2 (its connect and read timeouts and its
    /// certificate authorities are process-wide): called as every git network operation
    /// starts.
    pub fn current() -> Timeouts {
        let config = GitConfig::configured();
        let t = config.timeouts;
        let ms = |d: Duration| i32::try_from(d.as_millis()).unwrap_or(i32::MAX).max(1);
        // SAFETY: libgit2 global options, set between operations; the values are plain
        // integers.
        unsafe {
            let _ = git2::opts::set_server_connect_timeout_in_milliseconds(ms(t.connect));
            let _ = git2::opts::set_server_timeout_in_milliseconds(ms(t.stall));
        }
        trust_certificates(&config);
        t
    }

    /// The bounds configured (for messages), without touching libgit2.
    fn configured() -> Timeouts {
        GitConfig::configured().timeouts
    }
}

/// Certificate authorities as git and uv take them (a TLS-inspecting proxy's CA lives there on
/// such networks).
fn trust_certificates(config: &GitConfig) {
    if let Some(file) = &config.ca_file {
        // SAFETY: a libgit2 global option set between operations; the path is copied.
        if let Err(e) = unsafe { git2::opts::set_ssl_cert_file(file) } {
            tracing::warn!("ignoring the CA file {}: {e}", file.display());
        }
    }
    if let Some(dir) = &config.ca_dir {
        // SAFETY: as above.
        if let Err(e) = unsafe { git2::opts::set_ssl_cert_dir(dir) } {
            tracing::warn!("ignoring the CA directory {}: {e}", dir.display());
        }
    }
}

/// Fetch options for every network operation on `url`: progress, the watchdog, and the
/// proxy.
fn fetch_options<'a>(
    url: &str,
    progress: Progress<'a>,
    stalled: &'a AtomicBool,
) -> FetchOptions<'a> {
    let mut fetch = FetchOptions::new();
    fetch.remote_callbacks(callbacks(progress, stalled));
    fetch.proxy_options(proxy_options(url));
    fetch
}

/// The proxy for `url`: the environment's (`https_proxy`/`http_proxy`/`all_proxy`, minus
/// `no_proxy`) given to libgit2 explicitly — its own detection does not follow them — else
/// git's configuration (`http.proxy`).
fn proxy_options(url: &str) -> git2::ProxyOptions<'static> {
    let mut proxy = git2::ProxyOptions::new();
    match GitConfig::configured().proxies.for_url(url) {
        Some(p) => {
            proxy.url(p);
        }
        None if GitConfig::configured().proxies.no_proxy.is_empty() => {
            proxy.auto();
        }
        None => {}
    }
    proxy
}

/// Remote callbacks with progress reporting and the low-speed watchdog; `stalled` is set when
/// the watchdog cancelled the transfer.
fn callbacks<'a>(progress: Progress<'a>, stalled: &'a AtomicBool) -> RemoteCallbacks<'a> {
    let limits = Timeouts::current();
    let config = GitConfig::configured();
    let mut window_start = Instant::now();
    let mut bytes_at_start = 0usize;
    let mut callbacks = RemoteCallbacks::new();
    callbacks.transfer_progress(move |stats| {
        progress(stats.received_objects(), stats.total_objects());
        let now = Instant::now();
        if now.duration_since(window_start) >= limits.stall {
            if stats.received_bytes().saturating_sub(bytes_at_start) < LOW_SPEED_BYTES {
                stalled.store(true, Ordering::Relaxed);
                return false;
            }
            window_start = now;
            bytes_at_start = stats.received_bytes();
        }
        true
    });
    let mut asked = 0;
    callbacks.credentials(move |url, username, allowed| {
        asked += 1;
        credentials(&config, url, username, allowed, asked)
    });
    callbacks
}

/// Credentials for a server that asks (private repositories): SSH through the ssh-agent; over
/// HTTP(S) the GitHub token for GitHub's hosts, else git's credential helpers (`git config
/// credential.helper`), else none. libgit2 asks again after a refusal: the second time for
/// the same kind is the last (a refused token must not loop), then the error says so.
fn credentials(
    config: &GitConfig,
    url: &str,
    username: Option<&str>,
    allowed: git2::CredentialType,
    asked: usize,
) -> Result<git2::Cred, git2::Error> {
    if asked > 2 {
        return Err(git2::Error::from_str(
            "authentication failed: the server refused the credentials offered (GITHUB_TOKEN/GH_TOKEN for GitHub, git's credential helpers, the ssh-agent)",
        ));
    }
    if allowed.contains(git2::CredentialType::USERNAME) {
        // An `ssh://host/…` URL without a user: git hosts take `git`.
        return git2::Cred::username(username.unwrap_or("git"));
    }
    if allowed.contains(git2::CredentialType::SSH_KEY) {
        if !config.ssh_agent {
            return Err(git2::Error::from_str(
                "SSH authentication goes through the ssh-agent, and SSH_AUTH_SOCK is not set: start one (`eval \"$(ssh-agent)\"`) and add your key (`ssh-add`)",
            ));
        }
        return git2::Cred::ssh_key_from_agent(username.unwrap_or("git"));
    }
    if allowed.contains(git2::CredentialType::USER_PASS_PLAINTEXT) {
        let parsed = url::Url::parse(url).ok();
        let host = parsed.as_ref().and_then(|u| u.host_str()).unwrap_or("");
        let secure = parsed.as_ref().is_some_and(|u| {
            u.scheme() == "https" || matches!(host, "127.0.0.1" | "localhost" | "[::1]")
        });
        if let Some(token) = &config.github_token
            && secure
            && config.github_hosts.iter().any(|h| h == host)
        {
            return git2::Cred::userpass_plaintext("x-access-token", &token.0);
        }
        if let Ok(git_config) = git2::Config::open_default()
            && let Ok(cred) = git2::Cred::credential_helper(&git_config, url, username)
        {
            return Ok(cred);
        }
    }
    if allowed.contains(git2::CredentialType::DEFAULT) {
        return git2::Cred::default();
    }
    Err(git2::Error::from_str(
        "the server asks for credentials and none are configured (GITHUB_TOKEN/GH_TOKEN for GitHub, git's credential helpers, the ssh-agent for SSH)",
    ))
}

/// The error for a failed network operation: a stall reported as such.
fn network_error(url: &str, e: &git2::Error, stalled: bool) -> GitError {
    let limits = Timeouts::configured();
    let ssh = url.starts_with("ssh://") || (url.starts_with("git@") && url.contains(':'));
    let message = if ssh && e.message().contains("hostkey") {
        let host = ssh_host(url);
        format!(
            "the SSH host key of {host} is not in ~/.ssh/known_hosts, or differs from the key recorded there: refused ({}). Check the host's fingerprint with its operator, then add it: `ssh-keyscan {} >> ~/.ssh/known_hosts`",
            e.message(),
            host.rsplit_once(':')
                .map_or_else(|| host.clone(), |(h, p)| format!("-p {p} {h}"))
        )
    } else if stalled {
        format!(
            "the transfer stalled (less than {LOW_SPEED_BYTES} bytes in {} s; HERMES_PLUGINS_GIT_TIMEOUT sets the limit)",
            limits.stall.as_secs()
        )
    } else if e.message().to_ascii_lowercase().contains("timed out") {
        format!(
            "{} (connect limit {} s, stall limit {} s: HERMES_PLUGINS_GIT_CONNECT_TIMEOUT, HERMES_PLUGINS_GIT_TIMEOUT)",
            e.message(),
            limits.connect.as_secs(),
            limits.stall.as_secs()
        )
    } else if e.message().contains("EOF") || e.message().contains("early") {
        // libgit2 says "http parser did not consume entire buffer: Invalid EOF state" or
        // "early EOF": the server hung up in the middle of a response.
        format!(
            "the server closed the connection before the transfer was complete ({})",
            e.message()
        )
    } else {
        e.message().to_string()
    };
    GitError::Clone {
        url: crate::text::redact_credentials(url).into_owned(),
        message: crate::text::redact_credentials(&message).into_owned(),
    }
}

/// `host:port` of an `ssh://` or scp-like (`user@host:path`) URL, as the known_hosts check
/// saw it (the port is 22 unless given).
fn ssh_host(url: &str) -> String {
    if let Ok(parsed) = url::Url::parse(url)
        && parsed.scheme() == "ssh"
    {
        return format!(
            "{}:{}",
            parsed.host_str().unwrap_or(""),
            parsed.port().unwrap_or(22)
        );
    }
    let rest = url.split_once('@').map_or(url, |(_, r)| r);
    format!("{}:22", rest.split_once(':').map_or(rest, |(h, _)| h))
}

fn other(e: git2::Error) -> GitError {
    GitError::Other(e.message().to_string())
}

/// Transfer progress: objects received and total.
pub type Progress<'a> = &'a mut dyn FnMut(usize, usize);

/// Applies the configured URL rewrites (`HERMES_PLUGINS_GIT_INSTEAD_OF`), like git's
/// `url.<base>.insteadOf`: fetch `https://github.com/acme/x` from a mirror or a local
/// directory while the catalog keeps the real URL.
pub fn rewrite_url(url: &str) -> String {
    for (prefix, replacement) in &GitConfig::configured().instead_of {
        if let Some(rest) = url.strip_prefix(prefix.as_str()) {
            return format!("{replacement}{rest}");
        }
    }
    url.to_string()
}

/// The references a remote advertises, as `git ls-remote` lists them: `(name, commit)`
/// pairs (`HEAD`, `refs/heads/…`, `refs/tags/…`, peeled tags as `…^{}`). Nothing is
/// downloaded; the same rewrites, proxy and time limits as a clone apply.
pub fn remote_refs(url: &str) -> Result<Vec<(String, String)>, GitError> {
    let fetched = rewrite_url(url);
    let stalled = AtomicBool::new(false);
    let mut progress = |_: usize, _: usize| {};
    let mut remote = git2::Remote::create_detached(fetched.as_str())
        .map_err(|e| network_error(&fetched, &e, false))?;
    let connection = remote
        .connect_auth(
            git2::Direction::Fetch,
            Some(callbacks(&mut progress, &stalled)),
            Some(proxy_options(&fetched)),
        )
        .map_err(|e| network_error(&fetched, &e, stalled.load(Ordering::Relaxed)))?;
    let refs = connection
        .list()
        .map_err(|e| network_error(&fetched, &e, false))?
        .iter()
        .map(|head| (head.name().to_string(), head.oid().to_string()))
        .collect();
    Ok(refs)
}

/// Clones `url` into `dest` (which must not exist or be empty) and checks out `rev` (or the
/// default branch). `HERMES_PLUGINS_GIT_INSTEAD_OF` rewrites the URL first.
pub fn clone_at(
    url: &str,
    rev: Option<&str>,
    dest: &Path,
    progress: Progress<'_>,
) -> Result<Checkout, GitError> {
    let fetched = rewrite_url(url);
    let url = fetched.as_str();
    let stalled = AtomicBool::new(false);
    let repo = RepoBuilder::new()
        .fetch_options(fetch_options(url, progress, &stalled))
        .bare(false)
        .with_checkout(CheckoutBuilder::new())
        .clone(url, dest)
        .map_err(|e| network_error(url, &e, stalled.load(Ordering::Relaxed)))?;
    checkout(&repo, url, rev)
}

fn checkout(repo: &Repository, url: &str, rev: Option<&str>) -> Result<Checkout, GitError> {
    let (object, tracked_ref) = match rev {
        Some(rev) => {
            let candidates = [
                format!("refs/remotes/origin/{rev}"),
                format!("refs/tags/{rev}"),
                rev.to_string(),
            ];
            let found = candidates
                .iter()
                .find_map(|c| repo.revparse_single(c).ok())
                .ok_or_else(|| GitError::UnknownRev {
                    url: crate::text::redact_credentials(url).into_owned(),
                    rev: rev.to_string(),
                })?;
            (found, None)
        }
        None => {
            let head = repo.head().map_err(|e| GitError::Clone {
                url: crate::text::redact_credentials(url).into_owned(),
                message: format!("the repository has no default branch ({})", e.message()),
            })?;
            let branch = head.shorthand().map(str::to_string);
            (head.peel(git2::ObjectType::Commit).map_err(other)?, branch)
        }
    };
    let commit = object.peel_to_commit().map_err(|_| GitError::UnknownRev {
        url: crate::text::redact_credentials(url).into_owned(),
        rev: rev.unwrap_or("HEAD").to_string(),
    })?;
    repo.checkout_tree(commit.as_object(), Some(CheckoutBuilder::new().force()))
        .map_err(other)?;
    repo.set_head_detached(commit.id()).map_err(other)?;
    Ok(Checkout {
        commit: commit.id().to_string(),
        tracked_ref,
    })
}

/// The commit at `HEAD` of the repository containing `dir` and whether its work tree has
/// changes, if `dir` is inside a git work tree.
pub fn describe_local(dir: &Path) -> Option<(String, bool)> {
    let repo = Repository::discover(dir).ok()?;
    let head = repo.head().ok()?.peel_to_commit().ok()?;
    let mut options = git2::StatusOptions::new();
    options.include_untracked(true).include_ignored(false);
    let dirty = repo
        .statuses(Some(&mut options))
        .map(|s| !s.is_empty())
        .unwrap_or(false);
    Some((head.id().to_string(), dirty))
}

fn is_full_sha(rev: &str) -> bool {
    rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Checks out commit `sha` of `url` into `dest` through a cache of bare repositories under
/// `cache_root` (one per URL): when the cache already has the commit nothing is fetched, and
/// otherwise only new objects are. Falls back to a fresh clone when the cache cannot be used
/// (another process is updating it, it is damaged).
pub fn checkout_sha_cached(
    url: &str,
    sha: &str,
    cache_root: &Path,
    dest: &Path,
    progress: Progress<'_>,
) -> Result<Checkout, GitError> {
    if !is_full_sha(sha) {
        return clone_at(url, Some(sha), dest, progress);
    }
    match cached(url, sha, cache_root, dest, progress) {
        Ok(c) => Ok(c),
        Err(GitError::UnknownRev { .. }) => Err(GitError::UnknownRev {
            url: crate::text::redact_credentials(url).into_owned(),
            rev: sha.to_string(),
        }),
        // The network failed (or stalled): a fresh clone would only fail again, later.
        Err(e @ GitError::Clone { .. }) => Err(e),
        Err(e) => {
            tracing::debug!("git cache unusable for {url}: {e}; cloning");
            let _ = std::fs::remove_dir_all(dest);
            clone_at(url, Some(sha), dest, &mut |_, _| {})
        }
    }
}

fn cached(
    url: &str,
    sha: &str,
    cache_root: &Path,
    dest: &Path,
    progress: Progress<'_>,
) -> Result<Checkout, GitError> {
    use sha2::{Digest, Sha256};
    let fetched = rewrite_url(url);
    let key = crate::hash::hex(&Sha256::digest(fetched.as_bytes())[..16]);
    let bare = cache_root.join(key);
    let repo = match Repository::open_bare(&bare) {
        Ok(r) => r,
        Err(_) => {
            std::fs::create_dir_all(&bare).map_err(|e| GitError::Other(e.to_string()))?;
            Repository::init_bare(&bare).map_err(other)?
        }
    };
    let oid = git2::Oid::from_str(sha).map_err(other)?;
    if repo.find_commit(oid).is_err() {
        let stalled = AtomicBool::new(false);
        let mut options = fetch_options(&fetched, progress, &stalled);
        let mut remote = repo.remote_anonymous(&fetched).map_err(other)?;
        remote
            .fetch(
                &[
                    "+refs/heads/*:refs/remotes/origin/*",
                    "+refs/tags/*:refs/tags/*",
                ],
                Some(&mut options),
                None,
            )
            .map_err(|e| network_error(url, &e, stalled.load(Ordering::Relaxed)))?;
    }
    let commit = repo.find_commit(oid).map_err(|_| GitError::UnknownRev {
        url: crate::text::redact_credentials(url).into_owned(),
        rev: sha.to_string(),
    })?;
    std::fs::create_dir_all(dest).map_err(|e| GitError::Other(e.to_string()))?;
    let mut checkout = CheckoutBuilder::new();
    checkout.target_dir(dest).force().update_index(false);
    repo.checkout_tree(commit.as_object(), Some(&mut checkout))
        .map_err(other)?;
    Ok(Checkout {
        commit: commit.id().to_string(),
        tracked_ref: None,
    })
}

#[cfg(test)]
mod proxy_tests {
    use super::Proxies;

    #[test]
    fn proxies_follow_scheme_and_no_proxy() {
        let p = Proxies {
            http: Some("http://h:1".into()),
            https: None,
            all: Some("http://a:2".into()),
            no_proxy: vec!["internal.example".into(), ".corp".into()],
        };
        assert_eq!(p.for_url("http://github.com/x"), Some("http://h:1"));
        assert_eq!(p.for_url("https://github.com/x"), Some("http://a:2"));
        assert_eq!(p.for_url("https://git.internal.example/x"), None);
        assert_eq!(p.for_url("https://internal.example:8443/x"), None);
        assert_eq!(p.for_url("https://a.corp/x"), None);
        assert_eq!(p.for_url("file:///srv/x"), None);
        let all = Proxies {
            no_proxy: vec!["*".into()],
            ..p
        };
        assert_eq!(all.for_url("https://github.com/x"), None);
    }
}

#[cfg(test)]
mod ssh_host_tests {
    use super::ssh_host;

    #[test]
    fn the_host_and_port_known_hosts_is_asked_about() {
        assert_eq!(
            ssh_host("ssh://git@example.org/acme/x.git"),
            "example.org:22"
        );
        assert_eq!(ssh_host("ssh://me@127.0.0.1:2222/srv/x"), "127.0.0.1:2222");
        assert_eq!(ssh_host("git@github.com:acme/x.git"), "github.com:22");
        assert_eq!(ssh_host("github.com:acme/x.git"), "github.com:22");
    }
}
