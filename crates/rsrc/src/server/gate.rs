//! The gate: every rule of the protocol's eras and lifecycle, as one `match` over where a
//! request arrives, the revision it names, and its method.
//!
//! - `initialize` exists only in the 2025 revisions (`-32601` for a request that names
//!   2026-07-28, or that arrives where only 2026-07-28 is served).
//! - `ping` is the one request answered before `initialize`.
//! - A request whose `_meta` names 2026-07-28 is served statelessly under it (the
//!   session's state is ignored) and must carry `clientCapabilities` (`-32602`); an
//!   unknown version is `-32022`; inside a legacy HTTP session it is refused (`-32020`),
//!   since it must travel with its own `MCP-Protocol-Version`, outside any session.
//! - A request without a revision in `_meta` speaks the revision negotiated by
//!   `initialize` (`-32600` before it), except where only 2026-07-28 is served, or for a
//!   2026-only method before `initialize`, where the missing `_meta` is the error
//!   (`-32602`).
//! - A method that does not exist in the request's revision is `-32601`, whatever its
//!   params; an unknown method is `-32601`, formatted for the revision the request speaks.
//!
//! - `initialize` settles on the revision it asks for if that is one spoken with
//!   `initialize`, else the newest such, once per session (a second one is `-32600`).
//! - A 2026-07-28 request's context (log level, client) is what its own `_meta` says;
//!   a 2025 request's is what its session negotiated and set.
//!
//! Invariant: this is the only place that decides which revision a request is served
//! under, whether it is served at all, and where its context comes from. `decide`
//! reads nothing but its three inputs.

use std::sync::Arc;

use rsrc_protocol::lifecycle::InitializeParams;
use rsrc_protocol::meta::{CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY, RequestMeta};
use rsrc_protocol::{ErrorObject, Implementation, LoggingLevel, ProtocolVersion};

use super::session::{Carrier, Negotiated, Session};
use crate::error::RequestError;

/// Where a request arrives, and what its session has negotiated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// A connection (stdio, in memory): both eras, the 2025 ones after `initialize`.
    Connection(Option<ProtocolVersion>),
    /// A legacy Streamable HTTP session: the 2025 revisions only.
    LegacySession(Option<ProtocolVersion>),
    /// A stateless request (a 2026-07-28 HTTP POST): only per-request revisions.
    Stateless,
}

/// Where `session`'s requests arrive.
pub(crate) fn place(session: &Session) -> Place {
    match session.carrier() {
        Carrier::Connection => Place::Connection(session.negotiated_version()),
        Carrier::HttpSession => Place::LegacySession(session.negotiated_version()),
        Carrier::Stateless => Place::Stateless,
    }
}

/// The revision a request names in its `_meta`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asked<'a> {
    /// No revision (and no `clientCapabilities`).
    Nothing,
    /// `clientCapabilities` without a revision.
    CapabilitiesOnly,
    /// A 2026-07-28 revision, with or without `clientCapabilities`.
    Modern {
        version: ProtocolVersion,
        capabilities: bool,
    },
    /// A 2025 revision.
    Legacy(ProtocolVersion),
    /// A revision this server does not know.
    Unknown(&'a str),
}

impl<'a> Asked<'a> {
    /// What `meta` asks for.
    pub(crate) fn of(meta: Option<&'a RequestMeta>) -> Self {
        let capabilities = meta.is_some_and(|m| m.client_capabilities.is_some());
        match meta.and_then(|m| m.protocol_version.as_deref()) {
            None if capabilities => Asked::CapabilitiesOnly,
            None => Asked::Nothing,
            Some(v) => match v.parse::<ProtocolVersion>() {
                Ok(version) if version.is_modern() => Asked::Modern {
                    version,
                    capabilities,
                },
                Ok(version) => Asked::Legacy(version),
                Err(_) => Asked::Unknown(v),
            },
        }
    }

    /// Whether the request speaks a per-request (2026-07-28) revision.
    pub(crate) fn is_modern(self) -> bool {
        matches!(self, Asked::Modern { .. })
    }
}

