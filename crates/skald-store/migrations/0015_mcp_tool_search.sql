-- search_mcp_tools (docs/mcp.md "Many tools") only looks through the definitions of the
-- servers the agent activated; like list_items, it needs no approval.
INSERT INTO approval_rules (group_name, tool_pattern, action, priority, note, created_at) VALUES
    ('default', 'search_mcp_tools', 'allow', 30, 'searches the activated servers'' tools', 0);
