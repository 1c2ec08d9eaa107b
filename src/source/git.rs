//! Git through libgit2 (`git2`): clone into a scratch directory, pick the revision (a
//! branch, tag or commit given with `--ref`, else the remote's default branch), check it out
//! and report the exact 40-hex commit (SRC-2).

use std::path::Path;

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

fn other(e: git2::Error) -> GitError {
    GitError::Other(e.message().to_string())
}

/// Transfer progress: objects received and total.
pub type Progress<'a> = &'a mut dyn FnMut(usize, usize);

/// Applies `HERMES_PLUGINS_GIT_INSTEAD_OF` (`PREFIX=REPLACEMENT`, several separated by
/// whitespace), like git's `url.<base>.insteadOf`: fetch `https://github.com/acme/x` from a
/// mirror or a local directory while the catalog keeps the real URL.
pub fn rewrite_url(url: &str) -> String {
    let Ok(rules) = std::env::var("HERMES_PLUGINS_GIT_INSTEAD_OF") else {
        return url.to_string();
    };
    for rule in rules.split_whitespace() {
        if let Some((prefix, replacement)) = rule.split_once('=')
            && !prefix.is_empty()
            && let Some(rest) = url.strip_prefix(prefix)
        {
            return format!("{replacement}{rest}");
        }
    }
    url.to_string()
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
    let mut callbacks = RemoteCallbacks::new();
    callbacks.transfer_progress(|stats| {
        progress(stats.received_objects(), stats.total_objects());
        true
    });
    let mut fetch = FetchOptions::new();
    fetch.remote_callbacks(callbacks);
    let repo = RepoBuilder::new()
        .fetch_options(fetch)
        .bare(false)
        .with_checkout(CheckoutBuilder::new())
        .clone(url, dest)
        .map_err(|e| GitError::Clone {
            url: url.to_string(),
            message: e.message().to_string(),
        })?;
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
                    url: url.to_string(),
                    rev: rev.to_string(),
                })?;
            (found, None)
        }
        None => {
            let head = repo.head().map_err(|e| GitError::Clone {
                url: url.to_string(),
                message: format!("the repository has no default branch ({})", e.message()),
            })?;
            let branch = head.shorthand().map(str::to_string);
            (head.peel(git2::ObjectType::Commit).map_err(other)?, branch)
        }
    };
    let commit = object.peel_to_commit().map_err(|_| GitError::UnknownRev {
        url: url.to_string(),
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
            url: url.to_string(),
            rev: sha.to_string(),
        }),
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
    let key: String = Sha256::digest(fetched.as_bytes())
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect();
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
        let mut callbacks = RemoteCallbacks::new();
        callbacks.transfer_progress(|stats| {
            progress(stats.received_objects(), stats.total_objects());
            true
        });
        let mut options = FetchOptions::new();
        options.remote_callbacks(callbacks);
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
            .map_err(|e| GitError::Clone {
                url: url.to_string(),
                message: e.message().to_string(),
            })?;
    }
    let commit = repo.find_commit(oid).map_err(|_| GitError::UnknownRev {
        url: url.to_string(),
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
