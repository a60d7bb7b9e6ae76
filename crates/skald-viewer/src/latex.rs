//! LaTeX compiled to PDF with tectonic's engines (pinned; used only in this module's
//! `latex/` files), each build in a worker process of its own (`worker`) that is killed on
//! its timeout, when it is stopped and when a newer build of the same document supersedes
//! it — tectonic's engines hold a process-wide lock and cannot be interrupted, so a
//! document that loops forever must not run in the process that serves the next build.
//!
//! What a build may touch is decided by our own I/O layer (`io`, `policy`): it reads only
//! the document's folder tree (never a `secrets/` folder, never a folder of the deny list)
//! and the TeX bundle, writes only into its work folder, and refuses absolute and `..`
//! names with an error that names the file.
//!
//! A build is cached by the document's path and a hash of every input file's content —
//! the files the last successful compile read from the document's folder, not the TeX
//! bundle's — so an unchanged document is served without running TeX. A failed compile is
//! reported as `file:line: message` errors from its log. One build per document at a time.

pub mod bundle;
mod driver;
mod io;
mod policy;
pub mod worker;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use skald_api::CancellationToken;
pub use skald_api::view::LatexStage;
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use worker::{Outcome, Request};

/// How long a compile may take, unless the engine is given another limit.
pub const COMPILE_TIMEOUT: Duration = Duration::from_secs(120);

/// How often a waiting build looks at its worker, its stop token and its generation.
const POLL: Duration = Duration::from_millis(10);

/// The environment variables a worker gets from its parent (with any case); all others
/// are left out.
const WORKER_ENV_KEPT: &[&str] = &[
    "HOME",
    "USER",
    "LOGNAME",
    "PATH",
    "TMPDIR",
    "TEMP",
    "TMP",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_DATA_DIRS",
    "FONTCONFIG_FILE",
    "FONTCONFIG_PATH",
    "TECTONIC_CACHE_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "RUST_BACKTRACE",
    // Windows: where caches live, and what its system libraries need.
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "SYSTEMROOT",
    "WINDIR",
];

/// How long a killed worker is waited for.
const REAP_TIMEOUT: Duration = Duration::from_secs(2);

/// Where the TeX support files come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum BundleChoice {
    /// A local zip bundle (offline).
    Zip(PathBuf),
    /// Tectonic's default online bundle, cached by tectonic; offline it works from that
    /// cache, or fails with a clear message.
    Default,
}

pub use skald_api::view::TexError;

#[derive(Debug, thiserror::Error)]
pub enum LatexError {
    #[error("LaTeX errors:\n{}", .errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Compile { errors: Vec<TexError> },
    #[error("the TeX bundle is not available: {0}")]
    Bundle(String),
    #[error("the compile took longer than {} s and was stopped", .0.as_secs_f64())]
    Timeout(Duration),
    #[error("a newer build of this document replaced this one")]
    Superseded,
    #[error("the build was stopped")]
    Cancelled,
    /// The worker process could not be started or ended without an answer.
    #[error("{0}")]
    Worker(String),
    #[error("{0}")]
    Io(String),
}

/// A finished build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Build {
    pub pdf: PathBuf,
    /// Served from the cache: nothing changed since the last build.
    pub from_cache: bool,
    /// The document's own input files, which a watcher should follow.
    pub inputs: Vec<PathBuf>,
    pub millis: u64,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
struct Manifest {
    /// (input, sha256 of its content) for every input of the build.
    inputs: Vec<(PathBuf, String)>,
}

/// The program a worker runs: by default this process's own executable (whose `main`
/// calls [`worker::run_worker_if_asked`] first); tests point it at their own binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerCommand {
    pub program: PathBuf,
    pub args: Vec<OsString>,
}

