//! [`Reply`]: a response waiting to be encoded straight into a transport's output buffer.
//!
//! Invariant: encoding never fails on the wire. If a result cannot be serialized (a
//! provider put a non-finite number somewhere, say), the bytes written so far are rolled
//! back and an internal-error response with the same id is written instead.
//!
//! A reply may hold part of the budget of content in flight (see [`crate::ByteBudget`]):
//! dropping the reply gives it back, and [`Reply::into_bytes`] hands it on to the encoded
//! bytes, so that it is given back when they are.
//!
//! A reply holding a large text can also be written a piece at a time ([`Streaming`],
//! for the stream transport, and framed by the caller for HTTP bodies and SSE events,
//! [`Reply::into_framed`]): the same bytes as its whole encoding, the text escaped only as
//! the output drains, the budget held until the last piece.

use bytes::Bytes;
use rsrc_protocol::jsonrpc::{self, ErrorCode, ErrorObject, RequestId};
use rsrc_protocol::resources::{Deferred, push_json_escaped};

use crate::budget::Reservation;

/// A result that can write itself, with its response envelope, into an output buffer.
/// (`Any`: an embedding takes the typed result back out, [`Reply::into_result`].)
pub(crate) trait EncodeResult: Send + std::any::Any {
    /// Writes the response; a result holding texts may leave out those of at least `min`
    /// bytes, each recorded in `deferred` with where its escaped bytes go (the others
    /// leave nothing out).
    fn encode(
        &self,
        id: &RequestId,
        out: &mut Vec<u8>,
        min: usize,
        deferred: &mut Vec<Deferred>,
    ) -> serde_json::Result<()>;

    /// About how many bytes `encode` will write, so the buffer grows once.
    fn size_hint(&self) -> usize {
        0
    }
}

macro_rules! encode_with_serde {
    ($($t:ty),* $(,)?) => {$(
        impl EncodeResult for $t {
            fn encode(
                &self,
                id: &RequestId,
                out: &mut Vec<u8>,
                _min: usize,
                _deferred: &mut Vec<Deferred>,
            ) -> serde_json::Result<()> {
                jsonrpc::write_result(out, id, self)
            }
        }
    )*};
}

encode_with_serde!(
    rsrc_protocol::lifecycle::InitializeResult,
    rsrc_protocol::lifecycle::EmptyResult,
    rsrc_protocol::lifecycle::DiscoverResult,
    rsrc_protocol::resources::ListResourcesResult<crate::provider::ListEntry>,
    rsrc_protocol::resources::ListResourceTemplatesResult,
    rsrc_protocol::resources::ResourceMetadataResult,
    rsrc_protocol::completion::CompleteResult,
    rsrc_protocol::subscriptions::SubscriptionsListenResult,
    crate::extension::ExtensionResult,
);

/// Read results are written by hand around the contents, so that blobs go into the
/// buffer as base64 without a JSON escaping pass.
impl EncodeResult for rsrc_protocol::resources::ReadResourceResult {
    fn encode(
        &self,
        id: &RequestId,
        out: &mut Vec<u8>,
        min: usize,
        deferred: &mut Vec<Deferred>,
    ) -> serde_json::Result<()> {
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        serde_json::to_writer(&mut *out, id)?;
        out.extend_from_slice(b",\"result\":");
        self.write_json_deferring(out, min, deferred)?;
        out.push(b'}');
        Ok(())
    }

    fn size_hint(&self) -> usize {
        self.contents
            .iter()
            .map(|c| match &c.body {
                // Text grows a little with escapes; base64 by a third.
                rsrc_protocol::Body::Text(t) => t.len() + t.len() / 16,
                rsrc_protocol::Body::Blob(b) => b.len().div_ceil(3) * 4,
            } + 512)
            .sum()
    }
}

enum Payload {
    Result(RequestId, Box<dyn EncodeResult>),
    Error(Option<RequestId>, ErrorObject),
}

