//! The servers the page explores: each one's connection, its status, the retry, and its
//! changes, turned into events for the page.
//!
//! Invariants:
//! - Each server has one supervising task, which alone connects, watches and decides the
//!   status: `connecting`, `connected`, or `disconnected` with the reason. A server is
//!   disconnected when its process exits, its connection closes, or it does not answer a
//!   ping within [`PING_TIMEOUT`] (or the call timeout, if shorter; pinged every
//!   [`PING_EVERY`], and at once when a call of the page failed for want of an answer);
//!   it is connected again only by a retry.
//! - A stdio server lives exactly as long as its connection: it is killed when the
//!   connection is given up.
//! - The subscriptions follow what the page has open ([`Slot::watch`]): one set per server,
//!   the latest the page asked for; list changes are always asked for.
//! - Every event the page is sent is an [`Event`]; a page that falls behind is told to
//!   reload (`resync`), never silently left stale.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rsrc::protocol::resources::{Feature, ListFilter};
use rsrc::protocol::{Implementation, ServerCapabilities};
use rsrc_client::{Change, Client, ClientError, ClientOptions, Watch};
use serde::Serialize;
use tokio::sync::{Notify, broadcast, watch};

/// How often a connected server is pinged.
const PING_EVERY: Duration = Duration::from_secs(10);
/// How long a ping may take before the server counts as not answering.
const PING_TIMEOUT: Duration = Duration::from_secs(5);
/// Events the page may fall behind by before it is told to reload.
const EVENT_QUEUE: usize = 1024;

/// How a server is reached.
#[derive(Debug, Clone)]
pub(super) enum Spec {
    /// A Streamable HTTP endpoint.
    Http(String),
    /// A command started as a stdio server.
    Stdio(Vec<String>),
    /// The bundled sample, served in this process.
    Sample,
}

/// What the page is told.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Event {
    /// A server's status changed.
    Status {
        /// The server's status.
        status: Box<Status>,
    },
    /// A watched resource changed.
    Updated {
        /// The server.
        server: usize,
        /// The resource.
        uri: String,
    },
    /// The server's list of resources changed.
    ListChanged {
        /// The server.
        server: usize,
    },
    /// Events were lost: everything must be fetched again.
    Resync,
}

/// A server as the page sees it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Status {
    id: usize,
    label: String,
    kind: &'static str,
    state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    info: Option<Implementation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    capabilities: Option<ServerCapabilities>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<String>,
    /// Whether searches are filtered by the server (SEP-2564).
    filtering: bool,
    /// Whether the server declares rsrc's resource-metadata extension (SEP-2093) with
    /// scoped listings: collections can be opened.
    resource_metadata: bool,
    /// Whether changes are reported (the watch runs).
    live: bool,
    /// The resources whose changes are reported.
    watched: Vec<String>,
}

#[derive(Clone)]
enum State {
    Connecting,
    Connected(Client),
    Disconnected(String),
}

/// One server.
pub(super) struct Slot {
    pub(super) id: usize,
    label: String,
    spec: Spec,
    sample: Option<rsrc::Server>,
    options: ClientOptions,
    state: Mutex<(State, bool, Vec<String>)>,
    retry: Notify,
    suspect: Notify,
    wanted: watch::Sender<Vec<String>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Why a call to a server failed, for the page.
#[derive(Debug)]
pub(super) enum Unavailable {
    /// The server is not connected (the reason).
    NotConnected(String),
}

impl Slot {
    /// How the server is named to the user.
    pub(super) fn label(&self) -> &str {
        &self.label
    }

    /// The connected client, or why there is none.
    pub(super) fn client(&self) -> Result<Client, Unavailable> {
        match &lock(&self.state).0 {
            State::Connected(c) => Ok(c.clone()),
            State::Connecting => Err(Unavailable::NotConnected(
                "the server is still connecting".into(),
            )),
            State::Disconnected(why) => Err(Unavailable::NotConnected(format!(
                "the server is disconnected: {why}"
            ))),
        }
    }

    /// Called after a call failed: a failure for want of an answer has the server
    /// pinged at once.
    pub(super) fn failed(&self, e: &ClientError) {
        // The server answered, or was not asked: nothing to suspect.
        if !matches!(e, ClientError::Rpc(_) | ClientError::NotOffered(_)) {
            self.suspect.notify_one();
        }
    }

    /// Asks for a new connection (after a disconnection; ignored while connected).
    pub(super) fn retry(&self) {
        self.retry.notify_one();
    }

    /// Reports changes to `uris` (and to the list) from now on, instead of what was
    /// asked before.
    pub(super) fn watch(&self, uris: Vec<String>) {
        self.wanted.send_replace(uris);
    }

