//! A guard between a server's output and the protocol reader: async-lsp reads a message
//! into a buffer of the size its `Content-Length` header says, so a server (or project
//! code inside the sandbox writing to the server's output) saying a terabyte would make
//! Skald ask for a terabyte and abort. This reader passes the bytes through unchanged and
//! fails the stream at a header over `MAX_MESSAGE` or a header line past `MAX_LINE`: the
//! server is then stopped, and started again at the next question.

use futures::io::AsyncRead;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The largest message a server may send: the diagnostics of a huge file, a long list of
/// references, with room to spare.
pub const MAX_MESSAGE: usize = 64 * 1024 * 1024;
/// The longest header line.
const MAX_LINE: usize = 4096;

pub struct Guarded<R> {
    inner: R,
    /// Body bytes still to pass before the next header.
    body_left: usize,
    /// The header line being read.
    line: Vec<u8>,
    /// The Content-Length of the header being read.
    length: Option<usize>,
}

impl<R> Guarded<R> {
    pub fn new(inner: R) -> Self {
        Guarded {
            inner,
            body_left: 0,
            line: Vec::new(),
            length: None,
        }
    }

    /// Follows the bytes; an error for a message too large or a header gone wrong.
    fn watch(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let mut i = 0;
        while i < bytes.len() {
            if self.body_left > 0 {
                let n = self.body_left.min(bytes.len() - i);
                self.body_left -= n;
                i += n;
                continue;
            }
            let b = bytes[i];
            i += 1;
            if b != b'\n' {
                if self.line.len() >= MAX_LINE {
                    return Err(refused("a header line longer than 4096 bytes"));
                }
                self.line.push(b);
                continue;
            }
            let line = std::mem::take(&mut self.line);
            // Read exactly as async-lsp reads a header (`Message::read`): a line ending in
            // "\r\n", "name: value" split at the first ": ", the name compared without
            // case, the value not trimmed, the last Content-Length winning. Anything it
            // would read differently is refused here, so the two never disagree on where a
            // message ends.
            let text =
                std::str::from_utf8(&line).map_err(|_| refused("a header that is not UTF-8"))?;
            let text = text
                .strip_suffix('\r')
                .ok_or_else(|| refused("a header line not ended by CR LF"))?;
            if text.is_empty() {
                // The end of the header: the body follows.
                self.body_left = self.length.take().unwrap_or(0);
                continue;
            }
            let (name, value) = text
                .split_once(": ")
                .ok_or_else(|| refused("a header line without \": \""))?;
            if name.eq_ignore_ascii_case("Content-Length") {
                let n: usize = value
                    .parse()
                    .map_err(|_| refused("a Content-Length that is not a number"))?;
                if n > MAX_MESSAGE {
                    return Err(refused(&format!(
                        "a message of {n} bytes, more than the {MAX_MESSAGE} a server may send"
                    )));
                }
                self.length = Some(n);
            }
        }
        Ok(())
    }
}

fn refused(what: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("the server sent {what}"),
    )
}

impl<R: AsyncRead + Unpin> AsyncRead for Guarded<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(n)) => match this.watch(&buf[..n]) {
                Ok(()) => Poll::Ready(Ok(n)),
                Err(e) => Poll::Ready(Err(e)),
            },
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_messages_pass_and_a_huge_one_is_refused() {
        let mut g = Guarded::new(futures::io::empty());
        let body = r#"{"jsonrpc":"2.0","method":"x"}"#;
        let msg = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        // Split anywhere, twice over.
        for chunk in msg.as_bytes().chunks(7).chain(msg.as_bytes().chunks(3)) {
            g.watch(chunk).unwrap();
        }
        let err = g
            .watch(b"Content-Length: 1000000000000\r\n\r\n")
            .unwrap_err();
        assert!(err.to_string().contains("1000000000000 bytes"), "{err}");
        let mut g = Guarded::new(futures::io::empty());
        assert!(g.watch(&vec![b'x'; MAX_LINE + 1]).is_err());
        let mut g = Guarded::new(futures::io::empty());
        assert!(g.watch(b"Content-Length: lots\r\n").is_err());
        // A name with a space after it is no Content-Length to async-lsp, and none here:
        // both read the next message where it starts, and its length is checked.
        let mut desync = b"Content-Length: 30\r\nContent-Length : 94\r\n\r\n".to_vec();
        desync.extend_from_slice(&[b'x'; 30]);
        desync.extend_from_slice(b"Content-Length: 17592186044416\r\n\r\n");
        assert!(Guarded::new(futures::io::empty()).watch(&desync).is_err());
        for bad in [
            &b" Content-Length: 3\r\n"[..],
            b"Content-Length: 3\n",
            b"Content-Length:3\r\n",
        ] {
            let mut g = Guarded::new(futures::io::empty());
            let r = g.watch(bad);
            // Either refused, or read exactly as async-lsp reads it (a header without a
            // length): never a length async-lsp would not see.
            assert!(r.is_err() || g.length.is_none(), "{bad:?}");
        }
    }
}
