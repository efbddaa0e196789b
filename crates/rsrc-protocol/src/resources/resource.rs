//! The `Resource` record, with SEP-2093's `resourceType` and `capabilities`. Invariant:
//! the two spellings of a resource's kind are read from whichever is present and written
//! both ([`Resource::normalize_kind`]).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

use crate::common::{Annotations, Icon, Meta};
use crate::de_util::{Key, set_once};

/// SEP-2093's `resourceType`. Open: the SEP keeps the enum extensible.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ResourceType(pub Cow<'static, str>);

impl ResourceType {
    /// A leaf: reading it returns only its own URI (possibly in several formats).
    pub const DOCUMENT: ResourceType = ResourceType(Cow::Borrowed("document"));
    /// A container: reading it may return children; `resources/list` with its URI lists them.
    pub const COLLECTION: ResourceType = ResourceType(Cow::Borrowed("collection"));

    /// The type as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Serialize for ResourceType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for ResourceType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        Ok(match s.as_str() {
            "document" => ResourceType::DOCUMENT,
            "collection" => ResourceType::COLLECTION,
            _ => ResourceType(Cow::Owned(s)),
        })
    }
}

/// SEP-2093 (later draft): what can be done with one resource.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ResourceCapabilities {
    /// `resources/list` with this URI enumerates children.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<bool>,
    /// The resource supports change notifications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
}

/// Document or collection: the one notion behind `resourceType` and `capabilities.list`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResourceKind {
    /// A leaf.
    Document,
    /// A container with children.
    Collection,
}

/// A resource the server can read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Resource {
    /// The URI (RFC 3986).
    pub uri: String,
    /// Programmatic name; display fallback when there is no title.
    pub name: String,
    /// Display name.
    pub title: Option<String>,
    /// What the resource is, for the model.
    pub description: Option<String>,
    /// The primary format's MIME type; `inode/directory` for directories.
    pub mime_type: Option<String>,
    /// Size of the raw content in bytes, before any encoding.
    pub size: Option<u64>,
    /// Icons for display.
    pub icons: Option<Vec<Icon>>,
    /// Audience, priority and last modification.
    pub annotations: Option<Annotations>,
    /// SEP-2093: document or collection.
    pub resource_type: Option<ResourceType>,
    /// SEP-2093 later draft: list / subscribe capabilities.
    pub capabilities: Option<ResourceCapabilities>,
    /// Free-form metadata.
    pub meta: Option<Meta>,
}

/// The MIME type that marks a collection on `file://`-like resources.
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

