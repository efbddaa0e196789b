//! The typed host API (`Server::open_session`, `prepare_typed`, `hold_changes`,
//! `stamp_info`, typed notifications): the engine embedded in another SDK behaves as on
//! the wire, with no JSON between them. Every result and notification is checked, once
//! encoded, against the official schema of the revision it was served under.

use std::sync::Arc;

use rsrc::protocol::jsonrpc::RequestId;
use rsrc::protocol::lifecycle::InitializeParams;
use rsrc::protocol::meta::RequestMeta;
use rsrc::protocol::resources::{
    ListResourcesParams, ListResourcesResult, ReadResourceParams, ReadResourceResult,
    ResourceParams,
};
use rsrc::protocol::subscriptions::{SubscriptionFilter, SubscriptionsListenParams};
use rsrc::protocol::{ErrorCode, Implementation, ProtocolVersion, Resource};
use rsrc::server::{HostRequest, Outcome, Reply, Session};
use rsrc::{ListEntry, Notification, Notifier, ResourceSet, Server};
use rsrc_testkit as schema;
use serde_json::{Value, json};
use tokio::sync::mpsc::Receiver;

fn set() -> ResourceSet {
    ResourceSet::new()
        .with_text(Resource::new("notes:///a", "a"), "A")
        .with_text(Resource::new("notes:///b", "b"), "B")
}

/// A server whose notes other code changes (announced).
fn server() -> Server {
    Server::builder("engine", "1.0")
        .mount_announced("notes:", set())
        .build()
        .unwrap()
}

fn handshake(version: &str) -> InitializeParams {
    serde_json::from_value(json!({
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "host-client", "version": "1"}
    }))
    .unwrap()
}

fn modern_meta() -> Option<RequestMeta> {
    Some(RequestMeta::modern(
        "2026-07-28",
        Implementation::new("host-client", "1"),
    ))
}

/// Runs `request` to its reply.
async fn run(server: &Server, session: &Arc<Session>, id: i64, request: HostRequest) -> Reply {
    run_with(server, session, id, request, &Notifier::discard()).await
}

async fn run_with(
    server: &Server,
    session: &Arc<Session>,
    id: i64,
    request: HostRequest,
    notifier: &Notifier,
) -> Reply {
    let prepared = server.prepare_typed(RequestId::Number(id), request);
    match server.run(session, prepared, notifier) {
        Outcome::Refused(refusal) => refusal.into_reply(),
        Outcome::Answered(reply) => reply,
        Outcome::Running(running) => running.await.expect("not cancelled"),
    }
}

/// `reply` encoded, checked against revision `v`'s schema as the answer to `method`.
fn valid(v: ProtocolVersion, reply: &Reply, method: &str) -> Value {
    let mut out = Vec::new();
    reply.encode(&mut out);
    let message: Value = serde_json::from_slice(&out).unwrap();
    schema::validate(v, &message, Some(method)).unwrap();
    message
}

/// `n` encoded, checked against revision `v`'s schema.
fn valid_notification(v: ProtocolVersion, n: &Notification) -> Value {
    let message: Value = serde_json::from_slice(&n.encode().unwrap()).unwrap();
    schema::validate(v, &message, None).unwrap();
    message
}

async fn next(rx: &mut Receiver<Notification>) -> Notification {
    rx.recv().await.expect("the notifier is open")
}

#[tokio::test]
async fn a_session_opened_from_a_handshake_serves_its_revision_without_initialize() {
    let server = server();
    let session = server.open_session(Some(handshake("2025-06-18")), Notifier::discard());
    assert!(session.is_initialized());
    assert_eq!(
        session.negotiated_version(),
        Some(ProtocolVersion::V2025_06_18)
    );
    let reply = run(
        &server,
        &session,
        1,
        HostRequest::List(ListResourcesParams::default()),
    )
    .await;
    valid(ProtocolVersion::V2025_06_18, &reply, "resources/list");
    let page = reply
        .into_typed::<ListResourcesResult<ListEntry>>()
        .unwrap();
    let page = serde_json::to_value(&page).unwrap();
    assert_eq!(page["resources"].as_array().unwrap().len(), 2, "{page}");
    assert!(page.get("resultType").is_none(), "a 2025 result: {page}");
}

