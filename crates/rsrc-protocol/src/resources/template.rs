//! [`ResourceTemplate`]: a parameterized resource, as `resources/templates/list` gives it.
//!
//! Invariant: the template text is carried verbatim; whether it parses as RFC 6570 is the
//! server's and client's business, not the wire type's.

use serde::{Deserialize, Serialize};

use super::resource::ResourceCapabilities;
use crate::common::{Annotations, Icon, Meta};

/// A parameterized resource (RFC 6570 URI template).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The RFC 6570 template.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the template is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of every resource it produces, when they all share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Icons for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Audience, priority and last modification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// SEP-2093 later draft: the superset of capabilities its resources may have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<ResourceCapabilities>,
    /// Free-form metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ResourceTemplate {
    /// Removes SEP-2093's member (`capabilities`), leaving the standard revisions'
    /// template.
    pub fn strip_sep_2093(&mut self) {
        self.capabilities = None;
    }

    /// A template with a URI template and a name.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            ..ResourceTemplate::default()
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

    /// Sets the MIME type shared by every resource of the template.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the capabilities upper bound.
    #[must_use]
    pub fn with_capabilities(mut self, capabilities: ResourceCapabilities) -> Self {
        self.capabilities = Some(capabilities);
        self
    }
}
