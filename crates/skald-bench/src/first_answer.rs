//! A newcomer's first answer from the embedded model, as `skald exec` gives it: a new
//! process, a new chat with the main agent (its whole prompt: instructions and tool
//! schemas), SmolLM2-135M. Measured from the process's start to the first token of the
//! answer, in four cases: nothing saved (a first chat that reads the prompt itself), the
//! first chat after `skald models prepare` (what `skald models pull` ends with), the shared
//! beginning's state saved by an earlier chat (every later new chat), and a follow-up in
//! the same chat. The follow-up is the reference: what a user already waits
//! for once the prompt is known.

use crate::timing::ms;
use anyhow::{Context, Result, bail};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MODEL: &str = "SmolLM2-135M-Instruct.Q4_1";
const RUNS: usize = 3;
const FIRST: &str = "Hello! Who are you?";

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// One `skald exec`: the time to its first token, and its session.
fn exec(
    skald: &Path,
    data: &Path,
    work: &Path,
    session: Option<i64>,
    prompt: &str,
) -> Result<(Duration, i64)> {
    let mut cmd = Command::new(skald);
    cmd.arg("--data-dir")
        .arg(data)
        .args(["exec", "--json", "--model", "local/smol", "--cwd"])
        .arg(work);
    if let Some(id) = session {
        cmd.args(["--session", &id.to_string()]);
    }
    for key in [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "OPENAI_BASE_URL",
        "OLLAMA_HOST",
        "SKALD_MODEL",
    ] {
        cmd.env_remove(key);
    }
    let started = Instant::now();
    let mut child = cmd
        .arg(prompt)
        .env("SKALD_SECRETS", "file")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot start {}", skald.display()))?;
    let out = child.stdout.take().context("no stdout")?;
    let (mut first, mut id) = (None, None);
    for line in BufReader::new(out).lines() {
        let Ok(e) = serde_json::from_str::<serde_json::Value>(&line?) else {
            continue;
        };
        match e["type"].as_str() {
            Some("turn_running") => id = e["session_id"].as_i64(),
            Some("token_delta") if first.is_none() => first = Some(started.elapsed()),
            _ => {}
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("skald exec failed ({status})");
    }
    Ok((
        first.context("the model said nothing")?,
        id.context("no session id")?,
    ))
}

pub fn run(skald: &Path) -> Result<String> {
    // Absolute: `models prepare` runs in the project's folder.
    let skald = &std::fs::canonicalize(skald)
        .with_context(|| format!("no skald binary at {}", skald.display()))?;
    let model =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../tests/models/{MODEL}.gguf"));
    if !model.is_file() {
        bail!("no test model: run `bash scripts/setup.sh --test`");
    }
    let root = tempfile::tempdir()?;
    let data = root.path().join("data");
    let models = data.join("models");
    let work = root.path().join("project");
    std::fs::create_dir_all(&models)?;
    std::fs::create_dir_all(&work)?;
    std::os::unix::fs::symlink(std::fs::canonicalize(&model)?, models.join("smol.gguf"))?;
    let saved = models.join(".prompt-cache");
    let (mut cold, mut prepare, mut prepared, mut warm, mut follow) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let _ = std::fs::remove_dir_all(&saved);
        let (t, _) = exec(skald, &data, &work, None, FIRST)?;
        cold.push(t);
        let _ = std::fs::remove_dir_all(&saved);
        prepare.push(prepare_model(skald, &data, &work)?);
        let (t, _) = exec(skald, &data, &work, None, FIRST)?;
        prepared.push(t);
        let (t, id) = exec(skald, &data, &work, None, FIRST)?;
        warm.push(t);
        let (t, _) = exec(skald, &data, &work, Some(id), "And what can you do?")?;
        follow.push(t);
    }
    let (cold, prepare, prepared, warm, follow) = (
        median(cold),
        median(prepare),
        median(prepared),
        median(warm),
        median(follow),
    );
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    // The benchmarks run release builds (scripts/bench.sh); a debug one is said as such.
    let build = if skald.components().any(|c| c.as_os_str() == "debug") {
        "in debug (its dependencies, llama.cpp among them, at opt-level 2)"
    } else {
        "in release"
    };
    Ok(format!(
        "## First answer of the embedded model in a new chat\n\n\
         `skald exec --model local/smol` (SmolLM2-135M-Instruct Q4_1, {threads} threads), the \
         main agent with its tools, \"{FIRST}\": from the process's start to the first token, \
         median of {RUNS} runs; skald built {build}. Goal: a new chat ≤ 5 s on \
         this machine. Reference: a follow-up in the same chat, in the same run.\n\n\
         | | first token | ratio to the follow-up |\n| --- | --- | --- |\n\
         | new chat, nothing saved (a first chat that reads the prompt itself) | {} | {:.2} |\n\
         | the very first chat after `skald models prepare` (as `models pull` ends) | {} | {:.2} |\n\
         | new chat, the shared beginning's state saved by an earlier chat | {} | {:.2} |\n\
         | follow-up in the same chat | {} | 1.00 |\n\n\
         `skald models prepare` itself (the agent's prompt read once, its state saved): {}.\n",
        ms(cold),
        cold.as_secs_f64() / follow.as_secs_f64(),
        ms(prepared),
        prepared.as_secs_f64() / follow.as_secs_f64(),
        ms(warm),
        warm.as_secs_f64() / follow.as_secs_f64(),
        ms(follow),
        ms(prepare),
    ))
}

/// `skald models prepare smol` in the project's folder, as `skald models pull` ends: how
/// long it takes.
fn prepare_model(skald: &Path, data: &Path, work: &Path) -> Result<Duration> {
    let started = Instant::now();
    let status = Command::new(skald)
        .arg("--data-dir")
        .arg(data)
        .args(["models", "prepare", "smol"])
        .current_dir(work)
        .env("SKALD_SECRETS", "file")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .with_context(|| format!("cannot start {}", skald.display()))?;
    if !status.success() {
        bail!("skald models prepare failed ({status})");
    }
    Ok(started.elapsed())
}
