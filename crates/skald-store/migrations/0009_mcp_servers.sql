-- MCP servers the user (or an agent, with approval) registered.

CREATE TABLE mcp_servers (
    name           TEXT    PRIMARY KEY,
    transport      TEXT    NOT NULL CHECK (transport IN ('stdio', 'http')),
    -- stdio: the command, its arguments (JSON array) and extra environment (JSON object;
    -- values may reference ${env:NAME}).
    command        TEXT,
    args           TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(args)),
    env            TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(env)),
    -- http: the endpoint and the bearer token's reference (never a literal token).
    url            TEXT,
    api_key        TEXT,
    description    TEXT    NOT NULL DEFAULT '',
    friendly_name  TEXT,
    enabled        INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);
