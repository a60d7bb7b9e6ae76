-- Plugins' settings: whether each is on, and its configuration (JSON, checked against
-- the plugin's schema; secrets only as references).

CREATE TABLE plugins (
    id          TEXT    PRIMARY KEY,
    enabled     INTEGER NOT NULL DEFAULT 0 CHECK (enabled IN (0, 1)),
    config      TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(config)),
    updated_at  INTEGER NOT NULL
);

-- Listing the image providers reads settings only.
INSERT INTO approval_rules (group_name, tool_pattern, action, priority, note, created_at) VALUES
    ('default', 'image_generate_providers_list', 'allow', 30, 'lists image providers', 0);
