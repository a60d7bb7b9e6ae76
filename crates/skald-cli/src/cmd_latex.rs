//! `skald latex build PATH [--bundle ZIP] [--watch]`: LaTeX to PDF in a worker process
//! (this executable started again, see `skald_viewer::latex::worker`), from the cache when
//! nothing changed; with `--watch`, rebuilt on every change of any input of the last
//! build, one line per build. Ctrl-C kills a build under way.

use clap::Subcommand;

use crate::exit;
use crate::fail::{Fail, finish};
use skald_api::CancellationToken;
use skald_core::DataDir;
use skald_viewer::latex::LatexStage;
use skald_viewer::{Build, BundleChoice, FileWatcher, LatexEngine, LatexError};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One build, in a LaTeX worker process waited for on a blocking thread; Ctrl-C stops it
/// (the worker is killed) and gives `LatexError::Cancelled`.
async fn run(engine: Arc<LatexEngine>, tex: PathBuf) -> Result<Build, LatexError> {
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let mut build = tokio::task::spawn_blocking(move || {
        // Only the long stage is worth a line: the first build making the format file.
        let progress = |stage: LatexStage| {
            if stage == LatexStage::Format {
                eprintln!("{}…", stage.describe());
            }
        };
        engine.build_reporting(&tex, &stop, &progress)
    });
    let joined = |r: Result<Result<Build, LatexError>, tokio::task::JoinError>| {
        r.unwrap_or_else(|e| Err(LatexError::Io(e.to_string())))
    };
    tokio::select! {
        r = &mut build => joined(r),
        _ = tokio::signal::ctrl_c() => {
            cancel.cancel();
            // The worker is killed within one poll; the wait is bounded all the same.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), build).await;
            Err(LatexError::Cancelled)
        }
    }
}

fn report(result: &Result<Build, LatexError>, json: bool) {
    match (result, json) {
        (Ok(b), true) => println!("{}", serde_json::to_value(b).unwrap_or_default()),
        (Ok(b), false) => println!(
            "built {} in {} ms{}",
            b.pdf.display(),
            b.millis,
            if b.from_cache { " (cached)" } else { "" }
        ),
        (Err(LatexError::Compile { errors }), true) => {
            println!("{}", serde_json::json!({ "errors": errors }))
        }
        (Err(e), true) => println!("{}", serde_json::json!({ "error": e.to_string() })),
        (Err(e), false) => eprintln!("{e}"),
    }
}

pub async fn build(
    data_dir: &DataDir,
    path: &Path,
    bundle: Option<&Path>,
    watch: bool,
    json: bool,
) -> Result<u8, Fail> {
    let tex = match std::fs::canonicalize(path) {
        Ok(p) if p.is_file() => p,
        _ => return Err(Fail::usage(format!("{} is not a file", path.display()))),
    };
    let bundle = match bundle
        .map(Path::to_path_buf)
        .or_else(skald_base::tex::named_bundle)
    {
        Some(zip) => BundleChoice::Zip(zip),
        None => BundleChoice::Default,
    };
    // Builds never read what the file tools guard (credential folders, Skald's secrets).
    let withheld = skald_core::withheld::Withheld::default();
    withheld.protect(&data_dir.secrets_dir());
    let engine = Arc::new(
        LatexEngine::new(
            data_dir.root().join("cache").join("latex"),
            bundle,
            skald_core::approval::guarded_paths(&withheld.folders()),
        )
        .with_offline(data_dir.tex_bundle_path()),
    );
    let first = run(engine.clone(), tex.clone()).await;
    if matches!(first, Err(LatexError::Cancelled)) {
        return Err(stopped());
    }
    report(&first, json);
    // A failed build was reported above; its exit code is all that is left to say.
    if !watch {
        return Ok(if first.is_ok() {
            exit::OK
        } else {
            exit::FAILED
        });
    }
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let watcher = FileWatcher::new(move |files| {
        let _ = tx.send(files);
    })
    .map_err(Fail::failed)?;
    let mut watched = match &first {
        Ok(b) => b.inputs.clone(),
        Err(_) => vec![tex.clone()],
    };
    watcher.subscribe(&watched).map_err(Fail::failed)?;
    if !json {
        eprintln!("watching {} file(s); Ctrl-C stops", watched.len());
    }
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => return Ok(exit::CANCELLED),
            changed = rx.recv() => {
                let Some(files) = changed else {
                    return Ok(exit::FAILED);
                };
                if json {
                    for f in &files {
                        let e = skald_api::events::Event::FileChanged {
                            path: f.display().to_string(),
                        };
                        println!("{}", serde_json::to_string(&e).unwrap_or_default());
                    }
                }
                // Changes that came in meanwhile are covered by this build.
                while rx.try_recv().is_ok() {}
                let result = run(engine.clone(), tex.clone()).await;
                if matches!(result, Err(LatexError::Cancelled)) {
                    return Err(stopped());
                }
                report(&result, json);
                // A successful build may have new inputs (a new \input): follow them.
                if let Ok(b) = &result && b.inputs != watched {
                    watcher.unsubscribe(&watched);
                    watched = b.inputs.clone();
                    if let Err(e) = watcher.subscribe(&watched) {
                        eprintln!("skald latex: {e}");
                    }
                }
            }
        }
    }
}

