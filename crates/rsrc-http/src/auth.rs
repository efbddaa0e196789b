//! Optional bearer-token authentication, and the OAuth 2.0 protected-resource metadata
//! (RFC 9728) that tells clients where to get a token.
//!
//! Invariants:
//! - Tokens are accepted only in the `Authorization` header; a query-string
//!   `access_token` is refused whether or not authentication is on.
//! - A static token is compared in constant time (as SHA-256 digests, which also hides
//!   its length); a JWT must carry a valid signature by the configured key (the key
//!   decides the algorithm family, `none` never passes), an unexpired `exp`, an `aud`
//!   naming this server, and an `iss` among the configured issuers when there are some.
//! - Every 401 names the metadata document in `WWW-Authenticate`.

use axum::response::Response;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use rsrc_protocol::jsonrpc::ErrorCode;
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

use crate::respond::rejection;

const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// How bearer tokens are checked.
#[derive(Clone)]
#[non_exhaustive]
pub enum TokenVerifier {
    /// One shared secret token.
    Static(String),
    /// Signed JWTs.
    #[cfg(feature = "jwt")]
    Jwt(JwtVerifier),
}

impl std::fmt::Debug for TokenVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenVerifier::Static(_) => f.write_str("TokenVerifier::Static(..)"),
            #[cfg(feature = "jwt")]
            TokenVerifier::Jwt(_) => f.write_str("TokenVerifier::Jwt(..)"),
        }
    }
}

/// Authentication of the HTTP endpoint.
#[derive(Debug, Clone)]
pub struct AuthConfig {
    verifier: TokenVerifier,
    resource: String,
    authorization_servers: Vec<String>,
    scopes: Vec<String>,
}

impl AuthConfig {
    /// Checks tokens with `verifier`; `resource` is this endpoint's canonical URL (e.g.
    /// `https://mcp.example.com/mcp`), published in the metadata.
    pub fn new(verifier: TokenVerifier, resource: impl Into<String>) -> Self {
        AuthConfig {
            verifier,
            resource: resource.into(),
            authorization_servers: Vec::new(),
            scopes: Vec::new(),
        }
    }

    /// Names an authorization server that issues tokens for this resource.
    #[must_use]
    pub fn authorization_server(mut self, url: impl Into<String>) -> Self {
        self.authorization_servers.push(url.into());
        self
    }

    /// Scopes to publish in the metadata.
    #[must_use]
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = String>) -> Self {
        self.scopes.extend(scopes);
        self
    }

    /// The resource's origin (`scheme://authority`) and path.
    fn split_resource(&self) -> (&str, &str) {
        let r = self.resource.as_str();
        let after_scheme = r.find("://").map_or(0, |i| i + 3);
        match r[after_scheme..].find('/') {
            Some(i) => r.split_at(after_scheme + i),
            None => (r, ""),
        }
    }

    /// Where the metadata is served: the RFC 9728 location for this resource, and the
    /// root location clients also try.
    pub(crate) fn metadata_paths(&self, endpoint: &str) -> Vec<String> {
        let (_, path) = self.split_resource();
        let path = if path.is_empty() { endpoint } else { path };
        let mut paths = vec![format!("{WELL_KNOWN}{}", path.trim_end_matches('/'))];
        if paths[0] != WELL_KNOWN {
            paths.push(WELL_KNOWN.to_owned());
        }
        paths
    }

    fn metadata_url(&self) -> String {
        let (origin, path) = self.split_resource();
        format!("{origin}{WELL_KNOWN}{}", path.trim_end_matches('/'))
    }

    pub(crate) fn metadata_document(&self) -> Vec<u8> {
        let mut doc = serde_json::json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !self.scopes.is_empty() {
            doc["scopes_supported"] = self.scopes.clone().into();
        }
        serde_json::to_vec(&doc).unwrap_or_default()
    }

    /// Checks the `Authorization` header; the identity it proves owns the sessions it
    /// creates.
    pub(crate) fn check(&self, headers: &HeaderMap) -> Result<Owner, Response> {
        let Some(value) = headers.get(header::AUTHORIZATION) else {
            return Err(self.challenge(None));
        };
        let token = value
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, t)| t.trim());
        let Some(token) = token.filter(|t| !t.is_empty()) else {
            return Err(self.challenge(Some("expected a Bearer token")));
        };
        match &self.verifier {
            TokenVerifier::Static(expected) => {
                // Digests, so that the comparison does not reveal the token's length.
                let (got, want) = (Sha256::digest(token), Sha256::digest(expected));
                if bool::from(got.as_slice().ct_eq(want.as_slice())) {
                    Ok(Owner::of(&[b"static token", token.as_bytes()]))
                } else {
                    Err(self.challenge(Some("the token is not valid")))
                }
            }
            #[cfg(feature = "jwt")]
            TokenVerifier::Jwt(v) => match v.verify(token, &self.resource) {
                // The subject, as its issuer names it; a token without one is its own
                // identity.
                Ok(Some((iss, sub))) => {
                    Ok(Owner::of(&[b"jwt subject", iss.as_bytes(), sub.as_bytes()]))
                }
                Ok(None) => Ok(Owner::of(&[b"jwt without subject", token.as_bytes()])),
                Err(why) => Err(self.challenge(Some(&why))),
            },
        }
    }

    /// 401 with the challenge: `error="invalid_token"` when a token was presented.
    fn challenge(&self, invalid: Option<&str>) -> Response {
        rsrc::observe::http_refusal("auth");
        let mut value = format!("Bearer resource_metadata=\"{}\"", self.metadata_url());
        if let Some(why) = invalid {
            let why: String = why.chars().filter(|c| *c != '"' && *c != '\\').collect();
            value.push_str(&format!(
                ", error=\"invalid_token\", error_description=\"{why}\""
            ));
        }
        let mut res = rejection(
            StatusCode::UNAUTHORIZED,
            ErrorCode::INVALID_REQUEST,
            invalid.map_or_else(|| "authentication required".to_owned(), str::to_owned),
        );
        if let Ok(v) = HeaderValue::from_str(&value) {
            res.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        res
    }
}

