//! llama.cpp behind Skald's `Model` events. The only module that uses `llama-cpp-2`.
//!
//! - One llama.cpp backend per process. Each loaded model has a worker thread that owns it
//!   and one context, and answers its calls one at a time; it exits (unloading the model)
//!   after `SKALD_LOCAL_IDLE_SECS` (600 by default) without a call, or when the file
//!   changes.
//! - The context keeps the tokens of the last call: an agent's next round repeats the
//!   system prompt, the tools and the conversation so far, so only what is new is read.
//!   The state of the system turn (what every chat shares) is also saved on disk (see
//!   `saved`), so a new process does not read it again.
//! - The worker checks between tokens (and between prompt chunks) whether the call's
//!   stream was dropped, which is how /stop reaches it.
//! - With tools, sampling is constrained by a grammar: to exactly one call when the
//!   request requires one, from the `<tool_call>` tag on otherwise.

use super::calls::{OPEN, Piece, Splitter};
use super::saved::{self, Saved};
use super::{files, grammar, prompt};
use crate::{Event, EventStream, FinishReason, LlmError, Request, ToolChoice, ToolSpec, Usage};
use futures::StreamExt;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, mpsc as sync_mpsc};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::mpsc;

/// Tokens decoded per step while reading the prompt.
const BATCH: usize = 512;
/// The context a model gets unless `SKALD_LOCAL_CONTEXT` says otherwise (and never more
/// than it was trained for): enough for an agent's tools and a conversation, small enough
/// for a laptop's memory.
const DEFAULT_CONTEXT: u32 = 8192;
const DEFAULT_IDLE: Duration = Duration::from_secs(600);
/// Sampling temperature when the request sets none: low, as agents want reliable steps.
const DEFAULT_TEMPERATURE: f32 = 0.2;
/// The most an answer may run to when the request sets no limit. A small model can fall
/// into repeating one sentence until the context is full — minutes of CPU on a laptop,
/// and a context with no room left for the next round.
const DEFAULT_MAX_OUTPUT: usize = 2048;
/// Repetition penalty over the last tokens (Ollama's defaults), against those loops.
const PENALTY_LAST_N: i32 = 64;
const PENALTY_REPEAT: f32 = 1.1;
/// A fixed seed: the same prompt gives the same answer, which makes runs comparable.
const SEED: u32 = 0x5eed;

fn local(msg: impl Into<String>) -> LlmError {
    LlmError::Local(msg.into())
}

use skald_base::lock;

fn env_number<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

type Tx = mpsc::Sender<Result<Event, LlmError>>;

/// A call handed to a model's worker.
struct Work {
    job: Job,
    tx: Tx,
    _running: Running,
}

struct Worker {
    id: u64,
    jobs: sync_mpsc::Sender<Work>,
    /// Size and modification time when loaded: a replaced file is loaded again.
    stamp: (u64, Option<SystemTime>),
}

struct Runtime {
    backend: LlamaBackend,
    workers: Mutex<HashMap<PathBuf, Worker>>,
    idle: Duration,
}

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
static WORKER_IDS: AtomicU64 = AtomicU64::new(0);

/// Calls queued or running now.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

pub fn active() -> usize {
    ACTIVE.load(Ordering::SeqCst)
}

/// Prompt states loaded from disk instead of read (see `saved`), since the process began.
static STATES_LOADED: AtomicU64 = AtomicU64::new(0);

pub fn states_loaded() -> u64 {
    STATES_LOADED.load(Ordering::SeqCst)
}

/// Worker threads alive now (counted from before their start to their very end).
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// Ends a worker's count when its thread ends, however it ends.
struct Live;

