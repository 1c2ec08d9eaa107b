//! Network faults on the loopback index (issue 17): a wheel download that stalls, is cut off,
//! arrives truncated, meets a server error or is redirected off loopback. Each fails the
//! operation within the configured timeout with an error naming the wheel and what happened;
//! nothing is published, no partial download or store tree is left, and once the index is
//! healthy again the same command succeeds. The same for a git server (loopback smart HTTP)
//! that dies in the middle of a clone.

use crate::common;

use std::time::{Duration, Instant};

use common::git_http::{GitFault, GitServer};
use common::index::Fault;
use common::world::{World, file_url, git_plugin};

#[test]
fn wheel_download_faults_fail_cleanly_and_the_next_run_succeeds() {
    let faults = [
        (Fault::Stall, "timed out"),
        (Fault::Reset, ""),
        (Fault::Truncate, "sha256"),
        (Fault::Status(500), "500"),
        (Fault::Status(404), "404"),
        (
            Fault::Redirect(
                "http://hermes-plugins-test.invalid/weatherlib-1.0.0-py3-none-any.whl".into(),
            ),
            "hermes-plugins-test.invalid",
        ),
    ];
    for (fault, says) in faults {
        let w = World::new();
        let repo = w.tmp.path().join("weather");
        git_plugin(&repo, None, "weather", "1.0.0", &["weatherlib==1.0.0"]);
        let url = file_url(&repo);
        let args = ["install", url.as_str(), "--enable", "--yes-deps"];
        w.index.set_fault(fault.clone());
        let start = Instant::now();
        let out = w
            .cmd(&args)
            .env("UV_HTTP_TIMEOUT", "2")
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        let took = start.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let context = format!("{fault:?} (after {took:?}): {stderr}");
        eprintln!(
            "{fault:?}: exit {:?} after {took:.1?}: {}",
            out.status.code(),
            stderr
                .lines()
                .filter(|l| !l.starts_with("note:") && !l.trim().is_empty())
                .collect::<Vec<_>>()
                .join(" | ")
        );
        assert_eq!(out.status.code(), Some(3), "{context}");
        assert!(
            stderr.contains("-py3-none-any.whl"),
            "names the wheel: {context}"
        );
        assert!(stderr.contains(says), "says what happened: {context}");
        assert!(!stderr.contains("panicked"), "{context}");
        // Nothing published, nothing half-written.
        assert_eq!(w.current(), None, "{context}");
        assert_eq!(w.leftovers(), Vec::<String>::new(), "{context}");
        // Healthy again: the same command succeeds.
        w.index.set_fault(Fault::None);
        w.ok(&args);
        assert_eq!(w.current(), Some(1), "{fault:?}");
        assert_eq!(
            w.venv_python("import weatherlib; print(weatherlib.__version__)"),
            "1.0.0"
        );
    }
}

/// A git server that dies in the middle of sending the pack (the loopback smart-HTTP server,
/// `git http-backend` behind it), or answers 500: `install` fails with exit 3 naming the URL
/// and what happened, nothing is published or left in the store or scratch, and once the
/// server is healthy the same command succeeds.
#[test]
fn a_git_server_failing_mid_clone_fails_cleanly_and_the_next_run_succeeds() {
    for (fault, says) in [
        (GitFault::DieMidPack, "closed the connection"),
        (GitFault::Status(500), "500"),
    ] {
        let w = World::new();
        let served = w.tmp.path().join("served");
        git_plugin(&served.join("weather"), None, "weather", "1.0.0", &[]);
        let server = GitServer::start(&served);
        let url = server.url("weather");
        let args = ["install", url.as_str(), "--enable", "--yes-deps"];
        server.set_fault(fault.clone());
        let start = Instant::now();
        let out = w
            .cmd(&args)
            .env("HERMES_PLUGINS_GIT_TIMEOUT", "5")
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        let took = start.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let context = format!("{fault:?} (after {took:?}): {stderr}");
        eprintln!(
            "{fault:?}: exit {:?} after {took:.1?}: {stderr}",
            out.status.code()
        );
        assert_eq!(out.status.code(), Some(3), "{context}");
        assert!(stderr.contains(&url), "names the URL: {context}");
        assert!(stderr.contains(says), "says what happened: {context}");
        assert!(!stderr.contains("panicked"), "{context}");
        assert!(
            server.requests().iter().any(|r| r.starts_with("GET ")),
            "the server was asked: {:?}",
            server.requests()
        );
        assert_eq!(w.current(), None, "{context}");
        assert_eq!(w.leftovers(), Vec::<String>::new(), "{context}");
        // Healthy again: the same command succeeds, from the same server.
        server.set_fault(GitFault::None);
        w.ok(&args);
        assert_eq!(w.current(), Some(1), "{fault:?}");
    }
}
