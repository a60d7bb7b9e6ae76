//! Rust outlines with `syn`, reading only what an outline shows.
//!
//! `syn::parse_file` parses every expression of every function body, and asking a parsed
//! item for its span turns the item back into tokens: on the cargo registry that was four
//! fifths of an outline's time, for bodies the outline never shows. So the file is only
//! lexed (proc-macro2's lexer, the one syn uses), split into items at the token-tree level
//! — an item ends at a `;` or, for the kinds that have one, at its `{ … }` body — and syn
//! parses each item with the body of a function, impl, trait or module left empty. Impl,
//! trait and module bodies are then split the same way. Line ranges come from the first
//! and last token of each item, so nothing is turned back into tokens.

use crate::{Item, OutlineError};
use proc_macro2::{Delimiter, Group, Spacing, Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::spanned::Spanned;

/// Bracket nesting beyond which syn's recursive descent could exhaust a thread's stack.
const MAX_BRACKET_DEPTH: usize = 256;

pub(crate) fn outline(source: &str) -> Result<Vec<Item>, OutlineError> {
    if let Some(line) = too_deep(source) {
        return Err(OutlineError::Parse(format!(
            "line {line}: brackets nest more than {MAX_BRACKET_DEPTH} deep"
        )));
    }
    let result = source_text(source)
        .parse::<TokenStream>()
        .map_err(|e| OutlineError::Parse(format!("line {}: {e}", e.span().start().line)))
        .and_then(|tokens| {
            let mut out = Vec::new();
            level(tokens, Mode::Items, 0, &mut out)?;
            Ok(out)
        });
    // proc-macro2 keeps the text of every file lexed on a thread, for span lookups, until
    // told otherwise: without this, outlining a large tree would hold all of it in memory.
    // Every span of this file has been read by now.
    proc_macro2::extra::invalidate_current_thread_spans();
    result
}

/// The source without a byte-order mark or a `#!` interpreter line (which is not Rust),
/// keeping its newline so that lines keep their numbers — as `syn::parse_file` does.
fn source_text(source: &str) -> &str {
    let text = source.strip_prefix('\u{feff}').unwrap_or(source);
    match text.strip_prefix("#!") {
        Some(rest) if !rest.trim_start().starts_with('[') => {
            text.find('\n').map_or("", |i| &text[i..])
        }
        _ => text,
    }
}

/// The line where bracket nesting first exceeds the limit, if it does. Brackets in strings
/// and comments are counted too: that only makes the check stricter.
fn too_deep(source: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut line = 1;
    for b in source.bytes() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_BRACKET_DEPTH {
                    return Some(line);
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'\n' => line += 1,
            _ => {}
        }
    }
    None
}

/// What a run of items sits in, which decides how syn reads each of them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A file, a module's body or a macro call's body.
    Items,
    /// An `impl` block's body.
    Impl,
    /// A trait's body.
    Trait,
}

/// What an item is, read from its first keywords.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Fn,
    /// `struct`, `enum`, `union`.
    Adt,
    Trait,
    Impl,
    Mod,
    /// `extern { … }` and `extern "C" { … }`.
    ForeignMod,
    /// `const`, `static` and `type` items: named from their tokens, their (possibly
    /// huge) initialisers left unparsed.
    Value(&'static str),
    /// `use`, `extern crate`: end at their `;`.
    Semi,
    /// A macro call or `macro_rules!` definition.
    Macro,
    /// Anything else: syn says what is wrong with it.
    Other,
}

impl Kind {
    /// Whether a `{ … }` group (outside angle brackets) ends the item.
    fn ends_at_brace(self) -> bool {
        !matches!(self, Kind::Value(_) | Kind::Semi)
    }

    /// Whether the body of this kind is replaced by `{}` before syn reads the item.
    fn body_skipped(self) -> bool {
        matches!(self, Kind::Fn | Kind::Trait | Kind::Impl | Kind::Mod)
    }
}

