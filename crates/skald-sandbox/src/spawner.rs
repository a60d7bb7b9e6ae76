//! Sandboxed commands through a long-lived spawner per set of masks (Linux).
//!
//! A command run through the one-shot helper pays for two execs and a user namespace, about
//! 1.5 ms before the command's own start (docs/sandbox.md, "Cost"). Most of that is the
//! namespace and the masks, which are the same for every command of a chat. So Skald keeps
//! a `skald-sandbox --serve` process per set of masks (`zygote.rs`): it made the namespace
//! and mounted the masks once, and for each command only restricts a fresh thread with
//! Landlock and seccomp for that command's policy and starts the command from it.
//!
//! The masks are a snapshot of the moment the spawner started, so a spawner is keyed by the
//! exact list of mounts a command would get, existing paths only (a new `secrets/` folder
//! or `~/.aws` makes a new list, so a new spawner), and it is retired after `MAX_AGE` whatever happens, which bounds how long
//! a change of the mounts beneath (a drive plugged in) goes unseen. Anything the spawner
//! cannot carry (a path or variable that is not UTF-8, a request too long for one packet, a
//! spawner that would not start) is `Unsupported`: nothing ran, and the caller runs the
//! command through the one-shot helper instead, which is confined the same way.

use crate::{Policy, plan_masks};
use rustix::net::{
    AddressFamily, RecvFlags, SendAncillaryBuffer, SendAncillaryMessage, SendFlags, Shutdown,
    SocketFlags, SocketType,
};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::IoSlice;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The largest request, in bytes: one packet. A longer one goes through the helper.
pub(crate) const MAX_REQUEST: usize = 128 * 1024;
/// How long a spawner serves new commands after it started (see the module's comment).
const MAX_AGE: Duration = Duration::from_secs(30);
/// Spawners kept at once; the oldest goes first. A chat has one; a few chats share a machine.
const MAX_SPAWNERS: usize = 4;
/// How long a spawner may take to say it is ready, and then to say a command started.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// A command to start confined.
pub struct Launch {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    /// The command's whole environment: nothing of the caller's is inherited.
    pub env: Vec<(OsString, OsString)>,
    pub policy: Policy,
    /// Where the command's output goes: the write ends of the caller's pipes.
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
}

/// Why a command was not started.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// Nothing ran and the spawner cannot carry this command: run it through the helper.
    #[error("{0}")]
    Unsupported(String),
    /// The sandbox could not confine the command, so it did not run.
    #[error("{0}")]
    Refused(String),
}

/// A command that started; `wait` for its end.
pub struct Launched {
    /// Its process id, which is also its process group's (kill the group to stop it all).
    pub pid: u32,
    replies: Receiver<Reply>,
    /// Keeps the spawner alive while the command runs, even once it left the pool.
    _spawner: Arc<Spawner>,
}

impl Launched {
    /// Blocks until the command exits; an error if the spawner went away first.
    pub fn wait(self) -> Result<ExitStatus, String> {
        loop {
            match self.replies.recv() {
                Ok(Reply::Exited { status, .. }) => return Ok(ExitStatus::from_raw(status)),
                Ok(_) => continue,
                Err(_) => return Err("the sandbox's spawner stopped while the command ran".into()),
            }
        }
    }
}

/// Starts `launch` confined to its policy, through the spawner for its masks (started if
/// there is none). `helper` is the `skald-sandbox` binary.
pub fn launch(helper: &Path, launch: Launch) -> Result<Launched, LaunchError> {
    // Only what exists is mounted over, so the key is what exists now: a hidden folder
    // made after a spawner started (a new `~/.aws`) is a new key, hence a new spawner.
    let masks: Vec<PathBuf> = plan_masks(&launch.policy.masked, &launch.policy.writable)
        .into_iter()
        .filter(|p| std::fs::metadata(p).is_ok())
        .collect();
    let request = Request::from_launch(&launch)?;
    let spawner = pool_get(helper, masks)?;
    let id = spawner.next_id.fetch_add(1, Ordering::Relaxed);
    let request = serde_json::to_vec(&Request { id, ..request })
        .map_err(|e| LaunchError::Unsupported(format!("cannot write the request: {e}")))?;
    if request.len() > MAX_REQUEST {
        return Err(LaunchError::Unsupported(
            "the command is too long for the spawner".to_string(),
        ));
    }
    let (tx, replies) = std::sync::mpsc::channel();
    spawner.pending_insert(id, tx);
    let sent = {
        let fds = [launch.stdout.as_fd(), launch.stderr.as_fd()];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
        let mut control = SendAncillaryBuffer::new(&mut space);
        control.push(SendAncillaryMessage::ScmRights(&fds));
        rustix::net::sendmsg(
            &*spawner.socket,
            &[IoSlice::new(&request)],
            &mut control,
            SendFlags::NOSIGNAL,
        )
    };
    // Our copies of the pipes' write ends go now, so the caller sees the end of the output
    // when the command's copies are gone.
    drop(launch);
    if let Err(e) = sent {
        spawner.pending_remove(id);
        spawner.alive.store(false, Ordering::Relaxed);
        return Err(LaunchError::Unsupported(format!(
            "the spawner did not take the command: {e}"
        )));
    }
    match replies.recv_timeout(ANSWER_TIMEOUT) {
        Ok(Reply::Started { pid, .. }) => Ok(Launched {
            pid,
            replies,
            _spawner: spawner,
        }),
        Ok(Reply::Failed { why, .. }) => Err(LaunchError::Refused(why)),
        Ok(other) => Err(LaunchError::Refused(format!(
            "the sandbox's spawner answered out of turn: {other:?}"
        ))),
        Err(RecvTimeoutError::Timeout) => {
            spawner.pending_remove(id);
            spawner.alive.store(false, Ordering::Relaxed);
            Err(LaunchError::Refused(format!(
                "the sandbox's spawner did not confirm the command started within {} s",
                ANSWER_TIMEOUT.as_secs()
            )))
        }
        Err(RecvTimeoutError::Disconnected) => Err(LaunchError::Refused(
            "the sandbox's spawner stopped before the command started".to_string(),
        )),
    }
}

