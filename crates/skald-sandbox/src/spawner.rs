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

use crate::Policy;
use rustix::net::sockopt::{Timeout, set_socket_timeout};
use rustix::net::{
    AddressFamily, RecvFlags, SendAncillaryBuffer, SendAncillaryMessage, SendFlags, Shutdown,
    SocketFlags, SocketType,
};
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::io::IoSlice;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The largest request, in bytes: one packet. A longer one goes through the helper.
pub(crate) const MAX_REQUEST: usize = 128 * 1024;
/// How long a spawner serves new commands after it started (see the module's comment).
const MAX_AGE: Duration = Duration::from_secs(30);
/// Spawners kept at once; the oldest goes first. A chat has one; a few chats share a machine.
const MAX_SPAWNERS: usize = 4;

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
    /// Its private temporary folder (writable, named by [`crate::TMP_VARS`]), removed after
    /// it ends.
    pub tmp: PathBuf,
    requested: Requested,
}

impl Launched {
    /// Blocks until the command exits; an error if the spawner went away first. Dropping a
    /// `Launched` instead tells the spawner nobody listens: it kills the command's group.
    pub fn wait(self) -> Result<ExitStatus, String> {
        let answers = &self.requested.answers;
        // Blocking from here on: as long as the command runs.
        let _ = rustix::io::ioctl_fionbio(answers, false);
        let _ = set_socket_timeout(answers, Timeout::Recv, None);
        loop {
            match receive(answers.as_fd()) {
                Ok(Answer::Exited(status)) => return Ok(status),
                Ok(Answer::Ended) => {
                    return Err("the sandbox's spawner stopped while the command ran".into());
                }
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("the sandbox's spawner could not be heard: {e}")),
            }
        }
    }
}

/// Starts `launch` confined to its policy, through the spawner for its masks (started if
/// there is none), with a private temporary folder of its own, and waits (at most
/// `ANSWER_TIMEOUT`) until it runs. `helper` is the `skald-sandbox` binary.
pub fn launch(helper: &Path, launch: Launch) -> Result<Launched, LaunchError> {
    let requested = match try_request(helper, launch, true) {
        Ok(r) => r?,
        Err(_) => {
            return Err(LaunchError::Unsupported(
                "no spawner was free to take the command".to_string(),
            ));
        }
    };
    requested.started()
}

/// How long a spawner may take to say whether a command started.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// A request the spawner has; its answers come on [`Requested::answers`].
pub struct Requested {
    answers: OwnedFd,
    spawner: Arc<Spawner>,
}

impl Requested {
    /// The socket the answers about this command come on, non-blocking: wait until it is
    /// readable, then [`receive`] from it.
    pub fn answers(&self) -> BorrowedFd<'_> {
        self.answers.as_fd()
    }

    /// Blocks (at most `ANSWER_TIMEOUT`) until the command started or did not. This makes
    /// the answer socket blocking, for every copy of it: not for a socket also given to an
    /// async runtime.
    pub fn started(self) -> Result<Launched, LaunchError> {
        let unheard = |e: rustix::io::Errno| {
            LaunchError::Refused(format!("the sandbox's spawner could not be heard: {e}"))
        };
        rustix::io::ioctl_fionbio(&self.answers, false).map_err(unheard)?;
        set_socket_timeout(&self.answers, Timeout::Recv, Some(ANSWER_TIMEOUT)).map_err(unheard)?;
        loop {
            match receive(self.answers.as_fd()) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    self.gave_up();
                    return Err(LaunchError::Refused(format!(
                        "the sandbox's spawner did not confirm the command started within {} s",
                        ANSWER_TIMEOUT.as_secs()
                    )));
                }
                Err(e) => {
                    return Err(LaunchError::Refused(format!(
                        "the sandbox's spawner could not be heard: {e}"
                    )));
                }
                Ok(answer) => return self.on_first(answer),
            }
        }
    }

    /// What the first answer means: the command runs, or why it does not.
    pub fn on_first(self, answer: Answer) -> Result<Launched, LaunchError> {
        if !matches!(answer, Answer::Started { .. }) {
            // The spawner may not have kept the environment this request carried (one it
            // could not read): the next request carries it again.
            *lock(&self.spawner.env) = None;
        }
        match answer {
            Answer::Started { pid, tmp } => Ok(Launched {
                pid,
                tmp,
                requested: self,
            }),
            Answer::Failed(why) => Err(LaunchError::Refused(why)),
            Answer::Ended => Err(LaunchError::Refused(
                "the sandbox's spawner stopped before the command started".to_string(),
            )),
            Answer::Exited(_) => Err(LaunchError::Refused(
                "the sandbox's spawner answered out of turn".to_string(),
            )),
        }
    }

    /// The caller stopped waiting for the first answer: this spawner serves no more.
    pub fn gave_up(&self) {
        self.spawner.alive.store(false, Ordering::Relaxed);
    }
}

