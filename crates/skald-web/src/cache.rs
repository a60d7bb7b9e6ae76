//! Pages fetched lately, so a model paging through a long one (`start_line`) reads the
//! copy it started on instead of fetching again. Kept for `TTL`, at most `ENTRIES`, per
//! process, keyed by the URL asked for and whether its fetch could reach private
//! addresses (a rule removed meanwhile must not leave a page fetched under it).

use crate::Page;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TTL: Duration = Duration::from_secs(10 * 60);
const ENTRIES: usize = 16;

struct Entry {
    key: String,
    at: Instant,
    page: Arc<Page>,
}

static PAGES: Mutex<VecDeque<Entry>> = Mutex::new(VecDeque::new());

fn key(url: &str, reach: &crate::Reach) -> String {
    format!("{}\n{}", reach.named.join(","), url)
}

/// The page fetched for `url` within the last `TTL`, if any.
pub fn get(url: &str, reach: &crate::Reach) -> Option<Arc<Page>> {
    let key = key(url, reach);
    let mut pages = PAGES.lock().unwrap_or_else(|e| e.into_inner());
    pages.retain(|e| e.at.elapsed() < TTL);
    pages.iter().find(|e| e.key == key).map(|e| e.page.clone())
}

/// Keeps `page`, fetched for `url`.
pub fn put(url: &str, reach: &crate::Reach, page: Arc<Page>) {
    let key = key(url, reach);
    let mut pages = PAGES.lock().unwrap_or_else(|e| e.into_inner());
    pages.retain(|e| e.key != key);
    if pages.len() >= ENTRIES {
        pages.pop_front();
    }
    pages.push_back(Entry {
        key,
        at: Instant::now(),
        page,
    });
}
