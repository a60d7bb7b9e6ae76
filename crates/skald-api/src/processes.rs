//! Background processes: commands an agent started with `execute_cmd` and
//! `background: true` (a dev server, a file watcher) that run on after the call returned.
//! The engine keeps one table. Each process belongs to the chat that started it, is listed
//! there with its output so far, and ends when the agent or the person stops it, when its
//! chat is deleted, or when the engine shuts down. The table is bookkeeping only:
//! `execute_cmd` starts the process and hands over the future that reads its output and
//! waits for its end (docs/processes.md).

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use ts_rs::TS;

/// How many background processes one chat may have running at once: enough for a server,
/// a watcher and a database, few enough that a looping agent cannot fill the machine.
pub const MAX_RUNNING_PER_CHAT: usize = 8;
/// Bytes of a process's output kept (its latest), for the person and the agent.
pub const KEPT_OUTPUT: usize = 256 * 1024;
/// How many background processes may run at once in all chats together: scheduled jobs
/// and background tasks each run in a chat of their own, so the per-chat cap alone does
/// not bound them.
pub const MAX_RUNNING: usize = 32;
/// Ended processes a chat keeps listed, newest first, so the person sees how they ended.
const KEPT_ENDED_PER_CHAT: usize = 20;
/// Ended processes kept in all chats together (each with up to `KEPT_OUTPUT` of output):
/// beyond it the oldest go, whatever their chat, so chats nobody deletes (a daily job's)
/// do not add up.
const KEPT_ENDED: usize = 64;
/// How long a stop waits for the process to be gone before it answers.
pub const STOP_WAIT: Duration = Duration::from_secs(5);

/// Where a background process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ProcessStatus {
    Running,
    /// It ended by itself.
    Exited,
    /// The agent or the person stopped it, its chat went, or Skald shut down.
    Stopped,
}

/// One background process, as the chat lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ProcessInfo {
    /// Its number in this Skald process (the agent's `process_id`).
    pub id: u32,
    pub session_id: i64,
    pub command: String,
    pub workdir: String,
    /// When it started, in milliseconds since the Unix epoch.
    pub started_at: i64,
    pub status: ProcessStatus,
    /// How it ended ("exit code 0", "killed by signal 9"), with what the sandbox noted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub ended: Option<String>,
    /// All the output it has written so far (the latest `KEPT_OUTPUT` bytes are kept).
    pub output_bytes: u64,
}

/// The output a process wrote, in the order it came (stdout and stderr together), of
/// which the latest `KEPT_OUTPUT` bytes are kept.
#[derive(Debug, Default)]
pub struct ProcessOutput {
    kept: VecDeque<u8>,
    total: u64,
    /// How far the agent has read (`check_process`), in bytes since the start.
    read_by_agent: u64,
}

impl ProcessOutput {
    pub fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let bytes = &bytes[bytes.len().saturating_sub(KEPT_OUTPUT)..];
        let overflow = (self.kept.len() + bytes.len()).saturating_sub(KEPT_OUTPUT);
        self.kept.drain(..overflow);
        self.kept.extend(bytes);
    }

    /// Everything kept, with a line saying how much came before it.
    pub fn text(&self) -> String {
        let dropped = self.total - self.kept.len() as u64;
        let (a, b) = self.kept.as_slices();
        let mut all = a.to_vec();
        all.extend_from_slice(b);
        let text = String::from_utf8_lossy(&all).into_owned();
        if dropped > 0 {
            format!("[… {dropped} earlier bytes not kept …]\n{text}")
        } else {
            text
        }
    }

    /// What the agent has not read yet, at most `budget` bytes of it (the latest), and
    /// marks it read.
    fn take_unread(&mut self, budget: usize) -> String {
        let start = self.total - self.kept.len() as u64;
        let from = self.read_by_agent.max(start);
        let unread = usize::try_from(self.total - from).unwrap_or(usize::MAX);
        let shown = unread.min(budget);
        // Unread but not shown: cut for the budget, or no longer kept.
        let skipped = self.total - self.read_by_agent - shown as u64;
        let bytes: Vec<u8> = self
            .kept
            .iter()
            .skip(self.kept.len() - shown)
            .copied()
            .collect();
        self.read_by_agent = self.total;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if skipped > 0 {
            format!("[… {skipped} bytes skipped …]\n{text}")
        } else {
            text
        }
    }
}

/// What a process's future is handed: where its output goes, and what tells it to stop.
#[derive(Clone)]
pub struct ProcessHandle {
    pub output: Arc<Mutex<ProcessOutput>>,
    pub stop: CancellationToken,
}

impl ProcessHandle {
    /// Appends output the process wrote.
    pub fn push(&self, bytes: &[u8]) {
        lock(&self.output).push(bytes);
    }
}

