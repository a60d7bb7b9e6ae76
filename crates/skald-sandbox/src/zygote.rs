//! `skald-sandbox --serve`: the spawner's side (Linux). See `spawner.rs` for why it exists.
//!
//! Started by Skald with a Unix `SOCK_SEQPACKET` socket as its standard input, it enters the
//! namespaces and mounts the masks once (steps 1–2 of `confine.rs`), says it is ready, and
//! then takes one request per packet. Each request brings the command's stdout and stderr
//! and a socket of its own for the answers (file descriptors, `SCM_RIGHTS`), so output goes
//! straight to Skald and each command's answers straight to whoever waits for it.
//!
//! A command runs from a *worker*: a thread that made the command's private temporary
//! folder, restricted itself with Landlock (step 3) to the command's writable folders plus
//! that folder, and then starts the command, which inherits the thread's restrictions.
//! Restricting a thread cannot be undone, so a worker serves one command. Its seccomp filter
//! (step 4) it has from its birth: workers are made by a *factory*, one thread per network
//! setting that loaded that setting's filter once, and threads inherit filters. Loading a
//! filter per command cost more than all the rest of a worker's making (the kernel compiles
//! it, and that disturbs every core), and there are only two filters.
//!
//! To keep a worker's making out of a command's way, the next worker is readied for the same
//! writable folders and network setting (a chat's commands share both), and it is that
//! worker which reads the next request: if it asks for what the worker was made for, it
//! starts at once, with no thread made or woken in between. It is readied once the command
//! before is done and Skald has its answer, or `QUIET` after that command started, whichever
//! comes first: made while a short command runs, it competed with the command and with Skald
//! for the cores (an agent's next command comes a model's answer later). A request that comes
//! within that time waits for it. A request for other folders, or for folders replaced since
//! (the same name, another directory), is handed to the main thread, which starts a fresh
//! worker for it. Only the main thread and the factories, which no Landlock rule binds, make
//! threads: a thread made by a restricted one would inherit its rules.
//!
//! The process is made non-dumpable: a command shares a Landlock domain with the thread that
//! started it, and without this it could read the spawner's memory (other commands' lines
//! and environments) through that thread's `/proc` entries.

use crate::spawner::{MAX_REQUEST, Reply, Request, lock};
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
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// How long after a command started the next worker is readied at the latest, when the
/// command is not done by then (see the module's comment).
const QUIET: Duration = Duration::from_millis(10);

/// One command to start: the request and the descriptors that came with it.
struct Job {
    request: Request,
    /// Its whole environment (the request's, or the one before's: see `send_request`).
    env: Env,
    stdout: OwnedFd,
    stderr: OwnedFd,
    answers: OwnedFd,
}

type Env = Arc<Vec<(String, String)>>;

/// The socket requests come on, and what reading them needs (see [`Inbox`]). The lock is
/// held from the read to the use, so the request before is the one read before whichever
/// thread reads.
struct Requests {
    socket: OwnedFd,
    inbox: std::sync::Mutex<Inbox>,
}

struct Inbox {
    /// The environment of the last request that had one, which a request without one gets.
    env: Option<Env>,
    /// `MAX_REQUEST` bytes, made once for every reader: on a reader's own stack it was
    /// faulted in by each new thread and given back to the kernel when the thread ended,
    /// on the core where the command's shell was about to run; on the heap per request it
    /// was mapped and unmapped, which interrupts the other cores.
    buf: Vec<u8>,
}

/// What a worker tells the main thread.
enum Event {
    /// A reader took a command: ready the next reader (see [`Next`]). Sent by the
    /// command's watcher once the command is done or `QUIET` after its start, whichever
    /// comes first (by the reader itself if the command did not start), so that nothing
    /// wakes the main thread while the command's shell starts.
    Took(Next),
    /// It read a command it was not made for: start that one afresh, and a new reader.
    Unfit(Job),
    /// Skald closed its end: the spawner exits.
    Closed,
    /// The socket failed: the spawner exits with this.
    Broken(String),
    /// A command is done and Skald has heard how it ended: a quiet moment.
    Done,
}

