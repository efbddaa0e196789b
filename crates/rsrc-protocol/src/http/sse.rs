//! Server-Sent Events as Streamable HTTP uses them: the framing a server writes (an
//! optional `id:` line, `data:` lines, a blank line; a comment line to keep an idle stream
//! open) and one incremental [`Parser`] for whoever reads a stream (the client, the test
//! peers), following the WHATWG event-stream rules.
//!
//! Invariants:
//! - What [`write_event`] writes, [`Parser`] reads back as the same id and data, whatever
//!   line breaks the data holds (each becomes `\n`) and however the bytes are split.
//! - The parser holds only the block in progress ([`Parser::buffered`] says how much, so a
//!   reader can bound it); every byte is scanned once, however small the chunks.
//! - Lines end with `\r\n`, `\n` or `\r`; text is UTF-8, invalid sequences replaced; a
//!   leading byte-order mark is skipped.

use std::fmt;

/// What opens an event's data (after its `id:` line, if any).
pub const DATA: &[u8] = b"data: ";
/// What ends an event: the end of its last line and a blank line.
pub const END: &[u8] = b"\n\n";
/// A comment-only block: keeps an idle connection open through proxies; readers skip it.
pub const KEEP_ALIVE: &[u8] = b":\n\n";

/// What opens an event with id `id`, up to its data: `id: {id}\ndata: `. The data that
/// follows must be one line (a JSON message has no raw line break), then [`END`].
pub fn opening(id: &str) -> String {
    format!("id: {id}\ndata: ")
}

/// An id an event cannot carry: it holds a line break or a NUL (readers ignore such an
/// id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidId;

impl fmt::Display for InvalidId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an SSE event id cannot hold a line break or NUL")
    }
}

impl std::error::Error for InvalidId {}

/// Writes one whole event: `id`, then each line of `data` as a `data:` line, then a
/// blank line. Nothing is written when the id cannot be carried.
pub fn write_event(out: &mut Vec<u8>, id: Option<&str>, data: &str) -> Result<(), InvalidId> {
    if let Some(id) = id {
        if id.contains(['\r', '\n', '\0']) {
            return Err(InvalidId);
        }
        out.extend_from_slice(b"id: ");
        out.extend_from_slice(id.as_bytes());
        out.push(b'\n');
    }
    let mut rest = data;
    loop {
        let end = rest.find(['\r', '\n']).unwrap_or(rest.len());
        out.extend_from_slice(DATA);
        out.extend_from_slice(&rest.as_bytes()[..end]);
        out.push(b'\n');
        if end == rest.len() {
            break;
        }
        let skip = if rest[end..].starts_with("\r\n") {
            2
        } else {
            1
        };
        rest = &rest[end + skip..];
    }
    out.push(b'\n');
    Ok(())
}

/// One event read from a stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    /// Its `id`, if it carried one.
    pub id: Option<String>,
    /// Its `event` type, if it named one.
    pub event: Option<String>,
    /// Its data lines joined with `\n` (empty for an event with only an id: a place to
    /// resume from).
    pub data: String,
}

/// What one block of a stream (the lines up to a blank line) was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    /// An event: at least one `id`, `event` or `data` field.
    Event(Event),
    /// Only comment lines (a keep-alive).
    Comment,
}

/// An incremental event-stream reader: bytes in ([`Parser::push`]), whole blocks out
/// ([`Parser::next_block`]).
#[derive(Debug, Default)]
pub struct Parser {
    /// Bytes not yet read as lines.
    buf: Vec<u8>,
    /// Where the next line starts in `buf`.
    start: usize,
    /// How far `buf` has been searched for the end of that line.
    scanned: usize,
    /// The last line ended with `\r`: a `\n` right after it belongs to it.
    after_cr: bool,
    /// The stream's first bytes have been looked at (for a byte-order mark).
    begun: bool,
    /// The block in progress.
    block: Partial,
}

#[derive(Debug, Default)]
struct Partial {
    id: Option<String>,
    event: Option<String>,
    /// Its data lines so far, joined with `\n`, as the bytes received (read as UTF-8
    /// once the block ends, so what is held is what was given).
    data: Vec<u8>,
    data_lines: usize,
    comments: bool,
}

impl Parser {
    /// A reader at the start of a stream.
    pub fn new() -> Self {
        Parser::default()
    }

