//! The typed calls of the resources feature: one method per request, each a thin layer
//! over [`Client::request`].
//!
//! Invariant: each call sends its method's params type and decodes its result type, with
//! the era's `_meta` and the client's timeout, like any request; `ping` asks
//! `server/discover` in 2026-07-28, which has no `ping`; SEP-2093's calls (a scoped
//! listing, `resources/metadata`) go only to a server declaring rsrc's extension
//! (`metadata.rs`).

use std::collections::BTreeMap;

use rsrc_protocol::Resource;
use rsrc_protocol::completion::{
    CompleteArgument, CompleteContext, CompleteParams, CompleteResult, Completion, Reference,
};
use rsrc_protocol::lifecycle::EmptyParams;
use rsrc_protocol::methods;
use rsrc_protocol::resources::{
    Feature, ListResourceTemplatesParams, ListResourceTemplatesResult, ListResourcesParams,
    ListResourcesResult, ReadResourceParams, ReadResourceResult, ResourceParams,
};

use crate::client::Client;
use crate::error::ClientError;

impl Client {
    /// One page of `resources/list` (of a collection's children when `uri` is given: only
    /// from a server that declares rsrc's SEP-2093 extension with scoped listings, see
    /// [`Client::children`] for a way that does without).
    pub async fn list_resources(
        &self,
        cursor: Option<String>,
        uri: Option<String>,
    ) -> Result<ListResourcesResult, ClientError> {
        if uri.is_some() {
            self.require(Feature::ScopedList, "resources/list with a uri")?;
        }
        self.request::<methods::ListResources>(&ListResourcesParams {
            cursor,
            uri,
            filter: None,
            meta: None,
        })
        .await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_templates(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourceTemplatesResult, ClientError> {
        self.request::<methods::ListResourceTemplates>(&ListResourceTemplatesParams {
            cursor,
            filter: None,
            meta: None,
        })
        .await
    }

    /// Reads a resource.
    pub async fn read(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.request::<methods::ReadResource>(&ReadResourceParams {
            uri: uri.to_owned(),
            ..ReadResourceParams::default()
        })
        .await
    }

    /// A resource's metadata (`resources/metadata`): only from a server that declares
    /// rsrc's SEP-2093 extension with the method (see [`Client::describe`] for a way that
    /// does without).
    pub async fn metadata(&self, uri: &str) -> Result<Resource, ClientError> {
        self.require(Feature::MetadataMethod, "resources/metadata")?;
        self.request::<methods::ResourceMetadata>(&ResourceParams {
            uri: uri.to_owned(),
            meta: None,
        })
        .await
        .map(|r| r.resource)
    }

    /// Completion values for `argument` of `template`, given what was typed and the
    /// variables already chosen.
    pub async fn complete(
        &self,
        template: &str,
        argument: &str,
        value: &str,
        context: BTreeMap<String, String>,
    ) -> Result<Completion, ClientError> {
        let params = CompleteParams {
            reference: Reference::Resource {
                uri: template.to_owned(),
            },
            argument: CompleteArgument {
                name: argument.to_owned(),
                value: value.to_owned(),
            },
            context: (!context.is_empty()).then_some(CompleteContext {
                arguments: Some(context),
            }),
            meta: None,
        };
        self.request::<methods::Complete>(&params)
            .await
            .map(|r: CompleteResult| r.completion)
    }

    /// Pings a legacy server (2026-07-28 has no `ping`: it asks `server/discover`).
    pub async fn ping(&self) -> Result<(), ClientError> {
        if self.server.version.is_modern() {
            self.request::<methods::Discover>(&EmptyParams::default())
                .await
                .map(drop)
        } else {
            self.request::<methods::Ping>(&EmptyParams::default())
                .await
                .map(drop)
        }
    }
}
