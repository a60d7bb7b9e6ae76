//! `skald-sandbox --serve`: the spawner's side (Linux). See `spawner.rs` for why it exists.
//!
//! Started by Skald with a Unix `SOCK_SEQPACKET` socket as its standard input, it enters the
//! namespaces and mounts the masks once (steps 1–2 of `confine.rs`), says it is ready, and
//! then takes one request per packet. Each request brings the command's stdout and stderr
//! and a socket of its own for the answers (file descriptors, `SCM_RIGHTS`), so output goes
//! straight to Skald and each command's answers straight to whoever waits for it.
//!
//! A command runs from a *worker*: a thread that made the command's private temporary
//! folder, restricted itself with Landlock and seccomp (steps 3–4) to the command's
//! writable folders plus that folder, and then starts the command, which inherits the
//! thread's restrictions. Restricting a thread cannot be undone, so a worker serves one
//! command. To keep that work out of the command's way, the next worker is readied while a
//! command runs, for the same writable folders and network setting (a chat's commands share
//! both), and it is that worker which reads the next request: if it asks for what the
//! worker was made for, it starts at once, with no thread made or woken in between. A
//! request for other folders, or for folders replaced since (the same name, another
//! directory), is handed to the main thread, which starts a fresh worker for it. Only the
//! main thread makes workers: a thread made by a restricted one would inherit its rules.
//!
//! The process is made non-dumpable: a command shares a Landlock domain with the thread that
//! started it, and without this it could read the spawner's memory (other commands' lines
//! and environments) through that thread's `/proc` entries.

use crate::spawner::{MAX_REQUEST, Reply, Request};
use crate::{Policy, TMP_VARS};
use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendFlags};
use std::io::IoSliceMut;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};

/// One command to start: the request and the descriptors that came with it.
struct Job {
    request: Request,
    stdout: OwnedFd,
    stderr: OwnedFd,
    answers: OwnedFd,
}

/// What a worker tells the main thread.
enum Event {
    /// It took a command for these folders and network setting: make the next reader.
    Took {
        writable: Vec<PathBuf>,
        network: bool,
    },
    /// It read a command it was not made for: start that one afresh, and a new reader.
    Unfit(Job),
    /// Skald closed its end: the spawner exits.
    Closed,
    /// The socket failed: the spawner exits with this.
    Broken(String),
}

/// What the main thread and every worker share.
#[derive(Clone)]
struct Shared {
    socket: Arc<OwnedFd>,
    keeper: Sender<Chore>,
    events: Sender<Event>,
    tmp_base: PathBuf,
    count: Arc<AtomicU64>,
}

impl Shared {
    /// A new private temporary folder's name (made by the worker that gets it).
    fn next_tmp(&self) -> PathBuf {
        let n = self.count.fetch_add(1, Ordering::Relaxed);
        self.tmp_base.join(n.to_string())
    }

    /// Starts a thread for `job` alone. A failure is the command's, told to Skald.
    fn fresh(&self, job: Job) {
        let (shared, tmp) = (self.clone(), self.next_tmp());
        let (jobs, next) = std::sync::mpsc::channel::<Job>();
        let started = std::thread::Builder::new()
            .name("command".into())
            .spawn(move || {
                let chore = match next.recv() {
                    Ok(job) => {
                        let ready = restrict(&job.request.writable, job.request.network, &tmp);
                        run(job, ready, tmp)
                    }
                    Err(_) => Chore::Remove(tmp),
                };
                let _ = shared.keeper.send(chore);
            });
        let job = match started {
            // A live thread holds the receiver, so this send cannot fail.
            Ok(_) => jobs.send(job).err().map(|e| e.0),
            Err(_) => Some(job),
        };
        if let Some(job) = job {
            let why = "cannot start a thread for the command".to_string();
            send(job.answers.as_fd(), &Reply::Failed { why });
        }
    }

