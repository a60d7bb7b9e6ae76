//! Text from a model or a tool as a person must see it before saying yes: every
//! character that could hide text, reorder it or repaint a terminal written out as a
//! visible escape. `ui/src/lib/visible.ts` is the same rule for the UI.
//!
//! Escaped: the C0 controls except newline and tab (`\r`, `\x1b`, …), DEL (`\x7f`), the
//! C1 controls (`\u{9b}`, a one-character CSI), the bidirectional controls (`\u{202e}`,
//! `\u{2066}`–`\u{2069}`, `\u{200e}`, …), zero-width and other invisible format
//! characters (`\u{200b}`, `\u{2060}`, `\u{feff}`, the tag characters, …) and the line
//! and paragraph separators. Everything else — backslashes included — is left as it is,
//! so an ordinary command reads the same escaped or not.

/// Whether `c` must be shown as an escape (newline and tab are not: they are visible as
/// layout).
pub fn is_hidden_control(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        // soft hyphen, combining grapheme joiner, Arabic letter mark
        | '\u{ad}' | '\u{34f}' | '\u{61c}'
        // Hangul and Khmer fillers and Mongolian selectors, which render as nothing
        | '\u{115f}' | '\u{1160}' | '\u{17b4}' | '\u{17b5}' | '\u{180b}'..='\u{180f}'
        // zero-width space/joiners, LRM/RLM
        | '\u{200b}'..='\u{200f}'
        // line/paragraph separators, bidi embeddings and overrides (LRE…RLO)
        | '\u{2028}'..='\u{202e}'
        // word joiner, invisible operators, bidi isolates (LRI…PDI), deprecated formats
        | '\u{2060}'..='\u{206f}'
        | '\u{3164}' | '\u{feff}' | '\u{ffa0}' | '\u{fff9}'..='\u{fffb}'
        | '\u{1d173}'..='\u{1d17a}'
        // tag characters (invisible text a model can read)
        | '\u{e0000}'..='\u{e007f}'
    )
}

/// `s` with every hidden control escaped; newlines and tabs kept, so a multi-line
/// command keeps its lines.
pub fn escape_controls(s: &str) -> String {
    escape(s, false)
}

/// `s` on one line: like [`escape_controls`], and newlines and tabs escaped too (`\n`,
/// `\t`), for a title or a label.
pub fn escape_controls_inline(s: &str) -> String {
    escape(s, true)
}

fn escape(s: &str, inline: bool) -> String {
    if !s
        .chars()
        .any(|c| is_hidden_control(c) || (inline && matches!(c, '\n' | '\t')))
    {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '\n' if inline => out.push_str("\\n"),
            '\t' if inline => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if is_hidden_control(c) => {
                let n = u32::from(c);
                if n < 0x80 {
                    out.push_str(&format!("\\x{n:02x}"));
                } else {
                    out.push_str(&format!("\\u{{{n:x}}}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_text_is_unchanged() {
        for s in [
            "cargo test -p skald-api",
            "echo 'a\\nb' | sed 's/\\\\/x/'",
            "line one\n\tline two",
            "Привет, 世界! 🚀 é",
            "",
        ] {
            assert_eq!(escape_controls(s), s);
        }
    }

    #[test]
    fn terminal_controls_are_escaped() {
        assert_eq!(
            escape_controls("echo ok\u{1b}[2K\u{1b}[1A\rrm -rf ~"),
            "echo ok\\x1b[2K\\x1b[1A\\rrm -rf ~"
        );
        assert_eq!(escape_controls("a\u{0}b\u{7}c\u{7f}"), "a\\x00b\\x07c\\x7f");
        // C1: a one-character CSI and NEL
        assert_eq!(escape_controls("x\u{9b}2Jy\u{85}"), "x\\u{9b}2Jy\\u{85}");
    }

    #[test]
    fn bidi_and_invisible_characters_are_escaped() {
        assert_eq!(escape_controls("ls \u{202e}txt.exe"), "ls \\u{202e}txt.exe");
        for c in [
            '\u{200b}',
            '\u{200c}',
            '\u{200d}',
            '\u{200e}',
            '\u{200f}',
            '\u{202a}',
            '\u{202d}',
            '\u{2066}',
            '\u{2067}',
            '\u{2068}',
            '\u{2069}',
            '\u{2028}',
            '\u{2029}',
            '\u{2060}',
            '\u{feff}',
            '\u{61c}',
            '\u{ad}',
            '\u{e0041}',
        ] {
            let out = escape_controls(&format!("a{c}b"));
            assert_eq!(out, format!("a\\u{{{:x}}}b", u32::from(c)));
        }
    }

    #[test]
    fn lines_are_kept_or_escaped_inline() {
        let s = "first\nsecond\tthird\r\n";
        assert_eq!(escape_controls(s), "first\nsecond\tthird\\r\n");
        assert_eq!(escape_controls_inline(s), "first\\nsecond\\tthird\\r\\n");
    }

    #[test]
    fn escaping_leaves_nothing_hidden_and_is_idempotent() {
        let all: String = (0u32..0x11_0000).filter_map(char::from_u32).collect();
        let once = escape_controls(&all);
        assert!(!once.chars().any(is_hidden_control));
        assert_eq!(escape_controls(&once), once);
        let inline = escape_controls_inline(&all);
        assert!(!inline.contains('\n') && !inline.contains('\t'));
    }
}
