-- Checkpoints of a chat's folder (docs/checkpoints.md): one row per step that changed it
-- (a tool call, a restore) or could not be recorded. The snapshots themselves are commits
-- in the folder's shadow repository under the data directory; a row names them.

CREATE TABLE checkpoints (
    id            INTEGER PRIMARY KEY,
    session_id    INTEGER NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
    tool_call_id  TEXT,
    kind          TEXT    NOT NULL CHECK (kind IN ('call', 'restore')),
    folder        TEXT    NOT NULL,
    before_commit TEXT,
    after_commit  TEXT,
    changes       TEXT    NOT NULL DEFAULT '{"files":[],"total":0}',
    note          TEXT    NOT NULL DEFAULT '',
    restored_to   INTEGER REFERENCES checkpoints(id) ON DELETE SET NULL,
    created_at    INTEGER NOT NULL
);

CREATE INDEX checkpoints_by_session ON checkpoints(session_id, id);
