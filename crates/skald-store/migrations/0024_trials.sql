-- Best of N (docs/worktrees.md, "Best of N"): the worktrees of one prompt given to several
-- agents at once share a trial name, so their diffs are shown side by side.

ALTER TABLE worktrees ADD COLUMN trial TEXT;
CREATE INDEX worktrees_by_trial ON worktrees(trial) WHERE trial IS NOT NULL;
