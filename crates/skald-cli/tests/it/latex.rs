//! `skald latex build --watch` end to end: a multi-file document rebuilt once per save of
//! any of its inputs — written in place or saved through a rename — offline, with the
//! small bundle from `scripts/setup.sh --test`.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

#[cfg(unix)]
/// `skald --data-dir DATA latex build [FLAGS] --bundle BUNDLE FILE`, kept off the
/// developer's own data directory.
fn latex_build(data: &Path, flags: &[&str], bundle: &Path, file: &Path) -> Command {
    let mut cmd = crate::common::bare(data);
    cmd.args(["latex", "build"])
        .args(flags)
        .arg("--bundle")
        .arg(bundle)
        .arg(file);
    cmd
}

#[test]
fn watch_rebuilds_once_per_save_of_any_input() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/tex");
    let bundle = repo.join("bundle.zip");
    assert!(
        bundle.is_file(),
        "no offline TeX bundle: run `bash scripts/setup.sh --test`"
    );
    let (doc, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for f in ["main.tex", "chapter.tex", "dot.png"] {
        std::fs::copy(repo.join("article").join(f), doc.path().join(f)).unwrap();
    }
    let mut child = latex_build(
        data.path(),
        &["--json", "--watch"],
        &bundle,
        &doc.path().join("main.tex"),
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str(&line) {
                let _ = tx.send(v);
            }
        }
    });
    // Each rebuild is announced by the file_changed event of what changed.
    let changed = |name: &str| {
        let e = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("a file_changed line");
        assert_eq!(e["type"], "file_changed", "{e}");
        assert!(e["path"].as_str().unwrap().ends_with(name), "{e}");
    };
    let next = || {
        rx.recv_timeout(Duration::from_secs(60))
            .expect("a build line")
    };
    // No second compile follows (a busy machine may split one save's events in two; a
    // build that the cache answers is not a compile).
    let quiet = || loop {
        match rx.recv_timeout(Duration::from_millis(1500)) {
            Ok(v) if v["type"] == "file_changed" || v["from_cache"] == true => continue,
            other => return other.ok(),
        }
    };
    let first = next();
    assert_eq!(first["from_cache"], false, "{first}");
    let pdf = first["pdf"].as_str().unwrap().to_string();
    assert_eq!(quiet(), None, "reading the inputs set nothing off");

    // Saved in place.
    std::fs::write(
        doc.path().join("chapter.tex"),
        "\\section{Chapter}\nEdited in place.\n",
    )
    .unwrap();
    changed("chapter.tex");
    let second = next();
    assert_eq!(second["from_cache"], false, "{second}");
    assert_eq!(quiet(), None, "one build per save");

    // Saved the way many editors do: a temporary file renamed over the original.
    let tmp = doc.path().join(".chapter.tex.swp");
    std::fs::write(&tmp, "\\section{Chapter}\nSaved through a rename.\n").unwrap();
    std::fs::rename(&tmp, doc.path().join("chapter.tex")).unwrap();
    changed("chapter.tex");
    let third = next();
    assert_eq!(third["from_cache"], false, "{third}");
    assert_eq!(quiet(), None, "one build per save");
    let text = Command::new("pdftotext")
        .arg(&pdf)
        .arg("-")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("Saved through a rename."));

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130));
}

#[test]
fn a_build_error_names_the_file_and_line_and_fails() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/tex");
    let (doc, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(
        doc.path().join("main.tex"),
        "\\documentclass{article}\n\\begin{document}\n\\input{broken}\n\\end{document}\n",
    )
    .unwrap();
    std::fs::write(doc.path().join("broken.tex"), "ok\n\\nosuchmacro\n").unwrap();
    let out = latex_build(
        data.path(),
        &[],
        &repo.join("bundle.zip"),
        &doc.path().join("main.tex"),
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("broken.tex:2: Undefined control sequence."),
        "{err}"
    );
    // A new data folder: the first build says it is making the format, which takes a while.
    assert!(
        err.starts_with("making the LaTeX format file (the first build with this bundle"),
        "{err}"
    );
}

