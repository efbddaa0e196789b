//! The checks of the `http_wire` fuzz target, behind the `fuzzing` feature: they panic
//! on purpose when a property fails, so they are never in a production build.
//!
//! Invariant: any bytes are a fair input; a panic here is a bug in [`crate::http`].

use crate::http::headers::{decode_value, encode_value};
use crate::http::sse::{Block, Event, Parser, write_event};

/// The header and SSE codecs on arbitrary bytes: nothing panics them, every header
/// value round-trips through the sentinel, a stream reads the same however it is split
/// and holds no more than it was given, and every event written reads back.
pub fn http_wire(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    // Headers: any text survives the sentinel, and any value decodes or is refused.
    let encoded = encode_value(&text);
    assert!(encoded.bytes().all(|b| (0x20..0x7f).contains(&b)));
    assert_eq!(decode_value(&encoded).as_deref(), Ok(&*text));
    if let Ok(decoded) = decode_value(&text) {
        let again = encode_value(&decoded);
        assert_eq!(decode_value(&again).as_deref(), Ok(&*decoded));
    }
    // SSE: the same blocks whole or split where the first byte says.
    let whole = blocks(&[data]);
    let at = data
        .first()
        .map_or(0, |&b| usize::from(b) % (data.len() + 1));
    assert_eq!(blocks(&[&data[..at], &data[at..]]), whole);
    // An event written with the input as its data (and, if it can carry it, its id)
    // reads back with its line breaks as `\n`.
    let mut half = text.len() / 2;
    while !text.is_char_boundary(half) {
        half -= 1;
    }
    let (id, body) = text.split_at(half);
    let id = (!id.contains(['\r', '\n', '\0'])).then_some(id);
    let mut out = Vec::new();
    write_event(&mut out, id, body).expect("an id without line breaks is carried");
    let want = Event {
        id: id.map(str::to_owned),
        event: None,
        data: body.replace("\r\n", "\n").replace('\r', "\n"),
    };
    assert_eq!(blocks(&[&out]), vec![Block::Event(want)]);
}

fn blocks(chunks: &[&[u8]]) -> Vec<Block> {
    let mut p = Parser::new();
    let mut out = Vec::new();
    let mut given = 0;
    for c in chunks {
        p.push(c);
        given += c.len();
        while let Some(b) = p.next_block() {
            out.push(b);
        }
        assert!(p.buffered() <= given);
    }
    out
}
