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
use common::sshd::SshServer;
use common::world::{World, commit, file_url, git_plugin, outcome};

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

/// A private repository (the loopback git server asks for HTTP Basic credentials): the GitHub
/// token (`GITHUB_TOKEN`, else `GH_TOKEN`) is offered to the GitHub host — here the
/// `HERMES_PLUGINS_GITHUB` mirror — and to no other; git's credential helpers answer for any
/// host; without credentials, or with refused ones, the install fails at once (exit 3) saying
/// so. The token is never printed nor recorded.
#[test]
fn private_repositories_take_the_github_token_or_a_credential_helper() {
    const TOKEN: &str = "ghp_loopbackSecret123";
    let w = World::new();
    let served = w.tmp.path().join("served");
    git_plugin(&served.join("acme/weather"), None, "weather", "1.0.0", &[]);
    let server = GitServer::start(&served);
    server.require_basic("x-access-token", TOKEN);
    let github = [("HERMES_PLUGINS_GITHUB", server.base.as_str())];
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = w.cmd(args);
        cmd.env_remove("GITHUB_TOKEN").env_remove("GH_TOKEN");
        for (k, v) in env {
            cmd.env(k, v);
        }
        outcome(cmd.timeout(Duration::from_secs(120)))
    };

    // No credentials: refused at once, saying what would help.
    let (code, _, err) = run(&["install", "acme/weather"], &github);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("credentials") && err.contains("GITHUB_TOKEN"),
        "{err}"
    );
    // A wrong token: refused, no retry loop.
    let (code, _, err) = run(
        &["install", "acme/weather"],
        &[github[0], ("GH_TOKEN", "wrong")],
    );
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("refused the credentials"), "{err}");
    assert!(
        server.authorizations().len() < 12,
        "{:?}",
        server.authorizations()
    );
    // The token for another host is never offered (localhost is not the GitHub host).
    let other = server.url("acme/weather").replace("127.0.0.1", "localhost");
    let before = server.authorizations().len();
    let (code, _, err) = run(&["install", &other], &[github[0], ("GITHUB_TOKEN", TOKEN)]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        server.authorizations()[before..]
            .iter()
            .all(|a| a.is_none()),
        "the token went to another host"
    );
    // The right token, for the GitHub host: installed; not in any output or record.
    let (code, out, err) = run(
        &["install", "acme/weather"],
        &[github[0], ("GITHUB_TOKEN", TOKEN)],
    );
    assert_eq!(code, Some(0), "{err}");
    let installed = std::fs::read_to_string(w.pm().join("installed.json")).unwrap();
    for text in [&out, &err, &installed] {
        assert!(
            !text.contains(TOKEN) && !text.contains("x-access-token"),
            "{text}"
        );
    }

    // git's credential helper (credential.helper=store) answers for any host.
    let git_home = w.tmp.path().join("git-home");
    std::fs::create_dir_all(&git_home).unwrap();
    let store = git_home.join("credentials");
    std::fs::write(
        &store,
        format!(
            "http://x-access-token:{TOKEN}@localhost:{}\n",
            server.base.rsplit(':').next().unwrap()
        ),
    )
    .unwrap();
    std::fs::write(
        git_home.join(".gitconfig"),
        format!(
            "[credential]\n\thelper = store --file={}\n",
            store.display()
        ),
    )
    .unwrap();
    // Another host for the same repository is another source: `--replace` takes it.
    let (code, _, err) = run(
        &["install", &other, "--force", "--replace"],
        &[
            ("HOME", git_home.to_str().unwrap()),
            ("XDG_CONFIG_HOME", git_home.to_str().unwrap()),
        ],
    );
    assert_eq!(code, Some(0), "{err}");
}

/// A private package index (HTTP Basic on every page and file): uv's own authentication finds
/// the credentials in `NETRC`; without them the install fails naming the index's answer
/// (401), not "no index … offers weatherlib", and nothing is published. The password appears in no output.
#[test]
fn a_private_index_takes_netrc_credentials() {
    let w = World::new();
    let repo = w.tmp.path().join("weather");
    git_plugin(&repo, None, "weather", "1.0.0", &["weatherlib==1.0.0"]);
    let url = file_url(&repo);
    let args = ["install", url.as_str(), "--enable", "--yes-deps"];
    w.index
        .set_fault(Fault::RequireBasic("alice:s3cret-pw".into()));
    let netrc = w.tmp.path().join("netrc");
    let out = w
        .cmd(&args)
        .env("NETRC", w.tmp.path().join("no-netrc"))
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("401"), "{stderr}");
    assert!(!stderr.contains("offers weatherlib"), "{stderr}");
    assert_eq!(w.current(), None);
    std::fs::write(&netrc, "machine 127.0.0.1 login alice password s3cret-pw\n").unwrap();
    let out = w
        .cmd(&args)
        .env("NETRC", &netrc)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(w.current(), Some(1));
    assert!(!stderr.contains("s3cret-pw") && !stdout.contains("s3cret-pw"));
}

