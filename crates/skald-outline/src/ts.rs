//! Outlines from tree-sitter trees: one walker, and per language a rule that says what a
//! node is — a definition (possibly containing more), a wrapper to look through, or
//! nothing of interest.

use crate::{Item, Lang, OutlineError};
use std::cell::RefCell;
use std::collections::HashMap;
use tree_sitter::{Node, Parser, Tree};

thread_local! {
    /// One parser per language per thread, created on first use and reused: creating a
    /// parser and loading a grammar costs more than parsing a small file.
    static PARSERS: RefCell<HashMap<Lang, Parser>> = RefCell::new(HashMap::new());
}

/// What a node means for the outline.
enum Act<'t> {
    /// Not a definition; nothing below it is either.
    Skip,
    /// A wrapper (export, decorator, `#ifdef`, namespace-less block): look at its children
    /// at the same depth.
    Through(Node<'t>),
    /// A definition. When `body` is given, definitions inside it are listed one level
    /// deeper (methods under their class).
    Def {
        kind: &'static str,
        name: String,
        body: Option<Node<'t>>,
    },
}

/// Where a node sits: how deep, and whether directly inside a type (where functions are
/// methods) rather than a namespace or module of functions.
#[derive(Clone, Copy)]
struct Pos {
    depth: usize,
    in_type: bool,
    /// Recursion of the walk itself, wrappers included: bounded so that a file of 100,000
    /// nested blocks cannot exhaust the thread's stack.
    nest: usize,
}

/// Deepest the walk recurses; real code's definitions sit far above this.
const MAX_NEST: usize = 200;

/// Kinds whose members are methods.
const TYPE_KINDS: &[&str] = &[
    "class",
    "struct",
    "union",
    "interface",
    "trait",
    "impl",
    "enum",
    "protocol",
    "extension",
    "actor",
    "object",
    "module",
];

struct Ctx<'s> {
    src: &'s [u8],
    lang: Lang,
    /// For a blanked Python text: the real last row of a function, by the row where the
    /// parser now ends it (0-based rows).
    ends: HashMap<usize, usize>,
    out: Vec<Item>,
}

impl Ctx<'_> {
    fn text(&self, n: Node<'_>) -> String {
        n.utf8_text(self.src).unwrap_or("").to_string()
    }

    fn field(&self, n: Node<'_>, field: &str) -> Option<String> {
        n.child_by_field_name(field).map(|c| self.text(c))
    }

    /// A one-line, bounded version of `s`, for names taken from arbitrary text.
    fn short(s: &str) -> String {
        let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
        match one.char_indices().nth(80) {
            Some((i, _)) => format!("{}…", &one[..i]),
            None => one,
        }
    }
}

pub(crate) fn outline(lang: Lang, source: &str) -> Result<Vec<Item>, OutlineError> {
    // Python function bodies are shown to the parser as spaces (py_bodies.rs); a blanked
    // text the parser finds an error in is read again whole, so the scan never costs an
    // item.
    if lang == Lang::Python
        && let Some(blanked) = crate::py_bodies::blank(source)
    {
        let tree = parse(lang, &blanked.text)?;
        if !tree.root_node().has_error() {
            return Ok(items(lang, &blanked.text, &tree, blanked.ends));
        }
    }
    // C and C++ function bodies are shown to the parser as `{}`, and what only the
    // preprocessor understands as nothing (c_bodies.rs).
    if matches!(lang, Lang::C | Lang::Cpp)
        && let Some(shown) = crate::c_bodies::blank(source)
    {
        let tree = parse(lang, &shown)?;
        return Ok(items(lang, &shown, &tree, HashMap::new()));
    }
    let tree = parse(lang, source)?;
    Ok(items(lang, source, &tree, HashMap::new()))
}

fn parse(lang: Lang, source: &str) -> Result<Tree, OutlineError> {
    let Some(grammar) = lang.grammar() else {
        return Err(OutlineError::Parse(format!("no grammar for {lang:?}")));
    };
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let parser = match parsers.entry(lang) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let mut p = Parser::new();
                p.set_language(&grammar)
                    .map_err(|e| OutlineError::Parse(e.to_string()))?;
                v.insert(p)
            }
        };
        parser
            .parse(source, None)
            .ok_or_else(|| OutlineError::Parse("the parser gave up".to_string()))
    })
}

fn items(lang: Lang, source: &str, tree: &Tree, ends: HashMap<usize, usize>) -> Vec<Item> {
    let mut ctx = Ctx {
        src: source.as_bytes(),
        lang,
        ends,
        out: Vec::new(),
    };
    walk(
        &mut ctx,
        tree.root_node(),
        Pos {
            depth: 0,
            in_type: false,
            nest: 0,
        },
    );
    ctx.out
}

