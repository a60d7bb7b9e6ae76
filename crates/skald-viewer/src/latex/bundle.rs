//! The offline TeX bundle: which one a build uses, and building one from the TeX Live
//! installed on the machine (`skald latex bundle --from-system`, docs/viewer.md), so
//! LaTeX previews work without the network.
//!
//! A bundle is a zip of flat file names, as tectonic's zip bundles are: every file of the
//! TeX trees under its own name (the first found wins, trees in kpathsea's order), a
//! `SHA256SUM` over the names and contents (tectonic keys its format cache by it), and the
//! `tectonic-format-latex.tex` that makes the LaTeX format from `xelatex.ini`.

use super::BundleChoice;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use skald_base::tex::LATEX_KERNEL;
pub use skald_base::tex::{SYSTEM_TREES, named_bundle, online_cache, system_tex};

/// Written by the builder, never taken from the trees.
const DIGEST: &str = "SHA256SUM";
const FORMAT: &str = "tectonic-format-latex.tex";

#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error(
        "no TeX Live found (looked for {LATEX_KERNEL} in {}); install it with: apt install \
         texlive-latex-base texlive-xetex lmodern",
        .0
    )]
    NoTexLive(String),
    #[error("not found in the TeX trees: {}", .0.join(", "))]
    Missing(Vec<String>),
    #[error("cannot {0}: {1}")]
    Io(String, String),
}

/// What a build of a bundle made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    pub path: PathBuf,
    pub files: usize,
    /// The zip's size.
    pub bytes: u64,
}

/// The bundle a compile uses: one named (`--bundle`, `SKALD_TEX_BUNDLE`) as it is; in
/// place of the default online bundle, the offline one in Skald's data directory once it
/// has been built.
pub fn resolve(configured: &BundleChoice, offline: Option<&Path>) -> BundleChoice {
    match (configured, offline) {
        (BundleChoice::Default, Some(zip)) if zip.is_file() => BundleChoice::Zip(zip.to_path_buf()),
        (other, _) => other.clone(),
    }
}

/// Builds a bundle at `out` from the TeX trees `trees`: every file in them, or only the
/// files named in `only`. The zip is written beside `out` and renamed into place, so a
/// failed or interrupted build leaves no half a bundle. `progress` hears (done, total).
pub fn build(
    trees: &[&str],
    only: Option<&[String]>,
    out: &Path,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Built, BundleError> {
    let mut found = BTreeMap::new();
    for tree in trees {
        collect(Path::new(tree), &mut found);
    }
    if !found.contains_key(LATEX_KERNEL) {
        return Err(BundleError::NoTexLive(trees.join(", ")));
    }
    let files: BTreeMap<String, PathBuf> = match only {
        None => found
            .into_iter()
            .filter(|(n, _)| n != DIGEST && n != FORMAT)
            .collect(),
        Some(names) => {
            let wanted: Vec<&String> = names
                .iter()
                .filter(|n| *n != DIGEST && *n != FORMAT)
                .collect();
            let missing: Vec<String> = wanted
                .iter()
                .filter(|n| !found.contains_key(n.as_str()))
                .map(|n| n.to_string())
                .collect();
            if !missing.is_empty() {
                return Err(BundleError::Missing(missing));
            }
            wanted
                .into_iter()
                .filter_map(|n| found.remove_entry(n.as_str()))
                .collect()
        }
    };
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| BundleError::Io(format!("create {}", parent.display()), e.to_string()))?;
    }
    let tmp = out.with_extension("zip.partial");
    let written = write_zip(&files, &tmp, progress);
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    std::fs::rename(&tmp, out).map_err(|e| {
        BundleError::Io(
            format!("move the bundle to {}", out.display()),
            e.to_string(),
        )
    })?;
    let bytes = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    Ok(Built {
        path: out.to_path_buf(),
        files: files.len() + 2,
        bytes,
    })
}

fn write_zip(
    files: &BTreeMap<String, PathBuf>,
    tmp: &Path,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(), BundleError> {
    let io =
        |what: &str, e: &dyn std::fmt::Display| BundleError::Io(what.to_string(), e.to_string());
    let file =
        std::fs::File::create(tmp).map_err(|e| io(&format!("create {}", tmp.display()), &e))?;
    let mut zip = zip::ZipWriter::new(std::io::BufWriter::new(file));
    // A fixed time: the same trees make the same zip.
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default());
    let mut digest = Sha256::new();
    let total = files.len();
    for (i, (name, path)) in files.iter().enumerate() {
        let data = std::fs::read(path).map_err(|e| io(&format!("read {}", path.display()), &e))?;
        digest.update(name.as_bytes());
        digest.update([0u8]);
        digest.update(&data);
        zip.start_file(name.as_str(), options)
            .map_err(|e| io(&format!("add {name}"), &e))?;
        zip.write_all(&data)
            .map_err(|e| io(&format!("write {name}"), &e))?;
        if i % 200 == 0 || i + 1 == total {
            progress(i + 1, total);
        }
    }
    let sum = digest
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>();
    for (name, data) in [
        (FORMAT, "\\input xelatex.ini\n".to_string()),
        (DIGEST, format!("{sum}\n")),
    ] {
        zip.start_file(name, options)
            .map_err(|e| io(&format!("add {name}"), &e))?;
        zip.write_all(data.as_bytes())
            .map_err(|e| io(&format!("write {name}"), &e))?;
    }
    let mut inner = zip.finish().map_err(|e| io("finish the zip", &e))?;
    inner.flush().map_err(|e| io("write the zip", &e))?;
    inner
        .get_ref()
        .sync_all()
        .map_err(|e| io("write the zip", &e))?;
    Ok(())
}

