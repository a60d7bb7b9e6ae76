//! A fetched body as text a model reads (docs/web.md, "What comes back"): an HTML page's
//! main content as Markdown — readability.js's algorithm (dom_smoothie), which drops
//! scripts, navigation, headers, footers and sidebars and keeps links — JSON pretty
//! printed, plain text as it is, a PDF's text. Anything else is refused by name.

use crate::WebError;

/// What a fetched page reads as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// Where it was found, after redirects within its host.
    pub url: String,
    pub title: Option<String>,
    pub kind: Kind,
    pub text: String,
    /// The body was longer than the cap and was read only that far.
    pub cut: bool,
    /// Bytes of the body read.
    pub bytes: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Html,
    Json,
    Text,
    Pdf,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::Html => "HTML page",
            Kind::Json => "JSON",
            Kind::Text => "text",
            Kind::Pdf => "PDF",
        }
    }
}

/// Turns a body into a `Page`.
pub fn page(
    url: &str,
    content_type: Option<&str>,
    body: Vec<u8>,
    cut: bool,
) -> Result<Page, WebError> {
    let bytes = body.len();
    let (mime, charset) = split_content_type(content_type);
    let kind = kind_of(&mime, &body).ok_or_else(|| WebError::Unsupported {
        url: url.to_string(),
        content_type: if mime.is_empty() {
            "unknown binary content".to_string()
        } else {
            mime.clone()
        },
    })?;
    let (title, text) = match kind {
        Kind::Html => {
            let html = decode(&body, charset.as_deref(), true);
            html_to_markdown(&html, url)
        }
        Kind::Json => {
            let raw = decode(&body, charset.as_deref(), false);
            let text = serde_json::from_str::<serde_json::Value>(&raw)
                .ok()
                .and_then(|v| serde_json::to_string_pretty(&v).ok())
                .unwrap_or(raw);
            (None, text)
        }
        Kind::Text => (None, decode(&body, charset.as_deref(), false)),
        Kind::Pdf => {
            if cut {
                return Err(WebError::Unreadable(format!(
                    "{url} is a PDF larger than the {bytes}-byte cap ([web] max_bytes); \
                     its text cannot be read from a part of it"
                )));
            }
            (None, pdf_text(&body, url)?)
        }
    };
    Ok(Page {
        url: url.to_string(),
        title: title.map(|t| clean(&t)).filter(|t| !t.is_empty()),
        kind,
        text: clean(&text),
        cut,
        bytes,
    })
}

fn split_content_type(content_type: Option<&str>) -> (String, Option<String>) {
    let Some(ct) = content_type else {
        return (String::new(), None);
    };
    let mut parts = ct.split(';');
    let mime = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let charset = parts.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim().eq_ignore_ascii_case("charset")).then(|| v.trim().trim_matches('"').to_string())
    });
    (mime, charset)
}

fn kind_of(mime: &str, body: &[u8]) -> Option<Kind> {
    match mime {
        "text/html" | "application/xhtml+xml" => Some(Kind::Html),
        "application/json" => Some(Kind::Json),
        m if m.ends_with("+json") => Some(Kind::Json),
        "application/pdf" => Some(Kind::Pdf),
        m if m.starts_with("text/") => Some(Kind::Text),
        "application/xml"
        | "application/javascript"
        | "application/x-yaml"
        | "application/yaml"
        | "application/toml" => Some(Kind::Text),
        m if m.ends_with("+xml") => Some(Kind::Text),
        // Missing or generic: judged by the bytes.
        "" | "application/octet-stream" | "binary/octet-stream" => sniff(body),
        _ => None,
    }
}

fn sniff(body: &[u8]) -> Option<Kind> {
    if body.starts_with(b"%PDF-") {
        return Some(Kind::Pdf);
    }
    let head = &body[..body.len().min(1024)];
    if head.contains(&0) {
        return None;
    }
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    let start = text.trim_start();
    if start.starts_with("<!doctype html") || start.starts_with("<html") {
        return Some(Kind::Html);
    }
    if start.starts_with('{') || start.starts_with('[') {
        return Some(Kind::Json);
    }
    std::str::from_utf8(head).is_ok().then_some(Kind::Text)
}