/// Nesting levels listed at most; deeper definitions are left out (a JSON document's
/// leaves, a function's inner helpers).
fn max_depth(lang: Lang) -> usize {
    match lang {
        Lang::Json | Lang::Yaml | Lang::Toml => 2,
        Lang::Markdown => 6,
        _ => 4,
    }
}

fn walk(ctx: &mut Ctx<'_>, node: Node<'_>, pos: Pos) {
    if pos.nest >= MAX_NEST {
        return;
    }
    let pos = Pos {
        nest: pos.nest + 1,
        ..pos
    };
    if node.is_error() && ctx.lang == Lang::Kotlin {
        return kotlin_recover(ctx, node, pos);
    }
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
    for child in children {
        match classify(ctx, child, pos) {
            Act::Skip => {}
            Act::Through(inner) => walk(ctx, inner, pos),
            Act::Def { kind, name, body } => {
                let (start, mut end) = span(child);
                if let Some(&last) = ctx.ends.get(&(end - 1)) {
                    end = last + 1;
                }
                push(ctx, start, end, kind, &name, pos.depth);
                if let Some(body) = body
                    && pos.depth + 1 < max_depth(ctx.lang)
                {
                    let inner = Pos {
                        depth: pos.depth + 1,
                        in_type: TYPE_KINDS.contains(&kind),
                        nest: pos.nest,
                    };
                    walk(ctx, body, inner);
                }
            }
        }
    }
}

fn push(ctx: &mut Ctx<'_>, start: usize, end: usize, kind: &'static str, name: &str, depth: usize) {
    ctx.out.push(Item {
        start,
        end,
        kind,
        name: Ctx::short(name),
        depth,
    });
}

/// kotlin-ng sometimes fails on valid code (an expression-bodied member before a
/// following declaration) and wraps a whole class in an ERROR node. Recover the class from
/// its keyword and name, and list what follows as its members.
fn kotlin_recover(ctx: &mut Ctx<'_>, node: Node<'_>, pos: Pos) {
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
    let mut inner = pos;
    let mut i = 0;
    while i < children.len() {
        let child = children[i];
        let keyword = match child.kind() {
            "class" => Some("class"),
            "interface" => Some("interface"),
            "object" => Some("object"),
            _ => None,
        };
        if let Some(kind) = keyword
            && let Some(name) = children.get(i + 1).filter(|n| n.kind() == "identifier")
        {
            let (start, _) = span(child);
            let (_, end) = span(node);
            let name = ctx.text(*name);
            push(ctx, start, end, kind, &name, pos.depth);
            inner = Pos {
                depth: pos.depth + 1,
                in_type: true,
                nest: pos.nest,
            };
            i += 2;
            continue;
        }
        if child.is_named() {
            match classify(ctx, child, inner) {
                Act::Def { kind, name, body } => {
                    let (start, end) = span(child);
                    push(ctx, start, end, kind, &name, inner.depth);
                    if let Some(body) = body {
                        walk(
                            ctx,
                            body,
                            Pos {
                                depth: inner.depth + 1,
                                in_type: true,
                                nest: inner.nest,
                            },
                        );
                    }
                }
                Act::Through(n) => walk(ctx, n, inner),
                Act::Skip => {}
            }
        }
        i += 1;
    }
}

/// 1-based inclusive line range; a node ending at column 0 ends on the line before (its
/// text ends with the newline).
fn span(n: Node<'_>) -> (usize, usize) {
    let start = n.start_position().row + 1;
    let end_pos = n.end_position();
    let end = if end_pos.column == 0 && end_pos.row > n.start_position().row {
        end_pos.row
    } else {
        end_pos.row + 1
    };
    (start, end)
}

fn fun(pos: Pos) -> &'static str {
    if pos.in_type { "method" } else { "function" }
}