impl WorkerCommand {
    pub fn new<A: Into<OsString>>(
        program: impl Into<PathBuf>,
        args: impl IntoIterator<Item = A>,
    ) -> WorkerCommand {
        WorkerCommand {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }
}

pub struct LatexEngine {
    cache_dir: PathBuf,
    bundle: BundleChoice,
    /// The offline bundle used instead of the default online one once it exists
    /// (`skald latex bundle` builds it; a build made while Skald runs counts from the
    /// next compile).
    offline: Option<PathBuf>,
    /// Never read by a build (credential folders, Skald's own secrets).
    deny: Vec<PathBuf>,
    worker: Option<WorkerCommand>,
    timeout: Duration,
    /// The newest build requested per document; older ones give way.
    generations: Mutex<HashMap<PathBuf, u64>>,
    /// One compile per document at a time.
    locks: Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>,
    /// The builds under way (waiting or compiling), by id: their document and the token
    /// that stops them.
    running: Mutex<HashMap<u64, (PathBuf, CancellationToken)>>,
    next_id: AtomicU64,
}

use skald_base::lock;

fn sha256_file(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    Some(format!("{:x}", Sha256::digest(&bytes)))
}

fn millis_since(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A build's entry in `running`, removed however the build ends.
struct Registered<'a> {
    engine: &'a LatexEngine,
    id: u64,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        lock(&self.engine.running).remove(&self.id);
    }
}

/// A worker process: killed and reaped when dropped, unless it already ended.
struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Drop for Worker {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let until = Instant::now() + REAP_TIMEOUT;
            while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        // Closed last: a worker that somehow survived the kill ends when it sees EOF.
        self.stdin.take();
    }
}

/// The last `max` bytes of a text file, for an error message.
fn tail(path: &Path, max: usize) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let start = text.len().saturating_sub(max);
    String::from_utf8_lossy(&text[start..]).trim().to_string()
}

impl LatexEngine {
    /// `cache_dir` holds the builds and the format files; `deny` lists folders (or files)
    /// no build may read, on top of the rules every build follows (see the module doc).
    pub fn new(cache_dir: PathBuf, bundle: BundleChoice, deny: Vec<PathBuf>) -> LatexEngine {
        LatexEngine {
            cache_dir,
            bundle,
            offline: None,
            deny,
            worker: None,
            timeout: COMPILE_TIMEOUT,
            generations: Mutex::new(HashMap::new()),
            locks: Mutex::new(HashMap::new()),
            running: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
        }
    }

    /// Uses the zip at `offline` instead of the default online bundle whenever it exists.
    pub fn with_offline(mut self, offline: PathBuf) -> LatexEngine {
        self.offline = Some(offline);
        self
    }

    /// The bundle a compile starting now uses.
    fn bundle_now(&self) -> BundleChoice {
        bundle::resolve(&self.bundle, self.offline.as_deref())
    }

    /// Runs workers with this command instead of this process's own executable.
    pub fn with_worker(mut self, worker: WorkerCommand) -> LatexEngine {
        self.worker = Some(worker);
        self
    }

    /// Kills a compile after `timeout` instead of `COMPILE_TIMEOUT`.
    pub fn with_timeout(mut self, timeout: Duration) -> LatexEngine {
        self.timeout = timeout;
        self
    }

    /// Stops every build of `tex` under way (its worker is killed; the build returns
    /// `LatexError::Cancelled`). Whether there was one.
    pub fn stop(&self, tex: &Path) -> bool {
        let running = lock(&self.running);
        let mut any = false;
        for (doc, token) in running.values() {
            if doc == tex {
                token.cancel();
                any = true;
            }
        }
        any
    }

    /// Stops every build under way (when the app shuts down).
    pub fn stop_all(&self) {
        for (_, token) in lock(&self.running).values() {
            token.cancel();
        }
    }

    /// The cache folder of one document.
    fn doc_dir(&self, tex: &Path) -> PathBuf {
        let key = format!("{:x}", Sha256::digest(tex.display().to_string().as_bytes()));
        self.cache_dir.join(&key[..16])
    }

