-- Run contexts: the security frame a session runs in — its permission group, extra lines
-- for its agents' system prompt, and the folders it may read or write without asking.
-- chat_sessions.run_context_id (migration 1) points here; tasks inherit their parent's.

CREATE TABLE run_contexts (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    permission_group TEXT    NOT NULL DEFAULT 'default',
    extra_prompt     TEXT    NOT NULL DEFAULT '',
    allow_fs_reads   TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(allow_fs_reads)),
    allow_fs_writes  TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(allow_fs_writes)),
    created_at       INTEGER NOT NULL
);