/// Bytes as text in the charset the headers (or, for HTML, the page's `<meta>`) name;
/// UTF-8 otherwise, with a replacement character for what is not.
fn decode(body: &[u8], charset: Option<&str>, html: bool) -> String {
    let label = charset
        .map(str::to_string)
        .or_else(|| html.then(|| meta_charset(body)).flatten());
    let encoding = label
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

/// The charset a page's `<meta charset=…>` or `<meta http-equiv content="…; charset=…">`
/// names in its first kilobytes.
fn meta_charset(body: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&body[..body.len().min(4096)]).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let rest = head[at..].trim_start_matches(['"', '\'']);
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| rest[..end].to_string())
}

/// An HTML page's title and main content as Markdown. A page readability finds no
/// article in (a listing, an index) is given whole, its scripts and styles dropped.
fn html_to_markdown(html: &str, url: &str) -> (Option<String>, String) {
    use dom_smoothie::{Config, Readability, TextMode};
    if crate::guard::html_deeper_than(html, crate::guard::MAX_HTML_DEPTH) {
        return (None, crate::guard::html_text(html));
    }
    let cfg = Config {
        text_mode: TextMode::Markdown,
        ..Config::default()
    };
    let article = Readability::new(html, Some(url), Some(cfg)).and_then(|mut r| r.parse());
    match article {
        Ok(a) if !a.text_content.trim().is_empty() => (Some(a.title), a.text_content.to_string()),
        _ => {
            let doc = dom_query::Document::from(html);
            let title = doc.select("title").text().to_string();
            let skip = [
                "script", "style", "meta", "head", "noscript", "template", "svg",
            ];
            let text = match doc.select("body").nodes().first() {
                Some(body) => body.md(Some(&skip)),
                None => doc.md(Some(&skip)),
            };
            (Some(title), text.to_string())
        }
    }
}

/// A PDF's text. The parser is given the bytes of a page anyone wrote: a panic in it is a
/// page that cannot be read, not a crash.
fn pdf_text(body: &[u8], url: &str) -> Result<String, WebError> {
    crate::guard::check_pdf_forms(body)
        .map_err(|why| WebError::Unreadable(format!("{url}: the PDF is not read: {why}")))?;
    let bytes = body.to_vec();
    let result = std::panic::catch_unwind(move || pdf_extract::extract_text_from_mem(&bytes));
    match result {
        Ok(Ok(text)) if !text.trim().is_empty() => Ok(text),
        Ok(Ok(_)) => Err(WebError::Unreadable(format!(
            "{url} is a PDF with no text in it (scanned pages?)"
        ))),
        Ok(Err(e)) => Err(WebError::Unreadable(format!(
            "{url}: the PDF cannot be read: {e}"
        ))),
        Err(_) => Err(WebError::Unreadable(format!(
            "{url}: the PDF cannot be read (its structure is broken)"
        ))),
    }
}

