//! A loopback HTTP server for one JSON document (a catalog feed), answering conditional
//! requests with `304` as a CDN would, with a settable status fault.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// What the server holds and saw.
#[derive(Default)]
struct State {
    body: String,
    etag: String,
    fault: Option<u16>,
    /// Status of every answer, in order.
    answers: Vec<u16>,
}

/// A running feed server (its thread ends with the process).
pub struct FeedServer {
    /// `http://127.0.0.1:PORT/plugin-catalog.json`.
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl FeedServer {
    /// Serves `body` with ETag `"v1"`.
    pub fn start(body: &str) -> FeedServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!(
            "http://{}/plugin-catalog.json",
            listener.local_addr().unwrap()
        );
        let state = Arc::new(Mutex::new(State {
            body: body.to_string(),
            etag: "\"v1\"".into(),
            ..State::default()
        }));
        let s = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(&stream);
                let mut if_none_match = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':')
                        && name.eq_ignore_ascii_case("if-none-match")
                    {
                        if_none_match = Some(value.trim().to_string());
                    }
                }
                let mut st = s.lock().unwrap();
                let (status, body) = match st.fault {
                    Some(code) => (code, String::new()),
                    None if if_none_match.as_deref() == Some(st.etag.as_str()) => {
                        (304, String::new())
                    }
                    None => (200, st.body.clone()),
                };
                st.answers.push(status);
                let head = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nETag: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    st.etag,
                    body.len()
                );
                drop(st);
                let mut stream = &stream;
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(body.as_bytes());
            }
        });
        FeedServer { url, state }
    }

    /// Publishes a new document (with a new ETag).
    pub fn publish(&self, body: &str) {
        let mut st = self.state.lock().unwrap();
        st.body = body.to_string();
        let n = st.answers.len();
        st.etag = format!("\"v{}\"", n + 2);
    }

    /// Answers every request with `status` (or serves again with `None`).
    pub fn set_fault(&self, status: Option<u16>) {
        self.state.lock().unwrap().fault = status;
    }

    /// The status of every answer so far.
    pub fn answers(&self) -> Vec<u16> {
        self.state.lock().unwrap().answers.clone()
    }
}