fn classify<'t>(ctx: &Ctx<'_>, n: Node<'t>, pos: Pos) -> Act<'t> {
    // tree-sitter recovers from syntax errors with ERROR nodes; definitions inside are
    // still worth listing.
    if n.is_error() {
        return Act::Through(n);
    }
    match ctx.lang {
        Lang::Python => python(ctx, n, pos),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => javascript(ctx, n, pos),
        Lang::Go => go(ctx, n),
        Lang::Java => java(ctx, n),
        Lang::C | Lang::Cpp => c_family(ctx, n, pos),
        Lang::Swift => swift(ctx, n, pos),
        Lang::Kotlin => kotlin(ctx, n, pos),
        Lang::Lua => lua(ctx, n),
        Lang::Ruby => ruby(ctx, n, pos),
        Lang::Bash => bash(ctx, n),
        Lang::Elixir => elixir(ctx, n),
        Lang::Json => json(ctx, n),
        Lang::Yaml => yaml(ctx, n),
        Lang::Html => html(ctx, n),
        Lang::Css => css(ctx, n),
        Lang::Toml => toml(ctx, n),
        Lang::Markdown => markdown(ctx, n),
        Lang::Sql => sql(ctx, n),
        Lang::Rust => Act::Skip,
    }
}

fn def<'t>(kind: &'static str, name: Option<String>, body: Option<Node<'t>>) -> Act<'t> {
    Act::Def {
        kind,
        name: name.unwrap_or_else(|| "(anonymous)".to_string()),
        body,
    }
}

fn python<'t>(ctx: &Ctx<'_>, n: Node<'t>, pos: Pos) -> Act<'t> {
    match n.kind() {
        "function_definition" => def(fun(pos), ctx.field(n, "name"), None),
        "class_definition" => def("class", ctx.field(n, "name"), n.child_by_field_name("body")),
        "decorated_definition" => n
            .child_by_field_name("definition")
            .map_or(Act::Skip, |d| python(ctx, d, pos)),
        // Definitions under `if TYPE_CHECKING:` / `try:` at module level are still API.
        "if_statement" | "try_statement" | "block" | "else_clause" | "except_clause"
            if pos.depth == 0 =>
        {
            Act::Through(n)
        }
        _ => Act::Skip,
    }
}

fn javascript<'t>(ctx: &Ctx<'_>, n: Node<'t>, pos: Pos) -> Act<'t> {
    let name = || ctx.field(n, "name");
    let body = || n.child_by_field_name("body");
    match n.kind() {
        "function_declaration" | "generator_function_declaration" | "function_signature" => {
            def(fun(pos), name(), None)
        }
        "class_declaration" | "abstract_class_declaration" | "class" => {
            def("class", name(), body())
        }
        "method_definition" | "method_signature" | "abstract_method_signature" => {
            def("method", name(), None)
        }
        "interface_declaration" => def("interface", name(), body()),
        "type_alias_declaration" => def("type", name(), None),
        "enum_declaration" => def("enum", name(), None),
        "internal_module" | "module" => def("namespace", name(), body()),
        "export_statement" => match n.child_by_field_name("declaration") {
            Some(d) => javascript(ctx, d, pos),
            None => Act::Skip,
        },
        "ambient_declaration" | "statement_block" => Act::Through(n),
        // `const f = () => …` and `const f = function …` define functions.
        // `namespace X {}` is an expression statement in the TypeScript grammar.
        "expression_statement" if pos.depth == 0 => match n.named_child(0) {
            Some(e) if matches!(e.kind(), "internal_module" | "module") => javascript(ctx, e, pos),
            _ => Act::Skip,
        },
        "lexical_declaration" | "variable_declaration" if pos.depth == 0 => {
            let mut cursor = n.walk();
            let declarator = n.named_children(&mut cursor).find(|d| {
                d.kind() == "variable_declarator"
                    && d.child_by_field_name("value").is_some_and(|v| {
                        matches!(
                            v.kind(),
                            "arrow_function"
                                | "function_expression"
                                | "function"
                                | "class"
                                | "generator_function"
                        )
                    })
            });
            match declarator {
                Some(d) => {
                    let is_class = d
                        .child_by_field_name("value")
                        .is_some_and(|v| v.kind() == "class");
                    def(
                        if is_class { "class" } else { "function" },
                        ctx.field(d, "name"),
                        None,
                    )
                }
                None => Act::Skip,
            }
        }
        _ => Act::Skip,
    }
}

fn go<'t>(ctx: &Ctx<'_>, n: Node<'t>) -> Act<'t> {
    match n.kind() {
        "function_declaration" => def("function", ctx.field(n, "name"), None),
        "method_declaration" => {
            // Go methods live outside their type: name them `Type.Method`.
            let recv = n
                .child_by_field_name("receiver")
                .map(|r| ctx.text(r))
                .unwrap_or_default();
            let ty = recv
                .trim_matches(|c| c == '(' || c == ')')
                .split_whitespace()
                .last()
                .unwrap_or("")
                .trim_start_matches('*')
                .to_string();
            let name = ctx.field(n, "name").unwrap_or_default();
            let full = if ty.is_empty() {
                name
            } else {
                format!("{ty}.{name}")
            };
            def("method", Some(full), None)
        }
        "type_declaration" => Act::Through(n),
        "type_spec" | "type_alias" => {
            let kind = match n.child_by_field_name("type").map(|t| t.kind()) {
                Some("struct_type") => "struct",
                Some("interface_type") => "interface",
                _ => "type",
            };
            def(kind, ctx.field(n, "name"), None)
        }
        _ => Act::Skip,
    }
}

