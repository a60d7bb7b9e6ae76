//! Where the bodies of C and C++ functions are, so that tree-sitter can be shown each one
//! as `{}`: an outline lists functions, not their statements, and statements are most of
//! the bytes of a `.c` file (and of the inline functions of C++ headers).
//!
//! The scan knows comments, string and character literals (raw strings and digit
//! separators included) and preprocessor lines, and counts braces. A `{` whose last
//! significant token is `)` — or `)` and then `const`, `noexcept`, `override`… — opens a
//! body: a function's, a method's inside a class, a `catch` block's, a macro's such as
//! gtest's `TEST(a, b) { … }`. A `{` after `=` opens an initialiser (a table). Showing any
//! of those as `{}` changes no definition around them. Braces that do not balance (a `#if` whose branches each open one) make the scan
//! give up, and the file is parsed whole.

use tree_sitter::{Point, Range};

/// Words that may stand between a function's `)` and its body.
const QUALIFIERS: &[&[u8]] = &[
    b"const",
    b"volatile",
    b"noexcept",
    b"override",
    b"final",
    b"mutable",
    b"try",
];

/// Words that begin a namespace or a type: their braces hold definitions.
const SCOPES: &[&[u8]] = &[b"namespace", b"class", b"struct", b"union", b"enum"];

/// Bodies whose inside is shorter than this are left in: a boundary costs more.
const MIN_INSIDE: usize = 32;

struct Scan<'s> {
    src: &'s [u8],
    i: usize,
    row: usize,
    line_start: usize,
}

impl Scan<'_> {
    fn point(&self, at: usize) -> Point {
        Point {
            row: self.row,
            column: at - self.line_start,
        }
    }

    fn newline(&mut self, at: usize) {
        self.row += 1;
        self.line_start = at + 1;
    }

    fn byte(&self, at: usize) -> u8 {
        self.src.get(at).copied().unwrap_or(0)
    }

    /// Skips to the end of the line (not past its newline); a `\` before the newline
    /// continues the line (preprocessor directives, line comments).
    fn skip_line(&mut self) {
        while self.i < self.src.len() {
            if self.src[self.i] == b'\n' {
                let before = &self.src[..self.i];
                if !(before.ends_with(b"\\") || before.ends_with(b"\\\r")) {
                    return;
                }
                self.newline(self.i);
            }
            self.i += 1;
        }
    }

    /// Skips a `/* … */` comment starting at `i`.
    fn skip_block_comment(&mut self) {
        self.i += 2;
        while self.i < self.src.len() {
            if self.src[self.i] == b'*' && self.byte(self.i + 1) == b'/' {
                self.i += 2;
                return;
            }
            if self.src[self.i] == b'\n' {
                self.newline(self.i);
            }
            self.i += 1;
        }
    }

    /// Skips a quoted literal starting at `i` (its quote `q`); an unterminated one ends at
    /// the line's end, as the compiler would complain there.
    fn skip_quoted(&mut self, q: u8) {
        self.i += 1;
        while self.i < self.src.len() {
            match self.src[self.i] {
                b'\\' => {
                    // An escaped newline continues the literal on the next line.
                    self.i += 1;
                    if self.byte(self.i) == b'\r' && self.byte(self.i + 1) == b'\n' {
                        self.i += 1;
                    }
                    if self.byte(self.i) == b'\n' {
                        self.newline(self.i);
                    }
                }
                b'\n' => return,
                c if c == q => {
                    self.i += 1;
                    return;
                }
                _ => {}
            }
            self.i += 1;
        }
    }

    /// Skips a raw string `R"delim( … )delim"` whose `"` is at `i`.
    fn skip_raw(&mut self) {
        let open = self.i + 1;
        let Some(paren) = self.src[open..].iter().take(17).position(|&c| c == b'(') else {
            self.skip_quoted(b'"');
            return;
        };
        let delim = self.src[open..open + paren].to_vec();
        self.i = open + paren + 1;
        while self.i < self.src.len() {
            if self.src[self.i] == b')'
                && self.src[self.i + 1..].starts_with(&delim)
                && self.byte(self.i + 1 + delim.len()) == b'"'
            {
                self.i += delim.len() + 2;
                return;
            }
            if self.src[self.i] == b'\n' {
                self.newline(self.i);
            }
            self.i += 1;
        }
    }
}

