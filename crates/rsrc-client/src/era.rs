//! Picking the era when connecting: a `server/discover` probe first (2026-07-28), the
//! `initialize` handshake otherwise, as the client's [`EraPreference`] allows.
//!
//! Invariants: the probe is bounded by `probe_timeout`; a server that prefers another
//! modern revision (`-32022` with `supported`) is probed once more with the newest of
//! those this client speaks; any other error or silence falls back to `initialize`
//! (unless only the modern era is allowed), a closed connection never does; `initialize`
//! never settles on a modern revision, and a legacy revision older than the modelled
//! ones is spoken to as the oldest modelled one.

use rsrc_protocol::jsonrpc::ErrorCode;
use rsrc_protocol::lifecycle::{
    ClientCapabilities, DiscoverResult, EmptyParams, InitializeParams, InitializeResult,
};
use rsrc_protocol::methods;
use rsrc_protocol::resources::EmptyNotificationParams;
use rsrc_protocol::{ProtocolVersion, RequestMeta};

use crate::description::ServerDescription;
use crate::error::ClientError;
use crate::link::Link;
use crate::options::EraPreference;

fn modern_versions(list: &[String]) -> Option<ProtocolVersion> {
    list.iter()
        .filter_map(|s| s.parse::<ProtocolVersion>().ok())
        .filter(|v| v.is_modern())
        .max()
}

pub(crate) async fn negotiate(conn: &Link) -> Result<ServerDescription, ClientError> {
    let options = conn.options().clone();
    let legacy_version = match options.era {
        EraPreference::Legacy(v) => return initialize(conn, v).await,
        EraPreference::Modern | EraPreference::Auto => ProtocolVersion::LATEST_LEGACY,
    };
    let strict = options.era == EraPreference::Modern;
    let probe = |version: ProtocolVersion| {
        let meta = RequestMeta::modern(version.as_str(), options.client_info.clone());
        async move {
            conn.request::<methods::Discover>(
                &EmptyParams::default(),
                Some(&meta),
                options.probe_timeout,
            )
            .await
        }
    };
    let modern = match probe(ProtocolVersion::LATEST).await {
        Ok(d) => Ok(d),
        // A modern server that prefers another modern revision says so.
        Err(ClientError::Rpc(e)) if e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => {
            let supported: Vec<String> = e
                .data
                .as_ref()
                .and_then(|d| d.get("supported"))
                .and_then(|s| serde_json::from_value(s.clone()).ok())
                .unwrap_or_default();
            match modern_versions(&supported) {
                Some(v) => probe(v).await,
                None => Err(ClientError::Rpc(e)),
            }
        }
        Err(e) => Err(e),
    };
    match modern {
        Ok(d) => match modern_versions(&d.supported_versions) {
            Some(version) => Ok(describe_modern(version, d)),
            None if strict => Err(ClientError::Protocol(format!(
                "the server supports none of this client's modern revisions: {:?}",
                d.supported_versions
            ))),
            None => initialize(conn, legacy_version).await,
        },
        Err(ClientError::Closed) => Err(ClientError::Closed),
        Err(e) if strict => Err(e),
        Err(e) => {
            tracing::debug!(error = %e, "server/discover failed: assuming a legacy server");
            initialize(conn, legacy_version).await
        }
    }
}

fn describe_modern(version: ProtocolVersion, d: DiscoverResult) -> ServerDescription {
    ServerDescription {
        version,
        version_string: version.as_str().to_owned(),
        info: d.meta.and_then(|m| m.server_info),
        capabilities: d.capabilities,
        instructions: d.instructions,
    }
}

async fn initialize(
    conn: &Link,
    version: ProtocolVersion,
) -> Result<ServerDescription, ClientError> {
    let options = conn.options();
    let params = InitializeParams {
        protocol_version: version.as_str().to_owned(),
        capabilities: ClientCapabilities::default(),
        client_info: Some(options.client_info.clone()),
        meta: None,
    };
    let result: InitializeResult = conn
        .request::<methods::Initialize>(&params, None, options.request_timeout)
        .await?;
    let negotiated = match result.protocol_version.parse::<ProtocolVersion>() {
        Ok(v) if !v.is_modern() => v,
        Ok(v) => {
            return Err(ClientError::Protocol(format!(
                "the server negotiated {v} through initialize"
            )));
        }
        // Older legacy revisions list, read and subscribe the same way; speak to them as to
        // the oldest modelled one.
        Err(_) => ProtocolVersion::V2025_06_18,
    };
    #[cfg(feature = "http")]
    if let Link::Http(h) = conn {
        h.legacy_session(&result.protocol_version);
    }
    conn.notify::<methods::Initialized>(&EmptyNotificationParams::default())
        .await?;
    Ok(ServerDescription {
        version: negotiated,
        version_string: result.protocol_version,
        info: Some(result.server_info),
        capabilities: result.capabilities,
        instructions: result.instructions,
    })
}