fn ident_is(t: Option<&TokenTree>, word: &str) -> bool {
    matches!(t, Some(TokenTree::Ident(i)) if i == word)
}

fn punct_is(t: Option<&TokenTree>, c: char) -> bool {
    matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == c)
}

/// The kind of the item starting at `tokens[0]` (after its attributes), and the index of
/// its name when the kind is `Value`.
fn kind(tokens: &[TokenTree]) -> (Kind, usize) {
    let mut i = 0;
    if ident_is(tokens.first(), "pub") {
        i = 1;
        if matches!(tokens.get(1), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis)
        {
            i = 2;
        }
    }
    loop {
        let Some(TokenTree::Ident(word)) = tokens.get(i) else {
            return (Kind::Other, 0);
        };
        let next = tokens.get(i + 1);
        match word.to_string().as_str() {
            "fn" => return (Kind::Fn, 0),
            "struct" | "enum" | "union" if matches!(next, Some(TokenTree::Ident(_))) => {
                return (Kind::Adt, 0);
            }
            "trait" => return (Kind::Trait, 0),
            "impl" => return (Kind::Impl, 0),
            "mod" => return (Kind::Mod, 0),
            "type" => return (Kind::Value("type"), i + 1),
            "use" => return (Kind::Semi, 0),
            "macro_rules" if punct_is(next, '!') => return (Kind::Macro, 0),
            "const" if !matches!(next, Some(TokenTree::Ident(n)) if n == "fn" || n == "unsafe" || n == "async" || n == "extern") =>
            {
                return (Kind::Value("const"), i + 1);
            }
            "static" => {
                let name = if ident_is(next, "mut") { i + 2 } else { i + 1 };
                return (Kind::Value("static"), name);
            }
            "extern" => {
                if ident_is(next, "crate") {
                    return (Kind::Semi, 0);
                }
                let after = if matches!(next, Some(TokenTree::Literal(_))) {
                    i + 2
                } else {
                    i + 1
                };
                if matches!(tokens.get(after), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace)
                {
                    return (Kind::ForeignMod, 0);
                }
                i = after;
            }
            "default" | "const" | "async" | "unsafe" | "safe" | "auto" => i += 1,
            _ => {
                // A macro call: a path, then `!`.
                let mut j = i + 1;
                while punct_is(tokens.get(j), ':')
                    && matches!(tokens.get(j + 2), Some(TokenTree::Ident(_)))
                {
                    j += 3;
                }
                return if punct_is(tokens.get(j), '!') {
                    (Kind::Macro, 0)
                } else {
                    (Kind::Other, 0)
                };
            }
        }
    }
}

/// Where the item starting at `tokens[0]` ends (exclusive), or `None` if the tokens run out
/// first. Angle brackets are counted so that a const generic argument's `{ N }` is not
/// taken for a body; the `>` of `->` does not close one.
fn item_end(tokens: &[TokenTree], kind: Kind) -> Option<usize> {
    let mut angle = 0usize;
    let mut joint_minus = false;
    for (j, t) in tokens.iter().enumerate() {
        let mut minus = false;
        match t {
            TokenTree::Punct(p) => match p.as_char() {
                ';' => return Some(j + 1),
                '<' if kind.ends_at_brace() => angle += 1,
                '>' if kind.ends_at_brace() && !joint_minus => angle = angle.saturating_sub(1),
                '-' => minus = p.spacing() == Spacing::Joint,
                _ => {}
            },
            TokenTree::Group(g)
                if g.delimiter() == Delimiter::Brace && angle == 0 && kind.ends_at_brace() =>
            {
                return Some(j + 1);
            }
            _ => {}
        }
        joint_minus = minus;
    }
    None
}

/// The index of the first token after the attributes (`#[…]`, `#![…]`, doc comments)
/// starting at `i`.
fn skip_attrs(tokens: &[TokenTree], mut i: usize) -> usize {
    while punct_is(tokens.get(i), '#') {
        let bracket = |k: usize| matches!(tokens.get(k), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket);
        if punct_is(tokens.get(i + 1), '!') && bracket(i + 2) {
            i += 3;
        } else if bracket(i + 1) {
            i += 2;
        } else {
            break;
        }
    }
    i
}