impl Launched {
    /// The socket the command's end is told on (see [`Requested::answers`]).
    pub fn answers(&self) -> BorrowedFd<'_> {
        self.requested.answers()
    }
}

/// One answer about a command.
#[derive(Debug)]
pub enum Answer {
    /// It runs as `pid` (its group's id too), with `tmp` as its temporary folder.
    Started { pid: u32, tmp: PathBuf },
    /// It did not start, and why.
    Failed(String),
    /// It ended so.
    Exited(ExitStatus),
    /// The spawner is gone: nothing more will come.
    Ended,
}

/// Reads one answer from `answers` (see [`Requested::answers`]); `WouldBlock` if there is
/// none yet. A packet that is not an answer is an error.
pub fn receive(answers: BorrowedFd<'_>) -> std::io::Result<Answer> {
    let mut buf = [0u8; ANSWER_MAX];
    let (_, n) = rustix::net::recv(answers, &mut buf[..], RecvFlags::empty())
        .map_err(std::io::Error::from)?;
    answer_from(&buf[..n.min(buf.len())])
}

/// The longest answer packet.
pub const ANSWER_MAX: usize = 8 * 1024;

/// The answer in one packet read from an answer socket; the empty read that means the
/// spawner closed its end (it never sends an empty packet) is [`Answer::Ended`].
pub fn answer_from(packet: &[u8]) -> std::io::Result<Answer> {
    if packet.is_empty() {
        return Ok(Answer::Ended);
    }
    let reply: Reply = serde_json::from_slice(packet)
        .map_err(|e| std::io::Error::other(format!("the spawner's answer is not one: {e}")))?;
    Ok(match reply {
        Reply::Started { pid, tmp } => Answer::Started { pid, tmp },
        Reply::Failed { why } | Reply::Refused { why } => Answer::Failed(why),
        Reply::Exited { status } => Answer::Exited(ExitStatus::from_raw(status)),
        Reply::Ready => Answer::Failed("the sandbox's spawner answered out of turn".to_string()),
    })
}

/// Hands `launch` to the spawner for its masks and returns without waiting for an answer.
/// With `may_start` false it does not wait for anything: when no spawner is running for
/// these masks, or another caller is starting one, `launch` comes back (`Err`) untouched
/// and nothing ran. With `may_start` a spawner is started if need be, which takes a
/// moment (at most `ANSWER_TIMEOUT`).
pub fn try_request(
    helper: &Path,
    launch: Launch,
    may_start: bool,
) -> Result<Result<Requested, LaunchError>, Box<Launch>> {
    // Only what exists is mounted over, so the key is what exists now: a hidden folder
    // made after a spawner started (a new `~/.aws`) is a new key, hence a new spawner.
    let masks = crate::presence::existing(&launch.policy.masked, &launch.policy.writable);
    if let Err(e) = Request::check(&launch) {
        return Ok(Err(e));
    }
    let kept = Kept::of(&launch);
    let in_place = InPlace::of(&launch.policy);
    let spawner = match pool_get(helper, masks, kept, in_place, may_start) {
        Some(Ok(s)) => s,
        Some(Err(e)) => return Ok(Err(e)),
        None => return Err(Box::new(launch)),
    };
    Ok(send_request(&spawner, launch, may_start).map(|answers| Requested { answers, spawner }))
}

