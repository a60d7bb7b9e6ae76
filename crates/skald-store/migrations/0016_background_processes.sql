-- check_process (docs/processes.md) reads the output of, or stops, a background process
-- the same chat started with an approved or sandboxed execute_cmd; like list_items, it
-- needs no approval.
INSERT INTO approval_rules (group_name, tool_pattern, action, priority, note, created_at) VALUES
    ('default', 'check_process', 'allow', 30, 'reads or stops the chat''s own background processes', 0);
