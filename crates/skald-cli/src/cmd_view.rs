//! `skald view PATH`: what the viewer makes of a file — its kind and, for Markdown, the
//! sanitised HTML; for text, its first page.

use crate::exit;
use skald_viewer::{FileRoute, View};
use std::path::Path;

pub fn run(path: &Path, json: bool) -> u8 {
    // Outside the app there is no file route: links point at the files themselves.
    let route = FileRoute::new("file://");
    let abs = match std::fs::canonicalize(path) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("skald view: {}: {e}", path.display());
            return exit::USAGE;
        }
    };
    let (kind, view) = match skald_viewer::view(&abs, &route) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("skald view: {e}");
            return exit::FAILED;
        }
    };
    if json {
        let mut v = serde_json::to_value(&view).unwrap_or_default();
        v["kind"] = serde_json::to_value(&kind).unwrap_or_default();
        println!("{v}");
        return exit::OK;
    }
    let kind_name = serde_json::to_value(&kind)
        .ok()
        .and_then(|v| v["kind"].as_str().map(str::to_string))
        .unwrap_or_default();
    match view {
        View::Markdown { html } => println!("{html}"),
        View::Text { language, page } => {
            eprintln!(
                "{kind_name}{} — bytes {}..{} of {}",
                language.map(|l| format!(" ({l})")).unwrap_or_default(),
                page.offset,
                page.offset + page.len,
                page.total
            );
            print!("{}", page.text);
        }
        View::Media { mime, url } => println!("{kind_name}: {mime} at {url}"),
        View::Html {
            url, sandbox, csp, ..
        } => println!(
            "html: shown in an iframe with sandbox=\"{sandbox}\" and CSP \"{csp}\" from {url}"
        ),
        View::Latex { source } => {
            eprintln!("latex source — {} bytes", source.total);
            print!("{}", source.text);
        }
        View::None { reason } => println!("no preview: {reason}"),
    }
    exit::OK
}
