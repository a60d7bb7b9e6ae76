//! Positions as people and models write them (1-based lines, columns in characters) and as
//! LSP does (0-based, columns in UTF-16 code units), and file paths as URIs.

use crate::LspError;
use lsp_types::{Position, Url};
use std::path::{Path, PathBuf};

/// The URI of an absolute path.
pub fn uri_of(path: &Path) -> Result<Url, LspError> {
    Url::from_file_path(path)
        .map_err(|()| LspError::Path(format!("{} is not an absolute path", path.display())))
}

/// The path of a `file:` URI.
pub fn path_of(uri: &Url) -> Option<PathBuf> {
    uri.to_file_path().ok()
}

/// The LSP position of 1-based `line` and 1-based `column` (in characters) of `text`.
pub fn position(text: &str, line: u32, column: u32) -> Position {
    let l = line.saturating_sub(1);
    let content = text.lines().nth(l as usize).unwrap_or("");
    let utf16: usize = content
        .chars()
        .take(column.saturating_sub(1) as usize)
        .map(char::len_utf16)
        .sum();
    Position::new(l, u32::try_from(utf16).unwrap_or(u32::MAX))
}

/// The 1-based line and column (in characters) of an LSP position in `text`.
pub fn line_column(text: &str, pos: Position) -> (u32, u32) {
    let content = text.lines().nth(pos.line as usize).unwrap_or("");
    let mut units = 0usize;
    let mut chars = 0u32;
    for c in content.chars() {
        if units >= pos.character as usize {
            break;
        }
        units += c.len_utf16();
        chars += 1;
    }
    (pos.line + 1, chars + 1)
}

/// The 1-based column where `symbol` starts on 1-based `line` of `text`: its first
/// occurrence as a whole word, else anywhere.
pub fn column_of(text: &str, line: u32, symbol: &str) -> Option<u32> {
    let content = text.lines().nth(line.saturating_sub(1) as usize)?;
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut fallback = None;
    for (at, _) in content.match_indices(symbol) {
        let before = content[..at].chars().next_back();
        let after = content[at + symbol.len()..].chars().next();
        let col = u32::try_from(content[..at].chars().count()).ok()? + 1;
        if before.is_none_or(|c| !is_word(c)) && after.is_none_or(|c| !is_word(c)) {
            return Some(col);
        }
        fallback.get_or_insert(col);
    }
    fallback
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters_and_lsp_counts_utf16() {
        let text = "a = 1\nnamé = \"😀x\" + y\n";
        let p = position(text, 2, 10);
        assert_eq!(p, Position::new(1, 10));
        assert_eq!(line_column(text, p), (2, 10));
        assert_eq!(line_column(text, Position::new(1, 11)), (2, 11));
        assert_eq!(column_of(text, 2, "y"), Some(15));
        assert_eq!(column_of("count = counter + count\n", 1, "count"), Some(1));
        assert_eq!(column_of("xcount = count\n", 1, "count"), Some(10));
        assert_eq!(column_of("a\n", 5, "a"), None);
    }
}
