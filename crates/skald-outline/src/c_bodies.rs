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
//!
//! Headers have few bodies; what slows tree-sitter there is error recovery over what only
//! the preprocessor understands, so that is left out too (a header read with errors took
//! four fifths of the headers' parse time). Outside bodies and initialisers:
//!
//! - a macro after a declarator's `)`, with its arguments: a word in the implementation's
//!   reserved namespace (`__` then anything) or a macro's name by convention (capitals,
//!   digits, `_`): glibc's `int fclose (FILE *__stream) __nonnull ((1));`, `__THROW __wur`,
//!   GLib's `G_GNUC_CONST`;
//! - at the start of a declaration, such a macro before two or more words and a `(` on its
//!   line (`GDK_AVAILABLE_IN_ALL GType gdk_x_get_type (void);`), or alone on its line before
//!   a declaration, a directive or a `}` (`G_BEGIN_DECLS`, `__END_DECLS`,
//!   `GLIB_AVAILABLE_IN_ALL`) — not one before a single word and `(`, a return type on a
//!   line of its own;
//! - a macro called alone on its lines without a `;` (`G_DEFINE_AUTOPTR_CLEANUP_FUNC (A,
//!   a_free)`), unless a body follows;
//! - `extern "C" {` and its `}`, which a C header has only under `#ifdef __cplusplus`;
//! - a calling convention between a function's type and its name (`void APIENTRY glFoo
//!   (…)`, `VkResult VKAPI_CALL vkFoo(…)`), or at the start of a function pointer's
//!   declarator (`typedef void (APIENTRYP PFNGLFOOPROC) (…)`): OpenGL's and Vulkan's
//!   generated headers have one on every line;
//! - in C++ classes: a macro before a constructor (`VULKAN_HPP_CONSTEXPR Foo( … )`), a
//!   namespace's attribute macro (`namespace std _GLIBCXX_VISIBILITY(default) {`) and `= {}`
//!   default arguments, which tree-sitter-cpp cannot read.
//!
//! A word followed by `::` is a namespace or a class: never left out.
//!
//! Each leaves every definition where it was (lines are kept); the outline benchmark's
//! coverage of ctags' definitions over `/usr/include` was the same with and without them.

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
    /// Past a parenthesised group starting at `(`, counting rows; false (and nothing
    /// moved) if it does not close before a `;`, a brace or the end.
    fn skip_group(&mut self) -> bool {
        let saved = (self.i, self.row, self.line_start);
        let mut depth = 0usize;
        while self.i < self.src.len() {
            match self.src[self.i] {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        self.i += 1;
                        return true;
                    }
                }
                b'\n' => self.newline(self.i),
                b';' | b'{' | b'}' | b'"' | b'\'' => break,
                _ => {}
            }
            self.i += 1;
        }
        (self.i, self.row, self.line_start) = saved;
        false
    }

    /// Whether what follows the next newline begins a declaration of at least two words
    /// before its `(` (`GType gdk_x_get_type (void)`, `typedef struct …`), a directive, a
    /// closing brace or nothing: a macro alone on the line before it is an annotation. A
    /// single word and then `(` (`foo (void)`) makes the macro a return type on a line of
    /// its own, which stays — but not `in_braces`, a class's body (C's structs hold no
    /// functions), where that is a constructor (`VULKAN_HPP_CONSTEXPR` alone on the line
    /// before `AabbPositionsKHR( … )`).
    fn declaration_follows(&self, in_braces: bool) -> bool {
        let rest = &self.src[self.i..];
        let mut j = rest
            .iter()
            .position(|b| *b == b'\n')
            .map_or(rest.len(), |n| n + 1);
        let mut words = 0;
        loop {
            while j < rest.len() && rest[j].is_ascii_whitespace() {
                j += 1;
            }
            match rest.get(j) {
                // Another macro alone on its line (`__END_DECLS`) may come first.
                None | Some(b'#' | b'}') => return true,
                Some(b'(') => return words >= 2 || (in_braces && words == 1),
                Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
                    words += 1;
                    while j < rest.len() && (rest[j].is_ascii_alphanumeric() || rest[j] == b'_') {
                        j += 1;
                    }
                    if words >= 2 {
                        return true;
                    }
                }
                Some(b'*' | b'&' | b':' | b'<' | b'>' | b',') => j += 1,
                Some(_) => return false,
            }
        }
    }

    /// Whether, on this line, at least `n` words (and `*`, `&`, `::`) come before a `(`:
    /// what follows a macro in front of a declaration.
    fn words_then_paren(&self, n: usize) -> bool {
        self.words_before_paren().is_some_and(|words| words >= n)
    }

    /// How many words (and `*`, `&`, `::`) come before a `(` on this line; `None` when
    /// something else comes first.
    fn words_before_paren(&self) -> Option<usize> {
        let mut words = 0;
        let mut j = self.i;
        while j < self.src.len() {
            match self.src[j] {
                b' ' | b'\t' | b'*' | b'&' | b':' => j += 1,
                b'(' => return Some(words),
                c if c.is_ascii_alphabetic() || c == b'_' => {
                    words += 1;
                    j = self.word_end(j);
                }
                _ => return None,
            }
        }
        None
    }

    fn word_end(&self, mut j: usize) -> usize {
        while j < self.src.len() && (self.src[j].is_ascii_alphanumeric() || self.src[j] == b'_') {
            j += 1;
        }
        j
    }

    /// Past the spaces, tabs and bytes of `also` from `j`, on this line.
    fn skip_blanks(&self, mut j: usize, also: &[u8]) -> usize {
        while j < self.src.len()
            && (matches!(self.src[j], b' ' | b'\t') || also.contains(&self.src[j]))
        {
            j += 1;
        }
        j
    }

    /// Just past `= {}` (spaces allowed) when a `,` or a `)` follows it: at `=`.
    fn empty_braces_then_separator(&self) -> Option<usize> {
        let open = self.skip_blanks(self.i + 1, b"");
        if self.src.get(open) != Some(&b'{') {
            return None;
        }
        let close = self.skip_blanks(open + 1, b"");
        if self.src.get(close) != Some(&b'}') {
            return None;
        }
        let past = close + 1;
        matches!(self.src.get(self.skip_blanks(past, b"")), Some(b',' | b')')).then_some(past)
    }

    /// Whether `::` follows (spaces between): the word is a namespace or a class, not a
    /// macro.
    fn scope_follows(&self) -> bool {
        self.src[self.skip_blanks(self.i, b"")..].starts_with(b"::")
    }

    /// Whether the rest of a function pointer's declarator follows, up to its parameters:
    /// `*`s, its name, `)` and `(` (`PFNGLFOOPROC) (`, `*PFN_vkFoo)(`).
    fn pointer_declarator_follows(&self) -> bool {
        let src = self.src;
        let j = self.skip_blanks(self.i, b"*");
        if !src
            .get(j)
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        {
            return false;
        }
        let j = self.skip_blanks(self.word_end(j), b"");
        if src.get(j) != Some(&b')') {
            return false;
        }
        src.get(self.skip_blanks(j + 1, b"")) == Some(&b'(')
    }

    /// Whether the next significant character after this line is a `{`.
    fn body_follows(&self) -> bool {
        self.src[self.i..]
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|b| *b == b'{')
    }

    /// Just past the `{` of `extern "C" {` or `extern "C++" {` when that follows (after
    /// `extern`), with spaces or newlines between.
    fn linkage_block(&self) -> Option<usize> {
        let rest = &self.src[self.i..];
        let skip = |from: usize| {
            from + rest[from..]
                .iter()
                .take_while(|b| b.is_ascii_whitespace())
                .count()
        };
        let j = skip(0);
        let after = [&b"\"C\""[..], &b"\"C++\""[..]]
            .iter()
            .find(|lit| rest[j..].starts_with(lit))
            .map(|lit| skip(j + lit.len()))?;
        (rest.get(after) == Some(&b'{')).then_some(self.i + after + 1)
    }

    /// Whether only spaces (or the end) follow on this line.
    fn rest_of_line_blank(&self) -> bool {
        self.src[self.i..]
            .iter()
            .take_while(|b| **b != b'\n')
            .all(|b| matches!(b, b' ' | b'\t' | b'\r'))
    }

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
    // Inside an initialiser (after `=`, up to the end of the declaration), where a `)`
    // closes an expression, not a declarator.
    let mut in_init = false;
    // The depths at which `extern "C" {` blocks left out close.
    let mut linkage: Vec<usize> = Vec::new();
    // The first byte of the last token read (`;` at the start).
    let mut last = b';';
    // Parentheses open in the declaration being read (a parameter list's).
    let mut parens = 0usize;
    // The last word read (kept when `last` is its first byte).
    let mut last_word: &[u8] = b"";
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
                // What follows a directive starts a declaration, as after `;`.
                last = b';';
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
        let began_line = line_blank;
        line_blank = false;
        // Whether this token starts a declaration; the token is remembered by its first
        // byte, which tells a `;` or a brace from the rest.
        let (before, decl_start) = (last, matches!(last, b';' | b'{' | b'}'));
        last = c;
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
            c if is_word_start(c) => {
                let start = s.i;
                while s.i < src.len()
                    && (src[s.i].is_ascii_alphanumeric()
                        || matches!(src[s.i], b'_' | b'$')
                        || src[s.i] >= 0x80)
                {
                    s.i += 1;
                }
                let word = &src[start..s.i];
                if word == b"extern"
                    && decl_start
                    && open.is_none()
                    && let Some(past) = s.linkage_block()
                {
                    // `extern "C" {`, whose `}` a C header has only under `#ifdef
                    // __cplusplus` and which the C grammar cannot read: left out with its
                    // `}`, the declarations inside read as they are.
                    let start_at = (start, s.point(start));
                    while s.i < past {
                        if src[s.i] == b'\n' {
                            s.newline(s.i);
                        }
                        s.i += 1;
                    }
                    leave_out(&mut ranges, &mut from, start_at, (s.i, s.point(s.i)));
                    linkage.push(depth);
                    last = b'{';
                    continue;
                }
                let reserved = word.len() > 2 && word.starts_with(b"__");
                let macro_like = reserved || is_macro_name(word);
                if macro_like && open.is_none() && !in_init {
                    let start_at = (start, s.point(start));
                    // Spaces before a `(` of the macro's arguments.
                    let spaces = src[s.i..]
                        .iter()
                        .take_while(|b| matches!(b, b' ' | b'\t'))
                        .count();
                    if after_paren {
                        // An attribute macro: left out with its arguments, and the
                        // declarator still just closed (another may follow, or a body).
                        if s.byte(s.i + spaces) == b'(' {
                            let here = s.i;
                            s.i += spaces;
                            if !s.skip_group() {
                                s.i = here;
                            }
                        }
                        leave_out(&mut ranges, &mut from, start_at, (s.i, s.point(s.i)));
                        last = before;
                        continue;
                    }
                    if in_scope_decl && !reserved && is_word_start(before) {
                        // An attribute of a namespace or a class before its `{`: `namespace
                        // std _GLIBCXX_VISIBILITY(default) {`.
                        let here = (s.i, s.row, s.line_start);
                        s.i += spaces;
                        if s.byte(s.i) == b'(' && s.skip_group() && s.body_follows() {
                            leave_out(&mut ranges, &mut from, start_at, (s.i, s.point(s.i)));
                            last = before;
                            continue;
                        }
                        (s.i, s.row, s.line_start) = here;
                    }
                    if decl_start
                        && !s.scope_follows()
                        && (s.words_then_paren(2)
                            || (depth > 0 && !reserved && s.words_before_paren() == Some(1)))
                    {
                        // Before a declaration on its line: `GDK_AVAILABLE_IN_ALL GType
                        // gdk_x_get_type (void);`, `OSSL_DEPRECATEDIN_3_0 __owur int f (…);`;
                        // in a class, before a constructor: `VULKAN_HPP_CONSTEXPR Foo( … )`.
                        leave_out(&mut ranges, &mut from, start_at, (s.i, s.point(s.i)));
                        last = before;
                        continue;
                    }
                    if !decl_start
                        && !reserved
                        && (before == b'*'
                            || (is_word_start(before) && !TYPE_PREFIXES.contains(&last_word)))
                        && !s.scope_follows()
                        && s.words_before_paren() == Some(1)
                    {
                        // A calling convention between a function's type and its name:
                        // `void APIENTRY glFoo (…)`, `VkResult VKAPI_CALL vkFoo(…)`, `void
                        // *APIENTRY glMapBuffer (…)`.
                        leave_out(&mut ranges, &mut from, start_at, (s.i, s.point(s.i)));
                        last = before;
                        continue;
                    }
                    if !reserved && before == b'(' && s.pointer_declarator_follows() {
                        // One in a function pointer's declarator: `typedef void (APIENTRYP
                        // PFNGLFOOPROC) (…)`, `typedef void (VKAPI_PTR *PFN_vkFoo)(…)`.
                        leave_out(&mut ranges, &mut from, start_at, (s.i, s.point(s.i)));
                        last = before;
                        continue;
                    }
                    if began_line && decl_start && !reserved && s.byte(s.i + spaces) == b'(' {
                        // A macro called alone on its lines, without a `;`:
                        // `G_DEFINE_AUTOPTR_CLEANUP_FUNC (GtkWidget, g_object_unref)`.
                        // Not one followed by a body (gtest's `TEST(a, b) {`).
                        let here = (s.i, s.row, s.line_start);
                        s.i += spaces;
                        if s.skip_group() && s.rest_of_line_blank() && !s.body_follows() {
                            leave_out(&mut ranges, &mut from, start_at, (s.i, s.point(s.i)));
                            line_blank = true;
                            last = before;
                            continue;
                        }
                        (s.i, s.row, s.line_start) = here;
                    }
                    if began_line
                        && decl_start
                        && s.rest_of_line_blank()
                        && (reserved || s.declaration_follows(depth > 0))
                    {
                        // Alone on its line before a declaration: `G_BEGIN_DECLS`,
                        // `__END_DECLS`, `GLIB_AVAILABLE_IN_ALL`.
                        leave_out(&mut ranges, &mut from, start_at, (s.i, s.point(s.i)));
                        line_blank = true;
                        last = before;
                        continue;
                    }
                }
                last_word = word;
                // `R"(…)"` and `u8R"(…)"` are strings, taken by the next round.
                if s.byte(s.i) != b'"' {
                    after_paren = after_paren && QUALIFIERS.contains(&word);
                    after_eq = false;
                }
                in_scope_decl |= SCOPES.contains(&word);
            }
            b'(' => {
                parens += 1;
                after_paren = false;
                after_eq = false;
                s.i += 1;
            }
            b')' => {
                parens = parens.saturating_sub(1);
                after_paren = true;
                after_eq = false;
                s.i += 1;
            }
            // Before an initialiser: the large tables of generated code (tree-sitter's
            // own parser.c is mostly one), whose inside an outline does not show either.
            // `operator=`, `operator==`, `operator+=`…: a name, not an initialiser.
            b'=' if last_word == b"operator"
                && (is_word_start(before) || b"=!<>+-*/%^&|".contains(&before)) =>
            {
                s.i += 1;
            }
            // A default argument `= {}`, which tree-sitter-cpp cannot read (it takes only an
            // expression there): left out, the parameter stays.
            b'=' if parens > 0
                && let Some(past) = s.empty_braces_then_separator() =>
            {
                let start_at = (s.i, s.point(s.i));
                s.i = past;
                leave_out(&mut ranges, &mut from, start_at, (s.i, s.point(s.i)));
                last = before;
            }
            b'=' => {
                after_eq = true;
                after_paren = false;
                in_init = true;
                s.i += 1;
            }
            b'{' => {
                if open.is_none() && ((after_paren && !in_scope_decl) || after_eq) {
                    open = Some((s.i + 1, s.point(s.i + 1), depth));
                }
                depth += 1;
                parens = 0;
                (after_paren, after_eq, in_scope_decl, in_init) = (false, false, false, false);
                s.i += 1;
            }
            b'}' if open.is_none() && linkage.last() == Some(&depth) => {
                linkage.pop();
                let at = (s.i, s.point(s.i));
                s.i += 1;
                leave_out(&mut ranges, &mut from, at, (s.i, s.point(s.i)));
                (after_paren, after_eq, in_scope_decl, in_init) = (false, false, false, false);
            }
            b'}' => {
                parens = 0;
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
                (after_paren, after_eq, in_scope_decl, in_init) = (false, false, false, false);
                s.i += 1;
            }
            b';' => {
                parens = 0;
                (after_paren, after_eq, in_scope_decl, in_init) = (false, false, false, false);
                s.i += 1;
            }
            _ => {
                after_paren = false;
                after_eq = false;
                s.i += 1;
            }
        }
    }
    // Nothing left out (`from` moved on neither by a body nor by a macro): read it whole.
    if depth != 0 || open.is_some() || !linkage.is_empty() || (ranges.is_empty() && from.0 == 0) {
        return None;
    }
    ranges.push(range(from, (src.len(), s.point(src.len()))));
    Some(ranges)
}