fn java<'t>(ctx: &Ctx<'_>, n: Node<'t>) -> Act<'t> {
    let name = || ctx.field(n, "name");
    let body = || n.child_by_field_name("body");
    match n.kind() {
        "class_declaration" | "record_declaration" => def("class", name(), body()),
        "interface_declaration" | "annotation_type_declaration" => def("interface", name(), body()),
        "enum_declaration" => def("enum", name(), body()),
        "enum_body_declarations" => Act::Through(n),
        "method_declaration" => def("method", name(), None),
        "constructor_declaration" => def("constructor", name(), None),
        _ => Act::Skip,
    }
}

/// The name a C/C++ declarator declares: follow `declarator` fields down to the
/// identifier.
fn c_declarator_name(ctx: &Ctx<'_>, mut n: Node<'_>) -> Option<String> {
    for _ in 0..16 {
        match n.kind() {
            "identifier"
            | "field_identifier"
            | "type_identifier"
            | "qualified_identifier"
            | "operator_name"
            | "destructor_name"
            | "template_function"
            | "primitive_type" => {
                return Some(ctx.text(n));
            }
            "parenthesized_declarator" => n = n.named_child(0)?,
            _ => n = n.child_by_field_name("declarator")?,
        }
    }
    None
}

/// Whether a declarator declares a function (a prototype), not a variable — including
/// not a function pointer, whose declarator is `(*name)(…)`.
fn c_is_function(mut n: Node<'_>) -> bool {
    for _ in 0..16 {
        match n.kind() {
            "function_declarator" => {
                return n
                    .child_by_field_name("declarator")
                    .is_some_and(|d| d.kind() != "parenthesized_declarator");
            }
            "pointer_declarator" | "reference_declarator" | "attributed_declarator" => {
                match n.child_by_field_name("declarator") {
                    Some(d) => n = d,
                    None => return false,
                }
            }
            _ => return false,
        }
    }
    false
}

fn c_type_def<'t>(ctx: &Ctx<'_>, spec: Node<'t>, alias: Option<String>) -> Option<Act<'t>> {
    let kind = match spec.kind() {
        "struct_specifier" => "struct",
        "union_specifier" => "union",
        "enum_specifier" => "enum",
        "class_specifier" => "class",
        _ => return None,
    };
    let body = spec.child_by_field_name("body")?;
    let name = ctx.field(spec, "name").or(alias);
    let body = (kind != "enum").then_some(body);
    Some(def(kind, name, body))
}

fn c_family<'t>(ctx: &Ctx<'_>, n: Node<'t>, pos: Pos) -> Act<'t> {
    match n.kind() {
        "function_definition" => {
            // A macro call without a semicolon (`DECLARE_THING(x)`) followed by
            // declarations parses as an old K&R definition whose "parameter declarations"
            // are really the next top-level declarations. K&R definitions are all but
            // extinct, so treat one as that misparse and list what it swallowed.
            let mut cursor = n.walk();
            if n.named_children(&mut cursor)
                .any(|c| c.kind() == "declaration")
            {
                return Act::Through(n);
            }
            let name = n
                .child_by_field_name("declarator")
                .and_then(|d| c_declarator_name(ctx, d));
            def(fun(pos), name, None)
        }
        "declaration" | "field_declaration" => {
            if let Some(d) = n.child_by_field_name("declarator")
                && c_is_function(d)
            {
                let kind = if pos.in_type { "method" } else { "prototype" };
                return def(kind, c_declarator_name(ctx, d), None);
            }
            match n.child_by_field_name("type") {
                Some(spec) => c_type_def(ctx, spec, None).unwrap_or(Act::Skip),
                None => Act::Skip,
            }
        }
        "type_definition" => {
            let alias = n
                .child_by_field_name("declarator")
                .and_then(|d| c_declarator_name(ctx, d));
            match n
                .child_by_field_name("type")
                .and_then(|s| c_type_def(ctx, s, alias.clone()))
            {
                Some(act) => act,
                None => def("typedef", alias, None),
            }
        }
        "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier" => {
            c_type_def(ctx, n, None).unwrap_or(Act::Skip)
        }
        "preproc_def" | "preproc_function_def" if pos.depth == 0 => {
            def("macro", ctx.field(n, "name"), None)
        }
        "namespace_definition" => def(
            "namespace",
            ctx.field(n, "name"),
            n.child_by_field_name("body"),
        ),
        "preproc_ifdef"
        | "preproc_if"
        | "preproc_else"
        | "preproc_elif"
        | "preproc_elifdef"
        | "linkage_specification"
        | "declaration_list"
        | "template_declaration" => Act::Through(n),
        _ => Act::Skip,
    }
}

