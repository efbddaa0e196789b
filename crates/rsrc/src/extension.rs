//! Extension points beyond resources: methods the engine does not know (an application
//! that also offers tools or prompts answers them here), the capabilities to declare for
//! them, and completion of prompt arguments.
//!
//! Invariants:
//! - An extension method never shadows a method of the engine (refused at build).
//! - It is gated like every request (revision, `_meta`, initialization), and in 2026-07-28
//!   its result carries `resultType` and `serverInfo` like every result.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use rsrc_protocol::meta::RequestMeta;
use rsrc_protocol::{CacheHint, Completion};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::context::RequestContext;
use crate::error::ResourceError;
use crate::future::BoxFuture;

/// The capabilities the engine declares itself.
pub(crate) const ENGINE_CAPABILITIES: [&str; 4] =
    ["resources", "completions", "logging", "extensions"];

pub(crate) type MethodHandler = Arc<
    dyn Fn(RequestContext, Map<String, Value>) -> BoxFuture<'static, Result<Value, ResourceError>>
        + Send
        + Sync,
>;

pub(crate) fn method_handler<F, Fut>(f: F) -> MethodHandler
where
    F: Fn(RequestContext, Map<String, Value>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ResourceError>> + Send + 'static,
{
    Arc::new(move |ctx, params| Box::pin(f(ctx, params)))
}

/// A request to complete an argument of a prompt.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PromptCompletion {
    /// The prompt's name.
    pub prompt: String,
    /// The argument being completed.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// Arguments already chosen.
    pub context: BTreeMap<String, String>,
}

pub(crate) type PromptCompleter = Arc<
    dyn Fn(
            RequestContext,
            PromptCompletion,
        ) -> BoxFuture<'static, Result<Completion, ResourceError>>
        + Send
        + Sync,
>;

pub(crate) fn prompt_completer<F, Fut>(f: F) -> PromptCompleter
where
    F: Fn(RequestContext, PromptCompletion) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Completion, ResourceError>> + Send + 'static,
{
    Arc::new(move |ctx, req| Box::pin(f(ctx, req)))
}

/// The params of an extension method: its `_meta` (for the gate) and the rest.
#[derive(Debug, Deserialize)]
pub(crate) struct ExtensionParams {
    #[serde(rename = "_meta", default)]
    pub(crate) meta: Option<RequestMeta>,
    #[serde(flatten)]
    pub(crate) rest: Map<String, Value>,
}

/// An extension method's or the tools bridge's result: the JSON its handler built, and
/// the caching hint that applies to it, if any (fitted to its revision by the server's
/// one fitting step).
#[derive(Serialize)]
#[serde(transparent)]
pub(crate) struct ExtensionResult {
    pub(crate) value: Value,
    #[serde(skip)]
    pub(crate) cache: Option<CacheHint>,
}

impl ExtensionResult {
    /// A result without a caching hint.
    pub(crate) fn new(value: Value) -> Self {
        ExtensionResult { value, cache: None }
    }
}
