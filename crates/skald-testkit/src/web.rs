//! A web site on a real socket on 127.0.0.1 for the web tools' tests: each path answers
//! with a fixed status, headers and body, maybe after a delay; every request is recorded
//! (its line, headers and body), so a test can tell a refused fetch never arrived. Each
//! connection is served on its own thread: a slow page does not hold up the others.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What one path answers.
#[derive(Clone, Debug)]
pub struct Route {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Waits this long before answering (a slow site).
    pub delay: Duration,
}

impl Route {
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Route {
        Route {
            status: 200,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    pub fn redirect(location: &str) -> Route {
        Route {
            status: 302,
            headers: vec![("Location".into(), location.into())],
            body: Vec::new(),
            delay: Duration::ZERO,
        }
    }

    pub fn status(status: u16) -> Route {
        Route {
            status,
            headers: vec![("Content-Type".into(), "text/plain".into())],
            body: b"no".to_vec(),
            delay: Duration::ZERO,
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Route {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn delayed(mut self, delay: Duration) -> Route {
        self.delay = delay;
        self
    }
}

/// One request as the site saw it.
#[derive(Clone, Debug, Default)]
pub struct SiteRequest {
    pub method: String,
    /// The path with its query.
    pub target: String,
    /// Header names in lower case.
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

pub struct WebSite {
    /// `http://127.0.0.1:PORT`.
    pub origin: String,
    pub port: u16,
    pub requests: Arc<Mutex<Vec<SiteRequest>>>,
}

impl WebSite {
    /// Serves `routes` by path (the query left out); anything else is a 404.
    pub fn new(routes: Vec<(&str, Route)>) -> WebSite {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let routes: Arc<HashMap<String, Route>> = Arc::new(
            routes
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        );
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let routes = routes.clone();
                let seen = seen.clone();
                std::thread::spawn(move || serve(stream, &routes, &seen));
            }
        });
        WebSite {
            origin: format!("http://127.0.0.1:{port}"),
            port,
            requests,
        }
    }

    /// `origin` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }

    pub fn requests(&self) -> Vec<SiteRequest> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(
    mut stream: std::net::TcpStream,
    routes: &HashMap<String, Route>,
    seen: &Mutex<Vec<SiteRequest>>,
) {
    let Ok(clone) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(clone);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut words = line.split_whitespace();
    let method = words.next().unwrap_or_default().to_string();
    let target = words.next().unwrap_or_default().to_string();
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = h.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    let length = headers
        .get("content-length")
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    seen.lock().unwrap().push(SiteRequest {
        method,
        target: target.clone(),
        headers,
        body,
    });
    let path = target.split('?').next().unwrap_or_default();
    let route = routes
        .get(path)
        .cloned()
        .unwrap_or_else(|| Route::status(404));
    std::thread::sleep(route.delay);
    let mut out = format!(
        "HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n",
        route.status,
        route.body.len()
    );
    for (k, v) in &route.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let _ = stream.write_all(out.as_bytes());
    let _ = stream.write_all(&route.body);
    let _ = stream.flush();
}

/// A small, valid PDF whose one page says `text` (Helvetica, one line), with a correct
/// cross-reference table, for tests of reading a PDF's text.
pub fn pdf_saying(text: &str) -> Vec<u8> {
    let stream = format!("BT /F1 18 Tf 72 720 Td ({text}) Tj ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
         /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_string(),
        format!(
            "<< /Length {} >>\nstream\n{stream}\nendstream",
            stream.len()
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_string(),
    ];
    pdf_of(&objects)
}

/// A PDF of `objects` (numbered from 1, the first the catalog) with a correct
/// cross-reference table, for tests of reading PDFs, well-formed or crafted.
pub fn pdf_of(objects: &[String]) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}
