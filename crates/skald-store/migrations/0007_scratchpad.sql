-- The session scratchpad: a key/value board every agent of a session reads and writes.
-- And the rules for the engine's own coordination tools, which carry no risk of their
-- own: the scratchpad, asking the user (which is itself the person's say), and
-- delegating (the task agent's own calls pass the gate like any other).

CREATE TABLE session_scratchpad (
    session_id  INTEGER NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
    key         TEXT    NOT NULL,
    value       TEXT    NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (session_id, key)
);

INSERT INTO approval_rules (group_name, tool_pattern, action, priority, note, created_at) VALUES
    ('default', 'update_scratchpad',      'allow', 30, 'the session''s shared notes', 0),
    ('default', 'ask_user_clarification', 'allow', 30, 'asking is the user''s say', 0),
    ('default', 'execute_task',           'allow', 30, 'delegating; the task agent''s calls are gated', 0),
    ('default', 'execute_subtask',        'allow', 30, 'delegating; the task agent''s calls are gated', 0);
