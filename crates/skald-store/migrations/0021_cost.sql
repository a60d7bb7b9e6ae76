-- What each model call cost, in US dollars, at the price known when it was made (NULL: no
-- price was known for the model).

ALTER TABLE llm_requests ADD COLUMN cost_usd REAL;
CREATE INDEX llm_requests_started ON llm_requests(started_at);
