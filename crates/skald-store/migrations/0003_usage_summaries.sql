-- Every model call with its token usage, and the summaries that replace old turns in a
-- model's context when a conversation outgrows its window (the turns themselves stay).

CREATE TABLE llm_requests (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id    INTEGER REFERENCES chat_sessions(id) ON DELETE CASCADE,
    provider      TEXT    NOT NULL,
    model         TEXT    NOT NULL,
    -- ok | failed | cancelled
    status        TEXT    NOT NULL CHECK (status IN ('ok', 'failed', 'cancelled')),
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    error         TEXT,
    started_at    INTEGER NOT NULL,
    finished_at   INTEGER NOT NULL
);
CREATE INDEX llm_requests_session ON llm_requests(session_id);

CREATE TABLE chat_summaries (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id         INTEGER NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
    -- The summary stands for every message up to and including this one.
    up_to_message_id   INTEGER NOT NULL,
    summary            TEXT    NOT NULL,
    created_at         INTEGER NOT NULL
);
CREATE INDEX chat_summaries_session ON chat_summaries(session_id, up_to_message_id);