/// Who made a request, when authentication is on: a digest of the static token, or of a
/// JWT's issuer and subject (or of the JWT itself when it names no subject). A legacy
/// session belongs to the identity that created it.
///
/// The digest is unambiguous: what it covers is tagged with its kind, and each part is
/// prefixed with its length, so no two identities share one (an issuer `a\0b` with
/// subject `c` is not the issuer `a` with subject `b\0c`). It is never written anywhere
/// as it is: a shared session store keys sessions by a keyed digest of it and the id.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Owner([u8; 32]);

impl std::fmt::Debug for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Owner(..)")
    }
}

impl Owner {
    /// The identity made of `parts` (the first names the kind).
    fn of(parts: &[&[u8]]) -> Owner {
        let mut h = Sha256::new();
        for p in parts {
            h.update((p.len() as u64).to_le_bytes());
            h.update(p);
        }
        Owner(h.finalize().into())
    }

    /// The digest's bytes.
    pub(crate) fn bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

/// 400 for a token in the query string (RFC 6750 §2.3 is not allowed by MCP).
pub(crate) fn query_token_refused() -> Response {
    rsrc::observe::http_refusal("auth");
    let mut res = rejection(
        StatusCode::BAD_REQUEST,
        ErrorCode::INVALID_REQUEST,
        "access tokens are not accepted in the query string; use the Authorization header",
    );
    res.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(
            "Bearer error=\"invalid_request\", error_description=\"token in query string\"",
        ),
    );
    res
}

#[cfg(test)]
mod tests {
    use super::Owner;

    #[test]
    fn owner_digests_are_unambiguous() {
        let subject =
            |iss: &str, sub: &str| Owner::of(&[b"jwt subject", iss.as_bytes(), sub.as_bytes()]);
        assert_ne!(subject("a\0b", "c"), subject("a", "b\0c"));
        assert_ne!(subject("ab", "c"), subject("a", "bc"));
        assert_eq!(subject("a", "b"), subject("a", "b"));
        // A token and a subject spelled alike are different identities.
        assert_ne!(
            Owner::of(&[b"static token", b"x"]),
            Owner::of(&[b"jwt without subject", b"x"])
        );
    }
}

#[cfg(feature = "jwt")]
pub use jwt::{JwtError, JwtVerifier};

#[cfg(feature = "jwt")]
mod jwt {
    use jsonwebtoken::{Algorithm, DecodingKey, Validation};

