//! A package index for tests: releases built here, served on 127.0.0.1 as PEP 691 JSON (with
//! PEP 700 upload times, sha256 hashes and PEP 658 core metadata) and PEP 503 HTML.
//!
//! Each release is served as PyPI serves a typical one: an sdist and several wheels with
//! different tags, every file with its own bytes and sha256 — only the pure wheel installs
//! here, so a lock that records another file's hash fails the install.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use base64::Engine;
use sha2::{Digest, Sha256};

/// A wheel to publish.
#[derive(Debug, Clone)]
pub struct Wheel {
    /// Project name as written (`My-Pkg`).
    pub name: String,
    /// Version.
    pub version: String,
    /// `Requires-Dist` lines (PEP 508, markers allowed).
    pub requires_dist: Vec<String>,
    /// `Requires-Python`, if any.
    pub requires_python: Option<String>,
    /// PEP 700 upload time (RFC 3339), if the index should report one.
    pub upload_time: Option<String>,
    /// More files in the archive (listed in RECORD).
    pub extra_files: Vec<(String, Vec<u8>)>,
    /// RECORD gives the module file a hash it does not have.
    pub lying_record: bool,
}

impl Wheel {
    /// A wheel with no dependencies uploaded at `upload_time`.
    pub fn new(name: &str, version: &str, upload_time: &str) -> Self {
        Wheel {
            name: name.to_string(),
            version: version.to_string(),
            requires_dist: Vec::new(),
            requires_python: None,
            upload_time: Some(upload_time.to_string()),
            extra_files: Vec::new(),
            lying_record: false,
        }
    }

    /// Adds a file to the archive (recorded honestly in RECORD).
    pub fn with_file(mut self, path: &str, data: Vec<u8>) -> Self {
        self.extra_files.push((path.to_string(), data));
        self
    }

    /// Makes RECORD lie about the module's `__init__.py`.
    pub fn lying_record(mut self) -> Self {
        self.lying_record = true;
        self
    }

    /// Adds a `Requires-Dist`.
    pub fn requires(mut self, requirement: &str) -> Self {
        self.requires_dist.push(requirement.to_string());
        self
    }

    /// Sets `Requires-Python`.
    pub fn requires_python(mut self, spec: &str) -> Self {
        self.requires_python = Some(spec.to_string());
        self
    }

    /// The normalised project name (PEP 503).
    pub fn normalized(&self) -> String {
        normalize(&self.name)
    }

    /// The pure wheel's filename (the file a resolver on any platform picks).
    pub fn filename(&self) -> String {
        self.filename_for(PURE_TAG)
    }

    /// The filename of this release's wheel for `tag`.
    pub fn filename_for(&self, tag: &str) -> String {
        format!(
            "{}-{}-{tag}.whl",
            self.normalized().replace('-', "_"),
            self.version
        )
    }

    /// The source distribution's filename (PEP 625).
    pub fn sdist_filename(&self) -> String {
        format!(
            "{}-{}.tar.gz",
            self.normalized().replace('-', "_"),
            self.version
        )
    }

    /// The METADATA text.
    pub fn metadata(&self) -> String {
        let mut m = format!(
            "Metadata-Version: 2.1\nName: {}\nVersion: {}\n",
            self.name, self.version
        );
        if let Some(rp) = &self.requires_python {
            m.push_str(&format!("Requires-Python: {rp}\n"));
        }
        for r in &self.requires_dist {
            m.push_str(&format!("Requires-Dist: {r}\n"));
        }
        m
    }

    /// Builds the pure wheel archive.
    pub fn build(&self) -> Vec<u8> {
        self.build_for(PURE_TAG)
    }

