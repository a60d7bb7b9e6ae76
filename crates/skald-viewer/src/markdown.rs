//! Markdown to safe HTML: `pulldown-cmark` (tables, task lists, footnotes, strikethrough,
//! heading ids) then `ammonia`, which keeps only known-safe tags, attributes and URL
//! schemes — no script, no event handlers, no `javascript:` or `data:` links. Relative
//! links and images are pointed at the viewer's file route, which checks the path policy.
//! Code blocks keep a `language-…` class for the UI's highlighter. Chat messages use the
//! same renderer, so they look the same everywhere.

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// How the viewer's file route is written: `prefix` then the percent-encoded path, e.g.
/// `/api/file?path=` for `skald serve`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRoute {
    pub prefix: String,
}

impl FileRoute {
    pub fn new(prefix: impl Into<String>) -> FileRoute {
        FileRoute {
            prefix: prefix.into(),
        }
    }

    /// The route's URL scheme when it has one of its own (`skald-file://…`); `None` for a
    /// path on the page's own origin (`/api/file?path=`) or a web scheme.
    pub fn scheme(&self) -> Option<&str> {
        let (scheme, _) = self.prefix.split_once("://")?;
        (!matches!(scheme, "http" | "https")).then_some(scheme)
    }

    pub fn url(&self, path: &Path) -> String {
        format!("{}{}", self.prefix, encode(&path.display().to_string()))
    }
}

fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A URL the renderer leaves as it is: absolute web and mail links, and in-page anchors.
fn is_external(url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    lower.starts_with("http://")
        || lower.starts_with("https://")
        || lower.starts_with("mailto:")
        || lower.starts_with('#')
}

/// Whether `url` has a scheme (`javascript:`, `data:`, `file:`): ammonia judges those.
fn has_scheme(url: &str) -> bool {
    url.split_once(':').is_some_and(|(s, _)| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

fn rewrite(url: CowStr<'_>, base: &Path, route: &FileRoute) -> CowStr<'static> {
    let s = url.to_string();
    if is_external(&s) || has_scheme(&s) {
        return CowStr::from(s);
    }
    // A path: relative ones resolved against the file's folder, absolute ones as they are,
    // both served through the file route (which applies the path policy). A fragment or
    // query stays on the route's URL.
    let (path, rest) = match s.find(['#', '?']) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s.as_str(), ""),
    };
    CowStr::from(format!("{}{rest}", route.url(&base.join(path))))
}

fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            out.push(c);
        } else if (c == ' ' || c == '-' || c == '_') && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// Renders Markdown to sanitised HTML.
pub fn render_markdown(src: &str, base: &Path, route: &FileRoute) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_HEADING_ATTRIBUTES;
    let events: Vec<Event<'_>> = Parser::new_ext(src, options).collect();
    // Heading ids: explicit `{#id}` kept, others made from the heading's text, unique.
    let mut used: HashMap<String, usize> = HashMap::new();
    let mut ids: HashMap<usize, String> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        if let Event::Start(Tag::Heading { id: None, .. }) = e {
            let text: String = events[i + 1..]
                .iter()
                .take_while(|e| !matches!(e, Event::End(TagEnd::Heading(_))))
                .filter_map(|e| match e {
                    Event::Text(t) | Event::Code(t) => Some(t.to_string()),
                    _ => None,
                })
                .collect();
            let base_slug = match slug(&text) {
                s if s.is_empty() => "section".to_string(),
                s => s,
            };
            let n = used.entry(base_slug.clone()).or_insert(0);
            let id = if *n == 0 {
                base_slug
            } else {
                format!("{base_slug}-{n}")
            };
            *n += 1;
            ids.insert(i, id);
        }
    }
    let events = events.into_iter().enumerate().map(|(i, e)| match e {
        Event::Start(Tag::Heading {
            level,
            id,
            classes,
            attrs,
        }) => Event::Start(Tag::Heading {
            level,
            id: id.or_else(|| ids.remove(&i).map(CowStr::from)),
            classes,
            attrs,
        }),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: rewrite(dest_url, base, route),
            title,
            id,
        }),
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Image {
            link_type,
            dest_url: rewrite(dest_url, base, route),
            title,
            id,
        }),
        other => other,
    });
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events);
    sanitize(&html, route.scheme())
}