    /// Checks JWTs: signature by one key, `exp`, `nbf` when present, audience, and
    /// optionally issuer.
    #[derive(Clone)]
    pub struct JwtVerifier {
        key: DecodingKey,
        algorithms: Vec<Algorithm>,
        audience: Vec<String>,
        issuer: Vec<String>,
    }

    /// A key that could not be read.
    #[derive(Debug)]
    pub struct JwtError(String);

    impl std::fmt::Display for JwtError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.0)
        }
    }

    impl std::error::Error for JwtError {}

    impl JwtVerifier {
        /// HMAC-signed tokens (HS256, HS384, HS512) with a shared secret.
        pub fn hmac(secret: &[u8]) -> Self {
            JwtVerifier {
                key: DecodingKey::from_secret(secret),
                algorithms: vec![Algorithm::HS256, Algorithm::HS384, Algorithm::HS512],
                audience: Vec::new(),
                issuer: Vec::new(),
            }
        }

        /// Tokens signed by the private half of a PEM public key: RSA (RS*/PS*), EC
        /// (ES256/ES384) or Ed25519 (EdDSA).
        pub fn public_key_pem(pem: &[u8]) -> Result<Self, JwtError> {
            let (key, algorithms) = if let Ok(k) = DecodingKey::from_rsa_pem(pem) {
                (
                    k,
                    vec![
                        Algorithm::RS256,
                        Algorithm::RS384,
                        Algorithm::RS512,
                        Algorithm::PS256,
                        Algorithm::PS384,
                        Algorithm::PS512,
                    ],
                )
            } else if let Ok(k) = DecodingKey::from_ec_pem(pem) {
                (k, vec![Algorithm::ES256, Algorithm::ES384])
            } else if let Ok(k) = DecodingKey::from_ed_pem(pem) {
                (k, vec![Algorithm::EdDSA])
            } else {
                return Err(JwtError(
                    "not a PEM RSA, EC or Ed25519 public key".to_owned(),
                ));
            };
            Ok(JwtVerifier {
                key,
                algorithms,
                audience: Vec::new(),
                issuer: Vec::new(),
            })
        }

        /// Audiences accepted (default: the resource URL of the endpoint).
        #[must_use]
        pub fn audience(mut self, audience: impl IntoIterator<Item = String>) -> Self {
            self.audience.extend(audience);
            self
        }

        /// Issuers accepted (default: any).
        #[must_use]
        pub fn issuer(mut self, issuer: impl IntoIterator<Item = String>) -> Self {
            self.issuer.extend(issuer);
            self
        }

        /// Verifies `token` for `resource`; its issuer and subject when it names a subject.
        pub(crate) fn verify(
            &self,
            token: &str,
            resource: &str,
        ) -> Result<Option<(String, String)>, String> {
            let mut v = Validation::new(self.algorithms[0]);
            v.algorithms.clone_from(&self.algorithms);
            v.validate_nbf = true;
            if self.audience.is_empty() {
                v.set_audience(&[resource]);
            } else {
                v.set_audience(&self.audience);
            }
            // The library checks `aud` and `iss` only when present: require them.
            if self.issuer.is_empty() {
                v.set_required_spec_claims(&["exp", "aud"]);
            } else {
                v.set_issuer(&self.issuer);
                v.set_required_spec_claims(&["exp", "aud", "iss"]);
            }
            jsonwebtoken::decode::<serde_json::Value>(token, &self.key, &v)
                .map(|data| {
                    let claim = |k: &str| {
                        data.claims
                            .get(k)
                            .and_then(|v| v.as_str())
                            .map(str::to_owned)
                    };
                    claim("sub").map(|sub| (claim("iss").unwrap_or_default(), sub))
                })
                .map_err(|e| {
                    use jsonwebtoken::errors::ErrorKind as K;
                    match e.kind() {
                        K::ExpiredSignature => "the token has expired".to_owned(),
                        K::InvalidAudience => "the token is not for this resource".to_owned(),
                        K::InvalidIssuer => "the token's issuer is not trusted".to_owned(),
                        K::ImmatureSignature => "the token is not valid yet".to_owned(),
                        K::MissingRequiredClaim(c) => format!("the token has no {c} claim"),
                        _ => "the token is not valid".to_owned(),
                    }
                })
        }
    }
}
