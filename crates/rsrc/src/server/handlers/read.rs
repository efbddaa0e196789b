//! `resources/read` and `resources/metadata`.
//!
//! Invariants: a read never answers an empty `contents` for a document: that is a
//! provider bug and becomes an internal error, never a false "exists but empty".
//! `resources/metadata` is SEP-2093's, served only with rsrc's extension: without it, it
//! is an unknown method (`-32601`).

use rsrc_protocol::resources::{
    ReadResourceParams, ReadResourceResult, ResourceMetadataResult, ResourceParams,
};
use std::sync::Arc;

use super::checks::canonicalize;
use crate::context::RequestContext;
use crate::error::RequestError;
use crate::server::fit::FitExtension;
use crate::server::inside::ServerState;

pub(in crate::server) async fn read(
    srv: Arc<ServerState>,
    ctx: RequestContext,
    mut p: ReadResourceParams,
) -> Result<ReadResourceResult, RequestError> {
    canonicalize(&srv, &mut p.uri)?;
    let (_, mount) = srv.route(&p.uri)?;
    let out = mount.provider.read(&ctx, &p.uri).await?;
    if out.contents.is_empty() {
        // Only a collection may read as empty; never answer "exists, empty" for anything
        // else.
        let meta = mount.provider.metadata(&ctx, &p.uri).await?;
        if !meta.is_collection() {
            return Err(RequestError::Internal(format!(
                "the provider returned no contents for the document {}",
                p.uri
            )));
        }
    }
    let hint = out.cache.unwrap_or(srv.config().read_cache);
    let mut result = ReadResourceResult {
        contents: out.contents,
        result_type: None,
        ttl_ms: Some(hint.ttl_ms),
        cache_scope: Some(hint.scope),
        meta: None,
    };
    result.fit_extension(srv.serves_resource_metadata());
    Ok(result)
}

pub(in crate::server) async fn metadata(
    srv: Arc<ServerState>,
    ctx: RequestContext,
    mut p: ResourceParams,
) -> Result<ResourceMetadataResult, RequestError> {
    canonicalize(&srv, &mut p.uri)?;
    let (_, mount) = srv.route(&p.uri)?;
    let mut result = ResourceMetadataResult {
        resource: mount.provider.metadata(&ctx, &p.uri).await?,
        result_type: None,
        meta: None,
    };
    result.fit_extension(true);
    Ok(result)
}