/// A build stopped by Ctrl-C.
fn stopped() -> Fail {
    Fail::with_code(exit::CANCELLED, "stopped")
}

#[derive(Debug, Subcommand)]
pub enum LatexCommand {
    /// Build a .tex file to PDF (from the cache when none of its inputs changed)
    #[command(
        after_help = "The TeX support files come from --bundle (a zip bundle, also \
                      SKALD_TEX_BUNDLE), else the offline bundle `skald latex bundle` built, \
                      else tectonic's default online bundle, cached after its first \
                      use.\n\nExample: skald latex build paper.tex --watch"
    )]
    Build {
        path: PathBuf,
        /// A local zip bundle (offline)
        #[arg(long, value_name = "ZIP")]
        bundle: Option<PathBuf>,
        /// Rebuild on every change of any input of the last build, until Ctrl-C
        #[arg(long)]
        watch: bool,
        /// One JSON object per build
        #[arg(long)]
        json: bool,
    },
    /// Build the offline TeX bundle LaTeX previews use without the network
    #[command(
        after_help = "From the TeX Live installed on this machine (Debian and Ubuntu: apt \
                      install texlive-latex-base texlive-xetex lmodern), into Skald's data \
                      folder, where every build then finds it.\n\nExample: skald latex \
                      bundle --from-system"
    )]
    Bundle {
        /// Take the files from the installed TeX Live (the only source there is)
        #[arg(long, required = true)]
        from_system: bool,
        /// Only the files named in this list (one name per line)
        #[arg(long, value_name = "FILE")]
        only: Option<PathBuf>,
        /// Where to write the zip (default: the data folder's tex/bundle.zip)
        #[arg(long, value_name = "ZIP")]
        out: Option<PathBuf>,
    },
}

/// `skald latex bundle --from-system`.
fn bundle(data_dir: &DataDir, only: Option<&Path>, out: Option<&Path>) -> Result<u8, Fail> {
    let only = match only {
        Some(list) => Some(
            std::fs::read_to_string(list)
                .map_err(|e| Fail::usage(format!("cannot read {}: {e}", list.display())))?
                .split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>(),
        ),
        None => None,
    };
    let out = out.map_or_else(|| data_dir.tex_bundle_path(), Path::to_path_buf);
    let trees = skald_viewer::latex::bundle::SYSTEM_TREES;
    let progress =
        crate::progress::line(|done, total, _| format!("bundling TeX files: {done}/{total}"));
    let built =
        skald_viewer::latex::bundle::build(trees, only.as_deref(), &out, &mut |done, total| {
            progress.report(done as u64, total as u64)
        });
    progress.end();
    let built = built.map_err(Fail::failed)?;
    println!(
        "built {} ({} files, {:.1} MB); LaTeX previews now work offline",
        built.path.display(),
        built.files,
        built.bytes as f64 / 1e6
    );
    Ok(exit::OK)
}

/// Runs one `latex` subcommand; its exit code.
pub async fn dispatch(env: &crate::Env, command: LatexCommand) -> u8 {
    let result = match command {
        LatexCommand::Build {
            path,
            bundle,
            watch,
            json,
        } => build(&env.data_dir, &path, bundle.as_deref(), watch, json).await,
        LatexCommand::Bundle {
            from_system: _,
            only,
            out,
        } => bundle(&env.data_dir, only.as_deref(), out.as_deref()),
    };
    finish("skald latex", result)
}