    /// Builds `tex` (an absolute path) to PDF, from the cache when none of its inputs
    /// changed. Blocking: call it off the async runtime (`spawn_blocking`). It ends within
    /// the engine's timeout, at once when `cancel` fires or `stop` is called for `tex`,
    /// and when a newer build of `tex` is requested (`LatexError::Superseded`).
    pub fn build(&self, tex: &Path, cancel: &CancellationToken) -> Result<Build, LatexError> {
        self.build_reporting(tex, cancel, &|_| {})
    }

    /// `build`, telling `progress` each stage the worker reaches (none for a build
    /// answered from the cache): a viewer says "making the LaTeX format" while a first
    /// build takes its seconds.
    pub fn build_reporting(
        &self,
        tex: &Path,
        cancel: &CancellationToken,
        progress: &(dyn Fn(LatexStage) + Sync),
    ) -> Result<Build, LatexError> {
        let started = Instant::now();
        let generation = {
            let mut g = lock(&self.generations);
            let n = g.entry(tex.to_path_buf()).or_insert(0);
            *n += 1;
            *n
        };
        let token = cancel.child_token();
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        lock(&self.running).insert(id, (tex.to_path_buf(), token.clone()));
        let _registered = Registered { engine: self, id };
        let is_current = || lock(&self.generations).get(tex).copied() == Some(generation);

        let doc_lock = lock(&self.locks)
            .entry(tex.to_path_buf())
            .or_default()
            .clone();
        let _one_at_a_time = lock(&doc_lock);
        if !is_current() {
            return Err(LatexError::Superseded);
        }
        if token.is_cancelled() {
            return Err(LatexError::Cancelled);
        }
        let dir = self.doc_dir(tex);
        let pdf = dir.join("out.pdf");
        let manifest_path = dir.join("manifest.json");
        if let Some(m) = std::fs::read(&manifest_path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Manifest>(&b).ok())
            && pdf.is_file()
            && m.inputs
                .iter()
                .all(|(p, h)| sha256_file(p).as_deref() == Some(h.as_str()))
        {
            return Ok(Build {
                pdf,
                from_cache: true,
                inputs: m.inputs.into_iter().map(|(p, _)| p).collect(),
                millis: millis_since(started),
            });
        }
        let io = |e: std::io::Error| LatexError::Io(format!("{}: {e}", dir.display()));
        std::fs::create_dir_all(&dir).map_err(io)?;
        let work = dir.join("work");
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).map_err(io)?;
        // The last successful build's intermediate files (.aux, .toc, …): when a pass
        // writes them back unchanged, TeX is not run a second time.
        let previous = dir.join("previous");
        let request = Request {
            tex: tex.to_path_buf(),
            work: work.clone(),
            previous: previous.clone(),
            bundle: self.bundle_now(),
            formats: self.cache_dir.join("formats"),
            deny: self.deny.clone(),
            result: dir.join("result.json"),
            timeout_ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
        };
        let outcome = self.run_worker(&request, &dir, &token, &is_current, progress)?;
        if !is_current() {
            return Err(LatexError::Superseded);
        }
        let inputs = match outcome {
            Outcome::Built { inputs } => inputs,
            Outcome::Compile { errors } => return Err(LatexError::Compile { errors }),
            Outcome::Bundle { message } => return Err(LatexError::Bundle(message)),
            Outcome::Io { message } => return Err(LatexError::Io(message)),
        };
        let stem = tex.file_stem().and_then(|s| s.to_str()).unwrap_or("texput");
        std::fs::rename(work.join(format!("{stem}.pdf")), &pdf).map_err(io)?;
        // What is left in the work folder are this build's intermediates: the next
        // build's "previous".
        let _ = std::fs::remove_dir_all(&previous);
        std::fs::rename(&work, &previous).map_err(io)?;
        let manifest = Manifest {
            inputs: inputs
                .iter()
                .filter_map(|p| sha256_file(p).map(|h| (p.clone(), h)))
                .collect(),
        };
        std::fs::write(
            &manifest_path,
            serde_json::to_vec(&manifest).unwrap_or_default(),
        )
        .map_err(io)?;
        Ok(Build {
            pdf,
            from_cache: false,
            inputs,
            millis: millis_since(started),
        })
    }

    /// Starts a worker for `request` and waits for it, killing it on the timeout, on
    /// `token` and when this build is no longer the newest of its document.
    fn run_worker(
        &self,
        request: &Request,
        dir: &Path,
        token: &CancellationToken,
        is_current: &dyn Fn() -> bool,
        progress: &(dyn Fn(LatexStage) + Sync),
    ) -> Result<Outcome, LatexError> {
        // A carrier whose main forgot `run_worker_if_asked` would start itself again and
        // again; the second generation stops here.
        if std::env::var_os(worker::WORKER_ENV).is_some() {
            return Err(LatexError::Worker(format!(
                "this process was started as a LaTeX worker ({}) but did not act as one: \
                 its main must call skald_viewer::latex::worker::run_worker_if_asked first",
                worker::WORKER_ENV
            )));
        }
        let command = match &self.worker {
            Some(w) => w.clone(),
            None => WorkerCommand::new(
                std::env::current_exe().map_err(|e| {
                    LatexError::Worker(format!("cannot find this program to run LaTeX: {e}"))
                })?,
                Vec::<OsString>::new(),
            ),
        };
        let _ = std::fs::remove_file(&request.result);
        let log_path = dir.join("worker.log");
        let log = std::fs::File::create(&log_path)
            .map_err(|e| LatexError::Io(format!("{}: {e}", log_path.display())))?;
        let mut cmd = Command::new(&command.program);
        // Only what TeX, fontconfig and the bundle's download need: no provider keys, no
        // restart token (another process of the user could read a worker's environment).
        cmd.env_clear();
        for (name, value) in std::env::vars_os() {
            if name
                .to_str()
                .is_some_and(|n| WORKER_ENV_KEPT.iter().any(|k| k.eq_ignore_ascii_case(n)))
            {
                cmd.env(name, value);
            }
        }
        cmd.args(&command.args)
            .env(worker::WORKER_ENV, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log);
        // A group of its own: a Ctrl-C in the terminal reaches the parent, which stops
        // the build, rather than killing the worker under it.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().map_err(|e| {
            LatexError::Worker(format!(
                "cannot start the LaTeX worker {}: {e}",
                command.program.display()
            ))
        })?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let mut worker = Worker { child, stdin };
        let line = serde_json::to_string(request)
            .map_err(|e| LatexError::Worker(format!("cannot encode the build request: {e}")))?;
        if let Some(stdin) = worker.stdin.as_mut() {
            // A worker that died at once is reported below, from its exit.
            let _ = stdin
                .write_all(line.as_bytes())
                .and_then(|()| stdin.write_all(b"\n"))
                .and_then(|()| stdin.flush());
        }
        let deadline = Instant::now() + self.timeout;
        // The worker's stage reports, read until its stdout closes: when it exits or is
        // killed (every return below drops `worker`), so the scope never outlives it.
        std::thread::scope(|scope| {
            if let Some(out) = stdout {
                scope.spawn(move || {
                    for line in std::io::BufRead::lines(std::io::BufReader::new(out)) {
                        let Ok(line) = line else { return };
                        if let Some(stage) = worker::parse_report(&line) {
                            progress(stage);
                        }
                    }
                });
            }
            self.wait_worker(
                worker, request, &log_path, &command, deadline, token, is_current,
            )
        })
    }

    /// Waits for the worker to end and reads its result; killing it (by dropping it) on
    /// the timeout, on `token` and when its build is superseded.
    #[allow(clippy::too_many_arguments)]
    fn wait_worker(
        &self,
        mut worker: Worker,
        request: &Request,
        log_path: &Path,
        command: &WorkerCommand,
        deadline: Instant,
        token: &CancellationToken,
        is_current: &dyn Fn() -> bool,
    ) -> Result<Outcome, LatexError> {
        let status = loop {
            match worker.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {}
                Err(e) => {
                    return Err(LatexError::Worker(format!(
                        "cannot wait for the LaTeX worker: {e}"
                    )));
                }
            }
            // Each return drops `worker`, which kills it.
            if token.is_cancelled() {
                return Err(LatexError::Cancelled);
            }
            if !is_current() {
                return Err(LatexError::Superseded);
            }
            if Instant::now() >= deadline {
                return Err(LatexError::Timeout(self.timeout));
            }
            std::thread::sleep(POLL);
        };
        drop(worker);
        let bytes = std::fs::read(&request.result).map_err(|_| {
            let said = tail(log_path, 1500);
            // The engines' image readers stop the process on a damaged file (libpng
            // aborts); say what that means before what it printed.
            let hint = if said.contains("libpng error") {
                " — a PNG image the document includes is damaged"
            } else {
                ""
            };
            LatexError::Worker(format!(
                "the LaTeX worker ({}) ended ({status}) without a result{hint}{}",
                command.program.display(),
                if said.is_empty() {
                    String::new()
                } else {
                    format!(": {said}")
                }
            ))
        })?;
        serde_json::from_slice(&bytes)
            .map_err(|e| LatexError::Worker(format!("the LaTeX worker's result is garbled: {e}")))
    }
}

