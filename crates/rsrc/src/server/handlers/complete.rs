//! `completion/complete` (resource templates and prompts) and extension methods.
//!
//! Invariant: a completion never holds more than the protocol's 100 values, and says so
//! (`hasMore`, `total`) when it was cut.

use rsrc_protocol::completion::{CompleteParams, CompleteResult, Completion, Reference};
use std::sync::Arc;

use crate::context::RequestContext;
use crate::error::RequestError;
use crate::extension::{ExtensionParams, ExtensionResult, PromptCompletion};
use crate::future::BoxFuture;
use crate::provider::CompleteRequest;
use crate::server::inside::ServerState;

pub(in crate::server) async fn complete(
    srv: Arc<ServerState>,
    ctx: RequestContext,
    p: CompleteParams,
) -> Result<CompleteResult, RequestError> {
    let template = match &p.reference {
        Reference::Resource { uri } => uri,
        Reference::Prompt { name, .. } => {
            let Some(complete) = srv.prompt_completer() else {
                return Err(RequestError::InvalidParams(format!(
                    "unknown prompt {name:?}: this server offers no prompts"
                )));
            };
            let req = PromptCompletion {
                prompt: name.clone(),
                argument: p.argument.name.clone(),
                value: p.argument.value.clone(),
                context: p.context.and_then(|c| c.arguments).unwrap_or_default(),
            };
            let completion = complete(ctx.clone(), req).await?;
            return Ok(complete_result(completion));
        }
    };
    let Some((index, _)) = srv
        .templates()
        .iter()
        .find(|(_, t)| t.uri_template == *template)
    else {
        return Err(RequestError::InvalidParams(format!(
            "unknown resource template {template:?}"
        )));
    };
    let mount = &srv.mounts()[usize::from(*index)];
    let context = p.context.and_then(|c| c.arguments).unwrap_or_default();
    let completion = mount
        .provider
        .complete(
            &ctx,
            CompleteRequest {
                template,
                argument: &p.argument.name,
                value: &p.argument.value,
                context: &context,
            },
        )
        .await?;
    Ok(complete_result(completion))
}

/// The result of a completion, held to the protocol's limit of values.
fn complete_result(mut completion: Completion) -> CompleteResult {
    if completion.values.len() > Completion::MAX_VALUES {
        let total = completion.values.len() as u64;
        completion.values.truncate(Completion::MAX_VALUES);
        completion.has_more = Some(true);
        completion.total = Some(completion.total.unwrap_or(total).max(total));
    }
    CompleteResult {
        completion,
        result_type: None,
        meta: None,
    }
}

/// The handler of extension method `method`.
pub(in crate::server) fn extension(
    method: &str,
) -> impl FnOnce(
    Arc<ServerState>,
    RequestContext,
    ExtensionParams,
) -> BoxFuture<'static, Result<ExtensionResult, RequestError>>
+ Send
+ 'static {
    let method = method.to_owned();
    move |srv: Arc<ServerState>, ctx: RequestContext, p: ExtensionParams| {
        Box::pin(async move {
            let Some(handler) = srv.extension_method(&method) else {
                return Err(RequestError::MethodNotFound(method));
            };
            Ok(ExtensionResult::new(handler(ctx, p.rest).await?))
        })
    }
}
