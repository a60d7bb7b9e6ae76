//! get_ast_outline against universal-ctags over the same files of a large multi-language
//! tree: Python's standard library, the system C headers and the Rust sources of the
//! local cargo registry.

use crate::timing::{median, ms, ratio, run_quiet};
use anyhow::{Context, Result};
use serde_json::{Value, json};
use skald_outline::{Item, Lang};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const RUNS: usize = 3;

/// The languages both sides outline in a directory (ctags has no Swift parser; data
/// formats are skipped by get_ast_outline in directory mode, so by ctags here too).
const CTAGS_LANGUAGES: &str = "Python,JavaScript,TypeScript,Go,Java,C,C++,Lua,Ruby,Sh,Elixir,\
                               HTML,CSS,Kotlin,Markdown,SQL,Rust";

/// Languages whose function/class/struct definitions are counted for coverage.
const CODE_LANGUAGES: &[&str] = &[
    "Python",
    "JavaScript",
    "TypeScript",
    "Go",
    "Java",
    "C",
    "C++",
    "Lua",
    "Ruby",
    "Sh",
    "Elixir",
    "Kotlin",
    "Rust",
];

/// ctags kinds counted as top-level function/class/struct definitions.
const COUNTED_KINDS: &[&str] = &["function", "func", "class", "struct"];

fn corpora() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    if let Ok(o) = Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
    {
        let p = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
        if p.is_dir() {
            out.push(("Python standard library".to_string(), p));
        }
    }
    let inc = PathBuf::from("/usr/include");
    if inc.is_dir() {
        out.push(("C headers (/usr/include)".to_string(), inc));
    }
    if let Ok(src) = crate::search::corpus() {
        out.push(("Rust crates (cargo registry)".to_string(), src));
    }
    out
}

struct Tag {
    name: String,
    path: PathBuf,
    line: usize,
}

fn ctags_tags(dir: &Path) -> Result<Vec<Tag>> {
    let out = run_quiet(
        Command::new("ctags")
            .args([
                "-R",
                "--output-format=json",
                "--fields=+nKZl",
                &format!("--languages={CTAGS_LANGUAGES}"),
                "-f",
                "-",
            ])
            .arg(dir),
        &[0],
    )?;
    let mut tags = Vec::new();
    for line in String::from_utf8_lossy(&out).lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let kind = v["kind"].as_str().unwrap_or("");
        let name = v["name"].as_str().unwrap_or("");
        let language = v["language"].as_str().unwrap_or("");
        if v.get("scope").is_some()
            || !COUNTED_KINDS.contains(&kind)
            || !CODE_LANGUAGES.contains(&language)
            || name.starts_with("__anon")
        {
            continue;
        }
        tags.push(Tag {
            name: name.to_string(),
            path: PathBuf::from(v["path"].as_str().unwrap_or("")),
            line: v["line"].as_u64().unwrap_or(0) as usize,
        });
    }
    Ok(tags)
}

fn found(items: &[Item], tag: &Tag) -> bool {
    items.iter().any(|it| {
        let name_ok = it.name == tag.name
            || it.name.ends_with(&format!("::{}", tag.name))
            || it.name.ends_with(&format!(".{}", tag.name));
        name_ok && it.start <= tag.line && tag.line <= it.end
    })
}