/// The reader to ready next: for the folders and network setting of the command before, by
/// `QUIET` after that command started at the latest.
struct Next {
    writable: Vec<PathBuf>,
    network: bool,
    /// That command's program and `PATH`, to look the program up beforehand ([`Found`]).
    last: Option<(String, String)>,
    by: Instant,
}

impl Next {
    /// The reader for commands like `job`, due `QUIET` from now.
    fn of(job: &Job) -> Next {
        let request = &job.request;
        Next {
            writable: request.writable.clone(),
            network: request.network,
            last: Some((request.program.clone(), path_of(&job.env).to_string())),
            by: Instant::now() + QUIET,
        }
    }
}

/// What the main thread and every worker share.
#[derive(Clone)]
struct Shared {
    requests: Arc<Requests>,
    keeper: Sender<Chore>,
    /// The watchers waiting for a command (see [`start_keeper`]).
    watchers: Watchers,
    events: Sender<Event>,
    tmp_base: PathBuf,
    count: Arc<AtomicU64>,
    /// The commands started and not yet reaped (see [`Live`]).
    live: Live,
}

/// The commands started and not yet reaped, by pid. When the spawner ends (Skald closed
/// its socket: it ended, or was killed outright), it kills each of them before it exits:
/// their watchers would too, but a process that exits does not wait for its threads. A
/// pid is taken out before its command is reaped, and the set is held while the commands
/// are killed, so no pid in it can be another process's.
type Live = Arc<std::sync::Mutex<std::collections::HashSet<u32>>>;

/// Kills every command still running (see [`Live`]) and what each started: its group,
/// and the command itself, whose end, as its PID namespace's first process, ends the rest.
fn kill_live(live: &Live) {
    let live = lock(live);
    for &pid in live.iter() {
        kill_group(pid);
        if let Some(fd) = rustix::process::Pid::from_raw(pid as i32)
            .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok())
        {
            let _ = rustix::process::pidfd_send_signal(&fd, rustix::process::Signal::KILL);
        }
    }
}

impl Shared {
    /// Gives a started command straight to a waiting watcher, or else `chore` to the keeper.
    /// (A channel's send carries no restriction of the sending worker's.)
    fn hand_over(&self, chore: Chore) {
        let chore = match chore {
            Chore::Watch(started) => {
                let waiting = lock(&self.watchers).pop();
                match waiting {
                    Some(watcher) => match watcher.send(started) {
                        Ok(()) => return,
                        Err(e) => Chore::Watch(e.0),
                    },
                    None => Chore::Watch(started),
                }
            }
            other => other,
        };
        let _ = self.keeper.send(chore);
    }

    /// A new private temporary folder's name (made by the worker that gets it).
    fn next_tmp(&self) -> PathBuf {
        let n = self.count.fetch_add(1, Ordering::Relaxed);
        self.tmp_base.join(n.to_string())
    }
}

/// What the main thread makes workers with: what they share, and a factory per network
/// setting (made on first need; the reason it could not be, if so).
struct Workers {
    shared: Shared,
    factories: [Option<Result<Factory, String>>; 2],
}

impl Workers {
    fn factory(&mut self, network: bool) -> Result<&Factory, String> {
        self.factories[usize::from(network)]
            .get_or_insert_with(|| Factory::start(network))
            .as_ref()
            .map_err(String::clone)
    }

    /// Starts a thread for `job` alone. A failure is the command's, told to Skald.
    fn fresh(&mut self, job: Job) {
        let (shared, tmp) = (self.shared.clone(), self.shared.next_tmp());
        let (jobs, next) = std::sync::mpsc::channel::<Job>();
        let body = Box::new(move || {
            let chore = match next.recv() {
                Ok(job) => {
                    let ready = prepare(&job.request.writable, job.request.network, &tmp, None);
                    run(job, ready, tmp, &shared.live)
                }
                Err(_) => Chore::Remove(tmp),
            };
            shared.hand_over(chore);
        });
        let unsent = match self.factory(job.request.network).and_then(|f| f.make(body)) {
            // A live thread holds the receiver, so this send cannot fail.
            Ok(()) => jobs
                .send(job)
                .err()
                .map(|e| (e.0, "the command's thread ended".into())),
            Err(why) => Some((job, why)),
        };
        if let Some((job, why)) = unsent {
            send(job.answers.as_fd(), &Reply::Failed { why });
        }
    }