    /// Starts the next reader: a thread restricted for `writable` and `network` (with a
    /// temporary folder of its own) that reads the next request itself and, if it asks
    /// for the same, runs it at once. False if no thread could be started.
    fn reader(&self, writable: Vec<PathBuf>, network: bool) -> bool {
        let (shared, tmp) = (self.clone(), self.next_tmp());
        // Taken now: a folder replaced after this (the same name, another directory) makes
        // the worker unfit, since its Landlock rules hold the old one.
        let known = identities(&writable);
        std::thread::Builder::new()
            .name("command".into())
            .spawn(move || {
                let ready = restrict(&writable, network, &tmp);
                // Whatever happens to this thread, the main thread hears of it (a panic
                // unwinds through the guard): it waits for this reader's word.
                let mut told = Told::new(&shared.events);
                let event = loop {
                    match receive(&shared.socket) {
                        Received::Nothing => continue,
                        Received::Closed => break Event::Closed,
                        Received::Broken(why) => break Event::Broken(why),
                        Received::Job(job) => {
                            let fits = ready.is_ok()
                                && job.request.network == network
                                && job.request.writable == writable
                                && identities(&job.request.writable) == known;
                            if !fits {
                                break Event::Unfit(job);
                            }
                            told.send(Event::Took { writable, network });
                            let _ = shared.keeper.send(run(job, ready, tmp));
                            return;
                        }
                    }
                };
                told.send(event);
                let _ = shared.keeper.send(Chore::Remove(tmp));
            })
            .is_ok()
    }
}

/// Sends a reader's one event, or `Broken` if the reader ends without having sent it.
struct Told<'a> {
    events: &'a Sender<Event>,
    sent: bool,
}

impl<'a> Told<'a> {
    fn new(events: &'a Sender<Event>) -> Told<'a> {
        Told {
            events,
            sent: false,
        }
    }

    fn send(&mut self, event: Event) {
        self.sent = true;
        let _ = self.events.send(event);
    }
}

impl Drop for Told<'_> {
    fn drop(&mut self) {
        if !self.sent {
            let why = "a reader of the spawner ended unexpectedly".to_string();
            let _ = self.events.send(Event::Broken(why));
        }
    }
}

/// Work for the keeper, a thread outside every command's restriction.
enum Chore {
    /// A temporary folder whose command is done (or never came).
    Remove(PathBuf),
    /// A command that started: wait for it from outside its restriction (see `watch`).
    Watch(Started),
}

/// A started command, handed from its worker to the keeper.
struct Started {
    child: std::process::Child,
    answers: OwnedFd,
    tmp: PathBuf,
}

/// Makes the private temporary folder `tmp`, then restricts the calling thread to
/// `writable` and `tmp`, with or without the network.
fn restrict(writable: &[PathBuf], network: bool, tmp: &Path) -> Result<(), String> {
    // Made before the restriction, which forbids making it beside the others.
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(tmp)
        .map_err(|e| {
            format!(
                "cannot make the command's temporary folder {}: {e}",
                tmp.display()
            )
        })?;
    let mut all = writable.to_vec();
    all.push(tmp.to_path_buf());
    let policy = Policy {
        writable: all,
        masked: Vec::new(),
        network,
    };
    crate::confine::restrict(&policy)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn identities(paths: &[PathBuf]) -> Vec<Option<(u64, u64)>> {
    paths
        .iter()
        .map(|p| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino())))
        .collect()
}

/// One packet from Skald.
enum Received {
    Job(Job),
    /// A packet with no command in it (answered if it could be).
    Nothing,
    Closed,
    Broken(String),
}

fn receive(socket: &OwnedFd) -> Received {
    let mut buf = vec![0u8; MAX_REQUEST];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(3))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let received = rustix::net::recvmsg(
        socket,
        &mut [IoSliceMut::new(&mut buf)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    );
    let n = match received {
        Ok(r) if r.bytes == 0 => return Received::Closed,
        Ok(r) => r.bytes,
        Err(rustix::io::Errno::INTR) => return Received::Nothing,
        Err(e) => return Received::Broken(format!("reading a request failed: {e}")),
    };
    let mut fds: Vec<OwnedFd> = Vec::new();
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(rights) = message {
            fds.extend(rights);
        }
    }
    // Without its answer socket there is nobody to answer; Skald times the request out.
    let Ok([stdout, stderr, answers]) = <[OwnedFd; 3]>::try_from(fds) else {
        return Received::Nothing;
    };
    match serde_json::from_slice(&buf[..n.min(buf.len())]) {
        Ok(request) => Received::Job(Job {
            request,
            stdout,
            stderr,
            answers,
        }),
        Err(e) => {
            let why = format!("the spawner could not read the request: {e}");
            send(answers.as_fd(), &Reply::Failed { why });
            Received::Nothing
        }
    }
}

