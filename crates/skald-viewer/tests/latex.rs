//! LaTeX against the small offline bundle (tests/tex/bundle.zip, built from Debian's TeX
//! packages by `scripts/setup.sh --test`), read back with pdftotext. Builds run in worker
//! processes: this test binary started again to run only `latex_worker`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use skald_api::CancellationToken;
use skald_viewer::{BundleChoice, LatexEngine, LatexError, WorkerCommand};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Not a test: the LaTeX worker, when this binary is started as one.
#[test]
fn latex_worker() {
    if let Some(code) = skald_viewer::latex::worker::run_worker_if_asked() {
        std::process::exit(code);
    }
}

/// This binary, running only `latex_worker`.
fn worker() -> WorkerCommand {
    WorkerCommand::new(
        std::env::current_exe().unwrap(),
        ["latex_worker", "--exact", "--nocapture", "--test-threads=1"],
    )
}

fn engine(cache: &Path) -> LatexEngine {
    LatexEngine::new(cache.to_path_buf(), BundleChoice::Zip(bundle()), Vec::new())
        .with_worker(worker())
}

fn never() -> CancellationToken {
    CancellationToken::new()
}

fn bundle() -> PathBuf {
    let zip = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/tex/bundle.zip");
    assert!(
        zip.is_file(),
        "no offline TeX bundle: run `bash scripts/setup.sh --test`"
    );
    zip
}

/// The test article (main.tex with \input{chapter}, amsmath and a figure) in a folder of
/// its own.
fn article() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/tex/article");
    for f in ["main.tex", "chapter.tex", "dot.png"] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    dir
}

