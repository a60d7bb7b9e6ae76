//! `skald-sandbox --serve`: the spawner's side (Linux). See `spawner.rs` for why it exists.
//!
//! Started by Skald with a Unix `SOCK_SEQPACKET` socket as its standard input, it enters the
//! namespaces and mounts the masks once (steps 1–2 of `confine.rs`), says it is ready, and
//! then answers one request per packet: a fresh thread restricts *itself* with Landlock and
//! seccomp for that command's policy (steps 3–4), starts the command — which inherits the
//! thread's restrictions — reports its pid, waits for it and reports how it ended. The
//! command's stdout and stderr arrive with the request as file descriptors, so its output
//! goes straight to Skald.
//!
//! The process is made non-dumpable: a command shares a Landlock domain with the thread that
//! started it, and without this it could read the spawner's memory (other commands' lines
//! and environments) through that thread's `/proc` entries.

use crate::Policy;
use crate::spawner::{MAX_REQUEST, Reply, Request};
use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendFlags};
use std::io::IoSliceMut;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::Arc;

/// Serves requests on standard input until Skald closes it. Errors before "ready" are
/// reported on the socket too, so Skald can say why; the caller exits 125 with them.
pub fn serve(policy: &Policy) -> Result<(), String> {
    // A copy of standard input as an owned descriptor, so each command's thread can hold it.
    let socket: Arc<OwnedFd> = Arc::new(
        std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| format!("cannot use the request socket: {e}"))?,
    );
    let ready = crate::confine::enter(policy)
        .map_err(|e| e.to_string())
        .and_then(|()| {
            rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
                .map_err(|e| format!("cannot make the spawner non-dumpable: {e}"))
        });
    if let Err(why) = ready {
        send(socket.as_fd(), &Reply::Refused { why: why.clone() });
        return Err(why);
    }
    send(socket.as_fd(), &Reply::Ready);
    let mut buf = vec![0u8; MAX_REQUEST];
    loop {
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let received = rustix::net::recvmsg(
            &socket,
            &mut [IoSliceMut::new(&mut buf)],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        );
        let n = match received {
            Ok(r) if r.bytes == 0 => return Ok(()), // Skald closed its end.
            Ok(r) => r.bytes,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(format!("reading a request failed: {e}")),
        };
        let mut fds: Vec<OwnedFd> = Vec::new();
        for message in control.drain() {
            if let RecvAncillaryMessage::ScmRights(rights) = message {
                fds.extend(rights);
            }
        }
        let request: Request = match serde_json::from_slice(&buf[..n]) {
            Ok(r) => r,
            // Without an id there is nobody to answer; Skald times the request out.
            Err(_) => continue,
        };
        let id = request.id;
        let [stdout, stderr]: [OwnedFd; 2] = match fds.try_into() {
            Ok(pair) => pair,
            Err(_) => {
                let why = "the request did not carry the command's output pipes".to_string();
                send(socket.as_fd(), &Reply::Failed { id, why });
                continue;
            }
        };
        let theirs = Arc::clone(&socket);
        let spawned = std::thread::Builder::new()
            .name(format!("command-{id}"))
            .spawn(move || run(theirs.as_fd(), request, stdout, stderr));
        if let Err(e) = spawned {
            let why = format!("cannot start a thread for the command: {e}");
            send(socket.as_fd(), &Reply::Failed { id, why });
        }
    }
}

/// One command, on its own thread: restrict the thread, start the command, report.
fn run(socket: BorrowedFd<'_>, request: Request, stdout: OwnedFd, stderr: OwnedFd) {
    let id = request.id;
    let policy = Policy {
        writable: request.writable,
        masked: Vec::new(),
        network: request.network,
    };
    if let Err(e) = crate::confine::restrict(&policy) {
        send(
            socket,
            &Reply::Failed {
                id,
                why: e.to_string(),
            },
        );
        return;
    }
    let child = {
        // The Command keeps its copies of the pipes until it is dropped; this block drops
        // it right after the spawn so Skald sees the end of the output when the command
        // (and whatever it started) is gone.
        let mut command = Command::new(&request.program);
        command
            .args(&request.args)
            .current_dir(&request.cwd)
            .env_clear()
            .envs(request.env)
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
            send(socket, &Reply::Failed { id, why });
            return;
        }
    };
    send(
        socket,
        &Reply::Started {
            id,
            pid: child.id(),
        },
    );
    let status = match child.wait() {
        Ok(s) => s.into_raw(),
        // Only if the child was already reaped, which nothing here does; report it killed.
        Err(_) => libc::SIGKILL,
    };
    send(socket, &Reply::Exited { id, status });
}

/// One reply, one packet. A failure means Skald is gone; it is not waiting any more.
fn send(socket: BorrowedFd<'_>, reply: &Reply) {
    if let Ok(bytes) = serde_json::to_vec(reply) {
        let _ = rustix::net::send(socket, &bytes, SendFlags::NOSIGNAL);
    }
}
