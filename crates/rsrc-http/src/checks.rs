//! The header checks every request passes before its body is read: `Host` and `Origin`
//! against allowlists (DNS-rebinding defence), `Content-Type`, and `Accept`; and the
//! trace context a request's headers carry.
//!
//! Invariant: these are pure functions of header values; a value that is not visible
//! ASCII never matches anything.

use std::net::{IpAddr, SocketAddr};

use http::{HeaderMap, HeaderValue};

use rsrc::server::Prepared;

/// Names a request may arrive under (`Host`) or come from (`Origin`).
#[derive(Debug, Clone)]
pub(crate) struct Allowlist {
    any: bool,
    entries: Vec<String>,
}

impl Allowlist {
    /// `"*"` among the entries allows everything.
    pub(crate) fn new(entries: impl IntoIterator<Item = String>) -> Self {
        let mut any = false;
        let mut list = Vec::new();
        for e in entries {
            let e = e.trim().trim_end_matches('/').to_ascii_lowercase();
            if e == "*" {
                any = true;
            } else if !e.is_empty() {
                list.push(e);
            }
        }
        Allowlist { any, entries: list }
    }

    pub(crate) fn allows(&self, value: &str) -> bool {
        self.any
            || self
                .entries
                .iter()
                .any(|e| e.eq_ignore_ascii_case(value.trim_end_matches('/')))
    }
}

/// The names a loopback server is reached under: `localhost`, `127.0.0.1` and `[::1]`
/// with the bound port (and without one on port 80), plus the bound address itself.
pub(crate) fn default_hosts(bound: SocketAddr) -> Vec<String> {
    let port = bound.port();
    let mut names = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "[::1]".to_owned(),
    ];
    let own = match bound.ip() {
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    };
    if !bound.ip().is_unspecified() && !names.contains(&own) {
        names.push(own);
    }
    let mut hosts: Vec<String> = names.iter().map(|n| format!("{n}:{port}")).collect();
    if port == 80 {
        hosts.extend(names);
    }
    hosts
}

/// The origins of pages served by `hosts`, over http and https.
pub(crate) fn origins_of(hosts: &[String]) -> Vec<String> {
    hosts
        .iter()
        .filter(|h| h.as_str() != "*")
        .flat_map(|h| [format!("http://{h}"), format!("https://{h}")])
        .collect()
}

/// Whether `Content-Type` says JSON in UTF-8 (`application/json`, any parameters but a
/// charset other than UTF-8).
pub(crate) fn is_json(content_type: Option<&HeaderValue>) -> bool {
    let Some(v) = content_type.and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let mut parts = v.split(';');
    let essence = parts.next().unwrap_or("").trim();
    if !essence.eq_ignore_ascii_case("application/json") {
        return false;
    }
    parts.all(|p| {
        let (k, val) = p.split_once('=').unwrap_or((p, ""));
        !k.trim().eq_ignore_ascii_case("charset")
            || val.trim().trim_matches('"').eq_ignore_ascii_case("utf-8")
    })
}

/// Whether an `Accept` header admits the media type `kind/sub`. A missing header admits
/// everything (RFC 9110 §12.5.1); a range with `q=0` excludes.
pub(crate) fn accepts(accept: Option<&HeaderValue>, kind: &str, sub: &str) -> bool {
    let Some(v) = accept else { return true };
    let Ok(v) = v.to_str() else { return false };
    // The most specific matching range decides (`text/event-stream;q=0, */*` excludes).
    let mut best: Option<(u8, bool)> = None;
    for range in v.split(',') {
        let mut parts = range.split(';');
        let essence = parts.next().unwrap_or("").trim();
        let Some((t, s)) = essence.split_once('/') else {
            continue;
        };
        let (t, s) = (t.trim(), s.trim());
        let specificity = match (t, s) {
            ("*", "*") => 1,
            (t, "*") if t.eq_ignore_ascii_case(kind) => 2,
            (t, s) if t.eq_ignore_ascii_case(kind) && s.eq_ignore_ascii_case(sub) => 3,
            _ => continue,
        };
        let zero = parts.any(|p| {
            let (k, val) = p.split_once('=').unwrap_or((p, ""));
            k.trim().eq_ignore_ascii_case("q") && val.trim().parse::<f32>().is_ok_and(|q| q <= 0.0)
        });
        if best.is_none_or(|(b, _)| specificity > b) {
            best = Some((specificity, !zero));
        }
    }
    best.is_some_and(|(_, ok)| ok)
}

/// `request` with the W3C trace context of the HTTP request's headers
/// (`traceparent`, `tracestate`), which its span follows when `params._meta` carries none.
pub(crate) fn traced(request: Prepared, headers: &HeaderMap) -> Prepared {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    request.with_transport_trace(text("traceparent"), text("tracestate"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hv(s: &str) -> HeaderValue {
        HeaderValue::from_str(s).unwrap()
    }

    #[test]
    fn loopback_defaults_carry_the_port() {
        let hosts = default_hosts("127.0.0.1:8080".parse().unwrap());
        assert!(hosts.contains(&"localhost:8080".to_owned()));
        assert!(hosts.contains(&"[::1]:8080".to_owned()));
        assert!(!hosts.iter().any(|h| h == "localhost"));
        let list = Allowlist::new(hosts);
        assert!(list.allows("LOCALHOST:8080"));
        assert!(!list.allows("localhost:8081"));
        assert!(!list.allows("evil.example.com:8080"));
        let on_80 = default_hosts("127.0.0.1:80".parse().unwrap());
        assert!(on_80.contains(&"localhost".to_owned()));
    }

    #[test]
    fn origins_are_exact_and_a_star_allows_all() {
        let list = Allowlist::new(origins_of(&default_hosts(
            "127.0.0.1:3000".parse().unwrap(),
        )));
        assert!(list.allows("http://localhost:3000"));
        assert!(!list.allows("http://localhost:3000.evil.com"));
        assert!(!list.allows("null"));
        assert!(Allowlist::new(["*".to_owned()]).allows("https://anything"));
    }

    #[test]
    fn json_content_types() {
        assert!(is_json(Some(&hv("application/json"))));
        assert!(is_json(Some(&hv("Application/JSON; charset=UTF-8"))));
        assert!(!is_json(Some(&hv("application/json; charset=latin1"))));
        assert!(!is_json(Some(&hv("text/plain"))));
        assert!(!is_json(Some(&hv("application/jsonx"))));
        assert!(!is_json(None));
    }

    #[test]
    fn accept_ranges_and_weights() {
        let both = hv("application/json, text/event-stream");
        assert!(accepts(Some(&both), "application", "json"));
        assert!(accepts(Some(&both), "text", "event-stream"));
        assert!(accepts(Some(&hv("*/*")), "text", "event-stream"));
        assert!(accepts(Some(&hv("text/*")), "text", "event-stream"));
        assert!(!accepts(Some(&hv("text/html")), "text", "event-stream"));
        assert!(!accepts(
            Some(&hv("*/*, text/event-stream;q=0")),
            "text",
            "event-stream"
        ));
        assert!(accepts(None, "application", "json"));
    }
}
