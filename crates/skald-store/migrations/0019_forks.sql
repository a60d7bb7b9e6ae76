-- Where a chat branched from: the chat it was forked from (an edited message, "fork from
-- here", a rewind) and the last of that chat's messages it copied.

ALTER TABLE chat_sessions ADD COLUMN forked_from INTEGER REFERENCES chat_sessions(id) ON DELETE SET NULL;
ALTER TABLE chat_sessions ADD COLUMN forked_after INTEGER;
