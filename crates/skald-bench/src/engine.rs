//! The agent loop's own cost: per-round overhead with an instant model and a trivial tool,
//! time to first token against a raw HTTP client on the same server, and how long /stop
//! takes to end a turn whose shell command must be killed.

use anyhow::{Context, Result, bail};
use futures::StreamExt;
use serde_json::json;
use skald_api::CancellationToken;
use skald_api::events::{Event, TurnOutcome};
use skald_core::agents::Library;
use skald_core::models::ModelHealth;
use skald_core::turn::{ApprovalMode, TurnConfig, TurnEnv, run_turn};
use skald_store::{NewSession, Store};
use skald_testkit::{ScriptedServer, answer, tool_call};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const TURNS: usize = 100;
const ROUNDS_PER_TURN: usize = 10;
const TTFT_RUNS: usize = 200;
const STOP_RUNS: usize = 20;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn us(d: Duration) -> String {
    format!("{:.0} µs", d.as_secs_f64() * 1e6)
}

fn model_for(server: &ScriptedServer) -> Result<skald_llm::ModelChoice> {
    let base = server.base_url.clone();
    Ok(skald_llm::from_env(
        Some("openai/bench"),
        move |k| match k {
            "OPENAI_BASE_URL" => Some(base.clone()),
            "OPENAI_API_KEY" => Some("k".into()),
            _ => None,
        },
    )?)
}