fn pdf_text(pdf: &Path) -> String {
    let out = std::process::Command::new("pdftotext")
        .arg(pdf)
        .arg("-")
        .output()
        .expect("pdftotext (poppler-utils) is installed by scripts/setup.sh --test");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_multi_file_document_compiles_offline_and_is_cached_by_its_inputs() {
    let doc = article();
    let root = std::fs::canonicalize(doc.path()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let engine = engine(cache.path());
    let main = root.join("main.tex");

    let first = engine.build(&main, &never()).unwrap();
    assert!(!first.from_cache);
    let text = pdf_text(&first.pdf);
    assert!(text.contains("Hello from the main file."), "{text}");
    assert!(text.contains("Text from the chapter file."), "{text}");
    assert!(text.contains("A dot"), "{text}");
    assert!(
        first.inputs.contains(&root.join("chapter.tex")),
        "{:?}",
        first.inputs
    );
    assert!(first.inputs.contains(&main));

    // Nothing changed: the cache answers, TeX does not run (the PDF is untouched).
    let stamp = std::fs::metadata(&first.pdf).unwrap().modified().unwrap();
    let again = engine.build(&main, &never()).unwrap();
    assert!(again.from_cache);
    assert_eq!(
        std::fs::metadata(&again.pdf).unwrap().modified().unwrap(),
        stamp
    );

    // An \input file changed: a real build with the new text.
    std::fs::write(
        root.join("chapter.tex"),
        "\\section{Chapter}\nRewritten chapter text.\n",
    )
    .unwrap();
    let third = engine.build(&main, &never()).unwrap();
    assert!(!third.from_cache);
    assert!(pdf_text(&third.pdf).contains("Rewritten chapter text."));
}

#[test]
fn an_error_names_the_input_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(
        root.join("main.tex"),
        "\\documentclass{article}\n\\begin{document}\nStart.\n\\input{broken}\n\\end{document}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("broken.tex"),
        "Fine line.\n\\undefinedcommand here\n",
    )
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let engine = engine(cache.path());
    match engine.build(&root.join("main.tex"), &never()) {
        Err(LatexError::Compile { errors }) => {
            assert_eq!(
                errors[0].to_string(),
                "broken.tex:2: Undefined control sequence."
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_missing_bundle_is_a_clear_error() {
    let doc = article();
    let cache = tempfile::tempdir().unwrap();
    let engine = LatexEngine::new(
        cache.path().to_path_buf(),
        BundleChoice::Zip(PathBuf::from("/nonexistent/bundle.zip")),
        Vec::new(),
    )
    .with_worker(worker());
    let e = engine
        .build(&doc.path().join("main.tex"), &never())
        .unwrap_err();
    assert!(matches!(e, LatexError::Bundle(_)), "{e:?}");
    assert!(
        e.to_string()
            .contains("/nonexistent/bundle.zip does not exist"),
        "{e}"
    );
}

/// One cache for the tests below, its format file made once, so that a short timeout is
/// spent in the document and not in making the format. Builds of earlier runs are
/// cleared; the format file is kept.
fn warm_cache() -> &'static Path {
    static CACHE: OnceLock<PathBuf> = OnceLock::new();
    CACHE.get_or_init(|| {
        let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("latex-cache");
        std::fs::create_dir_all(&cache).unwrap();
        for entry in std::fs::read_dir(&cache).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n != "formats") {
                std::fs::remove_dir_all(&path).unwrap();
            }
        }
        let doc = tempfile::tempdir().unwrap();
        let main = std::fs::canonicalize(doc.path()).unwrap().join("warm.tex");
        std::fs::write(
            &main,
            "\\documentclass{article}\n\\begin{document}\nWarm.\n\\end{document}\n",
        )
        .unwrap();
        engine(&cache).build(&main, &never()).unwrap();
        cache
    })
}

/// A document in `<base>/doc` with an `outside` folder next to it.
struct Doc {
    _base: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    main: PathBuf,
}

fn doc(main: &str) -> Doc {
    let base_dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(base_dir.path()).unwrap();
    let root = base.join("doc");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    let main_path = root.join("main.tex");
    std::fs::write(&main_path, main).unwrap();
    Doc {
        _base: base_dir,
        base,
        root,
        main: main_path,
    }
}

/// Every file under `dirs` but `except`, PDFs as pdftotext reads them.
fn assert_nowhere(marker: &str, dirs: &[&Path], except: &[PathBuf]) {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() && entry.file_name() != "formats" {
                walk(&path, out);
            } else if kind.is_file() {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    for d in dirs {
        walk(d, &mut files);
    }
    for f in files.iter().filter(|f| !except.contains(f)) {
        let text = if f.extension().is_some_and(|e| e == "pdf") {
            pdf_text(f)
        } else {
            String::from_utf8_lossy(&std::fs::read(f).unwrap()).into_owned()
        };
        assert!(!text.contains(marker), "{} holds {marker}", f.display());
    }
}

/// The build failed, and its errors name `name` and say `why`.
fn assert_refused(result: Result<skald_viewer::Build, LatexError>, name: &str, why: &str) {
    match result {
        Err(LatexError::Compile { errors }) => {
            let all: Vec<String> = errors.iter().map(ToString::to_string).collect();
            assert!(
                all.iter()
                    .any(|e| e.contains(&format!("`{name}`")) && e.contains(why)),
                "no error names `{name}` ({why}): {all:#?}"
            );
        }
        other => panic!("{name} was not refused: {other:?}"),
    }
}

fn writer(target: &str) -> String {
    format!(
        "\\documentclass{{article}}\n\\begin{{document}}\nText.\n\\newwrite\\w\n\
         \\immediate\\openout\\w={target}\n\\immediate\\write\\w{{echo pwned}}\n\
         \\immediate\\closeout\\w\n\\end{{document}}\n"
    )
}

#[test]
fn openout_to_an_absolute_path_is_refused_and_writes_nothing() {
    let target = tempfile::tempdir().unwrap();
    let x = std::fs::canonicalize(target.path()).unwrap().join("x.sh");
    let d = doc(&writer(&x.display().to_string()));
    let result = engine(warm_cache()).build(&d.main, &never());
    assert!(!x.exists(), "{} was written", x.display());
    assert_refused(result, &x.display().to_string(), "refused: absolute path");
}

#[test]
fn openout_above_the_folder_is_refused_and_writes_nothing() {
    for target in ["../x", "sub/../../x"] {
        let d = doc(&writer(target));
        std::fs::create_dir_all(d.root.join("sub")).unwrap();
        let result = engine(warm_cache()).build(&d.main, &never());
        for written in ["x", "x.tex"] {
            assert!(!d.base.join(written).exists(), "{target} was written");
        }
        // TeX adds `.tex`; the bridge folds `sub/../../x` into `../x.tex`.
        assert_refused(result, "../x.tex", "leaves the document's folder");
    }
}

/// `\openin` + `\read` of `name` into the text and into a written file, then `\input`.
fn reader(name: &str) -> String {
    format!(
        "\\documentclass{{article}}\n\\begin{{document}}\nBefore.\n\\newread\\r\n\
         \\openin\\r={name}\n\\ifeof\\r Closed.\\else\\read\\r to\\got Read: \\got.\\fi\n\
         \\closein\\r\n\\newwrite\\w\n\\immediate\\openout\\w=copy.txt\n\
         \\immediate\\write\\w{{\\ifdefined\\got\\got\\fi}}\n\\immediate\\closeout\\w\n\
         \\input{{{name}}}\n\\end{{document}}\n"
    )
}

/// Builds a document reading `name`, which holds `marker`: refused with `why`, and the
/// marker in no written file and no PDF.
fn check_read_refused(d: &Doc, engine: &LatexEngine, name: &str, why: &str, marker: &str) {
    let result = engine.build(&d.main, &never());
    assert_refused(result, name, why);
    let sources: Vec<PathBuf> = [
        "outside/marker.tex",
        "outside.tex",
        "doc/secrets/x.tex",
        "doc/deep/secrets/x.tex",
        "doc/keys/id.tex",
    ]
    .iter()
    .map(|p| d.base.join(p))
    .collect();
    assert_nowhere(marker, &[warm_cache(), &d.base], &sources);
}

#[test]
fn reads_outside_the_folder_are_refused() {
    // An absolute path.
    let marker = "MARKERABSOLUTEREAD";
    let probe = doc("");
    let abs = probe.base.join("outside/marker.tex");
    std::fs::write(&abs, format!("{marker}\n")).unwrap();
    std::fs::write(&probe.main, reader(&abs.display().to_string())).unwrap();
    check_read_refused(
        &probe,
        &engine(warm_cache()),
        &abs.display().to_string(),
        "refused: absolute path",
        marker,
    );

    // A name above the folder.
    let marker = "MARKERPARENTREAD";
    let d = doc(&reader("../outside.tex"));
    std::fs::write(d.base.join("outside.tex"), format!("{marker}\n")).unwrap();
    check_read_refused(
        &d,
        &engine(warm_cache()),
        "../outside.tex",
        "leaves the document's folder",
        marker,
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_folder_is_refused() {
    let marker = "MARKERSYMLINKREAD";
    let d = doc(&reader("link.tex"));
    let target = d.base.join("outside/marker.tex");
    std::fs::write(&target, format!("{marker}\n")).unwrap();
    std::os::unix::fs::symlink(&target, d.root.join("link.tex")).unwrap();
    check_read_refused(
        &d,
        &engine(warm_cache()),
        "link.tex",
        "refused: outside the document's folder",
        marker,
    );
}

#[test]
fn secrets_folders_inside_the_folder_are_refused() {
    for (name, marker) in [
        ("secrets/x.tex", "MARKERTOPSECRETS"),
        ("deep/secrets/x.tex", "MARKERDEEPSECRETS"),
    ] {
        let d = doc(&reader(name));
        let file = d.root.join(name);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, format!("{marker}\n")).unwrap();
        check_read_refused(
            &d,
            &engine(warm_cache()),
            name,
            "refused: in a secrets/ folder",
            marker,
        );
    }
}

#[test]
fn a_folder_of_the_deny_list_is_refused() {
    let marker = "MARKERDENIEDREAD";
    let d = doc(&reader("keys/id.tex"));
    std::fs::create_dir_all(d.root.join("keys")).unwrap();
    std::fs::write(d.root.join("keys/id.tex"), format!("{marker}\n")).unwrap();
    let engine = LatexEngine::new(
        warm_cache().to_path_buf(),
        BundleChoice::Zip(bundle()),
        vec![d.root.join("keys")],
    )
    .with_worker(worker());
    check_read_refused(
        &d,
        &engine,
        "keys/id.tex",
        "refused: in a protected folder",
        marker,
    );
}

#[test]
fn a_document_with_subfolders_include_and_bibtex_builds() {
    let d = doc(
        "\\documentclass{article}\n\\begin{document}\nMain text \\cite{knuth84}.\n\
         \\input{sub/part}\n\\include{chap}\n\\bibliographystyle{plain}\n\
         \\bibliography{refs}\n\\end{document}\n",
    );
    std::fs::create_dir_all(d.root.join("sub")).unwrap();
    std::fs::write(d.root.join("sub/part.tex"), "Text from a subfolder.\n").unwrap();
    std::fs::write(d.root.join("chap.tex"), "Included chapter text.\n").unwrap();
    std::fs::write(
        d.root.join("refs.bib"),
        "@book{knuth84, author = {Donald E. Knuth}, title = {The TeXbook},\n\
         publisher = {Addison-Wesley}, year = {1984}}\n",
    )
    .unwrap();
    let build = engine(warm_cache()).build(&d.main, &never()).unwrap();
    let text = pdf_text(&build.pdf);
    for expected in [
        "Main text [1].",
        "Text from a subfolder.",
        "Included chapter text.",
        "The TeXbook",
    ] {
        assert!(text.contains(expected), "{expected:?} not in {text}");
    }
    // The inputs are the document's own files, none of the bundle's or the cache's.
    let mut inputs = build.inputs.clone();
    inputs.sort();
    let mut expected: Vec<PathBuf> = ["chap.tex", "main.tex", "refs.bib", "sub/part.tex"]
        .iter()
        .map(|f| d.root.join(f))
        .collect();
    expected.sort();
    assert_eq!(inputs, expected);
}

/// Every build reports what its worker does, in order; only a first build with a bundle
/// makes the format file, and a build answered from the cache reports nothing.
#[test]
fn a_build_reports_its_stages_and_only_the_first_makes_the_format() {
    use skald_viewer::latex::LatexStage::{self, Bibtex, Format, Pdf, Tex};
    let cache = tempfile::tempdir().unwrap();
    let engine = engine(cache.path());
    let stages = |main: &Path| {
        let seen = std::sync::Mutex::new(Vec::<LatexStage>::new());
        let build = engine.build_reporting(main, &never(), &|s| seen.lock().unwrap().push(s));
        build.unwrap();
        seen.into_inner().unwrap()
    };
    let art = article();
    let main = std::fs::canonicalize(art.path()).unwrap().join("main.tex");
    let first = stages(&main);
    assert_eq!(first.first(), Some(&Format), "{first:?}");
    assert_eq!(first.get(1), Some(&Tex { pass: 1 }), "{first:?}");
    assert_eq!(first.last(), Some(&Pdf), "{first:?}");
    assert_eq!(stages(&main), [], "answered from the cache");

    let d = doc(
        "\\documentclass{article}\n\\begin{document}\nSee \\cite{k}.\n\
         \\bibliographystyle{plain}\n\\bibliography{refs}\n\\end{document}\n",
    );
    std::fs::write(
        d.root.join("refs.bib"),
        "@book{k, author = {A. Author}, title = {T}, publisher = {P}, year = {2000}}\n",
    )
    .unwrap();
    let with_bib = stages(&d.main);
    assert_eq!(
        &with_bib[..3],
        [Tex { pass: 1 }, Bibtex, Tex { pass: 2 }],
        "{with_bib:?}"
    );
    assert!(!with_bib.contains(&Format), "{with_bib:?}");
    assert_eq!(with_bib.last(), Some(&Pdf), "{with_bib:?}");
}

/// BibTeX runs when what it reads changed — the citations, a database, the style — and
/// not for an edit of the text, whose build keeps the bibliography of the last one.
#[test]
fn bibtex_runs_only_when_what_it_reads_changed() {
    use skald_viewer::latex::LatexStage::{self, Bibtex};
    let engine = engine(warm_cache());
    let d = doc(
        "\\documentclass{article}\n\\begin{document}\nSee \\cite{z}.\n\\input{body}\n\
         \\bibliographystyle{plain}\n\\bibliography{refs}\n\\end{document}\n",
    );
    let entry = |key: &str, title: &str| {
        format!(
            "@book{{{key}, author = {{A. Author}}, title = {{{title}}}, publisher = {{P}}, year = {{2000}}}}\n"
        )
    };
    std::fs::write(d.root.join("body.tex"), "First body.\n").unwrap();
    std::fs::write(d.root.join("refs.bib"), entry("z", "Zebras")).unwrap();
    let build = |expect: &[&str]| {
        let seen = std::sync::Mutex::new(Vec::<LatexStage>::new());
        let b = engine
            .build_reporting(&d.main, &never(), &|s| seen.lock().unwrap().push(s))
            .unwrap();
        let text = pdf_text(&b.pdf);
        for e in expect {
            assert!(text.contains(e), "{e:?} not in {text}");
        }
        // The database is an input even when BibTeX did not run: editing it rebuilds.
        assert!(
            b.inputs.contains(&d.root.join("refs.bib")),
            "{:?}",
            b.inputs
        );
        seen.into_inner().unwrap()
    };
    assert!(build(&["First body.", "Zebras"]).contains(&Bibtex));
    // The text changed, nothing BibTeX reads did.
    std::fs::write(d.root.join("body.tex"), "Second body.\n").unwrap();
    let stages = build(&["Second body.", "Zebras"]);
    assert!(!stages.contains(&Bibtex), "{stages:?}");
    // A database changed.
    std::fs::write(
        d.root.join("refs.bib"),
        entry("z", "Giraffes") + &entry("m", "Meerkats"),
    )
    .unwrap();
    assert!(build(&["Second body.", "Giraffes"]).contains(&Bibtex));
    // A new citation.
    std::fs::write(d.root.join("body.tex"), "Also \\cite{m}.\n").unwrap();
    assert!(build(&["Also [2]", "Giraffes", "Meerkats"]).contains(&Bibtex));
    // The text again: both entries stay.
    std::fs::write(d.root.join("body.tex"), "Also \\cite{m}, again.\n").unwrap();
    let stages = build(&["again", "Giraffes", "Meerkats"]);
    assert!(!stages.contains(&Bibtex), "{stages:?}");
    // Another database (the test bundle has one style only, so the style stays).
    std::fs::write(
        d.root.join("more.bib"),
        entry("z", "Okapis") + &entry("m", "Meerkats"),
    )
    .unwrap();
    let main = std::fs::read_to_string(&d.main).unwrap();
    std::fs::write(&d.main, main.replace("{refs}", "{refs,more}")).unwrap();
    assert!(build(&["again", "Giraffes"]).contains(&Bibtex));
    // Then a change to the second database.
    std::fs::write(d.root.join("more.bib"), entry("k", "Kudus")).unwrap();
    assert!(build(&["again", "Giraffes"]).contains(&Bibtex));
}

const LOOPING: &str =
    "\\documentclass{article}\n\\begin{document}\n\\def\\x{\\x}\\x\n\\end{document}\n";

/// The test article builds in `engine` (a fresh copy, so never from the cache).
fn assert_next_build_works(engine: &LatexEngine) {
    let doc = article();
    let main = std::fs::canonicalize(doc.path()).unwrap().join("main.tex");
    let build = engine.build(&main, &never()).unwrap();
    assert!(pdf_text(&build.pdf).contains("Hello from the main file."));
}

#[test]
fn a_looping_document_is_killed_on_its_timeout_and_the_next_build_works() {
    let d = doc(LOOPING);
    let engine = engine(warm_cache()).with_timeout(Duration::from_secs(3));
    let started = Instant::now();
    match engine.build(&d.main, &never()) {
        Err(LatexError::Timeout(t)) => assert_eq!(t, Duration::from_secs(3)),
        other => panic!("{other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_next_build_works(&engine);
}

#[test]
fn a_looping_document_is_killed_when_cancelled_or_stopped_and_the_next_build_works() {
    let d = doc(LOOPING);
    let engine = std::sync::Arc::new(engine(warm_cache()));

    // The caller's token.
    let cancel = CancellationToken::new();
    let later = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(1));
        later.cancel();
    });
    let started = Instant::now();
    assert!(matches!(
        engine.build(&d.main, &cancel),
        Err(LatexError::Cancelled)
    ));
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );

    // `stop` for the document (the UI's Stop button).
    let (e, main) = (engine.clone(), d.main.clone());
    let running = std::thread::spawn(move || e.build(&main, &never()));
    std::thread::sleep(Duration::from_secs(1));
    assert!(engine.stop(&d.main));
    assert!(matches!(
        running.join().unwrap(),
        Err(LatexError::Cancelled)
    ));
    assert!(!engine.stop(&d.main), "nothing is left running");
    assert_next_build_works(&engine);
}

#[test]
fn a_newer_build_of_the_document_kills_the_looping_one() {
    let d = doc(LOOPING);
    let engine = std::sync::Arc::new(engine(warm_cache()));
    let (e, main) = (engine.clone(), d.main.clone());
    let looping = std::thread::spawn(move || e.build(&main, &never()));
    std::thread::sleep(Duration::from_secs(1));
    std::fs::write(
        &d.main,
        "\\documentclass{article}\n\\begin{document}\nFixed.\n\\end{document}\n",
    )
    .unwrap();
    let started = Instant::now();
    let fixed = engine.build(&d.main, &never()).unwrap();
    assert!(matches!(
        looping.join().unwrap(),
        Err(LatexError::Superseded)
    ));
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert!(pdf_text(&fixed.pdf).contains("Fixed."));
}
