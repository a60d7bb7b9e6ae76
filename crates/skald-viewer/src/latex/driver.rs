//! One compile, as tectonic's `ProcessingSession` runs it but over our own I/O (`io`):
//! the format file made and cached when missing, XeTeX run, BibTeX when the `.aux` asks
//! for it, XeTeX again while a file it read and rewrote changed (at most
//! `MAX_RERUNS` more times), then xdvipdfmx to PDF. Everything written lands in the
//! build's work folder, the log included, whether the build succeeded or not.

use super::io::{BuildIo, Messages};
use super::policy::ReadPolicy;
use super::worker::{Outcome, Request, report};
use super::{BundleChoice, TexError, parse_log};
use skald_api::view::LatexStage;
use std::time::SystemTime;
use tectonic_bridge_core::CoreBridgeLauncher;
use tectonic_engine_bibtex::BibtexEngine;
use tectonic_engine_xdvipdfmx::XdvipdfmxEngine;
use tectonic_engine_xetex::{TexEngine, TexOutcome};

/// The format every build uses (`tectonic-format-latex.tex` in the bundle makes it).
const FORMAT: &str = "latex";
/// How many times TeX runs again after its first pass, at most (tectonic's limit).
const MAX_RERUNS: usize = 6;

/// Runs the build `req` describes; never panics on bad input, always says what happened.
pub(crate) fn compile(req: &Request) -> Outcome {
    let io_err = |message: String| Outcome::Io { message };
    let tex = &req.tex;
    let Some(root) = tex.parent() else {
        return io_err(format!("{} has no folder", tex.display()));
    };
    let Some(name) = tex.file_name().and_then(|n| n.to_str()) else {
        return io_err(format!("{} is not a UTF-8 name", tex.display()));
    };
    let stem = tex.file_stem().and_then(|s| s.to_str()).unwrap_or("texput");
    let policy = match ReadPolicy::new(root, &req.deny) {
        Ok(p) => p,
        Err(e) => return io_err(format!("{}: {e}", root.display())),
    };
    let root = policy.root().to_path_buf();
    let bundle = match open_bundle(&req.bundle) {
        Ok(b) => b,
        Err(message) => return Outcome::Bundle { message },
    };
    if let Err(e) = std::fs::create_dir_all(&req.formats) {
        return io_err(format!("{}: {e}", req.formats.display()));
    }
    let mut io = match BuildIo::new(
        policy,
        tex.clone(),
        req.previous.clone(),
        bundle,
        req.formats.clone(),
    ) {
        Ok(io) => io,
        Err(message) => return Outcome::Bundle { message },
    };
    let mut messages = Messages::default();
    let run = passes(&mut io, &mut messages, name, stem);
    if let Err(e) = io.write_outputs(&req.work) {
        return io_err(format!("{}: {e}", req.work.display()));
    }
    if run.is_ok() && io.refusals().is_empty() {
        return Outcome::Built {
            inputs: io.inputs(),
        };
    }
    // What was refused first: it is why the build failed, or why it must not be shown.
    let mut errors: Vec<TexError> = io
        .refusals()
        .iter()
        .map(|r| TexError {
            file: name.to_string(),
            line: None,
            message: r.message(),
        })
        .collect();
    let log = std::fs::read_to_string(req.work.join(format!("{stem}.log"))).unwrap_or_default();
    errors.extend(parse_log(&log, &root));
    if let Err(e) = run
        && errors.is_empty()
    {
        let detail = messages
            .lines
            .iter()
            .rev()
            .find(|l| !l.starts_with("Couldn't open font map file"))
            .filter(|l| !e.contains(l.as_str()))
            .map(|l| format!(" ({l})"))
            .unwrap_or_default();
        errors.push(TexError {
            file: name.to_string(),
            line: None,
            message: format!("{e}{detail}"),
        });
    }
    Outcome::Compile { errors }
}

