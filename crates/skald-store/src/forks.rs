//! Rewinding a chat: a copy of its conversation up to a point, to go on from there while
//! the original keeps everything after it (docs/checkpoints.md, "Rewinding the chat").

use crate::{Session, Store, StoreError, now_ms};
use rusqlite::{OptionalExtension, params};
use std::collections::HashMap;

/// An agent frame's row: id, parent frame, the call that started it, agent, depth, time.
type Frame = (i64, Option<i64>, Option<String>, String, i64, i64);

impl Store {
    /// A new chat with `session_id`'s messages before message `before` (and their tool
    /// calls, agent frames, summaries and run context, copied), titled `title`. The
    /// original is not changed. One transaction: the copy is whole or absent.
    pub fn fork_session(
        &self,
        session_id: i64,
        before: i64,
        title: &str,
    ) -> Result<Session, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let now = now_ms();
        let src: (String, String, Option<String>, Option<i64>, Option<i64>) = tx
            .query_row(
                "SELECT agent_id, kind, working_dir, run_context_id, home_session_id
                 FROM chat_sessions WHERE id = ?1",
                [session_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound {
                what: "session",
                id: session_id.to_string(),
            })?;
        // Its own run context, so a grant or sandbox setting changed in one chat does not
        // change the other.
        let run_context = match src.3 {
            Some(rc) => {
                tx.execute(
                    "INSERT INTO run_contexts (permission_group, extra_prompt, allow_fs_reads,
                                               allow_fs_writes, created_at, sandbox_mode,
                                               sandbox_network)
                     SELECT permission_group, extra_prompt, allow_fs_reads, allow_fs_writes,
                            ?2, sandbox_mode, sandbox_network
                     FROM run_contexts WHERE id = ?1",
                    params![rc, now],
                )?;
                Some(tx.last_insert_rowid())
            }
            None => None,
        };
        tx.execute(
            "INSERT INTO chat_sessions (title, agent_id, kind, working_dir, run_context_id,
                                        home_session_id, created_at, updated_at, model, effort,
                                        forked_from, forked_after, mode)
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, model, effort, id,
                    (SELECT max(h.id) FROM chat_history h
                     WHERE h.session_id = ?8 AND h.id < ?9),
                    mode
             FROM chat_sessions WHERE id = ?8",
            params![
                title,
                src.0,
                src.1,
                src.2,
                run_context,
                src.4,
                now,
                session_id,
                before
            ],
        )?;
        let fork = tx.last_insert_rowid();
        // Agent frames, parents first (ids grow with creation).
        let mut stacks: HashMap<i64, i64> = HashMap::new();
        {
            let mut stmt = tx.prepare(
                "SELECT id, parent_stack_id, parent_tool_call_id, agent_id, depth, created_at
                 FROM chat_session_stack WHERE session_id = ?1 ORDER BY id",
            )?;
            let rows: Vec<Frame> = stmt
                .query_map([session_id], |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                    ))
                })?
                .collect::<Result<_, _>>()?;
            // The root frame, and the sub-agents started by calls that are copied.
            let copied_calls: std::collections::HashSet<String> = {
                let mut stmt = tx.prepare(
                    "SELECT tool_call_id FROM chat_llm_tools
                     WHERE session_id = ?1 AND message_id < ?2",
                )?;
                stmt.query_map(params![session_id, before], |r| r.get(0))?
                    .collect::<Result<_, _>>()?
            };
            for (id, parent, call, agent, depth, created) in rows {
                let orphan = parent.is_some_and(|p| !stacks.contains_key(&p));
                if orphan || call.as_ref().is_some_and(|c| !copied_calls.contains(c)) {
                    continue;
                }
                tx.execute(
                    "INSERT INTO chat_session_stack (session_id, parent_stack_id,
                         parent_tool_call_id, agent_id, depth, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![
                        fork,
                        parent.and_then(|p| stacks.get(&p).copied()),
                        call,
                        agent,
                        depth,
                        created
                    ],
                )?;
                stacks.insert(id, tx.last_insert_rowid());
            }
        }
        let mut messages: HashMap<i64, i64> = HashMap::new();
        {
            let mut stmt = tx.prepare(
                "SELECT id, stack_id FROM chat_history
                 WHERE session_id = ?1 AND id < ?2 ORDER BY id",
            )?;
            let rows: Vec<(i64, Option<i64>)> = stmt
                .query_map(params![session_id, before], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<_, _>>()?;
            for (id, stack) in rows {
                tx.execute(
                    "INSERT INTO chat_history (session_id, stack_id, role, content, reasoning,
                                               status, synthetic, created_at, replay)
                     SELECT ?1, ?2, role, content, reasoning, status, synthetic, created_at,
                            replay
                     FROM chat_history WHERE id = ?3",
                    params![fork, stack.and_then(|s| stacks.get(&s).copied()), id],
                )?;
                messages.insert(id, tx.last_insert_rowid());
            }
        }
        let mut calls: Vec<String> = Vec::new();
        {
            let mut stmt = tx.prepare(
                "SELECT id, stack_id, message_id FROM chat_llm_tools
                 WHERE session_id = ?1 AND message_id < ?2 ORDER BY id",
            )?;
            let rows: Vec<(i64, Option<i64>, i64)> = stmt
                .query_map(params![session_id, before], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?
                .collect::<Result<_, _>>()?;
            for (id, stack, message) in rows {
                let Some(new_message) = messages.get(&message) else {
                    continue;
                };
                tx.execute(
                    "INSERT INTO chat_llm_tools (tool_call_id, session_id, stack_id, message_id,
                         name, args, status, result, result_type, created_at, updated_at,
                         finished_at)
                     SELECT tool_call_id, ?1, ?2, ?3, name, args, status, result, result_type,
                            created_at, updated_at, finished_at
                     FROM chat_llm_tools WHERE id = ?4",
                    params![
                        fork,
                        stack.and_then(|s| stacks.get(&s).copied()),
                        new_message,
                        id
                    ],
                )?;
                calls.push(tx.query_row(
                    "SELECT tool_call_id FROM chat_llm_tools WHERE id = ?1",
                    [id],
                    |r| r.get(0),
                )?);
            }
        }
        // The images the copied messages and calls show.
        {
            let mut stmt = tx.prepare(
                "SELECT id, message_id, tool_call_id FROM chat_images
                 WHERE session_id = ?1 ORDER BY id",
            )?;
            let rows: Vec<(i64, Option<i64>, Option<String>)> = stmt
                .query_map([session_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<Result<_, _>>()?;
            for (id, message, call) in rows {
                let copied = match (&message, &call) {
                    (Some(m), _) => messages.contains_key(m),
                    (None, Some(c)) => calls.contains(c),
                    (None, None) => false,
                };
                if !copied {
                    continue;
                }
                tx.execute(
                    "INSERT INTO chat_images (session_id, message_id, tool_call_id, position,
                                              sha256, name)
                     SELECT ?1, ?2, tool_call_id, position, sha256, name
                     FROM chat_images WHERE id = ?3",
                    params![fork, message.and_then(|m| messages.get(&m).copied()), id],
                )?;
            }
        }
        {
            let mut stmt = tx.prepare(
                "SELECT up_to_message_id, summary, created_at FROM chat_summaries
                 WHERE session_id = ?1 AND up_to_message_id < ?2 ORDER BY id",
            )?;
            let rows: Vec<(i64, String, i64)> = stmt
                .query_map(params![session_id, before], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?
                .collect::<Result<_, _>>()?;
            for (up_to, summary, created) in rows {
                if let Some(m) = messages.get(&up_to) {
                    tx.execute(
                        "INSERT INTO chat_summaries (session_id, up_to_message_id, summary,
                                                     created_at)
                         VALUES (?1, ?2, ?3, ?4)",
                        params![fork, m, summary, created],
                    )?;
                }
            }
        }
        tx.commit()?;
        drop(conn);
        self.get_session(fork)
    }
}
