-- The approval gate: permission groups and their rules, with the seeded defaults of
-- reference.md. Rules are tried in ascending priority, then id; the first match wins.

CREATE TABLE tool_permission_groups (
    name        TEXT PRIMARY KEY,
    description TEXT NOT NULL DEFAULT ''
);

CREATE TABLE approval_rules (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    group_name      TEXT    NOT NULL REFERENCES tool_permission_groups(name) ON DELETE CASCADE,
    -- exact name, `prefix*`, `*`, `@fs_read`, `@fs_write`, `@fs_any`, `mcp__server__*`
    tool_pattern    TEXT    NOT NULL,
    -- canonical path, or `dir/*` for a subtree; relative patterns are relative to the
    -- session's working directory
    path_pattern    TEXT,
    -- leading words of an execute_cmd command, e.g. `cargo test`
    command_pattern TEXT,
    -- only for this agent
    agent_id        TEXT,
    -- only in this working directory (and below), so a rule made in one project does not
    -- leak into another
    working_dir     TEXT,
    action          TEXT    NOT NULL CHECK (action IN ('allow', 'require', 'deny')),
    priority        INTEGER NOT NULL DEFAULT 100,
    note            TEXT    NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL
);
CREATE INDEX approval_rules_group ON approval_rules(group_name, priority, id);

INSERT INTO tool_permission_groups (name, description)
VALUES ('default', 'Rules every session falls back to');

INSERT INTO approval_rules (group_name, tool_pattern, path_pattern, action, priority, note, created_at) VALUES
    ('default', '@fs_any',            'secrets/*', 'deny',    0,    'secrets/ is never touched by file tools', 0),
    ('default', '@fs_write',          'memory/*',  'allow',   10,   'the agents'' own notes', 0),
    ('default', '@fs_write',          'data/*',    'allow',   10,   'the agents'' own data', 0),
    ('default', 'execute_cmd',        NULL,        'require', 20,   'shell commands are approved', 0),
    ('default', 'restart',            NULL,        'require', 20,   'restarting Skald is approved', 0),
    ('default', 'write_todos',        NULL,        'allow',   30,   '', 0),
    ('default', 'notify',             NULL,        'allow',   30,   '', 0),
    ('default', 'activate_tools',     NULL,        'allow',   30,   '', 0),
    ('default', 'show_file_to_user',  NULL,        'allow',   30,   '', 0),
    ('default', 'image_generate',     NULL,        'allow',   30,   '', 0),
    ('default', '*',                  NULL,        'require', 1000, 'anything else is approved', 0);
