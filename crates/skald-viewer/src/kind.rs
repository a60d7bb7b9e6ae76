//! What kind of file a path is: by extension first, then by its first bytes (an image or
//! PDF signature, or whether it looks like text at all).

use crate::ViewError;
use std::io::Read;
use std::path::Path;

pub use skald_api::view::Kind;

/// Bytes looked at to tell text from binary and to find a signature.
const SNIFF: usize = 8192;

/// Source languages by extension, named as highlighters (highlight.js, Shiki) name them.
const CODE: &[(&str, &str)] = &[
    ("rs", "rust"),
    ("py", "python"),
    ("js", "javascript"),
    ("mjs", "javascript"),
    ("cjs", "javascript"),
    ("jsx", "javascript"),
    ("ts", "typescript"),
    ("tsx", "typescript"),
    ("go", "go"),
    ("java", "java"),
    ("kt", "kotlin"),
    ("c", "c"),
    ("h", "c"),
    ("cc", "cpp"),
    ("cpp", "cpp"),
    ("hpp", "cpp"),
    ("cs", "csharp"),
    ("swift", "swift"),
    ("rb", "ruby"),
    ("lua", "lua"),
    ("php", "php"),
    ("sh", "bash"),
    ("bash", "bash"),
    ("zsh", "bash"),
    ("ex", "elixir"),
    ("exs", "elixir"),
    ("sql", "sql"),
    ("css", "css"),
    ("scss", "scss"),
    ("json", "json"),
    ("yaml", "yaml"),
    ("yml", "yaml"),
    ("toml", "toml"),
    ("xml", "xml"),
    ("bib", "bibtex"),
    ("r", "r"),
    ("jl", "julia"),
    ("hs", "haskell"),
    ("ml", "ocaml"),
    ("scala", "scala"),
    ("dart", "dart"),
    ("zig", "zig"),
    ("vue", "vue"),
    ("svelte", "svelte"),
    ("dockerfile", "dockerfile"),
    ("mk", "makefile"),
];

fn signature(head: &[u8]) -> Option<Kind> {
    let image = |m: &str| {
        Some(Kind::Image {
            mime: m.to_string(),
        })
    };
    match head {
        [0x89, b'P', b'N', b'G', ..] => image("image/png"),
        [0xFF, 0xD8, 0xFF, ..] => image("image/jpeg"),
        [b'G', b'I', b'F', b'8', ..] => image("image/gif"),
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'E',
            b'B',
            b'P',
            ..,
        ] => image("image/webp"),
        [b'B', b'M', ..] if head.len() > 14 => image("image/bmp"),
        [b'%', b'P', b'D', b'F', b'-', ..] => Some(Kind::Pdf {
            mime: "application/pdf".into(),
        }),
        _ => None,
    }
}

/// Whether the first bytes look like text: no NUL, and valid UTF-8 except possibly a
/// character cut at the end of the sample.
fn looks_text(head: &[u8]) -> bool {
    if head.contains(&0) {
        return false;
    }
    match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && head.len() - e.valid_up_to() < 4,
    }
}

pub fn detect(path: &Path) -> Result<Kind, ViewError> {
    let mut head = Vec::with_capacity(SNIFF);
    std::fs::File::open(path)
        .and_then(|f| f.take(SNIFF as u64).read_to_end(&mut head))
        .map_err(crate::io_err(path))?;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e).to_string();
    // A signature wins over a misleading extension (a PNG named .txt).
    if let Some(k) = signature(&head) {
        return Ok(k);
    }
    let kind = match ext.as_str() {
        "md" | "markdown" | "mdown" | "mkd" => Kind::Markdown,
        "html" | "htm" | "xhtml" => Kind::Html,
        "tex" | "latex" => Kind::Latex,
        "svg" => Kind::Svg {
            mime: "image/svg+xml".into(),
        },
        _ => match CODE.iter().find(|(e, _)| *e == ext) {
            Some((_, lang)) => Kind::Code {
                language: lang.to_string(),
            },
            None if name == "dockerfile" => Kind::Code {
                language: "dockerfile".into(),
            },
            None if name == "makefile" => Kind::Code {
                language: "makefile".into(),
            },
            None if looks_text(&head) => Kind::Text,
            None => Kind::Binary,
        },
    };
    // A file named like text that is not (a binary called .json) has no preview.
    if matches!(
        kind,
        Kind::Code { .. } | Kind::Markdown | Kind::Html | Kind::Latex
    ) && !looks_text(&head)
    {
        return Ok(Kind::Binary);
    }
    Ok(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_extension_and_content() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            detect(&p).unwrap()
        };
        assert_eq!(write("a.md", b"# Hi"), Kind::Markdown);
        assert_eq!(
            write("main.rs", b"fn main() {}"),
            Kind::Code {
                language: "rust".into()
            }
        );
        assert_eq!(
            write("Makefile", b"all:\n"),
            Kind::Code {
                language: "makefile".into()
            }
        );
        assert_eq!(write("notes", "plain text é".as_bytes()), Kind::Text);
        assert_eq!(write("paper.tex", b"\\documentclass{article}"), Kind::Latex);
        assert_eq!(write("page.html", b"<p>x</p>"), Kind::Html);
        assert_eq!(
            write("logo.svg", b"<svg/>"),
            Kind::Svg {
                mime: "image/svg+xml".into()
            }
        );
        assert_eq!(
            write("pic.txt", b"\x89PNG\r\n\x1a\nrest"),
            Kind::Image {
                mime: "image/png".into()
            }
        );
        assert_eq!(
            write("doc.pdf", b"%PDF-1.7\n"),
            Kind::Pdf {
                mime: "application/pdf".into()
            }
        );
        assert_eq!(write("blob.bin", b"\x00\x01\x02"), Kind::Binary);
        assert_eq!(write("fake.json", b"{\x00}"), Kind::Binary);
        // A multi-byte character cut by the sample is still text.
        let mut long = "a".repeat(SNIFF - 1).into_bytes();
        long.extend("é".as_bytes());
        assert_eq!(write("long.log", &long), Kind::Text);
    }
}
