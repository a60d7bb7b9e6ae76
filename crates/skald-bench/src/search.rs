//! grep_files against ripgrep on a large real tree: the sources of every crate in the
//! local cargo registry.

use crate::timing::{median, ms, ratio, run_quiet};
use anyhow::{Context, Result, bail};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const RUNS: usize = 7;

use skald_testkit::RG_SAME_WALK;

pub fn corpus() -> Result<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .context("no CARGO_HOME or HOME")?;
    let src = home.join("registry/src");
    if !src.is_dir() {
        bail!("{} not found: build the workspace first", src.display());
    }
    Ok(src)
}

fn tree_size(root: &Path) -> (usize, u64) {
    let mut files = 0;
    let mut bytes = 0;
    for e in ignore::WalkBuilder::new(root)
        .hidden(false)
        .build()
        .flatten()
    {
        if e.file_type().is_some_and(|t| t.is_file()) {
            files += 1;
            bytes += e.metadata().map(|m| m.len()).unwrap_or(0);
        }
    }
    (files, bytes)
}

fn skald_tool(
    skald: &Path,
    data: &Path,
    tool: &str,
    args: &serde_json::Value,
    cwd: &Path,
) -> Command {
    let mut c = Command::new(skald);
    c.arg("--data-dir")
        .arg(data)
        .args(["tool", tool, "--args", &args.to_string(), "--cwd"])
        .arg(cwd);
    c
}

/// `path:N` lines → map, following grep_files' pages.
fn our_counts(
    skald: &Path,
    data: &Path,
    root: &Path,
    pattern: &str,
    case: bool,
) -> Result<BTreeMap<String, u64>> {
    let mut all = BTreeMap::new();
    let mut offset = 0;
    loop {
        let args = json!({"pattern": pattern, "case_sensitive": case, "output_mode": "count",
                          "max_results": 1000, "offset": offset});
        let out = run_quiet(
            &mut skald_tool(skald, data, "grep_files", &args, root),
            &[0],
        )?;
        let text = String::from_utf8_lossy(&out);
        let mut more = false;
        for line in text.lines() {
            if line.starts_with('[') {
                more = true;
            } else if let Some((path, n)) = line.rsplit_once(':') {
                all.insert(path.to_string(), n.parse()?);
            }
        }
        if !more {
            return Ok(all);
        }
        offset += 1000;
    }
}

fn rg_counts(root: &Path, pattern: &str, case: bool) -> Result<BTreeMap<String, u64>> {
    let mut c = Command::new("rg");
    c.current_dir(root).args(RG_SAME_WALK).arg("-c");
    if !case {
        c.arg("-i");
    }
    c.arg("--").arg(pattern);
    let out = run_quiet(&mut c, &[0, 1])?;
    let mut all = BTreeMap::new();
    for line in String::from_utf8_lossy(&out).lines() {
        if let Some((path, n)) = line.rsplit_once(':') {
            all.insert(path.trim_start_matches("./").to_string(), n.parse()?);
        }
    }
    Ok(all)
}

pub fn run(skald: &Path) -> Result<String> {
    let root = corpus()?;
    let (files, bytes) = tree_size(&root);
    let data = std::env::temp_dir().join(format!("skald-bench-{}", std::process::id()));
    let cases: [(&str, &str, bool, &str); 4] = [
        ("literal", "unsafe impl", true, "content"),
        ("regex", r"fn \w+_with\(", true, "content"),
        ("case-insensitive", "deprecated", false, "content"),
        ("files_only", "TODO", true, "files_only"),
    ];
    let mut rows = String::new();
    for (label, pattern, case, mode) in cases {
        eprintln!("grep: {label} `{pattern}`");
        let ours_set = our_counts(skald, &data, &root, pattern, case)?;
        let rg_set = rg_counts(&root, pattern, case)?;
        let matches: u64 = rg_set.values().sum();
        let same = if ours_set == rg_set {
            "yes".to_string()
        } else {
            let missing = rg_set.keys().filter(|k| !ours_set.contains_key(*k)).count();
            let extra = ours_set.keys().filter(|k| !rg_set.contains_key(*k)).count();
            format!("**no** ({missing} files missing, {extra} extra)")
        };
        let args = json!({"pattern": pattern, "case_sensitive": case, "output_mode": mode});
        let ours = median(RUNS, || {
            run_quiet(
                &mut skald_tool(skald, &data, "grep_files", &args, &root),
                &[0],
            )
            .map(|_| ())
        })?;
        let reference = median(RUNS, || {
            let mut c = Command::new("rg");
            c.current_dir(&root).args(RG_SAME_WALK);
            if mode == "files_only" {
                c.arg("-l");
            } else {
                c.args(["-n", "--no-heading"]);
            }
            if !case {
                c.arg("-i");
            }
            c.arg("--").arg(pattern);
            run_quiet(&mut c, &[0, 1]).map(|_| ())
        })?;
        rows.push_str(&format!(
            "| {label} | `{pattern}` | {} files, {matches} lines | {same} | {} | {} | {} |\n",
            rg_set.len(),
            ms(ours),
            ms(reference),
            ratio(ours, reference)
        ));
    }
    let _ = std::fs::remove_dir_all(&data);
    let rg_version = run_quiet(Command::new("rg").arg("--version"), &[0])
        .map(|o| {
            String::from_utf8_lossy(&o)
                .lines()
                .next()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default();
    Ok(format!(
        "## grep_files vs ripgrep\n\n\
         Corpus: the sources of every crate in the local cargo registry ({files} files, {:.0} MB). \
         Both sides walk the same files (hidden files included, .gitignore respected, .git, \
         node_modules, target and secrets skipped) and run as processes: \
         `skald tool grep_files` (default page of 100 results, sorted) against `{rg_version}` \
         (`rg -n`, or `rg -l` for files_only, all results unsorted). \"Same results\" compares \
         per-file match counts over every page (`output_mode: count` against `rg -c`). \
         Median of {RUNS} runs after a warm-up. Goal: ≤ 1.2×.\n\n\
         | case | pattern | matches | same results | grep_files | rg | ratio |\n\
         | --- | --- | --- | --- | --- | --- | --- |\n{rows}",
        bytes as f64 / 1e6
    ))
}