/// Drives a process to its end; its output is how it ended, for `ProcessInfo::ended`.
pub type ProcessRun = Pin<Box<dyn Future<Output = String> + Send>>;

/// Told when a process starts or ends: the chat's id and the process.
pub type ProcessChanged = Arc<dyn Fn(i64, ProcessInfo) + Send + Sync>;

struct Entry {
    info: ProcessInfo,
    handle: ProcessHandle,
    /// Set when its future has returned: nothing of it runs any more.
    ended: Arc<tokio::sync::Notify>,
}

/// The engine's background processes, of every chat.
pub struct Processes {
    next: AtomicU32,
    entries: Mutex<BTreeMap<u32, Entry>>,
    changed: ProcessChanged,
    /// Cancelled at the engine's shutdown: every process is stopped.
    shutdown: CancellationToken,
}

/// Why a process could not be started, found or stopped.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProcessError {
    #[error(
        "this chat already has {MAX_RUNNING_PER_CHAT} background processes running; stop one \
         with check_process (stop: true) first"
    )]
    TooMany,
    #[error(
        "{MAX_RUNNING} background processes are running in all chats together, the most \
         Skald runs at once; stop one first"
    )]
    TooManyInAll,
    #[error("this chat has no background process {0}")]
    NoSuch(u32),
    #[error("Skald is shutting down; no background process starts now")]
    ShuttingDown,
}

impl Processes {
    pub fn new(changed: ProcessChanged, shutdown: CancellationToken) -> Arc<Processes> {
        Arc::new(Processes {
            next: AtomicU32::new(1),
            entries: Mutex::new(BTreeMap::new()),
            changed,
            shutdown,
        })
    }

    /// Makes room for a process of `session_id` and gives it its handle; `start` then
    /// hands over its future. A chat at `MAX_RUNNING_PER_CHAT` gets `TooMany`.
    pub fn reserve(&self, session_id: i64) -> Result<ProcessHandle, ProcessError> {
        if self.shutdown.is_cancelled() {
            return Err(ProcessError::ShuttingDown);
        }
        let entries = lock(&self.entries);
        let running = entries
            .values()
            .filter(|e| e.info.status == ProcessStatus::Running);
        let (mut all, mut here) = (0, 0);
        for e in running {
            all += 1;
            here += usize::from(e.info.session_id == session_id);
        }
        if here >= MAX_RUNNING_PER_CHAT {
            return Err(ProcessError::TooMany);
        }
        if all >= MAX_RUNNING {
            return Err(ProcessError::TooManyInAll);
        }
        Ok(ProcessHandle {
            output: Arc::default(),
            stop: self.shutdown.child_token(),
        })
    }

    /// Lists a started process and drives `run` to its end in a task of its own.
    pub fn start(
        self: &Arc<Self>,
        session_id: i64,
        command: &str,
        workdir: &str,
        handle: ProcessHandle,
        run: ProcessRun,
    ) -> ProcessInfo {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let info = ProcessInfo {
            id,
            session_id,
            command: command.to_string(),
            workdir: workdir.to_string(),
            started_at: now_ms(),
            status: ProcessStatus::Running,
            ended: None,
            output_bytes: 0,
        };
        let ended = Arc::new(tokio::sync::Notify::new());
        lock(&self.entries).insert(
            id,
            Entry {
                info: info.clone(),
                handle: handle.clone(),
                ended: ended.clone(),
            },
        );
        (self.changed)(session_id, info.clone());
        let me = self.clone();
        tokio::spawn(async move {
            let how = run.await;
            let info = {
                let mut entries = lock(&me.entries);
                let Some(e) = entries.get_mut(&id) else {
                    return;
                };
                e.info.status = if handle.stop.is_cancelled() {
                    ProcessStatus::Stopped
                } else {
                    ProcessStatus::Exited
                };
                e.info.ended = Some(how);
                e.info.output_bytes = lock(&handle.output).total;
                let info = e.info.clone();
                prune(&mut entries, session_id);
                info
            };
            ended.notify_waiters();
            ended.notify_one();
            (me.changed)(session_id, info);
        });
        info
    }

    /// The processes of a chat, oldest first.
    pub fn list(&self, session_id: i64) -> Vec<ProcessInfo> {
        lock(&self.entries)
            .values()
            .filter(|e| e.info.session_id == session_id)
            .map(fresh)
            .collect()
    }

    /// A process of the chat and all the output kept of it (for the person).
    pub fn output(&self, session_id: i64, id: u32) -> Result<(ProcessInfo, String), ProcessError> {
        let entries = lock(&self.entries);
        let e = entry_of(&entries, session_id, id)?;
        let text = lock(&e.handle.output).text();
        Ok((fresh(e), text))
    }

