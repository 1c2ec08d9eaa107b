//! A loopback git server speaking the smart HTTP protocol (what libgit2 fetches over), built
//! on the real `git http-backend` run as a CGI program per request, with faults to inject.
//!
//! Repositories are the directories under the server's root: `http://127.0.0.1:PORT/<dir>`
//! serves `<root>/<dir>` (a working tree or a bare repository).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};

/// What the server does to a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitFault {
    /// Serve it.
    None,
    /// Answer the ref advertisement, then die in the middle of sending the pack: the response
    /// announces its full length, half of it is sent, and the connection is closed.
    DieMidPack,
    /// Answer every request with this status and no body.
    Status(u16),
    /// Hold the next pack request until [`GitServer::release`]; later requests are served
    /// at once (the fault is spent).
    HoldOnce,
    /// Hold every ref advertisement (`GET …/info/refs`) until this many are waiting at once
    /// (or 20 s pass): a client asking in sequence never gets there. [`GitServer::peak`]
    /// says how many were in flight together.
    Gather(usize),
}

/// What the server's threads share.
#[derive(Default)]
struct Shared {
    fault: Mutex<Option<GitFault>>,
    requests: Mutex<Vec<String>>,
    released: Mutex<bool>,
    release: Condvar,
    holding: std::sync::atomic::AtomicBool,
    /// `Basic` credentials every request must carry (`user:password`), if any.
    basic: Mutex<Option<String>>,
    /// The `Authorization` header of every request (`None`: none sent).
    authorizations: Mutex<Vec<Option<String>>>,
    /// Ref advertisements waiting under [`GitFault::Gather`] now, and the most at once.
    gathered: Mutex<(usize, usize)>,
    gather: Condvar,
}

/// A running server; it stops serving when dropped (its thread ends with the process).
pub struct GitServer {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    shared: Arc<Shared>,
}

impl GitServer {
    /// Serves the repositories under `root`.
    pub fn start(root: &Path) -> GitServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let base = format!("http://{}", listener.local_addr().unwrap());
        let shared = Arc::new(Shared::default());
        let root = root.to_path_buf();
        let s = shared.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (root, s) = (root.clone(), s.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, &root, &s);
                });
            }
        });
        GitServer { base, shared }
    }

    /// The URL of repository `dir` under the root.
    pub fn url(&self, dir: &str) -> String {
        format!("{}/{dir}", self.base)
    }

    /// Injects `fault` into the requests that follow.
    pub fn set_fault(&self, fault: GitFault) {
        *self.shared.fault.lock().unwrap() = Some(fault);
        *self.shared.gathered.lock().unwrap() = (0, 0);
    }

    /// Requires HTTP Basic authentication with `user:password` on every request (401
    /// otherwise, as a private repository answers).
    pub fn require_basic(&self, user: &str, password: &str) {
        *self.shared.basic.lock().unwrap() = Some(format!("{user}:{password}"));
    }

    /// The `Authorization` header of every request so far.
    pub fn authorizations(&self) -> Vec<Option<String>> {
        self.shared.authorizations.lock().unwrap().clone()
    }

    /// The most ref advertisements that were held together under [`GitFault::Gather`].
    pub fn peak(&self) -> usize {
        self.shared.gathered.lock().unwrap().1
    }

    /// Lets a request held by [`GitFault::HoldOnce`] go on.
    pub fn release(&self) {
        *self.shared.released.lock().unwrap() = true;
        self.shared.release.notify_all();
    }

    /// Whether a request is (or was) held by [`GitFault::HoldOnce`].
    pub fn holding(&self) -> bool {
        self.shared
            .holding
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// `METHOD path?query` of every request so far.
    pub fn requests(&self) -> Vec<String> {
        self.shared.requests.lock().unwrap().clone()
    }
}

/// One HTTP request as the CGI program needs it.
struct Request {
    method: String,
    path: String,
    query: String,
    content_type: Option<String>,
    authorization: Option<String>,
    body: Vec<u8>,
}

fn read_request(stream: &TcpStream) -> std::io::Result<Request> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let target = parts.next().unwrap_or_default();
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let (path, query) = (path.to_string(), query.to_string());
    let (mut length, mut chunked, mut content_type) = (0usize, false, None);
    let mut authorization = None;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header)?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.parse().unwrap_or(0),
            "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
            "content-type" => content_type = Some(value.to_string()),
            "authorization" => authorization = Some(value.to_string()),
            _ => {}
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
                .unwrap_or(0);
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
    }
    Ok(Request {
        method,
        path,
        query,
        content_type,
        authorization,
        body,
    })
}