/// Sends one request with the command's pipes and a new answer socket, whose other end
/// only the spawner then holds. The environment goes only when it is not the one sent
/// before on this socket (the spawner keeps the last), under a lock held until the packet
/// is sent, so that "the one before" is the same on both sides.
/// Without `may_wait` the send does not wait for room in the socket (a caller on an async
/// thread): a spawner that has not taken its earlier requests makes this one `Unsupported`.
fn send_request(spawner: &Spawner, launch: Launch, may_wait: bool) -> Result<OwnedFd, LaunchError> {
    let mut sent_env = lock(&spawner.env);
    let new_env = sent_env.as_deref() != Some(&launch.env[..]);
    let request = serde_json::to_vec(&Request::from_launch(&launch, new_env)?)
        .map_err(|e| LaunchError::Unsupported(format!("cannot write the request: {e}")))?;
    if request.len() > MAX_REQUEST {
        return Err(LaunchError::Unsupported(
            "the command is too long for the spawner".to_string(),
        ));
    }
    let (answers, theirs) = answer_pair().map_err(|e| {
        LaunchError::Unsupported(format!("cannot make the command's answer socket: {e}"))
    })?;
    let sent = {
        let fds = [launch.stdout.as_fd(), launch.stderr.as_fd(), theirs.as_fd()];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(3))];
        let mut control = SendAncillaryBuffer::new(&mut space);
        control.push(SendAncillaryMessage::ScmRights(&fds));
        let flags = if may_wait {
            SendFlags::NOSIGNAL
        } else {
            SendFlags::NOSIGNAL | SendFlags::DONTWAIT
        };
        rustix::net::sendmsg(
            &spawner.socket,
            &[IoSlice::new(&request)],
            &mut control,
            flags,
        )
    };
    // Our copies go now: the caller sees the end of the output when the command's copies
    // are gone, and the end of the answers when the spawner's are.
    let Launch { env, .. } = launch;
    drop(theirs);
    match sent {
        Ok(_) => {
            if new_env {
                *sent_env = Some(env);
            }
            Ok(answers)
        }
        Err(rustix::io::Errno::AGAIN) => Err(LaunchError::Unsupported(
            "the spawner is behind with its requests".to_string(),
        )),
        Err(e) => {
            spawner.alive.store(false, Ordering::Relaxed);
            Err(LaunchError::Unsupported(format!(
                "the spawner did not take the command: {e}"
            )))
        }
    }
}

/// Descriptors made while a command runs, for the next one: Skald's thread waits then
/// anyway, and making them took a share of a short command's start.
struct Ahead {
    pipes: Vec<(std::io::PipeReader, std::io::PipeWriter)>,
    answers: Option<(OwnedFd, OwnedFd)>,
}

static AHEAD: Mutex<Ahead> = Mutex::new(Ahead {
    pipes: Vec::new(),
    answers: None,
});

/// A pipe for a command's output (made ahead by [`make_ahead`], or now).
pub fn pipe() -> std::io::Result<(std::io::PipeReader, std::io::PipeWriter)> {
    match lock(&AHEAD).pipes.pop() {
        Some(p) => Ok(p),
        None => std::io::pipe(),
    }
}

/// A command's answer socket pair (made ahead, or now): ours, and the spawner's.
fn answer_pair() -> rustix::io::Result<(OwnedFd, OwnedFd)> {
    match lock(&AHEAD).answers.take() {
        Some(pair) => Ok(pair),
        None => new_answer_pair(),
    }
}

fn new_answer_pair() -> rustix::io::Result<(OwnedFd, OwnedFd)> {
    rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
        None,
    )
}

/// Makes the next command's two output pipes and answer socket, if they are not made
/// yet; for a caller that has sent its request and waits. A failure here is left to the
/// next command, which then makes them itself and says why if it cannot.
pub fn make_ahead() {
    let (pipes, answers) = {
        let ahead = lock(&AHEAD);
        (
            2usize.saturating_sub(ahead.pipes.len()),
            ahead.answers.is_none(),
        )
    };
    let made: Vec<_> = (0..pipes).filter_map(|_| std::io::pipe().ok()).collect();
    let pair = if answers {
        new_answer_pair().ok()
    } else {
        None
    };
    let mut ahead = lock(&AHEAD);
    for p in made {
        if ahead.pipes.len() < 2 {
            ahead.pipes.push(p);
        }
    }
    if ahead.answers.is_none() {
        ahead.answers = pair;
    }
}