/// The ranges of `src` for tree-sitter to parse: all of it but the inside of each function
/// body (its `{` and `}` stay). `None` when there is nothing worth leaving out, or the
/// scan is unsure.
pub(crate) fn included_ranges(src: &[u8]) -> Option<Vec<Range>> {
    let mut s = Scan {
        src,
        i: 0,
        row: 0,
        line_start: 0,
    };
    let mut depth = 0usize;
    let mut after_paren = false;
    // A `{` after `=`: an initialiser.
    let mut after_eq = false;
    // Whether the declaration being read began a namespace or a type, whose `{ … }` holds
    // definitions even after a `)` (`namespace std _GLIBCXX_VISIBILITY(default) {`,
    // `struct alignas(16) S {`).
    let mut in_scope_decl = false;
    let mut line_blank = true;
    // The body being skipped: where its inside starts, and the depth it closes at.
    let mut open: Option<(usize, Point, usize)> = None;
    let mut ranges = Vec::new();
    let mut from = (0usize, Point { row: 0, column: 0 });
    while s.i < src.len() {
        let c = src[s.i];
        match c {
            b'\n' => {
                s.newline(s.i);
                line_blank = true;
                s.i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\x0c' | b'\x0b' => {
                s.i += 1;
                continue;
            }
            b'#' if line_blank => {
                s.skip_line();
                continue;
            }
            b'/' if s.byte(s.i + 1) == b'/' => {
                s.skip_line();
                continue;
            }
            b'/' if s.byte(s.i + 1) == b'*' => {
                s.skip_block_comment();
                continue;
            }
            _ => {}
        }
        line_blank = false;
        match c {
            b'"' => {
                let raw = s.i > 0 && src[s.i - 1] == b'R';
                if raw {
                    s.skip_raw()
                } else {
                    s.skip_quoted(b'"')
                }
                (after_paren, after_eq) = (false, false);
            }
            b'\'' => {
                s.skip_quoted(b'\'');
                (after_paren, after_eq) = (false, false);
            }
            b'0'..=b'9' => {
                // A number, with C++14's digit separators (`1'000`) and exponents.
                while s.i < src.len()
                    && (src[s.i].is_ascii_alphanumeric() || matches!(src[s.i], b'\'' | b'.' | b'_'))
                {
                    s.i += 1;
                }
                (after_paren, after_eq) = (false, false);
            }
            c if c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80 => {
                let start = s.i;
                while s.i < src.len()
                    && (src[s.i].is_ascii_alphanumeric()
                        || matches!(src[s.i], b'_' | b'$')
                        || src[s.i] >= 0x80)
                {
                    s.i += 1;
                }
                let word = &src[start..s.i];
                // `R"(…)"` and `u8R"(…)"` are strings, taken by the next round.
                if s.byte(s.i) != b'"' {
                    after_paren = after_paren && QUALIFIERS.contains(&word);
                    after_eq = false;
                }
                in_scope_decl |= SCOPES.contains(&word);
            }
            b')' => {
                after_paren = true;
                after_eq = false;
                s.i += 1;
            }
            // Before an initialiser: the large tables of generated code (tree-sitter's
            // own parser.c is mostly one), whose inside an outline does not show either.
            b'=' => {
                after_eq = true;
                after_paren = false;
                s.i += 1;
            }
            b'{' => {
                if open.is_none() && ((after_paren && !in_scope_decl) || after_eq) {
                    open = Some((s.i + 1, s.point(s.i + 1), depth));
                }
                depth += 1;
                (after_paren, after_eq, in_scope_decl) = (false, false, false);
                s.i += 1;
            }
            b'}' => {
                depth = depth.checked_sub(1)?;
                if let Some((inside, inside_at, closes_at)) = open
                    && depth == closes_at
                {
                    if s.i - inside >= MIN_INSIDE {
                        ranges.push(range(from, (inside, inside_at)));
                        from = (s.i, s.point(s.i));
                    }
                    open = None;
                }
                (after_paren, after_eq, in_scope_decl) = (false, false, false);
                s.i += 1;
            }
            b';' => {
                (after_paren, after_eq, in_scope_decl) = (false, false, false);
                s.i += 1;
            }
            _ => {
                after_paren = false;
                after_eq = false;
                s.i += 1;
            }
        }
    }
    if depth != 0 || open.is_some() || ranges.is_empty() {
        return None;
    }
    ranges.push(range(from, (src.len(), s.point(src.len()))));
    Some(ranges)
}

