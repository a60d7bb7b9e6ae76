-- The command sandbox (docs/sandbox.md).
--
-- A chat's own sandbox: its mode and whether its commands may use the network. NULL means
-- config.toml's [sandbox] setting. Tasks inherit their parent's run context, and with it
-- these.
ALTER TABLE run_contexts ADD COLUMN sandbox_mode TEXT
    CHECK (sandbox_mode IN ('off', 'read-only', 'workspace-write'));
ALTER TABLE run_contexts ADD COLUMN sandbox_network INTEGER
    CHECK (sandbox_network IN (0, 1));

-- An allow rule for commands may also give them the network (`skald rules add --network`):
-- what it allows then runs sandboxed with the network, without asking.
ALTER TABLE approval_rules ADD COLUMN network INTEGER NOT NULL DEFAULT 0
    CHECK (network IN (0, 1));

-- A stdio MCP server may run in the sandbox too (off unless the user says so): it then
-- writes only a temporary folder of its own, sees no secrets, and has the network only
-- with sandbox_network.
ALTER TABLE mcp_servers ADD COLUMN sandbox INTEGER NOT NULL DEFAULT 0 CHECK (sandbox IN (0, 1));
ALTER TABLE mcp_servers ADD COLUMN sandbox_network INTEGER NOT NULL DEFAULT 0
    CHECK (sandbox_network IN (0, 1));
