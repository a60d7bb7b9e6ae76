//! Unit tests of `mod`.

use super::*;
use serde_json::json;
use skald_store::NewRule;

/// The tools the `@fs_read` group names, as their own files declare.
fn fs_read() -> Vec<&'static str> {
    skald_tools::NAMES
        .iter()
        .copied()
        .filter(|t| reads_files(t))
        .collect()
}

/// The tools the `@fs_write` group names, as their own files declare.
fn fs_write() -> Vec<&'static str> {
    skald_tools::NAMES
        .iter()
        .copied()
        .filter(|t| writes_files(t))
        .collect()
}

#[test]
fn the_file_groups_are_what_the_tools_declare() {
    use tn::*;
    assert_eq!(
        fs_read(),
        [
            LIST_FILES,
            READ_FILE,
            SEARCH_FILE,
            GREP_FILES,
            GET_AST_OUTLINE,
            DIAGNOSTICS,
            GO_TO_DEFINITION,
            FIND_REFERENCES
        ]
    );
    assert_eq!(
        fs_write(),
        [WRITE_FILE, EDIT_FILE, INSERT_AT_LINE, REPLACE_LINES]
    );
    for tool in fs_read().iter().chain(&fs_write()) {
        assert!(tool_matches("@fs_any", tool), "{tool}");
    }
    for tool in [
        EXECUTE_CMD,
        CHECK_PROCESS,
        SHOW_FILE_TO_USER,
        "mcp__fs__read_file",
    ] {
        assert!(file_access(tool).is_none(), "{tool}");
        assert!(!tool_matches("@fs_any", tool), "{tool}");
    }
}

fn setup() -> (Store, tempfile::TempDir, RunContext) {
    let dir = tempfile::tempdir().unwrap();
    let wd = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(wd.join("secrets")).unwrap();
    std::fs::create_dir_all(wd.join("docs")).unwrap();
    let ctx = RunContext {
        group: "default".into(),
        agent_id: "main".into(),
        working_dir: wd,
        ..RunContext::default()
    };
    (Store::open_in_memory().unwrap(), dir, ctx)
}

fn action(store: &Store, ctx: &RunContext, tool: &str, args: Value) -> RuleAction {
    check(store, ctx, tool, &args).action
}

/// docs/approval.md's table of seeded defaults names every rule a new data directory has,
/// at its priority and with its action.
#[test]
fn the_seeded_rules_table_is_complete() {
    let (s, _d, _ctx) = setup();
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/approval.md"),
    )
    .unwrap();
    let rules = s.rules_for_group("default").unwrap();
    assert!(!rules.is_empty());
    for rule in rules {
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| {} | ", rule.priority)))
            .unwrap_or_else(|| panic!("no row for priority {} ({rule:?})", rule.priority));
        let action = format!("{:?}", rule.action).to_lowercase();
        assert!(
            row.contains(&format!("`{}`", rule.tool_pattern)) && row.contains(&action),
            "docs/approval.md's row for priority {} lacks `{}` ({action}): {row}",
            rule.priority,
            rule.tool_pattern
        );
        if let Some(path) = &rule.path_pattern {
            assert!(row.contains(&format!("`{path}`")), "{row} lacks {path}");
        }
    }
}

#[test]
fn seeded_defaults() {
    let (s, _d, ctx) = setup();
    use RuleAction::*;
    let cases = [
        ("read_file", json!({"path": "src/main.rs"}), Allow),
        ("read_file", json!({"path": "/etc/passwd"}), Require),
        ("read_file", json!({"path": "secrets/key"}), Deny),
        ("read_file", json!({"path": "docs/../secrets/key"}), Deny),
        ("list_files", json!({"path": "secrets"}), Deny),
        ("grep_files", json!({"pattern": "x"}), Allow),
        (
            "write_file",
            json!({"path": "notes.md", "content": ""}),
            Require,
        ),
        (
            "write_file",
            json!({"path": "memory/notes.md", "content": ""}),
            Allow,
        ),
        ("edit_file", json!({"path": "data/x.json"}), Allow),
        (
            "write_file",
            json!({"path": "secrets/x", "content": ""}),
            Deny,
        ),
        (
            "write_file",
            json!({"path": "memory/../secrets/x", "content": ""}),
            Deny,
        ),
        ("execute_cmd", json!({"command": "ls"}), Require),
        ("write_todos", json!({}), Allow),
        ("mcp__github__create_issue", json!({}), Require),
    ];
    for (tool, args, want) in cases {
        assert_eq!(action(&s, &ctx, tool, args.clone()), want, "{tool} {args}");
    }
}

#[test]
fn skalds_own_secrets_are_out_of_reach_even_inside_a_chats_folder() {
    let (s, _d, mut ctx) = setup();
    // A chat working in the home folder, which holds the data directory.
    let secrets = ctx.working_dir.join(".local/share/skald/secrets");
    std::fs::create_dir_all(&secrets).unwrap();
    std::fs::write(secrets.join("vault.key"), "k").unwrap();
    ctx.protected
        .push(canonicalize_for_policy(&secrets, &secrets));
    ctx.allow_fs_reads.push(ctx.working_dir.clone());
    ctx.allow_fs_writes.push(ctx.working_dir.clone());
    for (tool, path) in [
        ("read_file", ".local/share/skald/secrets/vault.key"),
        ("read_file", ".local/share/skald/x/../secrets/vault.key"),
        ("list_files", ".local/share/skald/secrets"),
        ("write_file", ".local/share/skald/secrets/new"),
    ] {
        let d = check(&s, &ctx, tool, &json!({"path": path, "content": ""}));
        assert_eq!(d.action, RuleAction::Deny, "{tool} {path}");
        assert!(d.reason.contains("Skald's secrets"), "{}", d.reason);
    }
    // A walk of the whole folder is allowed, and skips the secrets.
    assert_eq!(
        check(&s, &ctx, "grep_files", &json!({"pattern": "k"})).action,
        RuleAction::Allow
    );
    let canonical = canonicalize_for_policy(&secrets, &secrets);
    assert!(denied_paths(&s, &ctx, "grep_files").contains(&canonical));
    assert!(!denied_paths(&s, &ctx, "execute_cmd").contains(&canonical));
}

