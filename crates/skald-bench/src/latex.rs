//! LaTeX: Skald's tectonic build (in a worker process) against `latexmk -xelatex` on the same
//! multi-file article (tests/tex/article: \input, amsmath, a figure, and here a BibTeX
//! bibliography), cold, warm (an input changed) and with nothing changed.

use crate::timing::{ms, ratio, run_quiet};
use anyhow::{Context, Result, bail};
use skald_viewer::{BundleChoice, LatexEngine};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const RUNS: usize = 5;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The test article with a bibliography: a citation and `refs.bib`, so both builders run
/// BibTeX on a first build and decide whether to run it again after an edit.
fn copy_article(to: &Path) -> Result<()> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/tex/article");
    for f in ["chapter.tex", "dot.png"] {
        std::fs::copy(src.join(f), to.join(f)).with_context(|| format!("copying {f}"))?;
    }
    let main = std::fs::read_to_string(src.join("main.tex")).context("reading main.tex")?;
    let main = main.replace(
        "\\end{document}",
        "As shown by \\cite{knuth84}.\n\\bibliographystyle{plain}\n\\bibliography{refs}\n\\end{document}",
    );
    std::fs::write(to.join("main.tex"), main)?;
    std::fs::write(
        to.join("refs.bib"),
        "@book{knuth84, author = {Donald E. Knuth}, title = {The TeXbook},\n\
         publisher = {Addison-Wesley}, year = {1984}}\n",
    )?;
    Ok(())
}

fn latexmk(dir: &Path, out: &Path) -> Result<()> {
    run_quiet(
        Command::new("latexmk")
            .current_dir(dir)
            .args([
                "-xelatex",
                "-interaction=nonstopmode",
                "-halt-on-error",
                "-quiet",
            ])
            .arg(format!("-outdir={}", out.display()))
            .arg("main.tex"),
        &[0],
    )?;
    Ok(())
}

fn edit(dir: &Path, i: usize) -> Result<()> {
    std::fs::write(
        dir.join("chapter.tex"),
        format!("\\section{{Chapter}}\nText from the chapter file, edit {i}.\n"),
    )?;
    Ok(())
}

pub fn run() -> Result<String> {
    let bundle = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/tex/bundle.zip");
    if !bundle.is_file() {
        bail!("no offline TeX bundle: run `bash scripts/setup.sh --test`");
    }
    let version = String::from_utf8_lossy(&run_quiet(Command::new("latexmk").arg("-v"), &[0])?)
        .lines()
        .find(|l| l.contains("Latexmk"))
        .unwrap_or("latexmk")
        .trim()
        .to_string();
    let (mut cold_ours, mut cold_ref) = (Vec::new(), Vec::new());
    let (mut warm_ours, mut warm_ref) = (Vec::new(), Vec::new());
    let (mut hit_ours, mut hit_ref) = (Vec::new(), Vec::new());
    for run in 0..RUNS {
        // Cold: nothing cached (for tectonic, not even its format file).
        let doc = tempfile::tempdir()?;
        copy_article(doc.path())?;
        let cache = tempfile::tempdir()?;
        let engine = LatexEngine::new(
            cache.path().to_path_buf(),
            BundleChoice::Zip(bundle.clone()),
            Vec::new(),
        );
        let never = skald_api::CancellationToken::new();
        let main = std::fs::canonicalize(doc.path().join("main.tex"))?;
        let t = Instant::now();
        engine
            .build(&main, &never)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        cold_ours.push(t.elapsed());
        let out = tempfile::tempdir()?;
        let t = Instant::now();
        latexmk(doc.path(), out.path())?;
        cold_ref.push(t.elapsed());

        // Warm: an \input file changed since the last build.
        edit(doc.path(), run)?;
        let t = Instant::now();
        let b = engine
            .build(&main, &never)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        warm_ours.push(t.elapsed());
        if b.from_cache {
            bail!("an edited document came from the cache");
        }
        let t = Instant::now();
        latexmk(doc.path(), out.path())?;
        warm_ref.push(t.elapsed());

        // Nothing changed.
        let t = Instant::now();
        let b = engine
            .build(&main, &never)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        hit_ours.push(t.elapsed());
        if !b.from_cache {
            bail!("an unchanged document was compiled again");
        }
        let t = Instant::now();
        latexmk(doc.path(), out.path())?;
        hit_ref.push(t.elapsed());
    }
    let row = |case: &str, ours: Vec<Duration>, reference: Vec<Duration>| {
        let (o, r) = (median(ours), median(reference));
        format!("| {case} | {} | {} | {} |\n", ms(o), ms(r), ratio(o, r))
    };
    let mut s = String::from("## LaTeX: tectonic (worker process) vs latexmk\n\n");
    s.push_str(&format!(
        "The test article (`tests/tex/article`: `\\input`, amsmath, graphicx and a figure) with a citation and a BibTeX bibliography (`refs.bib`, `plain` style) built to PDF by Skald's `LatexEngine` (tectonic 0.17's engines in a worker process, with the offline test bundle) and by `{version}` with `-xelatex` (Debian's TeX Live), median of {RUNS} runs each. Cold: nothing cached (tectonic also builds its format file). Warm: the `\\input` file's text changed since the last build (its citations did not, so neither needs BibTeX again). Unchanged: nothing changed — Skald answers from its dependency-exact cache, latexmk checks its own records. Goals: warm ≤ 0.6× latexmk, unchanged ≤ 20 ms.\n\n"
    ));
    s.push_str("| case | Skald | latexmk | ratio |\n| --- | --- | --- | --- |\n");
    s.push_str(&row("cold", cold_ours, cold_ref));
    s.push_str(&row("warm (an input changed)", warm_ours, warm_ref));
    s.push_str(&row("unchanged", hit_ours, hit_ref));
    Ok(s)
}
