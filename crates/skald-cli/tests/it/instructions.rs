//! AGENTS.md files and `.agents/skills` (docs/instructions.md), end to end: what a real
//! `skald exec` sends the scripted model, and what its events name.

use crate::common::{events, ok, skald};
use serde_json::Value;
use skald_testkit::{ScriptedServer, answer, tool_call};
use std::path::Path;

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// The system part of a recorded request.
fn system_of(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn agents_md_files_reach_the_model_nearest_last_and_the_events_name_them() {
    let data = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    write(&root.join("AGENTS.md"), "Use tabs. ROOT-MARKER\n");
    write(&root.join("pkg/AGENTS.md"), "Use spaces here. PKG-MARKER\n");
    write(
        &root.join("pkg/.agents/skills/release/SKILL.md"),
        "---\nname: release\ndescription: Cut a release\n---\n",
    );
    let user = data.path().join("user-config/skald/AGENTS.md");
    write(&user, "I like short answers. USER-MARKER\n");
    let server = ScriptedServer::new(vec![answer("done")]);
    let out = skald(data.path(), Some(&server))
        .args(["exec", "--json", "--cwd"])
        .arg(root.join("pkg"))
        .arg("hello")
        .output()
        .unwrap();
    let evs = events(&ok(&out));
    let system = system_of(&server.recorded()[0].body);
    let at = |m: &str| {
        system
            .find(m)
            .unwrap_or_else(|| panic!("{m} not in {system}"))
    };
    assert!(at("USER-MARKER") < at("ROOT-MARKER"));
    assert!(at("ROOT-MARKER") < at("PKG-MARKER"));
    assert!(system.contains("- release: Cut a release ("), "{system}");
    let context = evs
        .iter()
        .find(|e| e["type"] == "context")
        .expect("a context event");
    let paths: Vec<&str> = context["context"]["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    let expect = [
        user.to_string_lossy().into_owned(),
        root.join("AGENTS.md").to_string_lossy().into_owned(),
        root.join("pkg/AGENTS.md").to_string_lossy().into_owned(),
    ];
    assert_eq!(paths, expect);
    assert_eq!(context["context"]["instructions"][0]["source"], "user");
    assert_eq!(context["context"]["skills"][0]["name"], "release");
    assert_eq!(
        context["context"]["project_root"],
        root.to_string_lossy().as_ref()
    );
    // Before the first round: the turn's own events first, then what it was given.
    let order: Vec<&str> = evs.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let ctx = order.iter().position(|t| *t == "context").unwrap();
    let first_token = order.iter().position(|t| *t == "token_delta").unwrap();
    assert!(ctx < first_token, "{order:?}");

    // Without --json, one line on stderr; stdout is the answer.
    let server = ScriptedServer::new(vec![answer("done")]);
    let out = skald(data.path(), Some(&server))
        .args(["exec", "--cwd"])
        .arg(root.join("pkg"))
        .arg("hello")
        .output()
        .unwrap();
    assert_eq!(ok(&out).trim(), "done");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("· instructions: "), "{err}");
    assert!(err.contains("pkg/AGENTS.md"), "{err}");
}

#[test]
fn a_sub_agent_is_given_the_folders_agents_md_and_the_persons_skills_are_readable() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let home_path = home.path().canonicalize().unwrap();
    write(
        &work.path().join("AGENTS.md"),
        "Cite sources. FOLDER-MARKER\n",
    );
    let skill = home_path.join(".agents/skills/notes/SKILL.md");
    write(
        &skill,
        "---\nname: notes\ndescription: Keep notes\n---\nWrite NOTES-BODY.\n",
    );
    let read = format!(
        r#"{{"path": {}}}"#,
        serde_json::to_string(&skill.to_string_lossy()).unwrap()
    );
    let server = ScriptedServer::new(vec![
        tool_call("c1", "read_file", &read),
        tool_call(
            "c2",
            "execute_task",
            r#"{"mode": "sync", "title": "Look", "description": "Look around", "agent_id": "researcher", "prompt": "look"}"#,
        ),
        answer("found it"),
        answer("done"),
    ]);
    let out = skald(data.path(), Some(&server))
        .env("HOME", &home_path)
        .args(["exec", "--json", "--cwd"])
        .arg(work.path())
        .arg("go")
        .output()
        .unwrap();
    let evs = events(&ok(&out));
    // The person's skill, outside the folder, is read without asking.
    let done = evs
        .iter()
        .find(|e| e["type"] == "tool_done" && e["tool_call_id"] == "c1")
        .unwrap_or_else(|| panic!("{evs:?}"));
    assert!(
        done["result"].as_str().unwrap().contains("NOTES-BODY"),
        "{done}"
    );
    let requests = server.recorded();
    assert!(system_of(&requests[0].body).contains("FOLDER-MARKER"));
    // The third request is the sub-agent's first round: its own prompt, and the folder's
    // AGENTS.md.
    let sub = system_of(&requests[2].body);
    assert!(sub.starts_with("You are a meticulous researcher"), "{sub}");
    assert!(sub.contains("FOLDER-MARKER"), "{sub}");
    // One context event: the sub-agent's turn does not repeat it.
    assert_eq!(evs.iter().filter(|e| e["type"] == "context").count(), 1);
}
