//! Language servers (docs/lsp.md) against the server's own command-line check of the same
//! project in the same run: for 100 Python modules (5 with a type error), `pyright` (its
//! CLI) and Skald's first diagnostics of every file through `pyright-langserver` — the
//! server started, every file opened, every file's diagnostics in; then, warm, how long
//! an edit waits for the diagnostics of the file it changed. Both sides come from
//! tests/lsp (scripts/setup.sh --test installs them); both must find the same errors.

use crate::timing::{ms, ratio, run_quiet};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const MODULES: usize = 100;
const BROKEN: usize = 5;
const RUNS: usize = 3;
const EDITS: usize = 10;

fn bin(name: &str) -> Result<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/lsp/node_modules/.bin")
        .join(name);
    let p = std::fs::canonicalize(&p)
        .with_context(|| format!("{} is missing: run scripts/setup.sh --test", p.display()))?;
    Ok(p)
}

/// Modules that import each other; the first `BROKEN` pass a string where an int goes.
fn project(root: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for i in 0..MODULES {
        let mut body = String::new();
        if i > 0 {
            body.push_str(&format!(
                "from mod{:03} import total{:03}\n\n",
                i - 1,
                i - 1
            ));
        }
        for f in 0..20 {
            body.push_str(&format!(
                "def f{f}(a: int, b: int) -> int:\n    return a * {f} + b\n\n"
            ));
        }
        let arg = if i < BROKEN { "\"1\"" } else { "1" };
        body.push_str(&format!(
            "def total{i:03}() -> int:\n    return f1({arg}, 2){}\n",
            if i > 0 {
                format!(" + total{:03}()", i - 1)
            } else {
                String::new()
            }
        ));
        let path = root.join(format!("mod{i:03}.py"));
        std::fs::write(&path, body)?;
        files.push(path);
    }
    Ok(files)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// `pyright --outputjson` on the project: its time and the errors it found.
fn pyright_cli(root: &Path) -> Result<(Duration, u64)> {
    let t = Instant::now();
    let out = run_quiet(
        Command::new(bin("pyright")?)
            .arg("--outputjson")
            .arg(root)
            .current_dir(root),
        &[0, 1],
    )?;
    let took = t.elapsed();
    let report: serde_json::Value = serde_json::from_slice(&out)?;
    let errors = report["summary"]["errorCount"].as_u64().unwrap_or(0);
    Ok((took, errors))
}

/// Skald's first diagnostics of every file: the server started cold, all files opened,
/// all answers in. Returns the time, the errors, and the server (warm) for the edits.
async fn skald_first(
    root: &Path,
    files: &[PathBuf],
) -> Result<(Duration, usize, skald_lsp::Server)> {
    let argv = vec![
        bin("pyright-langserver")?.display().to_string(),
        "--stdio".into(),
    ];
    let t = Instant::now();
    let server = skald_lsp::Server::start("python", &argv, root, &[], &[], true, Box::new(()))
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut sent = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f)?;
        sent.push((
            f.clone(),
            server.sync(f, &text).map_err(|e| anyhow::anyhow!("{e}"))?,
        ));
    }
    let mut errors = 0;
    // As the diagnostics tool asks for a folder: every file's answer awaited at once.
    let answers = server
        .diagnostics_after_all(&sent, Duration::from_secs(120))
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    for ((f, _), diags) in sent.iter().zip(answers) {
        let diags = diags.with_context(|| format!("no diagnostics for {}", f.display()))?;
        errors += diags
            .iter()
            .filter(|d| d.severity == Some(skald_lsp::DiagnosticSeverity::ERROR))
            .count();
    }
    Ok((t.elapsed(), errors, server))
}

/// How long a warm server takes to give the diagnostics of a file just changed.
async fn warm_edits(server: &skald_lsp::Server, file: &Path) -> Result<Duration> {
    let clean = std::fs::read_to_string(file)?;
    let mut times = Vec::new();
    for i in 0..EDITS {
        let text = if i % 2 == 0 {
            clean.replace("return f1(1, 2)", "return f1(\"x\", 2)")
        } else {
            clean.clone()
        };
        let t = Instant::now();
        let before = server
            .sync(file, &text)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        server
            .diagnostics_after(file, before, Duration::from_secs(30))
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .context("no diagnostics after an edit")?;
        times.push(t.elapsed());
    }
    Ok(median(times))
}

pub fn run() -> Result<String> {
    let dir = tempfile::tempdir()?;
    let root = std::fs::canonicalize(dir.path())?;
    let files = project(&root)?;
    let runtime = tokio::runtime::Runtime::new()?;
    // A warm-up of each (node's own caches), then the timed runs, alternating.
    pyright_cli(&root)?;
    let mut cli = Vec::new();
    let mut ours = Vec::new();
    let mut cli_errors = 0;
    let mut our_errors = 0;
    let mut edit = Duration::ZERO;
    for run in 0..=RUNS {
        let (t, e) = pyright_cli(&root)?;
        let (s, found, server) = runtime.block_on(skald_first(&root, &files))?;
        if run == RUNS {
            edit = runtime.block_on(warm_edits(&server, &files[MODULES - 1]))?;
        }
        runtime.block_on(server.stop());
        if run > 0 {
            cli.push(t);
            ours.push(s);
        }
        cli_errors = e;
        our_errors = found;
    }
    if cli_errors != our_errors as u64 || our_errors != BROKEN {
        bail!("pyright's CLI found {cli_errors} errors, Skald {our_errors}; {BROKEN} were made");
    }
    let (cli, ours) = (median(cli), median(ours));
    Ok(format!(
        "## Language servers: first diagnostics and an edit's, against pyright's own check\n\n\
         {MODULES} Python modules importing each other, {BROKEN} with a type error; both sides \
         found the {BROKEN} errors. Medians of {RUNS} runs.\n\n\
         | | time | ratio |\n| --- | --- | --- |\n\
         | `pyright --outputjson` (the CLI check) | {} | 1.00× |\n\
         | Skald: pyright-langserver started, {MODULES} files opened, every file's diagnostics in | {} | {} |\n\
         | Skald, warm: an edit's diagnostics (median of {EDITS}) | {} | {} of the CLI check |\n\n\
         The edit's figure includes the 300 ms Skald waits after a server's first answer for a \
         second one (servers that send syntax errors first, then types).\n",
        ms(cli),
        ms(ours),
        ratio(ours, cli),
        ms(edit),
        ratio(edit, cli),
    ))
}