/// What Skald asks the spawner for (one packet, with the command's stdout and stderr and
/// the socket for the answers about it).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Request {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: String,
    /// The command's whole environment, or `None`: the one of the request before on this
    /// socket (see [`send_request`]).
    pub env: Option<Vec<(String, String)>>,
    pub writable: Vec<PathBuf>,
    pub network: bool,
}

impl Request {
    /// `Unsupported` if anything of `launch` is not UTF-8 (the spawner reads JSON).
    fn check(launch: &Launch) -> Result<(), LaunchError> {
        let texts = [launch.program.as_os_str(), launch.cwd.as_os_str()]
            .into_iter()
            .chain(launch.args.iter().map(|a| a.as_os_str()))
            .chain(
                launch
                    .env
                    .iter()
                    .flat_map(|(k, v)| [k.as_os_str(), v.as_os_str()]),
            )
            .chain(launch.policy.writable.iter().map(|p| p.as_os_str()));
        for s in texts {
            if s.to_str().is_none() {
                return Err(LaunchError::Unsupported(format!(
                    "{} is not UTF-8",
                    s.to_string_lossy()
                )));
            }
        }
        Ok(())
    }

    /// The request for `launch` (checked by [`Request::check`]), with its environment or
    /// without (`with_env`).
    fn from_launch(launch: &Launch, with_env: bool) -> Result<Request, LaunchError> {
        let text = |s: &std::ffi::OsStr| {
            s.to_str().map(str::to_string).ok_or_else(|| {
                LaunchError::Unsupported(format!("{} is not UTF-8", s.to_string_lossy()))
            })
        };
        let env = if with_env {
            let mut env = Vec::with_capacity(launch.env.len());
            for (k, v) in &launch.env {
                env.push((text(k)?, text(v)?));
            }
            Some(env)
        } else {
            None
        };
        Ok(Request {
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

/// What the spawner says, one packet each: `Ready` or `Refused` on its own socket when it
/// starts, the others on each command's answer socket.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "reply")]
pub(crate) enum Reply {
    /// The namespace and masks are in place.
    Ready,
    /// It could not confine itself; it exits.
    Refused { why: String },
    /// The command runs as `pid`, with `tmp` as its temporary folder.
    Started { pid: u32, tmp: PathBuf },
    /// The command did not start.
    Failed { why: String },
    /// The command ended; `status` is the raw wait status.
    Exited { status: i32 },
}

/// The folders a command works in that its spawner's private `/tmp` and `/var/tmp` must
/// show (`crate::seen_in_private_tmp`): its writable folders and working directory there,
/// each with the identity of the folder it names now. The spawner binds the folder itself,
/// so a folder replaced since (the same name, another folder) is another key, hence
/// another spawner, as a new mask is.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Kept(Vec<(PathBuf, Option<(u64, u64)>)>);

impl Kept {
    fn of(launch: &Launch) -> Kept {
        use std::os::unix::fs::MetadataExt;
        let folders = launch
            .policy
            .writable
            .iter()
            .chain(std::iter::once(&launch.cwd))
            .map(PathBuf::as_path);
        Kept(
            crate::seen_in_private_tmp(folders)
                .into_iter()
                .map(|p| {
                    let id = std::fs::metadata(&p).ok().map(|m| (m.dev(), m.ino()));
                    (p, id)
                })
                .collect(),
        )
    }
}

/// What a spawner binds in place when it starts (`Policy::pinned`, `Policy::read_only`):
/// each path, whether it is read-only, and the identity of what is there now. Like a mask,
/// the bind is of the moment the spawner started, so a path made, removed or replaced
/// since (another `.git`, a new `.skald`) is another key, hence another spawner.
#[derive(Debug, Clone, PartialEq, Eq)]
struct InPlace(Vec<(PathBuf, bool, Option<FileId>)>);

/// A file's device and inode.
type FileId = (u64, u64);

impl InPlace {
    fn of(policy: &Policy) -> InPlace {
        use std::os::unix::fs::MetadataExt;
        let id = |p: &Path| {
            std::fs::symlink_metadata(p)
                .ok()
                .map(|m| (m.dev(), m.ino()))
        };
        InPlace(
            policy
                .pinned
                .iter()
                .map(|p| (p.clone(), false, id(p)))
                .chain(policy.read_only.iter().map(|p| (p.clone(), true, id(p))))
                .collect(),
        )
    }

    fn paths(&self, read_only: bool) -> Vec<PathBuf> {
        self.0
            .iter()
            .filter(|(_, ro, _)| *ro == read_only)
            .map(|(p, _, _)| p.clone())
            .collect()
    }
}

/// One `skald-sandbox --serve` process.
struct Spawner {
    helper: PathBuf,
    masks: Vec<PathBuf>,
    kept: Kept,
    in_place: InPlace,
    born: Instant,
    socket: OwnedFd,
    /// The environment last sent on `socket` (see [`send_request`]).
    env: Mutex<Option<Vec<(OsString, OsString)>>>,
    alive: AtomicBool,
    process: Mutex<Child>,
    /// Where its commands' temporary folders are made; removed with whatever a killed
    /// command left there once the spawner is gone.
    _tmp: tempfile::TempDir,
}

impl Spawner {
    fn start(
        helper: &Path,
        masks: Vec<PathBuf>,
        kept: Kept,
        in_place: InPlace,
    ) -> Result<Spawner, String> {
        let policy = serde_json::to_string(&Policy {
            writable: Vec::new(),
            masked: masks.clone(),
            network: false,
            read_only: in_place.paths(true),
            pinned: in_place.paths(false),
        })
        .map_err(|e| format!("cannot write the masks down: {e}"))?;
        sweep_stale_folders();
        // Named with this process's id, so that a later Skald can tell the folder of one
        // that was killed outright (and could remove nothing) from a running one's.
        let tmp = tempfile::Builder::new()
            .prefix(&format!("{TMP_PREFIX}{}-", std::process::id()))
            .tempdir()
            .map_err(|e| {
                format!("cannot make a folder for the commands' temporary folders: {e}")
            })?;
        let base = std::fs::canonicalize(tmp.path()).unwrap_or_else(|_| tmp.path().to_path_buf());
        // The commands' temporary folders are made in `base`, so it stays visible too.
        let mut seen: Vec<&Path> = kept.0.iter().map(|(p, _)| p.as_path()).collect();
        seen.push(&base);
        let seen = serde_json::to_string(&seen)
            .map_err(|e| format!("cannot write the kept folders down: {e}"))?;
        let (ours, theirs) = rustix::net::socketpair(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC,
            None,
        )
        .map_err(|e| format!("cannot make the spawner's socket: {e}"))?;
        let mut command = std::process::Command::new(helper);
        command
            .arg("--serve")
            .arg(&policy)
            .arg(&base)
            .arg(&seen)
            // Its environment is not Skald's: each command brings its own.
            .env_clear()
            .stdin(Stdio::from(theirs))
            .stdout(Stdio::null())
            // It makes a session of its own (`zygote::serve`), so Ctrl-C in a terminal goes to
            // Skald, which then closes the socket, and no command has a controlling terminal.
            .stderr(Stdio::null());
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
        Ok(Spawner {
            helper: helper.to_path_buf(),
            masks,
            kept,
            in_place,
            born: Instant::now(),
            socket: ours,
            env: Mutex::new(None),
            alive: AtomicBool::new(true),
            process: Mutex::new(process),
            _tmp: tmp,
        })
    }

    /// Still serving: not retired, and its process has not exited.
    fn serving(&self) -> bool {
        self.alive.load(Ordering::Relaxed)
            && self.born.elapsed() < MAX_AGE
            && matches!(lock(&self.process).try_wait(), Ok(None))
    }
}

impl Drop for Spawner {
    /// Only once no command of this spawner is running (each holds it), so it can go at
    /// once: closing the socket ends it, and the kill covers one that does not notice.
    fn drop(&mut self) {
        let _ = rustix::net::shutdown(&self.socket, Shutdown::Both);
        let process = self.process.get_mut().unwrap_or_else(|p| p.into_inner());
        let _ = process.kill();
        let _ = process.wait();
    }
}

/// The lock's data even if a thread panicked holding it: what these locks guard (lists,
/// slots) is never left half-changed.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The spawner's first packet, within `ANSWER_TIMEOUT`.
fn first_answer(socket: &OwnedFd) -> Result<Reply, String> {
    let failed = |e: rustix::io::Errno| format!("the spawner did not answer: {e}");
    set_socket_timeout(socket, Timeout::Recv, Some(ANSWER_TIMEOUT)).map_err(failed)?;
    let mut buf = vec![0u8; 64 * 1024];
    let (_, n) = rustix::net::recv(socket, &mut buf[..], RecvFlags::empty()).map_err(failed)?;
    if n == 0 {
        return Err("the spawner exited without answering".to_string());
    }
    serde_json::from_slice(&buf[..n.min(buf.len())])
        .map_err(|e| format!("the spawner's answer is not one: {e}"))
}

/// How the folders holding the commands' private temporary folders are named.
const TMP_PREFIX: &str = "skald-cmds-";

/// Removes, once per process and in the background, the commands' folders that earlier
/// Skald processes left in the temporary folder: one killed outright removes nothing, and
/// what its commands left there (a repository a `.git` file points to, say) would stay.
/// A folder goes when the process named in it is gone; one named the old way, without a
/// process id, when it is a day old. Only the user's own.
fn sweep_stale_folders() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = std::thread::Builder::new()
            .name("sandbox-tmp-sweep".into())
            .spawn(|| sweep_stale_in(&std::env::temp_dir()));
    });
}

fn sweep_stale_in(dir: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let me = rustix::process::geteuid().as_raw();
    let day = std::time::Duration::from_secs(24 * 3600);
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(TMP_PREFIX)) else {
            continue;
        };
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != me {
            continue;
        }
        let stale = match rest
            .split_once('-')
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        {
            Some(pid) => pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists(),
            None => meta
                .modified()
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > day),
        };
        if stale {
            crate::zygote::remove(&entry.path());
        }
    }
}