#[test]
fn skalds_data_directory_is_out_of_the_file_tools_reach_but_its_skills() {
    let (s, _d, mut ctx) = setup();
    // A chat working in the home folder, which holds the data directory.
    let data = ctx.working_dir.join(".local/share/skald");
    for sub in ["logs", "skills/review", "agents", "checkpoints"] {
        std::fs::create_dir_all(data.join(sub)).unwrap();
    }
    std::fs::write(data.join("config.toml"), "").unwrap();
    std::fs::write(data.join("skald.db"), "").unwrap();
    std::fs::write(data.join("skills/review/SKILL.md"), "read me").unwrap();
    ctx.hidden_from_commands
        .push(canonicalize_for_policy(&data, &data));
    // As a session's run context has it: the home folder granted, the skills readable.
    ctx.allow_fs_reads.push(ctx.working_dir.clone());
    ctx.allow_fs_writes.push(ctx.working_dir.clone());
    ctx.allow_fs_reads.push(data.join("skills"));
    #[cfg(unix)]
    std::os::unix::fs::symlink(&data, ctx.working_dir.join("innocent")).unwrap();
    let mut refused = vec![
        ("read_file", ".local/share/skald/config.toml"),
        ("read_file", ".local/share/skald/skald.db"),
        ("read_file", ".local/share/skald/logs/skald.2026-12-05.log"),
        ("read_file", ".local/share/skald/skills/../config.toml"),
        ("search_file", ".local/share/skald/config.toml"),
        ("get_ast_outline", ".local/share/skald/checkpoints"),
        ("list_files", ".local/share/skald"),
        ("list_files", ".local/share/skald/logs"),
        ("grep_files", ".local/share/skald"),
        ("write_file", ".local/share/skald/config.toml"),
        ("edit_file", ".local/share/skald/skills/review/SKILL.md"),
        ("write_file", ".local/share/skald/agents/main.md"),
    ];
    #[cfg(unix)]
    refused.extend([
        ("read_file", "innocent/config.toml"),
        ("list_files", "innocent"),
    ]);
    for (tool, path) in refused {
        let d = check(&s, &ctx, tool, &json!({"path": path, "content": ""}));
        assert_eq!(d.action, RuleAction::Deny, "{tool} {path}");
        assert!(d.reason.contains("Skald's data directory"), "{}", d.reason);
    }
    // Its skills are read as `SKILL.md` asks, and listed.
    for (tool, path) in [
        ("read_file", ".local/share/skald/skills/review/SKILL.md"),
        ("list_files", ".local/share/skald/skills"),
    ] {
        let d = check(&s, &ctx, tool, &json!({"path": path}));
        assert_eq!(d.action, RuleAction::Allow, "{tool} {path}: {}", d.reason);
    }
    // A walk of the home folder is allowed, and skips the data directory.
    assert_eq!(
        check(&s, &ctx, "grep_files", &json!({"pattern": "k"})).action,
        RuleAction::Allow
    );
    let canonical = canonicalize_for_policy(&data, &data);
    assert!(denied_paths(&s, &ctx, "grep_files").contains(&canonical));
    assert!(denied_paths(&s, &ctx, "list_files").contains(&canonical));
    // Commands are kept out by the sandbox instead (`hidden_from_commands`).
    assert!(!denied_paths(&s, &ctx, "execute_cmd").contains(&canonical));
}

#[cfg(unix)]
#[test]
fn symlinks_into_secrets_are_denied_and_out_of_the_tree_need_approval() {
    let (s, _d, ctx) = setup();
    std::os::unix::fs::symlink(
        ctx.working_dir.join("secrets"),
        ctx.working_dir.join("innocent"),
    )
    .unwrap();
    assert_eq!(
        action(&s, &ctx, "read_file", json!({"path": "innocent/key"})),
        RuleAction::Deny
    );
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), ctx.working_dir.join("escape")).unwrap();
    assert_eq!(
        action(&s, &ctx, "read_file", json!({"path": "escape/file"})),
        RuleAction::Require
    );
}

