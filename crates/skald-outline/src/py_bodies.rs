//! Python function bodies, blanked before tree-sitter reads the file: an outline lists a
//! function, never what is inside it (ts.rs does not walk a function's body), and bodies
//! are most of a Python file. tree-sitter-python reads about 9 MB/s here, and its scanner
//! reads whitespace a byte at a time; a body of empty lines costs it almost nothing.
//!
//! C's bodies are left out with included ranges (c_bodies.rs). Python's cannot be: the
//! grammar's indentation scanner measures columns, which jump when a range is skipped. So
//! the text keeps every line and each body becomes its first line's indentation, a `0` (a
//! statement, so the `def` still has a block) and the body's newlines: lines keep their
//! numbers and the lines outside bodies their columns (an outline gives lines only). The
//! real last line of each blanked function is remembered by the row of its `0`, where
//! tree-sitter now ends the function.
//!
//! Outside functions, runs of simple statements (a docstring, imports, a class's
//! attributes) are blanked the same way: no definition is in them, and after function
//! bodies they were most of what tree-sitter still read (the standard library's outline:
//! 5.9 s → 2.8 s of CPU, with `MIN_BODY` below). Their real last line is remembered too,
//! for a class or a block that ends with one.
//!
//! The scan follows logical lines as Python's tokenizer does: comments, strings (triple
//! quoted ones across lines), brackets and backslash continuations. f-strings are taken as
//! plain strings, which is how every Python before 3.12 read them and still finds their end
//! when quotes nest. Whatever it is unsure of (a tab after spaces, a form feed, a lone
//! `\r`, an unterminated string, brackets that do not balance) makes it give up, and the
//! file is read whole; so does a blanked text tree-sitter finds an error in (ts.rs).

use std::collections::HashMap;

/// Bodies (and runs of statements) shorter than this are left as they are: blanking
/// them gains nothing. Measured on the standard library: 64 → 24 saved 8% of the parse,
/// 24 → 8 nothing more.
const MIN_BODY: usize = 24;

/// The words that begin a definition or a compound statement (`match` and `case` only
/// sometimes do: a statement starting with them is never taken for a simple one).
const COMPOUND: &[&[u8]] = &[
    b"def", b"async", b"class", b"if", b"elif", b"else", b"try", b"except", b"finally", b"for",
    b"while", b"with", b"match", b"case",
];

/// The text tree-sitter is shown, and the real last row (0-based) of each blanked function,
/// keyed by the row of its `0`.
pub(crate) struct Blanked {
    pub text: String,
    pub ends: HashMap<usize, usize>,
}

/// One logical line: where it starts and ends, and whether it opens a function's block.
struct Logical {
    /// Byte offset of its first significant character, and that character's row.
    start: usize,
    first_row: usize,
    /// Byte offset just past its last significant character.
    end: usize,
    /// The row of its last significant character.
    last_row: usize,
    /// Its indentation, tabs to the next multiple of 8 as the tokenizer counts them.
    indent: usize,
    /// A `def` (or `async def`) whose header ends with `:` and a newline.
    opens_def_block: bool,
    /// A simple statement: not a definition, a decorator or a compound statement's
    /// header, so nothing an outline lists is in it.
    simple: bool,
}

/// `src` with function bodies and runs of simple statements outside functions blanked, or
/// `None` when there is nothing to blank or the scan is unsure.
pub(crate) fn blank(src: &str) -> Option<Blanked> {
    let lines = logical_lines(src.as_bytes())?;
    let bytes = src.as_bytes();
    let mut out = Out {
        text: Vec::with_capacity(bytes.len()),
        copied: 0,
        ends: HashMap::new(),
    };
    let mut i = 0;
    while i < lines.len() {
        let header = &lines[i];
        i += 1;
        if header.simple {
            // A run of simple statements outside functions (a docstring, imports, a
            // module's or a class's assignments): no definition is in it.
            let first = header;
            while i < lines.len() && lines[i].simple && lines[i].indent == first.indent {
                i += 1;
            }
            out.blank(bytes, first, &lines[i - 1]);
            continue;
        }
        if !header.opens_def_block {
            continue;
        }
        let body_first = i;
        while i < lines.len() && lines[i].indent > header.indent {
            i += 1;
        }
        if body_first == i {
            // No indented block follows: not Python tree-sitter would accept; leave it.
            continue;
        }
        out.blank(bytes, &lines[body_first], &lines[i - 1]);
    }
    if out.ends.is_empty() {
        return None;
    }
    let Out {
        mut text,
        copied,
        ends,
    } = out;
    text.extend_from_slice(&bytes[copied..]);
    // Whole characters were left out (a body ends just past a character; of its first one,
    // the lead byte became `0` and the rest were dropped), and only ASCII was written.
    let text = String::from_utf8(text).ok()?;
    Some(Blanked { text, ends })
}

