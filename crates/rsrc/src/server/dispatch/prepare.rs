//! Step one of a message: decoding it once. A request's params go into the type its
//! method declares ([`Method::Params`]), so that a transport can read the request's id,
//! method, revision and mirrored name from the typed request ([`Prepared`]) instead of
//! parsing the body again.
//!
//! Invariant: decoding never fails a message silently: params that do not decode, or a
//! method the server does not serve, are recorded with what they still say ([`Peek`]),
//! for the gate to refuse with the error of the revision they name.

use rsrc_protocol::jsonrpc::{self, Message, Notification, Request, RequestId};
use rsrc_protocol::lifecycle::{CancelledParams, EmptyParams};
use rsrc_protocol::meta::RequestMeta;
use rsrc_protocol::methods::{
    Cancelled, Complete, DirectoryRead, Discover, Initialize, Initialized, ListResourceTemplates,
    ListResources, Method, NotificationMethod, Ping, ReadResource, ResourceMetadata, SetLevel,
    Subscribe, SubscriptionsListen, Unsubscribe,
};
use rsrc_protocol::{ErrorCode, ErrorObject};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use std::sync::Arc;

use super::super::gate::{Asked, Eras, Kind};
use super::super::hosted::{HeldChanges, HostRequest};
use super::super::inside::ServerState;
use super::super::reply::Reply;
use super::super::session::Session;
use crate::extension::ExtensionParams;

/// One decoded message.
#[derive(Debug)]
pub enum Incoming {
    /// A request, ready to [`run`](crate::Server::run).
    Request(Prepared),
    /// A notification, for [`Server::notify`](crate::Server::notify).
    Notification(Notice),
    /// A response: this server sends no requests, so there is nothing to match it with.
    Response,
    /// Not a valid message: the error to answer (with the request's id when it could be
    /// read unambiguously).
    Malformed(Reply),
}

/// A request decoded once: its id, method, and params in the type its method declares.
#[derive(Debug)]
pub struct Prepared {
    pub(super) id: RequestId,
    pub(super) method: Box<str>,
    /// Boxed: params with their `_meta` are a few hundred bytes, moved several times.
    pub(super) call: Box<Call>,
    /// The trace context the transport carried (the HTTP `traceparent` and
    /// `tracestate` headers), used when `_meta` carries none.
    pub(super) carried: Option<Box<[Option<String>; 2]>>,
    /// A listen stream's changes, held since its host acknowledged it.
    pub(super) held: Option<HeldChanges>,
}

impl Prepared {
    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// Adds the trace context the transport carried (over HTTP, the `traceparent` and
    /// `tracestate` headers); `params._meta`'s, when it has one, comes first (SEP-414).
    #[must_use]
    pub fn with_transport_trace(
        mut self,
        traceparent: Option<String>,
        tracestate: Option<String>,
    ) -> Self {
        if traceparent.is_some() {
            self.carried = Some(Box::new([traceparent, tracestate]));
        }
        self
    }

    /// The request's method.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The revision the request names in `_meta`, verbatim, if it names one.
    pub fn revision(&self) -> Option<&str> {
        self.call.meta()?.protocol_version.as_deref()
    }

    /// Whether the request names a per-request (2026-07-28) revision in `_meta`.
    pub fn is_modern(&self) -> bool {
        Asked::of(self.call.meta()).is_modern()
    }

    /// The member Streamable HTTP mirrors in `Mcp-Name`: the `uri` of `resources/read`,
    /// the `name` of `tools/call` and `prompts/get`. `None` if the method mirrors none,
    /// or its params lack it or did not decode.
    pub fn name(&self) -> Option<&str> {
        let member = self.mirrored_member()?;
        match (&*self.call, member) {
            (Call::Read(p), _) => Some(&p.uri),
            (Call::Extension(p), _) => p.rest.get(member)?.as_str(),
            (Call::Unknown(peek) | Call::Invalid { peek, .. }, "uri") => peek.uri.as_deref(),
            (Call::Unknown(peek) | Call::Invalid { peek, .. }, _) => peek.name.as_deref(),
            _ => None,
        }
    }

