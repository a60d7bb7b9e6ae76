//! Rust outlines with `syn`.

use crate::{Item, OutlineError};
use proc_macro2::{TokenStream, TokenTree};
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
    let file = syn::parse_file(source).map_err(|e| {
        let at = e.span().start();
        OutlineError::Parse(format!("line {}: {e}", at.line))
    })?;
    let mut out = Vec::new();
    items(&file.items, 0, &mut out);
    Ok(out)
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

/// The line where an item really starts: after its attributes and doc comments.
fn start_line(tokens: TokenStream) -> Option<usize> {
    let mut iter = tokens.into_iter().peekable();
    loop {
        match iter.next()? {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                // `#[...]` or `#![...]`
                if let Some(TokenTree::Punct(bang)) = iter.peek()
                    && bang.as_char() == '!'
                {
                    iter.next();
                }
                iter.next();
            }
            other => return Some(other.span().start().line),
        }
    }
}

fn push(out: &mut Vec<Item>, node: &impl ToTokens, kind: &'static str, name: String, depth: usize) {
    let span = node.span();
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

/// Lists the items inside a macro call's tokens: the whole body if it parses as items,
/// else each `{ … }` group inside it that does (the branches of `cfg_if!`).
fn macro_items(tokens: TokenStream, depth: usize, out: &mut Vec<Item>, nesting: usize) {
    if nesting > 4 {
        return;
    }
    if let Ok(file) = syn::parse2::<syn::File>(tokens.clone())
        && !file.items.is_empty()
    {
        items(&file.items, depth, out);
        return;
    }
    for tree in tokens {
        if let TokenTree::Group(g) = tree
            && g.delimiter() == proc_macro2::Delimiter::Brace
        {
            macro_items(g.stream(), depth, out, nesting + 1);
        }
    }
}

fn items(list: &[syn::Item], depth: usize, out: &mut Vec<Item>) {
    for item in list {
        match item {
            syn::Item::Fn(f) => push(out, f, "function", f.sig.ident.to_string(), depth),
            syn::Item::Struct(s) => push(out, s, "struct", s.ident.to_string(), depth),
            syn::Item::Enum(e) => push(out, e, "enum", e.ident.to_string(), depth),
            syn::Item::Union(u) => push(out, u, "union", u.ident.to_string(), depth),
            syn::Item::Type(t) => push(out, t, "type", t.ident.to_string(), depth),
            syn::Item::Const(c) => push(out, c, "const", c.ident.to_string(), depth),
            syn::Item::Static(s) => push(out, s, "static", s.ident.to_string(), depth),
            syn::Item::Macro(m) => match &m.ident {
                Some(ident) => push(out, m, "macro", ident.to_string(), depth),
                // `cfg_if! { … }`, `s! { … }`, `lazy_static! { … }`: definitions written
                // inside a macro call are still the file's definitions.
                None => macro_items(m.mac.tokens.clone(), depth, out, 0),
            },
            syn::Item::ForeignMod(fm) => {
                for fi in &fm.items {
                    match fi {
                        syn::ForeignItem::Fn(f) => {
                            push(out, f, "function", f.sig.ident.to_string(), depth);
                        }
                        syn::ForeignItem::Static(s) => {
                            push(out, s, "static", s.ident.to_string(), depth);
                        }
                        syn::ForeignItem::Type(t) => {
                            push(out, t, "type", t.ident.to_string(), depth);
                        }
                        _ => {}
                    }
                }
            }
            syn::Item::Trait(t) => {
                push(out, t, "trait", t.ident.to_string(), depth);
                for ti in &t.items {
                    if let syn::TraitItem::Fn(f) = ti {
                        push(out, f, "method", f.sig.ident.to_string(), depth + 1);
                    }
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
                push(out, i, "impl", name, depth);
                for ii in &i.items {
                    if let syn::ImplItem::Fn(f) = ii {
                        push(out, f, "method", f.sig.ident.to_string(), depth + 1);
                    }
                }
            }
            syn::Item::Mod(m) => {
                push(out, m, "module", m.ident.to_string(), depth);
                if let Some((_, inner)) = &m.content {
                    items(inner, depth + 1, out);
                }
            }
            _ => {}
        }
    }
}