#[test]
fn a_failed_pdf_step_names_what_it_could_not_include_without_font_map_noise() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/tex");
    let (doc, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // A raw special only xdvipdfmx reads: TeX succeeds, the PDF step cannot.
    // Builds `main.tex` with this text; it must fail. Returns what it said.
    let failing_build = |tex: &str| {
        std::fs::write(doc.path().join("main.tex"), tex).unwrap();
        let out = latex_build(
            data.path(),
            &[],
            &repo.join("bundle.zip"),
            &doc.path().join("main.tex"),
        )
        .output()
        .unwrap();
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = failing_build(
        "\\documentclass{article}\n\\begin{document}\nHello\n\\special{pdf:image (nofile.png)}\n\\end{document}\n",
    );
    assert!(
        err.contains("xdvipdfmx: Image inclusion failed for \"nofile.png\""),
        "{err}"
    );
    assert!(!err.contains("font map"), "{err}");

    // A PNG whose header is sound (TeX sizes it) and whose data is not: libpng stops the
    // worker while the PDF is made. The build fails, saying so, and Skald goes on.
    let chunk = |kind: &[u8], data: &[u8]| {
        let mut c = (data.len() as u32).to_be_bytes().to_vec();
        c.extend_from_slice(kind);
        c.extend_from_slice(data);
        let mut crc = crc32(kind);
        crc = crc32_more(crc, data);
        c.extend_from_slice(&crc.to_be_bytes());
        c
    };
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &[0, 0, 0, 4, 0, 0, 0, 4, 8, 2, 0, 0, 0]));
    png.extend(chunk(b"IDAT", b"this is not zlib data"));
    png.extend(chunk(b"IEND", b""));
    std::fs::write(doc.path().join("broken.png"), png).unwrap();
    let err = failing_build(
        "\\documentclass{article}\n\\usepackage{graphicx}\n\\begin{document}\n\\includegraphics{broken.png}\n\\end{document}\n",
    );
    assert!(
        err.contains("a PNG image the document includes is damaged")
            && err.contains("libpng error"),
        "{err}"
    );
}

/// CRC-32 (PNG's, IEEE) of `data`.
fn crc32(data: &[u8]) -> u32 {
    crc32_more(0, data)
}

/// CRC-32 continued over `data` from `crc`.
fn crc32_more(crc: u32, data: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// The reproduction: `\openout` to an absolute path in /tmp.
#[cfg(unix)]
#[test]
fn an_openout_to_tmp_is_refused_and_nothing_is_written() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/tex");
    let (doc, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let target = PathBuf::from(format!(
        "/tmp/skald-openout-{}-{nanos}.sh",
        std::process::id()
    ));
    std::fs::write(
        doc.path().join("main.tex"),
        format!(
            "\\documentclass{{article}}\n\\begin{{document}}\nHello.\n\\newwrite\\w\n\
             \\immediate\\openout\\w={} \\immediate\\write\\w{{echo pwned}} \
             \\immediate\\closeout\\w\n\\end{{document}}\n",
            target.display()
        ),
    )
    .unwrap();
    let out = latex_build(
        data.path(),
        &[],
        &repo.join("bundle.zip"),
        &doc.path().join("main.tex"),
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!target.exists(), "{} was written", target.display());
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "cannot write `{}`: refused: absolute path",
            target.display()
        )),
        "{err}"
    );
    // Not in the build's own files either.
    fn walk(dir: &std::path::Path, found: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, found);
            } else if std::fs::read(&p).is_ok_and(|b| b.windows(10).any(|w| w == b"echo pwned")) {
                found.push(p);
            }
        }
    }
    let mut found = Vec::new();
    walk(data.path(), &mut found);
    assert!(found.is_empty(), "{found:?}");
}

