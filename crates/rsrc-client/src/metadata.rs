//! rsrc's resource-metadata extension (SEP-2093, `dev.rsrc/resource-metadata`) from the
//! client's side: what a server declares, used where it declares it, done without where
//! it does not.
//!
//! Invariants:
//! - `resources/metadata` is sent only to a server that declares the extension with
//!   `metadataMethod`, and `resources/list` with a `uri` only to one that declares
//!   `scopedList`; to any other server those calls fail here, before any request, with
//!   [`ClientError::NotOffered`].
//! - [`Client::describe`] and [`Client::children`] do without the extension: a
//!   resource's entry in the listing (else the entry its read returns), a collection's
//!   children as what the whole listing holds below its URI. Both follow cursors under
//!   the page cap like every listing of the client, and say which way they went.

use futures_util::StreamExt;
use rsrc_protocol::Resource;
use rsrc_protocol::resources::{Feature, RESOURCE_METADATA_EXTENSION, ResourceMetadataExtension};

use crate::client::Client;
use crate::described::{Described, Via, below};
use crate::error::ClientError;
use crate::filter::Filtered;

impl Client {
    /// The settings of rsrc's resource-metadata extension, if the server declares it
    /// (under `extensions` or, in the 2025 revisions, `experimental`).
    pub fn resource_metadata(&self) -> Option<ResourceMetadataExtension> {
        ResourceMetadataExtension::declared(&self.server.capabilities)
    }

    /// Whether the server declares the extension with `feature`.
    pub fn offers(&self, feature: Feature) -> bool {
        self.resource_metadata().is_some_and(|s| s.serves(feature))
    }

    /// Fails, with no request sent, unless the server declares `feature`; `what` names
    /// the call.
    pub(crate) fn require(&self, feature: Feature, what: &str) -> Result<(), ClientError> {
        if self.offers(feature) {
            return Ok(());
        }
        Err(ClientError::NotOffered(format!(
            "{what}: the server does not declare {RESOURCE_METADATA_EXTENSION} with {} \
             (SEP-2093 is not part of the MCP standard)",
            feature.as_str()
        )))
    }

    /// A resource's metadata: from `resources/metadata` where the server declares it;
    /// elsewhere its entry in the listing (at most `max_pages` pages), else the entry its
    /// read returns for it. A URI neither listed nor readable is the read's error.
    pub async fn describe(&self, uri: &str, max_pages: usize) -> Result<Described, ClientError> {
        if self.offers(Feature::MetadataMethod) {
            return Ok(Described {
                resource: self.metadata(uri).await?,
                via: Via::MetadataMethod,
            });
        }
        let mut listing = std::pin::pin!(self.resources(None, max_pages));
        while let Some(item) = listing.next().await {
            match item {
                Ok(r) if r.uri == uri => {
                    return Ok(Described {
                        resource: r,
                        via: Via::Listing,
                    });
                }
                Ok(_) => {}
                // A listing the page cap cut short: the read may still know it.
                Err(ClientError::Protocol(_)) => break,
                Err(e) => return Err(e),
            }
        }
        let read = self.read(uri).await?;
        let Some(entry) = read.contents.into_iter().find(|c| c.uri() == uri) else {
            return Err(ClientError::Protocol(format!(
                "reading {uri} returned no entry for it"
            )));
        };
        let mut resource = entry.resource;
        if resource.size.is_none() {
            resource.size = Some(entry.body.len() as u64);
        }
        Ok(Described {
            resource,
            via: Via::Read,
        })
    }

    /// A collection's children: `resources/list` with its URI where the server declares
    /// scoped listings (`by_server`); elsewhere every resource of the listing below the
    /// collection's URI (its descendants, at any depth), at most `max_pages` pages either
    /// way (`truncated` when the cap cut it short).
    pub async fn children(
        &self,
        collection: &str,
        max_pages: usize,
    ) -> Result<Filtered<Resource>, ClientError> {
        if self.offers(Feature::ScopedList) {
            let all = self.list_all_resources(Some(collection), max_pages).await?;
            return Ok(Filtered {
                items: all.items,
                truncated: all.truncated,
                by_server: true,
            });
        }
        let all = self.list_all_resources(None, max_pages).await?;
        Ok(Filtered {
            items: all
                .items
                .into_iter()
                .filter(|r| below(collection, &r.uri))
                .collect(),
            truncated: all.truncated,
            by_server: false,
        })
    }
}