    /// Starts the next reader: a thread restricted for `writable` and `network` (with a
    /// temporary folder of its own) that reads the next request itself and, if it asks
    /// for the same, runs it at once. False if no thread could be started.
    fn reader(&mut self, next: Next) -> bool {
        let Next {
            writable,
            network,
            last,
            ..
        } = next;
        let (shared, tmp) = (self.shared.clone(), self.shared.next_tmp());
        // Taken now: a folder replaced after this (the same name, another directory) makes
        // the worker unfit, since its Landlock rules hold the old one.
        let known = identities(&writable);
        let body = Box::new(move || {
            let ready = prepare(&writable, network, &tmp, last);
            // Whatever happens to this thread, the main thread hears of it (a panic
            // unwinds through the guard): it waits for this reader's word.
            let mut told = Told::new(&shared.events);
            let event = loop {
                match receive(&shared.requests) {
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
                        let next = Next::of(&job);
                        // The command first; the next reader is not to compete with its
                        // start (see `Event::Took`).
                        let chore = match run(job, ready, tmp, &shared.live) {
                            Chore::Watch(mut started) => {
                                started.next = Some(next);
                                told.handed();
                                Chore::Watch(started)
                            }
                            other => {
                                told.send(Event::Took(next));
                                other
                            }
                        };
                        shared.hand_over(chore);
                        return;
                    }
                }
            };
            told.send(event);
            let _ = shared.keeper.send(Chore::Remove(tmp));
        });
        self.factory(network).and_then(|f| f.make(body)).is_ok()
    }
}

/// A worker's whole life, handed to a factory to run on a thread of its own.
type Body = Box<dyn FnOnce() + Send + 'static>;

/// A thread that loaded the seccomp filter for one network setting and then makes the
/// workers for it, which inherit the filter. No Landlock rule binds it.
struct Factory {
    orders: Sender<(Body, Sender<Result<(), String>>)>,
}

impl Factory {
    fn start(network: bool) -> Result<Factory, String> {
        let (orders, taken) = std::sync::mpsc::channel::<(Body, Sender<Result<(), String>>)>();
        let (said, heard) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("factory".into())
            .spawn(move || {
                let filtered = crate::confine::filter_syscalls(network).map_err(|e| e.to_string());
                let loaded = filtered.is_ok();
                let _ = said.send(filtered);
                // Without its filter it makes nothing: no command may run without one.
                if !loaded {
                    return;
                }
                for (body, answer) in taken {
                    let made = std::thread::Builder::new()
                        .name("command".into())
                        .spawn(body)
                        .map(|_| ())
                        .map_err(|e| format!("cannot start a thread for the command: {e}"));
                    let _ = answer.send(made);
                }
            })
            .map_err(|e| format!("cannot start the spawner's factory thread: {e}"))?;
        heard.recv().map_err(|_| Factory::gone())??;
        Ok(Factory { orders })
    }

    /// Runs `body` on a new thread with this factory's filter.
    fn make(&self, body: Body) -> Result<(), String> {
        let (answer, heard) = std::sync::mpsc::channel();
        self.orders
            .send((body, answer))
            .map_err(|_| Factory::gone())?;
        heard.recv().map_err(|_| Factory::gone())?
    }

