//! What every request to the page must show, and what every answer carries: the token, a
//! Host that cannot be another site's name, no foreign Origin; the security headers.
//!
//! Invariants:
//! - A request is served only with the token, in the cookie or (to set the cookie) in the
//!   `token` query parameter, compared in constant time; the cookie is `HttpOnly`,
//!   `SameSite=Strict` and named after the port, so two pages on one host never overwrite
//!   each other's.
//! - The Host is an IP literal or `localhost`, with our port: a DNS-rebound name never
//!   reaches the API. An Origin, when sent, is ours; a `Sec-Fetch-Site`, when sent, is
//!   `same-origin` or `none`.
//! - Every answer carries the Content-Security-Policy (no inline script, no eval, nothing
//!   from elsewhere, images only from us, `data:` and `blob:`, Trusted Types required for
//!   HTML sinks, no framing) and the headers that keep it from being sniffed, framed or
//!   cached; raw contents are additionally sandboxed and served as attachments.

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use subtle::ConstantTimeEq as _;

/// The page's Content-Security-Policy.
pub(super) const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; media-src 'none'; \
     object-src 'none'; frame-src 'none'; worker-src 'none'; manifest-src 'none'; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'; \
     require-trusted-types-for 'script'; trusted-types rsrc-markdown";

/// The policy of raw contents (`/api/content/…`): never a document that can run anything.
pub(super) const CONTENT_CSP: &str = "sandbox; default-src 'none'; frame-ancestors 'none'";

/// The token and what it guards.
#[derive(Clone)]
pub(super) struct Guard {
    token: String,
    cookie: String,
    port: u16,
}

impl Guard {
    /// A guard with a fresh random token, for a page served on `port`.
    pub(super) fn new(port: u16) -> Result<Guard, String> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for the token: {e}"))?;
        Ok(Guard {
            token: base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes),
            cookie: format!("rsrc-ui-{port}"),
            port,
        })
    }

    /// The URL to open: the page, with the token.
    pub(super) fn url(&self, addr: SocketAddr) -> String {
        let host = if addr.ip().is_unspecified() {
            format!("127.0.0.1:{}", addr.port())
        } else {
            addr.to_string()
        };
        format!("http://{host}/?token={}", self.token)
    }

    fn is_token(&self, candidate: &str) -> bool {
        bool::from(candidate.as_bytes().ct_eq(self.token.as_bytes()))
    }

    /// The token from the request's cookie, if it is ours.
    fn cookie_ok(&self, headers: &HeaderMap) -> bool {
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .any(|(name, value)| name == self.cookie && self.is_token(value))
    }

    /// The `token` query parameter, if it is ours.
    fn query_ok(&self, query: Option<&str>) -> bool {
        query
            .into_iter()
            .flat_map(|q| q.split('&'))
            .filter_map(|pair| pair.split_once('='))
            .any(|(name, value)| name == "token" && self.is_token(value))
    }

    /// Why the request's Host, Origin or fetch site is refused, if it is.
    fn foreign(&self, headers: &HeaderMap) -> Option<&'static str> {
        let Some(host) = single(headers, header::HOST) else {
            return Some("a request needs one Host header");
        };
        if !self.host_ok(host) {
            return Some("this page answers only to its own address (an IP or localhost)");
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let ours = origin
                .to_str()
                .ok()
                .and_then(|o| o.strip_prefix("http://"))
                .is_some_and(|o| o.eq_ignore_ascii_case(host));
            if !ours {
                return Some("requests from other origins are refused");
            }
        }
        if let Some(site) = headers.get("sec-fetch-site")
            && !matches!(site.to_str(), Ok("same-origin" | "none"))
        {
            return Some("requests from other sites are refused");
        }
        None
    }

    /// An IP literal or `localhost`, with our port.
    fn host_ok(&self, host: &str) -> bool {
        let Some((name, port)) = host.rsplit_once(':') else {
            return false;
        };
        if port.parse::<u16>().ok() != Some(self.port) {
            return false;
        }
        let bare = name
            .strip_prefix('[')
            .and_then(|n| n.strip_suffix(']'))
            .unwrap_or(name);
        name.eq_ignore_ascii_case("localhost") || bare.parse::<std::net::IpAddr>().is_ok()
    }

    /// The `Set-Cookie` value that carries the token from now on.
    fn set_cookie(&self) -> String {
        format!(
            "{}={}; Path=/; HttpOnly; SameSite=Strict",
            self.cookie, self.token
        )
    }
}