/// `file:line: message` for each `! …` error of a TeX log: the file is the last one
/// TeX opened before the error, the line the `l.N` that follows it.
fn parse_log(log: &str, root: &Path) -> Vec<TexError> {
    let mut errors = Vec::new();
    // TeX writes `(file` when it opens a file and `)` when it closes it: a stack of what
    // is open says which file an error is in. Parentheses that open no file (in
    // messages) are kept as `None` so that their `)` closes nothing real.
    let mut open: Vec<Option<String>> = Vec::new();
    let lines: Vec<&str> = log.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        for (pos, c) in line.char_indices() {
            match c {
                '(' => {
                    let name: String = line[pos + 1..]
                        .chars()
                        .take_while(|c| !c.is_whitespace() && *c != ')' && *c != '(')
                        .collect();
                    let is_file = !name.is_empty()
                        && (name.contains('.') || root.join(format!("{name}.tex")).is_file());
                    open.push(is_file.then_some(name));
                }
                ')' => {
                    open.pop();
                }
                _ => {}
            }
        }
        if let Some(message) = line.strip_prefix("! ") {
            let current = open
                .iter()
                .rev()
                .find_map(|f| f.clone())
                .unwrap_or_else(|| "?".to_string());
            let line_no = lines[i + 1..]
                .iter()
                .take(12)
                .find_map(|l| l.strip_prefix("l."))
                .and_then(|l| l.split_whitespace().next())
                .and_then(|n| n.parse().ok());
            let file = if Path::new(&current).extension().is_none() {
                format!("{current}.tex")
            } else {
                current.trim_start_matches("./").to_string()
            };
            errors.push(TexError {
                file,
                line: line_no,
                message: message.trim().to_string(),
            });
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_closed_before_the_error_is_not_blamed() {
        let dir = tempfile::tempdir().unwrap();
        let log = "(paper.tex\nLaTeX2e (article.cls (size10.clo)) (ts1cmr.fd)\n\
                   [1] (see the transcript)\n! Undefined control sequence.\nl.4 \\undefinedmacro\n";
        let errors = parse_log(log, dir.path());
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].file, "paper.tex");
        assert_eq!(errors[0].line, Some(4));
    }

    #[test]
    fn errors_name_their_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("broken.tex"), "x").unwrap();
        let log = "This is XeTeX\n(main.tex\nLaTeX2e\n (broken\n! Undefined control sequence.\nl.2 \\undefinedcommand\n                      here\n";
        let errors = parse_log(log, dir.path());
        assert_eq!(
            errors,
            [TexError {
                file: "broken.tex".into(),
                line: Some(2),
                message: "Undefined control sequence.".into()
            }]
        );
        assert_eq!(
            errors[0].to_string(),
            "broken.tex:2: Undefined control sequence."
        );
    }
}