/// The review's finding: with `memory/` or `data/` a symlink out of the chat's folder
/// (a cloned repository's `data -> /`), the seeded folder allows covered every write
/// through it. A relative allow only holds where its folder stays inside.
#[cfg(unix)]
#[test]
fn folder_allow_rules_do_not_follow_symlinks_out() {
    let (s, _d, ctx) = setup();
    let outside = tempfile::tempdir().unwrap();
    let outside = std::fs::canonicalize(outside.path()).unwrap();
    std::os::unix::fs::symlink("/", ctx.working_dir.join("data")).unwrap();
    std::os::unix::fs::symlink(&outside, ctx.working_dir.join("memory")).unwrap();
    let w = |path: &str| json!({"path": path, "content": "x"});
    for tool in &fs_write() {
        for path in [
            "data/etc/cron.d/x",
            "data/tmp/x",
            "memory/x.md",
            "memory/sub/x.md",
            "./memory/x.md",
            "docs/../memory/x.md",
        ] {
            assert_eq!(
                action(&s, &ctx, tool, w(path)),
                RuleAction::Require,
                "{tool} {path}"
            );
        }
    }
    // A user's own rule through the link says the same: relative means "in here".
    s.add_rule(&NewRule {
        group_name: "default".into(),
        tool_pattern: "@fs_write".into(),
        path_pattern: Some("memory/*".into()),
        action: Some(RuleAction::Allow),
        priority: 5,
        ..NewRule::default()
    })
    .unwrap();
    assert_eq!(
        action(&s, &ctx, "write_file", w("memory/x.md")),
        RuleAction::Require
    );
    // A link that stays inside keeps the rule working.
    std::fs::remove_file(ctx.working_dir.join("memory")).unwrap();
    std::fs::create_dir_all(ctx.working_dir.join("notes")).unwrap();
    std::os::unix::fs::symlink(
        ctx.working_dir.join("notes"),
        ctx.working_dir.join("memory"),
    )
    .unwrap();
    assert_eq!(
        action(&s, &ctx, "write_file", w("memory/x.md")),
        RuleAction::Allow
    );
    // Deny rules still follow links: they may cover more, never less.
    assert_eq!(
        action(
            &s,
            &ctx,
            "read_file",
            json!({"path": "secrets/../secrets/k"})
        ),
        RuleAction::Deny
    );
}

/// A grant is the folder as it was when given. A process that swaps a granted folder
/// inside the chat's folder for a link (to the home folder, say) does not carry the grant
/// there: the writes and reads through the link ask, like any outside.
#[test]
fn a_granted_folder_swapped_for_a_link_does_not_carry_the_grant() {
    let (s, _d, mut ctx) = setup();
    let outside = tempfile::tempdir().unwrap();
    let outside = std::fs::canonicalize(outside.path()).unwrap();
    let granted = ctx.working_dir.join("out");
    std::fs::create_dir_all(&granted).unwrap();
    ctx.allow_fs_writes.push(granted.clone());
    ctx.allow_fs_reads.push(granted.clone());
    let w = |path: &str| json!({"path": path, "content": "x"});
    assert_eq!(
        action(&s, &ctx, "write_file", w("out/x")),
        RuleAction::Allow
    );
    std::fs::rename(&granted, ctx.working_dir.join("out.real")).unwrap();
    std::os::unix::fs::symlink(&outside, &granted).unwrap();
    for tool in &fs_write() {
        for path in ["out/x", "out/sub/x", "./out/x"] {
            assert_eq!(
                action(&s, &ctx, tool, w(path)),
                RuleAction::Require,
                "{tool} {path}"
            );
        }
    }
    // A read grant for a folder outside the chat's folder, swapped the same way.
    ctx.working_dir = ctx.working_dir.join("docs");
    assert_eq!(
        action(&s, &ctx, "read_file", json!({"path": "../out/x"})),
        RuleAction::Require
    );
}

/// The review's finding: only the top-level `secrets/` was denied; docs/security.md
/// promises every folder of that name.
#[test]
fn secrets_folders_are_denied_at_any_depth() {
    let (s, _d, ctx) = setup();
    let wd = &ctx.working_dir;
    for dir in ["app/config/secrets", "app/secrets", "a/b/c/secrets/d"] {
        std::fs::create_dir_all(wd.join(dir)).unwrap();
    }
    let reads = [
        json!({"path": "app/config/secrets/prod.key"}),
        json!({"path": "app/secrets"}),
        json!({"path": "a/b/c/secrets/d/e.txt"}),
        json!({"path": "app/x/../secrets/new.key"}),
        json!({"path": wd.join("app/secrets/k").display().to_string()}),
        json!({"path": "/elsewhere/secrets/k"}),
    ];
    for tool in fs_read().iter().chain(&fs_write()) {
        for args in &reads {
            let mut args = args.clone();
            args["content"] = json!("x");
            args["pattern"] = json!("x");
            let d = check(&s, &ctx, tool, &args);
            assert_eq!(d.action, RuleAction::Deny, "{tool} {args}: {}", d.reason);
        }
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(wd.join("app/config/secrets"), wd.join("cfg")).unwrap();
        assert_eq!(
            action(&s, &ctx, "read_file", json!({"path": "cfg/prod.key"})),
            RuleAction::Deny
        );
    }
    // Names that only look alike are files like any other.
    for path in ["app/secrets.md", "app/my-secrets/x", "app/secretsx/y"] {
        assert_eq!(
            action(&s, &ctx, "read_file", json!({"path": path})),
            RuleAction::Allow,
            "{path}"
        );
    }
    // A chat working inside a folder named secrets still reads its own files.
    let inner = RunContext {
        working_dir: wd.join("a/b/c/secrets/d"),
        ..ctx.clone()
    };
    assert_eq!(
        action(&s, &inner, "read_file", json!({"path": "e.txt"})),
        RuleAction::Allow
    );
}

/// The README's own example: a user's allow at the default priority must take effect
/// in front of the seeded `require execute_cmd`, and still never lift a deny.
#[test]
fn a_users_allow_at_the_default_priority_takes_effect() {
    let (s, _d, ctx) = setup();
    s.add_rule(&NewRule {
        group_name: "default".into(),
        tool_pattern: "execute_cmd".into(),
        command_pattern: Some("cargo test".into()),
        action: Some(RuleAction::Allow),
        priority: ALWAYS_PRIORITY,
        ..NewRule::default()
    })
    .unwrap();
    assert_eq!(
        action(&s, &ctx, "execute_cmd", json!({"command": "cargo test"})),
        RuleAction::Allow
    );
    s.add_rule(&NewRule {
        group_name: "default".into(),
        tool_pattern: "execute_cmd".into(),
        command_pattern: Some("cargo test --release".into()),
        action: Some(RuleAction::Deny),
        priority: 500,
        ..NewRule::default()
    })
    .unwrap();
    assert_eq!(
        action(
            &s,
            &ctx,
            "execute_cmd",
            json!({"command": "cargo test --release"})
        ),
        RuleAction::Deny
    );
}

