//! `rsrc serve --config FILE`: every option round-trips through `--print-config`, flags
//! override the file, a bad file is reported with its line and key, the documented
//! example is valid, and each source's own settings are the ones served.

mod common;

use std::path::Path;
use std::process::Output;

use common::spawn_stdio;
use rsrc::protocol::ProtocolVersion;
use serde_json::json;

fn rsrc(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rsrc"))
        .args(args)
        .output()
        .expect("the rsrc binary runs")
}

/// `rsrc serve --config FILE --print-config ARGS`: the printed configuration.
fn print_config(file: &Path, args: &[&str]) -> String {
    let out = rsrc(
        &[
            &[
                "serve",
                "--config",
                file.to_str().unwrap(),
                "--print-config",
            ],
            args,
        ]
        .concat(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The error `rsrc serve --config FILE` stops with, for a file holding `text`.
fn refusal(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(&file, text).unwrap();
    let out = rsrc(&["serve", "--config", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    err.trim_end()
        .strip_prefix(&format!("rsrc: {}:", file.display()))
        .unwrap_or_else(|| panic!("the error names the file: {err}"))
        .to_owned()
}

/// Asserts that every key of `wanted` is in `got` with the same value (arrays of tables
/// element by element).
fn assert_within(wanted: &toml::Value, got: &toml::Value, at: &str) {
    match (wanted, got) {
        (toml::Value::Table(w), toml::Value::Table(g)) => {
            for (key, value) in w {
                let there = g
                    .get(key)
                    .unwrap_or_else(|| panic!("{at}.{key} is not printed"));
                assert_within(value, there, &format!("{at}.{key}"));
            }
        }
        (toml::Value::Array(w), toml::Value::Array(g)) if w.iter().all(toml::Value::is_table) => {
            assert_eq!(w.len(), g.len(), "{at}");
            for (i, (w, g)) in w.iter().zip(g).enumerate() {
                assert_within(w, g, &format!("{at}[{i}]"));
            }
        }
        _ => assert_eq!(wanted, got, "{at}"),
    }
}

/// A configuration setting every key to something other than its default.
fn every_option(dir: &Path) -> String {
    let d = dir.display();
    format!(
        r#"
page_size = 50
max_message = "2MiB"
max_in_flight = 9
read_budget = "64MiB"
collection_budget = "512KiB"
shutdown_grace = "2s"
watch = false
watch_window = "75ms"
listing_freshness = "stamp"
warm_listing = true
resource_metadata = false
conformance_fixtures = true
hidden = true
ignore_files = false
include = ["**/*.md"]
exclude = ["*.tmp"]
max_read = "8MiB"
db_timeout = "3s"
db_poll = "750ms"
allow_open_secrets = true
drain_delay = "2s"

[tools]
enabled = true
max_text = 4000

[http]
listen = "127.0.0.1:8931"
allow_remote = true
allowed_hosts = ["mcp.example.com"]
allowed_origins = ["https://app.example.com"]
max_body = "1MiB"
max_connections = 10
max_streams = 11
max_sessions = 12
session_idle = "5m"
header_timeout = "3s"
write_timeout = "7s"
threads = 2
public_url = "https://mcp.example.com/mcp"

[http.auth]
jwt_public_key = "{d}/issuer.pem"
jwt_audience = ["rsrc"]
jwt_issuer = ["https://issuer.example.com"]
authorization_servers = ["https://auth.example.com"]

[admin]
listen = "127.0.0.1:9464"

[tracing]
endpoint = "http://127.0.0.1:4318"
service_name = "rsrc-test"
sampler = "parentbased_traceidratio"
sampler_arg = 0.25

[cluster]
bus = "rediss://rsrc@127.0.0.1:6390/2"
bus_key_file = "{d}/bus.keys"
bus_password_file = "{d}/redis.password"
bus_ca_file = "{d}/redis-ca.pem"
namespace = "team"
cursor_key_file = "{d}/cursor.keys"

[[sources]]
name = "docs"
path = "{d}/docs"
hidden = false
ignore_files = true
include = ["**/*.txt"]
exclude = ["old/**"]
max_read = "1MiB"
tools = false

[[sources]]
name = "shop"
sqlite = "{d}/shop.db"
max_read = "64KiB"
db_timeout = "1s"
db_poll = "2s"
tools = true

[[sources]]
name = "crm"
postgres = "postgres://reader@localhost:5433/crm"
max_read = "128KiB"
db_timeout = "4s"
db_poll = "3s"
password_file = "{d}/crm.password"
tools = false

[[sources]]
name = "app"
git = "{d}/app"
max_read = "2MiB"
poll = "1s"
tools = false

[[sources]]
name = "team"
skills = "{d}/skills"
tools = false
"#
    )
}

#[test]
fn every_option_round_trips_through_print_config() {
    let dir = tempfile::tempdir().unwrap();
    let written = every_option(dir.path());
    let file = dir.path().join("rsrc.toml");
    std::fs::write(&file, &written).unwrap();

    let printed = print_config(&file, &[]);
    assert_within(
        &toml::from_str(&written).unwrap(),
        &toml::from_str(&printed).unwrap(),
        "",
    );
    // Printed, read back and printed again, it is the same configuration.
    let again = dir.path().join("printed.toml");
    std::fs::write(&again, &printed).unwrap();
    assert_eq!(print_config(&again, &[]), printed);
}

#[test]
fn defaults_are_printed_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.toml");
    std::fs::write(&empty, "").unwrap();
    let printed = print_config(&empty, &[]);
    let value: toml::Value = toml::from_str(&printed).unwrap();
    assert_eq!(value["max_read"].as_str(), Some("32MiB"));
    assert_eq!(value["page_size"].as_integer(), Some(1000));
    assert_eq!(value["http"]["session_idle"].as_str(), Some("30m"));
    assert_eq!(value["tools"]["enabled"].as_bool(), Some(false));
    assert!(printed.contains("No sources: the bundled sample"));
    let again = dir.path().join("printed.toml");
    std::fs::write(&again, &printed).unwrap();
    assert_eq!(print_config(&again, &[]), printed);
}

#[test]
fn flags_given_on_the_command_line_override_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    std::fs::create_dir(dir.path().join("extra")).unwrap();
    let file = dir.path().join("rsrc.toml");
    std::fs::write(
        &file,
        "page_size = 5\nmax_read = \"8MiB\"\n[tools]\nenabled = true\n[[sources]]\npath = \"docs\"\nmax_read = \"2MiB\"\n",
    )
    .unwrap();
    let extra = dir.path().join("extra");
    let printed = print_config(
        &file,
        &[
            "--max-read",
            "1MiB",
            "--http",
            "9000",
            extra.to_str().unwrap(),
        ],
    );
    let v: toml::Value = toml::from_str(&printed).unwrap();
    // Given: the flag wins, over the top level and over the source's own value.
    assert_eq!(v["max_read"].as_str(), Some("1MiB"));
    assert_eq!(v["sources"][0]["max_read"].as_str(), Some("1MiB"));
    assert_eq!(v["http"]["listen"].as_str(), Some("127.0.0.1:9000"));
    // Not given: the file's value stays, although the flag has a default.
    assert_eq!(v["page_size"].as_integer(), Some(5));
    assert_eq!(v["tools"]["enabled"].as_bool(), Some(true));
    // A relative path is relative to the file; the command line's sources come after.
    let docs = dir.path().join("docs");
    assert_eq!(v["sources"][0]["path"].as_str(), docs.to_str());
    assert_eq!(v["sources"][0]["name"].as_str(), Some("docs"));
    assert_eq!(v["sources"][1]["path"].as_str(), extra.to_str());
}

/// Makes `path` readable by its owner only, as a file holding a secret must be.
fn private(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

#[test]
fn a_password_in_a_connection_string_is_masked_in_every_form() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rsrc.toml");
    std::fs::write(
        &file,
        r#"[cluster]
bus = "redis+unix:///run/redis.sock?db=1&pass=swordfish"
[[sources]]
name = "a"
postgres = "postgres://reader:hunter2@localhost/crm"
[[sources]]
name = "b"
postgres = "postgresql://reader@localhost/crm?sslmode=disable&password=opensesame"
[[sources]]
name = "c"
postgres = "host=localhost user=reader password='plugh xyzzy' dbname=crm"
"#,
    )
    .unwrap();
    private(&file);
    let printed = print_config(&file, &[]);
    for secret in ["hunter2", "swordfish", "opensesame", "plugh", "xyzzy"] {
        assert!(!printed.contains(secret), "{secret}: {printed}");
    }
    for masked in [
        "postgres://reader:***@localhost/crm",
        "redis+unix:///run/redis.sock?db=1&pass=***",
        "postgresql://reader@localhost/crm?sslmode=disable&password=***",
        "host=localhost user=reader password=*** dbname=crm",
    ] {
        assert!(printed.contains(masked), "{masked}: {printed}");
    }
    let printed = print_config(&file, &["--bus", "redis://:swordfish@127.0.0.1:6379"]);
    assert!(printed.contains("redis://:***@127.0.0.1:6379"), "{printed}");
}

/// A server that cannot start says why without the password it was given, whatever
/// the form of the connection string.
#[test]
fn start_up_errors_do_not_show_passwords() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rsrc.toml");
    std::fs::write(
        &file,
        "[[sources]]\nname = \"c\"\npostgres = \"host=127.0.0.1 port=1 user=reader password=plughxyzzy connect_timeout=2\"\n",
    )
    .unwrap();
    private(&file);
    for args in [
        vec!["serve", "postgres://reader:hunter2hunter2@127.0.0.1:1/crm"],
        vec!["serve", "--config", file.to_str().unwrap()],
        vec![
            "serve",
            "--bus",
            "redis://:swordfish@127.0.0.1:1",
            "--bus-key-file",
            "/nonexistent",
        ],
        vec![
            "serve",
            "--bus",
            "redis+unix:///nonexistent.sock?pass=swordfish",
        ],
    ] {
        let out = rsrc(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        for secret in ["hunter2", "plughxyzzy", "swordfish"] {
            assert!(!err.contains(secret), "{args:?}: {err}");
        }
    }
}

#[test]
fn a_bad_file_is_reported_with_its_line_and_key() {
    assert_eq!(
        refusal("page_size = 10\n[[sources]]\npath = \"/srv\"\nhiden = true\n"),
        "4:1: sources[0].hiden: unknown field `hiden`, expected one of `name`, `path`, `sqlite`, `postgres`, `git`, `skills`, `hidden`, `ignore_files`, `include`, `exclude`, `max_read`, `db_timeout`, `db_poll`, `poll`, `password_file`, `tools`"
    );
    assert_eq!(
        refusal("\n\nmax_read = \"12 parsecs\"\n"),
        "3:12: max_read: unknown size unit \"parsecs\" (use KiB, MiB or GiB)"
    );
    assert_eq!(
        refusal("[http]\nsession_idle = \"soon\"\n"),
        "2:16: http.session_idle: not a duration: \"soon\" (expected number at 0)"
    );
    assert_eq!(
        refusal("[tools]\nenabled = \"yes\"\n"),
        "2:11: tools.enabled: invalid type: string \"yes\", expected a boolean"
    );
    assert_eq!(
        refusal("[[sources]]\nsqlite = \"shop.db\"\nhidden = true\n"),
        "1:1: sources[0]: `hidden` does not apply to a `sqlite` source (it takes `max_read`, `db_timeout`, `db_poll`, `tools`)"
    );
    assert_eq!(
        refusal("[[sources]]\npath = \"a\"\ngit = \"b\"\n"),
        "1:1: sources[0]: a source has one location: `path` and `git` are both set"
    );
    assert_eq!(
        refusal("[[sources]]\nname = \"a\"\n"),
        "1:1: sources[0]: a source needs one of `path`, `sqlite`, `postgres`, `git` or `skills`"
    );
    assert_eq!(refusal("[http\n"), "1:6: unclosed table, expected `]`");
    assert_eq!(
        refusal("page_size = 0\n"),
        "1:13: page_size: 0 is not in 1..=100000"
    );
    assert_eq!(
        refusal("[http.auth]\nbearer_token_file = \"a\"\njwt_secret_file = \"b\"\n"),
        "1:1: http.auth: set one of bearer_token_file, jwt_secret_file and jwt_public_key"
    );
}

#[test]
fn the_documented_example_is_valid() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/rsrc.example.toml");
    let printed = print_config(&example, &[]);
    let v: toml::Value = toml::from_str(&printed).unwrap();
    let kinds: Vec<&str> = v["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            ["path", "sqlite", "postgres", "git", "skills"]
                .into_iter()
                .find(|k| s.get(k).is_some())
                .unwrap()
        })
        .collect();
    assert_eq!(
        kinds,
        ["path", "path", "sqlite", "postgres", "git", "skills"]
    );
    // Its top level shows the defaults: printed without the file, they are the same.
    let empty = tempfile::NamedTempFile::new().unwrap();
    let defaults: toml::Value = toml::from_str(&print_config(empty.path(), &[])).unwrap();
    for (key, value) in defaults.as_table().unwrap() {
        if key != "sources" {
            assert_eq!(&v[key], value, "{key}");
        }
    }
}

/// Two directories with settings of their own, and a database: each is served with its
/// own, and the one kept out of the tools is still a resource.
#[tokio::test]
async fn each_source_is_served_with_its_own_settings() {
    let dir = tempfile::tempdir().unwrap();
    for root in ["open", "closed"] {
        std::fs::create_dir(dir.path().join(root)).unwrap();
        std::fs::write(dir.path().join(root).join(".env"), "SECRET=1\n").unwrap();
        std::fs::write(dir.path().join(root).join("big.txt"), "x".repeat(4096)).unwrap();
    }
    let db = dir.path().join("shop.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "CREATE TABLE items (id INTEGER PRIMARY KEY, body TEXT);
             INSERT INTO items VALUES (1, 'short'), (2, printf('%.*c', 5000, 'y'));",
        )
        .unwrap();
    let file = dir.path().join("rsrc.toml");
    std::fs::write(
        &file,
        r#"
watch = false
[tools]
enabled = true
[[sources]]
path = "open"
hidden = true
[[sources]]
path = "closed"
max_read = "1KiB"
tools = false
[[sources]]
sqlite = "shop.db"
max_read = "1KiB"
"#,
    )
    .unwrap();
    let (_child, mut peer) = spawn_stdio(&["serve", "--config", file.to_str().unwrap()]);
    peer.begin(ProtocolVersion::V2025_11_25).await;
    let read = |uri: &str| json!({"uri": uri});

    // `open` serves hidden files and big ones; `closed` neither.
    let env = peer.call("resources/read", read("file:///open/.env")).await;
    assert_eq!(env["result"]["contents"][0]["text"], "SECRET=1\n", "{env}");
    let env = peer
        .call("resources/read", read("file:///closed/.env"))
        .await;
    assert_eq!(env["error"]["code"], -32002, "{env}");
    let big = peer
        .call("resources/read", read("file:///open/big.txt"))
        .await;
    assert_eq!(
        big["result"]["contents"][0]["text"].as_str().unwrap().len(),
        4096
    );
    let big = peer
        .call("resources/read", read("file:///closed/big.txt"))
        .await;
    assert!(
        big["error"]["message"].as_str().unwrap().contains("1024"),
        "the source's own limit: {big}"
    );

    // The database's own row limit.
    let row = peer.call("resources/read", read("db://shop/items/1")).await;
    assert!(row.get("result").is_some(), "{row}");
    let row = peer.call("resources/read", read("db://shop/items/2")).await;
    assert!(row.get("error").is_some(), "{row}");

    // The tools offer `open` and the database, never `closed`.
    let call =
        |name: &str, arguments: serde_json::Value| json!({"name": name, "arguments": arguments});
    let roots = peer
        .call(
            "tools/call",
            call("list_resources", json!({"uri": "file:///"})),
        )
        .await;
    let uris: Vec<&str> = roots["result"]["structuredContent"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["file:///open"], "{roots}");
    let found = peer
        .call(
            "tools/call",
            call("search_resources", json!({"query": "big"})),
        )
        .await;
    let hits = found["result"]["structuredContent"]["resources"].to_string();
    assert!(hits.contains("file:///open/big.txt"), "{found}");
    assert!(!hits.contains("closed"), "{found}");
    let hidden = peer
        .call(
            "tools/call",
            call("read_resource", json!({"uri": "file:///closed/big.txt"})),
        )
        .await;
    assert_eq!(hidden["result"]["isError"], true, "{hidden}");
    let listed = peer
        .call(
            "tools/call",
            call("list_resources", json!({"uri": "file:///closed"})),
        )
        .await;
    assert_eq!(listed["result"]["isError"], true, "{listed}");
    let shown = peer
        .call(
            "tools/call",
            call("read_resource", json!({"uri": "db://shop/items/1"})),
        )
        .await;
    assert_eq!(
        shown["result"]["structuredContent"]["uri"], "db://shop/items/1",
        "{shown}"
    );
}