/// Every file under `dir` by name, the first found kept: entries in name order, so the
/// choice among same-named files does not depend on the directory's order. Linked
/// folders are not followed (as kpathsea's trees do not need them); linked files are.
fn collect(dir: &Path, found: &mut BTreeMap<String, PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            collect(&path, found);
        } else if path.is_file() {
            let name = entry.file_name().to_string_lossy().into_owned();
            found.entry(name).or_insert(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(root: &Path, files: &[(&str, &str)]) {
        for (rel, text) in files {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    }

    fn names(zip: &Path) -> Vec<String> {
        let archive = zip::ZipArchive::new(std::fs::File::open(zip).unwrap()).unwrap();
        let mut n: Vec<String> = archive.file_names().map(str::to_string).collect();
        n.sort();
        n
    }

    fn read(zip: &Path, name: &str) -> String {
        let mut archive = zip::ZipArchive::new(std::fs::File::open(zip).unwrap()).unwrap();
        std::io::read_to_string(archive.by_name(name).unwrap()).unwrap()
    }

    #[test]
    fn a_bundle_holds_each_name_once_the_first_tree_winning() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        tree(
            &a,
            &[
                ("latex/base/latex.ltx", "kernel"),
                ("x/article.cls", "first"),
            ],
        );
        tree(
            &b,
            &[("article.cls", "second"), ("fonts/cmr10.tfm", "font")],
        );
        let trees = [a.to_str().unwrap(), b.to_str().unwrap()];
        let out = d.path().join("out/bundle.zip");
        let mut seen = Vec::new();
        let built = build(&trees, None, &out, &mut |done, total| {
            seen.push((done, total))
        })
        .unwrap();
        assert_eq!(built.files, 5);
        assert_eq!(
            names(&out),
            [DIGEST, "article.cls", "cmr10.tfm", "latex.ltx", FORMAT]
        );
        assert_eq!(read(&out, "article.cls"), "first");
        assert_eq!(read(&out, FORMAT), "\\input xelatex.ini\n");
        assert_eq!(seen.last(), Some(&(3, 3)));
        assert!(!d.path().join("out/bundle.zip.partial").exists());
        // The same trees make the same bytes.
        let again = d.path().join("again.zip");
        build(&trees, None, &again, &mut |_, _| {}).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&again).unwrap());
        // The digest is over names and contents, in name order.
        let mut h = Sha256::new();
        for (n, t) in [
            ("article.cls", "first"),
            ("cmr10.tfm", "font"),
            ("latex.ltx", "kernel"),
        ] {
            h.update(n.as_bytes());
            h.update([0u8]);
            h.update(t.as_bytes());
        }
        let want: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(read(&out, DIGEST), format!("{want}\n"));
    }

    #[test]
    fn a_list_takes_only_its_files_and_names_what_is_missing() {
        let d = tempfile::tempdir().unwrap();
        tree(
            d.path(),
            &[("latex.ltx", "k"), ("a.sty", "a"), ("b.sty", "b")],
        );
        let trees = [d.path().to_str().unwrap()];
        let out = d.path().join("small.zip");
        let only = vec!["a.sty".to_string(), DIGEST.to_string()];
        build(&trees, Some(&only), &out, &mut |_, _| {}).unwrap();
        assert_eq!(names(&out), [DIGEST, "a.sty", FORMAT]);
        let wrong = vec!["a.sty".to_string(), "nope.sty".to_string()];
        let err = build(
            &trees,
            Some(&wrong),
            &d.path().join("x.zip"),
            &mut |_, _| {},
        );
        assert_eq!(
            err.unwrap_err().to_string(),
            "not found in the TeX trees: nope.sty"
        );
        assert!(!d.path().join("x.zip").exists());
    }

    #[test]
    fn without_tex_live_it_says_what_to_install_and_writes_nothing() {
        let d = tempfile::tempdir().unwrap();
        tree(d.path(), &[("a.sty", "a")]);
        let out = d.path().join("b.zip");
        let err = build(&[d.path().to_str().unwrap()], None, &out, &mut |_, _| {}).unwrap_err();
        assert!(
            err.to_string().contains("apt install texlive-latex-base"),
            "{err}"
        );
        assert!(!out.exists());
        assert_eq!(system_tex(&[d.path().to_str().unwrap()]), None);
    }

    #[test]
    fn a_named_bundle_stays_and_the_built_one_replaces_the_online_one_once_it_exists() {
        let d = tempfile::tempdir().unwrap();
        let built = d.path().join("tex/bundle.zip");
        let named = BundleChoice::Zip(PathBuf::from("/elsewhere/b.zip"));
        assert_eq!(resolve(&named, Some(&built)), named);
        assert_eq!(
            resolve(&BundleChoice::Default, Some(&built)),
            BundleChoice::Default
        );
        assert_eq!(resolve(&BundleChoice::Default, None), BundleChoice::Default);
        tree(d.path(), &[("tex/bundle.zip", "z")]);
        assert_eq!(
            resolve(&BundleChoice::Default, Some(&built)),
            BundleChoice::Zip(built.clone())
        );
        assert_eq!(resolve(&named, Some(&built)), named);
    }
}
