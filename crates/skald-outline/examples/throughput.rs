//! Outlines every supported file under a directory on one thread and prints, per
//! language, files, bytes and parse time: where the time of a directory outline goes.
//! `cargo run --release -p skald-outline --example throughput -- DIR`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a developer tool

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

fn main() {
    let dir = std::env::args().nth(1).expect("usage: throughput DIR");
    let mut stats: BTreeMap<String, (usize, usize, Duration)> = BTreeMap::new();
    // SLOWEST=N also lists the N files that took longest.
    let slowest: usize = std::env::var("SLOWEST")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let mut times: Vec<(Duration, usize, std::path::PathBuf)> = Vec::new();
    for entry in ignore::WalkBuilder::new(&dir)
        .hidden(false)
        .build()
        .flatten()
    {
        let path = entry.path();
        let Some(lang) = skald_outline::Lang::from_path(path) else {
            continue;
        };
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let src = String::from_utf8_lossy(&bytes);
        // As get_ast_outline does: a `.h` of C++ is read as C++.
        let lang = skald_outline::Lang::from_path_and_text(path, &src).unwrap_or(lang);
        let t = Instant::now();
        let _ = skald_outline::outline(lang, &src);
        if slowest > 0 {
            times.push((t.elapsed(), bytes.len(), path.to_path_buf()));
        }
        let s = stats.entry(format!("{lang:?}")).or_default();
        s.0 += 1;
        s.1 += bytes.len();
        s.2 += t.elapsed();
    }
    times.sort_by_key(|t| std::cmp::Reverse(t.0));
    for (time, bytes, path) in times.iter().take(slowest) {
        println!(
            "{:>8.1} ms {:>8.1} KB {:>6.1} MB/s {}",
            time.as_secs_f64() * 1e3,
            *bytes as f64 / 1e3,
            *bytes as f64 / 1e6 / time.as_secs_f64(),
            path.display()
        );
    }
    for (lang, (files, bytes, time)) in stats {
        println!(
            "{lang:<12} {files:>6} files {:>8.1} MB {:>8.0} ms {:>6.1} MB/s",
            bytes as f64 / 1e6,
            time.as_secs_f64() * 1e3,
            bytes as f64 / 1e6 / time.as_secs_f64()
        );
    }
}
