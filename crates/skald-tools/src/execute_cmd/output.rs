//! What of a command's output is kept for the model: a budget split between the streams,
//! and of each stream its start and its end.

use std::collections::VecDeque;
use tokio::io::AsyncReadExt;

/// Bytes of output kept for the model: the first 40% and the last 60% of it, since the
/// start says what ran and the end says how it finished.
pub const OUTPUT_CAP: usize = 100 * 1024;
pub(super) const HEAD_SHARE: f64 = 0.4;

/// The start and end of a stream, and how long it was in all.
#[derive(Debug, Default)]
pub struct HeadTail {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: usize,
}

impl HeadTail {
    const HEAD_CAP: usize = (OUTPUT_CAP as f64 * HEAD_SHARE) as usize;
    const TAIL_CAP: usize = OUTPUT_CAP - Self::HEAD_CAP;

    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len();
        let room = Self::HEAD_CAP - self.head.len();
        let take = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..take]);
        bytes = &bytes[take..];
        if bytes.len() >= Self::TAIL_CAP {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - Self::TAIL_CAP..]);
        } else {
            let overflow = (self.tail.len() + bytes.len()).saturating_sub(Self::TAIL_CAP);
            self.tail.drain(..overflow);
            self.tail.extend(bytes);
        }
    }

    pub fn total(&self) -> usize {
        self.total
    }

    /// At most `budget` bytes: everything if it fits, else the first 40% and the last 60%
    /// of the budget around a marker saying how much was cut.
    pub fn render(&self, budget: usize) -> String {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        if self.total <= budget {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            return String::from_utf8_lossy(&all).into_owned();
        }
        let head_n = ((budget as f64 * HEAD_SHARE) as usize).min(self.head.len());
        let tail_n = (budget - head_n).min(tail.len());
        let cut = self.total - head_n - tail_n;
        format!(
            "{}\n[… {cut} bytes cut …]\n{}",
            String::from_utf8_lossy(&self.head[..head_n]),
            String::from_utf8_lossy(&tail[tail.len() - tail_n..])
        )
    }
}

/// Reads `pipe` to its end into `into`; what arrived stays there if this is abandoned.
pub(super) async fn capture<R: tokio::io::AsyncRead + Unpin>(pipe: Option<R>, into: &mut HeadTail) {
    let Some(mut pipe) = pipe else { return };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => into.push(&buf[..n]),
        }
    }
}

/// Splits the output budget between the streams: each gets what it has if it fits, and a
/// stream smaller than half leaves the rest to the other.
pub(super) fn budgets(out: usize, err: usize) -> (usize, usize) {
    let half = OUTPUT_CAP / 2;
    if out + err <= OUTPUT_CAP {
        (out, err)
    } else if out <= half {
        (out, OUTPUT_CAP - out)
    } else if err <= half {
        (OUTPUT_CAP - err, err)
    } else {
        (half, OUTPUT_CAP - half)
    }
}

pub(super) fn render(out: &HeadTail, err: &HeadTail) -> String {
    let (bo, be) = budgets(out.total(), err.total());
    let mut text = String::new();
    if out.total() > 0 {
        text.push_str("--- stdout ---\n");
        text.push_str(&out.render(bo));
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    if err.total() > 0 {
        text.push_str("--- stderr ---\n");
        text.push_str(&err.render(be));
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    if text.is_empty() {
        text.push_str("(no output)\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_tail_keeps_first_40_and_last_60_percent() {
        let mut ht = HeadTail::default();
        let data: Vec<u8> = (0..1_000_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        for chunk in data.chunks(7777) {
            ht.push(chunk);
        }
        assert_eq!(ht.total(), 1_000_000);
        let text = ht.render(OUTPUT_CAP);
        let head_n = (OUTPUT_CAP as f64 * 0.4) as usize;
        let tail_n = OUTPUT_CAP - head_n;
        let marker = format!("\n[… {} bytes cut …]\n", 1_000_000 - OUTPUT_CAP);
        assert_eq!(text.len(), OUTPUT_CAP + marker.len());
        assert!(text.starts_with(std::str::from_utf8(&data[..head_n]).unwrap()));
        assert!(text.ends_with(std::str::from_utf8(&data[data.len() - tail_n..]).unwrap()));
        assert!(text.contains(&marker));
    }


    #[test]
    fn budgets_share_the_cap() {
        assert_eq!(budgets(10, 20), (10, 20));
        assert_eq!(budgets(200_000, 100), (OUTPUT_CAP - 100, 100));
        assert_eq!(budgets(100, 200_000), (100, OUTPUT_CAP - 100));
        assert_eq!(budgets(200_000, 200_000), (OUTPUT_CAP / 2, OUTPUT_CAP / 2));
    }
}