/// A response to one request.
pub struct Reply {
    body: Payload,
    hold: Reservation,
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.body {
            Payload::Result(id, _) => f.debug_tuple("Reply::Result").field(id).finish(),
            Payload::Error(id, e) => f.debug_tuple("Reply::Error").field(id).field(e).finish(),
        }
    }
}

impl Reply {
    /// A result response.
    pub(crate) fn result<T: EncodeResult + 'static>(id: RequestId, result: T) -> Reply {
        Reply {
            body: Payload::Result(id, Box::new(result)),
            hold: Reservation::default(),
        }
    }

    /// An error response; `id` is `None` when the request's id could not be read.
    pub(crate) fn error(id: Option<RequestId>, error: ErrorObject) -> Reply {
        Reply {
            body: Payload::Error(id, error),
            hold: Reservation::default(),
        }
    }

    /// The same reply, holding `hold` until it is dropped or its bytes are.
    pub(crate) fn with_reservation(mut self, hold: Reservation) -> Reply {
        self.hold = hold;
        self
    }

    /// The encoded response (no trailing newline), holding what the reply held of the
    /// budget of content in flight until the bytes are dropped.
    pub fn into_bytes(self) -> Bytes {
        let mut out = Vec::with_capacity(256);
        self.encode(&mut out);
        holding(out, self.hold)
    }

    /// The id this reply answers.
    pub fn id(&self) -> Option<&RequestId> {
        match &self.body {
            Payload::Result(id, _) => Some(id),
            Payload::Error(id, _) => id.as_ref(),
        }
    }

    /// The typed result, fitted to the request's revision, for a transport that encodes
    /// it itself (another SDK's server hosting this engine, as `rsrc-rmcp` does): `T` is
    /// the result type of the method the reply answers (e.g.
    /// [`ReadResourceResult`](rsrc_protocol::resources::ReadResourceResult) for
    /// `resources/read`). An error response, or a result of another type, is handed back
    /// unchanged. What the reply held of the budget of content in flight is given back
    /// here: the caller's own encoding is not accounted.
    pub fn into_result<T: 'static>(self) -> Result<T, Reply> {
        match self.body {
            Payload::Result(id, result) if (&*result as &dyn std::any::Any).is::<T>() => {
                let any: Box<dyn std::any::Any> = result;
                // The check above makes this a cast that cannot fail.
                any.downcast::<T>().map(|t| *t).map_err(|_| {
                    let e = ErrorObject::new(ErrorCode::INTERNAL_ERROR, "internal error");
                    Reply::error(Some(id), e)
                })
            }
            body => Err(Reply {
                body,
                hold: self.hold,
            }),
        }
    }

    /// The typed result (see [`Reply::into_result`]), or the error: for a host that
    /// knows the result type of the method it ran. A result of another type is an
    /// internal error.
    pub fn into_typed<T: 'static>(self) -> Result<T, ErrorObject> {
        self.into_result().map_err(|reply| match reply.body {
            Payload::Error(_, e) => e,
            Payload::Result(..) => ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                format!(
                    "a result of another type than {}",
                    std::any::type_name::<T>()
                ),
            ),
        })
    }

    /// An extension method's result (the tools bridge's, an application's own: JSON its
    /// handler built), or the error, for a host; any other result is encoded to JSON.
    pub fn into_json(self) -> Result<serde_json::Value, ErrorObject> {
        match self.into_result::<crate::extension::ExtensionResult>() {
            Ok(result) => Ok(result.value),
            Err(reply) => match reply.body {
                Payload::Error(_, e) => Err(e),
                Payload::Result(id, result) => {
                    let mut out = Vec::new();
                    let internal = |e: serde_json::Error| {
                        ErrorObject::new(ErrorCode::INTERNAL_ERROR, e.to_string())
                    };
                    result
                        .encode(&id, &mut out, usize::MAX, &mut Vec::new())
                        .map_err(internal)?;
                    #[derive(serde::Deserialize)]
                    struct Envelope {
                        result: serde_json::Value,
                    }
                    serde_json::from_slice::<Envelope>(&out)
                        .map(|e| e.result)
                        .map_err(internal)
                }
            },
        }
    }

    /// The error, if this is an error response.
    pub fn error_object(&self) -> Option<&ErrorObject> {
        match &self.body {
            Payload::Error(_, e) => Some(e),
            Payload::Result(..) => None,
        }
    }

    /// Appends the encoded response (no trailing newline) to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(self.size_hint());
        self.encode_deferring(out, usize::MAX, &mut Vec::new());
    }

    /// About how many bytes the encoded response takes (0 if unknown).
    fn size_hint(&self) -> usize {
        match &self.body {
            Payload::Result(_, result) => result.size_hint(),
            Payload::Error(..) => 0,
        }
    }

    /// Appends the encoded response and a newline to `out`; or, if it holds texts of at
    /// least `min` bytes, returns it as a [`Streaming`] reply, which appends itself a
    /// piece at a time, escaping those texts only as the output drains.
    pub(crate) fn encode_line(self, out: &mut Vec<u8>, min: usize) -> Option<Streaming> {
        let from = out.len();
        self.encode_ending(out, from, b"\n", min).err()
    }

    /// `prefix`, the encoded response and `suffix` (an SSE event's framing, say) as one
    /// message: whole, with what the reply held of the budget of content in flight; or,
    /// if it holds texts of at least `min` bytes, as a [`Streaming`] message, which writes
    /// itself a piece at a time and holds that share until it is dropped.
    pub fn into_framed(self, prefix: &[u8], suffix: &[u8], min: usize) -> Framed {
        let mut out = Vec::with_capacity(prefix.len() + 256);
        out.extend_from_slice(prefix);
        match self.encode_ending(&mut out, 0, suffix, min) {
            Ok(hold) => Framed::Whole(out, hold),
            Err(streaming) => Framed::Streaming(streaming),
        }
    }

    /// Appends the encoded response and `end` to `out` and gives back what the reply held;
    /// or, if it holds texts of at least `min` bytes, takes the bytes of `out` from `from`
    /// on into a [`Streaming`] message, which escapes those texts only as it is written.
    fn encode_ending(
        self,
        out: &mut Vec<u8>,
        from: usize,
        end: &[u8],
        min: usize,
    ) -> Result<Reservation, Streaming> {
        let size = self.size_hint();
        if size < min {
            out.reserve(size + end.len());
            self.encode_deferring(out, usize::MAX, &mut Vec::new());
            out.extend_from_slice(end);
            return Ok(self.hold);
        }
        let mut deferred = Vec::new();
        self.encode_deferring(out, min, &mut deferred);
        out.extend_from_slice(end);
        if deferred.is_empty() {
            return Ok(self.hold);
        }
        for d in &mut deferred {
            d.at -= from;
        }
        Err(Streaming {
            bytes: out.split_off(from),
            at: 0,
            deferred: deferred.into(),
            text_at: 0,
            _hold: self.hold,
        })
    }

    /// Appends the encoded response to `out`, leaving out the texts of at least `min`
    /// bytes ([`EncodeResult::encode`]); on failure, an internal error instead.
    fn encode_deferring(&self, out: &mut Vec<u8>, min: usize, deferred: &mut Vec<Deferred>) {
        let start = out.len();
        let written = match &self.body {
            Payload::Result(id, result) => result.encode(id, out, min, deferred),
            Payload::Error(id, e) => jsonrpc::write_error(&mut *out, id.as_ref(), e),
        };
        if let Err(e) = written {
            tracing::error!(error = %e, id = ?self.id(), "a result could not be encoded");
            out.truncate(start);
            deferred.clear();
            let fallback = ErrorObject::new(ErrorCode::INTERNAL_ERROR, "internal error");
            // Writing into a Vec with a plain error object cannot fail.
            let _ = jsonrpc::write_error(out, self.id(), &fallback);
        }
    }
}