    /// The params member `Mcp-Name` mirrors for this method, if it mirrors one.
    pub fn mirrored_member(&self) -> Option<&'static str> {
        rsrc_protocol::http::headers::mirrored_member(&self.method)
    }
}

/// A decoded notification.
#[derive(Debug)]
pub struct Notice(NoticeKind);

#[derive(Debug)]
enum NoticeKind {
    Initialized,
    Cancelled(Option<RequestId>),
    Other(Box<str>),
}

/// The methods the engine serves itself (an extension cannot shadow them).
pub(crate) const ENGINE_METHODS: [&str; 13] = [
    Initialize::NAME,
    Ping::NAME,
    SetLevel::NAME,
    Discover::NAME,
    ListResources::NAME,
    DirectoryRead::NAME,
    ReadResource::NAME,
    ResourceMetadata::NAME,
    ListResourceTemplates::NAME,
    Complete::NAME,
    Subscribe::NAME,
    Unsubscribe::NAME,
    SubscriptionsListen::NAME,
];

/// Params that carry a request `_meta`.
pub(crate) trait HasMeta {
    fn meta(&self) -> Option<&RequestMeta>;
}

macro_rules! calls {
    ($($variant:ident = $method:ty, $eras:ident;)*) => {
        /// A request's params, decoded into the type its method declares.
        #[derive(Debug)]
        pub(super) enum Call {
            $(
                $variant(<$method as Method>::Params),
            )*
            /// `tools/list` and `tools/call` (the tools bridge), and extension methods.
            Extension(ExtensionParams),
            /// A method this server does not serve; what its params say, when readable.
            Unknown(Peek),
            /// Params that did not decode; what they say, when readable.
            Invalid {
                error: String,
                eras: Eras,
                peek: Peek,
            },
        }

        impl Call {
            fn decode(server: &Arc<ServerState>, method: &str, params: Option<&RawValue>) -> Call {
                match method {
                    // SEP-2093's method, rsrc's extension: unknown when it is off.
                    ResourceMetadata::NAME if !server.serves_resource_metadata() => {
                        Call::Unknown(Peek::of(params))
                    }
                    $(
                        <$method as Method>::NAME => {
                            decode::<<$method as Method>::Params>(params, Eras::$eras, Call::$variant)
                        }
                    )*
                    _ if server.serves_extension(method) => {
                        decode(params, Eras::Both, Call::Extension)
                    }
                    _ => Call::Unknown(Peek::of(params)),
                }
            }

            pub(super) fn meta(&self) -> Option<&RequestMeta> {
                match self {
                    $(
                        Call::$variant(p) => p.meta(),
                    )*
                    Call::Extension(p) => p.meta.as_ref(),
                    Call::Unknown(peek) | Call::Invalid { peek, .. } => peek.meta.as_ref(),
                }
            }

            /// What the gate sees of the method.
            pub(super) fn kind<'m>(&self, method: &'m str) -> Kind<'m> {
                match (method, self) {
                    (Initialize::NAME, _) => Kind::Initialize,
                    (Ping::NAME, _) => Kind::Ping,
                    $(
                        (_, Call::$variant(_)) => Kind::Served(method, Eras::$eras),
                    )*
                    (_, Call::Extension(_)) => Kind::Served(method, Eras::Both),
                    (_, Call::Invalid { eras, .. }) => Kind::Served(method, *eras),
                    (_, Call::Unknown(_)) => Kind::Unknown(method),
                }
            }
        }
    };
}

calls! {
    Initialize = Initialize, Legacy;
    Ping = Ping, Legacy;
    SetLevel = SetLevel, Legacy;
    Discover = Discover, Modern;
    List = ListResources, Both;
    DirectoryRead = DirectoryRead, Both;
    Read = ReadResource, Both;
    Metadata = ResourceMetadata, Both;
    Templates = ListResourceTemplates, Both;
    Complete = Complete, Both;
    Subscribe = Subscribe, Legacy;
    Unsubscribe = Unsubscribe, Legacy;
    Listen = SubscriptionsListen, Modern;
}

