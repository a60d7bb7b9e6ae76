//! `skald view PATH`: what the viewer makes of a file — its kind and, for Markdown, the
//! sanitised HTML; for text, its first page.

use crate::exit;
use crate::fail::{Fail, finish};
use skald_viewer::{FileRoute, View};
use std::path::Path;

pub fn run(path: &Path, json: bool) -> u8 {
    finish("skald view", view(path, json))
}

fn view(path: &Path, json: bool) -> Result<u8, Fail> {
    // Outside the app there is no file route: links point at the files themselves.
    let route = FileRoute::new("file://");
    let abs =
        std::fs::canonicalize(path).map_err(|e| Fail::usage(format!("{}: {e}", path.display())))?;
    let (kind, view) = skald_viewer::view(&abs, &route).map_err(Fail::failed)?;
    if json {
        let mut v = serde_json::to_value(&view).unwrap_or_default();
        v["kind"] = serde_json::to_value(&kind).unwrap_or_default();
        println!("{v}");
        return Ok(exit::OK);
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
    Ok(exit::OK)
}