    /// Builds this release's wheel for `tag` (its WHEEL file names the tag, so every
    /// wheel of a release has its own bytes and its own sha256, as on PyPI).
    pub fn build_for(&self, tag: &str) -> Vec<u8> {
        let pure = tag == PURE_TAG;
        let module = self.normalized().replace('-', "_");
        let dist_info = format!("{}-{}.dist-info", module, self.version);
        let mut files: Vec<(String, Vec<u8>)> = vec![
            (format!("{module}/__init__.py"), format!("__version__ = \"{}\"\n", self.version).into_bytes()),
            (format!("{dist_info}/METADATA"), self.metadata().into_bytes()),
            (
                format!("{dist_info}/WHEEL"),
                format!(
                    "Wheel-Version: 1.0\nGenerator: hermes-plugins-tests\nRoot-Is-Purelib: {pure}\nTag: {tag}\n"
                )
                .into_bytes(),
            ),
        ];
        files.extend(self.extra_files.iter().cloned());
        let mut record = String::new();
        for (i, (path, data)) in files.iter().enumerate() {
            let recorded: &[u8] = if self.lying_record && pure && i == 0 {
                b"__version__ = \"something else\"\n"
            } else {
                data
            };
            let digest =
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(recorded));
            record.push_str(&format!("{path},sha256={digest},{}\n", data.len()));
        }
        record.push_str(&format!("{dist_info}/RECORD,,\n"));
        let mut buffer = std::io::Cursor::new(Vec::new());
        {
            let mut zip = zip::ZipWriter::new(&mut buffer);
            let options = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated);
            for (path, data) in files.iter().chain(std::iter::once(&(
                format!("{dist_info}/RECORD"),
                record.into_bytes(),
            ))) {
                zip.start_file(path.as_str(), options).expect("zip entry");
                zip.write_all(data).expect("zip write");
            }
            zip.finish().expect("zip finish");
        }
        buffer.into_inner()
    }

    /// Builds the source distribution: a gzipped ustar archive with `PKG-INFO` and a
    /// `pyproject.toml`, as `python -m build --sdist` makes. Resolvers prefer the wheels, so
    /// it is listed (with its own hash) but not fetched.
    pub fn build_sdist(&self) -> Vec<u8> {
        let root = format!("{}-{}", self.normalized().replace('-', "_"), self.version);
        let module = self.normalized().replace('-', "_");
        let files = [
            (format!("{root}/PKG-INFO"), self.metadata().into_bytes()),
            (
                format!("{root}/pyproject.toml"),
                format!(
                    "[project]\nname = \"{}\"\nversion = \"{}\"\n",
                    self.name, self.version
                )
                .into_bytes(),
            ),
            (
                format!("{root}/src/{module}/__init__.py"),
                format!("__version__ = \"{}\"\n", self.version).into_bytes(),
            ),
        ];
        let mut tar = Vec::new();
        for (path, data) in &files {
            tar.extend_from_slice(&ustar_header(path, data.len()));
            tar.extend_from_slice(data);
            tar.resize(tar.len().div_ceil(512) * 512, 0);
        }
        tar.resize(tar.len() + 1024, 0);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&tar).expect("gzip");
        gz.finish().expect("gzip finish")
    }
}

/// The tag of the wheel every resolver can install.
pub const PURE_TAG: &str = "py3-none-any";

/// Platform wheels each release also carries, none installable here (Windows and macOS
/// builds): a resolver must pass over them, and their hashes must not end up in a lock.
pub const FOREIGN_TAGS: [&str; 2] = ["cp312-cp312-win_amd64", "cp311-cp311-macosx_11_0_arm64"];

/// A ustar header for a regular file (mode 0644, mtime 0).
fn ustar_header(path: &str, size: usize) -> [u8; 512] {
    let mut h = [0u8; 512];
    assert!(path.len() <= 100, "test sdist path too long: {path}");
    h[..path.len()].copy_from_slice(path.as_bytes());
    let mut field = |at: usize, width: usize, value: String| {
        h[at..at + value.len()].copy_from_slice(value.as_bytes());
        debug_assert!(value.len() < width);
    };
    field(100, 8, format!("{:07o}", 0o644));
    field(108, 8, format!("{:07o}", 0));
    field(116, 8, format!("{:07o}", 0));
    field(124, 12, format!("{size:011o}"));
    field(136, 12, format!("{:011o}", 0));
    h[156] = b'0';
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
    h
}