/// The era a transport's version header names (Streamable HTTP's `MCP-Protocol-Version`):
/// which path, stateless or in a session, its requests take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderEra {
    /// A 2026-07-28 revision: stateless.
    Modern(ProtocolVersion),
    /// A 2025 revision, or 2025-03-26 (the revision a client that sends no header
    /// speaks, served as the newest legacy one): a legacy session.
    Legacy,
    /// A revision this server does not serve (`-32022`).
    Unsupported,
}

/// The revision assumed for a legacy client that names none.
pub const UNNAMED_LEGACY: &str = "2025-03-26";

/// What a transport's version header `value` names (absent: treat as
/// [`UNNAMED_LEGACY`]).
pub fn header_era(value: &str) -> HeaderEra {
    let value = value.trim();
    match value.parse::<ProtocolVersion>() {
        Ok(v) if v.is_modern() => HeaderEra::Modern(v),
        Ok(_) => HeaderEra::Legacy,
        Err(_) if value == UNNAMED_LEGACY => HeaderEra::Legacy,
        Err(_) => HeaderEra::Unsupported,
    }
}

/// The error answering a request whose version header names a revision this server
/// does not serve ([`HeaderEra::Unsupported`]): `-32022`, with the revisions served.
pub fn unsupported_version(requested: &str) -> ErrorObject {
    RequestError::UnsupportedVersion {
        requested: requested.to_owned(),
    }
    .to_error_object(Some(ProtocolVersion::LATEST))
}

/// Which revisions a method exists in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Eras {
    Legacy,
    Modern,
    Both,
}

impl Eras {
    fn includes(self, v: ProtocolVersion) -> bool {
        match self {
            Eras::Both => true,
            Eras::Legacy => !v.is_modern(),
            Eras::Modern => v.is_modern(),
        }
    }
}

/// What the gate sees of a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind<'a> {
    Initialize,
    Ping,
    /// A method the server serves, in these revisions.
    Served(&'a str, Eras),
    /// A method the server does not serve.
    Unknown(&'a str),
}

/// What to do with a request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Decision {
    /// Run the `initialize` handshake.
    Initialize,
    /// Answer `ping` at once: a 2025 client may ping before `initialize`.
    Pong,
    /// Serve it under this revision.
    Serve(ProtocolVersion),
    /// Refuse it, formatting the error for this revision (`None`: the newest legacy
    /// rules, for a request whose revision is not known yet).
    Refuse(RequestError, Option<ProtocolVersion>),
}

