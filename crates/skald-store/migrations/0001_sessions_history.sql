-- Chat sessions, their agent stacks and the message history.
-- Times are Unix milliseconds (UTC).

CREATE TABLE chat_sessions (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    title           TEXT    NOT NULL DEFAULT '',
    agent_id        TEXT    NOT NULL DEFAULT 'main',
    -- interactive: a chat a person drives; background: a task or cron run.
    kind            TEXT    NOT NULL DEFAULT 'interactive'
                            CHECK (kind IN ('interactive', 'background')),
    working_dir     TEXT,
    run_context_id  INTEGER,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);

-- One row per agent frame of a session: the root agent (depth 0) and every sub-agent,
-- with the tool call that started it.
CREATE TABLE chat_session_stack (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id          INTEGER NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
    parent_stack_id     INTEGER REFERENCES chat_session_stack(id) ON DELETE CASCADE,
    parent_tool_call_id TEXT,
    agent_id            TEXT    NOT NULL,
    depth               INTEGER NOT NULL CHECK (depth >= 0),
    created_at          INTEGER NOT NULL
);
CREATE INDEX chat_session_stack_session ON chat_session_stack(session_id);

CREATE TABLE chat_history (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  INTEGER NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
    stack_id    INTEGER REFERENCES chat_session_stack(id) ON DELETE CASCADE,
    role        TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content     TEXT    NOT NULL,
    reasoning   TEXT,
    -- streaming: being written as it arrives; complete: final; interrupted: the process
    -- died while it streamed (what arrived is kept).
    status      TEXT    NOT NULL DEFAULT 'complete'
                        CHECK (status IN ('streaming', 'complete', 'interrupted')),
    -- Written by the engine (a notification, a task result), not typed by a person.
    synthetic   INTEGER NOT NULL DEFAULT 0 CHECK (synthetic IN (0, 1)),
    created_at  INTEGER NOT NULL
);
CREATE INDEX chat_history_session ON chat_history(session_id, id);
