-- Images shown to a model: pasted or attached with a person's message, or read by a tool.
-- The bytes are kept once, by their SHA-256; a placement says where one is shown.

CREATE TABLE images (
    sha256      TEXT    PRIMARY KEY CHECK (length(sha256) = 64),
    -- image/png | image/jpeg | image/webp | image/gif
    media_type  TEXT    NOT NULL,
    width       INTEGER NOT NULL,
    height      INTEGER NOT NULL,
    data        BLOB    NOT NULL,
    created_at  INTEGER NOT NULL
);

CREATE TABLE chat_images (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id   INTEGER NOT NULL REFERENCES chat_sessions(id) ON DELETE CASCADE,
    -- A message's images, or else a tool call's (chat_llm_tools.tool_call_id).
    message_id   INTEGER REFERENCES chat_history(id) ON DELETE CASCADE,
    tool_call_id TEXT,
    position     INTEGER NOT NULL,
    sha256       TEXT    NOT NULL REFERENCES images(sha256),
    -- The file name it was attached as (screenshot.png), when it had one.
    name         TEXT,
    CHECK ((message_id IS NULL) <> (tool_call_id IS NULL))
);
CREATE INDEX chat_images_session ON chat_images(session_id);
CREATE INDEX chat_images_sha256 ON chat_images(sha256);