    /// The server's status, for the page.
    pub(super) fn status(&self) -> Status {
        let (state, live, watched) = &*lock(&self.state);
        let kind = match self.spec {
            Spec::Http(_) => "http",
            Spec::Stdio(_) => "stdio",
            Spec::Sample => "sample",
        };
        let mut status = Status {
            id: self.id,
            label: self.label.clone(),
            kind,
            state: "connecting",
            error: None,
            version: None,
            info: None,
            capabilities: None,
            instructions: None,
            filtering: false,
            resource_metadata: false,
            live: *live,
            watched: watched.clone(),
        };
        match state {
            State::Connecting => {}
            State::Disconnected(why) => {
                status.state = "disconnected";
                status.error = Some(why.clone());
            }
            State::Connected(client) => {
                let server = client.server();
                status.state = "connected";
                status.version = Some(server.version_string.clone());
                status.info.clone_from(&server.info);
                status.capabilities = Some(server.capabilities.clone());
                status.instructions.clone_from(&server.instructions);
                status.filtering = client.filters(&ListFilter {
                    name_patterns: Some(vec!["*".into()]),
                    uri_patterns: Some(vec!["*".into()]),
                });
                status.resource_metadata = client.offers(Feature::ScopedList);
            }
        }
        status
    }

    fn set(
        &self,
        events: &broadcast::Sender<Event>,
        change: impl FnOnce(&mut (State, bool, Vec<String>)),
    ) {
        change(&mut lock(&self.state));
        let _ = events.send(Event::Status {
            status: Box::new(self.status()),
        });
    }

    async fn connect(&self) -> Result<(Client, Option<tokio::process::Child>), String> {
        let options = self.options.clone();
        match &self.spec {
            Spec::Http(url) => Client::connect_http(url, options)
                .await
                .map(|c| (c, None))
                .map_err(|e| format!("cannot connect: {e}")),
            Spec::Stdio(argv) => {
                let mut command = tokio::process::Command::new(&argv[0]);
                command.args(&argv[1..]);
                Client::spawn(&mut command, options)
                    .await
                    .map(|(c, child)| (c, Some(child)))
                    .map_err(|e| format!("cannot start or talk to `{}`: {e}", argv[0]))
            }
            Spec::Sample => {
                let server = self.sample.as_ref().ok_or("the sample is missing")?;
                Client::in_memory(server, options)
                    .await
                    .map(|c| (c, None))
                    .map_err(|e| format!("the sample does not answer: {e}"))
            }
        }
    }
}

/// Every server, and the page's event feed.
pub(super) struct Servers {
    slots: Vec<Arc<Slot>>,
    events: broadcast::Sender<Event>,
    stop: watch::Sender<bool>,
}

fn label(spec: &Spec) -> String {
    match spec {
        Spec::Http(url) => crate::serve::redact(url),
        Spec::Stdio(argv) => {
            shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| argv.join(" "))
        }
        Spec::Sample => "bundled sample".into(),
    }
}

/// The bundled sample, as `rsrc serve` with no source serves it.
fn sample() -> Result<rsrc::Server, String> {
    let database = crate::sample::database(&Default::default()).map_err(|e| e.to_string())?;
    rsrc::Server::builder("rsrc sample", env!("CARGO_PKG_VERSION"))
        .mount(crate::sample::PREFIX, crate::sample::sample())
        .mount(rsrc_providers::db::PREFIX, database)
        .build()
        .map_err(|e| e.to_string())
}

impl Servers {
    /// Starts supervising every server (connecting in the background).
    pub(super) fn start(specs: Vec<Spec>, options: &ClientOptions) -> Result<Arc<Servers>, String> {
        let (events, _) = broadcast::channel(EVENT_QUEUE);
        let (stop, _) = watch::channel(false);
        let mut slots = Vec::with_capacity(specs.len());
        for (id, spec) in specs.into_iter().enumerate() {
            let sample = match spec {
                Spec::Sample => Some(sample()?),
                _ => None,
            };
            slots.push(Arc::new(Slot {
                id,
                label: label(&spec),
                spec,
                sample,
                options: options.clone(),
                state: Mutex::new((State::Connecting, false, Vec::new())),
                retry: Notify::new(),
                suspect: Notify::new(),
                wanted: watch::channel(Vec::new()).0,
            }));
        }
        let servers = Arc::new(Servers {
            slots,
            events,
            stop,
        });
        for slot in &servers.slots {
            tokio::spawn(supervise(
                Arc::clone(slot),
                servers.events.clone(),
                servers.stop.subscribe(),
            ));
        }
        Ok(servers)
    }

    /// The server with this id.
    pub(super) fn get(&self, id: usize) -> Option<&Arc<Slot>> {
        self.slots.get(id)
    }

    /// Every server.
    pub(super) fn all(&self) -> &[Arc<Slot>] {
        &self.slots
    }

    /// The page's event feed.
    pub(super) fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    /// Ends when the process is stopping.
    pub(super) fn stopping(&self) -> watch::Receiver<bool> {
        self.stop.subscribe()
    }