fn single(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    let mut values = headers.get_all(name).iter();
    let first = values.next()?;
    if values.next().is_some() {
        return None;
    }
    first.to_str().ok()
}

fn refuse(status: StatusCode, why: &str) -> Response {
    let mut r = (status, format!("rsrc ui: {why}\n")).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The middleware: checks, the token, the cookie's first setting, the headers.
pub(super) async fn check(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    let mut response = checked(&guard, request, next).await;
    secure(response.headers_mut());
    response
}

async fn checked(guard: &Guard, request: Request<Body>, next: Next) -> Response {
    if let Some(why) = guard.foreign(request.headers()) {
        return refuse(StatusCode::FORBIDDEN, why);
    }
    if guard.cookie_ok(request.headers()) {
        return next.run(request).await;
    }
    // The first load: the token in the URL becomes the cookie, and the URL loses it.
    if request.uri().path() == "/" && guard.query_ok(request.uri().query()) {
        let mut r = StatusCode::SEE_OTHER.into_response();
        let headers = r.headers_mut();
        headers.insert(header::LOCATION, HeaderValue::from_static("/"));
        if let Ok(v) = HeaderValue::from_str(&guard.set_cookie()) {
            headers.insert(header::SET_COOKIE, v);
        }
        return r;
    }
    refuse(
        StatusCode::UNAUTHORIZED,
        "open the URL that `rsrc ui` printed: it carries the page's token",
    )
}

/// The headers of every answer; a raw content's own policy is kept.
fn secure(headers: &mut HeaderMap) {
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        );
    }
    let fixed = [
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
    ];
    for (name, value) in fixed {
        headers.insert(name, HeaderValue::from_static(value));
    }
    for (name, value) in [
        ("cross-origin-opener-policy", "same-origin"),
        ("cross-origin-resource-policy", "same-origin"),
        (
            "permissions-policy",
            "camera=(), microphone=(), geolocation=(), usb=(), payment=()",
        ),
    ] {
        headers.insert(
            header::HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> Guard {
        Guard {
            token: "secret".into(),
            cookie: "rsrc-ui-4000".into(),
            port: 4000,
        }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn hosts_are_ip_literals_or_localhost_with_our_port() {
        let g = guard();
        for ok in [
            "127.0.0.1:4000",
            "localhost:4000",
            "[::1]:4000",
            "10.0.0.2:4000",
        ] {
            assert!(g.host_ok(ok), "{ok}");
        }
        for bad in [
            "evil.example:4000",
            "127.0.0.1:4001",
            "127.0.0.1",
            "localhost.evil.example:4000",
            "[::1]",
        ] {
            assert!(!g.host_ok(bad), "{bad}");
        }
    }

    #[test]
    fn a_foreign_origin_or_site_is_refused() {
        let g = guard();
        let host = ("host", "127.0.0.1:4000");
        assert_eq!(g.foreign(&headers(&[host])), None);
        assert_eq!(
            g.foreign(&headers(&[host, ("origin", "http://127.0.0.1:4000")])),
            None
        );
        assert!(
            g.foreign(&headers(&[host, ("origin", "http://evil.example")]))
                .is_some()
        );
        assert!(g.foreign(&headers(&[host, ("origin", "null")])).is_some());
        assert!(
            g.foreign(&headers(&[host, ("sec-fetch-site", "cross-site")]))
                .is_some()
        );
        assert!(
            g.foreign(&headers(&[host, ("host", "127.0.0.1:4000")]))
                .is_some(),
            "two Host headers"
        );
        assert!(g.foreign(&headers(&[])).is_some());
    }

    #[test]
    fn the_token_is_taken_from_our_cookie_or_the_query_only() {
        let g = guard();
        assert!(g.cookie_ok(&headers(&[("cookie", "a=b; rsrc-ui-4000=secret")])));
        assert!(!g.cookie_ok(&headers(&[("cookie", "rsrc-ui-4001=secret")])));
        assert!(!g.cookie_ok(&headers(&[("cookie", "rsrc-ui-4000=secre")])));
        assert!(g.query_ok(Some("x=1&token=secret")));
        assert!(!g.query_ok(Some("token=secretx")));
        assert!(!g.query_ok(None));
    }
}
