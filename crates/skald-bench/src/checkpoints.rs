//! What a checkpoint costs a tool call, against `git add -A && git commit -q` on the same
//! tree in the same run: on a generated 10,000-file folder with one file changed per call,
//! and on a copy of this repository's tracked files.

use crate::timing::{ms, ratio, run_quiet};
use anyhow::{Context, Result, bail};
use skald_checkpoint::{Limits, Live, Shadow};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const RUNS: usize = 30;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
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

/// The 10,000-file folder: 100 folders of 100 source-like files of about 1 KB.
fn generated(root: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for d in 0..100 {
        let dir = root.join(format!("module{d:03}"));
        std::fs::create_dir_all(&dir)?;
        for f in 0..100 {
            let path = dir.join(format!("file{f:03}.rs"));
            let body =
                format!("// module {d} file {f}\npub fn f{f}() -> u32 {{ {d} }}\n").repeat(16);
            std::fs::write(&path, body)?;
            files.push(path);
        }
    }
    Ok(files)
}

/// A copy of this repository's tracked files (never the repository itself: the reference
/// commits).
fn repo_copy(root: &Path) -> Result<Vec<PathBuf>> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let listed = run_quiet(
        Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(["ls-files", "-z"]),
        &[0],
    )?;
    let mut files = Vec::new();
    for rel in listed.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let rel = String::from_utf8_lossy(rel).into_owned();
        let from = repo.join(&rel);
        let meta = match std::fs::symlink_metadata(&from) {
            Ok(m) if m.is_file() => m,
            _ => continue,
        };
        let to = root.join(&rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::copy(&from, &to).with_context(|| format!("copying {rel}"))?;
        if meta.len() < 1 << 20 && rel.ends_with(".rs") {
            files.push(to);
        }
    }
    if files.is_empty() {
        bail!("no Rust files in the repository copy");
    }
    Ok(files)
}

/// What one call costs the engine: the checkpoint before (nothing changed since the last
/// one), the call's change, the checkpoint after, and the list of changed files. Returns
/// the whole and the checkpoint before alone.
fn skald_call(
    live: &mut Live,
    store: &Path,
    root: &Path,
    changed: &Path,
    n: usize,
    limits: &Limits,
) -> Result<(Duration, Duration)> {
    let t = Instant::now();
    let before = Shadow::open(store, root)?.snapshot_live(live, "bench", "before", limits, &[])?;
    let unchanged = t.elapsed();
    if before.hashed != 0 {
        bail!("the checkpoint before read {} files, not 0", before.hashed);
    }
    touch(changed, n)?;
    let t = Instant::now();
    let after = {
        let mut shadow = Shadow::open(store, root)?;
        shadow.snapshot_live(live, "bench", "after", limits, &[])?
    };
    if after.walked {
        bail!(
            "the checkpoint after walked the folder: {}",
            live.problem().unwrap_or("no reason given")
        );
    }
    let changes = Shadow::open(store, root)?.changes(&before.commit, &after.commit)?;
    let spent = unchanged + t.elapsed();
    if changes.total != 1 {
        bail!("the checkpoint saw {} changed files, not 1", changes.total);
    }
    Ok((spent, unchanged))
}

fn git_call(root: &Path, changed: &Path, n: usize) -> Result<Duration> {
    touch(changed, n)?;
    let t = Instant::now();
    run_quiet(
        Command::new("sh")
            .arg("-c")
            .arg("git add -A && git -c user.name=bench -c user.email=bench@localhost commit -q -m call")
            .current_dir(root),
        &[0],
    )?;
    Ok(t.elapsed())
}

fn touch(path: &Path, n: usize) -> Result<()> {
    let mut text = std::fs::read_to_string(path)?;
    text.push_str(&format!("// edit {n}\n"));
    std::fs::write(path, text)?;
    Ok(())
}

struct Case {
    files: usize,
    first: Duration,
    second: Duration,
    ours: Duration,
    unchanged: Duration,
    git: Duration,
}

fn case(make: fn(&Path) -> Result<Vec<PathBuf>>) -> Result<Case> {
    // Two copies of the same tree: one checkpointed, one a git repository, so that neither
    // sees the other's changes.
    let (ours_dir, git_dir, store) = (
        tempfile::tempdir()?,
        tempfile::tempdir()?,
        tempfile::tempdir()?,
    );
    let root = ours_dir.path().canonicalize()?;
    let files = make(&root)?;
    let git_root = git_dir.path().canonicalize()?;
    let git_files = make(&git_root)?;
    git(&git_root, &["init", "-q"])?;
    git(&git_root, &["add", "-A"])?;
    git(&git_root, &["commit", "-q", "-m", "start"])?;
    let limits = Limits::default();
    // One per folder, kept between calls, as the engine keeps it.
    let mut live = Live::new(true);
    let t = Instant::now();
    let first = Shadow::open(store.path(), &root)?.snapshot_live(
        &mut live,
        "bench",
        "first",
        &limits,
        &[],
    )?;
    let first_time = t.elapsed();
    // The second checkpoint of a folder walks it too (its directories are watched from
    // the first on); a call's cost is measured from the third.
    let t = Instant::now();
    Shadow::open(store.path(), &root)?.snapshot_live(&mut live, "bench", "second", &limits, &[])?;
    let second_time = t.elapsed();
    let (mut ours, mut still, mut reference) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..=RUNS {
        let pick = (i * 7919) % files.len();
        let (a, u) = skald_call(&mut live, store.path(), &root, &files[pick], i, &limits)?;
        let b = git_call(&git_root, &git_files[pick], i)?;
        if i > 0 {
            ours.push(a);
            still.push(u);
            reference.push(b);
        }
    }
    Ok(Case {
        files: first.files,
        first: first_time,
        second: second_time,
        ours: median(ours),
        unchanged: median(still),
        git: median(reference),
    })
}

pub fn run() -> Result<String> {
    let generated = case(generated)?;
    let repo = case(repo_copy)?;
    let row = |name: &str, c: &Case| {
        format!(
            "| {name} ({} files) | {} | {} | {} | {} | {} | {} |\n",
            c.files,
            ms(c.ours),
            ms(c.unchanged),
            ms(c.git),
            ratio(c.ours, c.git),
            ms(c.first),
            ms(c.second)
        )
    };
    Ok(format!(
        "## Checkpoints\n\n\
         What checkpoints add to one tool call that changes one file: the checkpoint before \
         (the folder unchanged since the last one), the checkpoint after (the changed file \
         hashed, the tree and a commit written) and the list of changed files, each opening \
         the shadow repository and keeping the folder's watch between calls as the engine \
         does (the kernel names the changed directories; only those are listed); against \
         `git add -A && git commit -q` of the same change in a git repository of the same \
         tree, interleaved, median of {RUNS} calls each. Goals: ≤ 0.5× git, and ≤ 30 ms on \
         the 10,000-file folder. The first checkpoint of a folder reads every file once; \
         the second walks it (a stat pass), since a directory watched after the first \
         listed it could have changed in between.\n\n\
         | folder | checkpoints per call | of which the one before (unchanged folder) | git add + commit | ratio | first checkpoint | second (a walk) |\n\
         | --- | --- | --- | --- | --- | --- | --- |\n{}{}",
        row("generated, 100 × 100 files of 1 KB", &generated),
        row("this repository's tracked files", &repo),
    ))
}
