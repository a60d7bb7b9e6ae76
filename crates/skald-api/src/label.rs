//! Human-readable labels for tool calls (docs/tools.md, "The contract (`skald-api`)").

use serde::{Deserialize, Serialize};

/// Maximum characters of a short label (chat cards, notifications).
pub const MAX_LABEL_SHORT: usize = 60;
/// Maximum characters of a full label (expanded cards, Inbox items).
pub const MAX_LABEL_FULL: usize = 120;

/// Which of the two label lengths a caller wants from `Tool::describe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolDescriptionLength {
    Short,
    Full,
}

impl ToolDescriptionLength {
    /// The character budget of this length.
    pub fn max_chars(self) -> usize {
        match self {
            ToolDescriptionLength::Short => MAX_LABEL_SHORT,
            ToolDescriptionLength::Full => MAX_LABEL_FULL,
        }
    }

    /// `s` on one line with its hidden controls escaped
    /// ([`crate::visible::escape_controls_inline`]), truncated to this length's budget. A
    /// label is a title: where a call is approved, its arguments are shown whole.
    pub fn fit(self, s: &str) -> String {
        truncate_label(&crate::visible::escape_controls_inline(s), self.max_chars())
    }
}

/// Truncates `s` to at most `max` characters (not bytes), cutting on a char boundary and
/// ending with `…` when anything was cut. The ellipsis counts towards `max`, so the
/// result never exceeds the budget a UI reserved for it.
pub fn truncate_label(s: &str, max: usize) -> String {
    if max == 0 {
        return String::new();
    }
    // Count at most max+1 chars: enough to know whether anything must be cut.
    if s.chars().nth(max).is_none() {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_unchanged() {
        assert_eq!(truncate_label("read_file `a.rs`", 60), "read_file `a.rs`");
        assert_eq!(truncate_label("", 5), "");
    }

    #[test]
    fn exact_budget_is_unchanged() {
        let s = "x".repeat(60);
        assert_eq!(truncate_label(&s, 60), s);
    }

    #[test]
    fn long_text_is_cut_with_ellipsis_within_budget() {
        let s = "y".repeat(200);
        let out = truncate_label(&s, MAX_LABEL_SHORT);
        assert_eq!(out.chars().count(), MAX_LABEL_SHORT);
        assert!(out.ends_with('…'));
    }

    #[test]
    fn multibyte_text_is_cut_on_char_boundaries() {
        // Cyrillic (2 bytes), CJK (3 bytes) and emoji (4 bytes) must never be split.
        let s = "Привет, 世界! 🚀🚀🚀 ".repeat(20);
        for max in 1..=130 {
            let out = truncate_label(&s, max);
            assert!(out.chars().count() <= max, "max {max}: {out}");
            assert!(out.ends_with('…'));
        }
        assert_eq!(truncate_label("日本語", 3), "日本語");
        assert_eq!(truncate_label("日本語テキスト", 3), "日本…");
        assert_eq!(truncate_label("🚀🚀", 1), "…");
    }

    #[test]
    fn zero_budget_gives_empty_label() {
        assert_eq!(truncate_label("abc", 0), "");
    }

    #[test]
    fn fitted_labels_carry_no_hidden_controls() {
        assert_eq!(
            ToolDescriptionLength::Full.fit("execute_cmd `ls\u{1b}[2J \u{202e}x`\nnext"),
            "execute_cmd `ls\\x1b[2J \\u{202e}x`\\nnext"
        );
    }

    #[test]
    fn lengths_fit_their_budgets() {
        let s = "z".repeat(500);
        assert_eq!(ToolDescriptionLength::Short.fit(&s).chars().count(), 60);
        assert_eq!(ToolDescriptionLength::Full.fit(&s).chars().count(), 120);
    }
}
