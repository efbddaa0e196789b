//! A TCP proxy in front of a test Redis, for the bus and shared-session tests: it can
//! delay what Redis sends back (a slow network, so that a race opens wide) and stop
//! passing it to the connections that subscribed (a subscription that dies without
//! closing: no FIN, no RST).
#![allow(dead_code, unreachable_pub)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::mpsc;

pub struct RedisProxy {
    /// `redis://127.0.0.1:PORT`, the proxy's address.
    pub url: String,
    mute: Arc<AtomicBool>,
    delay_ms: Arc<AtomicU64>,
}

impl RedisProxy {
    /// A proxy to the Redis on `upstream` (loopback), passing everything at once.
    pub async fn start(upstream: u16) -> RedisProxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("redis://{}", listener.local_addr().unwrap());
        let mute = Arc::new(AtomicBool::new(false));
        let delay_ms = Arc::new(AtomicU64::new(0));
        let (muting, delaying) = (Arc::clone(&mute), Arc::clone(&delay_ms));
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
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 16 * 1024];
                    while let Ok(n @ 1..) = cr.read(&mut buf).await {
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
                    }
                });
            }
        });
        RedisProxy {
            url,
            mute,
            delay_ms,
        }
    }

    /// From now on, connections that subscribed before get nothing more from Redis.
    pub fn mute_subscriptions(&self) {
        self.mute.store(true, Ordering::SeqCst);
    }

    /// Delays everything Redis sends from now on by `delay`.
    pub fn delay(&self, delay: Duration) {
        let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        self.delay_ms.store(ms, Ordering::SeqCst);
    }
}