    /// A process of the chat and what of its output the agent has not read yet (the
    /// latest `budget` bytes of it).
    pub fn unread(
        &self,
        session_id: i64,
        id: u32,
        budget: usize,
    ) -> Result<(ProcessInfo, String), ProcessError> {
        let entries = lock(&self.entries);
        let e = entry_of(&entries, session_id, id)?;
        let text = lock(&e.handle.output).take_unread(budget);
        Ok((fresh(e), text))
    }

    /// Stops a process of the chat and waits (up to `STOP_WAIT`) until nothing of it runs.
    pub async fn stop(&self, session_id: i64, id: u32) -> Result<ProcessInfo, ProcessError> {
        let ended = {
            let entries = lock(&self.entries);
            let e = entry_of(&entries, session_id, id)?;
            if e.info.status != ProcessStatus::Running {
                return Ok(fresh(e));
            }
            let ended = e.ended.clone();
            e.handle.stop.cancel();
            ended
        };
        let _ = tokio::time::timeout(STOP_WAIT, ended.notified()).await;
        let entries = lock(&self.entries);
        entry_of(&entries, session_id, id).map(fresh)
    }

    /// Stops every process of a chat (it is being deleted) and forgets them.
    pub async fn remove_session(&self, session_id: i64) {
        let ids: Vec<u32> = lock(&self.entries)
            .values()
            .filter(|e| e.info.session_id == session_id)
            .map(|e| e.info.id)
            .collect();
        for id in &ids {
            let _ = self.stop(session_id, *id).await;
        }
        lock(&self.entries).retain(|_, e| e.info.session_id != session_id);
    }

    /// Stops every process of every chat (the carrier is ending) and waits, each up to
    /// `STOP_WAIT`, until nothing of them runs. Returns how many were running.
    pub async fn stop_all(&self) -> usize {
        let running: Vec<(i64, u32)> = lock(&self.entries)
            .values()
            .filter(|e| e.info.status == ProcessStatus::Running)
            .map(|e| (e.info.session_id, e.info.id))
            .collect();
        for (session_id, id) in &running {
            let _ = self.stop(*session_id, *id).await;
        }
        running.len()
    }

    /// How many processes run now, in every chat.
    pub fn running(&self) -> usize {
        lock(&self.entries)
            .values()
            .filter(|e| e.info.status == ProcessStatus::Running)
            .count()
    }
}

fn entry_of(
    entries: &BTreeMap<u32, Entry>,
    session_id: i64,
    id: u32,
) -> Result<&Entry, ProcessError> {
    entries
        .get(&id)
        .filter(|e| e.info.session_id == session_id)
        .ok_or(ProcessError::NoSuch(id))
}

/// The entry's info with its output's size as it is now.
fn fresh(e: &Entry) -> ProcessInfo {
    let mut info = e.info.clone();
    info.output_bytes = lock(&e.handle.output).total;
    info
}