/// "Always allow" says what else the rule allows before anyone agrees to it.
#[test]
fn a_proposal_says_what_else_it_allows() {
    let (_s, _d, ctx) = setup();
    let spec = propose_rule(&ctx, "execute_cmd", &json!({"command": "uv run pytest -x"}));
    let reach = rule_reach(&spec);
    assert!(reach.contains("`uv run pytest`"), "{reach}");
    assert!(reach.contains("whatever arguments follow"), "{reach}");
    assert!(
        reach.contains(&ctx.working_dir.display().to_string()),
        "{reach}"
    );
    let spec = propose_rule(
        &ctx,
        "write_file",
        &json!({"path": "src/app/x.rs", "content": ""}),
    );
    let reach = rule_reach(&spec);
    assert!(reach.contains("src/app/"), "{reach}");
    assert!(reach.contains("new files included"), "{reach}");
}

#[test]
fn group_rules_come_first_and_command_patterns_are_strict() {
    let (s, _d, mut ctx) = setup();
    ctx.group = "dev".into();
    s.add_rule(&NewRule {
        group_name: "dev".into(),
        tool_pattern: "execute_cmd".into(),
        command_pattern: Some("cargo test".into()),
        action: Some(RuleAction::Allow),
        priority: 50,
        ..NewRule::default()
    })
    .unwrap();
    assert_eq!(
        action(
            &s,
            &ctx,
            "execute_cmd",
            json!({"command": "cargo test -p x"})
        ),
        RuleAction::Allow
    );
    assert_eq!(
        action(
            &s,
            &ctx,
            "execute_cmd",
            json!({"command": "cargo test; rm -rf ~"})
        ),
        RuleAction::Require
    );
    assert_eq!(
        action(&s, &ctx, "execute_cmd", json!({"command": "cargo build"})),
        RuleAction::Require
    );
    // Another group does not see it.
    ctx.group = "other".into();
    assert_eq!(
        action(&s, &ctx, "execute_cmd", json!({"command": "cargo test"})),
        RuleAction::Require
    );
}

#[test]
fn deny_beats_grants_and_rules_can_be_scoped() {
    let (s, _d, mut ctx) = setup();
    ctx.allow_fs_writes = vec![ctx.working_dir.clone()];
    assert_eq!(
        action(&s, &ctx, "write_file", json!({"path": "a.txt"})),
        RuleAction::Allow
    );
    assert_eq!(
        action(&s, &ctx, "write_file", json!({"path": "secrets/a"})),
        RuleAction::Deny
    );
    // A rule scoped to another project does not apply here.
    s.add_rule(&NewRule {
        group_name: "default".into(),
        tool_pattern: "execute_cmd".into(),
        working_dir: Some("/some/other/project".into()),
        action: Some(RuleAction::Allow),
        priority: 1,
        ..NewRule::default()
    })
    .unwrap();
    assert_eq!(
        action(&s, &ctx, "execute_cmd", json!({"command": "ls"})),
        RuleAction::Require
    );
    // An agent-specific rule applies to that agent only.
    s.add_rule(&NewRule {
        group_name: "default".into(),
        tool_pattern: "exec*".into(),
        agent_id: Some("researcher".into()),
        action: Some(RuleAction::Deny),
        priority: 1,
        ..NewRule::default()
    })
    .unwrap();
    assert_eq!(
        action(&s, &ctx, "execute_cmd", json!({"command": "ls"})),
        RuleAction::Require
    );
    ctx.agent_id = "researcher".into();
    assert_eq!(
        action(&s, &ctx, "execute_cmd", json!({"command": "ls"})),
        RuleAction::Deny
    );
}

#[test]
fn a_folder_scoped_rule_also_weighs_the_folder_a_command_runs_in() {
    let (s, _d, ctx) = setup();
    let here = ctx.working_dir.display().to_string();
    let elsewhere = tempfile::tempdir().unwrap();
    let elsewhere = std::fs::canonicalize(elsewhere.path()).unwrap();
    let elsewhere = elsewhere.display().to_string();
    for (pattern, act) in [("touch", RuleAction::Allow), ("rm", RuleAction::Deny)] {
        s.add_rule(&NewRule {
            group_name: "default".into(),
            tool_pattern: "execute_cmd".into(),
            command_pattern: Some(pattern.into()),
            working_dir: Some(here.clone()),
            action: Some(act),
            priority: 1,
            ..NewRule::default()
        })
        .unwrap();
    }
    let cmd = |c: &str, workdir: Option<&str>| match workdir {
        Some(w) => json!({"command": c, "workdir": w}),
        None => json!({"command": c}),
    };
    assert_eq!(
        action(&s, &ctx, "execute_cmd", cmd("touch a", None)),
        RuleAction::Allow
    );
    assert_eq!(
        action(&s, &ctx, "execute_cmd", cmd("touch a", Some(&here))),
        RuleAction::Allow
    );
    // Allowed here is not allowed in another folder.
    assert_eq!(
        action(&s, &ctx, "execute_cmd", cmd("touch a", Some(&elsewhere))),
        RuleAction::Require
    );
    // A deny for this folder holds from a session elsewhere that runs in it.
    let mut away = ctx.clone();
    away.working_dir = PathBuf::from(&elsewhere);
    assert_eq!(
        action(&s, &away, "execute_cmd", cmd("rm -rf x", Some(&here))),
        RuleAction::Deny
    );
    assert_eq!(
        action(&s, &away, "execute_cmd", cmd("rm -rf x", None)),
        RuleAction::Require
    );
}

