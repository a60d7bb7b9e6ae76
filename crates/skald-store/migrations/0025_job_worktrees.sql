-- A scheduled job whose every run works in a worktree of its own (docs/worktrees.md,
-- "Background tasks and scheduled jobs"): it never writes the person's folder; each
-- run's work is reviewed and applied like a chat's.

ALTER TABLE scheduled_jobs ADD COLUMN worktree INTEGER NOT NULL DEFAULT 0
    CHECK (worktree IN (0, 1));