impl Resource {
    /// A resource with a URI and a name; every other member absent.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            ..Resource::default()
        }
    }

    /// Sets the display title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the primary MIME type.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the raw size in bytes.
    #[must_use]
    pub fn with_size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }

    /// Sets the icons.
    #[must_use]
    pub fn with_icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }

    /// Sets the annotations.
    #[must_use]
    pub fn with_annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Sets `annotations.lastModified` (ISO 8601), keeping other annotations.
    #[must_use]
    pub fn with_last_modified(mut self, last_modified: impl Into<String>) -> Self {
        self.annotations
            .get_or_insert_with(Annotations::default)
            .last_modified = Some(last_modified.into());
        self
    }

    /// Sets the free-form `_meta`.
    #[must_use]
    pub fn with_meta(mut self, meta: Meta) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Marks the resource as a document or a collection, in both SEP-2093 spellings.
    #[must_use]
    pub fn with_kind(mut self, kind: ResourceKind) -> Self {
        self.set_kind(kind);
        self
    }

    /// Marks the resource as a document.
    #[must_use]
    pub fn document(self) -> Self {
        self.with_kind(ResourceKind::Document)
    }

    /// Marks the resource as a collection.
    #[must_use]
    pub fn collection(self) -> Self {
        self.with_kind(ResourceKind::Collection)
    }

    /// Declares whether the resource supports change notifications.
    #[must_use]
    pub fn subscribable(mut self, yes: bool) -> Self {
        self.capabilities
            .get_or_insert_with(Default::default)
            .subscribe = Some(yes);
        self
    }

    /// Document or collection, from whichever of `resourceType` and `capabilities.list` is
    /// present (`resourceType` wins if they disagree); `None` when neither is.
    pub fn kind(&self) -> Option<ResourceKind> {
        match &self.resource_type {
            Some(t) if *t == ResourceType::COLLECTION => return Some(ResourceKind::Collection),
            Some(t) if *t == ResourceType::DOCUMENT => return Some(ResourceKind::Document),
            _ => {}
        }
        match self.capabilities.and_then(|c| c.list) {
            Some(true) => Some(ResourceKind::Collection),
            Some(false) => Some(ResourceKind::Document),
            None => None,
        }
    }

    /// Whether this resource is a collection.
    pub fn is_collection(&self) -> bool {
        self.kind() == Some(ResourceKind::Collection)
    }

    fn set_kind(&mut self, kind: ResourceKind) {
        match kind {
            ResourceKind::Document => {
                self.resource_type = Some(ResourceType::DOCUMENT);
                // `capabilities` is only written when it says something: a document's
                // capabilities object, if it has one, says it is not listable.
                if let Some(c) = &mut self.capabilities {
                    c.list = Some(false);
                }
            }
            ResourceKind::Collection => {
                self.resource_type = Some(ResourceType::COLLECTION);
                self.capabilities.get_or_insert_with(Default::default).list = Some(true);
            }
        }
    }

    /// Removes SEP-2093's members (`resourceType`, `capabilities`), leaving a `Resource`
    /// of the standard revisions.
    pub fn strip_sep_2093(&mut self) {
        self.resource_type = None;
        self.capabilities = None;
    }

    /// Writes both spellings of the kind when either is known, so that clients following
    /// the SEP's first draft (`resourceType`) and its later one (`capabilities.list`) agree:
    /// a collection gets `resourceType: "collection"` and `capabilities.list: true`; a
    /// document gets `resourceType: "document"`, and `capabilities.list: false` only if it
    /// has a capabilities object anyway (an absent `capabilities` already means "nothing
    /// beyond reading", and listings stay small).
    pub fn normalize_kind(&mut self) {
        if let Some(kind) = self.kind() {
            self.set_kind(kind);
        }
    }

    pub(super) fn serialize_fields<M: SerializeMap>(
        &self,
        map: &mut M,
        skip_empty_name: bool,
    ) -> Result<(), M::Error> {
        map.serialize_entry("uri", &self.uri)?;
        if !(skip_empty_name && self.name.is_empty()) {
            map.serialize_entry("name", &self.name)?;
        }
        if let Some(v) = &self.title {
            map.serialize_entry("title", v)?;
        }
        if let Some(v) = &self.description {
            map.serialize_entry("description", v)?;
        }
        if let Some(v) = &self.mime_type {
            map.serialize_entry("mimeType", v)?;
        }
        if let Some(v) = &self.size {
            map.serialize_entry("size", v)?;
        }
        if let Some(v) = &self.icons {
            map.serialize_entry("icons", v)?;
        }
        if let Some(v) = &self.annotations {
            map.serialize_entry("annotations", v)?;
        }
        if let Some(v) = &self.resource_type {
            map.serialize_entry("resourceType", v)?;
        }
        if let Some(v) = &self.capabilities {
            map.serialize_entry("capabilities", v)?;
        }
        if let Some(v) = &self.meta {
            map.serialize_entry("_meta", v)?;
        }
        Ok(())
    }
}

impl Serialize for Resource {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        self.serialize_fields(&mut map, false)?;
        map.end()
    }
}

/// The members of a `Resource` being read; shared by every type that extends it.
#[derive(Default)]
pub(super) struct ResourceFields {
    uri: Option<String>,
    name: Option<String>,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    size: Option<u64>,
    icons: Option<Vec<Icon>>,
    annotations: Option<Annotations>,
    resource_type: Option<ResourceType>,
    capabilities: Option<ResourceCapabilities>,
    meta: Option<Meta>,
}

