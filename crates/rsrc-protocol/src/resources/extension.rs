//! SEP-2093 as rsrc's own extension, `dev.rsrc/resource-metadata`: its identifier, its
//! settings (the SEP's number and the parts served), and where a server declares it.
//!
//! SEP-2093 was rejected upstream (its pull request closed on 2026-09-22), so what it
//! adds — metadata on read contents, `resourceType` / `capabilities` on resources and
//! templates, `resources/metadata`, `resources/list` with a `uri` — is not the standard:
//! a server serves it only as a declared extension, and a client relies on it only where
//! a server declares it.
//!
//! Invariants:
//! - The identifier is written here and nowhere else ([`RESOURCE_METADATA_EXTENSION`]).
//! - A server declares the extension under `capabilities.extensions` in the 2026-07-28
//!   era and under `capabilities.experimental` in the 2025 revisions, whose schemas have
//!   no `extensions` ([`ResourceMetadataExtension::declare`]); a client finds it in either
//!   place ([`ResourceMetadataExtension::declared`]).
//! - Other members of `experimental` and `extensions` are kept as they are.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::peer::ServerCapabilities;
use crate::version::Era;

/// The extension's identifier: a reverse-DNS name this project owns (the prefix of its
/// `_meta` keys, such as `dev.rsrc/git`).
pub const RESOURCE_METADATA_EXTENSION: &str = "dev.rsrc/resource-metadata";

/// The member of `capabilities` that holds the 2025 revisions' non-standard capabilities.
const EXPERIMENTAL: &str = "experimental";

/// A part of SEP-2093 a server serves, as its settings name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Feature {
    /// Read contents carry their resource's metadata (name, title, size, annotations…).
    ReadMetadata,
    /// Resources carry `resourceType` and `capabilities`, templates `capabilities`.
    ResourceTypes,
    /// `resources/metadata` answers a resource's metadata without its content.
    MetadataMethod,
    /// `resources/list` with a collection's `uri` lists its children.
    ScopedList,
}

impl Feature {
    /// Every part, in the order the settings list them.
    pub const ALL: [Feature; 4] = [
        Feature::ReadMetadata,
        Feature::ResourceTypes,
        Feature::MetadataMethod,
        Feature::ScopedList,
    ];

    /// The name in the settings' `features`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Feature::ReadMetadata => "readMetadata",
            Feature::ResourceTypes => "resourceTypes",
            Feature::MetadataMethod => "metadataMethod",
            Feature::ScopedList => "scopedList",
        }
    }
}

/// The extension's settings: `{"sep": 2093, "features": ["readMetadata", …]}`.
///
/// Unknown members are ignored, and so are feature names this version does not know.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceMetadataExtension {
    /// The SEP the extension implements.
    #[serde(default)]
    pub sep: u32,
    /// The parts served, by name ([`Feature::as_str`]).
    #[serde(default)]
    pub features: Vec<String>,
}

impl ResourceMetadataExtension {
    /// SEP-2093.
    pub const SEP: u32 = 2093;

    /// Every part served: what an rsrc server declares.
    pub fn all() -> Self {
        ResourceMetadataExtension {
            sep: Self::SEP,
            features: Feature::ALL.iter().map(|f| f.as_str().to_owned()).collect(),
        }
    }

    /// Whether the settings name `feature`.
    pub fn serves(&self, feature: Feature) -> bool {
        self.features.iter().any(|f| f == feature.as_str())
    }

    /// The settings as a JSON object.
    pub fn to_value(&self) -> Value {
        serde_json::json!({ "sep": self.sep, "features": self.features })
    }

    /// Declares these settings in `capabilities`, where `era` declares an extension:
    /// `extensions` in the 2026-07-28 era, `experimental` in the 2025 one. An earlier
    /// declaration, in either place, is replaced.
    pub fn declare(&self, capabilities: &mut ServerCapabilities, era: Era) {
        Self::withdraw(capabilities);
        let settings = self.to_value();
        match era {
            Era::Modern => {
                capabilities
                    .extensions
                    .get_or_insert_with(Default::default)
                    .insert(RESOURCE_METADATA_EXTENSION.to_owned(), settings);
            }
            Era::Legacy => {
                let experimental = capabilities
                    .other
                    .entry(EXPERIMENTAL)
                    .or_insert_with(|| Value::Object(Default::default()));
                if !experimental.is_object() {
                    // Not an object, so not a valid `experimental`: replaced by one.
                    *experimental = Value::Object(Default::default());
                }
                if let Value::Object(map) = experimental {
                    map.insert(RESOURCE_METADATA_EXTENSION.to_owned(), settings);
                }
            }
        }
    }

