//! A throwaway Redis server for tests: Debian's `redis-server` on a free loopback port,
//! with nothing saved to disk, killed when dropped. Tests restart it to check what a
//! bus does when Redis goes away and comes back.
//!
//! Invariant: the server binds 127.0.0.1 only, and never outlives its [`RedisServer`].

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` child process.
#[derive(Debug)]
pub struct RedisServer {
    port: u16,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts one, or returns `None` (the test is then skipped, with a message) when
    /// `redis-server` is not installed, unless `CI` is set: then it panics.
    /// `scripts/test` installs it.
    pub fn start() -> Option<RedisServer> {
        let found = Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI needs redis-server: run the tests through scripts/test"
            );
            eprintln!(
                "skipped: no redis-server (install Debian's redis-server, or use scripts/test)"
            );
            return None;
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut server = RedisServer { port, child: None };
        server.restart();
        Some(server)
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Kills it (as a crash would: no clean shutdown).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port (killing it first if it runs), empty, and waits
    /// until it accepts connections.
    pub fn restart(&mut self) {
        self.kill();
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port"])
            .arg(self.port.to_string())
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}
