//! What a fetched body must not do to the parsers it is given to (docs/web.md, "What
//! comes back"): a PDF whose drawings refer to themselves sends pdf-extract into endless
//! recursion, which aborts the process (no unwinding to catch); HTML nested a hundred
//! thousand levels deep makes readability's scoring take hours. Both are checked first,
//! without recursion of our own, in time linear in the body.

use std::collections::HashMap;

/// Form drawings nested deeper than this are refused (real documents nest a few).
const MAX_FORM_DEPTH: usize = 32;
/// HTML nested deeper than this is read as text without the readability pass.
pub const MAX_HTML_DEPTH: usize = 512;

type Id = (u32, u16);

/// Whether the PDF's form XObjects nest at most `MAX_FORM_DEPTH` deep and none refers back
/// to itself, directly or through others; `Err` says why not, or that it cannot be read.
pub fn check_pdf_forms(bytes: &[u8]) -> Result<(), String> {
    let doc = lopdf::Document::load_mem(bytes).map_err(|e| format!("cannot be read: {e}"))?;
    // A form without resources of its own draws with its page's: any page's, to be safe.
    let mut inherited = Vec::new();
    for obj in doc.objects.values() {
        if let Ok(dict) = obj.as_dict()
            && dict
                .get(b"Type")
                .and_then(|t| t.as_name())
                .is_ok_and(|n| n == b"Page" || n == b"Pages")
            && let Ok(res) = dict.get(b"Resources")
        {
            inherited.extend(xobjects(&doc, res));
        }
    }
    let mut edges: HashMap<Id, Vec<Id>> = HashMap::new();
    for (id, obj) in &doc.objects {
        let Ok(stream) = obj.as_stream() else {
            continue;
        };
        if !stream
            .dict
            .get(b"Subtype")
            .and_then(|s| s.as_name())
            .is_ok_and(|n| n == b"Form")
        {
            continue;
        }
        let targets = match stream.dict.get(b"Resources") {
            Ok(res) => xobjects(&doc, res),
            Err(_) => inherited.clone(),
        };
        edges.insert(*id, targets);
    }
    // Depth-first, by hand: 0 unseen, 1 on the path, 2 done (with its depth below it).
    let mut state: HashMap<Id, u8> = HashMap::new();
    let mut depth: HashMap<Id, usize> = HashMap::new();
    let forms: Vec<Id> = edges.keys().copied().collect();
    for start in forms {
        if state.get(&start) == Some(&2) {
            continue;
        }
        state.insert(start, 1);
        let mut stack: Vec<(Id, usize)> = vec![(start, 0)];
        while let Some(&(node, next)) = stack.last() {
            let children = &edges[&node];
            if next < children.len() {
                if let Some(top) = stack.last_mut() {
                    top.1 += 1;
                }
                let child = children[next];
                if !edges.contains_key(&child) {
                    continue;
                }
                match state.get(&child).copied().unwrap_or(0) {
                    1 => return Err("its drawings refer to themselves".to_string()),
                    2 => {}
                    _ => {
                        state.insert(child, 1);
                        stack.push((child, 0));
                    }
                }
            } else {
                let below = children
                    .iter()
                    .filter_map(|c| depth.get(c))
                    .max()
                    .copied()
                    .unwrap_or(0);
                if below + 1 > MAX_FORM_DEPTH {
                    return Err(format!(
                        "its drawings nest more than {MAX_FORM_DEPTH} levels deep"
                    ));
                }
                depth.insert(node, below + 1);
                state.insert(node, 2);
                stack.pop();
            }
        }
    }
    Ok(())
}