fn range(from: (usize, Point), to: (usize, Point)) -> Range {
    Range {
        start_byte: from.0,
        end_byte: to.0,
        start_point: from.1,
        end_point: to.1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text tree-sitter is shown.
    fn shown(src: &str) -> String {
        match included_ranges(src.as_bytes()) {
            Some(r) => r.iter().map(|r| &src[r.start_byte..r.end_byte]).collect(),
            None => src.to_string(),
        }
    }

    #[test]
    fn function_bodies_are_emptied_and_everything_else_kept() {
        let long = "    x = 1; x = 2; x = 3; x = 4; x = 5;\n";
        let src = format!(
            "struct s {{ int v; }};\nint f(int a) {{\n{long}}}\nclass C {{\n  void m() const {{\n{long}  }}\n}};\nint t[] = {{ 1, 2 }};\n"
        );
        assert_eq!(
            shown(&src),
            "struct s { int v; };\nint f(int a) {}\nclass C {\n  void m() const {}\n};\nint t[] = { 1, 2 };\n"
        );
    }

    #[test]
    fn braces_in_comments_strings_characters_and_directives_are_not_counted() {
        let src = "int f(void) {\n  // }\n  /* } */ char c = '}'; const char *s = \"}\\\"}\";\n  auto r = R\"x(})x\";\n  int n = 1'000;\n#define CLOSE }\n  return 0;\n}\nint after(void);\n";
        let out = shown(src);
        assert_eq!(out, "int f(void) {}\nint after(void);\n", "{out}");
    }

    #[test]
    fn namespaces_and_types_after_a_parenthesis_are_read_and_lines_stay_in_step() {
        let long = "  int a; int b; int c; int d; int e; int f; int g;\n";
        let src = format!(
            "namespace std _GLIBCXX_VISIBILITY(default)\n{{\nstruct alignas(16) S {{\n  void m() {{\n{long}  }}\n}};\n}}\nconst char *s = \"a\\\nb\";\nint f(void) {{\n{long}}}\n"
        );
        assert_eq!(
            shown(&src),
            "namespace std _GLIBCXX_VISIBILITY(default)\n{\nstruct alignas(16) S {\n  void m() {}\n};\n}\nconst char *s = \"a\\\nb\";\nint f(void) {}\n"
        );
        let r = included_ranges(src.as_bytes()).unwrap();
        let last = r.last().unwrap();
        // The string's escaped newline is counted: `}` of f is on line 11 (row 10).
        assert_eq!(
            last.start_point.row,
            src[..last.start_byte].matches('\n').count()
        );
    }

    #[test]
    fn unbalanced_branches_leave_the_file_whole() {
        let src = "#if A\nint f(int a) {\n#else\nint f(int a, int b) {\n#endif\n  return a + 1000000000 + 2000000000;\n}\n";
        assert!(included_ranges(src.as_bytes()).is_none());
        assert!(included_ranges(b"}").is_none());
    }

    #[test]
    fn points_match_the_bytes() {
        let src = "int f(void) {\n  return 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10;\n}\n";
        let r = included_ranges(src.as_bytes()).unwrap();
        for range in r {
            for (byte, point) in [
                (range.start_byte, range.start_point),
                (range.end_byte, range.end_point),
            ] {
                let before = &src[..byte];
                let row = before.matches('\n').count();
                let col = byte - before.rfind('\n').map_or(0, |i| i + 1);
                assert_eq!((row, col), (point.row, point.column), "at byte {byte}");
            }
        }
    }
}