/// Runs `git http-backend` for `req`: the status, the response headers and the body.
fn backend(root: &Path, req: &Request) -> std::io::Result<(u16, Vec<String>, Vec<u8>)> {
    let mut cmd = Command::new("git");
    cmd.arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", root)
        .env("REQUEST_METHOD", &req.method)
        .env("PATH_INFO", &req.path)
        .env("QUERY_STRING", &req.query)
        .env("CONTENT_LENGTH", req.body.len().to_string())
        .env("REMOTE_ADDR", "127.0.0.1")
        .env("GATEWAY_INTERFACE", "CGI/1.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(t) = &req.content_type {
        cmd.env("CONTENT_TYPE", t);
    }
    let mut child = cmd.spawn()?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let body = req.body.clone();
    let writer = std::thread::spawn(move || stdin.write_all(&body));
    let out = child.wait_with_output()?;
    let _ = writer.join();
    let split = out
        .stdout
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| {
            out.stdout
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|i| (i, 2))
        })
        .unwrap_or((out.stdout.len(), 0));
    let head = String::from_utf8_lossy(&out.stdout[..split.0]).to_string();
    let body = out.stdout[(split.0 + split.1).min(out.stdout.len())..].to_vec();
    let mut status = 200;
    let mut headers = Vec::new();
    for line in head.lines().filter(|l| !l.trim().is_empty()) {
        match line.split_once(':') {
            Some((name, value)) if name.eq_ignore_ascii_case("status") => {
                status = value.trim()[..3].parse().unwrap_or(500);
            }
            _ => headers.push(line.trim().to_string()),
        }
    }
    Ok((status, headers, body))
}

fn serve(mut stream: TcpStream, root: &Path, shared: &Shared) -> std::io::Result<()> {
    let req = read_request(&stream)?;
    shared
        .requests
        .lock()
        .unwrap()
        .push(format!("{} {}?{}", req.method, req.path, req.query));
    shared
        .authorizations
        .lock()
        .unwrap()
        .push(req.authorization.clone());
    if let Some(expected) = shared.basic.lock().unwrap().clone() {
        use base64::Engine;
        let wanted = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(expected)
        );
        if req.authorization.as_deref() != Some(wanted.as_str()) {
            let head = "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"git\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
            stream.write_all(head.as_bytes())?;
            return Ok(());
        }
    }
    let fault = {
        let mut current = shared.fault.lock().unwrap();
        let fault = current.clone().unwrap_or(GitFault::None);
        if fault == GitFault::HoldOnce && req.method == "POST" {
            *current = None;
        }
        fault
    };
    if fault == GitFault::HoldOnce && req.method == "POST" {
        shared
            .holding
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let mut released = shared.released.lock().unwrap();
        while !*released {
            released = shared.release.wait(released).unwrap();
        }
    }
    if let GitFault::Gather(want) = fault
        && req.method == "GET"
        && req.path.ends_with("/info/refs")
    {
        let mut gathered = shared.gathered.lock().unwrap();
        gathered.0 += 1;
        gathered.1 = gathered.1.max(gathered.0);
        shared.gather.notify_all();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while gathered.1 < want && std::time::Instant::now() < deadline {
            gathered = shared
                .gather
                .wait_timeout(gathered, std::time::Duration::from_millis(200))
                .unwrap()
                .0;
        }
        gathered.0 -= 1;
    }
    let fault = &fault;
    if let GitFault::Status(code) = fault {
        let head =
            format!("HTTP/1.1 {code} Fault\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        stream.write_all(head.as_bytes())?;
        return Ok(());
    }
    let (status, headers, body) = backend(root, &req)?;
    let mut head = format!("HTTP/1.1 {status} Backend\r\n");
    for h in &headers {
        head.push_str(h);
        head.push_str("\r\n");
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    stream.write_all(head.as_bytes())?;
    if *fault == GitFault::DieMidPack && req.method == "POST" {
        stream.write_all(&body[..body.len() / 2])?;
        stream.flush()?;
        return stream.shutdown(Shutdown::Both);
    }
    stream.write_all(&body)?;
    stream.flush()
}