fn open_bundle(choice: &BundleChoice) -> Result<Box<dyn tectonic_bundles::Bundle>, String> {
    match choice {
        BundleChoice::Zip(zip) => {
            if !zip.is_file() {
                return Err(format!(
                    "{} does not exist (build one with `skald latex bundle --from-system`, \
                     or use the default online bundle)",
                    zip.display()
                ));
            }
            tectonic_bundles::zip::ZipBundle::open(zip)
                .map(|b| Box::new(b) as Box<dyn tectonic_bundles::Bundle>)
                .map_err(|e| format!("{}: {e}", zip.display()))
        }
        // Never tectonic's `PersistentConfig::default_bundle()`: it panics offline.
        // Online first (tectonic caches what it fetches); offline, from that cache alone.
        BundleChoice::Default => {
            let serial = tectonic_engine_xetex::FORMAT_SERIAL;
            tectonic_bundles::get_fallback_bundle(serial, false)
                .or_else(|_| tectonic_bundles::get_fallback_bundle(serial, true))
                .map_err(|e| {
                    format!(
                        "the default online bundle cannot be opened ({e}); connect once so it \
                         is cached, or use a local zip bundle (--bundle, SKALD_TEX_BUNDLE)"
                    )
                })
        }
    }
}

fn passes(io: &mut BuildIo, status: &mut Messages, name: &str, stem: &str) -> Result<(), String> {
    if !io.formats.exists(FORMAT) {
        report(LatexStage::Format);
        make_format(io, status)?;
    }
    let mut pass = 0;
    let mut tex = |io: &mut BuildIo, status: &mut Messages| {
        pass += 1;
        report(LatexStage::Tex { pass });
        tex_pass(io, status, name)
    };
    let aux = format!("{stem}.aux");
    let xdv = format!("{stem}.xdv");
    let pdf = format!("{stem}.pdf");
    tex(io, status)?;
    // BibTeX when the .aux names a bibliography and what BibTeX reads changed since the
    // last build (else that build's .bbl, which this pass read, is the one it would
    // write); after it TeX always runs again.
    let mut rerun = if io
        .file(&aux)
        .is_some_and(|a| a.windows(8).any(|w| w == b"\\bibdata"))
    {
        let auxes = aux_files(io, &aux);
        let key = bibtex_key(io, &auxes);
        if !reuse_bibliography(io, &auxes, &key) {
            report(LatexStage::Bibtex);
            bibtex_pass(io, status, &auxes)?;
            io.put(BIBTEX_KEY, key);
            true
        } else {
            io.changed_file().is_some()
        }
    } else {
        io.changed_file().is_some()
    };
    for _ in 0..MAX_RERUNS {
        if !rerun {
            break;
        }
        io.forget_reads();
        tex(io, status)?;
        rerun = io.changed_file().is_some();
    }
    if io.file(&xdv).is_none() {
        return Err("TeX produced no pages (is the document empty?)".into());
    }
    report(LatexStage::Pdf);
    let before = status.lines.len();
    let made = {
        let mut launcher = CoreBridgeLauncher::new(io, status);
        XdvipdfmxEngine::default()
            .build_date(SystemTime::now())
            .process(&mut launcher, &xdv, &pdf)
    };
    made.map_err(|e| {
        pdf_error(
            &e.to_string(),
            &status.lines[before.min(status.lines.len())..],
        )
    })?;
    io.remove_file(&xdv);
    Ok(())
}

/// Why xdvipdfmx stopped: its last words (the image it could not include, the font it
/// could not proceed without) and what it warned about on the way, as `tectonic` itself
/// prints them — but not the font map files every build of the standard bundle lacks
/// (`pdftex.map`, `kanjix.map`), which would bury the one line that matters.
fn pdf_error(abort: &str, warnings: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for w in warnings {
        let w = w.trim();
        if !w.is_empty()
            && w != abort.trim()
            && !w.starts_with("Couldn't open font map file")
            && !seen.contains(&w)
            && seen.len() < 6
        {
            seen.push(w);
        }
    }
    if seen.is_empty() {
        format!("xdvipdfmx: {abort}")
    } else {
        format!("xdvipdfmx: {abort} ({})", seen.join("; "))
    }
}

fn tex_pass(io: &mut BuildIo, status: &mut Messages, name: &str) -> Result<(), String> {
    let mut launcher = CoreBridgeLauncher::new(io, status);
    let outcome = TexEngine::default()
        .halt_on_error_mode(true)
        .initex_mode(false)
        .synctex(false)
        .shell_escape(false)
        .build_date(SystemTime::now())
        .process(&mut launcher, FORMAT, name)
        .map_err(|e| format!("XeTeX: {e}"))?;
    match outcome {
        TexOutcome::Spotless | TexOutcome::Warnings => Ok(()),
        TexOutcome::Errors => Err("XeTeX reported errors".into()),
    }
}