    fn gone() -> String {
        "the spawner's factory thread ended".to_string()
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

    /// The event is someone else's to send now (the command's watcher's).
    fn handed(&mut self) {
        self.sent = true;
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
    /// Where it is counted until it is reaped.
    live: Live,
    answers: OwnedFd,
    tmp: PathBuf,
    /// For a command a reader took: the reader the main thread is to ready next, which
    /// the watcher tells it (see `Event::Took`).
    next: Option<Next>,
}

/// What a worker readied before its command came.
struct Readied {
    /// `/dev/null`, the command's standard input.
    null: Option<std::fs::File>,
    /// The search for the program the command before ran, if there was one.
    found: Option<Found>,
}

/// Makes the private temporary folder `tmp`, then restricts the calling thread with
/// Landlock to `writable` and `tmp`, with or without the network (its seccomp filter it has
/// from its factory); then readies what the command will need (`last`: the program and
/// `PATH` of the command before, for [`Found`]).
fn prepare(
    writable: &[PathBuf],
    network: bool,
    tmp: &Path,
    last: Option<(String, String)>,
) -> Result<Readied, String> {
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
        network,
        ..Policy::default()
    };
    crate::confine::restrict_files(&policy).map_err(|e| e.to_string())?;
    crate::confine::own_pid_namespace().map_err(|e| e.to_string())?;
    // Failing to open it is left to the standard library, which opens it at the spawn.
    let null = std::fs::File::open("/dev/null").ok();
    Ok(Readied {
        null,
        found: Found::search(last),
    })
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

/// Reads one request (with the lock on `requests.inbox` held until it is a job).
fn receive(requests: &Requests) -> Received {
    let mut inbox = lock(&requests.inbox);
    let Inbox { env: last_env, buf } = &mut *inbox;
    let socket = &requests.socket;
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(3))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let received = rustix::net::recvmsg(
        socket,
        &mut [IoSliceMut::new(&mut buf[..])],
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
    // The environment first, whatever else is wrong with the request: the next request
    // without one means this one's. One that cannot be read leaves none known, so that a
    // request counting on it fails (and Skald sends its environment again) rather than
    // getting an older one.
    let mut parsed = serde_json::from_slice::<Request>(&buf[..n.min(buf.len())]);
    let env = match &mut parsed {
        Ok(request) => match request.env.take() {
            Some(env) => {
                let env = Arc::new(env);
                *last_env = Some(env.clone());
                Some(env)
            }
            None => last_env.clone(),
        },
        Err(_) => {
            *last_env = None;
            None
        }
    };
    // Without its answer socket there is nobody to answer; Skald times the request out.
    let Ok([stdout, stderr, answers]) = <[OwnedFd; 3]>::try_from(fds) else {
        return Received::Nothing;
    };
    let why = match (parsed, env) {
        (Ok(request), Some(env)) => {
            return Received::Job(Job {
                request,
                env,
                stdout,
                stderr,
                answers,
            });
        }
        (Ok(_), None) => "the spawner was not given the command's environment".to_string(),
        (Err(e), _) => format!("the spawner could not read the request: {e}"),
    };
    send(answers.as_fd(), &Reply::Failed { why });
    Received::Nothing
}

/// Serves requests on standard input until Skald closes it; each command's private
/// temporary folder is made in `tmp_base`. Errors before "ready" are reported on the socket
/// too, so Skald can say why; the caller exits 125 with them.
/// `kept`: the folders its commands work in that must stay visible in the private temporary
/// folders (`crate::seen_in_private_tmp`), `tmp_base` among them.
pub fn serve(policy: &Policy, tmp_base: &Path, kept: &[PathBuf]) -> Result<(), String> {
    let socket: OwnedFd = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| format!("cannot use the request socket: {e}"))?;
    let (events, heard) = std::sync::mpsc::channel();
    let watchers = Watchers::default();
    // A session of its own first: its commands then have no controlling terminal. Skald
    // starts it as no group's leader, so this cannot be refused for that.
    let ready = crate::confine::own_session(true)
        .and_then(|()| crate::confine::enter(policy, kept))
        .map_err(|e| e.to_string())
        .and_then(|()| {
            rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
                .map_err(|e| format!("cannot make the spawner non-dumpable: {e}"))
        })
        .and_then(|()| start_keeper(events.clone(), watchers.clone()));
    let keeper = match ready {
        Ok(j) => j,
        Err(why) => {
            send(socket.as_fd(), &Reply::Refused { why: why.clone() });
            return Err(why);
        }
    };
    send(socket.as_fd(), &Reply::Ready);
    let shared = Shared {
        requests: Arc::new(Requests {
            socket,
            inbox: std::sync::Mutex::new(Inbox {
                env: None,
                buf: vec![0; MAX_REQUEST],
            }),
        }),
        keeper,
        watchers,
        events,
        tmp_base: tmp_base.to_path_buf(),
        count: Arc::new(AtomicU64::new(1)),
        live: Live::default(),
    };
    let live = shared.live.clone();
    let mut workers = Workers {
        shared,
        factories: [None, None],
    };
    let ended = requests(&mut workers, &heard);
    kill_live(&live);
    ended
}

/// Serves requests until Skald closes its socket (`Ok`) or the socket fails.
fn requests(workers: &mut Workers, heard: &Receiver<Event>) -> Result<(), String> {
    let mut next: Option<Next> = None;
    // Whether a reader waits for the next request. While none does and none is due, the
    // main thread reads it itself (the first command, or when no thread could be started).
    let mut reading = false;
    loop {
        if !reading && next.is_none() {
            let job = match receive(&workers.shared.requests) {
                Received::Job(job) => job,
                Received::Nothing => continue,
                Received::Closed => return Ok(()),
                Received::Broken(why) => return Err(why),
            };
            next = Some(Next::of(&job));
            workers.fresh(job);
            continue;
        }
        let event = match &next {
            Some(due) => match heard.recv_timeout(due.by.saturating_duration_since(Instant::now()))
            {
                Ok(event) => Some(event),
                Err(RecvTimeoutError::Timeout) => None,
                // The main thread holds a sender, so this does not happen.
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            },
            None => match heard.recv() {
                Ok(event) => Some(event),
                Err(_) => return Ok(()),
            },
        };
        match event {
            // Quiet, or no longer to be waited for: the next reader now. (A `Done` while
            // none is due is an earlier command's, late.)
            None | Some(Event::Done) => {
                if let Some(due) = next.take() {
                    reading = workers.reader(due);
                }
            }
            Some(Event::Took(due)) => {
                reading = false;
                next = Some(due);
            }
            Some(Event::Unfit(job)) => {
                reading = false;
                next = Some(Next::of(&job));
                workers.fresh(job);
            }
            Some(Event::Closed) => return Ok(()),
            Some(Event::Broken(why)) => return Err(why),
        }
    }
}

/// The keeper: a thread outside every command's restriction that removes the commands'
/// temporary folders and hands each command that started to a watcher, which tells the
/// main thread (`events`) when its command is done. Watchers are kept for the next
/// command once theirs is done: making a thread while a command starts competed with it
/// for the cores.
fn start_keeper(events: Sender<Event>, idle: Watchers) -> Result<Sender<Chore>, String> {
    let (tx, rx): (Sender<Chore>, Receiver<Chore>) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("keeper".into())
        .spawn(move || {
            for chore in rx {
                match chore {
                    Chore::Remove(dir) => remove(&dir),
                    Chore::Watch(started) => {
                        if let Err(mut s) = new_watcher(started, &events, &idle) {
                            // Nobody could watch it: it is stopped rather than left unseen.
                            kill_group(s.child.id());
                            let _ = s.child.kill();
                            lock(&s.live).remove(&s.child.id());
                            let status = s.child.wait().map(|st| st.into_raw());
                            let status = status.unwrap_or(libc::SIGKILL);
                            send(s.answers.as_fd(), &Reply::Exited { status });
                            if let Some(next) = s.next.take() {
                                let _ = events.send(Event::Took(next));
                            }
                            remove(&s.tmp);
                        }
                    }
                }
            }
        })
        .map_err(|e| format!("cannot start the spawner's keeper: {e}"))?;
    Ok(tx)
}

/// The watchers waiting for their next command, each by the sending end of its channel.
type Watchers = Arc<std::sync::Mutex<Vec<Sender<Started>>>>;

/// Watchers kept waiting for a command at most.
const IDLE_WATCHERS: usize = 4;

/// Starts a watcher for `started` (made by the keeper, which no restriction binds, so it
/// is unrestricted too), which then waits among the `idle` for the next command, while
/// fewer than `IDLE_WATCHERS` wait. `started` comes back if no thread could be made.
fn new_watcher(
    started: Started,
    events: &Sender<Event>,
    idle: &Watchers,
) -> Result<(), Box<Started>> {
    let slot = Arc::new(std::sync::Mutex::new(Some(started)));
    let (theirs, events, idle) = (slot.clone(), events.clone(), idle.clone());
    let made = std::thread::Builder::new()
        .name("watcher".into())
        .spawn(move || {
            let Some(mut current) = take(&theirs) else {
                return;
            };
            loop {
                watch(current, &events);
                let (mine, next) = std::sync::mpsc::channel();
                {
                    let mut waiting = lock(&idle);
                    if waiting.len() >= IDLE_WATCHERS {
                        return;
                    }
                    waiting.push(mine);
                }
                // Ends when the spawner does.
                match next.recv() {
                    Ok(s) => current = s,
                    Err(_) => return,
                }
            }
        });
    match made {
        Ok(_) => Ok(()),
        Err(_) => take(&slot).map_or(Ok(()), |s| Err(Box::new(s))),
    }
}

fn take(slot: &std::sync::Mutex<Option<Started>>) -> Option<Started> {
    lock(slot).take()
}

/// Removes a command's temporary folder, even one whose subfolders it made unreadable.
pub(crate) fn remove(dir: &Path) {
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
/// that nobody watches. Once Skald has heard how it ended (it hangs up), or `QUIET` after,
/// the main thread is told that the command is done, and its temporary folder goes.
fn watch(mut started: Started, events: &Sender<Event>) {
    use rustix::event::{PollFd, PollFlags, poll};
    let pid = started.child.id();
    let pidfd = rustix::process::Pid::from_raw(pid as i32)
        .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok());
    let mut next = started.next.take();
    let mut listened = true;
    if pidfd.is_none() {
        // Waited for blindly below, as long as the command runs: the next reader now.
        if let Some(n) = next.take() {
            let _ = events.send(Event::Took(n));
        }
    }
    if let Some(pidfd) = pidfd {
        loop {
            let mut fds = [
                PollFd::new(&pidfd, PollFlags::IN),
                PollFd::new(&started.answers, PollFlags::IN),
            ];
            // Until the next reader is due, at the latest (see `Event::Took`).
            let due = next
                .as_ref()
                .map(|n| timespec(n.by.saturating_duration_since(Instant::now())));
            match poll(&mut fds, due.as_ref()) {
                Ok(0) => {
                    if let Some(n) = next.take() {
                        let _ = events.send(Event::Took(n));
                    }
                    continue;
                }
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
                // The command itself too: it may have left its group (a `setpgid` of its
                // own), and as its PID namespace's first process, its end ends the rest.
                let _ = rustix::process::pidfd_send_signal(&pidfd, rustix::process::Signal::KILL);
                listened = false;
                break;
            }
        }
    }
    lock(&started.live).remove(&pid);
    let status = match started.child.wait() {
        Ok(s) => s.into_raw(),
        // Only if the child was already reaped, which nothing here does; report it killed.
        Err(_) => libc::SIGKILL,
    };
    if send(started.answers.as_fd(), &Reply::Exited { status }) && listened {
        hung_up_within(started.answers.as_fd(), QUIET);
    }
    if let Some(n) = next {
        let _ = events.send(Event::Took(n));
    }
    let _ = events.send(Event::Done);
    remove(&started.tmp);
}

fn timespec(time: Duration) -> rustix::event::Timespec {
    rustix::event::Timespec {
        tv_sec: i64::try_from(time.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(time.subsec_nanos()),
    }
}

/// Waits at most `time` for Skald to close its end of `answers` (it never writes on it).
fn hung_up_within(answers: BorrowedFd<'_>, time: Duration) {
    use rustix::event::{PollFd, PollFlags, poll};
    let by = Instant::now() + time;
    loop {
        let left = by.saturating_duration_since(Instant::now());
        let timeout = timespec(left);
        let mut fds = [PollFd::new(&answers, PollFlags::IN)];
        match poll(&mut fds, Some(&timeout)) {
            Err(rustix::io::Errno::INTR) if !left.is_zero() => continue,
            _ => return,
        }
    }
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
fn run(job: Job, ready: Result<Readied, String>, tmp: PathBuf, live: &Live) -> Chore {
    let Job {
        request,
        env,
        stdout,
        stderr,
        answers,
    } = job;
    let readied = match ready {
        Ok(r) => r,
        Err(why) => {
            send(answers.as_fd(), &Reply::Failed { why });
            return Chore::Remove(tmp);
        }
    };
    if hung_up(answers.as_fd()) {
        return Chore::Remove(tmp); // Skald no longer wants it.
    }
    let child = {
        // The Command keeps its copies of the pipes until it is dropped; this block drops
        // it right after the spawn so Skald sees the end of the output when the command
        // (and whatever it started) is gone.
        let program = resolve(&request.program, &env, readied.found.as_ref());
        let stdin = readied.null.map_or_else(Stdio::null, Stdio::from);
        let mut command = Command::new(program);
        command
            .args(&request.args)
            .current_dir(&request.cwd)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .envs(TMP_VARS.iter().map(|v| (v, &tmp)))
            .stdin(stdin)
            .stdout(Stdio::from(stdout))
            .stderr(Stdio::from(stderr))
            .process_group(0);
        command.spawn()
    };
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            let why = format!("cannot run {} in {}: {e}", request.program, request.cwd);
            send(answers.as_fd(), &Reply::Failed { why });
            return Chore::Remove(tmp);
        }
    };
    lock(live).insert(child.id());
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
        let _ = child.kill();
    }
    Chore::Watch(Started {
        child,
        live: live.clone(),
        answers,
        tmp,
        next: None,
    })
}