fn syn_error(e: &syn::Error) -> OutlineError {
    OutlineError::Parse(format!("line {}: {e}", e.span().start().line))
}

/// Outlines the items of `stream`, read as `mode` says, at `depth`. Returns how many items
/// it read (whether or not the outline lists them).
fn level(
    stream: TokenStream,
    mode: Mode,
    depth: usize,
    out: &mut Vec<Item>,
) -> Result<usize, OutlineError> {
    let tokens: Vec<TokenTree> = stream.into_iter().collect();
    let mut count = 0;
    let mut i = 0;
    loop {
        i = skip_attrs(&tokens, i);
        let rest = &tokens[i.min(tokens.len())..];
        let Some(first) = rest.first() else {
            return Ok(count);
        };
        if punct_is(Some(first), ';') {
            i += 1;
            continue;
        }
        let (kind, name_at) = kind(rest);
        let end = item_end(rest, kind).ok_or_else(|| {
            OutlineError::Parse(format!(
                "line {}: this item does not end: expected `;` or a `{{ … }}` body",
                first.span().start().line
            ))
        })?;
        item(&rest[..end], kind, name_at, mode, depth, out)?;
        count += 1;
        i += end;
    }
}

/// The lines an item spans, from its first token after the attributes to its last.
#[derive(Clone, Copy)]
struct Lines {
    start: usize,
    end: usize,
}

impl Lines {
    fn push(self, out: &mut Vec<Item>, kind: &'static str, name: String, depth: usize) {
        out.push(Item {
            start: self.start,
            end: self.end,
            kind,
            name,
            depth,
        });
    }
}