impl ResourceFields {
    /// Reads the value of `key` if it is a `Resource` member; `Ok(false)` otherwise (the
    /// value is then left for the caller).
    pub(super) fn read<'de, A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "uri" => set_once(&mut self.uri, "uri", map)?,
            "name" => set_once(&mut self.name, "name", map)?,
            "title" => set_once(&mut self.title, "title", map)?,
            "description" => set_once(&mut self.description, "description", map)?,
            "mimeType" => set_once(&mut self.mime_type, "mimeType", map)?,
            "size" => set_once(&mut self.size, "size", map)?,
            "icons" => set_once(&mut self.icons, "icons", map)?,
            "annotations" => set_once(&mut self.annotations, "annotations", map)?,
            "resourceType" => set_once(&mut self.resource_type, "resourceType", map)?,
            "capabilities" => set_once(&mut self.capabilities, "capabilities", map)?,
            "_meta" => set_once(&mut self.meta, "_meta", map)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Builds the resource. `name` is required on a `Resource`; contents from servers that
    /// predate SEP-2093 have none, so there it defaults to empty.
    pub(super) fn finish<E: de::Error>(self, name_required: bool) -> Result<Resource, E> {
        let uri = self.uri.ok_or_else(|| E::missing_field("uri"))?;
        let name = match self.name {
            Some(n) => n,
            None if name_required => return Err(E::missing_field("name")),
            None => String::new(),
        };
        Ok(Resource {
            uri,
            name,
            title: self.title,
            description: self.description,
            mime_type: self.mime_type,
            size: self.size,
            icons: self.icons,
            annotations: self.annotations,
            resource_type: self.resource_type,
            capabilities: self.capabilities,
            meta: self.meta,
        })
    }
}

impl<'de> Deserialize<'de> for Resource {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ResourceVisitor;
        impl<'de> Visitor<'de> for ResourceVisitor {
            type Value = Resource;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Resource object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Resource, A::Error> {
                let mut fields = ResourceFields::default();
                while let Some(Key(key)) = map.next_key()? {
                    if !fields.read(&key, &mut map)? {
                        map.next_value::<de::IgnoredAny>()?;
                    }
                }
                fields.finish(true)
            }
        }
        deserializer.deserialize_map(ResourceVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_requires_uri_and_name_and_ignores_unknown_members() {
        assert!(serde_json::from_str::<Resource>(r#"{"uri":"a:b"}"#).is_err());
        assert!(serde_json::from_str::<Resource>(r#"{"name":"b"}"#).is_err());
        let r: Resource =
            serde_json::from_str(r#"{"uri":"a:b","name":"b","future":{"x":1},"size":5}"#).unwrap();
        assert_eq!(r.size, Some(5));
        assert!(
            serde_json::from_str::<Resource>(r#"{"uri":"a:b","name":"b","uri":"c:d"}"#).is_err()
        );
    }

    #[test]
    fn kind_is_read_from_either_spelling_and_normalized_to_both() {
        let mut r: Resource =
            serde_json::from_str(r#"{"uri":"a:b","name":"b","capabilities":{"list":true}}"#)
                .unwrap();
        assert_eq!(r.kind(), Some(ResourceKind::Collection));
        r.normalize_kind();
        assert_eq!(r.resource_type, Some(ResourceType::COLLECTION));
        let mut r: Resource =
            serde_json::from_str(r#"{"uri":"a:b","name":"b","resourceType":"document"}"#).unwrap();
        r.normalize_kind();
        assert_eq!(
            r.capabilities, None,
            "a document without capabilities gets none"
        );
        let mut r = Resource::new("a:b", "b").subscribable(true).document();
        r.normalize_kind();
        assert_eq!(r.capabilities.unwrap().list, Some(false));
        let r: Resource =
            serde_json::from_str(r#"{"uri":"a:b","name":"b","resourceType":"stream"}"#).unwrap();
        assert_eq!(r.kind(), None);
        assert_eq!(r.resource_type.unwrap().as_str(), "stream");
    }
}