/// What Skald asks the spawner for (one packet, with the stdout and stderr descriptors).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Request {
    pub id: u64,
    pub program: String,
    pub args: Vec<String>,
    pub cwd: String,
    pub env: Vec<(String, String)>,
    pub writable: Vec<PathBuf>,
    pub network: bool,
}

impl Request {
    fn from_launch(launch: &Launch) -> Result<Request, LaunchError> {
        let text = |s: &std::ffi::OsStr| {
            s.to_str().map(str::to_string).ok_or_else(|| {
                LaunchError::Unsupported(format!("{} is not UTF-8", s.to_string_lossy()))
            })
        };
        let mut env = Vec::with_capacity(launch.env.len());
        for (k, v) in &launch.env {
            env.push((text(k)?, text(v)?));
        }
        for p in &launch.policy.writable {
            text(p.as_os_str())?;
        }
        Ok(Request {
            id: 0,
            program: text(&launch.program)?,
            args: launch
                .args
                .iter()
                .map(|a| text(a))
                .collect::<Result<_, _>>()?,
            cwd: text(launch.cwd.as_os_str())?,
            env,
            writable: launch.policy.writable.clone(),
            network: launch.policy.network,
        })
    }
}

/// What the spawner says, one packet each.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "reply")]
pub(crate) enum Reply {
    /// The namespace and masks are in place.
    Ready,
    /// It could not confine itself; it exits.
    Refused { why: String },
    /// The command `id` runs as `pid`.
    Started { id: u64, pid: u32 },
    /// The command `id` did not start.
    Failed { id: u64, why: String },
    /// The command `id` ended; `status` is the raw wait status.
    Exited { id: u64, status: i32 },
}

type Pending = Arc<Mutex<HashMap<u64, Sender<Reply>>>>;

/// One `skald-sandbox --serve` process and the commands waiting on it.
struct Spawner {
    helper: PathBuf,
    masks: Vec<PathBuf>,
    born: Instant,
    socket: Arc<OwnedFd>,
    next_id: AtomicU64,
    pending: Pending,
    alive: Arc<AtomicBool>,
    process: Mutex<Child>,
}

impl Spawner {
    fn start(helper: &Path, masks: Vec<PathBuf>) -> Result<Spawner, String> {
        let policy = serde_json::to_string(&Policy {
            writable: Vec::new(),
            masked: masks.clone(),
            network: false,
        })
        .map_err(|e| format!("cannot write the masks down: {e}"))?;
        let (ours, theirs) = rustix::net::socketpair(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC,
            None,
        )
        .map_err(|e| format!("cannot make the spawner's socket: {e}"))?;
        let mut command = std::process::Command::new(helper);
        command
            .args(["--serve", &policy])
            // Its environment is not Skald's: each command brings its own.
            .env_clear()
            .stdin(Stdio::from(theirs))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Ctrl-C in a terminal goes to Skald, which then closes the socket.
            .process_group(0);
        let mut process = command
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", helper.display()))?;
        // The command above held the other end; it is gone with it, so the spawner's exit
        // ends our reads.
        drop(command);
        match first_answer(&ours) {
            Ok(Reply::Ready) => {}
            Ok(Reply::Refused { why }) => {
                let _ = process.wait();
                return Err(why);
            }
            Ok(other) => {
                let _ = process.kill();
                let _ = process.wait();
                return Err(format!("the spawner answered out of turn: {other:?}"));
            }
            Err(why) => {
                let _ = process.kill();
                let _ = process.wait();
                return Err(why);
            }
        }
        let socket = Arc::new(ours);
        let pending: Pending = Arc::default();
        let alive = Arc::new(AtomicBool::new(true));
        let reader = {
            let (socket, pending, alive) = (socket.clone(), pending.clone(), alive.clone());
            std::thread::Builder::new()
                .name("sandbox-spawner".into())
                .spawn(move || read_replies(&socket, &pending, &alive))
        };
        if let Err(e) = reader {
            let _ = process.kill();
            let _ = process.wait();
            return Err(format!("cannot start the spawner's reader: {e}"));
        }
        Ok(Spawner {
            helper: helper.to_path_buf(),
            masks,
            born: Instant::now(),
            socket,
            next_id: AtomicU64::new(1),
            pending,
            alive,
            process: Mutex::new(process),
        })
    }

