//! A real OpenSSH server on loopback for the git-over-SSH tests: Debian's `sshd` started on a
//! free port with its own host key, accepting one user key by public-key authentication only,
//! and an `ssh-agent` holding that key. Git runs as the current user through the server's
//! `git-upload-pack`, exactly as on a git host. Both processes end with the value.
//!
//! `sshd`, `ssh-agent` and `ssh-keygen` come from Debian's `openssh-server` and
//! `openssh-client` (`.ci/run` installs them); without them [`SshServer::start`] gives `None`,
//! unless `HERMES_PLUGINS_REQUIRE_SSHD=1` makes that a failure.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `sshd` and `ssh-agent`.
pub struct SshServer {
    sshd: Child,
    agent: Child,
    /// The server's port on 127.0.0.1.
    pub port: u16,
    /// The agent's socket (`SSH_AUTH_SOCK`).
    pub agent_socket: PathBuf,
    /// The server's public host key line (`ssh-ed25519 AAAA…`).
    pub host_key: String,
    /// The user logged in as.
    pub user: String,
    /// The user key's public half (`ssh-ed25519 AAAA…`): a key that is not the host's.
    pub user_public_key: String,
    /// The server's log (stderr), for failure messages.
    pub log: PathBuf,
    _dir: tempfile::TempDir,
}

fn tool(name: &str) -> Option<PathBuf> {
    ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{what} did not come up"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

impl SshServer {
    /// Starts the server and the agent, or `None` when OpenSSH is not installed.
    pub fn start() -> Option<SshServer> {
        let (Some(sshd), Some(agent), Some(keygen), Some(add)) = (
            tool("sshd"),
            tool("ssh-agent"),
            tool("ssh-keygen"),
            tool("ssh-add"),
        ) else {
            assert!(
                std::env::var("HERMES_PLUGINS_REQUIRE_SSHD").as_deref() != Ok("1"),
                "OpenSSH (sshd, ssh-agent) is required (HERMES_PLUGINS_REQUIRE_SSHD=1) but not installed"
            );
            eprintln!("OpenSSH server not installed: skipping the SSH test");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let d = &dir.path().to_path_buf();
        for key in ["host_key", "user_key"] {
            run(Command::new(&keygen)
                .args(["-q", "-t", "ed25519", "-N", "", "-C", key, "-f"])
                .arg(d.join(key)));
        }
        std::fs::copy(d.join("user_key.pub"), d.join("authorized_keys")).unwrap();
        // sshd's privilege-separation directory (root only; a user's sshd does not need it).
        let _ = std::fs::create_dir_all("/run/sshd");
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = d.join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {host}\nPidFile {pid}\nAuthorizedKeysFile {keys}\nStrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPermitRootLogin prohibit-password\nAllowTcpForwarding no\nX11Forwarding no\n",
                host = d.join("host_key").display(),
                pid = d.join("sshd.pid").display(),
                keys = d.join("authorized_keys").display(),
            ),
        )
        .unwrap();
        let log = d.join("sshd.log");
        let sshd = Command::new(&sshd)
            .args(["-D", "-e", "-f"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let agent_socket = d.join("agent.sock");
        let agent = Command::new(&agent)
            .arg("-D")
            .arg("-a")
            .arg(&agent_socket)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let public = |name: &str| {
            std::fs::read_to_string(d.join(name))
                .unwrap()
                .split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" ")
        };
        let host_key = public("host_key.pub");
        let user_public_key = public("user_key.pub");
        let user = std::env::var("USER")
            .ok()
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| {
                let out = Command::new("id").arg("-un").output().unwrap();
                String::from_utf8_lossy(&out.stdout).trim().to_string()
            });
        let server = SshServer {
            sshd,
            agent,
            port,
            agent_socket,
            host_key,
            user,
            user_public_key,
            log: log.clone(),
            _dir: dir,
        };
        wait_for("sshd", || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
                || std::fs::read_to_string(&log).is_ok_and(|l| l.contains("fatal"))
        });
        let log_text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(!log_text.contains("fatal"), "sshd failed: {log_text}");
        wait_for("ssh-agent", || server.agent_socket.exists());
        run(Command::new(add)
            .arg("-q")
            .arg(d.join("user_key"))
            .env("SSH_AUTH_SOCK", &server.agent_socket));
        Some(server)
    }

    /// The `ssh://` URL of a repository directory on this server.
    pub fn url(&self, repo: &Path) -> String {
        format!(
            "ssh://{}@127.0.0.1:{}{}",
            self.user,
            self.port,
            repo.display()
        )
    }

    /// The `known_hosts` line that trusts this server.
    pub fn known_hosts_line(&self) -> String {
        format!("[127.0.0.1]:{} {}\n", self.port, self.host_key)
    }

    /// What the server logged so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for SshServer {
    fn drop(&mut self) {
        let _ = self.sshd.kill();
        let _ = self.agent.kill();
        let _ = self.sshd.wait();
        let _ = self.agent.wait();
    }
}