/// Serves requests on standard input until Skald closes it; each command's private
/// temporary folder is made in `tmp_base`. Errors before "ready" are reported on the socket
/// too, so Skald can say why; the caller exits 125 with them.
pub fn serve(policy: &Policy, tmp_base: &Path) -> Result<(), String> {
    let socket: OwnedFd = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| format!("cannot use the request socket: {e}"))?;
    let ready = crate::confine::enter(policy)
        .map_err(|e| e.to_string())
        .and_then(|()| {
            rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
                .map_err(|e| format!("cannot make the spawner non-dumpable: {e}"))
        })
        .and_then(|()| start_keeper());
    let keeper = match ready {
        Ok(j) => j,
        Err(why) => {
            send(socket.as_fd(), &Reply::Refused { why: why.clone() });
            return Err(why);
        }
    };
    send(socket.as_fd(), &Reply::Ready);
    let (events, heard) = std::sync::mpsc::channel();
    let shared = Shared {
        socket: Arc::new(socket),
        keeper,
        events,
        tmp_base: tmp_base.to_path_buf(),
        count: Arc::new(AtomicU64::new(1)),
    };
    // The main thread reads requests itself only until a reader is waiting (the first
    // command, or when no thread could be started); then it follows the readers' events.
    loop {
        let job = match receive(&shared.socket) {
            Received::Job(job) => job,
            Received::Nothing => continue,
            Received::Closed => return Ok(()),
            Received::Broken(why) => return Err(why),
        };
        let (writable, network) = (job.request.writable.clone(), job.request.network);
        shared.fresh(job);
        if !shared.reader(writable, network) {
            continue;
        }
        loop {
            let reading = match heard.recv() {
                Ok(Event::Took { writable, network }) => shared.reader(writable, network),
                Ok(Event::Unfit(job)) => {
                    let (writable, network) = (job.request.writable.clone(), job.request.network);
                    shared.fresh(job);
                    shared.reader(writable, network)
                }
                Ok(Event::Closed) => return Ok(()),
                Ok(Event::Broken(why)) => return Err(why),
                // The main thread holds a sender, so this does not happen.
                Err(_) => return Ok(()),
            };
            if !reading {
                break;
            }
        }
    }
}

/// The keeper: a thread outside every command's restriction that removes the commands'
/// temporary folders and starts a watcher for each command that started.
fn start_keeper() -> Result<Sender<Chore>, String> {
    let (tx, rx): (Sender<Chore>, Receiver<Chore>) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("keeper".into())
        .spawn(move || {
            for chore in rx {
                match chore {
                    Chore::Remove(dir) => remove(&dir),
                    Chore::Watch(started) => {
                        // Made by this unrestricted thread, the watcher is unrestricted too.
                        let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(started)));
                        let theirs = slot.clone();
                        let watcher =
                            std::thread::Builder::new()
                                .name("watcher".into())
                                .spawn(move || {
                                    if let Some(s) = take(&theirs) {
                                        watch(s);
                                    }
                                });
                        if watcher.is_err()
                            && let Some(mut s) = take(&slot)
                        {
                            // Nobody could watch it: it is stopped rather than left unseen.
                            kill_group(s.child.id());
                            let status = s.child.wait().map(|st| st.into_raw());
                            let status = status.unwrap_or(libc::SIGKILL);
                            send(s.answers.as_fd(), &Reply::Exited { status });
                            remove(&s.tmp);
                        }
                    }
                }
            }
        })
        .map_err(|e| format!("cannot start the spawner's keeper: {e}"))?;
    Ok(tx)
}

fn take(slot: &std::sync::Mutex<Option<Started>>) -> Option<Started> {
    slot.lock().unwrap_or_else(|p| p.into_inner()).take()
}

/// Removes a command's temporary folder, even one whose subfolders it made unreadable.
fn remove(dir: &Path) {
    // remove_dir_all does not follow the links a command may have left there.
    if std::fs::remove_dir_all(dir).is_ok() || !dir.exists() {
        return;
    }
    open_up(dir, 0);
    let _ = std::fs::remove_dir_all(dir);
}

/// Gives the owner every right on `dir` and the folders under it (not through links).
fn open_up(dir: &Path, depth: usize) {
    use std::os::unix::fs::PermissionsExt;
    if depth > 64 {
        return;
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            open_up(&entry.path(), depth + 1);
        }
    }
}