/// uv's credential store (`uv auth login`): read where the user has one — a private index's
/// credentials in `<state dir>/uv/credentials/credentials.toml` are used — and never created
/// for a user who has none (nothing written under `~/.local/share/uv`).
#[test]
fn uv_credential_store_is_read_where_it_exists_and_never_created() {
    let w = World::new();
    let repo = w.tmp.path().join("weather");
    git_plugin(&repo, None, "weather", "1.0.0", &["weatherlib==1.0.0"]);
    let url = file_url(&repo);
    let user = w.tmp.path().join("user");
    std::fs::create_dir_all(&user).unwrap();
    let run = |args: &[&str]| {
        let mut cmd = w.cmd(args);
        cmd.env("HOME", &user)
            .env_remove("XDG_DATA_HOME")
            .env_remove("UV_STATE_DIR")
            .env_remove("UV_CREDENTIALS_DIR")
            .env("NETRC", w.tmp.path().join("no-netrc"))
            .timeout(Duration::from_secs(120));
        outcome(&mut cmd)
    };
    // A private index, and no credentials anywhere: refused (401), and uv's store is looked
    // for, not made.
    w.index
        .set_fault(Fault::RequireBasic("alice:s3cret-pw".into()));
    let (code, _, err) = run(&["install", &url, "--enable", "--yes-deps"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("401"), "{err}");
    let state = user.join(".local/share/uv");
    assert!(!state.exists(), "{} was created", state.display());

    // Its credentials in the user's uv store: used.
    let store = state.join("credentials");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(
        store.join("credentials.toml"),
        format!(
            "[[credential]]\nservice = \"{}\"\nusername = \"alice\"\npassword = \"s3cret-pw\"\n",
            w.index.base
        ),
    )
    .unwrap();
    let (code, out, err) = run(&["install", &url, "--enable", "--yes-deps"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("s3cret-pw") && !out.contains("s3cret-pw"));
    assert_eq!(w.venv_python("import weatherlib; print('ok')"), "ok");
}

/// Git over SSH: a real `sshd` on loopback, the user's key in an `ssh-agent`. The host key is
/// checked against `~/.ssh/known_hosts` before anything else — unknown or different, the
/// install is refused naming the file, and nothing is installed; a trusted host without an
/// agent says what to start; with both, `install` and `update` go through `ssh://`, and the
/// provenance keeps the URL.
#[test]
fn git_over_ssh_checks_the_host_key_and_uses_the_agent() {
    let Some(server) = SshServer::start() else {
        return;
    };
    let w = World::new();
    let repo = w.tmp.path().join("weather");
    git_plugin(&repo, None, "weather", "1.0.0", &[]);
    let url = server.url(&repo);
    let home = w.tmp.path().join("user-home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let known_hosts = home.join(".ssh/known_hosts");
    let run = |args: &[&str], agent: bool| {
        let mut cmd = w.cmd(args);
        cmd.env("HOME", &home).timeout(Duration::from_secs(120));
        if agent {
            cmd.env("SSH_AUTH_SOCK", &server.agent_socket);
        } else {
            cmd.env_remove("SSH_AUTH_SOCK");
        }
        outcome(&mut cmd)
    };
    let installed = || {
        let (_, out, _) = run(&["--json", "list"], false);
        let list: serde_json::Value = serde_json::from_str(&out).unwrap();
        list["plugins"].as_array().unwrap().len()
    };

    // No known_hosts, then a known_hosts with another key for the host: refused.
    for trusted in [
        None,
        Some(format!(
            "[127.0.0.1]:{} {}\n",
            server.port, server.user_public_key
        )),
    ] {
        if let Some(line) = &trusted {
            std::fs::write(&known_hosts, line).unwrap();
        }
        let (code, _, err) = run(&["install", &url], true);
        eprintln!("{err}");
        assert_eq!(code, Some(3), "{err}\n{}", server.log_text());
        assert!(
            err.contains("known_hosts") && err.contains(&format!("127.0.0.1:{}", server.port)),
            "{err}"
        );
        assert_eq!(installed(), 0);
    }
    std::fs::write(&known_hosts, server.known_hosts_line()).unwrap();
    // Trusted host, no agent: says what to do.
    let (code, _, err) = run(&["install", &url], false);
    eprintln!("{err}");
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("ssh-agent") && err.contains("SSH_AUTH_SOCK"),
        "{err}"
    );
    assert_eq!(installed(), 0);
    // Both: installed over SSH.
    let (code, _, err) = run(&["install", &url], true);
    assert_eq!(code, Some(0), "{err}\n{}", server.log_text());
    let (_, out, _) = run(&["--json", "show", "weather"], false);
    assert!(out.contains(&url), "{out}");
    // A new commit upstream: update fetches it over SSH.
    let next = commit(&repo, &[("NEWS.md".into(), "v2\n".into())], "v2");
    let (code, _, err) = run(&["update", "weather", "--yes"], true);
    assert_eq!(code, Some(0), "{err}\n{}", server.log_text());
    let (_, out, _) = run(&["--json", "list"], false);
    assert!(out.contains(&next[..12]), "{out}");
}

/// A loopback HTTP proxy that records each request's first line and refuses it (403).
struct RefusingProxy {
    port: u16,
    seen: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl RefusingProxy {
    fn start() -> RefusingProxy {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut first = String::new();
                let _ = reader.read_line(&mut first);
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                }
                log.lock().unwrap().push(first.trim_end().to_string());
                let _ = stream.write_all(
                    b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        });
        RefusingProxy { port, seen }
    }
}

/// `https_proxy` reaches libgit2: an https clone goes to the proxy as `CONNECT host:443`
/// (the proxy refuses it: exit 3 naming the URL, nothing installed); with the host in
/// `no_proxy` the proxy is not asked at all.
#[test]
fn an_https_clone_goes_through_the_configured_proxy() {
    let proxy = RefusingProxy::start();
    let w = World::new();
    let url = "https://git.hermes-plugins-test.invalid/acme/weather.git";
    let run = |no_proxy: &str| {
        let (code, _, err) = outcome(
            w.cmd(&["install", url])
                .env("https_proxy", format!("http://127.0.0.1:{}", proxy.port))
                .env("no_proxy", no_proxy)
                .env_remove("HTTPS_PROXY")
                .env_remove("ALL_PROXY")
                .env_remove("all_proxy")
                .timeout(Duration::from_secs(60)),
        );
        (code, err)
    };
    let (code, err) = run("localhost,127.0.0.1");
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("git.hermes-plugins-test.invalid"), "{err}");
    let seen = proxy.seen.lock().unwrap().clone();
    assert!(
        seen.iter()
            .any(|l| l.starts_with("CONNECT git.hermes-plugins-test.invalid:443 ")),
        "{seen:?}; {err}"
    );
    let asked = seen.len();
    let (code, err) = run("localhost,127.0.0.1,hermes-plugins-test.invalid");
    assert_eq!(code, Some(3), "{err}");
    assert_eq!(
        proxy.seen.lock().unwrap().len(),
        asked,
        "the proxy was asked"
    );
    let (_, out, _) = w.run(&["--json", "list"]);
    assert!(out.contains("\"plugins\": []"), "{out}");
}