#[test]
fn a_store_that_cannot_be_read_means_approval() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("skald.db");
    let store = Store::open(&db).unwrap();
    // Another connection breaks the rules table under the open store.
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("DROP TABLE approval_rules;")
        .unwrap();
    let ctx = RunContext {
        group: "default".into(),
        working_dir: dir.path().to_path_buf(),
        ..RunContext::default()
    };
    let d = check(&store, &ctx, "write_todos", &json!({}));
    assert_eq!(
        d.action,
        RuleAction::Require,
        "even a tool the defaults allow"
    );
    assert!(d.reason.contains("could not be read"), "{}", d.reason);
}

#[test]
fn always_allow_proposes_general_but_safe_rules() {
    let (s, _d, ctx) = setup();
    let p = propose_rule(
        &ctx,
        "execute_cmd",
        &json!({"command": "cargo test -p core"}),
    );
    assert_eq!(p.command_pattern.as_deref(), Some("cargo test"));
    assert_eq!(
        p.working_dir.as_deref(),
        Some(ctx.working_dir.to_str().unwrap())
    );
    let p = propose_rule(&ctx, "edit_file", &json!({"path": "src/app/main.rs"}));
    assert_eq!(
        (p.tool_pattern.as_str(), p.path_pattern.as_deref()),
        ("@fs_write", Some("src/app/*"))
    );
    let p = propose_rule(&ctx, "write_file", &json!({"path": "README.md"}));
    assert_eq!(p.path_pattern.as_deref(), Some("README.md"));
    let p = propose_rule(&ctx, "mcp__github__create_issue", &json!({}));
    assert_eq!(p.tool_pattern, "mcp__github__create_issue");
    // Stored, the proposal allows the next such call but not a smuggled one.
    let p = propose_rule(&ctx, "execute_cmd", &json!({"command": "cargo test"}));
    s.add_rule(&p.to_new_rule()).unwrap();
    assert_eq!(
        action(
            &s,
            &ctx,
            "execute_cmd",
            json!({"command": "cargo test --doc"})
        ),
        RuleAction::Allow
    );
    assert_eq!(
        action(
            &s,
            &ctx,
            "execute_cmd",
            json!({"command": "cargo test; rm x"})
        ),
        RuleAction::Require
    );
    // Not in another project.
    let mut elsewhere = ctx.clone();
    elsewhere.working_dir = std::env::temp_dir();
    assert_eq!(
        action(
            &s,
            &elsewhere,
            "execute_cmd",
            json!({"command": "cargo test"})
        ),
        RuleAction::Require
    );
}

#[test]
fn a_deny_anywhere_wins_and_deny_commands_hit_smuggled_parts() {
    let (s, _d, mut ctx) = setup();
    ctx.group = "strict".into();
    s.add_rule(&NewRule {
        group_name: "strict".into(),
        tool_pattern: "*".into(),
        action: Some(RuleAction::Require),
        priority: 0,
        ..NewRule::default()
    })
    .unwrap();
    // The group's require comes first, but the default secrets/ deny still wins.
    assert_eq!(
        action(&s, &ctx, "read_file", json!({"path": "secrets/key"})),
        RuleAction::Deny
    );
    ctx.group = "default".into();
    s.add_rule(&NewRule {
        group_name: "default".into(),
        tool_pattern: "execute_cmd".into(),
        command_pattern: Some("git push".into()),
        action: Some(RuleAction::Deny),
        priority: 100,
        ..NewRule::default()
    })
    .unwrap();
    s.add_rule(&NewRule {
        group_name: "default".into(),
        tool_pattern: "execute_cmd".into(),
        command_pattern: Some("git".into()),
        action: Some(RuleAction::Allow),
        priority: 1,
        ..NewRule::default()
    })
    .unwrap();
    assert_eq!(
        action(&s, &ctx, "execute_cmd", json!({"command": "git status"})),
        RuleAction::Allow
    );
    for cmd in [
        "git status && git push --force",
        "git -c x=y push",
        "git push > /dev/null",
    ] {
        assert_eq!(
            action(&s, &ctx, "execute_cmd", json!({"command": cmd})),
            RuleAction::Deny,
            "{cmd}"
        );
    }
}

#[test]
fn proposals_never_reach_above_the_project() {
    let (_s, _d, ctx) = setup();
    let p = propose_rule(&ctx, "list_files", &json!({"path": "docs"}));
    assert_eq!(p.path_pattern.as_deref(), Some("docs/*"));
    let p = propose_rule(&ctx, "read_file", &json!({"path": "/etc/hosts"}));
    assert_eq!(
        p.path_pattern.as_deref(),
        Some("/etc/hosts"),
        "exactly the file outside"
    );
    let p = propose_rule(&ctx, "list_files", &json!({"path": ".."}));
    assert!(
        !p.path_pattern.unwrap().ends_with("/*"),
        "never a parent subtree"
    );
}

#[test]
fn a_proposal_shows_the_earlier_calls_it_would_have_matched() {
    let (s, _d, ctx) = setup();
    let sess = s
        .create_session(&skald_store::NewSession::default())
        .unwrap();
    for (id, cmd) in [
        ("a", "cargo test"),
        ("b", "cargo build"),
        ("c", "cargo test -q"),
    ] {
        s.insert_tool_call(&skald_store::NewToolCall {
            tool_call_id: id.into(),
            session_id: sess.id,
            stack_id: None,
            message_id: None,
            name: "execute_cmd".into(),
            args: json!({"command": cmd}),
            status: skald_api::ToolCallStatus::Done,
        })
        .unwrap();
    }
    let p = propose_rule(&ctx, "execute_cmd", &json!({"command": "cargo test"}));
    let ids: Vec<String> = would_match(&s, sess.id, &ctx, &p)
        .unwrap()
        .into_iter()
        .map(|c| c.tool_call_id)
        .collect();
    assert_eq!(ids, ["a", "c"]);
}