    /// Adds the stream's next bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.scanned = 0;
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes held for the block in progress: its unfinished line and the data read so far.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start + self.block.data.len()
    }

    /// The next whole block, if the bytes pushed so far complete one.
    pub fn next_block(&mut self) -> Option<Block> {
        if !self.begun {
            if self.buf.len() < 3 && b"\xEF\xBB\xBF".starts_with(&self.buf) {
                return None;
            }
            self.begun = true;
            if self.buf.starts_with(b"\xEF\xBB\xBF") {
                self.start = 3;
                self.scanned = 3;
            }
        }
        loop {
            let line = self.next_line()?;
            if let Some(block) = self.take_line(line) {
                self.compact();
                return Some(block);
            }
        }
    }

    /// The next whole event, comments skipped.
    pub fn next_event(&mut self) -> Option<Event> {
        loop {
            if let Block::Event(event) = self.next_block()? {
                return Some(event);
            }
        }
    }

    /// The bounds of the next whole line in `buf` (its end excluded), consuming its end.
    fn next_line(&mut self) -> Option<(usize, usize)> {
        if self.after_cr && self.start < self.buf.len() {
            self.after_cr = false;
            if self.buf[self.start] == b'\n' {
                self.start += 1;
                self.scanned = self.scanned.max(self.start);
            }
        }
        let from = self.scanned.max(self.start);
        let Some(at) = self.buf[from..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
        else {
            self.scanned = self.buf.len();
            return None;
        };
        let end = from + at;
        let line = (self.start, end);
        if self.buf[end] == b'\r' {
            self.after_cr = true;
        }
        self.start = end + 1;
        self.scanned = self.start;
        Some(line)
    }

    /// Reads one line into the block in progress; the block, at a blank line ending one.
    fn take_line(&mut self, (from, to): (usize, usize)) -> Option<Block> {
        let line = &self.buf[from..to];
        let b = &mut self.block;
        if line.is_empty() {
            let block = std::mem::take(b);
            if block.id.is_some() || block.event.is_some() || block.data_lines > 0 {
                return Some(Block::Event(Event {
                    id: block.id,
                    event: block.event,
                    data: lossy(&block.data),
                }));
            }
            return block.comments.then_some(Block::Comment);
        }
        if line.starts_with(b":") {
            b.comments = true;
            return None;
        }
        let (field, value) = match line.iter().position(|&c| c == b':') {
            Some(at) => (&line[..at], &line[at + 1..]),
            None => (line, &[][..]),
        };
        let value = value.strip_prefix(b" ").unwrap_or(value);
        match field {
            b"data" => {
                if b.data_lines > 0 {
                    b.data.push(b'\n');
                }
                b.data.extend_from_slice(value);
                b.data_lines += 1;
            }
            b"id" if !value.contains(&0) => b.id = Some(lossy(value)),
            b"event" => b.event = Some(lossy(value)),
            _ => {}
        }
        None
    }

    /// Drops the lines already read, once they are most of the buffer.
    fn compact(&mut self) {
        if self.start > 0 && self.start * 2 >= self.buf.len() {
            self.buf.drain(..self.start);
            self.scanned -= self.start;
            self.start = 0;
        }
    }
}

/// `bytes` as text, an invalid sequence read as U+FFFD.
fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(chunks: &[&[u8]]) -> Vec<Block> {
        let mut p = Parser::new();
        let mut out = Vec::new();
        for c in chunks {
            p.push(c);
            while let Some(b) = p.next_block() {
                out.push(b);
            }
        }
        out
    }

    fn event(id: Option<&str>, data: &str) -> Block {
        Block::Event(Event {
            id: id.map(str::to_owned),
            event: None,
            data: data.to_owned(),
        })
    }

    #[test]
    fn events_are_read_across_chunks_and_line_endings() {
        let got = blocks(&[
            b": keep-alive\n\nid: 0-1\ndata: {\"a\"",
            b":1}\n\nid: 0-2\r\ndata: x\r\n\r",
            b"\ndata:y\rdata: z\r\r",
        ]);
        assert_eq!(
            got,
            vec![
                Block::Comment,
                event(Some("0-1"), "{\"a\":1}"),
                event(Some("0-2"), "x"),
                event(None, "y\nz"),
            ]
        );
    }

    #[test]
    fn a_primed_id_is_an_event_without_data_and_blank_lines_are_nothing() {
        let got = blocks(&[b"\xEF\xBB", b"\xBFid: 3-0\ndata: \n\n\n\nevent: x\n\n"]);
        assert_eq!(
            got,
            vec![
                event(Some("3-0"), ""),
                Block::Event(Event {
                    id: None,
                    event: Some("x".into()),
                    data: String::new()
                })
            ]
        );
    }

    #[test]
    fn only_the_block_in_progress_is_held() {
        let mut p = Parser::new();
        p.push(b"data: done\n\ndata: ");
        assert!(p.next_block().is_some());
        assert!(p.next_block().is_none());
        p.push(&[b'x'; 1000]);
        assert!(p.next_block().is_none());
        assert_eq!(p.buffered(), 1006);
        p.push(b"\n");
        assert!(p.next_block().is_none());
        assert_eq!(p.buffered(), 1000, "the data read so far");
    }

    #[test]
    fn what_is_written_reads_back_split_anywhere() {
        let mut out = Vec::new();
        write_event(&mut out, Some("7-1"), "{\"a\":1}").unwrap();
        write_event(&mut out, None, "two\r\nlines\rand\nmore").unwrap();
        write_event(&mut out, Some(""), " spaced ").unwrap();
        out.extend_from_slice(KEEP_ALIVE);
        let want = vec![
            event(Some("7-1"), "{\"a\":1}"),
            event(None, "two\nlines\nand\nmore"),
            event(Some(""), " spaced "),
            Block::Comment,
        ];
        for split in 0..out.len() {
            assert_eq!(blocks(&[&out[..split], &out[split..]]), want, "at {split}");
        }
        let one_by_one: Vec<&[u8]> = out.chunks(1).collect();
        assert_eq!(blocks(&one_by_one), want);
        assert_eq!(write_event(&mut out, Some("a\nb"), "x"), Err(InvalidId));
    }

    #[test]
    fn the_server_framing_is_an_event() {
        let mut out = opening("2-5").into_bytes();
        out.extend_from_slice(b"{}");
        out.extend_from_slice(END);
        assert_eq!(blocks(&[&out]), vec![event(Some("2-5"), "{}")]);
    }
}