    /// Moves a declaration of the extension, if `capabilities` holds one, to where `era`
    /// declares it (for a host that merges a server's capabilities made for one era into
    /// an answer of another).
    pub fn place(capabilities: &mut ServerCapabilities, era: Era) {
        if let Some(settings) = Self::declared(capabilities) {
            settings.declare(capabilities, era);
        }
    }

    /// The settings a server declares, under `extensions` or `experimental`; `None` when
    /// it declares none, or settings that are not an object.
    pub fn declared(capabilities: &ServerCapabilities) -> Option<Self> {
        let modern = capabilities
            .extensions
            .as_ref()
            .and_then(|e| e.get(RESOURCE_METADATA_EXTENSION));
        let legacy = capabilities
            .other
            .get(EXPERIMENTAL)
            .and_then(|e| e.get(RESOURCE_METADATA_EXTENSION));
        modern
            .into_iter()
            .chain(legacy)
            .find_map(|v| Self::deserialize(v).ok())
    }

    /// Removes the extension's declaration from both places, and the place itself when
    /// nothing else is left in it.
    fn withdraw(capabilities: &mut ServerCapabilities) {
        if let Some(e) = &mut capabilities.extensions {
            e.remove(RESOURCE_METADATA_EXTENSION);
            if e.is_empty() {
                capabilities.extensions = None;
            }
        }
        if let Some(Value::Object(e)) = capabilities.other.get_mut(EXPERIMENTAL) {
            e.remove(RESOURCE_METADATA_EXTENSION);
            if e.is_empty() {
                capabilities.other.remove(EXPERIMENTAL);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn caps(v: Value) -> ServerCapabilities {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn declared_under_extensions_in_2026_and_experimental_before() {
        let all = ResourceMetadataExtension::all();
        let mut modern = caps(json!({"extensions": {"io.modelcontextprotocol/skills": {}}}));
        all.declare(&mut modern, Era::Modern);
        assert_eq!(
            serde_json::to_value(&modern).unwrap(),
            json!({"extensions": {
                "io.modelcontextprotocol/skills": {},
                "dev.rsrc/resource-metadata": {"sep": 2093, "features":
                    ["readMetadata", "resourceTypes", "metadataMethod", "scopedList"]}
            }})
        );
        let mut legacy = caps(json!({"experimental": {"x": {"y": 1}}}));
        all.declare(&mut legacy, Era::Legacy);
        assert_eq!(legacy.other["experimental"]["x"], json!({"y": 1}));
        assert_eq!(
            legacy.other["experimental"][RESOURCE_METADATA_EXTENSION]["sep"],
            2093
        );
        assert!(legacy.extensions.is_none());
        assert_eq!(
            ResourceMetadataExtension::declared(&modern),
            Some(all.clone())
        );
        assert_eq!(ResourceMetadataExtension::declared(&legacy), Some(all));
    }

    #[test]
    fn a_declaration_moves_to_its_eras_place_and_leaves_nothing_empty() {
        let mut c = ServerCapabilities::default();
        ResourceMetadataExtension::all().declare(&mut c, Era::Modern);
        ResourceMetadataExtension::place(&mut c, Era::Legacy);
        assert!(c.extensions.is_none(), "{c:?}");
        assert!(c.other["experimental"][RESOURCE_METADATA_EXTENSION].is_object());
        ResourceMetadataExtension::place(&mut c, Era::Modern);
        assert!(!c.other.contains_key("experimental"), "{c:?}");
        assert!(
            c.extensions
                .unwrap()
                .contains_key(RESOURCE_METADATA_EXTENSION)
        );
        // Nothing declared: nothing placed.
        let mut none = ServerCapabilities::default();
        ResourceMetadataExtension::place(&mut none, Era::Legacy);
        assert_eq!(none, ServerCapabilities::default());
    }

    #[test]
    fn settings_are_read_leniently() {
        let c = caps(json!({"extensions": {RESOURCE_METADATA_EXTENSION:
            {"sep": 2093, "features": ["scopedList", "somethingNew"], "more": true}}}));
        let s = ResourceMetadataExtension::declared(&c).unwrap();
        assert!(s.serves(Feature::ScopedList));
        assert!(!s.serves(Feature::MetadataMethod));
        let empty = caps(json!({"experimental": {RESOURCE_METADATA_EXTENSION: {}}}));
        let s = ResourceMetadataExtension::declared(&empty).unwrap();
        assert_eq!((s.sep, s.features.len()), (0, 0));
        let bad = caps(json!({"extensions": {RESOURCE_METADATA_EXTENSION: "yes"}}));
        assert_eq!(ResourceMetadataExtension::declared(&bad), None);
        assert_eq!(
            ResourceMetadataExtension::declared(&ServerCapabilities::default()),
            None
        );
    }
}
