//! What [`Client::describe`](crate::Client::describe) answers ([`Described`]: a
//! resource's metadata and where it came from), and [`below`], the rule by which
//! [`Client::children`](crate::Client::children) keeps a collection's descendants when
//! the server cannot list them itself.
//!
//! Invariant: plain data and a pure rule; nothing here talks to a server.

use rsrc_protocol::Resource;

/// A resource's metadata, and where it came from.
#[derive(Debug, Clone)]
pub struct Described {
    /// The resource.
    pub resource: Resource,
    /// How it was found.
    pub via: Via,
}

/// Where [`Client::describe`](crate::Client::describe) found a resource's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `resources/metadata` (the server declares the extension).
    MetadataMethod,
    /// The resource's entry in the server's listing.
    Listing,
    /// The entry for its URI in a read of it (its size is that entry's, when the
    /// server gave none).
    Read,
}

/// Whether `uri` lies below `collection`: it continues the collection's URI after a `/`
/// (the collection's own, when its URI ends with one).
pub fn below(collection: &str, uri: &str) -> bool {
    let Some(rest) = uri.strip_prefix(collection) else {
        return false;
    };
    !rest.is_empty() && (collection.ends_with('/') || rest.starts_with('/')) && rest != "/"
}

#[cfg(test)]
mod tests {
    use super::below;

    #[test]
    fn below_means_after_a_slash_of_the_collections_uri() {
        assert!(below("file:///docs", "file:///docs/a.md"));
        assert!(below("file:///docs", "file:///docs/deep/b.md"));
        assert!(below("file:///", "file:///a.md"));
        assert!(!below("file:///docs", "file:///docs"));
        assert!(!below("file:///docs", "file:///docs/"));
        assert!(!below("file:///docs", "file:///docsx/a.md"));
        assert!(!below("file:///docs", "file:///other/a.md"));
    }
}
