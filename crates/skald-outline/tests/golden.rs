//! One golden outline per supported extension: `tests/golden/<name>.<ext>` is outlined
//! and compared with `<name>.<ext>.outline`. Set `UPDATE_GOLDEN=1` to rewrite the
//! expectations after checking the new output by eye.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use skald_outline::{Lang, format, outline};
use std::path::Path;

#[test]
fn every_golden_file_matches() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut checked = Vec::new();
    let mut failures = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.extension().is_some_and(|e| e == "outline") {
            continue;
        }
        let lang = Lang::from_path(&path).unwrap_or_else(|| panic!("no language for {path:?}"));
        let source = std::fs::read_to_string(&path).unwrap();
        let got = match outline(lang, &source) {
            Ok(items) => format(&items),
            Err(e) => format!("error: {e}\n"),
        };
        let expected_path = path.with_file_name(format!(
            "{}.outline",
            path.file_name().unwrap().to_string_lossy()
        ));
        if update {
            std::fs::write(&expected_path, &got).unwrap();
        } else {
            let expected = std::fs::read_to_string(&expected_path)
                .unwrap_or_else(|_| panic!("missing {expected_path:?}; run with UPDATE_GOLDEN=1"));
            if got != expected {
                failures.push(format!(
                    "{}:\n--- expected\n{expected}--- got\n{got}",
                    path.display()
                ));
            }
        }
        checked.push(path.extension().unwrap().to_string_lossy().into_owned());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every extension the tool promises has a golden file.
    for ext in [
        "py", "js", "mjs", "ts", "tsx", "go", "java", "c", "h", "cpp", "cc", "hpp", "swift", "lua",
        "rb", "sh", "ex", "exs", "json", "yaml", "yml", "html", "css", "rs", "kt", "toml", "md",
        "sql",
    ] {
        assert!(
            checked.iter().any(|e| e == ext),
            "no golden file for .{ext}"
        );
    }
}