/// `program` found on the command's own `PATH` (the first file of that name with an execute
/// bit, in an absolute folder), or `program` itself if it names a path or nothing is found;
/// the standard library then searches the whole `PATH` as `execvp` does. Done here because
/// the standard library, handed a bare name with a `PATH` of the command's, takes the slow
/// way to spawn (a whole fork) to search it in the child. `found` is the search a readied
/// worker made for the command before (see [`Found`]): used if it is for the same name and
/// `PATH` and its file is still there.
fn resolve(program: &str, env: &[(String, String)], found: Option<&Found>) -> PathBuf {
    if program.contains('/') {
        return PathBuf::from(program);
    }
    let path = path_of(env);
    if let Some(f) = found
        && f.program == program
        && f.path == path
        && let Some(at) = &f.at
        && executable(at)
    {
        return at.clone();
    }
    search(program, path).unwrap_or_else(|| PathBuf::from(program))
}

/// The `PATH` a command's environment gives it (the last one, as `getenv` reads it).
fn path_of(env: &[(String, String)]) -> &str {
    env.iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str())
        .unwrap_or("/usr/local/bin:/usr/bin:/bin")
}

/// The first executable file named `program` in the absolute folders of `path`.
fn search(program: &str, path: &str) -> Option<PathBuf> {
    path.split(':')
        // Relative entries (an empty one is the working folder) are left to the standard
        // library's search, which only runs when nothing is found here.
        .filter(|dir| dir.starts_with('/'))
        .map(|dir| Path::new(dir).join(program))
        .find(|candidate| executable(candidate))
}