/// PEP 503 name normalisation.
pub fn normalize(name: &str) -> String {
    let mut out = String::new();
    let mut dash = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            dash = true;
            continue;
        }
        if dash && !out.is_empty() {
            out.push('-');
        }
        dash = false;
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The hex sha256 of `data`.
pub fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What the index does when a wheel file (not its metadata) is requested.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Serve it.
    None,
    /// Accept the request and never answer.
    Stall,
    /// Announce the full length, send half the body, close the connection.
    Reset,
    /// Send the first half only, with a matching length (the sha256 cannot match).
    Truncate,
    /// Answer with this status and no body.
    Status(u16),
    /// Redirect (302) to this URL.
    Redirect(String),
    /// Every request (pages and files) must carry HTTP Basic `user:password`: 401 otherwise,
    /// as a private index answers.
    RequireBasic(String),
}

/// One file of a release, as an index lists it.
struct Published {
    wheel: Wheel,
    filename: String,
    bytes: Vec<u8>,
    sha256: String,
    /// PEP 658 metadata (wheels only, as PyPI serves it).
    metadata_sha256: Option<String>,
}

impl Published {
    /// Every file of a release in the order PyPI lists a typical upload: the sdist, the
    /// platform wheels, then the pure wheel — each with its own bytes and hash.
    fn release(wheel: &Wheel) -> Vec<Published> {
        let metadata_sha256 = sha256_hex(wheel.metadata().as_bytes());
        let mut files = vec![(wheel.sdist_filename(), wheel.build_sdist(), None)];
        for tag in FOREIGN_TAGS {
            files.push((
                wheel.filename_for(tag),
                wheel.build_for(tag),
                Some(metadata_sha256.clone()),
            ));
        }
        files.push((
            wheel.filename(),
            wheel.build(),
            Some(metadata_sha256.clone()),
        ));
        files
            .into_iter()
            .map(|(filename, bytes, metadata_sha256)| Published {
                wheel: wheel.clone(),
                sha256: sha256_hex(&bytes),
                filename,
                bytes,
                metadata_sha256,
            })
            .collect()
    }
}

/// A running index; stops when dropped.
pub struct TestIndex {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Where the wheels are also written (for `--find-links` tests).
    pub wheel_dir: PathBuf,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
    fault: Arc<Mutex<Fault>>,
    /// The target of every request served, in order.
    served: Arc<Mutex<Vec<String>>>,
    _dir: tempfile::TempDir,
}

impl TestIndex {
    /// Builds the wheels and starts serving them.
    pub fn start(wheels: &[Wheel]) -> TestIndex {
        let dir = tempfile::tempdir().expect("temp dir");
        let wheel_dir = dir.path().join("wheels");
        std::fs::create_dir_all(&wheel_dir).expect("wheel dir");
        let mut projects: BTreeMap<String, Vec<Published>> = BTreeMap::new();
        for w in wheels {
            for published in Published::release(w) {
                std::fs::write(wheel_dir.join(&published.filename), &published.bytes)
                    .expect("write release file");
                projects.entry(w.normalized()).or_default().push(published);
            }
        }
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().expect("local address").port();
        let base = format!("http://127.0.0.1:{port}");
        let projects = Arc::new(projects);
        let stop = Arc::new(AtomicBool::new(false));
        let fault = Arc::new(Mutex::new(Fault::None));
        let served = Arc::new(Mutex::new(Vec::new()));
        // One thread per connection, each serving its keep-alive requests in order: resolvers
        // open many connections at once and none may wait on another.
        let acceptor = {
            let stop = stop.clone();
            let fault = fault.clone();
            let served = served.clone();
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    // Head and body are separate writes: without TCP_NODELAY, Nagle's
                    // algorithm meets the client's delayed ACK and every response waits 40 ms.
                    let _ = stream.set_nodelay(true);
                    let projects = projects.clone();
                    let fault = fault.clone();
                    let served = served.clone();
                    std::thread::spawn(move || {
                        serve_connection(stream, &projects, &fault, &served)
                    });
                }
            })
        };
        TestIndex {
            base,
            wheel_dir,
            stop,
            acceptor: Some(acceptor),
            fault,
            served,
            _dir: dir,
        }
    }

    /// From now on, requests for wheel files meet `fault`.
    pub fn set_fault(&self, fault: Fault) {
        *self.fault.lock().unwrap() = fault;
    }

    /// How many requests so far asked for `target` (`/simple/NAME/`, a file's path).
    pub fn requests_for(&self, target: &str) -> usize {
        let served = self.served.lock().unwrap();
        served.iter().filter(|t| *t == target).count()
    }

    /// The simple-API URL (`--index-url`).
    pub fn url(&self) -> String {
        format!("{}/simple", self.base)
    }

    /// The directory of built wheels.
    pub fn wheels(&self) -> &Path {
        &self.wheel_dir
    }
}

