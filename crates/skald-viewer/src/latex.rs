//! LaTeX compiled to PDF in-process with `tectonic` (pinned, used only here). A build is
//! cached by the document's path and a hash of every input file's content — the files the
//! last successful compile read from the document's folder, not the TeX bundle's — so an
//! unchanged document is served without running TeX. A failed compile is reported as
//! `file:line: message` errors from its log. Compiles run on a thread of their own, with a
//! timeout, one per document at a time (a newer request supersedes a running one's
//! result).

use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tectonic::driver::{OutputFormat, ProcessingSessionBuilder};
use tectonic::status::NoopStatusBackend;

/// How long a compile may take.
pub const COMPILE_TIMEOUT: Duration = Duration::from_secs(120);

/// Where the TeX support files come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BundleChoice {
    /// A local zip bundle (offline).
    Zip(PathBuf),
    /// Tectonic's default online bundle, cached by tectonic; offline it works from that
    /// cache, or fails with a clear message.
    Default,
}

pub use skald_api::view::TexError;

#[derive(Debug, thiserror::Error)]
pub enum LatexError {
    #[error("LaTeX errors:\n{}", .errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Compile { errors: Vec<TexError> },
    #[error("the TeX bundle is not available: {0}")]
    Bundle(String),
    #[error("the compile took longer than {} s", .0.as_secs())]
    Timeout(Duration),
    #[error("a newer build of this document replaced this one")]
    Superseded,
    #[error("{0}")]
    Io(String),
}

/// A finished build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Build {
    pub pdf: PathBuf,
    /// Served from the cache: nothing changed since the last build.
    pub from_cache: bool,
    /// The document's own input files, which a watcher should follow.
    pub inputs: Vec<PathBuf>,
    pub millis: u64,
}

#[derive(Debug, Clone, serde::Deserialize, Serialize)]
struct Manifest {
    /// (input, sha256 of its content) for every input of the build.
    inputs: Vec<(PathBuf, String)>,
}

pub struct LatexEngine {
    cache_dir: PathBuf,
    bundle: BundleChoice,
    /// The newest build requested per document; older ones give way.
    generations: Mutex<HashMap<PathBuf, u64>>,
    /// One compile per document at a time.
    locks: Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn sha256_file(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    Some(format!("{:x}", Sha256::digest(&bytes)))
}

impl LatexEngine {
    pub fn new(cache_dir: PathBuf, bundle: BundleChoice) -> LatexEngine {
        LatexEngine {
            cache_dir,
            bundle,
            generations: Mutex::new(HashMap::new()),
            locks: Mutex::new(HashMap::new()),
        }
    }

    /// The cache folder of one document.
    fn doc_dir(&self, tex: &Path) -> PathBuf {
        let key = format!("{:x}", Sha256::digest(tex.display().to_string().as_bytes()));
        self.cache_dir.join(&key[..16])
    }

    /// Builds `tex` (an absolute path) to PDF, from the cache when none of its inputs
    /// changed. Blocking: call it off the async runtime (`spawn_blocking`).
    pub fn build(&self, tex: &Path) -> Result<Build, LatexError> {
        let started = Instant::now();
        let generation = {
            let mut g = lock(&self.generations);
            let n = g.entry(tex.to_path_buf()).or_insert(0);
            *n += 1;
            *n
        };
        let doc_lock = lock(&self.locks)
            .entry(tex.to_path_buf())
            .or_default()
            .clone();
        let _one_at_a_time = lock(&doc_lock);
        if lock(&self.generations).get(tex).copied() != Some(generation) {
            return Err(LatexError::Superseded);
        }
        let dir = self.doc_dir(tex);
        let pdf = dir.join("out.pdf");
        let manifest_path = dir.join("manifest.json");
        if let Some(m) = std::fs::read(&manifest_path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Manifest>(&b).ok())
            && pdf.is_file()
            && m.inputs
                .iter()
                .all(|(p, h)| sha256_file(p).as_deref() == Some(h.as_str()))
        {
            return Ok(Build {
                pdf,
                from_cache: true,
                inputs: m.inputs.into_iter().map(|(p, _)| p).collect(),
                millis: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            });
        }
        let io = |e: std::io::Error| LatexError::Io(format!("{}: {e}", dir.display()));
        std::fs::create_dir_all(&dir).map_err(io)?;
        let work = dir.join("work");
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).map_err(io)?;
        // The last successful build's intermediate files (.aux, .toc, …): when a pass
        // writes them back unchanged, TeX is not run a second time.
        let previous = dir.join("previous");
        let (tex_owned, work_owned, prev_owned, bundle, fmt_dir) = (
            tex.to_path_buf(),
            work.clone(),
            previous.clone(),
            self.bundle.clone(),
            self.cache_dir.join("formats"),
        );
        // A thread of its own: tectonic blocks, and cannot be interrupted; on a timeout
        // its result is dropped when it comes.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(compile(
                &tex_owned,
                &work_owned,
                &prev_owned,
                &bundle,
                &fmt_dir,
            ));
        });
        let outcome = rx
            .recv_timeout(COMPILE_TIMEOUT)
            .map_err(|_| LatexError::Timeout(COMPILE_TIMEOUT))?;
        if lock(&self.generations).get(tex).copied() != Some(generation) {
            return Err(LatexError::Superseded);
        }
        let inputs = outcome?;
        let stem = tex.file_stem().and_then(|s| s.to_str()).unwrap_or("texput");
        std::fs::rename(work.join(format!("{stem}.pdf")), &pdf).map_err(io)?;
        // What is left in the work folder are this build's intermediates: the next
        // build's "previous".
        let _ = std::fs::remove_dir_all(&previous);
        std::fs::rename(&work, &previous).map_err(io)?;
        let manifest = Manifest {
            inputs: inputs
                .iter()
                .filter_map(|p| sha256_file(p).map(|h| (p.clone(), h)))
                .collect(),
        };
        std::fs::write(
            &manifest_path,
            serde_json::to_vec(&manifest).unwrap_or_default(),
        )
        .map_err(io)?;
        Ok(Build {
            pdf,
            from_cache: false,
            inputs,
            millis: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        })
    }
}