/// Outlines one item: `tokens` from its first token after the attributes to its last.
fn item(
    tokens: &[TokenTree],
    kind: Kind,
    name_at: usize,
    mode: Mode,
    depth: usize,
    out: &mut Vec<Item>,
) -> Result<(), OutlineError> {
    let (Some(first), Some(last)) = (tokens.first(), tokens.last()) else {
        return Ok(());
    };
    let lines = Lines {
        start: first.span().start().line,
        end: last.span().end().line,
    };
    let push = |out: &mut Vec<Item>, kind, name, depth| lines.push(out, kind, name, depth);
    if let Kind::Value(word) = kind {
        if mode != Mode::Items {
            return Ok(());
        }
        // What syn would check first: a name, then a type (`const`, `static`) or generics,
        // bounds or the aliased type (`type`). A macro's `const A = 1;` is not an item.
        let after = tokens.get(name_at + 1);
        let well_formed = match tokens.get(name_at) {
            Some(TokenTree::Ident(_)) if word == "type" => {
                ident_is(after, "where") || [';', '=', '<', ':'].iter().any(|&c| punct_is(after, c))
            }
            Some(TokenTree::Ident(_)) => punct_is(after, ':'),
            _ => false,
        };
        return match (well_formed, tokens.get(name_at)) {
            (true, Some(name)) => {
                push(out, word, name.to_string(), depth);
                Ok(())
            }
            _ => Err(OutlineError::Parse(format!(
                "line {}: expected a name and a type after `{word}`",
                lines.start
            ))),
        };
    }
    if kind == Kind::Semi {
        return Ok(());
    }
    let body = match (kind.body_skipped(), last) {
        (true, TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => Some(g),
        _ => None,
    };
    let stream: TokenStream = match body {
        Some(g) => {
            let mut empty = Group::new(Delimiter::Brace, TokenStream::new());
            empty.set_span(g.span());
            tokens[..tokens.len() - 1]
                .iter()
                .cloned()
                .chain(std::iter::once(TokenTree::Group(empty)))
                .collect()
        }
        None => tokens.iter().cloned().collect(),
    };
    let inner = body.map(Group::stream);
    match mode {
        Mode::Items => {
            let parsed: syn::Item = syn::parse2(stream).map_err(|e| syn_error(&e))?;
            file_item(&parsed, inner, depth, out, lines)
        }
        Mode::Impl => {
            if let syn::ImplItem::Fn(f) = syn::parse2(stream).map_err(|e| syn_error(&e))? {
                push(out, "method", f.sig.ident.to_string(), depth);
            }
            Ok(())
        }
        Mode::Trait => {
            if let syn::TraitItem::Fn(f) = syn::parse2(stream).map_err(|e| syn_error(&e))? {
                push(out, "method", f.sig.ident.to_string(), depth);
            }
            Ok(())
        }
    }
}

/// Outlines an item of a file, module or macro body; `inner` is the body syn was not shown.
fn file_item(
    parsed: &syn::Item,
    inner: Option<TokenStream>,
    depth: usize,
    out: &mut Vec<Item>,
    lines: Lines,
) -> Result<(), OutlineError> {
    let push = |out: &mut Vec<Item>, kind, name, depth| lines.push(out, kind, name, depth);
    match parsed {
        syn::Item::Fn(f) => push(out, "function", f.sig.ident.to_string(), depth),
        syn::Item::Struct(s) => push(out, "struct", s.ident.to_string(), depth),
        syn::Item::Enum(e) => push(out, "enum", e.ident.to_string(), depth),
        syn::Item::Union(u) => push(out, "union", u.ident.to_string(), depth),
        syn::Item::Type(t) => push(out, "type", t.ident.to_string(), depth),
        syn::Item::Macro(m) => match &m.ident {
            Some(ident) => push(out, "macro", ident.to_string(), depth),
            // `cfg_if! { … }`, `s! { … }`, `lazy_static! { … }`: definitions written
            // inside a macro call are still the file's definitions.
            None => macro_items(m.mac.tokens.clone(), depth, out, 0),
        },
        syn::Item::ForeignMod(fm) => {
            for fi in &fm.items {
                match fi {
                    syn::ForeignItem::Fn(f) => {
                        push_spanned(out, f, "function", f.sig.ident.to_string(), depth);
                    }
                    syn::ForeignItem::Static(s) => {
                        push_spanned(out, s, "static", s.ident.to_string(), depth);
                    }
                    syn::ForeignItem::Type(t) => {
                        push_spanned(out, t, "type", t.ident.to_string(), depth);
                    }
                    _ => {}
                }
            }
        }
        syn::Item::Trait(t) => {
            push(out, "trait", t.ident.to_string(), depth);
            if let Some(body) = inner {
                level(body, Mode::Trait, depth + 1, out)?;
            }
        }
        syn::Item::Impl(i) => {
            let ty = type_name(&i.self_ty);
            let name = match &i.trait_ {
                Some((bang, path, _)) => format!(
                    "{}{} for {ty}",
                    if bang.is_some() { "!" } else { "" },
                    type_name(&syn::Type::Path(syn::TypePath {
                        qself: None,
                        path: path.clone()
                    }))
                ),
                None => ty,
            };
            push(out, "impl", name, depth);
            if let Some(body) = inner {
                level(body, Mode::Impl, depth + 1, out)?;
            }
        }
        syn::Item::Mod(m) => {
            push(out, "module", m.ident.to_string(), depth);
            if let Some(body) = inner {
                level(body, Mode::Items, depth + 1, out)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// The line where an item really starts: after its attributes and doc comments.
fn start_line(tokens: TokenStream) -> Option<usize> {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    tokens
        .get(skip_attrs(&tokens, 0))
        .map(|t| t.span().start().line)
}

/// Pushes an item syn parsed whole (a declaration in an `extern` block: small), finding its
/// lines from its tokens.
fn push_spanned(
    out: &mut Vec<Item>,
    node: &impl ToTokens,
    kind: &'static str,
    name: String,
    depth: usize,
) {
    let span: Span = node.span();
    let start = start_line(node.to_token_stream()).unwrap_or(span.start().line);
    out.push(Item {
        start,
        end: span.end().line,
        kind,
        name,
        depth,
    });
}

fn type_name(ty: &syn::Type) -> String {
    ty.to_token_stream()
        .to_string()
        .replace(" < ", "<")
        .replace(" <", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
        .replace(" :: ", "::")
        .replace("& ", "&")
}

/// Lists the items inside a macro call's tokens: the whole body if it reads as items,
/// else each `{ … }` group inside it that does (the branches of `cfg_if!`).
fn macro_items(tokens: TokenStream, depth: usize, out: &mut Vec<Item>, nesting: usize) {
    if nesting > 4 {
        return;
    }
    let mut found = Vec::new();
    if let Ok(count) = level(tokens.clone(), Mode::Items, depth, &mut found)
        && count > 0
    {
        out.append(&mut found);
        return;
    }
    for tree in tokens {
        if let TokenTree::Group(g) = tree
            && g.delimiter() == Delimiter::Brace
        {
            macro_items(g.stream(), depth, out, nesting + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(src: &str) -> Vec<String> {
        outline(src)
            .unwrap()
            .iter()
            .map(|i| {
                format!(
                    "{}{}-{} {} {}",
                    "  ".repeat(i.depth),
                    i.start,
                    i.end,
                    i.kind,
                    i.name
                )
            })
            .collect()
    }

    #[test]
    fn headers_that_hold_braces_arrows_and_commas_end_at_their_body() {
        let src = "\
#!/usr/bin/env run-cargo-script
#![allow(dead_code)]
impl<const N: usize> Grid<{ N }> for Cells where [(); N]:, {
    const fn size() -> usize { N }
}
pub(crate) unsafe extern \"C\" fn callback(x: i32) -> i32 { x }
fn generic<T>() -> impl Iterator<Item = T>
where
    T: Clone,
{
    std::iter::empty()
}
unsafe extern \"C\" {
    pub fn abs(x: i32) -> i32;
}
struct Defaulted<const N: usize = { 3 }>([u8; N]);
static mut COUNTER: u32 = 0;
const TABLE: [u8; 2] = { [1, 2] };
type Pair<T> = (T, T);
";
        assert_eq!(
            lines(src),
            [
                "3-5 impl Grid<{ N }> for Cells",
                "  4-4 method size",
                "6-6 function callback",
                "7-12 function generic",
                "14-14 function abs",
                "16-16 struct Defaulted",
                "17-17 static COUNTER",
                "18-18 const TABLE",
                "19-19 type Pair",
            ]
        );
    }

    #[test]
    fn bodies_are_not_parsed_but_signatures_are() {
        // A body syn would reject (a macro's own syntax, a typo) does not hide the outline.
        assert_eq!(
            lines("\u{feff}fn ok() { let = ; }\nmod m {\n    fn inner() {}\n}\n"),
            ["1-1 function ok", "2-4 module m", "  3-3 function inner"]
        );
        let err = outline("fn ok() {}\nfn bad(x: ) -> {}\n").unwrap_err();
        assert!(err.to_string().starts_with("cannot parse: line 2"), "{err}");
        let err = outline("fn ok() {}\nstruct Unfinished\n").unwrap_err();
        assert!(err.to_string().starts_with("cannot parse: line 2"), "{err}");
    }

    #[test]
    fn each_file_frees_the_source_proc_macro2_keeps() {
        // Without clearing it, the thread's source map would keep every file's text; a
        // span of the next file would then start past the first one's bytes.
        let first = "fn a() {}\n".repeat(1000);
        outline(&first).unwrap();
        let tokens: TokenStream = "fn b() {}".parse().unwrap();
        let start = tokens.into_iter().next().unwrap().span().byte_range().start;
        proc_macro2::extra::invalidate_current_thread_spans();
        assert!(start < first.len(), "span offset {start}");
    }
}
