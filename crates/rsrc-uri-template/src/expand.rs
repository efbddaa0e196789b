//! Expansion: template plus variable values to a URI, exactly as RFC 6570 section 3 and
//! the algorithm of appendix A describe.

use std::fmt;

use crate::chars::{encode_into, push_pct, truncate_chars};
use crate::parse::{Expression, Part};
use crate::value::{Value, VarSource};

/// An expression that cannot be expanded with the given values.
///
/// The only such case in RFC 6570 is a prefix modifier (`{var:3}`) on a list or
/// associative array (section 2.4.1). [`UriTemplate::expand`](crate::UriTemplate::expand)
/// then copies the expression unexpanded, as section 3 recommends;
/// [`UriTemplate::try_expand`](crate::UriTemplate::try_expand) reports this error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpandError {
    position: usize,
    variable: Box<str>,
}

impl ExpandError {
    /// Byte offset in the template of the expression that failed.
    pub fn position(&self) -> usize {
        self.position
    }

    /// The variable whose value does not fit the expression.
    pub fn variable(&self) -> &str {
        &self.variable
    }
}

impl fmt::Display for ExpandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "at byte {}: prefix modifier on the composite value of {:?}",
            self.position, self.variable
        )
    }
}

impl std::error::Error for ExpandError {}

/// Appends the expansion of a literal: characters allowed in a URI are copied, others
/// (non-ASCII `ucschar`/`iprivate`) are percent-encoded as UTF-8.
pub(crate) fn expand_literal(out: &mut String, lit: &str) {
    for c in lit.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for &b in c.encode_utf8(&mut buf).as_bytes() {
                push_pct(out, b);
            }
        }
    }
}

/// Expands all parts. With `strict`, the first failing expression is an error; otherwise
/// it is copied to the output unexpanded.
pub(crate) fn expand_parts<V: VarSource + ?Sized>(
    template: &str,
    parts: &[Part],
    vars: &V,
    strict: bool,
) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(template.len() + 16);
    for part in parts {
        match part {
            Part::Literal(lit) => expand_literal(&mut out, lit),
            Part::Expr(expr) => {
                let mark = out.len();
                if let Err(e) = expand_expr(&mut out, expr, vars) {
                    if strict {
                        return Err(e);
                    }
                    out.truncate(mark);
                    out.push_str(template.get(expr.start..expr.end).unwrap_or_default());
                }
            }
        }
    }
    Ok(out)
}

fn expand_expr<V: VarSource + ?Sized>(
    out: &mut String,
    expr: &Expression,
    vars: &V,
) -> Result<(), ExpandError> {
    let op = expr.op;
    let allow = op.allow_reserved();
    let sep = op.sep();
    let mut first = true;
    for spec in &expr.vars {
        let Some(value) = vars.get(&spec.name) else {
            continue;
        };
        if value.is_undefined() {
            continue;
        }
        if spec.prefix().is_some() && !matches!(value, Value::String(_)) {
            return Err(ExpandError {
                position: expr.start,
                variable: spec.name.clone(),
            });
        }
        if first {
            if let Some(c) = op.first() {
                out.push(c);
            }
            first = false;
        } else {
            out.push(sep);
        }
        match value {
            Value::String(s) => {
                if op.named() {
                    out.push_str(&spec.name);
                    if s.is_empty() {
                        out.push_str(op.ifemp());
                        continue;
                    }
                    out.push('=');
                }
                let s = match spec.prefix() {
                    Some(n) => truncate_chars(s, usize::from(n)),
                    None => s,
                };
                encode_into(out, s, allow);
            }
            Value::List(items) if !spec.explode() => {
                if op.named() {
                    out.push_str(&spec.name);
                    out.push('=');
                }
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    encode_into(out, item, allow);
                }
            }
            Value::Assoc(pairs) if !spec.explode() => {
                if op.named() {
                    out.push_str(&spec.name);
                    out.push('=');
                }
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    encode_into(out, k, allow);
                    out.push(',');
                    encode_into(out, v, allow);
                }
            }
            Value::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(sep);
                    }
                    if op.named() {
                        out.push_str(&spec.name);
                        if item.is_empty() {
                            out.push_str(op.ifemp());
                            continue;
                        }
                        out.push('=');
                    }
                    encode_into(out, item, allow);
                }
            }
            Value::Assoc(pairs) => {
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push(sep);
                    }
                    encode_into(out, k, allow);
                    if op.named() && v.is_empty() {
                        out.push_str(op.ifemp());
                        continue;
                    }
                    out.push('=');
                    encode_into(out, v, allow);
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_encoding() {
        let mut s = String::new();
        expand_literal(&mut s, "café/x%20y");
        assert_eq!(s, "caf%C3%A9/x%20y");
    }
}