fn swift<'t>(ctx: &Ctx<'_>, n: Node<'t>, pos: Pos) -> Act<'t> {
    let body = || n.child_by_field_name("body");
    match n.kind() {
        "class_declaration" => {
            let keyword = n.child(0).map(|c| ctx.text(c)).filter(|k| {
                ["class", "struct", "enum", "extension", "actor"].contains(&k.as_str())
            });
            // Modifiers come first; find the declaration keyword among the tokens.
            let mut cursor = n.walk();
            let kind = n
                .children(&mut cursor)
                .map(|c| c.kind())
                .find_map(|k| match k {
                    "class" => Some("class"),
                    "struct" => Some("struct"),
                    "enum" => Some("enum"),
                    "extension" => Some("extension"),
                    "actor" => Some("actor"),
                    _ => None,
                })
                .or(keyword.as_deref().map(|_| "class"))
                .unwrap_or("class");
            def(kind, ctx.field(n, "name"), body())
        }
        "protocol_declaration" => def("protocol", ctx.field(n, "name"), body()),
        "function_declaration" | "protocol_function_declaration" => {
            def(fun(pos), ctx.field(n, "name"), None)
        }
        "init_declaration" => def("method", Some("init".into()), None),
        "deinit_declaration" => def("method", Some("deinit".into()), None),
        "typealias_declaration" => def("type", ctx.field(n, "name"), None),
        _ => Act::Skip,
    }
}

fn kotlin<'t>(ctx: &Ctx<'_>, n: Node<'t>, pos: Pos) -> Act<'t> {
    let body = |n: Node<'t>| {
        let mut cursor = n.walk();
        n.named_children(&mut cursor)
            .find(|c| matches!(c.kind(), "class_body" | "enum_class_body"))
    };
    match n.kind() {
        "class_declaration" => {
            let text = ctx.text(n);
            let head = text.split('{').next().unwrap_or("");
            let kind = if head.contains("interface ") {
                "interface"
            } else if head.contains("enum class") {
                "enum"
            } else {
                "class"
            };
            def(
                kind,
                ctx.field(n, "name")
                    .or_else(|| first_named(ctx, n, "identifier")),
                body(n),
            )
        }
        "object_declaration" | "companion_object" => def(
            "object",
            ctx.field(n, "name")
                .or_else(|| first_named(ctx, n, "identifier"))
                .or_else(|| Some("companion".into())),
            body(n),
        ),
        "function_declaration" => def(fun(pos), ctx.field(n, "name"), None),
        "type_alias" => def(
            "type",
            ctx.field(n, "type")
                .or_else(|| first_named(ctx, n, "identifier")),
            None,
        ),
        _ => Act::Skip,
    }
}

fn first_named(ctx: &Ctx<'_>, n: Node<'_>, kind: &str) -> Option<String> {
    let mut cursor = n.walk();
    n.named_children(&mut cursor)
        .find(|c| c.kind() == kind)
        .map(|c| ctx.text(c))
}

fn lua<'t>(ctx: &Ctx<'_>, n: Node<'t>) -> Act<'t> {
    match n.kind() {
        "function_declaration" => def("function", ctx.field(n, "name"), None),
        "variable_declaration" => {
            // `local f = function() … end`
            let text = ctx.text(n);
            let is_fn = text
                .split_once('=')
                .is_some_and(|(_, v)| v.trim_start().starts_with("function"));
            if !is_fn {
                return Act::Skip;
            }
            let name = text
                .trim_start_matches("local")
                .split('=')
                .next()
                .map(|s| s.trim().to_string());
            def("function", name, None)
        }
        _ => Act::Skip,
    }
}

