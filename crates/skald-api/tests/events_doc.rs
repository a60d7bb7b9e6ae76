//! docs/events.md describes every event `skald exec --json` can print: an event added
//! without its section there fails here (the schema's version policy is on that page).

use skald_api::events::Event;
use ts_rs::TS;

#[test]
fn every_event_has_its_section_in_the_events_page() {
    let decl = Event::decl();
    let types: Vec<&str> = decl
        .split("\"type\": \"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert!(types.len() > 20, "{decl}");
    let page =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/events.md"))
            .expect("docs/events.md");
    let missing: Vec<&&str> = types
        .iter()
        .filter(|t| !page.contains(&format!("\n### {t}\n")))
        .collect();
    assert!(missing.is_empty(), "docs/events.md lacks: {missing:?}");
    assert!(page.contains(&format!(
        "**Schema version {}**",
        skald_api::events::SCHEMA_VERSION
    )));
}
