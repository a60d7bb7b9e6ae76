//! Local model: Skald's in-process generation (skald-llm's `local` provider: worker,
//! sampler chain, detokenising, tool-call splitting, the event channel) against llama.cpp's
//! own `llama-bench`, built by `scripts/llama-bench.sh` from the same llama.cpp sources and
//! flags the binding compiles. Same model (SmolLM2-135M-Instruct Q4_1), same threads:
//! generation speed, prompt reading speed, time to the first token, and how soon a stop
//! ends a generation.

use crate::timing::ms;
use anyhow::{Context, Result, bail};
use futures::StreamExt;
use skald_llm::{Event, Message, Provider, ProviderKind, Request, Timeouts, ToolChoice};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const MODEL: &str = "SmolLM2-135M-Instruct.Q4_1";
const RUNS: usize = 5;
const GEN: u32 = 128;

fn median_f(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn median_d(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// llama-bench's prompt (pp) and generation (tg) tokens per second.
fn reference(bench: &Path, model: &Path, threads: usize) -> Result<(f64, f64, String)> {
    let out = Command::new(bench)
        .arg("-m")
        .arg(model)
        .args(["-p", "512", "-n", &GEN.to_string(), "-r", &RUNS.to_string()])
        .args(["-t", &threads.to_string(), "-o", "json"])
        .output()
        .context("running llama-bench")?;
    if !out.status.success() {
        bail!(
            "llama-bench failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let rows: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("llama-bench json")?;
    let rate = |prompt: u64, generated: u64| {
        rows.as_array().and_then(|a| {
            a.iter()
                .find(|r| r["n_prompt"] == prompt && r["n_gen"] == generated)
                .and_then(|r| r["avg_ts"].as_f64())
        })
    };
    let pp = rate(512, 0).context("no pp512 row")?;
    let tg = rate(0, u64::from(GEN)).context("no tg row")?;
    let build = rows[0]["build_commit"].as_str().unwrap_or("?").to_string();
    Ok((pp, tg, build))
}

struct Ours {
    /// Generated tokens per second after the first.
    tg: f64,
    /// Prompt tokens per second (prompt tokens over the time to the first token).
    pp: f64,
    ttft: Duration,
    prompt_tokens: u64,
}

fn request(nonce: usize, words: usize) -> Request {
    // A different first line each run: the context's cached prefix cannot help.
    let filler = "The lighthouse keeper wrote down the weather, the ships and the birds. "
        .repeat(words / 12);
    Request {
        model: MODEL.into(),
        messages: vec![
            Message::system(format!("Run {nonce}. You are a storyteller.")),
            Message::user(format!(
                "{filler}\nNow tell a very long story about this lighthouse keeper."
            )),
        ],
        tools: vec![],
        tool_choice: ToolChoice::Auto,
        max_tokens: Some(GEN),
        // Greedy, like llama-bench's generation.
        temperature: Some(0.0),
    }
}

async fn one(p: &Provider, req: &Request) -> Result<Ours> {
    let started = Instant::now();
    let mut stream = p.stream(req).await?;
    let (mut first, mut last) = (None, started);
    let mut usage = None;
    while let Some(e) = stream.next().await {
        match e? {
            Event::Text { .. } => {
                let now = Instant::now();
                first.get_or_insert(now);
                last = now;
            }
            Event::Usage { usage: u } => usage = Some(u),
            _ => {}
        }
    }
    let first = first.context("no text")?;
    let u = usage.context("no usage")?;
    if u.output_tokens < u64::from(GEN) / 2 {
        bail!("the model stopped after {} tokens", u.output_tokens);
    }
    let ttft = first - started;
    Ok(Ours {
        tg: (u.output_tokens - 1) as f64 / (last - first).as_secs_f64().max(1e-9),
        pp: u.input_tokens as f64 / ttft.as_secs_f64().max(1e-9),
        ttft,
        prompt_tokens: u.input_tokens,
    })
}

async fn stop_latency(p: &Provider, nonce: usize) -> Result<Duration> {
    let mut req = request(nonce, 24);
    req.max_tokens = Some(4000);
    let mut stream = p.stream(&req).await?;
    stream.next().await.context("no first event")??;
    let asked = Instant::now();
    drop(stream);
    while skald_llm::local::active() > 0 {
        if asked.elapsed() > Duration::from_secs(30) {
            bail!("the generation did not stop");
        }
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
    Ok(asked.elapsed())
}

pub fn run() -> Result<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/models");
    let model = dir.join(format!("{MODEL}.gguf"));
    if !model.is_file() {
        bail!("no test model: run `bash scripts/setup.sh --test`");
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/llama-bench.sh");
    let out = Command::new("bash").arg(&script).output()?;
    if !out.status.success() {
        bail!(
            "scripts/llama-bench.sh: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let bench = PathBuf::from(
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .lines()
            .last()
            .unwrap_or(""),
    );
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (ref_pp, ref_tg, build) = reference(&bench, &model, threads)?;

    let rt = tokio::runtime::Runtime::new()?;
    let p = Provider::new(
        "local",
        ProviderKind::Local,
        dir.display().to_string(),
        None,
        Timeouts::default(),
    )?;
    let (ours, stops, cold) = rt.block_on(async {
        // The first call loads the model: its time to the first token is the cold one.
        let cold = one(&p, &request(0, 360)).await?.ttft;
        let mut ours = Vec::new();
        for i in 1..=RUNS {
            ours.push(one(&p, &request(i, 360)).await?);
        }
        let mut stops = Vec::new();
        for i in 0..RUNS {
            stops.push(stop_latency(&p, 100 + i).await?);
        }
        anyhow::Ok((ours, stops, cold))
    })?;
    let tg = median_f(ours.iter().map(|o| o.tg).collect());
    let pp = median_f(ours.iter().map(|o| o.pp).collect());
    let ttft = median_d(ours.iter().map(|o| o.ttft).collect());
    let prompt = ours[0].prompt_tokens;
    let stop = median_d(stops);
    Ok(format!(
        "## Local model (llama.cpp in-process)\n\n\
         SmolLM2-135M-Instruct Q4_1 on {threads} threads. Reference: llama.cpp's `llama-bench` \
         built from the same llama.cpp sources and flags as Skald's binding \
         (`scripts/llama-bench.sh`, build {build}), pp512 and tg{GEN}, {RUNS} runs. Skald: \
         `skald-llm`'s local provider end to end (a {prompt}-token chat prompt through the \
         model's template, greedy sampling, detokenising and the event stream), median of \
         {RUNS} runs, each with a fresh prompt so nothing is reused from the cache. Ratios are \
         Skald's speed over the reference's (goal ≥ 0.95).\n\n\
         | | Skald | llama-bench | ratio |\n| --- | --- | --- | --- |\n\
         | generation | {tg:.1} tok/s | {ref_tg:.1} tok/s | {:.2} |\n\
         | prompt reading | {pp:.1} tok/s | {ref_pp:.1} tok/s (512 tokens) | {:.2} |\n\n\
         Time to the first token of a {prompt}-token prompt: {} with the model loaded, {} \
         including loading it. A stop (the stream dropped) ends the generation in {} \
         (median of {RUNS}; goal ≤ 200 ms).\n",
        tg / ref_tg,
        pp / ref_pp,
        ms(ttft),
        ms(cold),
        ms(stop),
    ))
}
