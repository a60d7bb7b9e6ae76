//! `skald-bench`: measures Skald's tools against their reference programs on the same
//! inputs in the same run, checks that both found the same things, and writes the ratios
//! to `docs/performance.md`. Run it through `scripts/bench.sh`, which installs the
//! references and builds everything in release mode.
//!
//! Timings are medians of several runs after a warm-up run (so both sides read from the
//! page cache). Nothing here asserts a time: the report states the figures.

mod checkpoints;
mod desktop;
mod engine;
mod first_answer;
mod latex;
mod local;
mod lsp;
mod outline;
mod report;
mod search;
mod shell;
mod timing;
mod ui;
mod worktrees;

use anyhow::{Context, Result, bail};
use std::path::PathBuf;

struct Args {
    skald: PathBuf,
    out: PathBuf,
    only: Option<String>,
    /// The load test's report (`SKALD_LOAD_REPORT` of skald-cli's serve test), to file as
    /// the `load` section: the test drives real processes, so it runs as a test.
    load_report: Option<PathBuf>,
}

fn parse_args() -> Result<Args> {
    let mut skald = None;
    let mut out = PathBuf::from("docs/performance.md");
    let mut only = None;
    let mut load_report = None;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--skald" => skald = it.next().map(PathBuf::from),
            "--out" => out = it.next().map(PathBuf::from).context("--out needs a path")?,
            "--only" => only = it.next(),
            "--load-report" => load_report = it.next().map(PathBuf::from),
            "-h" | "--help" => {
                println!(
                    "usage: skald-bench --skald PATH/TO/release/skald [--out docs/performance.md] [--only grep|outline|shell|checkpoints|engine|latex|local|first-answer|ui|desktop|load|worktrees|lsp] [--load-report FILE]"
                );
                std::process::exit(0);
            }
            other => bail!("unknown argument {other}"),
        }
    }
    let skald = skald.context("--skald PATH is required (a release build of skald)")?;
    Ok(Args {
        skald,
        out,
        only,
        load_report,
    })
}

fn main() -> Result<()> {
    // Started as a LaTeX worker by the LaTeX benchmark's engine: run that one build.
    if let Some(code) = skald_viewer::latex::worker::run_worker_if_asked() {
        std::process::exit(code);
    }
    let args = parse_args()?;
    let wants = |name: &str| args.only.as_deref().is_none_or(|o| o == name);
    let machine = report::machine();
    if wants("grep") {
        let section = search::run(&args.skald)?;
        report::write_section(&args.out, "grep", &machine, &section)?;
    }
    if wants("outline") {
        let section = outline::run(&args.skald)?;
        report::write_section(&args.out, "outline", &machine, &section)?;
    }
    if wants("engine") {
        let section = engine::run()?;
        report::write_section(&args.out, "engine", &machine, &section)?;
    }
    if wants("latex") {
        let section = latex::run()?;
        report::write_section(&args.out, "latex", &machine, &section)?;
    }
    if wants("load")
        && let Some(file) = &args.load_report
    {
        let body = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read the load report {}", file.display()))?;
        let section =
            format!("## Load: 20 chats, a cron job and a background task at once\n\n{body}");
        report::write_section(&args.out, "load", &machine, &section)?;
    }
    if wants("local") {
        let section = local::run()?;
        report::write_section(&args.out, "local", &machine, &section)?;
    }
    if wants("first-answer") {
        let section = first_answer::run(&args.skald)?;
        report::write_section(&args.out, "first-answer", &machine, &section)?;
    }
    if wants("desktop") {
        let section = desktop::run(&args.skald)?;
        report::write_section(&args.out, "desktop", &machine, &section)?;
    }
    if wants("ui") {
        let section = ui::run(&args.skald)?;
        report::write_section(&args.out, "ui", &machine, &section)?;
    }
    if wants("shell") {
        let section = shell::run()?;
        report::write_section(&args.out, "shell", &machine, &section)?;
    }
    if wants("worktrees") {
        let section = worktrees::run()?;
        report::write_section(&args.out, "worktrees", &machine, &section)?;
    }
    if wants("lsp") {
        let section = lsp::run()?;
        report::write_section(&args.out, "lsp", &machine, &section)?;
    }
    if wants("checkpoints") {
        let section = checkpoints::run()?;
        report::write_section(&args.out, "checkpoints", &machine, &section)?;
    }
    println!("wrote {}", args.out.display());
    Ok(())
}