/// The preview as the Inbox item carries it (JSON), which these tests read.
fn preview(tool: &str, args: &serde_json::Value, wd: &Path) -> serde_json::Value {
    serde_json::to_value(write_preview(tool, args, wd)).unwrap()
}

#[test]
fn write_previews_show_before_and_after() {
    let (_s, _d, ctx) = setup();
    std::fs::write(ctx.working_dir.join("f.txt"), "a\nb\nc\n").unwrap();
    let wd = &ctx.working_dir;
    let p = preview(
        "insert_at_line",
        &json!({"path": "f.txt", "line": 2, "content": "X"}),
        wd,
    );
    assert_eq!(
        (p["old"].as_str(), p["new"].as_str()),
        (Some("a\nb\nc\n"), Some("a\nX\nb\nc\n"))
    );
    let p = preview(
        "replace_lines",
        &json!({"path": "f.txt", "start_line": 1, "end_line": 2, "content": "Y"}),
        wd,
    );
    assert_eq!(p["new"], "Y\nc\n");
    let p = preview(
        "edit_file",
        &json!({"path": "f.txt", "old": "c", "new": "C"}),
        wd,
    );
    assert_eq!(p["new"], "a\nb\nC\n");
    let p = preview(
        "write_file",
        &json!({"path": "new.txt", "content": "hi"}),
        wd,
    );
    assert!(p["old"].is_null());
    assert_eq!(p["new"], "hi");
    assert!(preview("read_file", &json!({"path": "f.txt"}), wd).is_null());
}

#[test]
fn a_preview_never_blows_up() {
    let (_s, _d, ctx) = setup();
    std::fs::write(ctx.working_dir.join("big.txt"), " ".repeat(100_000)).unwrap();
    let huge = "x".repeat(4096);
    let p = preview(
        "edit_file",
        &json!({"path": "big.txt", "old": " ", "new": huge, "replace_all": true}),
        &ctx.working_dir,
    );
    assert!(p["new"].is_null(), "too big to preview");
    let p = preview(
        "edit_file",
        &json!({"path": "big.txt", "old": "", "new": "x"}),
        &ctx.working_dir,
    );
    assert!(p["new"].is_null());
}

#[test]
fn bypasses_cover_their_scope_until_they_expire() {
    let registry = crate::builtin_registry().unwrap();
    let b = Bypasses::default();
    assert!(!b.covers(1, "execute_cmd", &registry));
    b.grant(1, BypassScope::Category("shell".into()), None);
    assert!(b.covers(1, "execute_cmd", &registry));
    assert!(!b.covers(1, "write_file", &registry));
    assert!(!b.covers(2, "execute_cmd", &registry), "per session");
    b.grant(
        3,
        BypassScope::McpServer("github".into()),
        Some(std::time::Duration::ZERO),
    );
    assert!(!b.covers(3, "mcp__github__x", &registry), "expired");
    b.grant(
        4,
        BypassScope::McpServer("github".into()),
        Some(std::time::Duration::from_secs(900)),
    );
    assert!(b.covers(4, "mcp__github__x", &registry));
    assert!(!b.covers(4, "mcp__gitlab__x", &registry));
}

#[test]
fn unconditional_denies_hide_tools_and_path_denies_do_not() {
    let (s, _d, ctx) = setup();
    let registry = crate::builtin_registry().unwrap();
    let names: Vec<String> = registry.tools().map(|t| t.name().to_string()).collect();
    let all = || names.iter().map(String::as_str);
    assert!(
        hidden_tools(&s, &ctx, all()).is_empty(),
        "secrets/* is per call"
    );
    s.add_rule(&NewRule {
        group_name: "default".into(),
        tool_pattern: "execute_cmd".into(),
        action: Some(RuleAction::Deny),
        priority: 1,
        ..NewRule::default()
    })
    .unwrap();
    let hidden = hidden_tools(&s, &ctx, all());
    assert_eq!(hidden.into_iter().collect::<Vec<_>>(), ["execute_cmd"]);
}

