-- A rule for the web tools names a host (docs/web.md): `docs.rs`, `*.python.org`,
-- `localhost:3000`. NULL for every other rule.
ALTER TABLE approval_rules ADD COLUMN domain_pattern TEXT;