    /// Ends every connection (stdio servers are killed) and every event stream.
    pub(super) fn stop(&self) {
        self.stop.send_replace(true);
    }
}

async fn supervise(
    slot: Arc<Slot>,
    events: broadcast::Sender<Event>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        slot.set(&events, |s| *s = (State::Connecting, false, Vec::new()));
        let why = tokio::select! {
            why = connect_and_run(&slot, &events) => why,
            _ = stop.wait_for(|s| *s) => return,
        };
        tracing::info!(server = %slot.label, reason = %why, "disconnected");
        slot.set(&events, |s| {
            *s = (State::Disconnected(why), false, Vec::new());
        });
        tokio::select! {
            () = slot.retry.notified() => {}
            _ = stop.wait_for(|s| *s) => return,
        }
    }
}

/// Connects, then watches until the server goes away; returns why it did.
async fn connect_and_run(slot: &Slot, events: &broadcast::Sender<Event>) -> String {
    let (client, mut child) = match slot.connect().await {
        Ok(c) => c,
        Err(why) => return why,
    };
    // A retry asked for while connecting is not one for the next disconnection.
    let _ = futures_util::FutureExt::now_or_never(slot.retry.notified());
    let mut watch = match client.watch(&[], true).await {
        Ok(w) => Some(w),
        Err(e @ (ClientError::Closed | ClientError::Timeout)) => return e.to_string(),
        Err(e) => {
            tracing::info!(server = %slot.label, error = %e, "no live updates from this server");
            None
        }
    };
    let live = watch.is_some();
    slot.set(events, |s| {
        *s = (State::Connected(client.clone()), live, Vec::new());
    });
    let mut wanted = slot.wanted.subscribe();
    wanted.mark_changed();
    let patience = PING_TIMEOUT.min(slot.options.request_timeout);
    let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + PING_EVERY, PING_EVERY);
    loop {
        tokio::select! {
            status = exited(&mut child) => return format!("the server exited ({status})"),
            change = next_change(&mut watch) => match change {
                Some(Change::Updated(uri)) => {
                    let _ = events.send(Event::Updated { server: slot.id, uri });
                }
                Some(Change::ListChanged) => {
                    let _ = events.send(Event::ListChanged { server: slot.id });
                }
                Some(_) => {}
                None => return "the connection closed".into(),
            },
            Ok(()) = wanted.changed() => {
                let uris = wanted.borrow_and_update().clone();
                let Some(w) = watch.as_mut() else { continue };
                match w.change(&client, &uris, true).await {
                    Ok(()) => {
                        let accepted = w.accepted().to_vec();
                        slot.set(events, |s| s.2 = accepted);
                    }
                    Err(ClientError::Timeout) => return stopped_answering(slot.options.request_timeout),
                    Err(e @ ClientError::Closed) => return e.to_string(),
                    Err(e) => tracing::info!(server = %slot.label, error = %e, "the server refused the subscriptions"),
                }
            }
            _ = ping.tick() => if let Err(why) = answers(&client, patience).await { return why },
            () = slot.suspect.notified() => if let Err(why) = answers(&client, patience).await { return why },
        }
    }
}

/// Whether the server still answers a ping within `patience`; why not otherwise. A hung
/// server reads the same whichever timeout noticed it first.
async fn answers(client: &Client, patience: Duration) -> Result<(), String> {
    match tokio::time::timeout(patience, client.ping()).await {
        Ok(Ok(())) | Ok(Err(ClientError::Rpc(_))) => Ok(()),
        Ok(Err(ClientError::Timeout)) | Err(_) => Err(stopped_answering(patience)),
        Ok(Err(e)) => Err(format!("the server stopped answering: {e}")),
    }
}

fn stopped_answering(within: Duration) -> String {
    format!(
        "the server stopped answering: no answer within {}",
        humantime::format_duration(within)
    )
}

async fn exited(child: &mut Option<tokio::process::Child>) -> String {
    match child {
        Some(c) => match c.wait().await {
            Ok(status) => status.to_string(),
            Err(e) => e.to_string(),
        },
        None => std::future::pending().await,
    }
}

async fn next_change(watch: &mut Option<Watch>) -> Option<Change> {
    match watch {
        Some(w) => w.next().await,
        None => std::future::pending().await,
    }
}

/// Why an event stream for the page lagged: it must fetch everything again.
pub(super) fn lagged() -> Event {
    Event::Resync
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_the_server_without_its_secrets() {
        assert_eq!(
            label(&Spec::Stdio(vec![
                "rsrc".into(),
                "serve".into(),
                "a dir".into()
            ])),
            "rsrc serve 'a dir'"
        );
        assert!(!label(&Spec::Http("http://u:pw@h/mcp".into())).contains("pw"));
    }
}