/// A message of [`Reply::into_framed`]: whole, with the reservation the reply held (turn
/// both into bytes holding it with [`holding`]), or a piece at a time.
pub enum Framed {
    /// The whole message, and the reservation the reply held.
    Whole(Vec<u8>, Reservation),
    /// The message, to be written a piece at a time.
    Streaming(Streaming),
}

/// A reply written a piece at a time (`Reply::encode_line`): its encoded bytes with the
/// large texts left out, which are escaped into the output as it drains, so that a large
/// text never sits in memory twice and its escaping overlaps the writing. It holds the
/// reply's share of the budget of content in flight until it is all out.
pub struct Streaming {
    /// The line, newline included, without the deferred texts.
    bytes: Vec<u8>,
    /// How much of `bytes` is out.
    at: usize,
    /// The texts still to escape, in order, each with its place in `bytes`.
    deferred: std::collections::VecDeque<Deferred>,
    /// How much of the first deferred text is out.
    text_at: usize,
    _hold: Reservation,
}

impl Streaming {
    /// Appends the next pieces to `out`, at least one and until `out` holds `max` bytes;
    /// true once the whole line is out.
    pub(crate) fn fill(&mut self, out: &mut Vec<u8>, max: usize) -> bool {
        loop {
            let Some(d) = self.deferred.front() else {
                out.extend_from_slice(&self.bytes[self.at..]);
                self.at = self.bytes.len();
                return true;
            };
            if self.at < d.at {
                out.extend_from_slice(&self.bytes[self.at..d.at]);
                self.at = d.at;
            }
            let text = d.text.as_bytes();
            let end = text
                .len()
                .min(self.text_at + max.saturating_sub(out.len()).max(1));
            push_json_escaped(out, &text[self.text_at..end]);
            self.text_at = end;
            if end == text.len() {
                self.deferred.pop_front();
                self.text_at = 0;
            }
            if out.len() >= max {
                return false;
            }
        }
    }

