-- Project hooks (docs/hooks.md): a repository's `.skald/hooks.json` is code from the
-- repository, so its hooks run only once the person approved the file's content. One row
-- per file: the SHA-256 of the content approved last. A changed file needs approving again.
CREATE TABLE hook_approvals (
    path        TEXT PRIMARY KEY,
    sha256      TEXT NOT NULL,
    approved_at INTEGER NOT NULL
);