fn ruby<'t>(ctx: &Ctx<'_>, n: Node<'t>, pos: Pos) -> Act<'t> {
    match n.kind() {
        "class" => def("class", ctx.field(n, "name"), n.child_by_field_name("body")),
        "singleton_class" => def(
            "class",
            Some("<< self".into()),
            n.child_by_field_name("body"),
        ),
        "module" => def(
            "module",
            ctx.field(n, "name"),
            n.child_by_field_name("body"),
        ),
        "method" => def(fun(pos), ctx.field(n, "name"), None),
        "singleton_method" => {
            let obj = ctx.field(n, "object").unwrap_or_default();
            let name = ctx.field(n, "name").unwrap_or_default();
            def(fun(pos), Some(format!("{obj}.{name}")), None)
        }
        "body_statement" => Act::Through(n),
        _ => Act::Skip,
    }
}

fn bash<'t>(ctx: &Ctx<'_>, n: Node<'t>) -> Act<'t> {
    match n.kind() {
        "function_definition" => def("function", ctx.field(n, "name"), None),
        _ => Act::Skip,
    }
}

fn elixir<'t>(ctx: &Ctx<'_>, n: Node<'t>) -> Act<'t> {
    if n.kind() != "call" {
        return Act::Skip;
    }
    let Some(target) = ctx.field(n, "target") else {
        return Act::Skip;
    };
    let mut cursor = n.walk();
    let args = n
        .named_children(&mut cursor)
        .find(|c| c.kind() == "arguments");
    let do_block = {
        let mut cursor = n.walk();
        n.named_children(&mut cursor)
            .find(|c| c.kind() == "do_block")
    };
    let first_arg = args.and_then(|a| a.named_child(0));
    match target.as_str() {
        "defmodule" | "defprotocol" | "defimpl" => {
            let kind = if target == "defmodule" {
                "module"
            } else {
                "protocol"
            };
            def(kind, first_arg.map(|a| ctx.text(a)), do_block)
        }
        "def" | "defp" | "defmacro" | "defmacrop" | "defguard" | "defguardp" | "defdelegate" => {
            let name = first_arg.map(|a| elixir_fn_name(ctx, a));
            let kind = if target.starts_with("defmacro") {
                "macro"
            } else {
                "function"
            };
            def(kind, name, None)
        }
        "defstruct" => def("struct", Some("%__MODULE__{}".into()), None),
        _ => Act::Skip,
    }
}

fn elixir_fn_name(ctx: &Ctx<'_>, n: Node<'_>) -> String {
    match n.kind() {
        "call" => ctx.field(n, "target").unwrap_or_else(|| ctx.text(n)),
        // `name(args) when guard`
        "binary_operator" => n
            .child_by_field_name("left")
            .map(|l| elixir_fn_name(ctx, l))
            .unwrap_or_else(|| ctx.text(n)),
        _ => ctx.text(n),
    }
}

fn json<'t>(ctx: &Ctx<'_>, n: Node<'t>) -> Act<'t> {
    match n.kind() {
        "document" | "object" => Act::Through(n),
        "pair" => {
            let key = ctx.field(n, "key").map(|k| k.trim_matches('"').to_string());
            let value = n
                .child_by_field_name("value")
                .filter(|v| v.kind() == "object");
            def("key", key, value)
        }
        _ => Act::Skip,
    }
}

fn yaml<'t>(ctx: &Ctx<'_>, n: Node<'t>) -> Act<'t> {
    match n.kind() {
        "document" | "block_node" | "block_mapping" => Act::Through(n),
        "block_mapping_pair" => {
            let value = n
                .child_by_field_name("value")
                .filter(|v| v.kind() == "block_node");
            def("key", ctx.field(n, "key"), value)
        }
        _ => Act::Skip,
    }
}

