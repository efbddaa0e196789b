//! A throwaway Redis server for tests: Debian's `redis-server` on a free loopback port,
//! with nothing saved to disk, killed when dropped; optionally with a password, and
//! speaking TLS only, with a certificate from a throwaway certificate authority. Tests
//! restart it to check what a bus does when Redis goes away and comes back.
//!
//! Invariant: the server binds 127.0.0.1 only, and never outlives its [`RedisServer`]
//! (nor do its certificate files).

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How a [`RedisServer`] is started.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RedisOptions {
    /// `requirepass`: the `default` user's password.
    pub password: Option<String>,
    /// TLS only (no plain port), with a certificate for `localhost` and `127.0.0.1`
    /// issued by a throwaway certificate authority ([`RedisServer::ca_pem`]).
    pub tls: bool,
}

/// The certificate files of a TLS server, removed with it.
#[derive(Debug)]
struct Tls {
    dir: PathBuf,
    ca_pem: String,
}

impl Drop for Tls {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A `redis-server` child process.
#[derive(Debug)]
pub struct RedisServer {
    port: u16,
    child: Option<Child>,
    options: RedisOptions,
    tls: Option<Tls>,
}

impl RedisServer {
    /// Starts one, or returns `None` (the test is then skipped, with a message) when
    /// `redis-server` is not installed, unless `CI` is set: then it panics.
    /// `scripts/test` installs it.
    pub fn start() -> Option<RedisServer> {
        RedisServer::start_with(RedisOptions::default())
    }

    /// [`RedisServer::start`] with a password or TLS.
    pub fn start_with(options: RedisOptions) -> Option<RedisServer> {
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
        let tls = options.tls.then(|| throwaway_tls(port));
        let mut server = RedisServer {
            port,
            child: None,
            options,
            tls,
        };
        server.restart();
        Some(server)
    }

    /// `redis://127.0.0.1:PORT`, or `rediss://localhost:PORT` with TLS.
    pub fn url(&self) -> String {
        match &self.tls {
            Some(_) => format!("rediss://localhost:{}", self.port),
            None => format!("redis://127.0.0.1:{}", self.port),
        }
    }

    /// With TLS, the certificate authority (PEM) that issued the server's certificate.
    pub fn ca_pem(&self) -> Option<&str> {
        self.tls.as_ref().map(|t| t.ca_pem.as_str())
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
        let mut command = Command::new("redis-server");
        command.args(["--bind", "127.0.0.1"]);
        match &self.tls {
            Some(tls) => {
                command
                    .args(["--port", "0", "--tls-port"])
                    .arg(self.port.to_string())
                    .arg("--tls-cert-file")
                    .arg(tls.dir.join("server.pem"))
                    .arg("--tls-key-file")
                    .arg(tls.dir.join("server.key"))
                    .arg("--tls-ca-cert-file")
                    .arg(tls.dir.join("ca.pem"))
                    .args(["--tls-auth-clients", "no"]);
            }
            None => {
                command.arg("--port").arg(self.port.to_string());
            }
        }
        if let Some(password) = &self.options.password {
            command.args(["--requirepass", password]);
        }
        let child = command
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

/// A certificate authority and a certificate it issued for `localhost` and `127.0.0.1`,
/// written to a directory of their own.
fn throwaway_tls(port: u16) -> Tls {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().expect("a key"))
        .expect("a CA certificate");
    let key = KeyPair::generate().expect("a key");
    let server = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .expect("server parameters")
        .signed_by(&key, &ca)
        .expect("a server certificate");
    let dir =
        std::env::temp_dir().join(format!("rsrc-test-redis-tls-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory for the certificates");
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).expect("certificate files are written");
    };
    write("ca.pem", &ca.pem());
    write("server.pem", &server.pem());
    write("server.key", &key.serialize_pem());
    Tls {
        ca_pem: ca.pem(),
        dir,
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}
