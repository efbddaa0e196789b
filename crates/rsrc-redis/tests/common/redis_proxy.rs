//! A TCP proxy in front of a test Redis, for the bus and shared-session tests: it can
//! delay what Redis sends back (a slow network, so that a race opens wide) and stop
//! passing it to the connections that subscribed (a subscription that dies without
//! closing: no FIN, no RST). It tells a test when a client sent something naming a key
//! ([`RedisProxy::watch`]) and when everything delayed has been passed on
//! ([`RedisProxy::drained`]), so that tests wait for those events rather than for a
//! time.
#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::mpsc;

pub struct RedisProxy {
    /// `redis://127.0.0.1:PORT`, the proxy's address.
    pub url: String,
    mute: Arc<AtomicBool>,
    delay_ms: Arc<AtomicU64>,
    counts: Arc<Counts>,
}

/// What the proxy saw, across its connections.
#[derive(Default)]
struct Counts {
    /// The bytes watched for in what clients send, and how many chunks held them.
    watched: Mutex<(Vec<u8>, u64)>,
    /// Chunks of Redis's bytes queued for a client, and written to it.
    queued: AtomicU64,
    written: AtomicU64,
}

impl RedisProxy {
    /// A proxy to the Redis on `upstream` (loopback), passing everything at once.
    pub async fn start(upstream: u16) -> RedisProxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("redis://{}", listener.local_addr().unwrap());
        let mute = Arc::new(AtomicBool::new(false));
        let delay_ms = Arc::new(AtomicU64::new(0));
        let (muting, delaying) = (Arc::clone(&mute), Arc::clone(&delay_ms));
        let counts = Arc::new(Counts::default());
        let counting = Arc::clone(&counts);
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await
                else {
                    continue;
                };
                // Connections made once muted pass everything: reconnecting works.
                let spared = muting.load(Ordering::SeqCst);
                let subscribed = Arc::new(AtomicBool::new(false));
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                let saw = Arc::clone(&subscribed);
                let seen = Arc::clone(&counting);
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 16 * 1024];
                    while let Ok(n @ 1..) = cr.read(&mut buf).await {
                        {
                            let mut watched = seen.watched.lock().unwrap();
                            let (pattern, count) = &mut *watched;
                            if !pattern.is_empty()
                                && buf[..n].windows(pattern.len()).any(|w| w == &pattern[..])
                            {
                                *count += 1;
                            }
                        }
                        if buf[..n]
                            .windows(9)
                            .any(|w| w.eq_ignore_ascii_case(b"SUBSCRIBE"))
                        {
                            saw.store(true, Ordering::SeqCst);
                        }
                        if sw.write_all(&buf[..n]).await.is_err() {
                            return;
                        }
                    }
                });
                // Redis's bytes, each chunk due `delay` after it arrived.
                let (tx, mut rx) = mpsc::unbounded_channel::<(tokio::time::Instant, Vec<u8>)>();
                let (muting, delaying) = (Arc::clone(&muting), Arc::clone(&delaying));
                let (queuing, writing) = (Arc::clone(&counting), Arc::clone(&counting));
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 16 * 1024];
                    while let Ok(n @ 1..) = sr.read(&mut buf).await {
                        let silent = !spared
                            && subscribed.load(Ordering::SeqCst)
                            && muting.load(Ordering::SeqCst);
                        if silent {
                            continue;
                        }
                        let delay = Duration::from_millis(delaying.load(Ordering::SeqCst));
                        let due = tokio::time::Instant::now() + delay;
                        queuing.queued.fetch_add(1, Ordering::SeqCst);
                        if tx.send((due, buf[..n].to_vec())).is_err() {
                            return;
                        }
                    }
                });
                tokio::spawn(async move {
                    while let Some((due, bytes)) = rx.recv().await {
                        tokio::time::sleep_until(due).await;
                        if cw.write_all(&bytes).await.is_err() {
                            return;
                        }
                        writing.written.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
        RedisProxy {
            url,
            mute,
            delay_ms,
            counts,
        }
    }

    /// From now on, connections that subscribed before get nothing more from Redis.
    pub fn mute_subscriptions(&self) {
        self.mute.store(true, Ordering::SeqCst);
    }

    /// Counts, from now on, what clients send that holds `bytes` (a key's name: the
    /// commands naming it); see [`RedisProxy::watched`].
    pub fn watch(&self, bytes: &[u8]) {
        *self.counts.watched.lock().unwrap() = (bytes.to_vec(), 0);
    }

    /// How many chunks clients sent holding the bytes watched since [`RedisProxy::watch`].
    pub fn watched(&self) -> u64 {
        self.counts.watched.lock().unwrap().1
    }

    /// Returns once everything Redis sent until now has been passed on to its clients
    /// (delayed bytes included), within ten seconds, or panics.
    pub async fn drained(&self) {
        let queued = self.counts.queued.load(Ordering::SeqCst);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while self.counts.written.load(Ordering::SeqCst) < queued {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the proxy did not pass on what Redis sent"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Delays everything Redis sends from now on by `delay`.
    pub fn delay(&self, delay: Duration) {
        let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        self.delay_ms.store(ms, Ordering::SeqCst);
    }
}
