-- Who is running a chat's turn, and a background task, right now: a process holds a
-- lease it renews while it works, so a second process does not run turns in the same
-- chat or re-run a task that is still running; a lease that runs out (or whose process is
-- gone) can be taken over.

CREATE TABLE session_leases (
    session_id   INTEGER PRIMARY KEY REFERENCES chat_sessions(id) ON DELETE CASCADE,
    owner        TEXT    NOT NULL,
    lease_until  INTEGER NOT NULL
);

ALTER TABLE tasks ADD COLUMN owner TEXT;
ALTER TABLE tasks ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0;
