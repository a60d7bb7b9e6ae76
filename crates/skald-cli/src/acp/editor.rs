//! The editor's file system and terminals, lent to the tools of the chats it opened
//! (`fs/read_text_file`, `fs/write_text_file`, `terminal/*`), as far as its
//! `clientCapabilities` offer them. Skald's checks all happen before a request goes out:
//! the approval gate, the path policy, and the sandbox the command confines itself in.

use super::{Conn, acp};
use skald_api::editor::{
    Editor, EditorFuture, EditorOffers, TerminalCommand, TerminalExit, TerminalOutcome,
};
use skald_base::lock;
use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The tool calls that ran in a terminal of the editor's, whose ending update keeps it.
pub(super) type Terminals = Arc<Mutex<HashSet<String>>>;

/// What the editor offers, from its `clientCapabilities`.
pub(super) fn offers(caps: &acp::ClientCapabilities) -> EditorOffers {
    EditorOffers {
        read_files: caps.fs.read_text_file,
        write_files: caps.fs.write_text_file,
        terminals: caps.terminal,
    }
}

/// One session's view of the editor.
pub(super) struct EditorLink {
    pub cx: Conn,
    pub session: acp::SessionId,
    pub offers: EditorOffers,
    pub terminals: Terminals,
}

impl Editor for EditorLink {
    fn offers(&self) -> EditorOffers {
        self.offers
    }

    fn read_text_file<'a>(&'a self, path: &'a Path) -> EditorFuture<'a, String> {
        Box::pin(async move {
            let request = acp::ReadTextFileRequest::new(self.session.clone(), path);
            let answer = self.cx.send_request(request).block_task().await;
            answer.map(|r| r.content).map_err(|e| e.to_string())
        })
    }

    fn write_text_file<'a>(&'a self, path: &'a Path, content: &'a str) -> EditorFuture<'a, ()> {
        Box::pin(async move {
            let request = acp::WriteTextFileRequest::new(self.session.clone(), path, content);
            let answer = self.cx.send_request(request).block_task().await;
            answer.map(|_| ()).map_err(|e| e.to_string())
        })
    }

    fn run_in_terminal<'a>(
        &'a self,
        call_id: &'a str,
        command: TerminalCommand,
    ) -> EditorFuture<'a, TerminalOutcome> {
        Box::pin(async move {
            let env = command
                .env
                .iter()
                .map(|(k, v)| acp::EnvVariable::new(k.clone(), v.clone()))
                .collect();
            let request = acp::CreateTerminalRequest::new(self.session.clone(), command.program)
                .args(command.args)
                .env(env)
                .cwd(command.cwd)
                .output_byte_limit(command.output_limit as u64);
            let created = self
                .cx
                .send_request(request)
                .block_task()
                .await
                .map_err(|e| e.to_string())?;
            let terminal = Running {
                cx: self.cx.clone(),
                session: self.session.clone(),
                id: created.terminal_id,
                done: false,
            };
            lock(&self.terminals).insert(call_id.to_string());
            // Shown in the call's entry while it runs. The call itself was announced when
            // it started, before its approval; this follows the editor's answer to
            // terminal/create, so it cannot overtake that announcement.
            let _ = self.cx.send_notification(acp::SessionNotification::new(
                self.session.clone(),
                acp::SessionUpdate::ToolCallUpdate(acp::ToolCallUpdate::new(
                    call_id.to_string(),
                    acp::ToolCallUpdateFields::new().content(vec![acp::ToolCallContent::Terminal(
                        acp::Terminal::new(terminal.id.clone()),
                    )]),
                )),
            ));
            terminal.finish(command.timeout).await
        })
    }
}

/// A terminal of the editor's that is Skald's until released: killed and released if the
/// call is stopped (its future dropped) before it ends.
struct Running {
    cx: Conn,
    session: acp::SessionId,
    id: acp::TerminalId,
    done: bool,
}

impl Running {
    async fn finish(mut self, timeout: std::time::Duration) -> Result<TerminalOutcome, String> {
        let waited = tokio::time::timeout(
            timeout,
            self.cx
                .send_request(acp::WaitForTerminalExitRequest::new(
                    self.session.clone(),
                    self.id.clone(),
                ))
                .block_task(),
        )
        .await;
        let timed_out = waited.is_err();
        if timed_out {
            let kill = acp::KillTerminalRequest::new(self.session.clone(), self.id.clone());
            let _ = self.cx.send_request(kill).block_task().await;
        }
        let output = self
            .cx
            .send_request(acp::TerminalOutputRequest::new(
                self.session.clone(),
                self.id.clone(),
            ))
            .block_task()
            .await;
        self.release().await;
        let output = output.map_err(|e| e.to_string())?;
        let status = match waited {
            Ok(Ok(w)) => Some(w.exit_status),
            Ok(Err(e)) => return Err(e.to_string()),
            Err(_) => None,
        };
        let exit = match status.or(output.exit_status) {
            _ if timed_out => TerminalExit::TimedOut,
            Some(s) => match (s.exit_code, s.signal) {
                (Some(code), _) => TerminalExit::Code(i32::try_from(code).unwrap_or(i32::MAX)),
                (None, Some(signal)) => TerminalExit::Signal(signal),
                (None, None) => TerminalExit::Unknown,
            },
            None => TerminalExit::Unknown,
        };
        Ok(TerminalOutcome {
            output: output.output,
            truncated: output.truncated,
            exit,
        })
    }

    async fn release(&mut self) {
        self.done = true;
        let release = acp::ReleaseTerminalRequest::new(self.session.clone(), self.id.clone());
        let _ = self.cx.send_request(release).block_task().await;
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let (cx, session, id) = (self.cx.clone(), self.session.clone(), self.id.clone());
        // Stopped mid-command: the editor kills it and frees the terminal. No answer is
        // awaited here (a drop cannot wait); the connection's task sends both.
        let _ = self.cx.spawn(async move {
            let kill = acp::KillTerminalRequest::new(session.clone(), id.clone());
            let _ = cx.send_request(kill).block_task().await;
            let release = acp::ReleaseTerminalRequest::new(session, id);
            let _ = cx.send_request(release).block_task().await;
            Ok(())
        });
    }
}
