//! grep_files finds exactly what ripgrep finds, on a fixture tree with the usual traps and
//! on real source code. Needs `rg` (scripts/setup.sh --test installs it).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use serde_json::{Value, json};
use skald_api::{ExecutionOutcome, Tool, ToolScope};
use skald_tools::GrepFiles;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

fn rg(root: &Path, args: &[&str]) -> BTreeSet<String> {
    let out = Command::new("rg")
        .current_dir(root)
        .args(skald_testkit::RG_SAME_WALK)
        .arg("--no-heading")
        .args(args)
        .output()
        .expect("ripgrep (`rg`) must be installed for this test: run scripts/setup.sh --test");
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "rg failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim_start_matches("./").to_string())
        .collect()
}

async fn ours(root: &Path, args: Value) -> BTreeSet<String> {
    let mut args = args;
    args["max_results"] = json!(1000);
    let mut all = BTreeSet::new();
    let mut offset = 0;
    loop {
        args["offset"] = json!(offset);
        let exec = GrepFiles.run(&(), args.clone());
        let outcome = ToolScope::new(root).run(exec.wait()).await;
        let ExecutionOutcome::Completed(text) = outcome else {
            panic!("grep_files failed: {outcome:?}");
        };
        let mut more = false;
        for line in text.lines() {
            if line.starts_with('[') && line.contains("more") {
                more = true;
            } else if !line.starts_with("No match") {
                all.insert(line.to_string());
            }
        }
        if !more {
            return all;
        }
        offset += 1000;
    }
}

fn fixture() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let files: &[(&str, &str)] = &[
        (
            "src/main.rs",
            "fn main() {\n    println!(\"Hello, TODO\");\n}\n",
        ),
        (
            "src/lib.rs",
            "//! todo: docs\npub fn add(a: i32, b: i32) -> i32 { a + b }\n// TODO(x): more\n",
        ),
        ("src/deep/a/b/c.py", "def f():\n    return 'todo'  # TODO\n"),
        ("docs/guide.md", "# Guide\nUnicode: naïve café TODO ✓\n"),
        (".github/workflows/ci.yml", "name: ci # TODO\n"),
        ("build/out.txt", "TODO in ignored build output\n"),
        (".gitignore", "build/\n*.log\n"),
        ("debug.log", "TODO in an ignored log\n"),
        ("node_modules/pkg/index.js", "// TODO vendored\n"),
        ("target/debug/gen.rs", "// TODO generated\n"),
        ("secrets/token.txt", "TODO secret\n"),
        ("crlf.txt", "first TODO\r\nsecond todo\r\n"),
        ("nested/.gitignore", "local.txt\n"),
        ("nested/local.txt", "TODO locally ignored\n"),
        ("nested/kept.txt", "TODO kept\n"),
    ];
    for (path, body) in files {
        let p = d.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
    std::fs::write(d.path().join("image.bin"), b"TODO\x00\x01\x02binary").unwrap();
    d
}

#[tokio::test]
async fn same_matches_as_ripgrep_on_a_fixture_tree() {
    let d = fixture();
    let root = d.path();
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({"pattern": "TODO"}), vec!["-n", "TODO"]),
        (json!({"pattern": "fn \\w+\\("}), vec!["-n", "fn \\w+\\("]),
        (
            json!({"pattern": "todo", "case_sensitive": false}),
            vec!["-n", "-i", "todo"],
        ),
        (
            json!({"pattern": "TODO", "output_mode": "files_only"}),
            vec!["-l", "TODO"],
        ),
        (
            json!({"pattern": "TODO", "output_mode": "count"}),
            vec!["-c", "TODO"],
        ),
        (
            json!({"pattern": "TODO", "include_glob": "*.rs"}),
            vec!["-n", "-g", "*.rs", "TODO"],
        ),
        (json!({"pattern": "café|naïve"}), vec!["-n", "café|naïve"]),
    ];
    for (args, rg_args) in cases {
        let expected = rg(root, &rg_args);
        assert!(!expected.is_empty(), "fixture must match {rg_args:?}");
        let got = ours(root, args.clone()).await;
        assert_eq!(got, expected, "grep_files {args} vs rg {rg_args:?}");
    }
}

#[tokio::test]
async fn same_matches_as_ripgrep_on_real_source_code() {
    // This workspace's own crates: thousands of real lines, always present.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for (args, rg_args) in [
        (
            json!({"pattern": "fn [a-z_]+\\("}),
            vec!["-n", "fn [a-z_]+\\("],
        ),
        (
            json!({"pattern": "tooL", "case_sensitive": false, "output_mode": "count"}),
            vec!["-c", "-i", "tooL"],
        ),
        (
            json!({"pattern": "impl", "output_mode": "files_only"}),
            vec!["-l", "impl"],
        ),
    ] {
        let expected = rg(root, &rg_args);
        assert!(
            expected.len() > 10,
            "{rg_args:?} matched too little to mean anything"
        );
        assert_eq!(ours(root, args.clone()).await, expected, "{args}");
    }
}
