//! Where TeX lives on this machine, for the LaTeX preview's bundle (skald-viewer's
//! `latex::bundle`) and for `skald doctor`, which says which bundle applies.

use std::path::PathBuf;

/// The TeX trees of a Debian or Ubuntu TeX Live (texlive-latex-base, texlive-xetex,
/// lmodern), in the order they are searched.
pub const SYSTEM_TREES: &[&str] = &[
    "/usr/share/texlive/texmf-dist/tex",
    "/usr/share/texlive/texmf-dist/fonts",
    "/usr/share/texmf/tex",
    "/usr/share/texmf/fonts",
    "/usr/share/texlive/texmf-dist/bibtex",
    "/usr/share/texlive/texmf-dist/dvipdfmx",
    "/usr/share/texlive/texmf-dist/web2c",
    "/usr/share/texmf/web2c",
];

/// The variable naming a zip bundle every LaTeX build uses.
pub const BUNDLE_ENV: &str = "SKALD_TEX_BUNDLE";

/// The bundle `SKALD_TEX_BUNDLE` names, if it is set and not empty.
pub fn named_bundle() -> Option<PathBuf> {
    std::env::var_os(BUNDLE_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The file every LaTeX installation has.
pub const LATEX_KERNEL: &str = "latex.ltx";

/// The TeX Live installation a bundle can be built from: the first of `trees` holding the
/// LaTeX kernel where TeX Live keeps it.
pub fn system_tex(trees: &[&str]) -> Option<PathBuf> {
    trees
        .iter()
        .map(PathBuf::from)
        .find(|t| t.join("latex").join("base").join(LATEX_KERNEL).is_file())
}

/// Where tectonic keeps what it fetched of its online bundle (`$XDG_CACHE_HOME/Tectonic`,
/// else `~/.cache/Tectonic`), if it has fetched anything.
pub fn online_cache() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let dir = base.join("Tectonic");
    let used = std::fs::read_dir(&dir).ok()?.next().is_some();
    used.then_some(dir)
}
