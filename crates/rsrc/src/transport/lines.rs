//! Newline-delimited framing with a maximum line length.
//!
//! Invariants:
//! - Memory is bounded by the maximum line length plus one read chunk: a longer line is
//!   never buffered whole. Its first [`PREFIX_KEEP`] bytes are kept (to recover the
//!   request id), the rest is skipped up to the next newline, and the stream continues.
//! - A UTF-8 byte order mark at the start of a line and a `\r` before the newline are
//!   tolerated; blank lines are skipped. A final line without a newline is still a line.

use tokio::io::{AsyncRead, AsyncReadExt};

/// How many bytes of an over-long line are kept.
pub const PREFIX_KEEP: usize = 4096;

const CHUNK: usize = 64 * 1024;
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One frame read from the stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A complete line, without its newline.
    Line(&'a [u8]),
    /// A line longer than the limit was discarded; this is its beginning (at most
    /// [`PREFIX_KEEP`] bytes).
    TooLong(Vec<u8>),
}

/// Reads frames from an async byte stream.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    /// Start of the unconsumed data in `buf`.
    start: usize,
    /// How much of `buf[start..]` is known to hold no newline.
    scanned: usize,
    max_line: usize,
    /// While skipping the rest of an over-long line: its kept prefix.
    skipping: Option<Vec<u8>>,
    /// An over-long line that ended, waiting to be reported.
    too_long: Option<Vec<u8>>,
    eof: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader that accepts lines of at most `max_line` bytes.
    pub fn new(inner: R, max_line: usize) -> Self {
        LineReader {
            inner,
            buf: Vec::with_capacity(CHUNK),
            start: 0,
            scanned: 0,
            max_line: max_line.max(1),
            skipping: None,
            too_long: None,
            eof: false,
        }
    }

    /// Whether the stream has ended (buffered frames may remain).
    pub fn is_eof(&self) -> bool {
        self.eof
    }

    fn keep(&self, line: &[u8]) -> Vec<u8> {
        line[..line.len().min(PREFIX_KEEP)].to_vec()
    }

    /// The next frame already in the buffer, without I/O.
    pub fn next_buffered(&mut self) -> Option<Frame<'_>> {
        if let Some(prefix) = self.too_long.take() {
            return Some(Frame::TooLong(prefix));
        }
        if self.skipping.is_some() {
            return None;
        }
        loop {
            let pending = &self.buf[self.start..];
            let line_start = self.start;
            let line_end = match memchr::memchr(b'\n', &pending[self.scanned..]) {
                Some(pos) => {
                    let end = line_start + self.scanned + pos;
                    self.start = end + 1;
                    end
                }
                None if self.eof && !pending.is_empty() => {
                    self.start = self.buf.len();
                    self.buf.len()
                }
                None => {
                    self.scanned = pending.len();
                    return None;
                }
            };
            self.scanned = 0;
            let line = &self.buf[line_start..line_end];
            if line.len() > self.max_line {
                return Some(Frame::TooLong(self.keep(line)));
            }
            let line = trim(line);
            if !line.iter().all(u8::is_ascii_whitespace) {
                return Some(Frame::Line(line));
            }
        }
    }

    /// Reads more bytes. Returns `false` at the end of the stream. Call it only after
    /// [`LineReader::next_buffered`] returned `None`. Cancel-safe.
    pub async fn fill(&mut self) -> std::io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        self.compact();
        if self.skipping.is_none() && self.buf.len() - self.start > self.max_line {
            // The line in progress is already too long: keep its prefix, drop the rest.
            self.skipping = Some(self.keep(&self.buf[self.start..]));
            self.clear();
        }
        // Reading into spare capacity keeps this cancel-safe: if the future is dropped
        // while waiting, the buffer is unchanged.
        self.buf.reserve(CHUNK);
        let n = self.inner.read_buf(&mut self.buf).await?;
        if n == 0 {
            self.eof = true;
            // A stream that ends inside an over-long line still reports it.
            self.too_long = self.skipping.take();
            return Ok(false);
        }
        if self.skipping.is_some() {
            match memchr::memchr(b'\n', &self.buf[self.start..]) {
                Some(pos) => {
                    self.start += pos + 1;
                    self.scanned = 0;
                    self.too_long = self.skipping.take();
                }
                None => self.clear(),
            }
        }
        Ok(true)
    }

    fn clear(&mut self) {
        self.buf.clear();
        self.start = 0;
        self.scanned = 0;
    }

    fn compact(&mut self) {
        if self.start == self.buf.len() {
            self.clear();
        } else if self.start > 0 && self.start >= self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        if self.buf.capacity() > 4 * CHUNK && self.buf.len() < CHUNK {
            self.buf.shrink_to(2 * CHUNK);
        }
    }
}

fn trim(mut line: &[u8]) -> &[u8] {
    if let Some(rest) = line.strip_prefix(BOM) {
        line = rest;
    }
    if let Some(rest) = line.strip_suffix(b"\r") {
        line = rest;
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], max_line: usize) -> Vec<Result<String, Vec<u8>>> {
        let mut r = LineReader::new(input, max_line);
        let mut out = Vec::new();
        loop {
            while let Some(f) = r.next_buffered() {
                out.push(match f {
                    Frame::Line(l) => Ok(String::from_utf8(l.to_vec()).unwrap()),
                    Frame::TooLong(p) => Err(p),
                });
            }
            if !r.fill().await.unwrap() {
                while let Some(f) = r.next_buffered() {
                    out.push(match f {
                        Frame::Line(l) => Ok(String::from_utf8(l.to_vec()).unwrap()),
                        Frame::TooLong(p) => Err(p),
                    });
                }
                return out;
            }
        }
    }

    #[tokio::test]
    async fn lines_are_split_trimmed_and_blank_ones_skipped() {
        let got = frames(b"\xEF\xBB\xBF{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\":3}", 100).await;
        assert_eq!(
            got,
            vec![
                Ok("{\"a\":1}".into()),
                Ok("{\"b\":2}".into()),
                Ok("{\"c\":3}".into())
            ]
        );
    }

    #[tokio::test]
    async fn an_over_long_line_is_reported_once_and_the_stream_continues() {
        let mut input = b"{\"id\":1}\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 300_000));
        input.extend(b"\n{\"id\":2}\n");
        let got = frames(&input, 1000).await;
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], Ok("{\"id\":1}".into()));
        let prefix = got[1].clone().unwrap_err();
        assert!(prefix.len() <= PREFIX_KEEP && prefix.iter().all(|&b| b == b'x'));
        assert_eq!(got[2], Ok("{\"id\":2}".into()));
    }

    #[tokio::test]
    async fn a_long_line_within_one_read_is_also_refused() {
        let got = frames(b"0123456789\nok\n", 5).await;
        assert_eq!(got, vec![Err(b"0123456789".to_vec()), Ok("ok".into())]);
    }

    #[tokio::test]
    async fn a_stream_ending_inside_an_over_long_line_reports_it() {
        let input = vec![b'y'; 200_000];
        let got = frames(&input, 10).await;
        assert_eq!(got.len(), 1);
        assert!(got[0].is_err());
    }

    #[tokio::test]
    async fn memory_stays_bounded_while_skipping() {
        let input = vec![b'z'; 10 * 1024 * 1024];
        let mut r = LineReader::new(&input[..], 1024);
        let mut peak = 0;
        while r.fill().await.unwrap() {
            while r.next_buffered().is_some() {}
            peak = peak.max(r.buf.capacity());
        }
        assert!(peak <= 4 * CHUNK, "buffer grew to {peak} bytes");
    }
}
