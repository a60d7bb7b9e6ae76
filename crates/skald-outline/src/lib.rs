//! Code outlines: the definitions of a source file — functions, types, methods under their
//! type, modules, headings — without their bodies, each with its line range. tree-sitter
//! grammars cover 20 languages; Rust goes through `syn`, the parser the Rust ecosystem
//! itself relies on, which is shown each item without its body; C and C++ function bodies
//! are hidden from tree-sitter too. Parsers are created once per thread and reused.

mod c_bodies;
mod langs;
mod py_bodies;
mod rust;
mod ts;

pub use langs::Lang;

use std::fmt::Write as _;

/// Files larger than this are not parsed. Large enough for SQLite's 13 MB amalgamation,
/// small enough that a stray data dump does not stall an outline.
pub const MAX_FILE_BYTES: usize = 32 * 1024 * 1024;

/// One definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// First line, 1-based.
    pub start: usize,
    /// Last line, 1-based, inclusive.
    pub end: usize,
    /// function, method, class, struct, enum, interface, trait, impl, module, type, macro,
    /// heading, key, table, selector, …
    pub kind: &'static str,
    pub name: String,
    /// Nesting under enclosing items: 0 at top level, 1 for a method of a type, …
    pub depth: usize,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OutlineError {
    #[error("cannot parse: {0}")]
    Parse(String),
    #[error("file too large to outline ({0} bytes; the limit is {MAX_FILE_BYTES})")]
    TooLarge(usize),
}

/// The definitions of `source`, written in `lang`, in source order.
pub fn outline(lang: Lang, source: &str) -> Result<Vec<Item>, OutlineError> {
    if source.len() > MAX_FILE_BYTES {
        return Err(OutlineError::TooLarge(source.len()));
    }
    match lang {
        Lang::Rust => rust::outline(source),
        _ => ts::outline(lang, source),
    }
}

/// `START-END | kind: name`, one a line, indented two spaces per nesting level.
pub fn format(items: &[Item]) -> String {
    let mut out = String::new();
    for it in items {
        let _ = writeln!(
            out,
            "{}{}-{} | {}: {}",
            "  ".repeat(it.depth),
            it.start,
            it.end,
            it.kind,
            it.name
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_indents_nested_items() {
        let items = vec![
            Item {
                start: 1,
                end: 9,
                kind: "class",
                name: "Foo".into(),
                depth: 0,
            },
            Item {
                start: 2,
                end: 3,
                kind: "method",
                name: "bar".into(),
                depth: 1,
            },
        ];
        assert_eq!(format(&items), "1-9 | class: Foo\n  2-3 | method: bar\n");
    }

    #[test]
    fn kotlin_class_is_recovered_from_a_grammar_error() {
        // kotlin-ng wraps this valid file in an ERROR node.
        let src =
            "class Foo {\n    fun greet(): String = \"hi\"\n}\ninterface Shape { fun area() }\n";
        let items = outline(Lang::Kotlin, src).unwrap();
        assert_eq!(items[0].kind, "class");
        assert_eq!(items[0].name, "Foo");
        assert!(
            items.iter().any(|i| i.name == "greet" && i.depth == 1),
            "{items:?}"
        );
    }

    #[test]
    fn c_function_pointers_are_not_prototypes() {
        let items = outline(Lang::C, "void (*callback)(int);\nint real(int a);\n").unwrap();
        let names: Vec<&str> = items.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["real"]);
    }

    #[test]
    fn a_cpp_header_named_h_is_outlined_as_cpp_and_a_c_one_as_c() {
        let cpp = "namespace geo {\nclass Shape {\n public:\n  double area() const;\n};\n}\n";
        let lang = Lang::from_path_and_text(std::path::Path::new("shape.h"), cpp).unwrap();
        assert_eq!(lang, Lang::Cpp);
        let items = outline(lang, cpp).unwrap();
        assert!(
            items
                .iter()
                .any(|i| i.kind == "class" && i.name.ends_with("Shape")),
            "{items:?}"
        );
        let c = "struct point { int x, y; };\nint norm(struct point p);\n";
        assert_eq!(
            Lang::from_path_and_text(std::path::Path::new("point.h"), c),
            Some(Lang::C)
        );
        // A C source stays C whatever it holds ("::" is an IPv6 address here).
        let src = "const char *any = \"::\";\nint f(void) { return 0; }\n";
        assert_eq!(
            Lang::from_path_and_text(std::path::Path::new("addr.c"), src),
            Some(Lang::C)
        );
    }

    #[test]
    fn rust_syntax_errors_are_reported_with_their_line() {
        let err = outline(Lang::Rust, "fn ok() {}\nfn broken( {\n").unwrap_err();
        assert!(err.to_string().starts_with("cannot parse: line "), "{err}");
    }

    #[test]
    fn a_macro_call_without_semicolon_does_not_swallow_the_declarations_after_it() {
        let src = "DECLARE_THING(a)\nint first(int x);\nstruct s { int v; };\nint after(void) { return 0; }\n";
        let items = outline(Lang::C, src).unwrap();
        let names: Vec<&str> = items.iter().map(|i| i.name.as_str()).collect();
        assert!(
            names.contains(&"first") && names.contains(&"after"),
            "{names:?}"
        );
    }

    #[test]
    fn pathological_nesting_does_not_overflow_the_stack() {
        // Run on a small stack so that unbounded recursion would fail loudly here.
        let handle = std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(|| {
                let js = format!("{}{}", "{".repeat(100_000), "}".repeat(100_000));
                outline(Lang::JavaScript, &js).unwrap();
                let c = format!(
                    "{}int f(void);\n{}",
                    "#ifdef X\n".repeat(20_000),
                    "#endif\n".repeat(20_000)
                );
                outline(Lang::C, &c).unwrap();
                let rs = format!(
                    "fn f() {{ {}{} }}",
                    "(".repeat(100_000),
                    ")".repeat(100_000)
                );
                let err = outline(Lang::Rust, &rs).unwrap_err();
                assert!(err.to_string().contains("nest more than"), "{err}");
            })
            .unwrap();
        handle.join().unwrap();
    }

    #[test]
    fn huge_files_are_refused() {
        let big = "x".repeat(MAX_FILE_BYTES + 1);
        assert_eq!(
            outline(Lang::Python, &big),
            Err(OutlineError::TooLarge(MAX_FILE_BYTES + 1))
        );
    }
}