/// A table cell's `style` if it is one alignment and nothing else, as pulldown-cmark
/// writes it; `None` for any other style.
fn table_alignment(style: &str) -> Option<String> {
    let (property, value) = style.split_once(':')?;
    let value = value.trim_matches([' ', '\t']).trim_end_matches(';');
    (property.trim_matches([' ', '\t']) == "text-align"
        && matches!(value, "left" | "center" | "right"))
    .then(|| format!("text-align: {value}"))
}

/// The allow-list: what CommonMark and its extensions produce, nothing that runs. `route`
/// is the file route's own URL scheme (the desktop app's), allowed besides the web's.
fn sanitize(html: &str, route: Option<&str>) -> String {
    let mut b = ammonia::Builder::default();
    for h in ["h1", "h2", "h3", "h4", "h5", "h6"] {
        b.add_tag_attributes(h, &["id"]);
    }
    b.add_tags(&["input"])
        .add_tag_attributes("input", &["type", "checked", "disabled"])
        .add_tag_attributes("code", &["class"])
        .add_tag_attributes("sup", &["class", "id"])
        .add_tag_attributes("div", &["class", "id"])
        .add_tag_attributes("a", &["id"])
        .add_tag_attributes("th", &["style"])
        .add_tag_attributes("td", &["style"])
        .attribute_filter(|element, attribute, value| match (element, attribute) {
            // Task list boxes only, never a text field or a button.
            ("input", "type") if value != "checkbox" => None,
            // Table alignment is the only style kept, and only as exactly that: anything
            // after it (`text-align:left;position:fixed;inset:0`) could lay a cell over
            // the app and fake an approval card.
            ("th" | "td", "style") => table_alignment(value).map(Into::into),
            ("code" | "sup" | "div", "class")
                if !value
                    .split(' ')
                    .all(|c| c.starts_with("language-") || c.starts_with("footnote-")) =>
            {
                None
            }
            _ => Some(value.into()),
        })
        .url_schemes(
            ["http", "https", "mailto"]
                .into_iter()
                .chain(route)
                .collect::<HashSet<_>>(),
        )
        .link_rel(Some("noopener noreferrer"));
    b.clean(html).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(md: &str) -> String {
        render_markdown(
            md,
            Path::new("/proj/docs"),
            &FileRoute::new("/api/file?path="),
        )
    }

    /// The review's finding: any CSS after `text-align:` was kept on table cells, so a
    /// chat answer could lay a cell over the whole app.
    #[test]
    fn table_cells_keep_only_an_exact_alignment() {
        for style in [
            "text-align:left;position:fixed;inset:0",
            "text-align: left; position: fixed",
            "text-align:left/**/;position:fixed",
            "text-align: left !important",
            "text-align: left\n;top:0",
            "text-align:expression(alert(1))",
            "text-align: leftx",
            "position:fixed;text-align:left",
            "TEXT-ALIGN: left; z-index: 9",
            "text-align:;inset:0",
        ] {
            for tag in ["td", "th"] {
                let html = render(&format!(
                    "<table><tr><{tag} style=\"{style}\">x</{tag}></tr></table>"
                ));
                assert!(!html.contains("position"), "{style:?}: {html}");
                assert!(!html.contains("inset"), "{style:?}: {html}");
                assert!(!html.contains("z-index"), "{style:?}: {html}");
                assert!(!html.contains("important"), "{style:?}: {html}");
                assert!(!html.contains("expression"), "{style:?}: {html}");
                assert!(!html.contains("style="), "{style:?}: {html}");
            }
        }
        for (style, kept) in [
            ("text-align: left", "text-align: left"),
            ("text-align:center", "text-align: center"),
            ("text-align: right;", "text-align: right"),
        ] {
            let html = render(&format!(
                "<table><tr><td style=\"{style}\">x</td></tr></table>"
            ));
            assert!(
                html.contains(&format!("style=\"{kept}\"")),
                "{style:?}: {html}"
            );
        }
    }

    #[test]
    fn extensions_render() {
        let html = render(
            "# Intro\n\n## Intro\n\n| a | b |\n|:-|-:|\n| 1 | 2 |\n\n- [x] done\n- [ ] todo\n\n~~old~~ and a note[^1].\n\n[^1]: The note.\n\n```rust\nfn main() {}\n```\n",
        );
        assert!(html.contains(r#"<h1 id="intro">"#), "{html}");
        assert!(html.contains(r#"<h2 id="intro-1">"#), "{html}");
        assert!(
            html.contains("<table>") && html.contains(r#"style="text-align: left""#),
            "{html}"
        );
        assert!(
            html.contains(r#"<input type="checkbox" disabled="" checked="">"#)
                || html.contains("checkbox"),
            "{html}"
        );
        assert!(html.contains("<del>old</del>"), "{html}");
        assert!(html.contains("footnote-definition"), "{html}");
        assert!(html.contains(r#"<code class="language-rust">"#), "{html}");
    }

    #[test]
    fn relative_paths_go_through_the_file_route() {
        let html = render(
            "![fig](<img/plot 1.png>) [next](chapter2.md#top) [web](https://example.org) [abs](/etc/hosts)",
        );
        assert!(
            html.contains(r#"src="/api/file?path=/proj/docs/img/plot%201.png""#),
            "{html}"
        );
        assert!(
            html.contains(r#"href="/api/file?path=/proj/docs/chapter2.md#top""#),
            "{html}"
        );
        assert!(html.contains(r#"href="https://example.org""#), "{html}");
        assert!(html.contains(r#"rel="noopener noreferrer""#), "{html}");
        assert!(
            html.contains(r#"href="/api/file?path=/etc/hosts""#),
            "{html}"
        );
    }

    /// An XSS corpus: nothing in it may survive as something that runs.
    #[test]
    fn nothing_runs() {
        let corpus = [
            "<script>alert(1)</script>",
            "<img src=x onerror=alert(1)>",
            "<a href=\"javascript:alert(1)\">x</a>",
            "<a href=\"JaVaScRiPt:alert(1)\">x</a>",
            "<a href=\" javascript:alert(1)\">x</a>",
            "[click](javascript:alert(1))",
            "[click](JAVASCRIPT:alert(1))",
            "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
            "![img](data:text/html,<script>alert(1)</script>)",
            "<svg><script>alert(1)</script></svg>",
            "<svg onload=alert(1)>",
            "<iframe src=\"https://evil.example\"></iframe>",
            "<object data=\"x.swf\"></object>",
            "<embed src=\"x\">",
            "<form action=\"https://evil.example\"><input type=\"text\"><button>go</button></form>",
            "<div style=\"background:url(javascript:alert(1))\">x</div>",
            "<math><mi xlink:href=\"javascript:alert(1)\">x</mi></math>",
            "<a href=\"vbscript:msgbox(1)\">x</a>",
            "<details open ontoggle=alert(1)>",
            "<body onload=alert(1)>",
            "<meta http-equiv=\"refresh\" content=\"0;url=javascript:alert(1)\">",
            "<link rel=stylesheet href=\"https://evil.example/x.css\">",
            "<style>*{background:url(https://evil.example)}</style>",
            "<input type=\"image\" src=x onerror=alert(1)>",
            "<base href=\"https://evil.example/\">",
        ];
        for case in corpus {
            let html = render(case).to_ascii_lowercase();
            for bad in [
                "<script",
                "onerror",
                "onload",
                "ontoggle",
                "javascript:",
                "vbscript:",
                "data:text/html",
                "<iframe",
                "<object",
                "<embed",
                "<form",
                "<svg",
                "<math",
                "<style",
                "<meta",
                "<link",
                "<base",
                "type=\"text\"",
                "type=\"image\"",
            ] {
                assert!(!html.contains(bad), "{case:?} left {bad:?} in {html:?}");
            }
        }
    }
}
