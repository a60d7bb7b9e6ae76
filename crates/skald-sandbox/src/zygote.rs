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
    janitor: Sender<PathBuf>,
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
                if let Ok(job) = next.recv() {
                    let ready = restrict(&job.request.writable, job.request.network, &tmp);
                    run(job, ready, &tmp);
                }
                let _ = shared.janitor.send(tmp);
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
                            let _ = shared.events.send(Event::Took { writable, network });
                            run(job, ready, &tmp);
                            let _ = shared.janitor.send(tmp);
                            return;
                        }
                    }
                };
                let _ = shared.events.send(event);
                let _ = shared.janitor.send(tmp);
            })
            .is_ok()
    }
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
        .and_then(|()| start_janitor());
    let janitor = match ready {
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
        janitor,
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

/// A thread outside every command's restriction that removes their temporary folders.
fn start_janitor() -> Result<Sender<PathBuf>, String> {
    let (tx, rx): (Sender<PathBuf>, Receiver<PathBuf>) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("janitor".into())
        .spawn(move || {
            for dir in rx {
                // remove_dir_all does not follow the links a command may have left there.
                let _ = std::fs::remove_dir_all(dir);
            }
        })
        .map_err(|e| format!("cannot start the spawner's janitor: {e}"))?;
    Ok(tx)
}

/// One command, on its worker's thread, restricted (`ready`) or not (the reason).
fn run(job: Job, ready: Result<(), String>, tmp: &Path) {
    let Job {
        request,
        stdout,
        stderr,
        answers,
    } = job;
    let answers = answers.as_fd();
    if let Err(why) = ready {
        send(answers, &Reply::Failed { why });
        return;
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
            .envs(TMP_VARS.iter().map(|v| (v, tmp)))
            .stdin(Stdio::null())
            .stdout(Stdio::from(stdout))
            .stderr(Stdio::from(stderr))
            .process_group(0);
        command.spawn()
    };
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            let why = format!("cannot run {} in {}: {e}", request.program, request.cwd);
            send(answers, &Reply::Failed { why });
            return;
        }
    };
    send(
        answers,
        &Reply::Started {
            pid: child.id(),
            tmp: tmp.to_path_buf(),
        },
    );
    let status = match child.wait() {
        Ok(s) => s.into_raw(),
        // Only if the child was already reaped, which nothing here does; report it killed.
        Err(_) => libc::SIGKILL,
    };
    send(answers, &Reply::Exited { status });
}

/// `program` found on the command's own `PATH` (the first executable file of that name),
/// or `program` itself if it names a path or nothing is found (the spawn then says why).
/// Done here because the standard library, handed a bare name with a `PATH` of the
/// command's, takes the slow way to spawn (a whole fork) to search it in the child.
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
        // An empty entry means the working folder to a shell; a command named in a
        // request is never looked up there.
        .filter(|dir| dir.starts_with('/'))
        .map(|dir| Path::new(dir).join(program))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .unwrap_or_else(|| PathBuf::from(program))
}

/// One reply, one packet. A failure means Skald is gone; it is not waiting any more.
fn send(socket: BorrowedFd<'_>, reply: &Reply) {
    if let Ok(bytes) = serde_json::to_vec(reply) {
        let _ = rustix::net::send(socket, &bytes, SendFlags::NOSIGNAL);
    }
}