impl TestIndex {
    /// Stops serving: new connections are refused from now on (the URL stays the same).
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the acceptor so it sees the flag.
        let _ = TcpStream::connect(self.base.trim_start_matches("http://"));
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

impl Drop for TestIndex {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the acceptor so it sees the flag.
        let _ = TcpStream::connect(self.base.trim_start_matches("http://"));
        if let Some(t) = self.acceptor.take() {
            let _ = t.join();
        }
    }
}

/// Serves HTTP/1.1 GET/HEAD requests on one connection until the client closes it.
fn serve_connection(
    stream: TcpStream,
    projects: &BTreeMap<String, Vec<Published>>,
    fault: &Mutex<Fault>,
    served: &Mutex<Vec<String>>,
) {
    let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(60)));
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        match reader.read_line(&mut request_line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let mut parts = request_line.split_whitespace();
        let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
            return;
        };
        let (method, target) = (method.to_string(), target.to_string());
        served.lock().unwrap().push(target.clone());
        let mut accept = String::new();
        let mut authorization = None;
        let mut close = false;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
                if k == "accept" {
                    accept = v.to_string();
                } else if k == "authorization" {
                    authorization = Some(v.to_string());
                } else if k == "connection" && v.eq_ignore_ascii_case("close") {
                    close = true;
                }
            }
        }
        if let Fault::RequireBasic(credentials) = fault.lock().unwrap().clone() {
            use base64::Engine;
            let wanted = format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(credentials)
            );
            if authorization.as_deref() != Some(wanted.as_str()) {
                let _ = writer.write_all(
                    b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"index\"\r\nContent-Length: 0\r\n\r\n",
                );
                if close {
                    return;
                }
                continue;
            }
        }
        let path = target.split('?').next().unwrap_or("");
        let wants_json = accept.contains("application/vnd.pypi.simple.v1+json");
        let mut reply = respond(path, wants_json, projects);
        if std::env::var_os("INDEX_DEBUG").is_some() {
            eprintln!("index: {method} {target} -> {}", reply.status);
        }
        let mut extra_header = String::new();
        let mut declared_length = reply.body.len();
        if path.ends_with(".whl") {
            let current = fault.lock().unwrap().clone();
            match current {
                Fault::None => {}
                Fault::Stall => {
                    std::thread::sleep(std::time::Duration::from_secs(600));
                    return;
                }
                Fault::Reset => {
                    reply.body.truncate(reply.body.len() / 2);
                    close = true;
                }
                Fault::Truncate => {
                    reply.body.truncate(reply.body.len() / 2);
                    declared_length = reply.body.len();
                }
                Fault::Status(code) => {
                    reply.status = code;
                    reply.body.clear();
                    declared_length = 0;
                }
                Fault::Redirect(to) => {
                    reply.status = 302;
                    reply.body.clear();
                    declared_length = 0;
                    extra_header = format!("Location: {to}\r\n");
                }
                // Checked for every request above.
                Fault::RequireBasic(_) => {}
            }
        }
        let reason = match reply.status {
            200 => "OK",
            302 => "Found",
            404 => "Not Found",
            _ => "Error",
        };
        let head = format!(
            "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{extra_header}{}\r\n",
            reply.status,
            reply.content_type,
            declared_length,
            if close { "Connection: close\r\n" } else { "" }
        );
        let written = writer.write_all(head.as_bytes()).and_then(|()| {
            if method == "HEAD" {
                Ok(())
            } else {
                writer.write_all(&reply.body)
            }
        });
        if written.and_then(|()| writer.flush()).is_err() || close {
            return;
        }
    }
}