/// One compile into `work`; returns the document's own input files.
fn compile(
    tex: &Path,
    work: &Path,
    previous: &Path,
    bundle: &BundleChoice,
    fmt_dir: &Path,
) -> Result<Vec<PathBuf>, LatexError> {
    let root = tex
        .parent()
        .ok_or_else(|| LatexError::Io(format!("{} has no folder", tex.display())))?;
    let name = tex
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| LatexError::Io(format!("{} is not a UTF-8 name", tex.display())))?;
    let mut status = NoopStatusBackend::default();
    let bundle: Box<dyn tectonic_bundles::Bundle> = match bundle {
        BundleChoice::Zip(zip) => {
            if !zip.is_file() {
                return Err(LatexError::Bundle(format!(
                    "{} does not exist (build one with scripts/tex-bundle.py, or use the \
                     default online bundle)",
                    zip.display()
                )));
            }
            Box::new(
                tectonic_bundles::zip::ZipBundle::open(zip)
                    .map_err(|e| LatexError::Bundle(format!("{}: {e}", zip.display())))?,
            )
        }
        // Never `PersistentConfig::default_bundle()`: it panics offline.
        // Online first (tectonic caches what it fetches); offline, from that cache alone.
        BundleChoice::Default => {
            tectonic_bundles::get_fallback_bundle(tectonic::FORMAT_SERIAL, false)
                .or_else(|_| tectonic_bundles::get_fallback_bundle(tectonic::FORMAT_SERIAL, true))
                .map_err(|e| {
                    LatexError::Bundle(format!(
                        "the default online bundle cannot be opened ({e}); connect once so it \
                     is cached, or use a local zip bundle (--bundle, SKALD_TEX_BUNDLE)"
                    ))
                })?
        }
    };
    std::fs::create_dir_all(fmt_dir).map_err(|e| LatexError::Io(e.to_string()))?;
    let deps = work.join("deps.mk");
    // Extra search paths count as an "insecure" feature in tectonic, though this one is
    // Skald's own cache folder; shell escape stays off (it is never requested).
    let mut sb =
        ProcessingSessionBuilder::new_with_security(tectonic_bridge_core::SecuritySettings::new(
            tectonic_bridge_core::SecurityStance::MaybeAllowInsecures,
        ));
    sb.unstables(tectonic::unstable_opts::UnstableOptions {
        extra_search_paths: vec![previous.to_path_buf()],
        ..Default::default()
    })
    .shell_escape_disabled()
    .bundle(bundle)
    .primary_input_path(tex)
    .tex_input_name(name)
    .filesystem_root(root)
    .output_dir(work)
    .format_name("latex")
    .format_cache_path(fmt_dir)
    .output_format(OutputFormat::Pdf)
    .makefile_output_path(&deps)
    .keep_logs(true)
    .keep_intermediates(true)
    .print_stdout(false)
    .build_date(std::time::SystemTime::now());
    let run = sb
        .create(&mut status)
        .and_then(|mut session| session.run(&mut status));
    let stem = tex.file_stem().and_then(|s| s.to_str()).unwrap_or("texput");
    if let Err(e) = run {
        let log = std::fs::read_to_string(work.join(format!("{stem}.log"))).unwrap_or_default();
        let mut errors = parse_log(&log, root);
        if errors.is_empty() {
            errors.push(TexError {
                file: name.to_string(),
                line: None,
                message: e.to_string(),
            });
        }
        return Err(LatexError::Compile { errors });
    }
    Ok(inputs_from_makefile(
        &std::fs::read_to_string(&deps).unwrap_or_default(),
        tex,
        root,
        work,
    ))
}

