-- Background tasks, scheduled jobs and their runs, and what the engine delivers into a
-- chat on its own (a finished task's result, a batch of notifications).

-- A background session's home chat: where its notifications go.
ALTER TABLE chat_sessions ADD COLUMN home_session_id INTEGER
    REFERENCES chat_sessions(id) ON DELETE SET NULL;

-- A task `execute_task` started in the background (mode async) from a chat.
CREATE TABLE tasks (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    parent_session_id   INTEGER NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
    parent_tool_call_id TEXT,
    -- The background session the task agent works in.
    session_id          INTEGER REFERENCES chat_sessions(id) ON DELETE SET NULL,
    agent_id            TEXT    NOT NULL,
    title               TEXT    NOT NULL,
    description         TEXT    NOT NULL DEFAULT '',
    prompt              TEXT    NOT NULL,
    status              TEXT    NOT NULL
                                CHECK (status IN ('running', 'done', 'failed', 'cancelled')),
    result              TEXT,
    created_at          INTEGER NOT NULL,
    finished_at         INTEGER
);
CREATE INDEX tasks_parent ON tasks(parent_session_id);

CREATE TABLE scheduled_jobs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    name             TEXT    NOT NULL,
    description      TEXT    NOT NULL DEFAULT '',
    agent_id         TEXT    NOT NULL,
    prompt           TEXT    NOT NULL,
    -- Cron expression, seconds optional; evaluated in `timezone` (an IANA name).
    cron             TEXT    NOT NULL,
    timezone         TEXT    NOT NULL,
    -- once: a job that missed occurrences while Skald was down runs once for all of them;
    -- skip: missed occurrences are dropped and the job waits for its next one.
    missed_policy    TEXT    NOT NULL DEFAULT 'once' CHECK (missed_policy IN ('once', 'skip')),
    enabled          INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    -- The chat its notifications go to.
    home_session_id  INTEGER REFERENCES chat_sessions(id) ON DELETE SET NULL,
    run_context_id   INTEGER,
    working_dir      TEXT,
    -- Unix ms of the next occurrence; NULL when the expression has none left.
    next_run_at      INTEGER,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);

-- One row per occurrence that ran. The unique key is what makes an occurrence run once
-- however many Skald processes share the database; the lease says who runs it, and a run
-- whose lease ran out (its process died) or that a shutdown interrupted is taken over.
CREATE TABLE job_runs (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id         INTEGER NOT NULL REFERENCES scheduled_jobs(id) ON DELETE CASCADE,
    scheduled_for  INTEGER NOT NULL,
    -- How many occurrences this run stands for (more than one after a downtime).
    occurrences    INTEGER NOT NULL DEFAULT 1,
    session_id     INTEGER REFERENCES chat_sessions(id) ON DELETE SET NULL,
    status         TEXT    NOT NULL
                           CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
    result         TEXT,
    owner          TEXT    NOT NULL,
    lease_until    INTEGER NOT NULL,
    started_at     INTEGER NOT NULL,
    finished_at    INTEGER,
    UNIQUE (job_id, scheduled_for)
);
CREATE INDEX job_runs_open ON job_runs(status) WHERE status IN ('running', 'interrupted');

-- Written into a chat by the engine, not typed by anyone: a background task's result or
-- notifications from background agents. Kept until the chat takes them in, so none is
-- lost if Skald stops first.
CREATE TABLE session_deliveries (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id    INTEGER NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
    kind          TEXT    NOT NULL CHECK (kind IN ('task_completed', 'notification')),
    payload       TEXT    NOT NULL CHECK (json_valid(payload)),
    -- Not taken in before this time: notifications wait a moment to arrive as one batch.
    ready_at      INTEGER NOT NULL,
    delivered_at  INTEGER,
    created_at    INTEGER NOT NULL
);
CREATE INDEX session_deliveries_pending ON session_deliveries(session_id)
    WHERE delivered_at IS NULL;

-- Small pieces of app state (the home chat's id).
CREATE TABLE app_state (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);

-- Lazy tool groups an agent activated (`activate_tools`): per session for the root
-- agent, per stack frame for sub-agents. They apply from the agent's next round.
CREATE TABLE session_mcp_grants (
    session_id  INTEGER NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
    name        TEXT    NOT NULL,
    granted_at  INTEGER NOT NULL,
    PRIMARY KEY (session_id, name)
);
CREATE TABLE stack_mcp_grants (
    stack_id    INTEGER NOT NULL REFERENCES chat_session_stack(id) ON DELETE CASCADE,
    name        TEXT    NOT NULL,
    granted_at  INTEGER NOT NULL,
    PRIMARY KEY (stack_id, name)
);

-- The engine's own reading tools carry no risk.
INSERT INTO approval_rules (group_name, tool_pattern, action, priority, note, created_at) VALUES
    ('default', 'read_agent_result', 'allow', 30, 'reads a task''s state', 0),
    ('default', 'read_notification', 'allow', 30, 'reads delivered notifications', 0),
    ('default', 'list_items',        'allow', 30, 'lists agents, jobs and servers', 0);
