//! Text in pages: a file is read from an offset for at most a page, cut on character
//! boundaries, so a 2 GB log shows its first (or last) part at once and never whole.

use crate::ViewError;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Bytes in a page.
pub const PAGE_BYTES: u64 = 256 * 1024;

pub use skald_api::view::Page;

/// Reads `len` bytes from `offset` (clamped to the file), moved to whole characters: a
/// page never starts or ends inside a UTF-8 sequence. Invalid bytes are shown as U+FFFD.
pub fn read_page(path: &Path, offset: u64, len: u64) -> Result<Page, ViewError> {
    let mut f = std::fs::File::open(path).map_err(crate::io_err(path))?;
    let total = f.metadata().map_err(crate::io_err(path))?.len();
    let start = offset.min(total);
    let want = len.min(total - start);
    f.seek(SeekFrom::Start(start))
        .map_err(crate::io_err(path))?;
    // Three bytes more, to finish a character the page would cut.
    let mut buf = Vec::new();
    f.take(want + 3)
        .read_to_end(&mut buf)
        .map_err(crate::io_err(path))?;
    let is_cont = |b: u8| b & 0xC0 == 0x80;
    let skip = if start == 0 {
        0
    } else {
        buf.iter().take(3).take_while(|b| is_cont(**b)).count()
    };
    let mut end = usize::try_from(want).unwrap_or(usize::MAX).min(buf.len());
    // Finish a character the page would cut (at most three bytes were read past it).
    while end < buf.len() && is_cont(buf[end]) {
        end += 1;
    }
    let end = end.max(skip);
    let text = String::from_utf8_lossy(&buf[skip..end]).into_owned();
    let covered = u64::try_from(end - skip).unwrap_or(0);
    let page_start = start + u64::try_from(skip).unwrap_or(0);
    let next = page_start + covered;
    Ok(Page {
        offset: page_start,
        len: covered,
        total,
        text,
        next_offset: (next < total).then_some(next),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_cut_on_characters_and_chain() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("log.txt");
        // "é" is two bytes: pages of 3 bytes would cut one.
        std::fs::write(&p, "aéééb").unwrap();
        let first = read_page(&p, 0, 3).unwrap();
        assert_eq!(first.text, "aé");
        assert_eq!(first.total, 8);
        let second = read_page(&p, first.next_offset.unwrap(), 3).unwrap();
        assert_eq!(second.text, "éé");
        let third = read_page(&p, second.next_offset.unwrap(), 3).unwrap();
        assert_eq!(third.text, "b");
        assert_eq!(third.next_offset, None);
        // Starting inside a character moves to the next whole one.
        assert_eq!(read_page(&p, 2, 2).unwrap().text, "é");
        // Past the end: an empty last page.
        let past = read_page(&p, 100, 10).unwrap();
        assert_eq!((past.text.as_str(), past.next_offset), ("", None));
    }

    #[test]
    fn a_large_file_is_read_a_page_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.log");
        let line = "0123456789abcdef\n".repeat(64 * 1024); // 1 MiB
        std::fs::write(&p, &line).unwrap();
        let first = read_page(&p, 0, PAGE_BYTES).unwrap();
        assert_eq!(first.len, PAGE_BYTES);
        let last = read_page(&p, first.total - 17, PAGE_BYTES).unwrap();
        assert_eq!(last.text, "0123456789abcdef\n");
    }
}
