//! LaTeX builds run in a child process, a *worker*, so that a build can be killed:
//! tectonic's engines hold a process-wide lock and cannot be interrupted, and a document
//! that loops forever would otherwise hold that lock for the rest of the process.
//!
//! A worker is the carrier's own executable started again with `SKALD_LATEX_WORKER` set;
//! every carrier (`skald`, the desktop app, the benchmarks) calls [`run_worker_if_asked`]
//! first thing in `main`. The parent writes one JSON [`Request`] line to the worker's
//! stdin and keeps stdin open; the worker writes its [`Outcome`] as JSON to the request's
//! `result` file and exits. A worker ends by itself when its stdin closes (the parent is
//! gone) or when its own time is up, so none outlives the build it was started for.

use super::{BundleChoice, TexError};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read};
use std::path::PathBuf;
use std::time::Duration;

/// Set (to anything) in a worker's environment.
pub const WORKER_ENV: &str = "SKALD_LATEX_WORKER";

/// The most a request may be.
const REQUEST_LIMIT: u64 = 1 << 20;

/// How long past the build's timeout a worker waits before it ends itself (the parent
/// normally kills it at the timeout).
const SELF_TIMEOUT_GRACE: Duration = Duration::from_secs(5);

/// Exit codes of a worker.
const EXIT_OK: i32 = 0;
const EXIT_BAD_REQUEST: i32 = 2;
const EXIT_ORPHANED: i32 = 3;
const EXIT_TIMED_OUT: i32 = 4;
const EXIT_NO_RESULT: i32 = 5;

/// One build, as the parent asks for it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Request {
    /// The main file, canonical.
    pub tex: PathBuf,
    /// Where this build's outputs go (empty when it starts).
    pub work: PathBuf,
    /// The last successful build's intermediates (`.aux`, `.toc`, …).
    pub previous: PathBuf,
    pub bundle: BundleChoice,
    /// The format file cache.
    pub formats: PathBuf,
    /// Folders (and files) never read: credential folders, Skald's own secrets.
    pub deny: Vec<PathBuf>,
    /// Where the worker writes its outcome.
    pub result: PathBuf,
    pub timeout_ms: u64,
}

/// What a build came to.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub(crate) enum Outcome {
    /// The PDF is in the work folder; these are the document's own inputs.
    Built {
        inputs: Vec<PathBuf>,
    },
    Compile {
        errors: Vec<TexError>,
    },
    Bundle {
        message: String,
    },
    Io {
        message: String,
    },
}

/// What starts a line of the worker's stdout that reports a stage; anything else there
/// (a library printing) is not a report.
pub(crate) const STAGE_LINE: &str = "skald-latex-stage ";

/// Tells the parent what the build is doing now, one line on stdout. Best effort: a
/// parent that stopped listening costs the report, never the build.
pub(crate) fn report(stage: skald_api::view::LatexStage) {
    use std::io::Write;
    if let Ok(json) = serde_json::to_string(&stage) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{STAGE_LINE}{json}").and_then(|()| out.flush());
    }
}

/// The stage a line of the worker's stdout reports, if it is a report. The report may
/// follow what something else printed without ending its line (a test harness's "test
/// latex_worker ... "), so it is looked for anywhere in the line.
pub(crate) fn parse_report(line: &str) -> Option<skald_api::view::LatexStage> {
    let at = line.find(STAGE_LINE)?;
    serde_json::from_str(&line[at + STAGE_LINE.len()..]).ok()
}

/// In a worker (`SKALD_LATEX_WORKER` is set): runs the one build asked for on stdin and
/// returns the process's exit code, which the caller passes to `std::process::exit`.
/// Anywhere else: `None`, at once.
pub fn run_worker_if_asked() -> Option<i32> {
    std::env::var_os(WORKER_ENV)?;
    Some(serve())
}

fn serve() -> i32 {
    let mut line = String::new();
    {
        let stdin = std::io::stdin();
        let mut limited = stdin.lock().take(REQUEST_LIMIT);
        if limited.read_line(&mut line).is_err() {
            eprintln!("skald latex worker: cannot read the request");
            return EXIT_BAD_REQUEST;
        }
    }
    let request: Request = match serde_json::from_str(&line) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("skald latex worker: bad request: {e}");
            return EXIT_BAD_REQUEST;
        }
    };
    // The parent holds stdin open while it waits: when it closes, the parent is gone
    // (or gave up on this build), and so is the point of going on.
    std::thread::spawn(|| {
        let mut buf = [0u8; 256];
        let stdin = std::io::stdin();
        loop {
            match stdin.lock().read(&mut buf) {
                Ok(0) | Err(_) => std::process::exit(EXIT_ORPHANED),
                Ok(_) => {}
            }
        }
    });
    // Whatever the parent does, a worker never outlives its build's time.
    let limit = Duration::from_millis(request.timeout_ms).saturating_add(SELF_TIMEOUT_GRACE);
    std::thread::spawn(move || {
        std::thread::sleep(limit);
        eprintln!("skald latex worker: out of time");
        std::process::exit(EXIT_TIMED_OUT);
    });
    let outcome = super::driver::compile(&request);
    let Ok(json) = serde_json::to_vec(&outcome) else {
        return EXIT_NO_RESULT;
    };
    // Written whole, then renamed: the parent never reads half a result.
    let tmp = request.result.with_extension("json.tmp");
    match std::fs::write(&tmp, json).and_then(|()| std::fs::rename(&tmp, &request.result)) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!(
                "skald latex worker: cannot write {}: {e}",
                request.result.display()
            );
            EXIT_NO_RESULT
        }
    }
}
