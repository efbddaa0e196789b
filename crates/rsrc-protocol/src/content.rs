//! Content blocks that carry resources inside prompts and tool results: `EmbeddedResource`
//! and `ResourceLink`, with SEP-2093's compatibility shim for `EmbeddedResource.annotations`.
//!
//! Invariant: an embedded resource has one place for annotations, `resource.annotations`.
//! A top-level `annotations` member from an older peer is accepted and moved there (the
//! resource's own annotations win if both are present); it is never written back out.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

use crate::common::{Annotations, Meta};
use crate::de_util::{Key, set_once};
use crate::resources::{Resource, ResourceContents};

/// A resource's contents embedded in a prompt or tool result (`type: "resource"`).
#[derive(Clone, Debug, PartialEq)]
pub struct EmbeddedResource {
    /// The embedded contents, with their full metadata.
    pub resource: ResourceContents,
    /// Free-form metadata of the block.
    pub meta: Option<Meta>,
}

impl EmbeddedResource {
    /// Embeds contents.
    pub fn new(resource: ResourceContents) -> Self {
        EmbeddedResource {
            resource,
            meta: None,
        }
    }

    /// The annotations, wherever the peer put them (compatibility accessor).
    pub fn annotations(&self) -> Option<&Annotations> {
        self.resource.resource.annotations.as_ref()
    }

    /// Sets the annotations; they are stored on the embedded resource.
    #[must_use]
    pub fn with_annotations(mut self, annotations: Annotations) -> Self {
        self.resource.resource.annotations = Some(annotations);
        self
    }
}

impl Serialize for EmbeddedResource {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", "resource")?;
        map.serialize_entry("resource", &self.resource)?;
        if let Some(meta) = &self.meta {
            map.serialize_entry("_meta", meta)?;
        }
        map.end()
    }
}

fn expect_type<E: de::Error>(ty: Option<&str>, want: &str) -> Result<(), E> {
    match ty {
        Some(t) if t == want => Ok(()),
        Some(t) => Err(E::custom(format_args!(
            "expected type {want:?}, found {t:?}"
        ))),
        None => Err(E::missing_field("type")),
    }
}

impl<'de> Deserialize<'de> for EmbeddedResource {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EmbeddedVisitor;
        impl<'de> Visitor<'de> for EmbeddedVisitor {
            type Value = EmbeddedResource;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an embedded resource")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<EmbeddedResource, A::Error> {
                let mut ty: Option<String> = None;
                let mut resource: Option<ResourceContents> = None;
                let mut annotations: Option<Annotations> = None;
                let mut meta: Option<Meta> = None;
                while let Some(Key(key)) = map.next_key()? {
                    match &*key {
                        "type" => set_once(&mut ty, "type", &mut map)?,
                        "resource" => set_once(&mut resource, "resource", &mut map)?,
                        "annotations" => set_once(&mut annotations, "annotations", &mut map)?,
                        "_meta" => set_once(&mut meta, "_meta", &mut map)?,
                        _ => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                expect_type(ty.as_deref(), "resource")?;
                let mut resource = resource.ok_or_else(|| de::Error::missing_field("resource"))?;
                if resource.resource.annotations.is_none() {
                    resource.resource.annotations = annotations;
                }
                Ok(EmbeddedResource { resource, meta })
            }
        }
        deserializer.deserialize_map(EmbeddedVisitor)
    }
}

/// A link to a resource (`type: "resource_link"`): its metadata, no content.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceLink {
    /// The linked resource.
    pub resource: Resource,
}

impl Serialize for ResourceLink {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // A resource link is a Resource with a type tag: serialize the resource through a
        // map that already holds the tag.
        let mut value = serde_json::to_value(&self.resource).map_err(serde::ser::Error::custom)?;
        if let Some(obj) = value.as_object_mut() {
            obj.insert("type".into(), "resource_link".into());
        }
        value.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ResourceLink {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut value = serde_json::Map::deserialize(deserializer)?;
        let ty = value
            .remove("type")
            .and_then(|t| t.as_str().map(str::to_owned));
        expect_type(ty.as_deref(), "resource_link")?;
        let resource =
            Resource::deserialize(serde_json::Value::Object(value)).map_err(de::Error::custom)?;
        Ok(ResourceLink { resource })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn top_level_annotations_move_onto_the_resource() {
        let e: EmbeddedResource = serde_json::from_value(json!({
            "type": "resource",
            "annotations": {"priority": 0.5},
            "resource": {"uri": "file:///a", "text": "x"}
        }))
        .unwrap();
        assert_eq!(e.annotations().unwrap().priority, Some(0.5));
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"type":"resource","resource":{"uri":"file:///a","annotations":{"priority":0.5},"text":"x"}})
        );
    }

    #[test]
    fn the_resources_own_annotations_win() {
        let e: EmbeddedResource = serde_json::from_value(json!({
            "type": "resource",
            "annotations": {"priority": 0.5},
            "resource": {"uri": "file:///a", "text": "x", "annotations": {"priority": 0.9}}
        }))
        .unwrap();
        assert_eq!(e.annotations().unwrap().priority, Some(0.9));
    }

    #[test]
    fn resource_links_are_tagged_resources() {
        let l = ResourceLink {
            resource: Resource::new("file:///a", "a").with_size(3),
        };
        let v = serde_json::to_value(&l).unwrap();
        assert_eq!(
            v,
            json!({"type":"resource_link","uri":"file:///a","name":"a","size":3})
        );
        let back: ResourceLink = serde_json::from_value(v).unwrap();
        assert_eq!(back, l);
        assert!(
            serde_json::from_value::<ResourceLink>(
                json!({"type":"resource","uri":"a:b","name":"b"})
            )
            .is_err()
        );
    }
}