#[test]
fn a_handshake_naming_2026_opens_a_session_of_no_revision() {
    let server = server();
    let session = server.open_session(Some(handshake("2026-07-28")), Notifier::discard());
    assert!(!session.is_initialized());
    assert_eq!(session.negotiated_version(), None);
}

#[tokio::test]
async fn a_request_naming_2026_is_served_statelessly_with_the_hosts_name() {
    let server = server();
    assert!(server.stamp_info(Implementation::new("host-server", "2.0")));
    assert!(
        !server.stamp_info(Implementation::new("again", "3.0")),
        "stamped once"
    );
    // A connection that made no 2025 handshake serves 2026-07-28 requests only.
    let session = server.open_session(None, Notifier::discard());
    let read = |meta| {
        HostRequest::Read(ReadResourceParams {
            uri: "notes:///a".into(),
            meta,
            ..Default::default()
        })
    };
    let reply = run(&server, &session, 1, read(modern_meta())).await;
    valid(ProtocolVersion::V2026_07_28, &reply, "resources/read");
    let result = reply.into_typed::<ReadResourceResult>().unwrap();
    let result = serde_json::to_value(&result).unwrap();
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "host-server", "version": "2.0"})
    );
    assert_eq!(result["contents"][0]["text"], "A");

    let refused = run(&server, &session, 2, read(None)).await;
    let error = refused.into_typed::<ReadResourceResult>().unwrap_err();
    assert_eq!(
        error.code,
        ErrorCode::INVALID_REQUEST,
        "a 2025 request before any handshake: {error:?}"
    );
}

#[tokio::test]
async fn other_methods_are_refused_as_the_wire_would_refuse_them() {
    let server = server();
    let session = server.open_session(Some(handshake("2025-11-25")), Notifier::discard());
    let other = |method: &str| HostRequest::Other {
        method: method.into(),
        meta: None,
        params: Default::default(),
    };
    let unknown = run(&server, &session, 1, other("nope/nothing")).await;
    let message = valid(ProtocolVersion::V2025_11_25, &unknown, "nope/nothing");
    assert_eq!(message["error"]["code"], -32601, "{message}");
    // An engine method whose params the host could not type.
    let untyped = run(&server, &session, 2, other("resources/read")).await;
    let message = valid(ProtocolVersion::V2025_11_25, &untyped, "resources/read");
    assert_eq!(message["error"]["code"], -32602, "{message}");
}

/// A 2025 session, opened from a handshake, subscribed to `notes:///a` (while it is
/// held); its notifications arrive typed on the receiver.
async fn subscribed_to_a() -> (Server, Arc<Session>, Receiver<Notification>) {
    let server = server();
    let (notifier, rx) = Notifier::typed(8);
    let session = server.open_session(Some(handshake("2025-11-25")), notifier);
    let subscribe = HostRequest::Subscribe(ResourceParams {
        uri: "notes:///a".into(),
        meta: None,
    });
    let reply = run(&server, &session, 1, subscribe).await;
    valid(ProtocolVersion::V2025_11_25, &reply, "resources/subscribe");
    (server, session, rx)
}

#[tokio::test]
async fn a_2025_sessions_changes_arrive_typed_on_its_notifier() {
    let (server, _session, mut rx) = subscribed_to_a().await;
    server.changes().updated("notes:///a");
    let n = next(&mut rx).await;
    let message = valid_notification(ProtocolVersion::V2025_11_25, &n);
    assert!(
        matches!(&n, Notification::Updated(p) if p.uri == "notes:///a"),
        "{message}"
    );
    assert_eq!(n.subscription(), None, "a session's, not a stream's");
}

/// A listen stream's request, holding `held`.
fn listen(held: Option<rsrc::server::HeldChanges>, filter: SubscriptionFilter) -> HostRequest {
    HostRequest::Listen(
        SubscriptionsListenParams {
            notifications: filter,
            meta: modern_meta(),
        },
        held,
    )
}

fn filter(uris: &[&str]) -> SubscriptionFilter {
    SubscriptionFilter {
        resource_subscriptions: Some(uris.iter().map(|u| (*u).to_owned()).collect()),
        ..SubscriptionFilter::default()
    }
}