macro_rules! has_meta {
    ($($t:ty),*) => {$(
        impl HasMeta for $t {
            fn meta(&self) -> Option<&RequestMeta> {
                self.meta.as_ref()
            }
        }
    )*};
}

has_meta!(
    ExtensionParams,
    EmptyParams,
    rsrc_protocol::lifecycle::SetLevelParams,
    rsrc_protocol::lifecycle::InitializeParams,
    rsrc_protocol::resources::ListResourcesParams,
    rsrc_protocol::resources::ListResourceTemplatesParams,
    rsrc_protocol::resources::ReadResourceParams,
    rsrc_protocol::resources::ResourceParams,
    rsrc_protocol::completion::CompleteParams,
    rsrc_protocol::subscriptions::SubscriptionsListenParams
);

/// Decodes `params` into `P`, or records why not.
fn decode<P: DeserializeOwned>(
    params: Option<&RawValue>,
    eras: Eras,
    wrap: impl FnOnce(P) -> Call,
) -> Call {
    match jsonrpc::decode_params::<P>(params) {
        Ok(p) => wrap(p),
        Err(e) => Call::Invalid {
            error: format!("invalid params: {e}"),
            eras,
            peek: Peek::of(params),
        },
    }
}

/// What params that did not decode into their method's type (or whose method is not
/// served) still say: the `_meta`, to format an error for the revision it names, and the
/// members `Mcp-Name` may mirror. Empty if even that cannot be read.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Peek {
    #[serde(rename = "_meta", default)]
    meta: Option<RequestMeta>,
    #[serde(default, deserialize_with = "string_or_none")]
    uri: Option<String>,
    #[serde(default, deserialize_with = "string_or_none")]
    name: Option<String>,
}

impl Peek {
    fn of(params: Option<&RawValue>) -> Peek {
        jsonrpc::decode_params(params).unwrap_or_default()
    }

    /// What a host's typed params say.
    fn typed(
        meta: Option<RequestMeta>,
        params: &serde_json::Map<String, serde_json::Value>,
    ) -> Peek {
        let member = |name: &str| params.get(name).and_then(|v| v.as_str()).map(str::to_owned);
        Peek {
            meta,
            uri: member("uri"),
            name: member("name"),
        }
    }
}

fn string_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => Some(s),
        _ => None,
    })
}

/// Decodes one message (see [`Server::prepare`](crate::Server::prepare)).
pub(in crate::server) fn prepare(server: &Arc<ServerState>, bytes: &[u8]) -> Incoming {
    match jsonrpc::decode(bytes) {
        Err(e) => {
            tracing::debug!(error = %e, "undecodable message");
            Incoming::Malformed(Reply::error(e.id.clone(), e.to_error_object()))
        }
        Ok(message) => prepare_message(server, message),
    }
}

/// Prepares a message the transport already decoded with [`jsonrpc::decode`].
fn prepare_message(server: &Arc<ServerState>, message: Message<'_>) -> Incoming {
    match message {
        Message::Request(Request { id, method, params }) => Incoming::Request(Prepared {
            carried: None,
            held: None,
            call: Box::new(Call::decode(server, &method, params)),
            method: method.into_owned().into_boxed_str(),
            id,
        }),
        Message::Notification(n) => Incoming::Notification(notice(&n)),
        Message::Response(r) => {
            tracing::debug!(id = ?r.id, "ignoring a response: this server sends no requests");
            Incoming::Response
        }
    }
}

fn notice(n: &Notification<'_>) -> Notice {
    Notice(match n.method.as_ref() {
        Initialized::NAME => NoticeKind::Initialized,
        Cancelled::NAME => match jsonrpc::decode_params::<CancelledParams>(n.params) {
            Ok(p) => {
                tracing::debug!(id = ?p.request_id, reason = ?p.reason, "cancellation");
                NoticeKind::Cancelled(p.request_id)
            }
            Err(e) => {
                tracing::debug!(error = %e, "malformed cancellation ignored");
                NoticeKind::Cancelled(None)
            }
        },
        other => NoticeKind::Other(other.into()),
    })
}

