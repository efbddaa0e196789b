//! `rsrc serve --bus`: the flags that secure the bus (a key file, a password file, TLS
//! with a CA file), and the refusal of a second deployment on a namespace in use.

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Output;

use rsrc_testkit::redis::{RedisOptions, RedisServer};

fn rsrc(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .args(args)
        .output()
        .expect("the rsrc binary runs")
}

/// Writes a secret file, private to its owner.
fn secret(path: &Path, text: &str) -> String {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The error `rsrc serve --http 127.0.0.1:0 ARGS` stops with.
fn refusal(args: &[&str]) -> String {
    let out = rsrc(&[&["serve", "--http", "127.0.0.1:0"], args].concat());
    assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn a_bus_without_a_key_file_is_refused_with_what_to_write() {
    let dir = tempfile::tempdir().unwrap();
    let err = refusal(&["--bus", "redis://127.0.0.1:1", dir.path().to_str().unwrap()]);
    assert!(
        err.contains("--bus-key-file") && err.contains("openssl rand -hex 32"),
        "{err}"
    );
}

/// The review's reproduction: a second deployment on the default namespace never heard
/// of its own file changes. It now refuses to start, and says what to do.
#[tokio::test]
async fn a_second_deployment_on_a_namespace_in_use_is_refused() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for d in ["a", "b"] {
        std::fs::create_dir(dir.path().join(d)).unwrap();
    }
    let keys = secret(&dir.path().join("bus.keys"), &"0123456789abcdef".repeat(4));
    let url = redis.url();
    let served = |d: &str| dir.path().join(d).to_str().unwrap().to_owned();
    let bus = ["--bus", url.as_str(), "--bus-key-file", keys.as_str()];
    let (_first, _) = common::serve_http(&[&bus[..], &[&served("a")]].concat()).await;
    // Another instance of the same deployment joins.
    let (_second, _) = common::serve_http(&[&bus[..], &[&served("a")]].concat()).await;
    let err = refusal(&[&bus[..], &[&served("b")]].concat());
    assert!(
        err.contains("serves other sources") && err.contains("--bus-namespace"),
        "{err}"
    );
    // With a namespace of its own, it starts.
    let (_other, _) =
        common::serve_http(&[&bus[..], &["--bus-namespace", "other", &served("b")]].concat()).await;
}

#[tokio::test]
async fn redis_is_reached_over_tls_with_a_password_from_a_file() {
    let Some(redis) = RedisServer::start_with({
        let mut o = RedisOptions::default();
        o.tls = true;
        o.password = Some("correct-horse-battery-staple".into());
        o
    }) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let keys = secret(&dir.path().join("bus.keys"), &"0123456789abcdef".repeat(4));
    let password = secret(
        &dir.path().join("redis.password"),
        "correct-horse-battery-staple\n",
    );
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, redis.ca_pem().unwrap()).unwrap();
    let url = redis.url();
    let root = dir.path().to_str().unwrap();
    let base = [
        "--bus",
        url.as_str(),
        "--bus-key-file",
        keys.as_str(),
        "--bus-ca-file",
        ca.to_str().unwrap(),
    ];
    // Without the password: refused, by Redis.
    let err = refusal(&[&base[..], &[root]].concat());
    assert!(
        err.contains("cannot reach Redis") || err.contains("Redis"),
        "{err}"
    );
    // A password file others may read is refused before Redis is asked.
    std::fs::set_permissions(&password, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = refusal(&[&base[..], &["--bus-password-file", &password, root]].concat());
    assert!(err.contains("chmod 600"), "{err}");
    std::fs::set_permissions(&password, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (_server, _) =
        common::serve_http(&[&base[..], &["--bus-password-file", &password, root]].concat()).await;
}