struct Bench {
    store: Store,
    registry: skald_core::ToolRegistry,
    cfg: TurnConfig,
    health: ModelHealth,
    _data: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl Bench {
    fn new(max_rounds: usize) -> Result<Bench> {
        let data = tempfile::tempdir()?;
        let work = tempfile::tempdir()?;
        std::fs::write(work.path().join("tiny.txt"), "tiny\n")?;
        let library = Library::load(data.path())?;
        Ok(Bench {
            store: Store::open(data.path().join("skald.db"))?,
            registry: skald_core::builtin_registry()?,
            cfg: TurnConfig {
                max_rounds,
                context_window: 128_000,
                approval: ApprovalMode::All,
                run: skald_core::approval::RunContext {
                    group: "default".into(),
                    agent_id: "main".into(),
                    working_dir: std::fs::canonicalize(work.path())?,
                    ..Default::default()
                },
                system_prompt: library.system_prompt("main", "")?,
                background: false,
                first_tool_choice: skald_llm::ToolChoice::Auto,
                instructions: Default::default(),
                hooks: Default::default(),
                effort: None,
                compact_at: 80,
            },
            health: ModelHealth::default(),
            _data: data,
            work,
        })
    }

    async fn turn(
        &self,
        models: &skald_core::models::ModelList,
        prompt: &str,
        cancel: &CancellationToken,
        emit: &(dyn Fn(Event) + Send + Sync),
    ) -> Result<TurnOutcome> {
        let session = self.store.create_session(&NewSession::default())?;
        let env = TurnEnv {
            store: &self.store,
            registry: &self.registry,
            models,
            health: &self.health,
            cfg: &self.cfg,
            queued: None,
            ask: None,
            inbox: None,
            frame: skald_core::turn::Frame::default(),
            library: None,
            mcp_list: "",
            engine: None,
        };
        Ok(run_turn(&env, session.id, Some(&prompt.into()), cancel, emit).await?)
    }
}

/// Time of one raw streamed request to the server, read to its end.
async fn raw_call(client: &reqwest::Client, url: &str, first_chunk_only: bool) -> Result<Duration> {
    let t = Instant::now();
    let resp = client
        .post(url)
        .json(&json!({"model": "bench", "stream": true, "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await?;
    let mut body = resp.bytes_stream();
    while let Some(chunk) = body.next().await {
        chunk?;
        if first_chunk_only {
            break;
        }
    }
    Ok(t.elapsed())
}

pub fn run() -> Result<String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async { run_async().await })
}

async fn run_async() -> Result<String> {
    let client = reqwest::Client::new();

    // 1. Overhead per round: every round is a model call answered at once with a
    // read_file call of a tiny file; the turn ends when the round limit is reached.
    let server =
        ScriptedServer::cycling(vec![tool_call("c", "read_file", r#"{"path": "tiny.txt"}"#)]);
    let models = skald_core::models::ModelList::new(vec![model_for(&server)?]);
    let bench = Bench::new(ROUNDS_PER_TURN)?;
    let url = format!("{}/chat/completions", server.base_url);
    let mut raw = Vec::new();
    for _ in 0..200 {
        raw.push(raw_call(&client, &url, false).await?);
    }
    let model_time = median(raw);
    let marks: Mutex<Vec<(Instant, &'static str)>> = Mutex::new(Vec::new());
    let emit = |e: Event| {
        let kind = match e {
            Event::ToolStart { .. } => "start",
            Event::ToolDone { .. } => "done",
            Event::TurnRunning { .. } => "turn",
            _ => return,
        };
        marks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((Instant::now(), kind));
    };
    let mut overheads = Vec::new();
    let mut tool_times = Vec::new();
    for _ in 0..TURNS {
        marks.lock().unwrap_or_else(|p| p.into_inner()).clear();
        let outcome = bench
            .turn(&models, "go", &CancellationToken::new(), &emit)
            .await?;
        if outcome != TurnOutcome::Exhausted {
            bail!("expected the round limit, got {outcome:?}");
        }
        let m = marks.lock().unwrap_or_else(|p| p.into_inner()).clone();
        // A round: from the previous tool's end (or the turn's start) to this tool's start
        // is the engine plus the model; the tool's own time is start -> done.
        let mut prev_end = m.first().map(|x| x.0).context("no events")?;
        let mut start = None;
        for (t, kind) in m.into_iter().skip(1) {
            match kind {
                "start" => {
                    overheads.push((t - prev_end).saturating_sub(model_time));
                    start = Some(t);
                }
                "done" => {
                    if let Some(s) = start.take() {
                        tool_times.push(t - s);
                    }
                    prev_end = t;
                }
                _ => {}
            }
        }
    }
    let rounds = overheads.len();
    let overhead = median(overheads);
    let tool_time = median(tool_times);

    // 2. Time to first token, engine against a raw client, on an instant server.
    let server = ScriptedServer::cycling(vec![answer("Hello there.")]);
    let models = skald_core::models::ModelList::new(vec![model_for(&server)?]);
    let bench = Bench::new(1)?;
    let url = format!("{}/chat/completions", server.base_url);
    let (mut engine_ttft, mut raw_ttft) = (Vec::new(), Vec::new());
    for _ in 0..TTFT_RUNS {
        let first: Mutex<Option<Instant>> = Mutex::new(None);
        let emit = |e: Event| {
            if matches!(e, Event::TokenDelta { .. }) {
                first
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get_or_insert_with(Instant::now);
            }
        };
        let t = Instant::now();
        bench
            .turn(&models, "hi", &CancellationToken::new(), &emit)
            .await?;
        let f = first
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .context("no token")?;
        engine_ttft.push(f - t);
        raw_ttft.push(raw_call(&client, &url, true).await?);
    }
    let (engine_ttft, raw_ttft) = (median(engine_ttft), median(raw_ttft));

    // 3. /stop while a shell command runs: cancel to the end of the turn, the command's
    // process group killed; against killing and reaping a bare child.
    let server = ScriptedServer::cycling(vec![tool_call(
        "c",
        "execute_cmd",
        r#"{"command": "sleep 30"}"#,
    )]);
    let models = skald_core::models::ModelList::new(vec![model_for(&server)?]);
    let bench = Bench::new(1)?;
    let (mut stops, mut bare) = (Vec::new(), Vec::new());
    for _ in 0..STOP_RUNS {
        let cancel = CancellationToken::new();
        let started = tokio::sync::Notify::new();
        let emit = |e: Event| {
            if matches!(e, Event::ToolStart { .. }) {
                started.notify_one();
            }
        };
        let turn = bench.turn(&models, "wait", &cancel, &emit);
        let stopper = async {
            started.notified().await;
            // Let the shell start its sleep.
            tokio::time::sleep(Duration::from_millis(50)).await;
            let t = Instant::now();
            cancel.cancel();
            t
        };
        let (outcome, t) = tokio::join!(turn, stopper);
        stops.push(t.elapsed());
        if outcome? != TurnOutcome::Cancelled {
            bail!("the stopped turn did not end cancelled");
        }
        let mut child = tokio::process::Command::new("sleep").arg("30").spawn()?;
        tokio::time::sleep(Duration::from_millis(50)).await;
        let t = Instant::now();
        child.kill().await?;
        bare.push(t.elapsed());
    }
    let (stop, bare_stop) = (median(stops), median(bare));
    let _ = bench.work.path();

    Ok(format!(
        "## Agent loop\n\n\
         In-process `run_turn` against the scripted OpenAI-protocol server on 127.0.0.1 \
         (skald-testkit), which answers at once.\n\n\
         | measure | engine | reference | difference |\n| --- | --- | --- | --- |\n\
         | overhead per round ({TURNS} turns × {ROUNDS_PER_TURN} rounds = {rounds} rounds, median): round time minus the model call (median raw reqwest call to the same server: {}) and the tool ({} for read_file of a tiny file) | {} | goal ≤ 1 ms | |\n\
         | time to first token, median of {TTFT_RUNS} | {} | raw reqwest: {} | {} |\n\
         | /stop during `sleep 30` in execute_cmd, cancel to the turn's end (process group killed), median of {STOP_RUNS} | {} | kill + reap of a bare child: {} | {} |\n",
        us(model_time),
        us(tool_time),
        us(overhead),
        us(engine_ttft),
        us(raw_ttft),
        us(engine_ttft.saturating_sub(raw_ttft)),
        us(stop),
        us(bare_stop),
        us(stop.saturating_sub(bare_stop)),
    ))
}