/// `src` as tree-sitter is shown it: what `included_ranges` leaves out is replaced by its
/// newlines, or by a space where it has none, so that every line keeps its number and no
/// two tokens run together. tree-sitter can be given the ranges themselves, but its lexer
/// looks for the current range from the first one at every token, which made a header with
/// thousands of bodies (Vulkan's 4.7 MB `vulkan_structs.hpp`) quadratic: half its time.
/// `None` when `included_ranges` is.
pub(crate) fn blank(src: &str) -> Option<String> {
    let ranges = included_ranges(src.as_bytes())?;
    let mut text = String::with_capacity(src.len());
    let mut at = 0;
    for r in &ranges {
        let gap = src.get(at..r.start_byte)?;
        let newlines = gap.bytes().filter(|b| *b == b'\n').count();
        if newlines > 0 {
            text.extend(std::iter::repeat_n('\n', newlines));
        } else if !gap.is_empty() {
            text.push(' ');
        }
        text.push_str(src.get(r.start_byte..r.end_byte)?);
        at = r.end_byte;
    }
    Some(text)
}

/// Words after which a capitalised word is a type, not a calling convention: `static
/// UINT32 f (void)`, `struct FOO *make (void)`, `typedef BOOL fn (int)`.
const TYPE_PREFIXES: &[&[u8]] = &[
    b"static",
    b"extern",
    b"inline",
    b"const",
    b"volatile",
    b"unsigned",
    b"signed",
    b"struct",
    b"union",
    b"enum",
    b"class",
    b"typedef",
    b"typename",
    b"register",
    b"auto",
    b"virtual",
    b"explicit",
    b"friend",
    b"constexpr",
    b"consteval",
    b"constinit",
    b"restrict",
    b"mutable",
    b"thread_local",
    b"using",
    b"template",
    b"operator",
    b"return",
];