/// In the sandbox a command no rule names runs unasked, a rule naming it still decides, a
/// deny still denies, and asking for more always asks — unless an allow rule with the
/// network already gave what the grant asks for.
#[test]
fn the_sandbox_changes_what_asks_and_grants_always_ask() {
    let (s, _d, mut ctx) = setup();
    if !skald_sandbox::availability().is_ready() {
        // The unasked run needs a working sandbox; where there is none, everything asks.
        ctx.sandbox.mode = skald_api::SandboxMode::WorkspaceWrite;
        assert_eq!(
            action(&s, &ctx, "execute_cmd", json!({"command": "ls"})),
            RuleAction::Require
        );
        return;
    }
    use RuleAction::*;
    let cmd = |c: &str| json!({"command": c});
    // Off (a hand-made run context): as before.
    assert_eq!(action(&s, &ctx, "execute_cmd", cmd("ls")), Require);
    ctx.sandbox.mode = skald_api::SandboxMode::WorkspaceWrite;
    assert_eq!(action(&s, &ctx, "execute_cmd", cmd("ls")), Allow);
    let add = |pattern: &str, action: RuleAction, network: bool| {
        s.add_rule(&NewRule {
            group_name: "default".into(),
            tool_pattern: "execute_cmd".into(),
            command_pattern: Some(pattern.into()),
            action: Some(action),
            priority: 5,
            network,
            ..NewRule::default()
        })
        .unwrap()
    };
    add("git push", Require, false);
    add("rm", Deny, false);
    assert_eq!(
        action(&s, &ctx, "execute_cmd", cmd("git push origin")),
        Require
    );
    assert_eq!(action(&s, &ctx, "execute_cmd", cmd("rm -rf x")), Deny);
    let grant = |extra: Value| {
        let mut a = cmd("curl https://example.com");
        a["sandbox_grant"] = extra;
        a
    };
    let asking = check(
        &s,
        &ctx,
        "execute_cmd",
        &grant(json!({"network": true, "reason": "docs"})),
    );
    assert_eq!(asking.action, Require);
    assert!(
        asking.reason.contains("use the network"),
        "{}",
        asking.reason
    );
    assert!(!rule_gives_network(
        &s,
        &ctx,
        "execute_cmd",
        &cmd("curl https://example.com")
    ));
    // An allow rule with the network covers a network grant, not a folder or no sandbox.
    add("curl", Allow, true);
    assert_eq!(
        action(&s, &ctx, "execute_cmd", grant(json!({"network": true}))),
        Allow
    );
    assert!(rule_gives_network(
        &s,
        &ctx,
        "execute_cmd",
        &cmd("curl https://example.com")
    ));
    assert_eq!(
        action(&s, &ctx, "execute_cmd", grant(json!({"unsandboxed": true}))),
        Require
    );
    assert_eq!(
        action(&s, &ctx, "execute_cmd", grant(json!({"write": ["/srv"]}))),
        Require
    );
    assert_eq!(
        action(&s, &ctx, "execute_cmd", grant(json!({"write": "nope"}))),
        Require
    );
    // "Always allow" on an approved network grant proposes a rule with the network.
    assert!(propose_rule(&ctx, "execute_cmd", &grant(json!({"network": true}))).network);
    assert!(!propose_rule(&ctx, "execute_cmd", &grant(json!({"unsandboxed": true}))).network);
    // ask = "always": every command asks again.
    ctx.sandbox.always_ask = true;
    assert_eq!(action(&s, &ctx, "execute_cmd", cmd("ls")), Require);
}

#[test]
fn writes_git_or_skald_act_on_later_always_ask_and_never_in_a_worktree() {
    let (store, _dir, mut ctx) = setup();
    let dir = ctx.working_dir.clone();
    // Even where a rule allows every write.
    store
        .add_rule(&NewRule {
            group_name: "default".into(),
            tool_pattern: "@fs_write".into(),
            path_pattern: None,
            command_pattern: None,
            agent_id: None,
            working_dir: None,
            action: Some(RuleAction::Allow),
            priority: 1,
            note: String::new(),
            network: false,
            domain_pattern: None,
        })
        .unwrap();
    let write = |ctx: &RunContext, path: &str| {
        action(
            &store,
            ctx,
            tn::WRITE_FILE,
            json!({"path": dir.join(path), "content": "x"}),
        )
    };
    assert_eq!(write(&ctx, "notes.txt"), RuleAction::Allow);
    for path in [
        ".git",
        ".git/hooks/pre-commit",
        ".git/config",
        "sub/.git/config",
        ".skald/hooks.json",
    ] {
        assert_eq!(write(&ctx, path), RuleAction::Require, "{path}");
        let args = json!({"path": dir.join(path), "content": "x"});
        let checked = check_call(&store, &ctx, tn::WRITE_FILE, &args).path;
        assert!(
            always_asks(tn::WRITE_FILE, &args, checked.as_deref()),
            "{path}"
        );
    }
    // Reading them is as before.
    let read = action(
        &store,
        &ctx,
        tn::READ_FILE,
        json!({"path": dir.join(".git/config")}),
    );
    assert_ne!(read, RuleAction::Deny);
    ctx.worktree_source = Some(PathBuf::from("/somewhere/else"));
    assert_eq!(write(&ctx, ".git/config"), RuleAction::Deny);
    assert_eq!(write(&ctx, "notes.txt"), RuleAction::Allow);
}

fn web_rule(store: &Store, domain: &str, action: RuleAction) {
    store
        .add_rule(&NewRule {
            group_name: "default".into(),
            tool_pattern: tn::WEB_FETCH.into(),
            action: Some(action),
            priority: ALWAYS_PRIORITY,
            domain_pattern: Some(domain.into()),
            ..NewRule::default()
        })
        .unwrap();
}

#[test]
fn a_fetch_asks_unless_a_rule_names_its_host_and_a_deny_for_a_host_wins() {
    let (store, _d, ctx) = setup();
    let fetch = |url: &str| action(&store, &ctx, tn::WEB_FETCH, json!({ "url": url }));
    assert_eq!(fetch("https://docs.rs/serde"), RuleAction::Require);
    web_rule(&store, "docs.rs", RuleAction::Allow);
    web_rule(&store, "*.python.org", RuleAction::Allow);
    web_rule(&store, "evil.docs.rs", RuleAction::Deny);
    assert_eq!(fetch("https://docs.rs/serde"), RuleAction::Allow);
    assert_eq!(fetch("http://DOCS.RS:8080/x"), RuleAction::Allow);
    assert_eq!(fetch("https://docs.python.org/3/"), RuleAction::Allow);
    // Neighbours of the allowed hosts still ask.
    for url in [
        "https://docs.rs.attacker.com/",
        "https://notdocs.rs/",
        "https://python.org/",
        "https://user@docs.rs/",
        "ftp://docs.rs/",
        "not a url",
    ] {
        assert_eq!(fetch(url), RuleAction::Require, "{url}");
    }
    assert_eq!(fetch("https://evil.docs.rs/"), RuleAction::Deny);
    // A host rule is about web_fetch's URL: it never matches another tool's call.
    assert_eq!(
        action(
            &store,
            &ctx,
            tn::READ_FILE,
            json!({"path": "/etc/passwd", "url": "https://docs.rs"})
        ),
        RuleAction::Require
    );
}