/// The children of `pid`, from /proc.
#[cfg(target_os = "linux")]
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`, where comm may hold anything.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let ppid = rest
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid)
            && let Some(child) = e.file_name().to_str().and_then(|n| n.parse().ok())
        {
            out.push(child);
        }
    }
    out
}

#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_kills_a_looping_build_and_its_worker_which_has_no_keys() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/tex");
    let (doc, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(
        doc.path().join("loop.tex"),
        "\\documentclass{article}\n\\begin{document}\n\\def\\x{\\x}\\x\n\\end{document}\n",
    )
    .unwrap();
    let mut child = latex_build(
        data.path(),
        &[],
        &repo.join("bundle.zip"),
        &doc.path().join("loop.tex"),
    )
    .env("OPENAI_API_KEY", "sk-never-in-a-latex-worker")
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let until = std::time::Instant::now() + Duration::from_secs(60);
    let worker = loop {
        if let Some(w) = children(child.id()).first() {
            break *w;
        }
        assert!(std::time::Instant::now() < until, "no LaTeX worker started");
        std::thread::sleep(Duration::from_millis(50));
    };
    // A worker gets no provider keys (where its environment can be read at all: it is
    // not dumpable, but root reads it anyway).
    if let Ok(env) = std::fs::read(format!("/proc/{worker}/environ")) {
        let env = String::from_utf8_lossy(&env);
        assert!(env.contains("SKALD_LATEX_WORKER=1"), "{env}");
        assert!(!env.contains("sk-never-in-a-latex-worker"), "{env}");
    }
    // Let it get into the loop (or the format file; either way it never ends).
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the build ended by itself"
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let until = std::time::Instant::now() + Duration::from_secs(15);
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if std::time::Instant::now() > until {
            let _ = child.kill();
            panic!("skald latex build did not stop on Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(code, Some(130));
    // The worker was killed and reaped before skald exited: no process, not a zombie.
    assert!(
        !std::path::Path::new(&format!("/proc/{worker}")).exists(),
        "the LaTeX worker {worker} is still there"
    );
}

/// Every (name, content) of a zip bundle.
fn zip_contents(zip: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut archive = zip::ZipArchive::new(std::fs::File::open(zip).unwrap()).unwrap();
    let mut out = std::collections::BTreeMap::new();
    for i in 0..archive.len() {
        let mut f = archive.by_index(i).unwrap();
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut data).unwrap();
        out.insert(f.name().to_string(), data);
    }
    out
}

#[test]
fn a_bundle_built_from_the_system_tex_live_compiles_a_document_with_no_flag() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/tex");
    let (doc, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // The files the test article needs, from the installed TeX Live, into the data
    // folder, where every build then finds the bundle by itself.
    let out = crate::common::bare(data.path())
        .args(["latex", "bundle", "--from-system", "--only"])
        .arg(repo.join("bundle-files.txt"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let built = data.path().join("tex/bundle.zip");
    assert!(said.contains(&built.display().to_string()), "{said}");
    // The same files and digest as the tests' own bundle (scripts/tex-bundle.py).
    let (ours, tests) = (zip_contents(&built), zip_contents(&repo.join("bundle.zip")));
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        tests.keys().collect::<Vec<_>>()
    );
    assert_eq!(ours, tests);
    for f in ["main.tex", "chapter.tex", "dot.png"] {
        std::fs::copy(repo.join("article").join(f), doc.path().join(f)).unwrap();
    }
    let mut build = crate::common::bare(data.path());
    build
        .args(["latex", "build", "--json"])
        .arg(doc.path().join("main.tex"))
        .env_remove("SKALD_TEX_BUNDLE");
    let done = build.output().unwrap();
    let line: Value = serde_json::from_slice(&done.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&done.stderr)));
    assert_eq!(done.status.code(), Some(0), "{line}");
    assert!(Path::new(line["pdf"].as_str().unwrap()).is_file(), "{line}");

    // A list naming a file TeX Live does not have: said, and no bundle is left.
    let list = doc.path().join("list.txt");
    std::fs::write(&list, "article.cls\nno-such-package.sty\n").unwrap();
    let bad = crate::common::bare(data.path())
        .args(["latex", "bundle", "--from-system", "--only"])
        .arg(&list)
        .arg("--out")
        .arg(doc.path().join("bad.zip"))
        .output()
        .unwrap();
    assert_ne!(bad.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&bad.stderr)
            .contains("not found in the TeX trees: no-such-package.sty"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    assert!(!doc.path().join("bad.zip").exists());
}
