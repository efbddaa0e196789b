//! Entry points for the fuzz targets (`fuzz/fuzz_targets/`) and for the replay of their
//! corpora (`tests/fuzz_corpus.rs`): each takes arbitrary bytes, runs one parser that
//! faces untrusted input, and panics only when one of the invariants it checks breaks.
//! Not part of the API: hidden, and free to change with the targets.
//!
//! Invariant checked everywhere: no input panics, hangs or grows memory beyond the
//! parser's bound; plus each entry point's own, stated on it.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::FutureExt as _;
use rsrc_protocol::Resource;
use tokio::io::{AsyncRead, ReadBuf};

use crate::cursor::{CursorSealer, ListKind};
use crate::server::{Handled, Session};
use crate::transport::{Frame, LineReader, PREFIX_KEEP};
use crate::{Notifier, ResourceSet, Server};

thread_local! {
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime");
    static SERVER: Server = Server::builder("fuzz", "0")
        .mount(
            "x:",
            ResourceSet::new()
                .with_text(Resource::new("x:///a", "a"), "text")
                .with_collection(Resource::new("x:///d", "d"))
                .with_text(Resource::new("x:///d/b", "b"), "b")
                .with_subscriptions(),
        )
        .build()
        .expect("the fuzz server builds");
}

/// One message through the engine (decode, gate, dispatch, a provider, encode), on a
/// fresh session, after an `initialize` when the input asks for it (first byte odd):
/// whatever the bytes, the engine answers or stays silent without panicking, and any
/// reply it writes is one JSON value.
pub fn jsonrpc(data: &[u8]) {
    let _ = rsrc_protocol::jsonrpc::decode(data);
    RUNTIME.with(|rt| {
        let _in_runtime = rt.enter();
        SERVER.with(|server| {
            let session = Arc::new(Session::new(Notifier::discard()));
            if data.first().is_some_and(|b| b & 1 == 1) {
                let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"0"}}}"#;
                let _ = server.handle(&session, init);
            }
            let reply = match server.handle(&session, data) {
                Handled::None => return,
                Handled::Reply(r) => Some(r),
                // A handler that waits (a listen, say) is dropped: cancellation.
                Handled::Pending(f) => f.now_or_never().flatten(),
            };
            if let Some(reply) = reply {
                let mut out = Vec::new();
                reply.encode(&mut out);
                assert!(
                    serde_json::from_slice::<serde_json::Value>(&out).is_ok(),
                    "the engine wrote a reply that is not JSON: {}",
                    String::from_utf8_lossy(&out)
                );
            }
        });
    });
}

/// A reader that hands out the input a few bytes at a time, so that lines cross reads.
struct Chunked<'a> {
    data: &'a [u8],
    step: usize,
}

impl AsyncRead for Chunked<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let n = self.step.min(self.data.len()).min(buf.remaining());
        let (now, rest) = self.data.split_at(n);
        buf.put_slice(now);
        self.data = rest;
        Poll::Ready(Ok(()))
    }
}

/// Line framing: the first byte sets the read size, the rest is the stream. Every line
/// is within the limit and holds no newline, an over-long line keeps at most
/// [`PREFIX_KEEP`] bytes, and there are no more frames than lines.
pub fn lines(data: &[u8]) {
    const MAX_LINE: usize = 64;
    let Some((&step, stream)) = data.split_first() else {
        return;
    };
    let mut reader = LineReader::new(
        Chunked {
            data: stream,
            step: usize::from(step % 97) + 1,
        },
        MAX_LINE,
    );
    let mut frames = 0usize;
    let most = stream.iter().filter(|&&b| b == b'\n').count() + 1;
    loop {
        while let Some(frame) = reader.next_buffered() {
            frames += 1;
            match frame {
                Frame::Line(line) => {
                    assert!(line.len() <= MAX_LINE && !line.contains(&b'\n'));
                }
                Frame::TooLong(prefix) => assert!(prefix.len() <= PREFIX_KEEP),
            }
        }
        let more = reader
            .fill()
            .now_or_never()
            .expect("an in-memory read never waits")
            .expect("an in-memory read never fails");
        if !more && reader.next_buffered().is_none() {
            break;
        }
    }
    assert!(frames <= most, "{frames} frames from {most} lines");
}

/// Cursors: any text opens to an error or a position, never a panic; and any position
/// sealed with a mount opens back to exactly that, for its own listing only.
pub fn cursor(data: &[u8]) {
    let sealer = CursorSealer::new([7; 32]);
    let text = String::from_utf8_lossy(data);
    for kind in [ListKind::Resources, ListKind::Children, ListKind::Templates] {
        let _ = sealer.open(&text, kind, "");
        let _ = sealer.open(&text, kind, "x:///d");
    }
    let mount = data
        .get(..2)
        .map_or(0, |m| u16::from_be_bytes([m[0], m[1]]));
    let sealed = sealer.seal(ListKind::Children, "x:///d", mount, data);
    assert_eq!(
        sealer.open(&sealed, ListKind::Children, "x:///d").ok(),
        Some((mount, data.to_vec()))
    );
    assert!(sealer.open(&sealed, ListKind::Children, "x:///e").is_err());
    assert!(sealer.open(&sealed, ListKind::Resources, "x:///d").is_err());
}

/// URIs and IRIs from clients: the mapping to a URI never panics, and what it gives
/// either passes validation (then it is ASCII) or is refused with a reason.
pub fn uri(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(mapped) = crate::uri::to_uri(text) {
        if crate::uri::validate(&mapped, 16 * 1024).is_ok() {
            assert!(mapped.is_ascii());
        }
        if text.is_ascii() {
            assert_eq!(&*mapped, text, "an ASCII URI is left as it is");
        }
    }
}

/// SEP-2564 filters (`crate::filter`): the first line holds tab-separated patterns, the
/// other lines are texts to match. Any patterns compile or are refused with a reason,
/// never a panic; a pattern without wildcards, classes or escapes matches exactly itself;
/// and a URI the filter matches never lies below a prefix the filter says nothing can
/// match below (`may_match_below`, which lets a walk skip a subtree).
pub fn list_filter(data: &[u8]) {
    use rsrc_protocol::resources::ListFilter;

    use crate::filter::Filter;

    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let patterns: Vec<String> = lines
        .next()
        .unwrap_or_default()
        .split('\t')
        .map(str::to_owned)
        .collect();
    let texts: Vec<&str> = lines.collect();
    for on_uris in [false, true] {
        let filter = if on_uris {
            ListFilter {
                name_patterns: None,
                uri_patterns: Some(patterns.clone()),
            }
        } else {
            ListFilter {
                name_patterns: Some(patterns.clone()),
                uri_patterns: None,
            }
        };
        let f = match Filter::new(&filter) {
            Ok(f) => f.expect("a field with patterns filters"),
            Err(e) => {
                assert!(!e.reason().is_empty());
                continue;
            }
        };
        let matches = |t: &str| {
            if on_uris {
                f.matches_uri(t)
            } else {
                f.matches_name(t)
            }
        };
        for p in &patterns {
            if !p.contains(['*', '?', '[', '\\']) {
                assert!(matches(p), "a literal pattern matches itself: {p:?}");
            }
        }
        for t in &texts {
            if on_uris && matches(t) {
                for (i, _) in t.char_indices() {
                    assert!(f.may_match_below(&t[..i]), "{t:?} lies below {:?}", &t[..i]);
                }
            }
        }
    }
}