/// The blanked text as it is written.
struct Out {
    text: Vec<u8>,
    /// How much of the source is in `text`.
    copied: usize,
    ends: HashMap<usize, usize>,
}

impl Out {
    /// Blanks the statements from `first` to `last` (logical lines of one block), unless
    /// they are too short to be worth it.
    fn blank(&mut self, bytes: &[u8], first: &Logical, last: &Logical) {
        if last.end - first.start < MIN_BODY {
            return;
        }
        // `0` where the first statement starts, then only the newlines up to the end of
        // the last statement, so every later line keeps its number. Not spaces in place of
        // the rest: the grammar's scanner reads whitespace a byte at a time, and most of
        // the parse went there.
        // The last line's part stays as spaces: what follows the body on that line (a
        // comment) keeps its column, which the scanner weighs for the block's end.
        let body = &bytes[first.start + 1..last.end];
        let last_line = body.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        self.text
            .extend_from_slice(&bytes[self.copied..first.start]);
        self.text.push(b'0');
        self.text
            .extend(body[..last_line].iter().filter(|b| **b == b'\n'));
        self.text
            .extend(std::iter::repeat_n(b' ', body.len() - last_line));
        self.copied = last.end;
        self.ends.insert(first.first_row, last.last_row);
    }
}

/// Every logical line of `src`, or `None` when the scan is unsure.
fn logical_lines(src: &[u8]) -> Option<Vec<Logical>> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut row = 0;
    while i < src.len() {
        // The start of a physical line outside any logical line: its indentation.
        let mut indent = 0;
        let mut seen_space = false;
        while i < src.len() {
            match src[i] {
                b' ' => {
                    indent += 1;
                    seen_space = true;
                }
                // A tab after spaces is where tokenizers disagree (Python may refuse it).
                b'\t' if seen_space => return None,
                b'\t' => indent = (indent / 8 + 1) * 8,
                // A form feed resets the count in Python; rare enough to not follow.
                b'\x0c' => return None,
                _ => break,
            }
            i += 1;
        }
        match src.get(i) {
            None => break,
            Some(b'\n') => {
                i += 1;
                row += 1;
                continue;
            }
            Some(b'\r') if src.get(i + 1) == Some(&b'\n') => {
                i += 2;
                row += 1;
                continue;
            }
            Some(b'\r') => return None,
            Some(b'#') => {
                while i < src.len() && src[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            Some(_) => {}
        }
        let (start, first_row) = (i, row);
        let mut depth: usize = 0;
        let mut end = i;
        let mut last_row = row;
        let mut last_byte = 0u8;
        while let Some(&c) = src.get(i) {
            match c {
                b'\n' => {
                    row += 1;
                    i += 1;
                    if depth == 0 {
                        break;
                    }
                    continue;
                }
                b'\r' if src.get(i + 1) == Some(&b'\n') => {
                    i += 1;
                    continue;
                }
                b'\r' => return None,
                b'\x0c' => return None,
                b' ' | b'\t' => {
                    i += 1;
                    continue;
                }
                b'#' => {
                    while i < src.len() && src[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                b'\\' => {
                    // A continuation: the logical line goes on after the newline.
                    match (src.get(i + 1), src.get(i + 2)) {
                        (Some(b'\n'), _) => {
                            i += 2;
                            row += 1;
                            continue;
                        }
                        (Some(b'\r'), Some(b'\n')) => {
                            i += 3;
                            row += 1;
                            continue;
                        }
                        _ => return None,
                    }
                }
                b'\'' | b'"' => {
                    let rows = skip_string(src, &mut i)?;
                    row += rows;
                    end = i;
                    last_row = row;
                    last_byte = c;
                    continue;
                }
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth = depth.checked_sub(1)?,
                _ => {}
            }
            last_byte = c;
            i += 1;
            end = i;
            last_row = row;
        }
        if depth != 0 {
            return None;
        }
        let words = &src[start..end];
        let is_def = words.starts_with(b"def") && word_ends(words, 3)
            || words.starts_with(b"async")
                && word_ends(words, 5)
                && words[5..].trim_ascii_start().starts_with(b"def")
                && word_ends(words[5..].trim_ascii_start(), 3);
        out.push(Logical {
            start,
            first_row,
            end,
            last_row,
            indent,
            opens_def_block: is_def && last_byte == b':',
            simple: last_byte != b':'
                && !words.starts_with(b"@")
                && !COMPOUND
                    .iter()
                    .any(|k| words.starts_with(k) && word_ends(words, k.len())),
        });
    }
    Some(out)
}

/// Whether `s[..n]` is a whole word: what follows it is not part of a name.
fn word_ends(s: &[u8], n: usize) -> bool {
    s.get(n)
        .is_none_or(|&c| !(c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80))
}

/// Skips the string whose opening quote is at `*i` (any prefix is behind it, already
/// passed as a name); returns the newlines it spans. `None` if it does not end.
fn skip_string(src: &[u8], i: &mut usize) -> Option<usize> {
    let q = src[*i];
    let triple = src.get(*i + 1) == Some(&q) && src.get(*i + 2) == Some(&q);
    *i += if triple { 3 } else { 1 };
    let mut rows = 0;
    while *i < src.len() {
        match src[*i] {
            b'\\' => {
                // The escaped character, a quote or a newline, does not end anything.
                match (src.get(*i + 1), src.get(*i + 2)) {
                    (Some(b'\n'), _) => {
                        rows += 1;
                        *i += 2;
                    }
                    (Some(b'\r'), Some(b'\n')) => {
                        rows += 1;
                        *i += 3;
                    }
                    _ => *i += 2,
                }
                continue;
            }
            b'\n' if !triple => return None,
            b'\n' => rows += 1,
            c if c == q => {
                if !triple {
                    *i += 1;
                    return Some(rows);
                }
                if src.get(*i + 1) == Some(&q) && src.get(*i + 2) == Some(&q) {
                    *i += 3;
                    return Some(rows);
                }
            }
            _ => {}
        }
        *i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str =
        "    x = compute(1, 2, 3)\n    y = [x, x, x, x, x, x, x, x, x, x]\n    return y\n";

    #[test]
    fn a_function_body_becomes_a_zero_and_its_newlines_with_its_real_end_kept() {
        let src = format!(
            "import os\n\ndef f(a,\n      b):\n{BODY}\nclass C:\n    def m(self):\n{}\nx = 1\n",
            BODY.replace("    ", "        ")
        );
        let b = blank(&src).unwrap();
        // Shorter, with every line where it was.
        assert!(b.text.len() < src.len());
        assert_eq!(b.text.lines().count(), src.lines().count());
        let lines: Vec<&str> = b.text.lines().map(str::trim_end).collect();
        assert_eq!(lines[4], "    0");
        assert!(lines[5].trim().is_empty() && lines[6].trim().is_empty());
        assert_eq!(lines[9], "    def m(self):");
        assert_eq!(lines[10], "        0");
        assert_eq!(lines[14], "x = 1");
        // f's body is rows 4..=6; m's rows 10..=12.
        assert_eq!(b.ends.get(&4), Some(&6));
        assert_eq!(b.ends.get(&10), Some(&12));
    }

    #[test]
    fn strings_comments_brackets_and_continuations_do_not_end_a_body_early() {
        let src = "def f():\n    s = \"\"\"\ndef not_a_def():\nclass Nope:\n\"\"\"\n    t = ('x',\n# not a comment line of the module\n1)\n    u = 1 + \\\n2\n    v = 'it''s' \"#\" # def x():\n    return s\ndef g(): pass\n";
        let b = blank(src).unwrap();
        let lines: Vec<&str> = b.text.lines().map(str::trim_end).collect();
        assert_eq!(lines[1], "    0");
        assert!(
            lines[2..12].iter().all(|l| l.trim().is_empty()),
            "{:?}",
            b.text
        );
        assert_eq!(lines[12], "def g(): pass");
        assert_eq!(b.ends.get(&1), Some(&11));
    }

    #[test]
    fn one_line_functions_short_bodies_and_unsure_scans_are_left_alone() {
        assert!(blank("def f(): return 1\n").is_none());
        assert!(blank("def f():\n    return 1\n").is_none());
        let long = format!("def f():\n{BODY}");
        assert!(blank(&long).is_some());
        for unsure in [
            format!("{long}s = 'unterminated\n"),
            format!("{long}s = \"\"\"never closed\n"),
            format!("{long}t = (1,\n"),
            format!("{long}t = 1)\n"),
            format!("{long}if x:\n \tpass\n"),
            format!("{long}\x0cx = 1\n"),
            format!("{long}x = 1\ry = 2\n"),
        ] {
            assert!(blank(&unsure).is_none(), "{unsure:?}");
        }
    }

    #[test]
    fn async_defs_and_non_ascii_text_are_blanked_whole_characters() {
        let src =
            format!("async  def f():\n    s = 'naïve café ünïcödé — “quotes”'\n{BODY}define = 1\n");
        let b = blank(&src).unwrap();
        assert_eq!(b.text.lines().count(), src.lines().count());
        assert!(b.text.starts_with("async  def f():\n    0"));
        assert!(b.text.ends_with("define = 1\n"));
        // `define` is not `def`, and `asyncio.run()` is not `async def`. (Bodies of compound
        // statements: simple ones would be blanked as such.)
        let compound =
            "    if x: y = compute(1, 2, 3)\n    for a in [x, x, x, x, x, x]: print(a)\n";
        assert!(blank(&format!("def f(x):\n{compound}")).is_some());
        assert!(
            blank(&format!(
                "define(x):\n{compound}asyncio.run(x):\n{compound}"
            ))
            .is_none()
        );
    }

    #[test]
    fn runs_of_simple_statements_outside_functions_are_blanked_too() {
        let src = "\"\"\"A module's docstring,\nlong enough to be worth blanking.\"\"\"\nimport os\nimport sys\n\n@decorated(with_a_long_argument_list=1, and_another_one=2, and_more=3)\nclass C(Base):\n    \"\"\"The class's docstring, long enough to be blanked as well.\"\"\"\n    x = 1\n    def m(self): return 1\n    table = {\n        'a': 1,\n        'b': 2,\n        'c': 3,\n        'd': 4,\n    }\nif TYPE_CHECKING: from typing import Any, Dict, List, Optional, Tuple, Union, Callable\nelse:\n    Any = object\n";
        let b = blank(src).unwrap();
        assert_eq!(b.text.lines().count(), src.lines().count());
        let lines: Vec<&str> = b.text.lines().collect();
        // The docstring and imports are one `0`; the decorator and the class header stay;
        // the docstring and `x = 1` are one `0`; the one-line `def` stays, and so do the
        // one-line `if` and `else:`; `table` is a `0` whose real end is remembered.
        assert_eq!(lines[0], "0");
        assert_eq!(
            lines[5],
            "@decorated(with_a_long_argument_list=1, and_another_one=2, and_more=3)"
        );
        assert_eq!(lines[6], "class C(Base):");
        assert_eq!(lines[7], "    0");
        assert_eq!(lines[9], "    def m(self): return 1");
        assert_eq!(lines[10], "    0");
        assert!(lines[16].starts_with("if TYPE_CHECKING: from typing"));
        assert_eq!(lines[17], "else:");
        assert_eq!(lines[18], "    Any = object");
        assert_eq!(b.ends.get(&10), Some(&15));
        // The class ends where the whole read ends it: on the table's `}`.
        let items = crate::outline(crate::Lang::Python, src).unwrap();
        let c = items.iter().find(|i| i.name == "C").unwrap();
        assert_eq!((c.start, c.end), (6, 16));
    }
}
