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
/// llama-bench's prompt reading (pp512, empty context) and generation (tg at `depth`
/// tokens already in the context, as after Skald's prompt) in tokens per second.
fn reference(bench: &Path, model: &Path, threads: usize, depth: u64) -> Result<(f64, f64, String)> {
    let run = |args: &[&str]| -> Result<serde_json::Value> {
        let out = Command::new(bench)
            .arg("-m")
            .arg(model)
            .args(args)
            .args([
                "-r",
                &RUNS.to_string(),
                "-t",
                &threads.to_string(),
                "-o",
                "json",
            ])
            .output()
            .context("running llama-bench")?;
        if !out.status.success() {
            bail!(
                "llama-bench failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        serde_json::from_slice(&out.stdout).context("llama-bench json")
    };
    let pp_rows = run(&["-p", "512", "-n", "0"])?;
    let tg_rows = run(&["-p", "0", "-n", &GEN.to_string(), "-d", &depth.to_string()])?;
    let first_rate = |rows: &serde_json::Value| rows[0]["avg_ts"].as_f64();
    let pp = first_rate(&pp_rows).context("no pp512 result")?;
    let tg = first_rate(&tg_rows).context("no tg result")?;
    let build = pp_rows[0]["build_commit"]
        .as_str()
        .unwrap_or("?")
        .to_string();
    Ok((pp, tg, build))
}

/// One call: its duration, the prompt and output tokens.
struct Call {
    took: Duration,
    prompt_tokens: u64,
    output_tokens: u64,
}

fn request(nonce: usize, words: usize, max_tokens: u32) -> Request {
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
        max_tokens: Some(max_tokens),
        // Greedy, like llama-bench's generation.
        temperature: Some(0.0),
        effort: None,
        web_search: false,
    }
}

async fn one(p: &Provider, req: &Request) -> Result<Call> {
    let started = Instant::now();
    let mut stream = p.stream(req).await?;
    let mut usage = None;
    while let Some(e) = stream.next().await {
        if let Event::Usage { usage: u } = e? {
            usage = Some(u);
        }
    }
    let u = usage.context("no usage")?;
    Ok(Call {
        took: started.elapsed(),
        prompt_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
    })
}

async fn stop_latency(p: &Provider, nonce: usize) -> Result<Duration> {
    let req = request(nonce, 24, 4000);
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

    let rt = tokio::runtime::Runtime::new()?;
    let p = Provider::new(
        "local",
        ProviderKind::Local,
        dir.display().to_string(),
        None,
        Timeouts::default(),
    )?;
    // Per run, two calls with equally long fresh prompts: one token (the time to the first
    // token: reading the prompt), and GEN tokens; their difference is the generation.
    let (firsts, fulls, stops, cold) = rt.block_on(async {
        // The first call loads the model: its time is the cold one.
        let cold = one(&p, &request(0, 360, 1)).await?.took;
        let (mut firsts, mut fulls) = (Vec::new(), Vec::new());
        for i in 1..=RUNS {
            firsts.push(one(&p, &request(2 * i, 360, 1)).await?);
            fulls.push(one(&p, &request(2 * i + 1, 360, GEN)).await?);
        }
        let mut stops = Vec::new();
        for i in 0..RUNS {
            stops.push(stop_latency(&p, 100 + i).await?);
        }
        anyhow::Ok((firsts, fulls, stops, cold))
    })?;
    let prompt = firsts[0].prompt_tokens;
    let ttft = median_d(firsts.iter().map(|c| c.took).collect());
    let pp = prompt as f64 / ttft.as_secs_f64();
    if fulls.iter().any(|c| c.output_tokens < u64::from(GEN) / 2) {
        bail!("the model ended its answer too early to measure generation");
    }
    let tg = median_f(
        firsts
            .iter()
            .zip(&fulls)
            .map(|(f, g)| (g.output_tokens - 1) as f64 / (g.took - f.took).as_secs_f64())
            .collect(),
    );
    let stop = median_d(stops);
    // The reference generates at the depth Skald's prompt leaves in the context.
    let (ref_pp, ref_tg, build) = reference(&bench, &model, threads, prompt)?;
    Ok(format!(
        "## Local model (llama.cpp in-process)\n\n\
         SmolLM2-135M-Instruct Q4_1 on {threads} threads. Reference: llama.cpp's `llama-bench` \
         built from the same llama.cpp sources and flags as Skald's binding \
         (`scripts/llama-bench.sh`, build {build}): pp512 on an empty context, tg{GEN} with {prompt} \
         tokens already in the context (as after Skald's prompt), {RUNS} runs. Skald: \
         `skald-llm`'s local provider end to end (a {prompt}-token chat prompt through the \
         model's template, greedy sampling, detokenising and the event stream), median of \
         {RUNS} runs, each with a fresh prompt so nothing is reused from the cache: a \
         one-token call gives the time to the first token, a {GEN}-token call less that one \
         gives the generation speed. Ratios are \
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
