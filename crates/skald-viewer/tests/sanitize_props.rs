//! Property of the Markdown renderer's sanitiser (ammonia): whatever mixture of Markdown,
//! HTML and script tricks a file holds, the HTML that comes out has no element that runs or
//! loads code, no event-handler attribute and no script or HTML-document URL. Checked on
//! the output's tags (text is escaped, so every `<` in it starts a tag). 10,000 documents
//! per run (`PROPTEST_CASES` raises it).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use proptest::prelude::*;
use skald_viewer::{FileRoute, render_markdown};
use std::path::Path;

const PIECES: &[&str] = &[
    "<script>alert(1)</script>",
    "<script",
    "</script>",
    "<img src=x onerror=alert(1)>",
    "<a href=\"javascript:alert(1)\">x</a>",
    "<a href=\"  JaVaScRiPt:alert(1)\">x</a>",
    "<a href=\"java&#x09;script:alert(1)\">x</a>",
    "[l](javascript:alert(1))",
    "[l](<javascript:alert(1)>)",
    "![i](data:text/html,<script>alert(1)</script>)",
    "<svg onload=alert(1)>",
    "<svg><script>1</script></svg>",
    "<math><mi xlink:href=\"javascript:1\">x</mi></math>",
    "<iframe src=//evil.example>",
    "<object data=x>",
    "<embed src=x>",
    "<form action=javascript:1><button>go</button></form>",
    "<input type=image src=x onerror=1>",
    "<style>*{}</style>",
    "<link rel=stylesheet href=//e>",
    "<meta http-equiv=refresh content=\"0;url=javascript:1\">",
    "<base href=//e/>",
    "<details open ontoggle=alert(1)>",
    "<div style=\"background:url(javascript:1)\">",
    "<div",
    " onclick=\"x\"",
    " onmouseover=x ",
    "\"",
    "'",
    ">",
    "<",
    "`",
    "```html\n<script>1</script>\n```\n",
    "\n",
    "\n\n",
    "**b**",
    "# h\n",
    "![i](x.png)",
    "[r](a.md)",
    "[r](//evil.example/x)",
    "<https://example.com>",
    "&lt;script&gt;",
    "&#x3C;script&#x3E;",
    "javascript:",
    "plain words onload onerror",
    "| a | b |\n|---|---|\n| <script> | x |\n",
    "<!-- <script>1</script> -->",
    "<![CDATA[<script>1</script>]]>",
    "<noscript><p title=\"</noscript><img src=x onerror=1>\">",
];

const BAD_TAGS: &[&str] = &[
    "script", "style", "iframe", "frame", "object", "embed", "form", "button", "textarea",
    "select", "svg", "math", "meta", "link", "base", "noscript", "template",
];

/// Each tag of `html` as (name, [(attribute, value)]).
fn tags(html: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('>') else { break };
        let inner = after[..end].trim_start_matches('/');
        rest = &after[end + 1..];
        let name_end = inner
            .find(|c: char| c.is_whitespace() || c == '/')
            .unwrap_or(inner.len());
        let name = inner[..name_end].to_ascii_lowercase();
        let mut attrs = Vec::new();
        let mut a = inner[name_end..].trim_start();
        while !a.is_empty() && a != "/" {
            let n_end = a
                .find(|c: char| c == '=' || c.is_whitespace())
                .unwrap_or(a.len());
            let attr = a[..n_end].to_ascii_lowercase();
            a = &a[n_end..];
            let mut value = String::new();
            if let Some(v) = a.strip_prefix('=') {
                let v = v.trim_start();
                if let Some(q) = v.strip_prefix('"') {
                    let close = q.find('"').unwrap_or(q.len());
                    value = q[..close].to_string();
                    a = q.get(close + 1..).unwrap_or("");
                } else {
                    let close = v.find(char::is_whitespace).unwrap_or(v.len());
                    value = v[..close].to_string();
                    a = &v[close..];
                }
            }
            attrs.push((attr, value));
            a = a.trim_start();
        }
        out.push((name, attrs));
    }
    out
}

/// The scheme a URL attribute would use, as a browser reads it (entities decoded, control
/// characters and spaces dropped, case folded).
fn scheme(value: &str) -> String {
    let decoded = value
        .replace("&amp;", "&")
        .replace("&#x09;", "")
        .replace("&#9;", "")
        .replace("&colon;", ":");
    let cleaned: String = decoded
        .chars()
        .filter(|c| !c.is_whitespace() && !c.is_control())
        .collect::<String>()
        .to_ascii_lowercase();
    cleaned.split(':').next().unwrap_or("").to_string()
}

proptest! {
    #![proptest_config(skald_testkit::property_config())]

    #[test]
    fn nothing_that_runs_survives(parts in prop::collection::vec(prop::sample::select(PIECES), 1..14)) {
        let src = parts.concat();
        let html = render_markdown(&src, Path::new("/proj"), &FileRoute::new("/api/file?path="));
        for (name, attrs) in tags(&html) {
            prop_assert!(!BAD_TAGS.contains(&name.as_str()), "<{name}> in {html:?} from {src:?}");
            // Task lists' checkboxes are the one input kept, and nothing else of one.
            if name == "input" {
                for (attr, value) in &attrs {
                    prop_assert!(
                        ["type", "checked", "disabled"].contains(&attr.as_str())
                            && (attr != "type" || value == "checkbox"),
                        "{attr}={value:?} on <input> in {html:?} from {src:?}"
                    );
                }
            }
            for (attr, value) in attrs {
                prop_assert!(!attr.starts_with("on"), "{attr} on <{name}> in {html:?} from {src:?}");
                prop_assert!(attr != "style", "style on <{name}> in {html:?}");
                if ["href", "src", "xlink:href", "action", "formaction", "data"].contains(&attr.as_str()) {
                    let s = scheme(&value);
                    prop_assert!(
                        !["javascript", "vbscript", "data", "file"].contains(&s.as_str()),
                        "{attr}={value:?} on <{name}> in {html:?} from {src:?}"
                    );
                }
            }
        }
    }
}