fn html<'t>(ctx: &Ctx<'_>, n: Node<'t>) -> Act<'t> {
    match n.kind() {
        "element" => {
            let Some(tag) = n.named_child(0).filter(|t| t.kind() == "start_tag") else {
                return Act::Through(n);
            };
            let name = tag
                .named_child(0)
                .map(|t| ctx.text(t).to_ascii_lowercase())
                .unwrap_or_default();
            if matches!(name.as_str(), "h1" | "h2" | "h3" | "h4" | "h5" | "h6") {
                let text: String = {
                    let mut cursor = n.walk();
                    n.named_children(&mut cursor)
                        .filter(|c| c.kind() != "start_tag" && c.kind() != "end_tag")
                        .map(|c| ctx.text(c))
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                return def("heading", Some(format!("{name} {}", text.trim())), None);
            }
            let mut cursor = tag.walk();
            let id = tag
                .named_children(&mut cursor)
                .filter(|a| a.kind() == "attribute")
                .find(|a| a.named_child(0).is_some_and(|k| ctx.text(k) == "id"))
                .and_then(|a| a.named_child(1))
                .map(|v| ctx.text(v).trim_matches(['"', '\'']).to_string());
            match id {
                Some(id) => def("element", Some(format!("{name}#{id}")), Some(n)),
                None => Act::Through(n),
            }
        }
        "script_element" => def("script", Some("<script>".into()), None),
        "style_element" => def("style", Some("<style>".into()), None),
        _ => Act::Skip,
    }
}

fn css<'t>(ctx: &Ctx<'_>, n: Node<'t>) -> Act<'t> {
    match n.kind() {
        "rule_set" => def(
            "selector",
            n.named_child(0)
                .filter(|s| s.kind() == "selectors")
                .map(|s| ctx.text(s)),
            None,
        ),
        "media_statement" => {
            let text = ctx.text(n);
            let query = text.split('{').next().unwrap_or("").trim().to_string();
            let mut cursor = n.walk();
            let block = n.named_children(&mut cursor).find(|c| c.kind() == "block");
            def("media", Some(query), block)
        }
        "keyframes_statement" => def("keyframes", first_named(ctx, n, "keyframes_name"), None),
        _ => Act::Skip,
    }
}

fn toml<'t>(ctx: &Ctx<'_>, n: Node<'t>) -> Act<'t> {
    let key = |n: Node<'_>| {
        n.named_child(0)
            .filter(|k| matches!(k.kind(), "bare_key" | "dotted_key" | "quoted_key"))
            .map(|k| ctx.text(k))
    };
    match n.kind() {
        "table" => def("table", key(n).map(|k| format!("[{k}]")), None),
        "table_array_element" => def("table", key(n).map(|k| format!("[[{k}]]")), None),
        "pair" => def("key", key(n), None),
        _ => Act::Skip,
    }
}

fn markdown<'t>(ctx: &Ctx<'_>, n: Node<'t>) -> Act<'t> {
    match n.kind() {
        "section" => {
            let heading = n
                .named_child(0)
                .filter(|h| matches!(h.kind(), "atx_heading" | "setext_heading"));
            match heading {
                Some(h) => {
                    let title = h
                        .child_by_field_name("heading_content")
                        .map(|c| ctx.text(c))
                        .unwrap_or_default();
                    def("heading", Some(title.trim().to_string()), Some(n))
                }
                None => Act::Through(n),
            }
        }
        // Setext headings are not sectioned by the grammar: list them where they stand.
        "setext_heading" => def(
            "heading",
            n.child_by_field_name("heading_content")
                .map(|c| ctx.text(c).trim().to_string()),
            None,
        ),
        _ => Act::Skip,
    }
}