/// Decides what happens to a request of `kind`, asking for `asked`, arriving at `place`.
pub(crate) fn decide(place: Place, asked: Asked<'_>, kind: Kind<'_>) -> Decision {
    use Asked::{CapabilitiesOnly, Legacy, Modern, Nothing, Unknown};
    use Place::{Connection, LegacySession, Stateless};

    let (name, eras) = match kind {
        Kind::Initialize => ("initialize", Eras::Legacy),
        Kind::Ping => ("ping", Eras::Legacy),
        Kind::Served(name, eras) => (name, eras),
        Kind::Unknown(name) => (name, Eras::Both),
    };
    let decision = match (place, asked, kind) {
        (_, Modern { version, .. }, Kind::Initialize) => not_in(name, version),
        (Stateless, _, Kind::Initialize) => not_in(name, ProtocolVersion::LATEST),
        (_, _, Kind::Initialize) => Decision::Initialize,
        (Connection(None) | LegacySession(None), Nothing | CapabilitiesOnly, Kind::Ping) => {
            Decision::Pong
        }
        (LegacySession(_), Modern { .. }, _) => Decision::Refuse(
            RequestError::HeaderMismatch(
                "the request names revision 2026-07-28 in _meta: send it with \
                 MCP-Protocol-Version: 2026-07-28, outside any session"
                    .into(),
            ),
            None,
        ),
        (_, Unknown(requested), _) => Decision::Refuse(
            RequestError::UnsupportedVersion {
                requested: requested.to_owned(),
            },
            Some(ProtocolVersion::LATEST),
        ),
        (
            _,
            Modern {
                version,
                capabilities: false,
            },
            _,
        ) => Decision::Refuse(
            RequestError::InvalidParams(format!(
                "a {version} request must carry _meta.\"{CLIENT_CAPABILITIES_KEY}\""
            )),
            Some(version),
        ),
        (_, Modern { version, .. }, _) => serve(name, eras, version),
        (Stateless, Nothing, _)
        | (_, CapabilitiesOnly, _)
        | (Connection(None) | LegacySession(None), Nothing, Kind::Served(_, Eras::Modern)) => {
            Decision::Refuse(
                RequestError::InvalidParams(format!(
                    "missing _meta.\"{PROTOCOL_VERSION_KEY}\" (required by revision {})",
                    ProtocolVersion::LATEST
                )),
                Some(ProtocolVersion::LATEST),
            )
        }
        (Connection(Some(v)) | LegacySession(Some(v)), Nothing | Legacy(_), _) => {
            serve(name, eras, v)
        }
        (Stateless | Connection(None) | LegacySession(None), Legacy(v), _) => Decision::Refuse(
            RequestError::InvalidRequest(format!(
                "revision {v} uses the initialize handshake: send initialize first"
            )),
            None,
        ),
        (Connection(None) | LegacySession(None), Nothing, _) => Decision::Refuse(
            RequestError::InvalidRequest(format!(
                "not initialized: send initialize first, or carry _meta.\"{PROTOCOL_VERSION_KEY}\": \"{}\"",
                ProtocolVersion::LATEST
            )),
            None,
        ),
    };
    match (kind, decision) {
        // An unknown method is not found in whatever revision the request speaks.
        (Kind::Unknown(name), Decision::Serve(v)) => {
            Decision::Refuse(RequestError::MethodNotFound(name.to_owned()), Some(v))
        }
        (Kind::Unknown(name), Decision::Refuse(_, v)) => {
            Decision::Refuse(RequestError::MethodNotFound(name.to_owned()), v)
        }
        (_, decision) => decision,
    }
}

/// Served under `v` if the method exists there.
fn serve(name: &str, eras: Eras, v: ProtocolVersion) -> Decision {
    if eras.includes(v) {
        Decision::Serve(v)
    } else {
        not_in(name, v)
    }
}

fn not_in(name: &str, v: ProtocolVersion) -> Decision {
    Decision::Refuse(
        RequestError::MethodNotFound(format!("{name} (not part of revision {v})")),
        Some(v),
    )
}

/// Settles `initialize` (which [`decide`] let through) on `session`: the revision it asks
/// for if that is one spoken with `initialize`, else the newest such. Refused if the
/// session already settled one.
pub(crate) fn initialize(
    session: &Session,
    p: InitializeParams,
) -> Result<ProtocolVersion, RequestError> {
    let version = p
        .protocol_version
        .parse::<ProtocolVersion>()
        .ok()
        .filter(|v| !v.is_modern())
        .unwrap_or(ProtocolVersion::LATEST_LEGACY);
    let negotiated = Negotiated {
        version,
        client_info: p.client_info.map(Arc::new),
        capabilities: Arc::new(p.capabilities),
        at: std::time::Instant::now(),
    };
    if !session.negotiate(negotiated) {
        return Err(RequestError::InvalidRequest(
            "already initialized: initialize may be sent only once per session".into(),
        ));
    }
    tracing::debug!(requested = %p.protocol_version, %version, "initialized");
    Ok(version)
}

/// The log level and the client of a request served under `version`: what its own
/// `_meta` says in 2026-07-28, where nothing is remembered between requests; what its
/// session negotiated and set in the 2025 revisions.
pub(crate) fn context(
    version: ProtocolVersion,
    meta: Option<&RequestMeta>,
    session: &Session,
) -> (Option<LoggingLevel>, Option<Arc<Implementation>>) {
    if version.is_modern() {
        (
            meta.and_then(|m| m.log_level),
            meta.and_then(|m| m.client_info.clone()).map(Arc::new),
        )
    } else {
        (
            session.log_level(),
            session.negotiated().and_then(|n| n.client_info.clone()),
        )
    }
}