/// The document's own inputs from tectonic's make rules: files under the document's
/// folder (written re-rooted at the output folder), the main file always included.
fn inputs_from_makefile(rules: &str, tex: &Path, root: &Path, work: &Path) -> Vec<PathBuf> {
    let mut out = vec![tex.to_path_buf()];
    let deps = rules.split_once(':').map_or("", |(_, d)| d);
    for raw in deps.split_whitespace().filter(|d| *d != "\\") {
        let p = PathBuf::from(raw);
        let p = match p.strip_prefix(work) {
            Ok(rel) => root.join(rel),
            Err(_) if p.is_relative() => root.join(&p),
            Err(_) => p,
        };
        if p.starts_with(root) && p.is_file() && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// `file:line: message` for each `! …` error of a TeX log: the file is the last one
/// TeX opened before the error, the line the `l.N` that follows it.
fn parse_log(log: &str, root: &Path) -> Vec<TexError> {
    let mut errors = Vec::new();
    // TeX writes `(file` when it opens a file and `)` when it closes it: a stack of what
    // is open says which file an error is in. Parentheses that open no file (in
    // messages) are kept as `None` so that their `)` closes nothing real.
    let mut open: Vec<Option<String>> = Vec::new();
    let lines: Vec<&str> = log.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        for (pos, c) in line.char_indices() {
            match c {
                '(' => {
                    let name: String = line[pos + 1..]
                        .chars()
                        .take_while(|c| !c.is_whitespace() && *c != ')' && *c != '(')
                        .collect();
                    let is_file = !name.is_empty()
                        && (name.contains('.') || root.join(format!("{name}.tex")).is_file());
                    open.push(is_file.then_some(name));
                }
                ')' => {
                    open.pop();
                }
                _ => {}
            }
        }
        if let Some(message) = line.strip_prefix("! ") {
            let current = open
                .iter()
                .rev()
                .find_map(|f| f.clone())
                .unwrap_or_else(|| "?".to_string());
            let line_no = lines[i + 1..]
                .iter()
                .take(12)
                .find_map(|l| l.strip_prefix("l."))
                .and_then(|l| l.split_whitespace().next())
                .and_then(|n| n.parse().ok());
            let file = if Path::new(&current).extension().is_none() {
                format!("{current}.tex")
            } else {
                current.trim_start_matches("./").to_string()
            };
            errors.push(TexError {
                file,
                line: line_no,
                message: message.trim().to_string(),
            });
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_closed_before_the_error_is_not_blamed() {
        let dir = tempfile::tempdir().unwrap();
        let log = "(paper.tex\nLaTeX2e (article.cls (size10.clo)) (ts1cmr.fd)\n\
                   [1] (see the transcript)\n! Undefined control sequence.\nl.4 \\undefinedmacro\n";
        let errors = parse_log(log, dir.path());
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].file, "paper.tex");
        assert_eq!(errors[0].line, Some(4));
    }

    #[test]
    fn errors_name_their_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("broken.tex"), "x").unwrap();
        let log = "This is XeTeX\n(main.tex\nLaTeX2e\n (broken\n! Undefined control sequence.\nl.2 \\undefinedcommand\n                      here\n";
        let errors = parse_log(log, dir.path());
        assert_eq!(
            errors,
            [TexError {
                file: "broken.tex".into(),
                line: Some(2),
                message: "Undefined control sequence.".into()
            }]
        );
        assert_eq!(
            errors[0].to_string(),
            "broken.tex:2: Undefined control sequence."
        );
    }

    #[test]
    fn inputs_are_the_documents_own_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("main.tex"), "x").unwrap();
        std::fs::write(root.join("chapter.tex"), "x").unwrap();
        let work = root.join(".cache/work");
        let rules = format!(
            "{}/main.pdf: {}/main.tex \\\n {}/chapter.tex /usr/share/texmf/article.cls\n",
            work.display(),
            work.display(),
            work.display()
        );
        let inputs = inputs_from_makefile(&rules, &root.join("main.tex"), root, &work);
        assert_eq!(inputs, [root.join("main.tex"), root.join("chapter.tex")]);
    }
}