fn executable(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A readied worker's search for the program the command before it ran, on that command's
/// `PATH`: a chat's commands are all `sh` on one `PATH`, and the search (a look into every
/// folder before the one that has it) is then off the next command's way. A file put
/// earlier on the `PATH` after the search is seen by the command after.
struct Found {
    program: String,
    path: String,
    at: Option<PathBuf>,
}

impl Found {
    fn search(last: Option<(String, String)>) -> Option<Found> {
        let (program, path) = last?;
        let at = search(&program, &path);
        Some(Found { program, path, at })
    }
}

/// One reply, one packet; false if it could not be sent, which means Skald is gone or no
/// longer waiting.
fn send(socket: BorrowedFd<'_>, reply: &Reply) -> bool {
    match serde_json::to_vec(reply) {
        Ok(bytes) => rustix::net::send(socket, &bytes, SendFlags::NOSIGNAL).is_ok(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::net::{AddressFamily, SendAncillaryBuffer, SendAncillaryMessage, SocketFlags};

    fn pair() -> (OwnedFd, OwnedFd) {
        rustix::net::socketpair(
            AddressFamily::UNIX,
            rustix::net::SocketType::SEQPACKET,
            SocketFlags::CLOEXEC,
            None,
        )
        .unwrap()
    }

    /// Skald's end and the spawner's, as `receive` reads it.
    fn requests() -> (OwnedFd, Requests) {
        let (ours, theirs) = pair();
        let requests = Requests {
            socket: theirs,
            inbox: std::sync::Mutex::new(Inbox {
                env: None,
                buf: vec![0; MAX_REQUEST],
            }),
        };
        (ours, requests)
    }

    fn request(mark: Option<&str>) -> Vec<u8> {
        serde_json::to_vec(&Request {
            program: "sh".into(),
            args: Vec::new(),
            cwd: "/".into(),
            env: mark.map(|m| vec![("MARK".to_string(), m.to_string())]),
            writable: Vec::new(),
            network: false,
        })
        .unwrap()
    }

    /// Sends `packet`, with two pipe ends and an answer socket unless `bare`; our end of
    /// the answer socket.
    fn send_packet(socket: &OwnedFd, packet: &[u8], bare: bool) -> Option<OwnedFd> {
        let (out_r, out_w) = std::io::pipe().unwrap();
        let (answers, theirs) = pair();
        let fds = [out_w.as_fd(), out_w.as_fd(), theirs.as_fd()];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(3))];
        let mut control = SendAncillaryBuffer::new(&mut space);
        if !bare {
            control.push(SendAncillaryMessage::ScmRights(&fds));
        }
        rustix::net::sendmsg(
            socket,
            &[std::io::IoSlice::new(packet)],
            &mut control,
            SendFlags::NOSIGNAL,
        )
        .unwrap();
        drop(out_r);
        (!bare).then_some(answers)
    }

    fn mark(received: Received) -> Option<String> {
        match received {
            Received::Job(job) => job
                .env
                .iter()
                .find(|(k, _)| k == "MARK")
                .map(|(_, v)| v.clone()),
            _ => None,
        }
    }

    fn failure(answers: &OwnedFd) -> String {
        let mut buf = [0u8; 4096];
        let (_, n) = rustix::net::recv(answers, &mut buf[..], RecvFlags::DONTWAIT).unwrap();
        String::from_utf8_lossy(&buf[..n]).to_string()
    }

    #[test]
    fn a_request_without_an_environment_gets_the_last_one_sent() {
        let (skald, requests) = requests();
        send_packet(&skald, &request(Some("one")), false);
        assert_eq!(mark(receive(&requests)).as_deref(), Some("one"));
        send_packet(&skald, &request(None), false);
        assert_eq!(mark(receive(&requests)).as_deref(), Some("one"));
        send_packet(&skald, &request(Some("two")), false);
        send_packet(&skald, &request(None), false);
        assert_eq!(mark(receive(&requests)).as_deref(), Some("two"));
        assert_eq!(mark(receive(&requests)).as_deref(), Some("two"));
    }

    #[test]
    fn a_request_that_arrives_without_its_descriptors_still_sets_the_environment() {
        let (skald, requests) = requests();
        send_packet(&skald, &request(Some("one")), false);
        assert_eq!(mark(receive(&requests)).as_deref(), Some("one"));
        send_packet(&skald, &request(Some("two")), true);
        assert!(matches!(receive(&requests), Received::Nothing));
        send_packet(&skald, &request(None), false);
        assert_eq!(mark(receive(&requests)).as_deref(), Some("two"));
    }

    #[test]
    fn after_a_request_that_cannot_be_read_one_without_an_environment_fails() {
        let (skald, requests) = requests();
        send_packet(&skald, &request(Some("one")), false);
        assert_eq!(mark(receive(&requests)).as_deref(), Some("one"));
        // It may have carried another environment: none is known any more.
        let garbled = send_packet(&skald, b"{\"program\": 1", false).unwrap();
        assert!(matches!(receive(&requests), Received::Nothing));
        assert!(failure(&garbled).contains("could not read the request"));
        let next = send_packet(&skald, &request(None), false).unwrap();
        assert!(matches!(receive(&requests), Received::Nothing));
        assert!(failure(&next).contains("not given the command's environment"));
        send_packet(&skald, &request(Some("three")), false);
        assert_eq!(mark(receive(&requests)).as_deref(), Some("three"));
    }
}