/// Where a build keeps what its BibTeX run read (`bibtex_key`), for the next build.
const BIBTEX_KEY: &str = "skald-bibtex.key";

/// The main `.aux` and every other `.aux` the pass wrote (`\include`d files).
fn aux_files(io: &BuildIo, main_aux: &str) -> Vec<String> {
    let mut auxes = vec![main_aux.to_string()];
    auxes.extend(
        io.file_names()
            .into_iter()
            .filter(|n| n.ends_with(".aux") && n != main_aux),
    );
    auxes
}

/// A digest of everything BibTeX's output depends on: the bundle (its styles), the
/// `.aux` files' citations, databases and style, and each database's contents.
fn bibtex_key(io: &mut BuildIo, auxes: &[String]) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(io.bundle_digest().as_bytes());
    for aux in auxes {
        h.update(aux.as_bytes());
        let text = io.file(aux).unwrap_or_default();
        for line in text.split(|b| *b == b'\n') {
            let wanted = [&b"\\citation{"[..], b"\\bibdata{", b"\\bibstyle{"];
            if !wanted.iter().any(|w| line.starts_with(w)) {
                continue;
            }
            h.update(line);
            h.update(b"\n");
            let Some(names) = line.strip_prefix(b"\\bibdata{") else {
                continue;
            };
            let names = String::from_utf8_lossy(names);
            for name in names.trim_end().trim_end_matches('}').split(',') {
                let file = format!("{}.bib", name.trim());
                h.update(file.as_bytes());
                // Databases of the bundle are not in the folder; they change with it.
                match io.read_input(&file) {
                    Some(data) => {
                        h.update(b"=");
                        h.update(Sha256::digest(&data));
                    }
                    None => h.update(b"-"),
                }
            }
        }
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    hex.into_bytes()
}

/// Whether the last build's bibliography still holds: it ran BibTeX on the same `key`
/// and kept the main `.bbl`. Then its `.bbl` files (which this build's first pass read)
/// and its key are carried into this build's outputs, for the next one.
fn reuse_bibliography(io: &mut BuildIo, auxes: &[String], key: &[u8]) -> bool {
    let bbl = |aux: &str| format!("{}.bbl", aux.trim_end_matches(".aux"));
    if io.previous_file(BIBTEX_KEY).as_deref() != Some(key)
        || io.previous_file(&bbl(&auxes[0])).is_none()
    {
        return false;
    }
    for aux in auxes {
        if let Some(data) = io.previous_file(&bbl(aux)) {
            io.put(&bbl(aux), data);
        }
    }
    io.put(BIBTEX_KEY, key.to_vec());
    true
}

/// BibTeX on every `.aux` of `auxes`.
fn bibtex_pass(io: &mut BuildIo, status: &mut Messages, auxes: &[String]) -> Result<(), String> {
    for aux in auxes {
        let mut launcher = CoreBridgeLauncher::new(io, status);
        BibtexEngine::default()
            .process(&mut launcher, aux)
            .map_err(|e| format!("BibTeX on {aux}: {e}"))?;
    }
    Ok(())
}

/// Makes the format file from the bundle alone (never the document's folder) and caches
/// it; then forgets what that run wrote and read.
fn make_format(io: &mut BuildIo, status: &mut Messages) -> Result<(), String> {
    io.enter_format_mode(format!("\\input tectonic-format-{FORMAT}.tex"));
    let result = {
        let mut launcher = CoreBridgeLauncher::new(io, status);
        TexEngine::default()
            .halt_on_error_mode(true)
            .initex_mode(true)
            .shell_escape(false)
            .process(&mut launcher, "UNUSED.fmt", "texput")
    };
    io.leave_format_mode();
    match result {
        Ok(TexOutcome::Spotless | TexOutcome::Warnings) => {}
        Ok(TexOutcome::Errors) => return Err("making the format file failed".into()),
        Err(e) => return Err(format!("making the format file failed: {e}")),
    }
    let fmt = io
        .file_names()
        .into_iter()
        .find(|n| n.ends_with(".fmt"))
        .and_then(|n| io.file(&n))
        .ok_or("making the format file wrote no .fmt")?;
    io.formats
        .store(FORMAT, &fmt)
        .map_err(|e| format!("cannot cache the format file: {e}"))?;
    io.clear();
    Ok(())
}