/// A request a host handed over typed (see [`Server::prepare_typed`](crate::Server::prepare_typed)):
/// the same [`Call`] as its decoding from the wire would give.
pub(in crate::server) fn prepare_typed(
    server: &Arc<ServerState>,
    id: RequestId,
    request: HostRequest,
) -> Prepared {
    let mut held = None;
    let (method, call): (&str, Call) = match request {
        HostRequest::Ping(p) => (Ping::NAME, Call::Ping(p)),
        HostRequest::Discover(p) => (Discover::NAME, Call::Discover(p)),
        HostRequest::SetLevel(p) => (SetLevel::NAME, Call::SetLevel(p)),
        HostRequest::List(p) => (ListResources::NAME, Call::List(p)),
        HostRequest::DirectoryRead(p) => (DirectoryRead::NAME, Call::DirectoryRead(p)),
        HostRequest::Read(p) => (ReadResource::NAME, Call::Read(p)),
        HostRequest::Metadata(p) if !server.serves_resource_metadata() => (
            ResourceMetadata::NAME,
            Call::Unknown(Peek {
                meta: p.meta,
                uri: Some(p.uri),
                name: None,
            }),
        ),
        HostRequest::Metadata(p) => (ResourceMetadata::NAME, Call::Metadata(p)),
        HostRequest::Templates(p) => (ListResourceTemplates::NAME, Call::Templates(p)),
        HostRequest::Complete(p) => (Complete::NAME, Call::Complete(p)),
        HostRequest::Subscribe(p) => (Subscribe::NAME, Call::Subscribe(p)),
        HostRequest::Unsubscribe(p) => (Unsubscribe::NAME, Call::Unsubscribe(p)),
        HostRequest::Listen(p, h) => {
            held = h;
            (SubscriptionsListen::NAME, Call::Listen(p))
        }
        HostRequest::Other {
            method,
            meta,
            params,
        } => {
            let call = if ENGINE_METHODS.contains(&method.as_str()) {
                // An engine method whose params the host could not type: decoded as from
                // the wire, to be refused with the same error.
                let mut params = params;
                if let Some(meta) = meta {
                    params.insert(
                        "_meta".to_owned(),
                        serde_json::to_value(meta).unwrap_or_default(),
                    );
                }
                match serde_json::value::to_raw_value(&params) {
                    Ok(raw) => Call::decode(server, &method, Some(&raw)),
                    Err(e) => Call::Invalid {
                        error: format!("invalid params: {e}"),
                        eras: Eras::Both,
                        peek: Peek::default(),
                    },
                }
            } else if server.serves_extension(&method) {
                Call::Extension(ExtensionParams { meta, rest: params })
            } else {
                Call::Unknown(Peek::typed(meta, &params))
            };
            return Prepared {
                id,
                method: method.into_boxed_str(),
                call: Box::new(call),
                carried: None,
                held: None,
            };
        }
    };
    Prepared {
        id,
        method: method.into(),
        call: Box::new(call),
        carried: None,
        held,
    }
}

/// Applies a notification to `session`.
pub(in crate::server) fn notify(session: &Session, notice: &Notice) {
    match &notice.0 {
        NoticeKind::Initialized => session.mark_initialized(),
        NoticeKind::Cancelled(Some(id)) => {
            let found = session.cancel(id);
            tracing::debug!(%id, found, "cancelled");
        }
        NoticeKind::Cancelled(None) => tracing::debug!("cancellation without a request id ignored"),
        NoticeKind::Other(method) => tracing::trace!(%method, "notification ignored"),
    }
}

/// The reply to a message the transport discarded for exceeding `limit` bytes; `prefix`
/// is its beginning, from which the request id is recovered when possible.
pub(in crate::server) fn oversized(prefix: &[u8], limit: usize) -> Reply {
    Reply::error(
        jsonrpc::id_from_prefix(prefix),
        ErrorObject::new(
            ErrorCode::INVALID_REQUEST,
            format!("message discarded: it is longer than the limit of {limit} bytes"),
        ),
    )
}
