-- Agents' own copies of a folder (docs/worktrees.md): a git worktree on a branch of its
-- own, or a copy, kept outside the folder. A row outlives its chat (deleted chats leave it
-- listed until it is discarded) and a crash (the folder stays, and so does the row).

CREATE TABLE worktrees (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    session_id    INTEGER REFERENCES chat_sessions(id) ON DELETE SET NULL,
    -- The person's folder it copies, the copy's folder, and where in it the agent works.
    source        TEXT NOT NULL,
    root          TEXT NOT NULL,
    working_dir   TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('git', 'copy')),
    -- For a git worktree: the repository's folder, the branch and the commit it started at.
    repo          TEXT,
    branch        TEXT,
    base_commit   TEXT,
    -- The worktree's folder as it started, a checkpoint in its shadow repository: what a
    -- review compares with.
    base_snapshot TEXT,
    status        TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'discarded')),
    created_at    INTEGER NOT NULL
);

CREATE INDEX worktrees_by_session ON worktrees(session_id);