    fn usable(&self, helper: &Path, masks: &[PathBuf]) -> bool {
        self.alive.load(Ordering::Relaxed)
            && self.born.elapsed() < MAX_AGE
            && self.helper == helper
            && self.masks == masks
    }

    fn pending_insert(&self, id: u64, tx: Sender<Reply>) {
        lock(&self.pending).insert(id, tx);
    }

    fn pending_remove(&self, id: u64) {
        lock(&self.pending).remove(&id);
    }
}

impl Drop for Spawner {
    /// Only once no command of this spawner is running (each holds it), so it can go at
    /// once: closing the socket ends it, and the kill covers one that does not notice.
    fn drop(&mut self) {
        let _ = rustix::net::shutdown(&*self.socket, Shutdown::Both);
        let process = self.process.get_mut().unwrap_or_else(|p| p.into_inner());
        let _ = process.kill();
        let _ = process.wait();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The spawner's first packet, within `ANSWER_TIMEOUT`.
fn first_answer(socket: &OwnedFd) -> Result<Reply, String> {
    use rustix::net::sockopt::{Timeout, set_socket_timeout};
    let failed = |e: rustix::io::Errno| format!("the spawner did not answer: {e}");
    set_socket_timeout(socket, Timeout::Recv, Some(ANSWER_TIMEOUT)).map_err(failed)?;
    let mut buf = vec![0u8; 64 * 1024];
    let (_, n) = rustix::net::recv(socket, &mut buf[..], RecvFlags::empty()).map_err(failed)?;
    set_socket_timeout(socket, Timeout::Recv, None).map_err(failed)?;
    if n == 0 {
        return Err("the spawner exited without answering".to_string());
    }
    serde_json::from_slice(&buf[..n.min(buf.len())])
        .map_err(|e| format!("the spawner's answer is not one: {e}"))
}

/// Hands each reply to the command waiting for it, until the spawner goes away.
fn read_replies(socket: &OwnedFd, pending: &Pending, alive: &AtomicBool) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match rustix::net::recv(socket, &mut buf[..], RecvFlags::empty()) {
            Ok((_, 0)) => break,
            Ok((_, n)) => n.min(buf.len()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => break,
        };
        let Ok(reply) = serde_json::from_slice::<Reply>(&buf[..n]) else {
            continue;
        };
        let (id, last) = match &reply {
            Reply::Started { id, .. } => (*id, false),
            Reply::Failed { id, .. } | Reply::Exited { id, .. } => (*id, true),
            Reply::Ready | Reply::Refused { .. } => continue,
        };
        let mut waiting = lock(pending);
        let tx = if last {
            waiting.remove(&id)
        } else {
            waiting.get(&id).cloned()
        };
        drop(waiting);
        if let Some(tx) = tx {
            let _ = tx.send(reply);
        }
    }
    alive.store(false, Ordering::Relaxed);
    // Whoever still waits learns that nothing more will come.
    lock(pending).clear();
}

static POOL: Mutex<Vec<Arc<Spawner>>> = Mutex::new(Vec::new());

/// A spawner for these masks: a running one, or a new one.
fn pool_get(helper: &Path, masks: Vec<PathBuf>) -> Result<Arc<Spawner>, LaunchError> {
    let mut pool = lock(&POOL);
    // Retired ones leave the pool; those still running a command live on until it ends.
    pool.retain(|s| s.alive.load(Ordering::Relaxed) && s.born.elapsed() < MAX_AGE);
    if let Some(s) = pool.iter().find(|s| s.usable(helper, &masks)) {
        return Ok(s.clone());
    }
    // Started under the lock: two commands of a new chat at once would otherwise start two.
    let spawner = Arc::new(Spawner::start(helper, masks).map_err(LaunchError::Unsupported)?);
    if pool.len() >= MAX_SPAWNERS {
        pool.remove(0);
    }
    if pool.is_empty() {
        sweep_later();
    }
    pool.push(spawner.clone());
    Ok(spawner)
}

/// Ends retired spawners once nothing uses them, so an idle app keeps no `skald-sandbox`
/// processes around: a thread that looks every `MAX_AGE` while the pool has any.
fn sweep_later() {
    let started = std::thread::Builder::new()
        .name("sandbox-sweeper".into())
        .spawn(|| {
            loop {
                std::thread::sleep(MAX_AGE);
                let mut pool = lock(&POOL);
                pool.retain(|s| s.alive.load(Ordering::Relaxed) && s.born.elapsed() < MAX_AGE);
                if pool.is_empty() {
                    return;
                }
            }
        });
    // Without the thread, retired spawners only go at the next command; nothing breaks.
    let _ = started;
}
