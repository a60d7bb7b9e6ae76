-- A chat's mode: plan (the agent reads, searches and asks, changes nothing, until its plan
-- is approved) or act (NULL: the default).

ALTER TABLE chat_sessions ADD COLUMN mode TEXT CHECK (mode IN ('act', 'plan'));
