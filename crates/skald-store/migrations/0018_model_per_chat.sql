-- The model and reasoning effort a chat uses (NULL: the configured ones), and the
-- reasoning blocks a provider wants back with the next request (Anthropic's signed
-- thinking), per assistant message.

ALTER TABLE chat_sessions ADD COLUMN model TEXT;
ALTER TABLE chat_sessions ADD COLUMN effort TEXT CHECK (effort IN ('low', 'medium', 'high'));
ALTER TABLE chat_history ADD COLUMN replay TEXT CHECK (replay IS NULL OR json_valid(replay));