static POOL: Mutex<Vec<Arc<Spawner>>> = Mutex::new(Vec::new());

/// A spawner for these masks and kept folders: a running one, or (`may_start`) a new one. `None`: there is
/// none and `may_start` is false, or another caller holds the pool (starting one).
fn pool_get(
    helper: &Path,
    masks: Vec<PathBuf>,
    kept: Kept,
    in_place: InPlace,
    may_start: bool,
) -> Option<Result<Arc<Spawner>, LaunchError>> {
    let mut pool = if may_start {
        lock(&POOL)
    } else {
        match POOL.try_lock() {
            Ok(p) => p,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        }
    };
    // Retired ones leave the pool; those still running a command live on until it ends.
    pool.retain(|s| s.serving());
    if let Some(s) = pool.iter().find(|s| {
        s.helper == helper && s.masks == masks && s.kept == kept && s.in_place == in_place
    }) {
        return Some(Ok(s.clone()));
    }
    if !may_start {
        return None;
    }
    // Started under the lock: two commands of a new chat at once would otherwise start two.
    let spawner = match Spawner::start(helper, masks, kept, in_place) {
        Ok(s) => Arc::new(s),
        Err(why) => return Some(Err(LaunchError::Unsupported(why))),
    };
    if pool.len() >= MAX_SPAWNERS {
        pool.remove(0);
    }
    if pool.is_empty() {
        sweep_later();
    }
    pool.push(spawner.clone());
    Some(Ok(spawner))
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
                pool.retain(|s| s.serving());
                if pool.is_empty() {
                    return;
                }
            }
        });
    // Without the thread, retired spawners only go at the next command; nothing breaks.
    let _ = started;
}

#[cfg(test)]
mod sweep_tests {
    use super::*;

    /// The folder of a Skald that is gone goes, with what a command left in it, even
    /// made unreadable; a running process's, a fresh old-style one and others' stay.
    #[test]
    fn only_the_folders_of_gone_processes_are_swept() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let gone = dir.join(format!("{TMP_PREFIX}4194999-abc"));
        std::fs::create_dir_all(gone.join("1/r/.git/locked")).unwrap();
        std::fs::set_permissions(gone.join("1/r"), std::fs::Permissions::from_mode(0o000)).unwrap();
        let kept = [
            dir.join(format!("{TMP_PREFIX}{}-mine", std::process::id())),
            dir.join(format!("{TMP_PREFIX}1-init")),
            dir.join(format!("{TMP_PREFIX}Ab12Cd")),
            dir.join("someone-else"),
        ];
        for k in &kept {
            std::fs::create_dir(k).unwrap();
        }
        sweep_stale_in(dir);
        assert!(!gone.exists());
        for k in &kept {
            assert!(k.exists(), "{}", k.display());
        }
    }
}
