//! A model hub on a real socket on 127.0.0.1 that answers as Hugging Face's `resolve`
//! endpoint does, for `HF_ENDPOINT`: `HEAD` or `GET /OWNER/REPO/resolve/REV/FILE` of an
//! LFS file is a `302` to the file's storage address carrying `X-Linked-Etag` (the file's
//! SHA-256, quoted) and `X-Linked-Size`; the storage address answers `GET` with the bytes,
//! `Range: bytes=N-` with `206` and the rest. It records every request line with its
//! `Range` and `Authorization` headers.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// One file the hub serves.
#[derive(Clone, Debug, Default)]
pub struct HubFile {
    pub bytes: Vec<u8>,
    /// The checksum the hub lists; the bytes' own when none is set (a hub whose listing
    /// and storage disagree is what the client must catch).
    pub listed_sha256: Option<String>,
    /// Only a request with `Authorization: Bearer <this>` may see the file (a gated
    /// repository); others get 401.
    pub token: Option<String>,
    /// The first download of the file stops after this many bytes (a broken connection).
    pub cut_first_at: Option<usize>,
}

/// One request as the hub saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HubRequest {
    pub method: String,
    pub path: String,
    pub range: Option<String>,
    pub authorization: Option<String>,
}

pub struct Hub {
    /// `http://127.0.0.1:PORT`, for `HF_ENDPOINT`.
    pub endpoint: String,
    pub requests: Arc<Mutex<Vec<HubRequest>>>,
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Hub {
    /// Serves `files`, each under its path in a repository (`OWNER/REPO/FILE`), at every
    /// revision.
    pub fn new(files: Vec<(&str, HubFile)>) -> Hub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let files: HashMap<String, HubFile> =
            files.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            let mut downloads: HashMap<String, usize> = HashMap::new();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                let mut words = line.split_whitespace();
                let method = words.next().unwrap_or_default().to_string();
                let path = words.next().unwrap_or_default().to_string();
                let (mut range, mut authorization) = (None, None);
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                        break;
                    }
                    let (name, value) = h.split_once(':').unwrap_or((&h, ""));
                    match name.trim().to_ascii_lowercase().as_str() {
                        "range" => range = Some(value.trim().to_string()),
                        "authorization" => authorization = Some(value.trim().to_string()),
                        _ => {}
                    }
                }
                seen.lock().unwrap().push(HubRequest {
                    method: method.clone(),
                    path: path.clone(),
                    range: range.clone(),
                    authorization: authorization.clone(),
                });
                let reply = answer(&files, &mut downloads, &method, &path, range, authorization);
                let _ = stream.write_all(&reply);
                let _ = stream.flush();
            }
        });
        Hub { endpoint, requests }
    }
}

fn head(status: &str, headers: &[(&str, String)], length: usize) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status}\r\nContent-Length: {length}\r\nConnection: close\r\n");
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.into_bytes()
}

fn answer(
    files: &HashMap<String, HubFile>,
    downloads: &mut HashMap<String, usize>,
    method: &str,
    path: &str,
    range: Option<String>,
    authorization: Option<String>,
) -> Vec<u8> {
    // /OWNER/REPO/resolve/REV/FILE… → the file's listing; /storage/OWNER/REPO/FILE… → bytes.
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let not_found = head("404 Not Found", &[], 0);
    if parts.first() == Some(&"storage") {
        let key = parts[1..].join("/");
        let Some(f) = files.get(&key) else {
            return not_found;
        };
        let from = range
            .as_deref()
            .and_then(|r| r.strip_prefix("bytes="))
            .and_then(|r| r.trim_end_matches('-').parse::<usize>().ok())
            .unwrap_or(0)
            .min(f.bytes.len());
        let rest = &f.bytes[from..];
        let status = if from > 0 {
            "206 Partial Content"
        } else {
            "200 OK"
        };
        let mut out = head(
            status,
            &[("Content-Type", "application/octet-stream".into())],
            rest.len(),
        );
        if method == "HEAD" {
            return out;
        }
        let n = downloads.entry(key).or_insert(0);
        *n += 1;
        let send = match f.cut_first_at {
            Some(c) if *n == 1 => &rest[..c.min(rest.len())],
            _ => rest,
        };
        out.extend_from_slice(send);
        return out;
    }
    if parts.len() < 5 || parts[2] != "resolve" {
        return not_found;
    }
    let key = format!("{}/{}/{}", parts[0], parts[1], parts[4..].join("/"));
    let Some(f) = files.get(&key) else {
        return not_found;
    };
    if let Some(t) = &f.token
        && authorization.as_deref() != Some(&format!("Bearer {t}"))
    {
        return head("401 Unauthorized", &[], 0);
    }
    let sha = f
        .listed_sha256
        .clone()
        .unwrap_or_else(|| sha256_hex(&f.bytes));
    head(
        "302 Found",
        &[
            ("Location", format!("/storage/{key}")),
            ("X-Linked-Etag", format!("\"{sha}\"")),
            ("X-Linked-Size", f.bytes.len().to_string()),
            // The git object's id, which is not the file's checksum.
            (
                "ETag",
                "\"0123456789abcdef0123456789abcdef01234567\"".into(),
            ),
        ],
        0,
    )
}
