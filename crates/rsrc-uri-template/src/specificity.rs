//! Specificity: how a router orders templates that match the same URI.

use std::cmp::Reverse;
use std::sync::Arc;

use crate::parse::{Op, Part};

/// How specific a template is; greater means more specific.
///
/// When several templates match a URI, a router should pick the greatest. The order
/// compares, in turn:
///
/// 1. a template without variables beats any template with variables;
/// 2. more literal characters beat fewer (a pct-encoded triplet counts as one character);
/// 3. fewer variables beat more;
/// 4. fewer multi-segment variables (those of `{+x}`, `{#x}`, and exploded `{x*}`) beat more;
/// 5. finally the template text: the one that sorts first (byte-wise) ranks higher, so the
///    order is total and deterministic.
///
/// Thus `file:///docs/{name}` beats `file:///{+path}`, and `file:///docs/readme` beats both.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Specificity {
    literal_only: bool,
    literal_chars: usize,
    variables: Reverse<usize>,
    multi_segment: Reverse<usize>,
    template: Reverse<Arc<str>>,
}

impl Specificity {
    pub(crate) fn new(template: Arc<str>, parts: &[Part]) -> Self {
        let mut literal_chars = 0;
        let mut variables = 0;
        let mut multi_segment = 0;
        for part in parts {
            match part {
                Part::Literal(l) => {
                    // Each triplet is three characters of which only the first is counted.
                    literal_chars += l.chars().count().saturating_sub(2 * l.matches('%').count());
                }
                Part::Expr(e) => {
                    variables += e.vars.len();
                    multi_segment += e
                        .vars
                        .iter()
                        .filter(|v| v.explode() || matches!(e.op, Op::Reserved | Op::Fragment))
                        .count();
                }
            }
        }
        Specificity {
            literal_only: variables == 0,
            literal_chars,
            variables: Reverse(variables),
            multi_segment: Reverse(multi_segment),
            template: Reverse(template),
        }
    }

    /// Number of literal characters (a pct-encoded triplet counts as one).
    pub fn literal_chars(&self) -> usize {
        self.literal_chars
    }

    /// Number of variables, counting every occurrence.
    pub fn variables(&self) -> usize {
        self.variables.0
    }

    /// Number of multi-segment variables: those of `{+x}`, `{#x}` and exploded ones.
    pub fn multi_segment_variables(&self) -> usize {
        self.multi_segment.0
    }
}