pub fn run(skald: &Path) -> Result<String> {
    let data = std::env::temp_dir().join(format!("skald-bench-outline-{}", std::process::id()));
    let ctags_version = run_quiet(Command::new("ctags").arg("--version"), &[0])
        .map(|o| {
            String::from_utf8_lossy(&o)
                .lines()
                .next()
                .unwrap_or("")
                .to_string()
        })
        .context("universal-ctags must be installed (scripts/bench.sh does)")?;
    let mut rows = String::new();
    let (mut all_tags, mut all_found) = (0usize, 0usize);
    let (mut all_ours, mut all_again, mut all_ref) = (
        std::time::Duration::ZERO,
        std::time::Duration::ZERO,
        std::time::Duration::ZERO,
    );
    for (label, dir) in corpora() {
        eprintln!("outline: {label}");
        let tags = ctags_tags(&dir)?;
        let mut cache: HashMap<PathBuf, Vec<Item>> = HashMap::new();
        let mut hits = 0;
        let mut misses = Vec::new();
        for tag in &tags {
            let items = cache.entry(tag.path.clone()).or_insert_with(|| {
                let src = std::fs::read(&tag.path).unwrap_or_default();
                let src = String::from_utf8_lossy(&src);
                let Some(lang) = Lang::from_path_and_text(&tag.path, &src) else {
                    return Vec::new();
                };
                skald_outline::outline(lang, &src).unwrap_or_default()
            });
            if found(items, tag) {
                hits += 1;
            } else if misses.len() < 30 {
                misses.push(format!("{}:{} {}", tag.path.display(), tag.line, tag.name));
            }
        }
        for m in &misses {
            eprintln!("  missed {m}");
        }
        let files = cache.len();
        let args = json!({ "path": dir });
        let outline = || {
            run_quiet(
                // The corpus is the working folder, as for a chat working in it: reads
                // there need no approval.
                Command::new(skald)
                    .arg("--data-dir")
                    .arg(&data)
                    .args([
                        "tool",
                        "get_ast_outline",
                        "--args",
                        &args.to_string(),
                        "--cwd",
                    ])
                    .arg(&dir),
                &[0],
            )
            .map(|_| ())
        };
        // Cold: a data directory without an outline cache every run.
        let ours = median(RUNS, || {
            let _ = std::fs::remove_dir_all(&data);
            outline()
        })?;
        // Again: the same unchanged tree, outlined by the last cold run's cache.
        let again = median(RUNS, outline)?;
        let reference = median(RUNS, || {
            run_quiet(
                Command::new("ctags")
                    .args(["-R", &format!("--languages={CTAGS_LANGUAGES}"), "-f", "-"])
                    .arg(&dir),
                &[0],
            )
            .map(|_| ())
        })?;
        all_tags += tags.len();
        all_found += hits;
        all_ours += ours;
        all_again += again;
        all_ref += reference;
        rows.push_str(&format!(
            "| {label} | {files} | {} | {hits} ({:.1}%) | {} | {} | {} | {} | {} |\n",
            tags.len(),
            100.0 * hits as f64 / tags.len().max(1) as f64,
            ms(ours),
            ms(again),
            ms(reference),
            ratio(ours, reference),
            ratio(again, reference)
        ));
    }
    let _ = std::fs::remove_dir_all(&data);
    rows.push_str(&format!(
        "| **all** | | {all_tags} | {all_found} ({:.1}%) | {} | {} | {} | {} | {} |\n",
        100.0 * all_found as f64 / all_tags.max(1) as f64,
        ms(all_ours),
        ms(all_again),
        ms(all_ref),
        ratio(all_ours, all_ref),
        ratio(all_again, all_ref)
    ));
    Ok(format!(
        "## get_ast_outline vs universal-ctags\n\n\
         Each corpus is outlined by `skald tool get_ast_outline` on the directory and by \
         `{ctags_version}` with `ctags -R --languages=…` (the languages both support), both as \
         processes writing to a pipe; median of {RUNS} runs after a warm-up. *Cold*: every \
         run with a new data directory, so nothing is in the outline cache; *again*: the \
         same unchanged tree outlined once more, from the cache the last cold run left. \
         Coverage: of ctags' top-level definitions of kind function, class or struct (no \
         scope), how many the outline lists with the same name on a range that contains \
         ctags' line. Goals: cold ≤ 1.0× ctags' time, again ≤ 0.1×, coverage ≥ 98%.\n\n\
         | corpus | files with definitions | ctags definitions | found by get_ast_outline | get_ast_outline cold | again | ctags | cold ratio | again ratio |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n{rows}"
    ))
}