/// `outdated` and `update --all` ask their sources at the same time (bounded), as
/// `catalog resolve-all` fetches: the loopback server holds every ref advertisement until
/// three are waiting together, which a client asking one after the other never reaches.
#[test]
fn outdated_and_update_ask_their_sources_together() {
    let w = World::new();
    let served = w.tmp.path().join("served");
    let names = ["alpha", "bravo", "charlie"];
    for name in names {
        git_plugin(&served.join(name), None, name, "1.0.0", &[]);
    }
    let server = GitServer::start(&served);
    for name in names {
        w.ok(&["install", &server.url(name)]);
    }
    server.set_fault(GitFault::Gather(3));
    let report = w.json(&["outdated", "--no-packages"]);
    assert_eq!(server.peak(), 3, "{:?}", server.requests());
    let rows = report["plugins"].as_array().expect("plugins");
    assert_eq!(rows.len(), 3, "{report:#}");
    assert!(
        rows.iter().all(|r| r["status"] == "up-to-date"),
        "{report:#}"
    );
    // The rows stay in key order.
    let keys: Vec<&str> = rows.iter().filter_map(|r| r["key"].as_str()).collect();
    assert_eq!(keys, names);

    server.set_fault(GitFault::Gather(3));
    let (code, _, err) = w.run(&["update", "--all", "--yes"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(server.peak(), 3, "{:?}", server.requests());
}
