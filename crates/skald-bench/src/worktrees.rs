//! Making an agent's worktree (docs/worktrees.md), against the programs a person would use
//! for the same in the same run: for a 10,000-file git repository, `git worktree add -b`;
//! for a 10,000-file folder that is no repository, `cp -al` (hard links: the fastest copy
//! there is — and one Skald cannot use, since a command appending to a linked file would
//! write the person's) and `cp -r --reflink=auto`.
//!
//! Two figures for Skald: the worktree alone (`skald_worktree::create`), and what a new
//! chat in a worktree waits for (`skald_core::worktrees::make`: the deny rules read, the
//! worktree made, and the checkpoint of how it started, which reviews compare with).

use crate::timing::{ms, ratio, run_quiet};
use anyhow::{Context, Result};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const RUNS: usize = 7;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// 100 folders of 100 source-like files of about 1 KB.
fn generated(root: &Path) -> Result<()> {
    for d in 0..100 {
        let dir = root.join(format!("module{d:03}"));
        std::fs::create_dir_all(&dir)?;
        for f in 0..100 {
            let body =
                format!("// module {d} file {f}\npub fn f{f}() -> u32 {{ {d} }}\n").repeat(16);
            std::fs::write(dir.join(format!("file{f:03}.rs")), body)?;
        }
    }
    Ok(())
}

fn git(dir: &Path, args: &[&str]) -> Result<()> {
    run_quiet(
        Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=bench", "-c", "user.email=bench@localhost"])
            .args(args),
        &[0],
    )
    .map(|_| ())
}

fn timed(f: impl FnOnce() -> Result<()>) -> Result<Duration> {
    let t = Instant::now();
    f()?;
    Ok(t.elapsed())
}

/// A worktree alone, made and discarded.
fn skald_alone(source: &Path, place: &Path, name: &str) -> Result<Duration> {
    let root = place.join(name);
    let mut made = None;
    let took = timed(|| {
        made = Some(skald_worktree::create(source, &root, name, &[])?);
        Ok(())
    })?;
    if let Some(w) = made {
        skald_worktree::discard(&w)?;
    }
    Ok(took)
}

/// What a new chat waits for: `make` as the engine calls it, then discarded.
fn skald_chat(
    store: &skald_store::Store,
    data: &skald_core::DataDir,
    source: &Path,
    name: &str,
) -> Result<Duration> {
    let mut made = None;
    let took = timed(|| {
        made = Some(skald_core::worktrees::make(
            store,
            data,
            source,
            Some(name),
            "default",
            skald_checkpoint::Limits::default(),
        )?);
        Ok(())
    })?;
    if let Some(m) = made {
        skald_worktree::discard(&m.worktree)?;
    }
    Ok(took)
}

struct Figures {
    files: usize,
    alone: Duration,
    chat: Duration,
    references: Vec<(&'static str, Duration)>,
}

fn git_case() -> Result<Figures> {
    let top = tempfile::tempdir()?;
    let source = top.path().join("repo");
    std::fs::create_dir(&source)?;
    let source = source.canonicalize()?;
    generated(&source)?;
    git(&source, &["init", "-q", "-b", "main"])?;
    git(&source, &["add", "-A"])?;
    git(&source, &["commit", "-q", "-m", "start"])?;
    let data = skald_core::DataDir::at(top.path().join("data"));
    std::fs::create_dir_all(data.root())?;
    let store = skald_store::Store::open_in_memory()?;
    let place = top.path().join("alone");
    let refs = top.path().join("reference");
    let (mut alone, mut chat, mut reference) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..=RUNS {
        let a = skald_alone(&source, &place, &format!("a{i}"))?;
        let c = skald_chat(&store, &data, &source, &format!("c{i}"))?;
        let dir = refs.join(format!("r{i}"));
        let (branch, path) = (format!("ref/{i}"), dir.display().to_string());
        let r = timed(|| git(&source, &["worktree", "add", "-q", "-b", &branch, &path]))?;
        git(
            &source,
            &["worktree", "remove", "--force", &dir.display().to_string()],
        )?;
        if i > 0 {
            alone.push(a);
            chat.push(c);
            reference.push(r);
        }
    }
    Ok(Figures {
        files: 10_000,
        alone: median(alone),
        chat: median(chat),
        references: vec![("git worktree add -b", median(reference))],
    })
}

fn copy_case() -> Result<Figures> {
    let top = tempfile::tempdir()?;
    let source = top.path().join("folder");
    std::fs::create_dir(&source)?;
    let source = source.canonicalize()?;
    generated(&source)?;
    let data = skald_core::DataDir::at(top.path().join("data"));
    std::fs::create_dir_all(data.root())?;
    let store = skald_store::Store::open_in_memory()?;
    let place = top.path().join("alone");
    let refs = top.path().join("reference");
    std::fs::create_dir_all(&refs)?;
    let cp = |flags: &[&str], to: &Path| -> Result<Duration> {
        let took = timed(|| {
            run_quiet(Command::new("cp").args(flags).arg(&source).arg(to), &[0]).map(|_| ())
        })?;
        std::fs::remove_dir_all(to).context("removing the reference copy")?;
        Ok(took)
    };
    let (mut alone, mut chat, mut links, mut reflinks) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..=RUNS {
        let a = skald_alone(&source, &place, &format!("a{i}"))?;
        let c = skald_chat(&store, &data, &source, &format!("c{i}"))?;
        let l = cp(&["-al"], &refs.join(format!("l{i}")))?;
        let r = cp(&["-r", "--reflink=auto"], &refs.join(format!("r{i}")))?;
        if i > 0 {
            alone.push(a);
            chat.push(c);
            links.push(l);
            reflinks.push(r);
        }
    }
    Ok(Figures {
        files: 10_000,
        alone: median(alone),
        chat: median(chat),
        references: vec![
            ("cp -al", median(links)),
            ("cp -r --reflink=auto", median(reflinks)),
        ],
    })
}

pub fn run() -> Result<String> {
    let git = git_case()?;
    let copy = copy_case()?;
    let rows = |name: &str, f: &Figures| -> String {
        f.references
            .iter()
            .map(|(what, t)| {
                format!(
                    "| {name} ({} files) | {} | {} | {what} | {} | {} | {} |\n",
                    f.files,
                    ms(f.alone),
                    ms(f.chat),
                    ms(*t),
                    ratio(f.alone, *t),
                    ratio(f.chat, *t)
                )
            })
            .collect()
    };
    Ok(format!(
        "## Worktrees\n\n\
         Making an agent's worktree, against what a person would run for the same in the \
         same run, interleaved, median of {RUNS} each after one warm-up. Skald's worktree \
         alone (`skald_worktree::create`: a git worktree on a new branch through libgit2, \
         or a walk copying each file, reflinked where the filesystem can); and what a new \
         chat in a worktree waits for (`worktrees::make`: that, plus the checkpoint of how \
         the worktree started, which every review compares with). Goals: ≤ 1.2× `git \
         worktree add` for the repository; for the folder ≤ 1 s and ≤ 1.5× `cp -al` (hard \
         links, which Skald does not use: a command appending to a linked file would write \
         the person's).\n\n\
         | folder | worktree | new chat in it | reference | reference's time | worktree ratio | chat ratio |\n\
         | --- | --- | --- | --- | --- | --- | --- |\n{}{}",
        rows("git repository, 100 × 100 files of 1 KB", &git),
        rows("folder, no repository, 100 × 100 files of 1 KB", &copy),
    ))
}