/// The first byte of a word token.
fn is_word_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80
}

/// A preprocessor macro's name by convention: capitals, digits and underscores, at least
/// three, with a letter (`G_GNUC_CONST`, `GDK_AVAILABLE_IN_ALL`, `XMLPUBFUN`).
fn is_macro_name(word: &[u8]) -> bool {
    word.len() >= 3
        && word.iter().any(u8::is_ascii_uppercase)
        && word
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
}

/// Leaves `start..end` out: what was shown since `from` ends at `start`, and what is shown
/// next begins at `end`.
fn leave_out(
    ranges: &mut Vec<Range>,
    from: &mut (usize, Point),
    start: (usize, Point),
    end: (usize, Point),
) {
    if start.0 > from.0 {
        ranges.push(range(*from, start));
    }
    *from = end;
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
            // The namespace's attribute macro is left out too.
            "namespace std \n{\nstruct alignas(16) S {\n  void m() {}\n};\n}\nconst char *s = \"a\\\nb\";\nint f(void) {}\n"
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
    fn reserved_attribute_macros_after_a_declarator_are_left_out() {
        let src = "__BEGIN_DECLS\nextern int fclose (FILE *__stream) __nonnull ((1));\nextern FILE *tmpfile (void) __wur __attr_dealloc_fclose;\nextern void *malloc (size_t __size) __THROW __attribute_malloc__\n     __attribute_alloc_size__ ((1)) __wur;\n__END_DECLS\n";
        let out = shown(src);
        assert_eq!(
            out,
            "\nextern int fclose (FILE *__stream) ;\nextern FILE *tmpfile (void)  ;\nextern void *malloc (size_t __size)  \n      ;\n\n",
            "{out:?}"
        );
        // Lines stay in step: what follows the macros is where it was.
        let r = included_ranges(src.as_bytes()).unwrap();
        for range in &r {
            let before = &src[..range.start_byte];
            assert_eq!(range.start_point.row, before.matches('\n').count());
        }
    }

    #[test]
    fn extern_c_blocks_are_left_out_with_their_closing_brace() {
        let src = "#ifdef __cplusplus\nextern \"C\" {\n#endif\nint f(void);\nstruct s { int a; };\n#ifdef __cplusplus\n}\n#endif\nextern \"C\" int g(void);\nextern int h;\n";
        assert_eq!(
            shown(src),
            "#ifdef __cplusplus\n\n#endif\nint f(void);\nstruct s { int a; };\n#ifdef __cplusplus\n\n#endif\nextern \"C\" int g(void);\nextern int h;\n"
        );
        // One whose brace never closes leaves the file whole.
        assert!(included_ranges(b"extern \"C\" {\nint f(void);\n").is_none());
    }

    #[test]
    fn calling_conventions_and_macros_in_front_of_declarations_are_left_out() {
        let src = "GLAPI void APIENTRY glDrawRangeElements (GLenum mode, GLuint start);\n\
                   GLAPI void *APIENTRY glMapBuffer (GLenum target);\n\
                   typedef void (APIENTRYP PFNGLACTIVETEXTUREPROC) (GLenum texture);\n\
                   typedef void (VKAPI_PTR *PFN_vkFreeFunction)(void* pUserData);\n\
                   VKAPI_ATTR VkResult VKAPI_CALL vkCreateInstance(int a);\n\
                   OSSL_DEPRECATEDIN_3_0 __owur int SSL_SRP_CTX_init(SSL *s);\n";
        assert_eq!(
            shown(src),
            " void  glDrawRangeElements (GLenum mode, GLuint start);\n void * glMapBuffer (GLenum target);\n\
             typedef void ( PFNGLACTIVETEXTUREPROC) (GLenum texture);\n\
             typedef void ( *PFN_vkFreeFunction)(void* pUserData);\n VkResult  vkCreateInstance(int a);\n\
             \x20 int SSL_SRP_CTX_init(SSL *s);\n"
        );
        // Every definition reads without an error, on its own line.
        let items = crate::outline(crate::Lang::C, src).unwrap();
        let names: Vec<(&str, usize)> = items.iter().map(|i| (i.name.as_str(), i.start)).collect();
        assert!(names.contains(&("PFN_vkFreeFunction", 4)), "{names:?}");
    }

    #[test]
    fn what_tree_sitter_cpp_cannot_read_in_a_class_is_left_out() {
        // A macro before a constructor (alone on its line or not), `= {}` default
        // arguments, and the macro after `operator=`'s parameters.
        let src = "struct S\n{\n  CONSTEXPR_MACRO\n  S( float x_ = {}, int y_ = { } ) NOEXCEPT_MACRO : x( x_ ) {}\n  \
                   CONSTEXPR_MACRO S( S const & rhs ) NOEXCEPT_MACRO = default;\n  \
                   S & operator=( S const & rhs ) NOEXCEPT_MACRO = default;\n  \
                   bool operator==( S const & rhs ) const NOEXCEPT_MACRO;\n};\n";
        assert_eq!(
            shown(src),
            "struct S\n{\n  \n  S( float x_ , int y_  )  : x( x_ ) {}\n   S( S const & rhs )  = default;\n  \
             S & operator=( S const & rhs )  = default;\n  bool operator==( S const & rhs ) const ;\n};\n"
        );
        let text = blank(src).unwrap();
        let tree = {
            let mut p = tree_sitter::Parser::new();
            p.set_language(&crate::Lang::Cpp.grammar().unwrap())
                .unwrap();
            p.parse(&text, None).unwrap()
        };
        assert!(
            !tree.root_node().has_error(),
            "{}",
            tree.root_node().to_sexp()
        );
        // At file scope a capitalised word alone before `name (` is a return type: kept.
        assert!(included_ranges(b"BOOL\nfoo (void);\n").is_none());
        // A `=` that is not a default argument's `= {}` stays.
        assert!(included_ranges(b"int f(int a = 1);\nint t[] = {};\n").is_none());
    }

    #[test]
    fn capitalised_types_namespaces_and_parameters_are_kept() {
        // A type after `static`, `struct` or `typedef`; a namespace or class before `::`;
        // a parameter's type (its `(` follows the function's name, and no `(` follows).
        let src = "static UINT32 f (void);\nstruct FOO *make (void);\ntypedef BOOL fn (int);\n\
                   int LLVM::run (int a);\nNS::Type NS2::get (void);\n__gnu_cxx::__mutex& get_mutex (void);\n\
                   int g (FOO *bar);\nint h (FOO bar);\n";
        assert!(included_ranges(src.as_bytes()).is_none(), "{}", shown(src));
    }

    #[test]
    fn the_blanked_text_keeps_every_line_and_keeps_tokens_apart() {
        let long = "    x = 1; x = 2; x = 3; x = 4; x = 5;\n";
        let src = format!("int f(void) __THROW;\nint g(int a) {{\n{long}{long}}}\nint h(void);\n");
        let text = blank(&src).unwrap();
        assert_eq!(
            text,
            "int f(void)  ;\nint g(int a) {\n\n\n}\nint h(void);\n"
        );
        assert_eq!(text.lines().count(), src.lines().count());
        assert!(blank("int f(void);\n").is_none());
    }

    #[test]
    fn reserved_words_elsewhere_are_kept() {
        let long = "    x = 1; x = 2; x = 3; x = 4; x = 5;\n";
        // A parameter's name, a cast in an initialiser, a word inside a body, one not alone
        // on its line, and an attribute before a body, which is still found.
        let src = format!(
            "int f(int __a, char *__b);\nstatic int x = (int) __LINE_NO;\n__extension__ typedef long t;\nvoid g(void) __attribute__ ((__cold__)) {{\n  h() __y;\n{long}}}\n"
        );
        assert_eq!(
            shown(&src),
            "int f(int __a, char *__b);\nstatic int x = (int) __LINE_NO;\n__extension__ typedef long t;\nvoid g(void)  {}\n"
        );
        // An argument list that does not close is not taken for the macro's.
        assert_eq!(shown("int f(void) __m (1;\n"), "int f(void)  (1;\n");
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