/// What a request with params that did not decode gets: the gate's refusal if the method
/// does not exist in its revision (whatever the params), else `-32602`, formatted for the
/// revision it would have been served under.
pub(crate) fn bad_params(
    decision: Decision,
    error: String,
) -> (RequestError, Option<ProtocolVersion>) {
    match decision {
        Decision::Refuse(e @ RequestError::MethodNotFound(_), v) => (e, v),
        Decision::Serve(v) => (RequestError::InvalidParams(error), Some(v)),
        Decision::Initialize | Decision::Pong | Decision::Refuse(..) => {
            (RequestError::InvalidParams(error), None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V25: ProtocolVersion = ProtocolVersion::V2025_11_25;
    const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
    const MODERN: Asked<'static> = Asked::Modern {
        version: V26,
        capabilities: true,
    };
    const READ: Kind<'static> = Kind::Served("resources/read", Eras::Both);
    const LISTEN: Kind<'static> = Kind::Served("subscriptions/listen", Eras::Modern);
    const SUBSCRIBE: Kind<'static> = Kind::Served("resources/subscribe", Eras::Legacy);

    fn code(d: &Decision) -> Option<i32> {
        match d {
            Decision::Refuse(e, v) => Some(e.to_error_object(*v).code.0),
            _ => None,
        }
    }

    #[test]
    fn initialize_exists_only_in_the_legacy_revisions() {
        let fresh = Place::Connection(None);
        assert_eq!(
            decide(fresh, Asked::Nothing, Kind::Initialize),
            Decision::Initialize
        );
        assert_eq!(code(&decide(fresh, MODERN, Kind::Initialize)), Some(-32601));
        assert_eq!(
            code(&decide(Place::Stateless, Asked::Nothing, Kind::Initialize)),
            Some(-32601)
        );
    }

    #[test]
    fn ping_is_answered_before_initialize_and_not_in_2026() {
        assert_eq!(
            decide(Place::Connection(None), Asked::Nothing, Kind::Ping),
            Decision::Pong
        );
        assert_eq!(
            decide(Place::Connection(Some(V25)), Asked::Nothing, Kind::Ping),
            Decision::Serve(V25)
        );
        assert_eq!(
            code(&decide(Place::Connection(None), MODERN, Kind::Ping)),
            Some(-32601)
        );
    }

    #[test]
    fn a_request_naming_2026_is_served_under_it_whatever_the_session_negotiated() {
        for place in [
            Place::Connection(None),
            Place::Connection(Some(V25)),
            Place::Stateless,
        ] {
            assert_eq!(
                decide(place, MODERN, READ),
                Decision::Serve(V26),
                "{place:?}"
            );
        }
        let no_caps = Asked::Modern {
            version: V26,
            capabilities: false,
        };
        assert_eq!(code(&decide(Place::Stateless, no_caps, READ)), Some(-32602));
    }

    #[test]
    fn a_2026_request_inside_a_legacy_http_session_is_a_header_mismatch() {
        let d = decide(Place::LegacySession(Some(V25)), MODERN, LISTEN);
        assert_eq!(code(&d), Some(-32020));
    }

    #[test]
    fn without_a_revision_the_negotiated_one_applies_and_nothing_before_initialize() {
        assert_eq!(
            decide(Place::Connection(Some(V25)), Asked::Nothing, READ),
            Decision::Serve(V25)
        );
        assert_eq!(
            code(&decide(Place::Connection(None), Asked::Nothing, READ)),
            Some(-32600)
        );
        assert_eq!(
            code(&decide(Place::Connection(None), Asked::Legacy(V25), READ)),
            Some(-32600)
        );
        // A 2026-only method, or a stateless place: the missing _meta is the error.
        assert_eq!(
            code(&decide(Place::Connection(None), Asked::Nothing, LISTEN)),
            Some(-32602)
        );
        assert_eq!(
            code(&decide(Place::Stateless, Asked::Nothing, READ)),
            Some(-32602)
        );
        assert_eq!(
            code(&decide(
                Place::Connection(Some(V25)),
                Asked::CapabilitiesOnly,
                READ
            )),
            Some(-32602)
        );
    }

    #[test]
    fn methods_outside_the_revision_and_unknown_methods_are_not_found() {
        assert_eq!(
            code(&decide(Place::Stateless, MODERN, SUBSCRIBE)),
            Some(-32601)
        );
        assert_eq!(
            code(&decide(
                Place::Connection(Some(V25)),
                Asked::Nothing,
                LISTEN
            )),
            Some(-32601)
        );
        for (place, asked) in [
            (Place::Connection(Some(V25)), Asked::Nothing),
            (Place::Connection(None), Asked::Nothing),
            (Place::Stateless, MODERN),
        ] {
            let d = decide(place, asked, Kind::Unknown("x/y"));
            assert_eq!(code(&d), Some(-32601), "{place:?}");
        }
    }

    #[test]
    fn the_version_header_picks_the_path() {
        assert_eq!(header_era(" 2026-07-28 "), HeaderEra::Modern(V26));
        assert_eq!(header_era("2025-06-18"), HeaderEra::Legacy);
        assert_eq!(header_era(UNNAMED_LEGACY), HeaderEra::Legacy);
        assert_eq!(header_era("2024-11-05"), HeaderEra::Unsupported);
    }

    #[test]
    fn an_unknown_revision_is_unsupported() {
        let d = decide(Place::Stateless, Asked::Unknown("2099-01-01"), READ);
        assert_eq!(code(&d), Some(-32022));
    }

    fn initialize_params(version: &str, client: &str) -> InitializeParams {
        serde_json::from_value(serde_json::json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": client, "version": "1"},
        }))
        .unwrap()
    }

    #[test]
    fn initialize_settles_a_spoken_revision_once_per_session() {
        let session = Session::new(crate::context::Notifier::discard());
        assert_eq!(
            initialize(&session, initialize_params("2025-06-18", "a")),
            Ok(ProtocolVersion::V2025_06_18)
        );
        assert_eq!(
            place(&session),
            Place::Connection(Some(ProtocolVersion::V2025_06_18))
        );
        let again = initialize(&session, initialize_params("2025-11-25", "b"));
        assert!(
            matches!(again, Err(RequestError::InvalidRequest(_))),
            "{again:?}"
        );
        assert_eq!(
            session.negotiated_version(),
            Some(ProtocolVersion::V2025_06_18)
        );
        // A revision not spoken with initialize (2026-07-28, or unknown) gets the newest
        // one that is.
        for asked in ["2026-07-28", "2099-01-01"] {
            let fresh = Session::new(crate::context::Notifier::discard());
            assert_eq!(
                initialize(&fresh, initialize_params(asked, "c")),
                Ok(ProtocolVersion::LATEST_LEGACY)
            );
        }
    }

    #[test]
    fn a_request_context_comes_from_its_own_meta_in_2026_and_from_the_session_before() {
        let session = Session::new(crate::context::Notifier::discard());
        initialize(&session, initialize_params("2025-11-25", "negotiated")).unwrap();
        session.set_log_level(LoggingLevel::Error);
        let meta = RequestMeta {
            log_level: Some(LoggingLevel::Debug),
            client_info: Some(Implementation::new("per-request", "1")),
            ..RequestMeta::default()
        };
        let (level, client) = context(V26, Some(&meta), &session);
        assert_eq!(level, Some(LoggingLevel::Debug));
        assert_eq!(client.unwrap().name, "per-request");
        let (level, client) = context(V25, Some(&meta), &session);
        assert_eq!(level, Some(LoggingLevel::Error));
        assert_eq!(client.unwrap().name, "negotiated");
        let (level, client) = context(V26, None, &session);
        assert_eq!((level, client), (None, None));
    }

    #[test]
    fn bad_params_yield_to_a_method_the_revision_lacks() {
        let (e, _) = bad_params(decide(Place::Stateless, MODERN, SUBSCRIBE), "x".into());
        assert!(matches!(e, RequestError::MethodNotFound(_)));
        let (e, v) = bad_params(decide(Place::Stateless, MODERN, READ), "x".into());
        assert!(matches!(e, RequestError::InvalidParams(_)));
        assert_eq!(v, Some(V26));
    }
}