#[tokio::test]
async fn changes_held_since_the_hosts_acknowledgement_reach_the_stream() {
    let server = server();
    let session = server.open_session(None, Notifier::discard());
    // The host acknowledged a stream for a and for a URI no provider serves; b changes
    // before the engine runs the stream, and a too.
    let held = server.hold_changes(&filter(&["notes:///a", "other:///x"]));
    server.changes().updated("notes:///a");
    server.changes().updated("notes:///b");
    server.changes().updated("other:///x");
    let (notifier, mut rx) = Notifier::typed(8);
    let prepared = server.prepare_typed(
        RequestId::Number(7),
        listen(Some(held), filter(&["notes:///a", "other:///x"])),
    );
    let Outcome::Running(stream) = server.run(&session, prepared, &notifier) else {
        panic!("the stream runs");
    };
    let _stream = tokio::spawn(stream);
    let ack = next(&mut rx).await;
    valid_notification(ProtocolVersion::V2026_07_28, &ack);
    let Notification::Acknowledged(p) = &ack else {
        panic!("the acknowledgement comes first: {ack:?}");
    };
    assert_eq!(
        p.notifications.resource_subscriptions,
        Some(vec!["notes:///a".to_owned()]),
        "only what exists is kept"
    );
    let n = next(&mut rx).await;
    valid_notification(ProtocolVersion::V2026_07_28, &n);
    assert!(
        matches!(&n, Notification::Updated(p) if p.uri == "notes:///a"),
        "{n:?}"
    );
    assert_eq!(n.subscription(), Some(&RequestId::Number(7)));
    // Nothing else was held: the next change is the next notification.
    server.changes().updated("notes:///a");
    let n = next(&mut rx).await;
    assert!(
        matches!(&n, Notification::Updated(p) if p.uri == "notes:///a"),
        "{n:?}"
    );
}

#[tokio::test]
async fn without_a_hold_a_change_before_the_stream_runs_is_not_heard() {
    let server = server();
    let session = server.open_session(None, Notifier::discard());
    server.changes().updated("notes:///a");
    let (notifier, mut rx) = Notifier::typed(8);
    let prepared =
        server.prepare_typed(RequestId::Number(7), listen(None, filter(&["notes:///a"])));
    let Outcome::Running(stream) = server.run(&session, prepared, &notifier) else {
        panic!("the stream runs");
    };
    let _stream = tokio::spawn(stream);
    assert!(matches!(next(&mut rx).await, Notification::Acknowledged(_)));
    server.changes().updated("notes:///b");
    server.changes().list_changed();
    server.changes().updated("notes:///a");
    // The first notification after the acknowledgement is the change made after it.
    let n = next(&mut rx).await;
    assert!(
        matches!(&n, Notification::Updated(p) if p.uri == "notes:///a"),
        "{n:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_list_change_announced_twice_in_a_moment_is_heard_once() {
    let (server, _session, mut rx) = subscribed_to_a().await;
    // A tool announces its write; the delivery starts; the watcher announces it again.
    server.changes().list_changed();
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    server.changes().list_changed();
    let n = next(&mut rx).await;
    valid_notification(ProtocolVersion::V2025_11_25, &n);
    assert!(matches!(n, Notification::ListChanged(_)), "{n:?}");
    server.changes().updated("notes:///a");
    let n = next(&mut rx).await;
    assert!(
        matches!(&n, Notification::Updated(p) if p.uri == "notes:///a"),
        "the second list_changed went out with the first: {n:?}"
    );
}

#[test]
fn an_announced_mount_declares_subscriptions_and_list_changes() {
    let caps = serde_json::to_value(server().capabilities()).unwrap();
    assert_eq!(caps["resources"]["subscribe"], true, "{caps}");
    assert_eq!(caps["resources"]["listChanged"], true, "{caps}");
    let plain = Server::builder("engine", "1.0")
        .mount("notes:", set())
        .build()
        .unwrap();
    let caps = serde_json::to_value(plain.capabilities()).unwrap();
    assert_ne!(caps["resources"]["listChanged"], true, "{caps}");
}

#[test]
fn an_announced_mount_with_a_wrong_prefix_fails_build() {
    let e = Server::builder("engine", "1.0")
        .mount_announced("elsewhere:", set())
        .build()
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("notes:///a") && text.contains("elsewhere:"),
        "{text}"
    );
}