/// Forgets the oldest ended processes of a chat beyond `KEPT_ENDED_PER_CHAT`.
fn prune(entries: &mut BTreeMap<u32, Entry>, session_id: i64) {
    let ended: Vec<u32> = entries
        .values()
        .filter(|e| e.info.session_id == session_id && e.info.status != ProcessStatus::Running)
        .map(|e| e.info.id)
        .collect();
    for id in ended
        .iter()
        .take(ended.len().saturating_sub(KEPT_ENDED_PER_CHAT))
    {
        entries.remove(id);
    }
    // Ids grow with time, so the first ended ones are the oldest.
    let ended: Vec<u32> = entries
        .values()
        .filter(|e| e.info.status != ProcessStatus::Running)
        .map(|e| e.info.id)
        .collect();
    for id in ended.iter().take(ended.len().saturating_sub(KEPT_ENDED)) {
        entries.remove(id);
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A poisoned lock still holds consistent bookkeeping (every change is one assignment).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_keeps_the_latest_bytes_and_the_agent_reads_each_once() {
        let mut o = ProcessOutput::default();
        o.push(b"one\n");
        o.push(b"two\n");
        assert_eq!(o.take_unread(1000), "one\ntwo\n");
        assert_eq!(o.take_unread(1000), "");
        o.push(b"three\n");
        assert_eq!(o.take_unread(3), "[… 3 bytes skipped …]\nee\n");
        o.push(&vec![b'x'; KEPT_OUTPUT + 10]);
        assert_eq!(o.kept.len(), KEPT_OUTPUT);
        assert!(o.text().starts_with("[… 24 earlier bytes not kept …]\n"));
        let unread = o.take_unread(KEPT_OUTPUT * 2);
        assert!(
            unread.starts_with("[… 10 bytes skipped …]\n"),
            "{unread:.40}"
        );
    }

    #[tokio::test]
    async fn a_chat_sees_only_its_own_processes_and_stopping_waits_for_the_end() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let table = Processes::new(
            Arc::new(move |sid, info: ProcessInfo| s.lock().unwrap().push((sid, info.status))),
            CancellationToken::new(),
        );
        let handle = table.reserve(1).unwrap();
        let (h, stop) = (handle.clone(), handle.stop.clone());
        let info = table.start(
            1,
            "serve",
            "/w",
            handle,
            Box::pin(async move {
                h.push(b"listening\n");
                stop.cancelled().await;
                "killed by signal 9".to_string()
            }),
        );
        tokio::task::yield_now().await;
        assert_eq!(table.list(2), vec![]);
        assert_eq!(table.output(2, info.id), Err(ProcessError::NoSuch(info.id)));
        assert_eq!(table.list(1)[0].status, ProcessStatus::Running);
        let stopped = table.stop(1, info.id).await.unwrap();
        assert_eq!(stopped.status, ProcessStatus::Stopped);
        assert_eq!(stopped.ended.as_deref(), Some("killed by signal 9"));
        assert_eq!(table.output(1, info.id).unwrap().1, "listening\n");
        assert_eq!(
            *seen.lock().unwrap(),
            vec![(1, ProcessStatus::Running), (1, ProcessStatus::Stopped)]
        );
        table.remove_session(1).await;
        assert_eq!(table.list(1), vec![]);
    }

    #[tokio::test]
    async fn a_chat_runs_at_most_its_share_and_none_start_at_shutdown() {
        let shutdown = CancellationToken::new();
        let table = Processes::new(Arc::new(|_, _| {}), shutdown.clone());
        for _ in 0..MAX_RUNNING_PER_CHAT {
            let handle = table.reserve(1).unwrap();
            let stop = handle.stop.clone();
            table.start(
                1,
                "sleep",
                "/",
                handle,
                Box::pin(async move {
                    stop.cancelled().await;
                    "stopped".to_string()
                }),
            );
        }
        assert_eq!(table.reserve(1).err(), Some(ProcessError::TooMany));
        assert!(table.reserve(2).is_ok());
        shutdown.cancel();
        assert_eq!(table.reserve(2).err(), Some(ProcessError::ShuttingDown));
        for _ in 0..100 {
            if table.running() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(table.running(), 0);
    }
}

#[cfg(test)]
mod caps_in_all_chats {
    use super::*;

    fn start_waiting(table: &Arc<Processes>, session_id: i64) -> Result<(), ProcessError> {
        let handle = table.reserve(session_id)?;
        let stop = handle.stop.clone();
        table.start(
            session_id,
            "sleep",
            "/",
            handle,
            Box::pin(async move {
                stop.cancelled().await;
                "stopped".to_string()
            }),
        );
        Ok(())
    }

    /// Chats each under their own cap (a scheduled job's, a background task's) still add up
    /// to at most `MAX_RUNNING`; a stop makes room again.
    #[tokio::test]
    async fn all_chats_together_run_at_most_the_global_cap() {
        let table = Processes::new(Arc::new(|_, _| {}), CancellationToken::new());
        for n in 0..MAX_RUNNING {
            start_waiting(&table, n as i64).unwrap();
        }
        assert_eq!(
            start_waiting(&table, 1000).err(),
            Some(ProcessError::TooManyInAll)
        );
        let first = table.list(0)[0].id;
        table.stop(0, first).await.unwrap();
        assert!(start_waiting(&table, 1000).is_ok());
    }

    /// Ended processes of chats nobody deletes do not pile up: at most `KEPT_ENDED` stay
    /// listed in all, the oldest going first.
    #[tokio::test]
    async fn ended_processes_kept_in_all_chats_are_bounded() {
        let table = Processes::new(Arc::new(|_, _| {}), CancellationToken::new());
        for n in 0..(KEPT_ENDED + 10) {
            let handle = table.reserve(n as i64).unwrap();
            let info = table.start(
                n as i64,
                "true",
                "/",
                handle,
                Box::pin(async { "exit code 0".to_string() }),
            );
            for _ in 0..100 {
                if table.list(n as i64)[0].status != ProcessStatus::Running {
                    break;
                }
                tokio::task::yield_now().await;
            }
            assert_eq!(table.list(n as i64)[0].id, info.id);
        }
        let kept = lock(&table.entries).len();
        assert_eq!(kept, KEPT_ENDED);
        assert!(table.list(0).is_empty(), "the oldest went first");
        assert_eq!(table.list((KEPT_ENDED + 9) as i64).len(), 1);
    }
}
