//! LaTeX in-process against the small offline bundle (tests/tex/bundle.zip, built from
//! Debian's TeX packages by `scripts/setup.sh --test`), read back with pdftotext.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use skald_viewer::{BundleChoice, LatexEngine, LatexError};
use std::path::{Path, PathBuf};

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
    let engine = LatexEngine::new(cache.path().to_path_buf(), BundleChoice::Zip(bundle()));
    let main = root.join("main.tex");

    let first = engine.build(&main).unwrap();
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
    let again = engine.build(&main).unwrap();
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
    let third = engine.build(&main).unwrap();
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
    let engine = LatexEngine::new(cache.path().to_path_buf(), BundleChoice::Zip(bundle()));
    match engine.build(&root.join("main.tex")) {
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
    );
    let e = engine.build(&doc.path().join("main.tex")).unwrap_err();
    assert!(matches!(e, LatexError::Bundle(_)), "{e:?}");
    assert!(
        e.to_string()
            .contains("/nonexistent/bundle.zip does not exist"),
        "{e}"
    );
}