fn sql<'t>(ctx: &Ctx<'_>, n: Node<'t>) -> Act<'t> {
    let object = |n: Node<'_>| first_named(ctx, n, "object_reference");
    match n.kind() {
        "statement" | "transaction" | "block" => Act::Through(n),
        "create_table" => def("table", object(n), None),
        "create_view" | "create_materialized_view" => def("view", object(n), None),
        "create_function" => def("function", object(n), None),
        "create_index" => def(
            "index",
            n.child_by_field_name("column")
                .map(|c| ctx.text(c))
                .or_else(|| object(n)),
            None,
        ),
        "create_type" => def("type", object(n), None),
        "create_trigger" => def("trigger", object(n), None),
        "create_schema" => def("schema", first_named(ctx, n, "identifier"), None),
        _ => Act::Skip,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The outline of a Python file read whole, as before py_bodies.rs; `None` when the
    /// parser found an error in it (the blanked read may then list more: a body that
    /// derailed the parser is not read).
    fn whole(source: &str) -> Option<Vec<Item>> {
        let tree = parse(Lang::Python, source).unwrap();
        (!tree.root_node().has_error()).then(|| items(Lang::Python, source, &tree, HashMap::new()))
    }

    #[test]
    fn a_blanked_python_file_has_the_outline_of_the_whole_one() {
        let src = "import os\n\n@decorator(1)\ndef f(a,\n      b):\n    \"\"\"Doc.\n\n    def inside_a_string(): pass\n    \"\"\"\n    def inner():\n        return 1\n    return [inner() for _ in range(10)]  # trailing\n\nclass C(Base):\n    x = 1\n\n    async def m(self):\n        await something(self.x, 'and a long enough body to blank')\n\n    class Inner:\n        def n(self):\n            return {'k': 'v', 'w': 'a long enough body to be blanked'}\n\nif TYPE_CHECKING:\n    def typed() -> int:\n        return compute_something_long(1, 2, 3, 4, 5, 6, 7, 8, 9)\n";
        assert!(crate::py_bodies::blank(src).is_some());
        let got = outline(Lang::Python, src).unwrap();
        assert_eq!(Some(got.clone()), whole(src));
        let names: Vec<(&str, usize, usize)> = got
            .iter()
            .map(|i| (i.name.as_str(), i.start, i.end))
            .collect();
        assert_eq!(
            names,
            [
                ("f", 3, 12),
                ("C", 14, 22),
                ("m", 17, 18),
                ("Inner", 20, 22),
                ("n", 21, 22),
                ("typed", 25, 26),
            ]
        );
    }

    /// What only the preprocessor understands is left out of headers (c_bodies.rs): the
    /// parser reads them without an error, every definition on its line.
    #[test]
    fn a_header_full_of_preprocessor_annotations_reads_without_errors() {
        let src = "#ifdef __cplusplus\nextern \"C\" {\n#endif\n__BEGIN_DECLS\nextern int fclose (FILE *__stream) __nonnull ((1));\nextern void *xmalloc (size_t __size) __THROW __attribute_malloc__ __wur;\nG_BEGIN_DECLS\nGDK_AVAILABLE_IN_ALL\nGType gdk_x_get_type (void) G_GNUC_CONST;\nG_DEFINE_AUTOPTR_CLEANUP_FUNC (GdkX, g_object_unref)\nstruct point { int x; int y; };\nGDK_AVAILABLE_IN_ALL int gdk_y (int a);\nstatic inline int\nsquare (int v) { return v * v + 0 * 123456789 + 0 * 987654321; }\nG_END_DECLS\n__END_DECLS\n#ifdef __cplusplus\n}\n#endif\n";
        let tree = parse(Lang::C, &crate::c_bodies::blank(src).unwrap()).unwrap();
        assert!(
            !tree.root_node().has_error(),
            "{}",
            tree.root_node().to_sexp()
        );
        let items = outline(Lang::C, src).unwrap();
        let got: Vec<(&str, usize)> = items.iter().map(|i| (i.name.as_str(), i.start)).collect();
        assert!(got.contains(&("point", 11)), "{got:?}");
        assert!(got.contains(&("square", 13)), "{got:?}");
    }

    /// A comment after a blanked body, indented as the body, belongs to the function as
    /// in the whole read: the comment on the body's last line keeps its column, which the
    /// grammar's scanner weighs when it closes the block.
    #[test]
    fn a_comment_after_a_blanked_body_ends_the_function_where_the_whole_read_does() {
        let src = "class C:\n    def f(self):\n        for a, b in pairs:\n            with ctx():\n                g[a][b]  # trailing\n        # a note at the body's level\n\n    def h(self):\n        return self.other_thing_long_enough_to_blank(1, 2, 3, 4)\n";
        assert!(crate::py_bodies::blank(src).is_some());
        let got = outline(Lang::Python, src).unwrap();
        assert_eq!(Some(got.clone()), whole(src));
        assert_eq!((got[1].name.as_str(), got[1].end), ("f", 6));
    }

    /// Every 20th file of the Python standard library this machine has (all of them with
    /// SKALD_OUTLINE_STRIDE=1): the blanked read lists exactly what the whole read does,
    /// wherever the whole read has no syntax error.
    #[test]
    fn the_python_standard_library_outlines_the_same_blanked_and_whole() {
        let out = std::process::Command::new("python3")
            .args([
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
            ])
            .output()
            .expect("python3 runs (scripts/setup.sh installs it)");
        let stdlib = std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        let stride: usize = std::env::var("SKALD_OUTLINE_STRIDE")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(20);
        let mut files: Vec<std::path::PathBuf> = ignore::WalkBuilder::new(&stdlib)
            .standard_filters(false)
            .build()
            .filter_map(Result::ok)
            .map(|e| e.into_path())
            .filter(|p| p.extension().is_some_and(|e| e == "py"))
            .collect();
        files.sort();
        assert!(
            files.len() > 500,
            "no standard library under {}",
            stdlib.display()
        );
        let (mut checked, mut blanked) = (0, 0);
        for path in files.iter().step_by(stride) {
            let Ok(src) = std::fs::read_to_string(path) else {
                continue;
            };
            checked += 1;
            if crate::py_bodies::blank(&src).is_some() {
                blanked += 1;
            }
            if let Some(whole) = whole(&src) {
                assert_eq!(
                    outline(Lang::Python, &src).unwrap(),
                    whole,
                    "{}",
                    path.display()
                );
            }
        }
        eprintln!("{checked} files, {blanked} blanked");
        // Files without a long enough function (data tables, `__init__.py`) stay whole.
        assert!(blanked * 2 > checked, "{blanked} of {checked} blanked");
    }
}
