-- How each chat's latest turn went, for the board of agents (docs/board.md): whether one
-- waits for a free place or runs (as a process last said; a process that died leaves 'running', which the board
-- reads with the chat's lease), how the last ended, and how long the chat has worked.

ALTER TABLE chat_sessions ADD COLUMN turn_state TEXT
    CHECK (turn_state IN ('queued', 'running', 'final', 'cancelled', 'exhausted', 'failed'));
ALTER TABLE chat_sessions ADD COLUMN turn_started_at INTEGER;
ALTER TABLE chat_sessions ADD COLUMN turn_ended_at INTEGER;
-- Milliseconds of every finished turn, added up.
ALTER TABLE chat_sessions ADD COLUMN active_ms INTEGER NOT NULL DEFAULT 0;