#[test]
fn only_allow_rules_without_a_wildcard_name_hosts_for_private_addresses() {
    let (store, _d, ctx) = setup();
    web_rule(&store, "127.0.0.1:8080", RuleAction::Allow);
    web_rule(&store, "*.corp", RuleAction::Allow);
    web_rule(&store, "10.0.0.5", RuleAction::Deny);
    web_rule(&store, "wiki.corp", RuleAction::Require);
    assert_eq!(
        web::named_hosts(&store, &ctx, tn::WEB_FETCH),
        ["127.0.0.1:8080"]
    );
    // Another folder's rule names nothing here.
    store
        .add_rule(&NewRule {
            group_name: "default".into(),
            tool_pattern: tn::WEB_FETCH.into(),
            action: Some(RuleAction::Allow),
            priority: ALWAYS_PRIORITY,
            domain_pattern: Some("intranet".into()),
            working_dir: Some("/somewhere/else".into()),
            ..NewRule::default()
        })
        .unwrap();
    assert_eq!(
        web::named_hosts(&store, &ctx, tn::WEB_FETCH),
        ["127.0.0.1:8080"]
    );
}

#[test]
fn always_allow_proposes_the_fetched_host_and_its_port_when_local() {
    let (store, _d, ctx) = setup();
    let propose = |url: &str| propose_rule(&ctx, tn::WEB_FETCH, &json!({ "url": url }));
    let spec = propose("https://docs.rs/serde/latest/serde/");
    assert_eq!(spec.tool_pattern, tn::WEB_FETCH);
    assert_eq!(spec.domain_pattern.as_deref(), Some("docs.rs"));
    assert_eq!(spec.path_pattern, None);
    assert!(
        rule_reach(&spec).contains("any page on docs.rs"),
        "{}",
        rule_reach(&spec)
    );
    assert_eq!(
        propose("https://example.com:8443/")
            .domain_pattern
            .as_deref(),
        Some("example.com:8443")
    );
    assert_eq!(
        propose("http://localhost/").domain_pattern.as_deref(),
        Some("localhost:80")
    );
    assert_eq!(
        propose("http://192.168.1.1/admin")
            .domain_pattern
            .as_deref(),
        Some("192.168.1.1:80")
    );
    assert_eq!(
        propose("http://[::1]:3000/").domain_pattern.as_deref(),
        Some("[::1]:3000")
    );
    // Stored, the proposal allows that host and nothing beside it.
    store.add_rule(&spec.to_new_rule()).unwrap();
    assert_eq!(
        action(
            &store,
            &ctx,
            tn::WEB_FETCH,
            json!({"url": "https://docs.rs/x"})
        ),
        RuleAction::Allow
    );
    assert_eq!(
        action(
            &store,
            &ctx,
            tn::WEB_FETCH,
            json!({"url": "https://crates.io/"})
        ),
        RuleAction::Require
    );
}

#[test]
fn the_web_group_names_the_web_tools() {
    assert!(tool_matches("@web", tn::WEB_FETCH));
    assert!(tool_matches("@web", tn::WEB_SEARCH));
    assert!(!tool_matches("@web", tn::READ_FILE));
    assert!(!tool_matches("@web", tn::EXECUTE_CMD));
}

#[test]
fn a_language_server_outside_the_sandbox_asks_and_only_the_person_lifts_it() {
    let (store, _d, mut ctx) = setup();
    let args = json!({"path": "main.py"});
    ctx.sandbox.mode = skald_api::SandboxMode::Off;
    for tool in [tn::DIAGNOSTICS, tn::GO_TO_DEFINITION, tn::FIND_REFERENCES] {
        // A read inside the folder, which would otherwise run unasked.
        assert_eq!(
            action(&store, &ctx, tool, args.clone()),
            RuleAction::Require,
            "{tool}"
        );
        // A hook's allow or a bypass does not lift it.
        assert!(always_asks_in(&ctx, tool, &args, None), "{tool}");
    }
    assert!(!always_asks_in(&ctx, tn::READ_FILE, &args, None));
    // `[sandbox] ask = "always"`: every command asks, and so does a language server.
    ctx.sandbox.mode = skald_api::SandboxMode::WorkspaceWrite;
    ctx.sandbox.always_ask = true;
    if ctx.sandbox.confines() {
        assert_eq!(
            action(&store, &ctx, tn::DIAGNOSTICS, args.clone()),
            RuleAction::Require
        );
        ctx.sandbox.always_ask = false;
        assert_eq!(
            action(&store, &ctx, tn::DIAGNOSTICS, args.clone()),
            RuleAction::Allow
        );
        assert!(!always_asks_in(&ctx, tn::DIAGNOSTICS, &args, None));
    }
    // A rule allowing the tool by name lifts the ask where there is no sandbox.
    ctx.sandbox.mode = skald_api::SandboxMode::Off;
    store
        .add_rule(&NewRule {
            group_name: "default".into(),
            tool_pattern: tn::DIAGNOSTICS.into(),
            action: Some(RuleAction::Allow),
            priority: ALWAYS_PRIORITY,
            ..NewRule::default()
        })
        .unwrap();
    assert_eq!(
        action(&store, &ctx, tn::DIAGNOSTICS, args.clone()),
        RuleAction::Allow
    );
    assert_eq!(
        action(&store, &ctx, tn::FIND_REFERENCES, args),
        RuleAction::Require
    );
}
