-- The Agent Inbox: everything an agent waits on a person for — approvals now,
-- clarification questions and MCP elicitations later — in one list across sessions.

CREATE TABLE inbox_items (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id    INTEGER NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
    -- approval | question | elicitation
    kind          TEXT    NOT NULL CHECK (kind IN ('approval', 'question', 'elicitation')),
    -- The tool call waiting on it, if any: answers after a restart find it by this id.
    tool_call_id  TEXT,
    agent_id      TEXT    NOT NULL,
    depth         INTEGER NOT NULL DEFAULT 0,
    title         TEXT    NOT NULL,
    -- What the UI shows: for an approval the tool, its full arguments, its label, and for
    -- writes the path with the old and new content.
    payload       TEXT    NOT NULL CHECK (json_valid(payload)),
    status        TEXT    NOT NULL DEFAULT 'pending'
                          CHECK (status IN ('pending', 'approved', 'rejected', 'answered', 'cancelled')),
    -- The answer: a note for a rejection, the text of an answered question.
    answer        TEXT,
    created_at    INTEGER NOT NULL,
    resolved_at   INTEGER
);
CREATE INDEX inbox_items_pending ON inbox_items(status) WHERE status = 'pending';
CREATE INDEX inbox_items_call ON inbox_items(session_id, tool_call_id);
