//! The client against a real server: pyright from tests/lsp (scripts/setup.sh --test
//! installs it). A type error appears after the change that makes it; definitions and
//! references are found; a killed server is started again by the pool.

use crate::{Server, pool, text};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn pyright() -> Vec<String> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/lsp/node_modules/.bin/pyright-langserver");
    assert!(
        bin.exists(),
        "{} is missing: run scripts/setup.sh --test",
        bin.display()
    );
    vec![bin.display().to_string(), "--stdio".into()]
}

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(
        root.join("shapes.py"),
        "def area(width: int, height: int) -> int:\n    return width * height\n",
    )
    .unwrap();
    std::fs::write(
        root.join("main.py"),
        "from shapes import area\n\nprint(area(2, 3))\nprint(area(4, 5))\n",
    )
    .unwrap();
    (dir, root)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_type_error_appears_after_the_change_that_makes_it() {
    let (_dir, root) = project();
    let server = Server::start("python", &pyright(), &root, &[], &[], true, Box::new(()))
        .await
        .unwrap();
    let main = root.join("main.py");
    let clean = std::fs::read_to_string(&main).unwrap();
    let before = server.sync(&main, &clean).unwrap();
    let first = server
        .diagnostics_after(&main, before, Duration::from_secs(60))
        .await
        .unwrap()
        .expect("pyright published nothing for a file it opened");
    assert!(first.is_empty(), "{first:?}");
    let broken = clean.replace("area(4, 5)", "area(\"4\", 5)");
    let before = server.sync(&main, &broken).unwrap();
    let after = server
        .diagnostics_after(&main, before, Duration::from_secs(60))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after[0].range.start.line, 3);
    assert!(
        after[0].message.contains("\"Literal['4']\""),
        "{}",
        after[0].message
    );

    // Definition of `area` at its use in main.py, and its references across files.
    let pos = text::position(&broken, 3, text::column_of(&broken, 3, "area").unwrap());
    let defs = server.definition(&main, pos).await.unwrap();
    assert_eq!(defs.len(), 1, "{defs:?}");
    assert_eq!(text::path_of(&defs[0].uri).unwrap(), root.join("shapes.py"));
    assert_eq!(defs[0].range.start.line, 0);
    let refs = server.references(&main, pos, true).await.unwrap();
    let files: std::collections::BTreeSet<_> = refs
        .iter()
        .map(|l| text::path_of(&l.uri).unwrap())
        .collect();
    assert!(refs.len() >= 4, "{refs:?}");
    assert!(
        files.contains(&root.join("shapes.py")) && files.contains(&main),
        "{files:?}"
    );
    server.stop().await;
    assert!(!server.is_alive() || server.pid().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pool_starts_a_server_again_after_it_dies() {
    let (_dir, root) = project();
    let launch = || {
        Ok(crate::Launch {
            argv: pyright(),
            env_removed: Vec::new(),
            env_set: Vec::new(),
            sandbox_key: String::new(),
            keep: Box::new(()),
            watches_parent: true,
        })
    };
    let (first, started) = pool().server(&root, "python", "", launch).await.unwrap();
    assert!(started);
    let (again, started) = pool().server(&root, "python", "", launch).await.unwrap();
    assert!(!started && std::sync::Arc::ptr_eq(&first, &again));
    // Killed as a crash would: the next question gets a new server, which works.
    let pid = first.pid().unwrap();
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    for _ in 0..100 {
        if !first.is_alive() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!first.is_alive());
    let (second, started) = pool().server(&root, "python", "", launch).await.unwrap();
    assert!(started && second.is_alive());
    let main = root.join("main.py");
    let before = second.sync(&main, "x: int = \"no\"\n").unwrap();
    let diags = second
        .diagnostics_after(&main, before, Duration::from_secs(60))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(diags.len(), 1, "{diags:?}");
    second.stop().await;
}