impl Drop for Live {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Stops every model's worker before the process exits. llama.cpp's (and OpenMP's) static
/// state is torn down at exit, and a worker still decoding then crashes the process (a
/// SIGSEGV after a Ctrl-C). Each worker finishes the token at hand (its stream is gone),
/// unloads its model and ends; this waits for them at most `limit`.
pub fn shutdown(limit: Duration) {
    let Some(Ok(rt)) = RUNTIME.get() else {
        return;
    };
    // Without their senders, workers see their queues close once the call at hand ends.
    lock(&rt.workers).clear();
    let deadline = Instant::now() + limit;
    while LIVE.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Counts a call from when it is queued until it ends or is stopped.
struct Running;

impl Running {
    fn start() -> Running {
        ACTIVE.fetch_add(1, Ordering::SeqCst);
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

fn runtime() -> Result<&'static Runtime, LlmError> {
    RUNTIME
        .get_or_init(|| {
            let mut backend =
                LlamaBackend::init().map_err(|e| format!("cannot start llama.cpp: {e}"))?;
            // llama.cpp writes its progress to stderr; Skald reports what matters itself.
            backend.void_logs();
            Ok(Runtime {
                backend,
                workers: Mutex::new(HashMap::new()),
                idle: env_number::<u64>("SKALD_LOCAL_IDLE_SECS")
                    .map_or(DEFAULT_IDLE, Duration::from_secs),
            })
        })
        .as_ref()
        .map_err(|e| local(e.clone()))
}

fn stamp(path: &Path) -> (u64, Option<SystemTime>) {
    std::fs::metadata(path).map_or((0, None), |m| (m.len(), m.modified().ok()))
}

impl Runtime {
    /// Queues `work` with the worker of the model at `path`, starting one if there is none
    /// and waiting until it has loaded the model (seconds: call it from a blocking thread).
    /// The lock is not held while a model loads, so calls to other models go on meanwhile;
    /// calls to the one loading queue behind it.
    fn submit(&'static self, path: &Path, work: Work) -> Result<(), LlmError> {
        files::check_gguf(path).map_err(LlmError::Config)?;
        let now = stamp(path);
        let mut workers = lock(&self.workers);
        let mut work = work;
        if let Some(w) = workers.get(path)
            && w.stamp == now
        {
            match w.jobs.send(work) {
                Ok(()) => return Ok(()),
                // It went idle and exited meanwhile: a new one takes the call.
                Err(sync_mpsc::SendError(back)) => work = back,
            }
        }
        let id = WORKER_IDS.fetch_add(1, Ordering::SeqCst);
        let (jobs, rx) = sync_mpsc::channel();
        let (ready_tx, ready) = sync_mpsc::sync_channel(1);
        let owned = path.to_path_buf();
        LIVE.fetch_add(1, Ordering::SeqCst);
        let live = Live;
        std::thread::Builder::new()
            .name("local-model".into())
            .spawn(move || {
                let _live = live;
                self.work(id, owned, rx, ready_tx)
            })
            .map_err(|e| local(format!("cannot start a thread for the model: {e}")))?;
        // The receiver lives until the worker has answered whatever was queued.
        jobs.send(work)
            .map_err(|_| local("the model's thread ended"))?;
        // A replaced worker (the file changed) ends once its queue is done.
        workers.insert(
            path.to_path_buf(),
            Worker {
                id,
                jobs,
                stamp: now,
            },
        );
        drop(workers);
        ready
            .recv()
            .map_err(|_| local("the model's thread ended while loading it"))?
    }

    /// Forgets worker `id` for `path`, if it is still the one there.
    fn retire(&self, id: u64, path: &Path) {
        let mut workers = lock(&self.workers);
        if workers.get(path).is_some_and(|w| w.id == id) {
            workers.remove(path);
        }
    }

    /// A worker: loads the model, answers calls until idle, then unloads it.
    fn work(
        &'static self,
        id: u64,
        path: PathBuf,
        jobs: sync_mpsc::Receiver<Work>,
        ready: sync_mpsc::SyncSender<Result<(), LlmError>>,
    ) {
        let started = Instant::now();
        // Layers on the GPU: `SKALD_LOCAL_GPU_LAYERS` (0 keeps the model on the CPU), else
        // llama.cpp's own choice — every layer on a build with a GPU back-end
        // (`local-cuda`, `local-vulkan`, `local-metal`), none on a CPU build.
        let params = match env_number::<u32>("SKALD_LOCAL_GPU_LAYERS") {
            Some(n) => LlamaModelParams::default().with_n_gpu_layers(n),
            None => LlamaModelParams::default(),
        };
        let model = match LlamaModel::load_from_file(&self.backend, &path, &params) {
            Ok(m) => m,
            Err(e) => {
                let err = local(format!(
                    "llama.cpp cannot load {}: the file is damaged or a model it does not \
                         support ({e})",
                    path.display()
                ));
                self.retire(id, &path);
                // Calls that queued behind the load get its error too.
                while let Ok(w) = jobs.try_recv() {
                    let _ = w.tx.blocking_send(Err(err.clone()));
                }
                let _ = ready.send(Err(err));
                return;
            }
        };
        tracing::info!(model = %path.display(), ms = started.elapsed().as_millis() as u64, "local model loaded");
        let _ = ready.send(Ok(()));
        let mut cache = Cache::default();
        loop {
            match jobs.recv_timeout(self.idle) {
                Ok(w) => {
                    if w.tx.is_closed() {
                        continue;
                    }
                    if let Err(e) = w.job.run(self, &model, &mut cache, &w.tx) {
                        cache.forget();
                        let _ = w.tx.blocking_send(Err(e));
                    }
                }
                Err(sync_mpsc::RecvTimeoutError::Timeout) => {
                    self.retire(id, &path);
                    // Calls sent before the removal are still answered.
                    while let Ok(w) = jobs.try_recv() {
                        if let Err(e) = w.job.run(self, &model, &mut cache, &w.tx) {
                            cache.forget();
                            let _ = w.tx.blocking_send(Err(e));
                        }
                    }
                    break;
                }
                Err(sync_mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        tracing::info!(model = %path.display(), "local model unloaded");
    }
}

/// A worker's context and the tokens it holds.
#[derive(Default)]
struct Cache<'m> {
    ctx: Option<LlamaContext<'m>>,
    tokens: Vec<LlamaToken>,
}

impl Cache<'_> {
    fn forget(&mut self) {
        if let Some(ctx) = self.ctx.as_mut() {
            ctx.clear_kv_cache();
        }
        self.tokens.clear();
    }
}

pub async fn start(
    path: PathBuf,
    models_dir: &str,
    req: &Request,
) -> Result<EventStream, LlmError> {
    let rt = runtime()?;
    let (tx, rx) = mpsc::channel(256);
    let work = Work {
        job: Job {
            model: path.clone(),
            saved: Saved::new(models_dir),
            turns: prompt::turns(&req.messages, &req.tools),
            tools: req.tools.clone(),
            choice: req.tool_choice,
            max_tokens: req.max_tokens,
            temperature: req.temperature,
        },
        tx,
        _running: Running::start(),
    };
    // Loading comes before the stream, so a bad file fails the call, not its stream.
    tokio::task::spawn_blocking(move || rt.submit(&path, work))
        .await
        .map_err(|e| local(format!("the model loader stopped: {e}")))??;
    Ok(futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    })
    .boxed())
}

struct Job {
    /// The model's file, and where the states of prompts' shared beginnings are kept.
    model: PathBuf,
    saved: Option<Saved>,
    turns: Vec<prompt::Turn>,
    tools: Vec<ToolSpec>,
    choice: ToolChoice,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
}

/// Reads `tokens[from..to]` into the context in batches; false if the call was stopped.
/// Only the prompt's last token asks for logits: it is the one sampling starts from. With
/// `report`, how far the whole prompt is read goes out after each batch.
#[allow(clippy::too_many_arguments)]
fn read(
    report: bool,
    ctx: &mut LlamaContext<'_>,
    held: &mut Vec<LlamaToken>,
    batch: &mut LlamaBatch<'_>,
    tokens: &[LlamaToken],
    from: usize,
    to: usize,
    tx: &Tx,
) -> Result<bool, LlmError> {
    let progress = |done: usize| {
        report
            && !send(
                tx,
                Event::Reading {
                    done: done as u64,
                    total: tokens.len() as u64,
                },
            )
    };
    if progress(from) {
        return Ok(false);
    }
    for (c, chunk) in tokens[from..to].chunks(BATCH).enumerate() {
        if tx.is_closed() {
            return Ok(false);
        }
        batch.clear();
        for (j, t) in chunk.iter().enumerate() {
            let pos = from + c * BATCH + j;
            batch
                .add(*t, pos as i32, &[0], pos + 1 == tokens.len())
                .map_err(|e| decode_err(&e))?;
        }
        ctx.decode(batch).map_err(|e| decode_err(&e))?;
        held.extend_from_slice(chunk);
        if progress(held.len()) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Loads the state `file` holds if it is that of exactly `tokens`.
fn restore(
    ctx: &mut LlamaContext<'_>,
    saved: &Saved,
    file: &Path,
    tokens: &[LlamaToken],
) -> Option<Vec<LlamaToken>> {
    ctx.clear_kv_cache();
    let started = Instant::now();
    match ctx.state_seq_load_file(file, 0, tokens.len()) {
        Ok((held, _)) if held == tokens => {
            STATES_LOADED.fetch_add(1, Ordering::SeqCst);
            tracing::debug!(
                tokens = held.len(),
                ms = started.elapsed().as_millis() as u64,
                "local prompt state loaded"
            );
            Some(held)
        }
        other => {
            // Damaged, or from another build of llama.cpp: read the prompt instead, and
            // let this read write a good one.
            tracing::debug!(file = %file.display(), ok = other.is_ok(), "local prompt state unusable");
            saved.forget(file);
            None
        }
    }
}

/// Saves the state the context holds now, that of `tokens`, as `file`.
fn store(ctx: &LlamaContext<'_>, saved: &Saved, file: &Path, tokens: &[LlamaToken]) {
    let Some(scratch) = saved.scratch(file) else {
        return;
    };
    let done = ctx
        .state_seq_save_file(&scratch, 0, tokens)
        .map_err(|e| e.to_string())
        .and_then(|_| saved.commit(&scratch, file).map_err(|e| e.to_string()));
    if let Err(e) = done {
        let _ = std::fs::remove_file(&scratch);
        let _ = std::fs::remove_file(scratch.with_extension("sum.part"));
        tracing::debug!(file = %file.display(), error = %e, "local prompt state not saved");
    }
}

/// Sends an event; false once the stream is gone (stopped).
fn send(tx: &Tx, event: Event) -> bool {
    tx.blocking_send(Ok(event)).is_ok()
}

fn decode_err(e: &dyn std::fmt::Display) -> LlmError {
    local(format!("llama.cpp failed: {e}"))
}

impl Job {
    fn run<'m>(
        self,
        rt: &Runtime,
        model: &'m LlamaModel,
        cache: &mut Cache<'m>,
        tx: &Tx,
    ) -> Result<(), LlmError> {
        let prompt = render(model, &self.turns)?;
        let n_ctx = model.n_ctx_train().clamp(
            512,
            env_number("SKALD_LOCAL_CONTEXT").unwrap_or(DEFAULT_CONTEXT),
        );
        if cache.ctx.is_none() {
            let threads = std::thread::available_parallelism()
                .map_or(4, |n| n.get())
                .min(64) as i32;
            let params = LlamaContextParams::default()
                .with_n_ctx(NonZeroU32::new(n_ctx))
                .with_n_batch(BATCH as u32)
                .with_n_threads(threads)
                .with_n_threads_batch(threads);
            cache.ctx = Some(
                model
                    .new_context(&rt.backend, params)
                    .map_err(|e| local(format!("cannot make a llama.cpp context: {e}")))?,
            );
            cache.tokens.clear();
        }
        let vocab = model.vocab();
        let tokens = vocab.tokenize(prompt.as_bytes(), true, true);
        let room = (n_ctx as usize).saturating_sub(tokens.len());
        if tokens.is_empty() || room < 16 {
            return Err(local(format!(
                "the conversation is {} tokens and this local model's context holds {n_ctx}; \
                 start a new chat (or set SKALD_LOCAL_CONTEXT higher, memory permitting)",
                tokens.len()
            )));
        }
        let Some(ctx) = cache.ctx.as_mut() else {
            return Err(local("no llama.cpp context"));
        };
        // What the context already holds of this prompt; the last token is read again in
        // any case, since sampling needs its logits.
        let mut keep = cache
            .tokens
            .iter()
            .zip(&tokens)
            .take_while(|(a, b)| a == b)
            .count()
            .min(tokens.len() - 1);
        if keep < cache.tokens.len()
            && !ctx
                .clear_kv_cache_seq(Some(0), Some(keep as u32), None)
                .unwrap_or(false)
        {
            ctx.clear_kv_cache();
            keep = 0;
        }
        cache.tokens.truncate(keep);
        // What every chat shares (the system turn: instructions and tools). When the
        // context does not hold it yet, its state may be on disk from an earlier process;
        // if not, it is saved once read.
        let shared = self.shared_len(model, &tokens);
        let mut save = None;
        if let Some(saved) = self.saved.as_ref().filter(|_| keep < shared) {
            let ids: Vec<i32> = tokens[..shared].iter().map(|t| t.0).collect();
            let file = saved.file(&self.model, n_ctx, &ids);
            if !file.is_file() {
                save = Some((saved, file));
            } else if let Some(restored) = saved
                .is_whole(&file)
                .then(|| restore(ctx, saved, &file, &tokens[..shared]))
                .flatten()
            {
                saved.touch(&file);
                cache.tokens = restored;
                keep = shared;
            } else {
                // The context may hold part of a failed load: start from nothing.
                ctx.clear_kv_cache();
                cache.tokens.clear();
                keep = 0;
                save = Some((saved, file));
            }
        }
        let mut batch = LlamaBatch::new(BATCH, 1);
        // A read of more than one batch takes seconds: say how far it is.
        let report = tokens.len() - keep > BATCH;
        // Up to the shared beginning first when its state is to be saved, then the rest.
        let total = tokens.len();
        let stops = [save.as_ref().map(|_| shared), Some(total)];
        let mut from = keep;
        for to in stops.into_iter().flatten() {
            if !read(
                report,
                ctx,
                &mut cache.tokens,
                &mut batch,
                &tokens,
                from,
                to,
                tx,
            )? {
                return Ok(());
            }
            if let Some((saved, file)) = save.as_ref().filter(|_| to == shared) {
                store(ctx, saved, file, &tokens[..shared]);
            }
            from = to;
        }
        if report {
            let total = total as u64;
            send(tx, Event::Reading { done: total, total });
        }
        tracing::debug!(prompt = tokens.len(), reused = keep, "local prompt read");
        let mut sampler = self.sampler(model)?;
        let limit = self
            .max_tokens
            .map_or(DEFAULT_MAX_OUTPUT, |m| m as usize)
            .min(room);
        let mut splitter = Splitter::new();
        let mut out = Coalesce::default();
        let mut pending: Vec<u8> = Vec::new();
        let mut generated = 0usize;
        let mut finish = FinishReason::Stop;
        loop {
            if tx.is_closed() {
                return Ok(());
            }
            if generated == limit {
                finish = FinishReason::Length;
                break;
            }
            let token = sampler.sample(ctx, batch.n_tokens() - 1);
            if vocab.is_eog(token) {
                break;
            }
            generated += 1;
            pending.extend(vocab.token_to_piece(token, false, None));
            let text = take_utf8(&mut pending);
            if !text.is_empty() {
                for p in splitter.feed(&text) {
                    if !out.push(tx, p) {
                        return Ok(());
                    }
                }
            }
            batch.clear();
            batch
                .add(token, cache.tokens.len() as i32, &[0], true)
                .map_err(|e| decode_err(&e))?;
            ctx.decode(&mut batch).map_err(|e| decode_err(&e))?;
            cache.tokens.push(token);
        }
        let mut rest = splitter.feed(&String::from_utf8_lossy(&pending));
        rest.extend(splitter.finish());
        for p in rest {
            out.push(tx, p);
        }
        out.flush(tx);
        if splitter.calls() > 0 && finish == FinishReason::Stop {
            finish = FinishReason::ToolCalls;
        }
        send(
            tx,
            Event::Usage {
                usage: Usage {
                    input_tokens: tokens.len() as u64,
                    output_tokens: generated as u64,
                    cached_input_tokens: 0,
                },
            },
        );
        send(tx, Event::Finish { reason: finish });
        Ok(())
    }

    /// How many of the prompt's first tokens are the system turn's, which every chat with
    /// the same agent and tools shares; 0 when too few to be worth a saved state.
    fn shared_len(&self, model: &LlamaModel, tokens: &[LlamaToken]) -> usize {
        let Some(system) = self.turns.first() else {
            return 0;
        };
        let Ok(text) = render_with(model, std::slice::from_ref(system), false) else {
            return 0;
        };
        let alone = model.vocab().tokenize(text.as_bytes(), true, true);
        let n = alone
            .iter()
            .zip(tokens)
            .take_while(|(a, b)| a == b)
            .count()
            // The last token is always read: sampling needs its logits.
            .min(tokens.len().saturating_sub(1));
        if n < saved::MIN_TOKENS { 0 } else { n }
    }

    fn sampler(&self, model: &LlamaModel) -> Result<LlamaSampler, LlmError> {
        let mut chain = Vec::new();
        if !self.tools.is_empty() {
            let g = grammar::tool_call(&self.tools).map_err(local)?;
            let constrained = match self.choice {
                ToolChoice::Required => LlamaSampler::grammar(model, &g, "root"),
                ToolChoice::Auto => LlamaSampler::grammar_lazy(model, &g, "root", [OPEN], &[]),
            };
            chain.push(constrained.map_err(|e| local(format!("the tool-call grammar: {e}")))?);
        }
        chain.push(LlamaSampler::penalties(
            model.n_vocab(),
            PENALTY_LAST_N,
            PENALTY_REPEAT,
            0.0,
            0.0,
        ));
        let t = self.temperature.unwrap_or(DEFAULT_TEMPERATURE);
        if t <= 0.0 {
            chain.push(LlamaSampler::greedy());
        } else {
            chain.extend([
                LlamaSampler::top_k(40),
                LlamaSampler::top_p(0.95, 1),
                LlamaSampler::temp(t),
                LlamaSampler::dist(SEED),
            ]);
        }
        Ok(LlamaSampler::chain_simple(chain))
    }
}

/// How often text is handed over while tokens stream: a wake-up of the reader per token
/// costs the generation a core on small machines, and nobody reads faster than this.
const FLUSH_EVERY: Duration = Duration::from_millis(30);

/// Text gathered between flushes; the first words go out at once.
#[derive(Default)]
struct Coalesce {
    text: String,
    since: Option<Instant>,
}

impl Coalesce {
    /// Queues a piece; false once the stream is gone (stopped).
    fn push(&mut self, tx: &Tx, p: Piece) -> bool {
        match p {
            Piece::Text(t) => {
                self.text.push_str(&t);
                if self.since.is_none_or(|t| t.elapsed() >= FLUSH_EVERY) {
                    return self.flush(tx);
                }
                true
            }
            call => self.flush(tx) && send(tx, piece_event(call)),
        }
    }

    fn flush(&mut self, tx: &Tx) -> bool {
        self.since = Some(Instant::now());
        if self.text.is_empty() {
            return true;
        }
        send(
            tx,
            Event::Text {
                delta: std::mem::take(&mut self.text),
            },
        )
    }
}

fn piece_event(p: Piece) -> Event {
    match p {
        Piece::Text(delta) => Event::Text { delta },
        Piece::Call(call) => Event::ToolCall { call },
    }
}

/// The complete UTF-8 text at the start of `pending`, leaving an unfinished character for
/// the next token (a token may end inside one).
fn take_utf8(pending: &mut Vec<u8>) -> String {
    match std::str::from_utf8(pending) {
        Ok(s) => {
            let s = s.to_string();
            pending.clear();
            s
        }
        Err(e) if e.error_len().is_none() => {
            let valid = e.valid_up_to();
            let s = String::from_utf8_lossy(&pending[..valid]).into_owned();
            pending.drain(..valid);
            s
        }
        // Invalid bytes, not an unfinished character: replaced, so the stream goes on.
        Err(_) => {
            let s = String::from_utf8_lossy(pending).into_owned();
            pending.clear();
            s
        }
    }
}

/// The prompt through the model's own chat template (from its GGUF metadata); ChatML when
/// it has none that llama.cpp knows.
fn render(model: &LlamaModel, turns: &[prompt::Turn]) -> Result<String, LlmError> {
    render_with(model, turns, true)
}

/// The same, with or without the opening of the model's answer at the end.
fn render_with(
    model: &LlamaModel,
    turns: &[prompt::Turn],
    answer: bool,
) -> Result<String, LlmError> {
    let messages = turns
        .iter()
        .map(|t| LlamaChatMessage::new(t.role.to_string(), t.content.replace('\0', "")))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| local(format!("cannot pass the conversation to llama.cpp: {e}")))?;
    if let Ok(template) = model.chat_template(None)
        && let Ok(p) = model.apply_chat_template(&template, &messages, answer)
    {
        return Ok(p);
    }
    let chatml =
        LlamaChatTemplate::new("chatml").map_err(|e| local(format!("the ChatML template: {e}")))?;
    model
        .apply_chat_template(&chatml, &messages, answer)
        .map_err(|e| local(format!("cannot format the conversation for the model: {e}")))
}

#[cfg(test)]
mod tests {
    use super::take_utf8;

    #[test]
    fn a_character_split_across_tokens_waits_for_its_end() {
        let bytes = "né".as_bytes();
        let mut pending = bytes[..2].to_vec(); // "n" and the first byte of "é"
        assert_eq!(take_utf8(&mut pending), "n");
        pending.extend(&bytes[2..]);
        assert_eq!(take_utf8(&mut pending), "é");
        assert!(pending.is_empty());
    }
}
