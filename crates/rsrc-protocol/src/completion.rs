//! `completion/complete` for resource-template arguments (and the prompt reference shape,
//! so that a request naming a prompt decodes and can be refused precisely).
//!
//! Invariant: a [`Completion`] never holds more than [`Completion::MAX_VALUES`] values;
//! [`Completion::from_matches`] truncates and sets `total` / `hasMore` truthfully.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::common::ResultType;
use crate::meta::{RequestMeta, ResultMeta};

/// What is being completed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Reference {
    /// A resource template (or URI), by its template string.
    #[serde(rename = "ref/resource")]
    Resource {
        /// The URI template.
        uri: String,
    },
    /// A prompt, by name.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt's name.
        name: String,
        /// Its display title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
}

/// The argument being completed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompleteArgument {
    /// The variable's name.
    pub name: String,
    /// What the user has typed so far.
    pub value: String,
}

/// Variables already chosen.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompleteContext {
    /// Already-resolved arguments by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// `completion/complete` params.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompleteParams {
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: Reference,
    /// The argument and its partial value.
    pub argument: CompleteArgument,
    /// Arguments already chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompleteContext>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// Completion values.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// At most 100 suggestions, best first.
    pub values: Vec<String>,
    /// How many matches exist in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more matches exist than were returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl Completion {
    /// The protocol's limit on values per response.
    pub const MAX_VALUES: usize = 100;

    /// No suggestions.
    pub fn empty() -> Self {
        Completion {
            values: Vec::new(),
            total: Some(0),
            has_more: Some(false),
        }
    }

    /// Suggestions from every match, truncated to the limit, with `total` and `hasMore`
    /// describing the full set.
    pub fn from_matches(mut values: Vec<String>) -> Self {
        let total = values.len();
        values.truncate(Self::MAX_VALUES);
        Completion {
            has_more: Some(total > values.len()),
            total: Some(total as u64),
            values,
        }
    }
}

/// `completion/complete` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// The suggestions.
    pub completion: Completion,
    /// 2026-07-28: always `complete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_truncates_to_the_limit_and_says_so() {
        let c = Completion::from_matches((0..250).map(|i| i.to_string()).collect());
        assert_eq!(c.values.len(), 100);
        assert_eq!(c.total, Some(250));
        assert_eq!(c.has_more, Some(true));
        let c = Completion::from_matches(vec!["a".into()]);
        assert_eq!((c.total, c.has_more), (Some(1), Some(false)));
    }

    #[test]
    fn references_decode_by_type() {
        let p: CompleteParams = serde_json::from_str(
            r#"{"ref":{"type":"ref/resource","uri":"file:///{path}"},
                "argument":{"name":"path","value":"sr"},
                "context":{"arguments":{"root":"a"}}}"#,
        )
        .unwrap();
        assert_eq!(
            p.reference,
            Reference::Resource {
                uri: "file:///{path}".into()
            }
        );
        assert_eq!(p.context.unwrap().arguments.unwrap()["root"], "a");
        assert!(
            serde_json::from_str::<CompleteParams>(
                r#"{"ref":{"type":"ref/other"},"argument":{"name":"a","value":""}}"#
            )
            .is_err()
        );
    }
}