    /// The next piece, of about `size` bytes, in a buffer of its own; and whether it is
    /// the last.
    pub fn next_piece(&mut self, size: usize) -> (Vec<u8>, bool) {
        let mut out = Vec::with_capacity(size + size / 8);
        let last = self.fill(&mut out, size);
        (out, last)
    }

    /// The last piece [`Streaming::next_piece`] made, holding what this message held of
    /// the budget of content in flight until it is dropped.
    pub fn into_last_piece(self, piece: Vec<u8>) -> Bytes {
        holding(piece, self._hold)
    }
}

/// `bytes`, holding `hold` until they (and every slice of them) are dropped.
pub fn holding(bytes: Vec<u8>, hold: Reservation) -> Bytes {
    if hold.is_empty() {
        return Bytes::from(bytes);
    }
    Bytes::from_owner(Holding { bytes, _hold: hold })
}

/// Encoded bytes with the reservation they hold.
struct Holding {
    bytes: Vec<u8>,
    _hold: Reservation,
}

impl AsRef<[u8]> for Holding {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct Unencodable;

    impl EncodeResult for Unencodable {
        fn encode(
            &self,
            id: &RequestId,
            out: &mut Vec<u8>,
            _min: usize,
            _deferred: &mut Vec<Deferred>,
        ) -> serde_json::Result<()> {
            // Maps with non-string keys cannot be JSON.
            let mut bad = HashMap::new();
            bad.insert(vec![1u8], 1);
            jsonrpc::write_result(out, id, &bad)
        }
    }