/// Waits for a started command, outside its Landlock domain: a command can signal the
/// threads of its own domain, so the worker that started it hands it over and ends, and
/// no thread of the spawner stays within its reach. If Skald stops listening (it gave up
/// on the command, was stopped or died), the command's group is killed, so no command runs
/// that nobody watches.
fn watch(mut started: Started) {
    use rustix::event::{PollFd, PollFlags, poll};
    let pid = started.child.id();
    let pidfd = rustix::process::Pid::from_raw(pid as i32)
        .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok());
    if let Some(pidfd) = pidfd {
        loop {
            let mut fds = [
                PollFd::new(&pidfd, PollFlags::IN),
                PollFd::new(&started.answers, PollFlags::IN),
            ];
            match poll(&mut fds, None) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => break,
            }
            if !fds[0].revents().is_empty() {
                break; // It exited.
            }
            if !fds[1].revents().is_empty() {
                // Skald never writes on this socket: readiness is its end closing.
                kill_group(pid);
                break;
            }
        }
    }
    let status = match started.child.wait() {
        Ok(s) => s.into_raw(),
        // Only if the child was already reaped, which nothing here does; report it killed.
        Err(_) => libc::SIGKILL,
    };
    send(started.answers.as_fd(), &Reply::Exited { status });
    remove(&started.tmp);
}

fn kill_group(pid: u32) {
    if let Some(p) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process_group(p, rustix::process::Signal::KILL);
    }
}

/// Whether Skald closed its end of `answers` (it gave up on the command before it started).
fn hung_up(answers: BorrowedFd<'_>) -> bool {
    use rustix::event::{PollFd, PollFlags, poll};
    let mut fds = [PollFd::new(&answers, PollFlags::IN)];
    let zero = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    matches!(poll(&mut fds, Some(&zero)), Ok(n) if n > 0)
}

/// One command, on its worker's thread, restricted (`ready`) or not (the reason). What the
/// keeper is to do next: watch the command, or only remove its folder.
fn run(job: Job, ready: Result<(), String>, tmp: PathBuf) -> Chore {
    let Job {
        request,
        stdout,
        stderr,
        answers,
    } = job;
    if let Err(why) = ready {
        send(answers.as_fd(), &Reply::Failed { why });
        return Chore::Remove(tmp);
    }
    if hung_up(answers.as_fd()) {
        return Chore::Remove(tmp); // Skald no longer wants it.
    }
    let child = {
        // The Command keeps its copies of the pipes until it is dropped; this block drops
        // it right after the spawn so Skald sees the end of the output when the command
        // (and whatever it started) is gone.
        let mut command = Command::new(resolve(&request.program, &request.env));
        command
            .args(&request.args)
            .current_dir(&request.cwd)
            .env_clear()
            .envs(request.env)
            .envs(TMP_VARS.iter().map(|v| (v, &tmp)))
            .stdin(Stdio::null())
            .stdout(Stdio::from(stdout))
            .stderr(Stdio::from(stderr))
            .process_group(0);
        command.spawn()
    };
    let child = match child {
        Ok(c) => c,
        Err(e) => {
            let why = format!("cannot run {} in {}: {e}", request.program, request.cwd);
            send(answers.as_fd(), &Reply::Failed { why });
            return Chore::Remove(tmp);
        }
    };
    let told = send(
        answers.as_fd(),
        &Reply::Started {
            pid: child.id(),
            tmp: tmp.clone(),
        },
    );
    if !told {
        // Skald gave up on it meanwhile: it must not run unseen.
        kill_group(child.id());
    }
    Chore::Watch(Started {
        child,
        answers,
        tmp,
    })
}

/// `program` found on the command's own `PATH` (the first file of that name with an execute
/// bit, in an absolute folder), or `program` itself if it names a path or nothing is found;
/// the standard library then searches the whole `PATH` as `execvp` does. Done here because
/// the standard library, handed a bare name with a `PATH` of the command's, takes the slow
/// way to spawn (a whole fork) to search it in the child.
fn resolve(program: &str, env: &[(String, String)]) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    if program.contains('/') {
        return PathBuf::from(program);
    }
    let path = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str())
        .unwrap_or("/usr/local/bin:/usr/bin:/bin");
    path.split(':')
        // Relative entries (an empty one is the working folder) are left to the standard
        // library's search, which only runs when nothing is found here.
        .filter(|dir| dir.starts_with('/'))
        .map(|dir| Path::new(dir).join(program))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .unwrap_or_else(|| PathBuf::from(program))
}

/// One reply, one packet; false if it could not be sent, which means Skald is gone or no
/// longer waiting.
fn send(socket: BorrowedFd<'_>, reply: &Reply) -> bool {
    match serde_json::to_vec(reply) {
        Ok(bytes) => rustix::net::send(socket, &bytes, SendFlags::NOSIGNAL).is_ok(),
        Err(_) => false,
    }
}
