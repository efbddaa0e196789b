//! [`UriTemplate`]: a parsed template, and what it does (expand, match, compare).
//! Invariant: immutable once parsed, so a clone shares everything.

use std::fmt;
use std::sync::Arc;

use crate::expand::{self, ExpandError};
use crate::matching;
use crate::parse::{self, ParseError};
use crate::specificity::Specificity;
use crate::value::{Captures, VarSource};

struct Parsed {
    source: Arc<str>,
    parts: Vec<parse::Part>,
    names: Vec<Box<str>>,
    matcher: matching::Matcher,
    specificity: Specificity,
}

/// A parsed URI template. Immutable; cloning is cheap (reference-counted).
#[derive(Clone)]
pub struct UriTemplate {
    parsed: Arc<Parsed>,
}

impl UriTemplate {
    /// Parses a template, checking the RFC 6570 grammar and the crate's [`limits`](crate::limits).
    pub fn parse(template: &str) -> Result<UriTemplate, ParseError> {
        let parts = parse::parse(template)?;
        let source: Arc<str> = template.into();
        let mut names: Vec<Box<str>> = Vec::new();
        for part in &parts {
            if let parse::Part::Expr(e) = part {
                for v in &e.vars {
                    if !names.contains(&v.name) {
                        names.push(v.name.clone());
                    }
                }
            }
        }
        let matcher = matching::Matcher::new(&parts);
        let specificity = Specificity::new(source.clone(), &parts);
        Ok(UriTemplate {
            parsed: Arc::new(Parsed {
                source,
                parts,
                names,
                matcher,
                specificity,
            }),
        })
    }

    /// The template text, as given to [`parse`](Self::parse).
    pub fn as_str(&self) -> &str {
        &self.parsed.source
    }

    /// Expands the template (RFC 6570 section 3).
    ///
    /// An expression that cannot be expanded (a prefix modifier on a list or associative
    /// array) is copied unexpanded, as section 3 recommends; [`try_expand`](Self::try_expand)
    /// reports it instead.
    pub fn expand<V: VarSource + ?Sized>(&self, vars: &V) -> String {
        let i = &self.parsed;
        expand::expand_parts(&i.source, &i.parts, vars, false).unwrap_or_default()
    }

    /// Expands the template, failing on an expression that cannot be expanded.
    pub fn try_expand<V: VarSource + ?Sized>(&self, vars: &V) -> Result<String, ExpandError> {
        let i = &self.parsed;
        expand::expand_parts(&i.source, &i.parts, vars, true)
    }

    /// Matches a whole URI against the template, returning the variables' values.
    ///
    /// Runs in time linear in `uri.len()`. See the crate docs, "Matching semantics", for
    /// the rules applied where the RFC is ambiguous.
    pub fn matches(&self, uri: &str) -> Option<Captures> {
        self.parsed.matcher.matches(uri)
    }

    /// The variable names, in template order, each once.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parsed.names.iter().map(|n| &**n)
    }

    /// Whether `name` is exploded (`{/segs*}`) wherever the template uses it: its list
    /// value is written item by item, where an unexploded list (`{+path}`) is written
    /// joined by commas.
    pub fn explodes(&self, name: &str) -> bool {
        let mut uses = self.parsed.parts.iter().flat_map(|p| match p {
            parse::Part::Expr(e) => e.vars.as_slice(),
            _ => &[],
        });
        let mut found = false;
        for v in uses.by_ref().filter(|v| &*v.name == name) {
            if !v.explode() {
                return false;
            }
            found = true;
        }
        found
    }

    /// How specific the template is, for choosing among templates matching one URI.
    pub fn specificity(&self) -> Specificity {
        self.parsed.specificity.clone()
    }
}

impl fmt::Debug for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("UriTemplate").field(&self.as_str()).finish()
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for UriTemplate {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for UriTemplate {}

impl std::hash::Hash for UriTemplate {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl std::str::FromStr for UriTemplate {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        UriTemplate::parse(s)
    }
}