/// Text without the control characters a terminal or a renderer would act on (escape
/// sequences a page may carry); newlines and tabs stay. Runs of blank lines become one.
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.lines() {
        let line: String = line
            .chars()
            .filter(|c| *c == '\t' || !c.is_control())
            // Bidirectional overrides and invisible format characters (zero-width
            // spaces and joiners, soft hyphens, word joiners, byte-order marks), which
            // would hide a word from a check that reads the text.
            .filter(|c| {
                !matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
                    | '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}'
                    | '\u{00ad}' | '\u{180e}')
            })
            .collect();
        let line = line.trim_end();
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_string()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) const ARTICLE: &str = r#"<!doctype html><html><head><title>Borrowing in Rust | Blog</title>
<script>var tracking = "TRACKER-SCRIPT";</script><style>.x{}</style></head><body>
<nav class="navigation"><a href="/">Home</a> <a href="/about">About us</a> NAV-CHROME</nav>
<header class="site-header">SITE-HEADER-CHROME</header>
<main><article><h1>Borrowing in Rust</h1>
<p>The borrow checker makes sure that references never outlive the data they point to. This paragraph is long enough for the readability algorithm to count it as the body of an article, which it needs.</p>
<p>Read <a href="https://doc.rust-lang.org/book/ch04-02-references-and-borrowing.html">the book's chapter on references</a> for the full story, and keep in mind that a mutable reference is exclusive while it lives.</p>
<p>A third paragraph says more about lifetimes: each reference has one, and most are inferred by the compiler without being written out, just like most types are inferred.</p>
<pre><code>fn longest&lt;'a&gt;(x: &amp;'a str) -&gt; &amp;'a str { x }</code></pre>
</article></main>
<aside class="sidebar">SIDEBAR-CHROME related posts</aside>
<footer class="site-footer">FOOTER-CHROME copyright</footer></body></html>"#;

    #[test]
    fn an_article_keeps_its_content_and_links_and_loses_its_chrome() {
        let page = page(
            "https://blog.example/borrowing",
            Some("text/html; charset=utf-8"),
            ARTICLE.as_bytes().to_vec(),
            false,
        )
        .unwrap();
        assert_eq!(page.kind, Kind::Html);
        assert!(
            page.text.contains("borrow checker makes sure"),
            "{}",
            page.text
        );
        assert!(
            page.text.contains(
                "[the book's chapter on references](https://doc.rust-lang.org/book/ch04-02-references-and-borrowing.html)"
            ),
            "{}",
            page.text
        );
        assert!(page.text.contains("fn longest<'a>"), "{}", page.text);
        for chrome in [
            "TRACKER-SCRIPT",
            "NAV-CHROME",
            "SIDEBAR-CHROME",
            "FOOTER-CHROME",
            "SITE-HEADER",
        ] {
            assert!(!page.text.contains(chrome), "{chrome} kept:\n{}", page.text);
        }
        assert!(page.title.unwrap().contains("Borrowing in Rust"));
    }

    #[test]
    fn json_is_pretty_printed_and_text_kept_and_binary_refused() {
        let json = page(
            "http://x/a",
            Some("application/json"),
            br#"{"a":[1,2]}"#.to_vec(),
            false,
        )
        .unwrap();
        assert_eq!(json.kind, Kind::Json);
        assert!(json.text.contains("\"a\": ["), "{}", json.text);
        let text = page(
            "http://x/t",
            Some("text/plain"),
            b"hello\n\n\n\nworld\x1b[31m".to_vec(),
            false,
        )
        .unwrap();
        assert_eq!(text.text, "hello\n\nworld[31m");
        let err = page(
            "http://x/i",
            Some("image/png"),
            vec![0x89, b'P', b'N', b'G'],
            false,
        )
        .unwrap_err();
        assert!(err.to_string().contains("image/png"), "{err}");
        let err = page("http://x/b", None, vec![0, 1, 2, 3], false).unwrap_err();
        assert!(err.to_string().contains("unknown binary"), "{err}");
    }

    #[test]
    fn a_page_in_another_charset_is_read_in_it() {
        let body =
            b"<html><head><meta charset=\"iso-8859-1\"></head><body><p>caf\xe9</p></body></html>"
                .to_vec();
        let p = page("http://x/", Some("text/html"), body, false).unwrap();
        assert!(p.text.contains("café"), "{}", p.text);
    }

    #[test]
    fn a_broken_pdf_is_an_error_not_a_crash() {
        let err = page(
            "http://x/a.pdf",
            Some("application/pdf"),
            b"%PDF-1.4\n garbage".to_vec(),
            false,
        )
        .unwrap_err();
        assert!(err.to_string().contains("cannot be read"), "{err}");
    }
}