/// One response.
struct Reply {
    status: u16,
    content_type: &'static str,
    body: Vec<u8>,
}

impl Reply {
    fn ok(content_type: &'static str, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status: 200,
            content_type,
            body: body.into(),
        }
    }

    fn not_found() -> Reply {
        Reply {
            status: 404,
            content_type: "text/plain",
            body: b"not found".to_vec(),
        }
    }
}

const SIMPLE_JSON: &str = "application/vnd.pypi.simple.v1+json";

fn respond(path: &str, wants_json: bool, projects: &BTreeMap<String, Vec<Published>>) -> Reply {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    match parts.as_slice() {
        ["simple"] => {
            if wants_json {
                let list: Vec<serde_json::Value> = projects
                    .keys()
                    .map(|n| serde_json::json!({"name": n}))
                    .collect();
                let body = serde_json::json!({"meta": {"api-version": "1.1"}, "projects": list})
                    .to_string();
                Reply::ok(SIMPLE_JSON, body)
            } else {
                let links: String = projects
                    .keys()
                    .map(|n| format!("<a href=\"/simple/{n}/\">{n}</a>\n"))
                    .collect();
                Reply::ok("text/html", format!("<html><body>\n{links}</body></html>"))
            }
        }
        ["simple", name] => {
            let Some(files) = projects.get(&normalize(name)) else {
                return Reply::not_found();
            };
            if wants_json {
                let mut versions: Vec<String> =
                    files.iter().map(|f| f.wheel.version.clone()).collect();
                versions.dedup();
                let entries: Vec<serde_json::Value> = files
                    .iter()
                    .map(|f| {
                        let mut e = serde_json::json!({
                            "filename": f.filename,
                            "url": format!("/files/{}", f.filename),
                            "hashes": {"sha256": f.sha256},
                            "size": f.bytes.len(),
                        });
                        if let Some(metadata) = &f.metadata_sha256 {
                            e["core-metadata"] = serde_json::json!({"sha256": metadata});
                        }
                        if let Some(t) = &f.wheel.upload_time {
                            e["upload-time"] = serde_json::json!(t);
                        }
                        if let Some(rp) = &f.wheel.requires_python {
                            e["requires-python"] = serde_json::json!(rp);
                        }
                        e
                    })
                    .collect();
                let body = serde_json::json!({"meta": {"api-version": "1.1"}, "name": normalize(name), "versions": versions, "files": entries}).to_string();
                Reply::ok(SIMPLE_JSON, body)
            } else {
                let links: String = files
                    .iter()
                    .map(|f| {
                        let rp = f
                            .wheel
                            .requires_python
                            .as_deref()
                            .map(|r| {
                                format!(
                                    " data-requires-python=\"{}\"",
                                    r.replace('<', "&lt;").replace('>', "&gt;")
                                )
                            })
                            .unwrap_or_default();
                        let metadata = f
                            .metadata_sha256
                            .as_deref()
                            .map(|m| format!(" data-core-metadata=\"sha256={m}\""))
                            .unwrap_or_default();
                        format!(
                            "<a href=\"/files/{0}#sha256={1}\"{rp}{metadata}>{0}</a>\n",
                            f.filename, f.sha256,
                        )
                    })
                    .collect();
                Reply::ok("text/html", format!("<html><body>\n{links}</body></html>"))
            }
        }
        ["files", filename] => {
            let all = projects.values().flatten();
            if let Some(name) = filename.strip_suffix(".metadata") {
                if let Some(f) = all
                    .clone()
                    .find(|f| f.filename == name && f.metadata_sha256.is_some())
                {
                    return Reply::ok("text/plain", f.wheel.metadata());
                }
            } else if let Some(f) = all.clone().find(|f| f.filename == *filename) {
                return Reply::ok("application/octet-stream", f.bytes.clone());
            }
            Reply::not_found()
        }
        _ => Reply::not_found(),
    }
}