    #[test]
    fn a_typed_result_comes_back_out_and_anything_else_stays_a_reply() {
        use rsrc_protocol::lifecycle::EmptyResult;
        let reply = || Reply::result(RequestId::Number(3), EmptyResult::default());
        assert_eq!(
            reply().into_result::<EmptyResult>().unwrap(),
            EmptyResult::default()
        );
        let other = reply().into_result::<String>().unwrap_err();
        assert_eq!(other.id(), Some(&RequestId::Number(3)));
        let mut out = Vec::new();
        other.encode(&mut out);
        assert_eq!(out, br#"{"jsonrpc":"2.0","id":3,"result":{}}"#);
        let error = Reply::error(None, ErrorObject::new(ErrorCode::INTERNAL_ERROR, "x"));
        assert!(
            error
                .into_result::<EmptyResult>()
                .unwrap_err()
                .error_object()
                .is_some()
        );
    }

    #[tokio::test]
    async fn encoded_bytes_hold_the_reservation_of_their_reply_until_dropped() {
        let budget = crate::ByteBudget::new(4096);
        let hold = budget.reserve(4096).await;
        let reply = Reply::result(
            RequestId::Number(1),
            rsrc_protocol::lifecycle::EmptyResult::default(),
        );
        let bytes = reply.with_reservation(hold).into_bytes();
        assert!(bytes.starts_with(br#"{"jsonrpc":"2.0","id":1,"result""#));
        assert_eq!(budget.available(), 0);
        let part = bytes.slice(0..5);
        drop(bytes);
        assert_eq!(budget.available(), 0, "a slice still holds it");
        drop(part);
        assert_eq!(budget.available(), 4096);
    }

    #[tokio::test]
    async fn a_streamed_reply_writes_the_bytes_of_a_whole_one_and_holds_its_reservation() {
        use rsrc_protocol::resources::{ReadResourceResult, Resource, ResourceContents};
        // Escapes, multi-byte characters cut by the pieces, a blob between two large
        // texts and a small text after them.
        let big = "a \"quoted\" line\twith déjà vu 東京 \\ and \u{1}\n".repeat(200);
        let text = |uri: &str, t: &str| ResourceContents::text(Resource::new(uri, "t"), t);
        let result = || ReadResourceResult {
            contents: vec![
                text("t:///1", &big),
                ResourceContents::blob(Resource::new("t:///b", "b"), b"\x00\x01binary".to_vec()),
                text("t:///2", &big[..big.len() / 2]),
                text("t:///3", "small"),
            ],
            ..ReadResourceResult::default()
        };
        let mut whole = Vec::new();
        Reply::result(RequestId::Number(7), result()).encode(&mut whole);
        whole.push(b'\n');

        let budget = crate::ByteBudget::new(4096);
        let hold = budget.reserve(4096).await;
        let mut out = b"before\n".to_vec();
        let mut streaming = Reply::result(RequestId::Number(7), result())
            .with_reservation(hold)
            .encode_line(&mut out, 1000)
            .expect("texts over the threshold stream");
        let mut pieces = 0;
        loop {
            let max = out.len() + 333;
            if streaming.fill(&mut out, max) {
                break;
            }
            pieces += 1;
            assert_eq!(budget.available(), 0, "held while streaming");
        }
        drop(streaming);
        assert!(pieces > 10, "{pieces} pieces");
        assert_eq!(out[..7], *b"before\n");
        assert_eq!(
            String::from_utf8_lossy(&out[7..]),
            String::from_utf8_lossy(&whole)
        );
        assert_eq!(budget.available(), 4096);

        // Under the threshold, or without a text to defer, the line is written at once.
        let mut out = Vec::new();
        assert!(
            Reply::result(RequestId::Number(7), result())
                .encode_line(&mut out, usize::MAX)
                .is_none()
        );
        assert_eq!(out, whole);
    }

    #[test]
    fn an_unencodable_result_becomes_an_internal_error_with_the_same_id() {
        let mut out = b"prefix".to_vec();
        Reply::result(RequestId::Number(4), Unencodable).encode(&mut out);
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"prefix{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"internal error"}}"#
        );
    }
}