/// The objects a resource dictionary names as XObjects.
fn xobjects(doc: &lopdf::Document, resources: &lopdf::Object) -> Vec<Id> {
    let Ok((_, res)) = doc.dereference(resources) else {
        return Vec::new();
    };
    let Ok(dict) = res.as_dict() else {
        return Vec::new();
    };
    let Ok(x) = dict.get(b"XObject") else {
        return Vec::new();
    };
    let Ok((_, x)) = doc.dereference(x) else {
        return Vec::new();
    };
    x.as_dict()
        .map(|d| {
            d.iter()
                .filter_map(|(_, v)| v.as_reference().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `html` nests elements deeper than `limit`, read the way a browser's parser
/// nests them: an end tag closes only an element that is open (a stray `</span>` closes
/// nothing), `/>` closes nothing but a void element, quoted attributes may hold `>`,
/// comments and the text of raw-text elements (`script`, `style`, `textarea`…) hold no
/// tags. Elements whose end tag may be left out (`p`, `li`, `td`…) and void ones are not
/// counted, so an ordinary page with unclosed paragraphs does not look deep.
pub fn html_deeper_than(html: &str, limit: usize) -> bool {
    const UNCOUNTED: &[&str] = &[
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr", "p", "li", "td", "th", "tr", "option", "optgroup", "dt", "dd", "thead",
        "tbody", "tfoot", "colgroup", "rt", "rp", "html", "head", "body",
    ];
    const RAW_TEXT: &[&str] = &[
        "script",
        "style",
        "textarea",
        "title",
        "xmp",
        "noembed",
        "noframes",
        "iframe",
        "noscript",
        "plaintext",
    ];
    let lower = html.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut open: Vec<String> = Vec::new();
    let mut i = 0;
    while let Some(offset) = bytes[i..].iter().position(|&b| b == b'<') {
        let at = i + offset + 1;
        if lower[at..].starts_with("!--") {
            i = lower[at..].find("-->").map_or(bytes.len(), |p| at + p + 3);
            continue;
        }
        let closing = bytes.get(at) == Some(&b'/');
        let name_start = if closing { at + 1 } else { at };
        if !bytes.get(name_start).is_some_and(u8::is_ascii_alphabetic) {
            // Not a tag: `<` in text, `<!doctype`, `<?xml`.
            i = at;
            continue;
        }
        let name_end = bytes[name_start..]
            .iter()
            .position(|b| b.is_ascii_whitespace() || *b == b'/' || *b == b'>')
            .map_or(bytes.len(), |p| name_start + p);
        let name = &lower[name_start..name_end];
        // The tag's end: the first `>` outside quotes.
        let mut quote: Option<u8> = None;
        let mut end = bytes.len();
        for (k, &b) in bytes.iter().enumerate().skip(name_end) {
            match quote {
                Some(q) if b == q => quote = None,
                Some(_) => {}
                None if b == b'"' || b == b'\'' => quote = Some(b),
                None if b == b'>' => {
                    end = k;
                    break;
                }
                None => {}
            }
        }
        i = (end + 1).min(bytes.len());
        if closing {
            if let Some(pos) = open.iter().rposition(|o| o == name) {
                open.truncate(pos);
            }
            continue;
        }
        if RAW_TEXT.contains(&name) {
            // Its text runs to its own end tag.
            i = lower[i..]
                .find(&format!("</{name}"))
                .map_or(bytes.len(), |p| i + p);
            continue;
        }
        if !UNCOUNTED.contains(&name) {
            open.push(name.to_string());
            if open.len() > limit {
                return true;
            }
        }
        if i >= bytes.len() {
            break;
        }
    }
    false
}

/// The text of HTML without building a tree: tags dropped, scripts and styles with their
/// content, the common entities read. For pages too deep for the readability pass.
pub fn html_text(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let mut out = String::with_capacity(html.len() / 2);
    let mut i = 0;
    while i < html.len() {
        let Some(lt) = html[i..].find('<').map(|p| i + p) else {
            out.push_str(&html[i..]);
            break;
        };
        out.push_str(&html[i..lt]);
        let skip_to = ["script", "style"].iter().find_map(|tag| {
            lower[lt + 1..].starts_with(tag).then(|| {
                lower[lt..]
                    .find(&format!("</{tag}"))
                    .map_or(html.len(), |p| lt + p + 2 + tag.len())
            })
        });
        let from = skip_to.unwrap_or(lt);
        i = html[from..].find('>').map_or(html.len(), |p| from + p + 1);
        out.push(' ');
    }
    out.replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PDF whose form `4 0 R` draws itself (the reviewer's loop.pdf, rebuilt).
    fn looping_pdf(forms: usize) -> Vec<u8> {
        // Forms 10.. each draw the next; the last draws the first when `forms` loops.
        let mut objects = vec![
            "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /X 4 0 R >> >> /Contents 5 0 R >>".to_string(),
        ];
        for f in 0..forms {
            let next = if f + 1 == forms { 4 } else { 6 + f };
            objects.push(format!(
                "<< /Type /XObject /Subtype /Form /BBox [0 0 1 1] /Resources << /XObject << /X {next} 0 R >> >> /Length 5 >>\nstream\n/X Do\nendstream"
            ));
            if f == 0 {
                objects.push("<< /Length 5 >>\nstream\n/X Do\nendstream".to_string());
            }
        }
        skald_testkit::web::pdf_of(&objects)
    }

    #[test]
    fn a_pdf_whose_drawings_loop_is_refused_and_a_plain_one_passes() {
        for forms in [1, 2, 5] {
            let err = check_pdf_forms(&looping_pdf(forms)).unwrap_err();
            assert!(err.contains("refer to themselves"), "{forms}: {err}");
        }
        assert_eq!(
            check_pdf_forms(&skald_testkit::web::pdf_saying("fine")),
            Ok(())
        );
        // And through the page conversion: an error, not an abort.
        let err = crate::convert::page(
            "http://x/loop.pdf",
            Some("application/pdf"),
            looping_pdf(1),
            false,
        )
        .unwrap_err();
        assert!(err.to_string().contains("refer to themselves"), "{err}");
    }

    #[test]
    fn deep_html_is_told_apart_from_unclosed_paragraphs() {
        let deep = "<div>".repeat(MAX_HTML_DEPTH + 1);
        assert!(html_deeper_than(&deep, MAX_HTML_DEPTH));
        let list: String = (0..5000).map(|i| format!("<li>item {i}<p>text")).collect();
        assert!(!html_deeper_than(
            &format!("<ul>{list}</ul>"),
            MAX_HTML_DEPTH
        ));
        assert!(!html_deeper_than(crate::convert::tests::ARTICLE, 20));
        // What a browser nests though the markup seems to close it.
        let n = MAX_HTML_DEPTH + 1;
        for trick in [
            "<div></span>".repeat(n),
            "<div/>".repeat(n),
            "<div title=\"></div>\">".repeat(n),
            "<div><!-- > </div> -->".repeat(n),
            "<div><script></div></script>".repeat(n),
            "<DIV >".repeat(n),
        ] {
            assert!(html_deeper_than(&trick, MAX_HTML_DEPTH), "{}", &trick[..40]);
        }
        // And markup that does close.
        assert!(!html_deeper_than(
            &"<div><span>x</span></div>".repeat(5000),
            MAX_HTML_DEPTH
        ));
        assert!(!html_deeper_than(&"<div>".repeat(10), MAX_HTML_DEPTH));
        assert_eq!(
            html_text("<p>a &amp; b<script>var x='<p>'</script><style>p{}</style>c</p>")
                .split_whitespace()
                .collect::<Vec<_>>(),
            ["a", "&", "b", "c"]
        );
    }

    #[test]
    fn a_page_nested_a_hundred_thousand_deep_is_read_as_text_quickly() {
        let html = format!(
            "<html><body>{}deep words{}</body></html>",
            "<div>".repeat(100_000),
            "</div>".repeat(100_000)
        );
        let page =
            crate::convert::page("http://x/", Some("text/html"), html.into_bytes(), false).unwrap();
        assert!(page.text.contains("deep words"), "{}", page.text);
    }
}
