-- Every tool call a model made, persisted before it runs and mirrored as it progresses,
-- and every tool name ever offered to a model (so any of them can be gated).

CREATE TABLE chat_llm_tools (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    tool_call_id TEXT    NOT NULL,
    session_id   INTEGER NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
    stack_id     INTEGER REFERENCES chat_session_stack(id) ON DELETE CASCADE,
    -- The assistant message that made the call.
    message_id   INTEGER REFERENCES chat_history(id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    args         TEXT    NOT NULL CHECK (json_valid(args)),
    status       TEXT    NOT NULL
                         CHECK (status IN ('running', 'pending', 'done', 'failed',
                                           'cancelled', 'rejected', 'interrupted')),
    result       TEXT,
    -- text | json | error
    result_type  TEXT,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    finished_at  INTEGER,
    UNIQUE (session_id, tool_call_id)
);
CREATE INDEX chat_llm_tools_unfinished ON chat_llm_tools(status)
    WHERE status IN ('running', 'pending');

CREATE TABLE known_tools (
    name        TEXT    PRIMARY KEY,
    -- builtin | synthetic | mcp | plugin
    source      TEXT    NOT NULL,
    first_seen  INTEGER NOT NULL,
    last_seen   INTEGER NOT NULL
);
