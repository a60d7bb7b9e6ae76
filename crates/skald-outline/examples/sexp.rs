//! Prints a file's tree-sitter tree with field names and line numbers: the tool for
//! writing outline rules. `cargo run -p skald-outline --example sexp -- FILE [DEPTH]`;
//! `ALL=1` also shows anonymous tokens.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a developer tool

use tree_sitter::Node;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: sexp FILE [DEPTH]");
    let max_depth: usize = args
        .next()
        .map_or(8, |d| d.parse().expect("DEPTH is a number"));
    let lang = skald_outline::Lang::from_path(std::path::Path::new(&path)).expect("unsupported");
    let grammar = lang
        .grammar()
        .expect("Rust is outlined with syn, not tree-sitter");
    let src = std::fs::read_to_string(&path).unwrap();
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&grammar).unwrap();
    let tree = parser.parse(&src, None).unwrap();
    let all = std::env::var_os("ALL").is_some();
    print(tree.root_node(), &src, 0, max_depth, None, all);
}

fn print(n: Node<'_>, src: &str, depth: usize, max: usize, field: Option<&str>, all: bool) {
    if depth > max {
        return;
    }
    let text: String = src[n.byte_range()]
        .chars()
        .take(30)
        .collect::<String>()
        .replace('\n', "⏎");
    println!(
        "{}{}{}{} [{}] {text:?}",
        "  ".repeat(depth),
        field.map(|f| format!("{f}: ")).unwrap_or_default(),
        if n.is_named() { "" } else { "'" },
        n.kind(),
        n.start_position().row + 1,
    );
    let mut cursor = n.walk();
    for (i, child) in n.children(&mut cursor).enumerate() {
        if all || child.is_named() {
            let field = u32::try_from(i)
                .ok()
                .and_then(|i| n.field_name_for_child(i));
            print(child, src, depth + 1, max, field, all);
        }
    }
}
