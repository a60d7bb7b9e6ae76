//! Properties of the path policy, on a real folder tree with symlinks pointing inside the
//! chat's folder, outside it and into `secrets/`: whatever path a model writes, a file tool
//! is allowed without asking only where the operating system would really open a file
//! inside the chat's folder, and never inside its `secrets/` folder or Skald's own secrets.
//! 10,000 generated paths per property (`PROPTEST_CASES` raises it for longer runs).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use proptest::prelude::*;
use serde_json::json;
use skald_core::approval::{RunContext, check};
use skald_store::{RuleAction, Store};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    data_secrets: PathBuf,
    store: Store,
}

/// root/{a/b/, secrets/, data/secrets/, in → a, out → ../outside, sec → secrets,
/// loop → ., up → ..}; outside/{x}. `data/secrets` stands for Skald's own secrets.
fn tree() -> &'static Tree {
    static TREE: OnceLock<Tree> = OnceLock::new();
    TREE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("root");
        let outside = base.join("outside");
        for d in ["a/b", "secrets", "data/secrets"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::create_dir_all(outside.join("x")).unwrap();
        std::fs::write(root.join("a/b/f"), "f").unwrap();
        std::fs::write(root.join("secrets/key"), "k").unwrap();
        std::fs::write(outside.join("x/f"), "f").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::symlink;
            symlink(root.join("a"), root.join("in")).unwrap();
            symlink(&outside, root.join("out")).unwrap();
            symlink(root.join("secrets"), root.join("sec")).unwrap();
            symlink(".", root.join("loop")).unwrap();
            symlink("..", root.join("up")).unwrap();
        }
        let data_secrets = root.join("data/secrets");
        Tree {
            _dir: dir,
            root,
            outside,
            data_secrets,
            store: Store::open_in_memory().unwrap(),
        }
    })
}

/// Where the operating system opens `path`: each existing component followed (symlinks
/// resolved, `..` taken from where a symlink really led), the rest appended.
fn real_location(path: &Path) -> PathBuf {
    let mut cur = PathBuf::from("/");
    for comp in path.components() {
        match comp {
            std::path::Component::RootDir | std::path::Component::Prefix(_) => {}
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                cur.pop();
            }
            std::path::Component::Normal(name) => {
                let next = cur.join(name);
                cur = std::fs::canonicalize(&next).unwrap_or(next);
            }
        }
    }
    cur
}

fn under(p: &Path, dir: &Path) -> bool {
    p.starts_with(dir)
}

fn ctx(t: &Tree) -> RunContext {
    RunContext {
        group: "default".into(),
        agent_id: "main".into(),
        working_dir: t.root.clone(),
        // What the engine's `Withheld` protects once its secrets are open.
        protected: vec![t.data_secrets.clone()],
        ..RunContext::default()
    }
}

/// Relative or absolute paths made of the tree's names, dots and symlinks.
fn paths() -> impl Strategy<Value = String> {
    let part = prop::sample::select(vec![
        "a",
        "b",
        "f",
        "..",
        ".",
        "secrets",
        "key",
        "data",
        "in",
        "out",
        "sec",
        "loop",
        "up",
        "x",
        "new",
        "",
        "Secrets",
        "a\u{0301}",
    ]);
    (
        prop::sample::select(vec!["", "/root/", "/outside/", "/"]),
        prop::collection::vec(part, 1..8),
    )
        .prop_map(|(prefix, parts)| {
            let t = tree();
            let prefix = match prefix {
                "/root/" => format!("{}/", t.root.display()),
                "/outside/" => format!("{}/", t.outside.display()),
                p => p.to_string(),
            };
            format!("{prefix}{}", parts.join("/"))
        })
}

proptest! {
    #![proptest_config(skald_testkit::property_config())]

    #[test]
    fn reads_are_allowed_only_where_the_os_opens_a_file_inside_the_folder(raw in paths()) {
        let t = tree();
        let tool_opens = skald_base::path::resolve_in(&raw, &t.root);
        let real = real_location(&tool_opens);
        for tool in ["read_file", "list_files", "search_file", "get_ast_outline"] {
            let d = check(&t.store, &ctx(t), tool, &json!({"path": raw}));
            if d.action == RuleAction::Allow {
                prop_assert!(under(&real, &t.root), "{tool} {raw:?} allowed, opens {real:?}");
                prop_assert!(!under(&real, &t.root.join("secrets")) && !under(&real, &t.data_secrets),
                    "{tool} {raw:?} allowed into secrets: {real:?}");
            }
            if under(&real, &t.data_secrets) || under(&real, &t.root.join("secrets")) {
                prop_assert_eq!(d.action, RuleAction::Deny, "{} {:?} -> {:?}", tool, raw, real);
            }
        }
    }

    #[test]
    fn writes_never_pass_without_asking_and_never_reach_secrets(raw in paths()) {
        let t = tree();
        let real = real_location(&skald_base::path::resolve_in(&raw, &t.root));
        for tool in ["write_file", "edit_file", "insert_at_line", "replace_lines"] {
            let d = check(&t.store, &ctx(t), tool, &json!({"path": raw, "content": ""}));
            // No write grant here: outside memory/ and data/ every write is asked about.
            if d.action == RuleAction::Allow {
                prop_assert!(under(&real, &t.root), "{tool} {raw:?} allowed, writes {real:?}");
            }
            if under(&real, &t.data_secrets) || under(&real, &t.root.join("secrets")) {
                prop_assert_eq!(d.action, RuleAction::Deny, "{} {:?} -> {:?}", tool, raw, real);
            }
        }
    }
}
