//! [`Matcher`]: a template prepared for matching, split into its path, query and fragment
//! sections, and the match of a URI against it.
//!
//! Invariant: every step is linear in the URI length: the path and the fragment run through
//! their automata ([`Compiled`]) in place, the query is one pass over its `&`-separated
//! parameters, and each value is percent-decoded once, after the split.

use super::compile::{Compiled, Piece, compile};
use super::pike::UNSET;
use super::values::{self, SpecInfo};

use crate::chars::{pct_decode, truncate_chars};
use crate::expand::expand_literal;
use crate::parse::{Op, Part};
use crate::value::{Captures, Value};

/// The query section of a template.
#[derive(Clone, Debug)]
struct QuerySection {
    /// Literal `key=value` parameters the URI must contain: (as written, as expanded).
    required: Vec<(String, String)>,
    /// Global indices of the query variables.
    vars: Vec<usize>,
    /// The section starts with `{?...}`: when all its variables are undefined the
    /// expansion has no `?`, and the query may start at an `&` instead.
    amp_start: bool,
}

/// A template prepared for matching.
#[derive(Clone, Debug)]
pub(crate) struct Matcher {
    specs: Vec<SpecInfo>,
    /// Unique variable names in template order, with the indices of their occurrences.
    groups: Vec<(Box<str>, Vec<usize>)>,
    path: Compiled,
    query: Option<QuerySection>,
    fragment: Option<Compiled>,
    /// Literal text every matching URI starts with: a cheap first check for routers.
    prefix: Box<str>,
}

/// Where the sections of a template start.
struct Layout<'a> {
    /// Index of the part where the query starts.
    qstart: usize,
    /// Text before the `?` when the query starts inside a literal.
    path_tail: Option<&'a str>,
    required: Vec<(String, String)>,
    /// Indices of the query expressions.
    qexprs: Vec<usize>,
    /// Fragment section: literal text starting with `#`, then parts from this index.
    fragment: Option<(Option<&'a str>, usize)>,
}

/// Finds the query and fragment sections, if the template has a query section.
fn layout(parts: &[Part]) -> Option<Layout<'_>> {
    let qstart = parts.iter().position(|p| match p {
        Part::Expr(e) => e.op == Op::Query,
        Part::Literal(l) => l.contains('?'),
    })?;
    let in_path_fragment = parts[..qstart].iter().any(|p| match p {
        Part::Expr(e) => e.op == Op::Fragment,
        Part::Literal(l) => l.contains('#'),
    });
    if in_path_fragment {
        return None;
    }
    let mut query_text = String::new();
    let mut qexprs = Vec::new();
    let mut path_tail = None;
    let mut fragment = None;
    match &parts[qstart] {
        Part::Literal(l) => {
            let (before, after) = l.split_once('?')?;
            if before.contains('#') {
                return None;
            }
            path_tail = Some(before);
            match after.split_once('#') {
                Some(_) => return None, // no query expression before the fragment
                None => query_text.push_str(after),
            }
        }
        Part::Expr(_) => qexprs.push(qstart),
    }
    for (i, part) in parts.iter().enumerate().skip(qstart + 1) {
        match part {
            Part::Expr(e) if e.op == Op::QueryCont => qexprs.push(i),
            Part::Expr(e) if e.op == Op::Fragment => {
                fragment = Some((None, i));
                break;
            }
            Part::Expr(_) => return None,
            Part::Literal(l) => {
                let (q, f) = match l.find('#') {
                    Some(h) => (&l[..h], Some(&l[h..])),
                    None => (&**l, None),
                };
                // Literal parameters must stand apart from the expansion before them.
                if q.contains('?') || !(q.is_empty() || q.starts_with('&')) {
                    return None;
                }
                query_text.push_str(q);
                if let Some(f) = f {
                    fragment = Some((Some(f), i + 1));
                    break;
                }
            }
        }
    }
    if qexprs.is_empty() {
        return None;
    }
    let required = query_text
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut expanded = String::new();
            expand_literal(&mut expanded, p);
            (p.to_owned(), expanded)
        })
        .collect();
    Some(Layout {
        qstart,
        path_tail,
        required,
        qexprs,
        fragment,
    })
}

/// The start of the template's first literal up to its first `%` or non-ASCII character
/// (which may match in more than one way) or `?` or `#` (where a query or fragment section
/// may start): text that must start every matching URI.
fn literal_prefix(parts: &[Part]) -> Box<str> {
    match parts.first() {
        Some(Part::Literal(l)) => {
            let end = l
                .find(|c: char| matches!(c, '%' | '?' | '#') || !c.is_ascii())
                .unwrap_or(l.len());
            l[..end].into()
        }
        _ => "".into(),
    }
}

impl Matcher {
    pub(crate) fn new(parts: &[Part]) -> Matcher {
        let mut first_var = Vec::with_capacity(parts.len());
        let mut specs = Vec::new();
        for part in parts {
            first_var.push(specs.len());
            if let Part::Expr(e) = part {
                let count = e.vars.len();
                specs.extend(e.vars.iter().enumerate().map(|(i, v)| SpecInfo {
                    name: v.name.clone(),
                    op: e.op,
                    explode: v.explode(),
                    prefix: v.prefix(),
                    path_guard: false,
                    comma_guard: e.op.allow_reserved() && i + 1 < count,
                }));
            }
        }
        let mut groups: Vec<(Box<str>, Vec<usize>)> = Vec::new();
        for (i, s) in specs.iter().enumerate() {
            match groups.iter_mut().find(|(n, _)| *n == s.name) {
                Some((_, idx)) => idx.push(i),
                None => groups.push((s.name.clone(), vec![i])),
            }
        }
        let piece = |i: usize| match &parts[i] {
            Part::Literal(l) => Piece::Lit(l),
            Part::Expr(e) => Piece::Expr(e, first_var[i]),
        };
        let Some(lay) = layout(parts) else {
            let pieces: Vec<Piece<'_>> = (0..parts.len()).map(piece).collect();
            return Matcher {
                specs,
                groups,
                path: compile(&pieces),
                query: None,
                fragment: None,
                prefix: literal_prefix(parts),
            };
        };
        let mut path: Vec<Piece<'_>> = (0..lay.qstart).map(piece).collect();
        if let Some(t) = lay.path_tail {
            path.push(Piece::Lit(t));
        }
        for s in &mut specs[..first_var[lay.qstart]] {
            s.path_guard = true;
        }
        let fragment = lay.fragment.map(|(lit, from)| {
            let mut pieces: Vec<Piece<'_>> = lit.map(Piece::Lit).into_iter().collect();
            pieces.extend((from..parts.len()).map(piece));
            compile(&pieces)
        });
        let vars = lay
            .qexprs
            .iter()
            .flat_map(|&i| match &parts[i] {
                Part::Expr(e) => first_var[i]..first_var[i] + e.vars.len(),
                Part::Literal(_) => 0..0,
            })
            .collect();
        Matcher {
            prefix: literal_prefix(parts),
            specs,
            groups,
            path: compile(&path),
            query: Some(QuerySection {
                required: lay.required,
                vars,
                amp_start: lay.path_tail.is_none(),
            }),
            fragment,
        }
    }

    /// Matches a whole URI.
    pub(crate) fn matches(&self, uri: &str) -> Option<Captures> {
        if !uri.starts_with(&*self.prefix) {
            return None;
        }
        let mut values: Vec<Option<Value>> = vec![None; self.specs.len()];
        let Some(q) = &self.query else {
            let (slots, _) = self.path.prog.exec(uri, None)?;
            self.collect(&self.path, uri, &slots, &mut values)?;
            return self.merge(values);
        };
        let (before_fragment, fragment) = uri.split_at(uri.find('#').unwrap_or(uri.len()));
        let (path, mut query) = match before_fragment.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (before_fragment, None),
        };
        let split_at = (query.is_none() && q.amp_start).then_some('&');
        let (slots, end) = self.path.prog.exec(path, split_at)?;
        if end < path.len() {
            query = path.get(end + 1..);
        }
        let path = &path[..end];
        self.collect(&self.path, path, &slots, &mut values)?;
        self.match_query(q, query.unwrap_or(""), &mut values)?;
        match &self.fragment {
            Some(f) => {
                let (slots, _) = f.prog.exec(fragment, None)?;
                self.collect(f, fragment, &slots, &mut values)?;
            }
            None if !fragment.is_empty() => return None,
            None => {}
        }
        self.merge(values)
    }

    /// Decodes the variables a program captured.
    fn collect(
        &self,
        c: &Compiled,
        input: &str,
        slots: &[usize],
        values: &mut [Option<Value>],
    ) -> Option<()> {
        for (local, &global) in c.vars.iter().enumerate() {
            let (s, e) = (slots[2 * local], slots[2 * local + 1]);
            if s == UNSET || e == UNSET {
                continue;
            }
            let raw = input.get(s..e)?;
            values[global] = Some(values::positional(&self.specs[global], raw)?);
        }
        Some(())
    }

    /// Matches the query section against the URI's query (without `?`).
    fn match_query(
        &self,
        q: &QuerySection,
        query: &str,
        values: &mut [Option<Value>],
    ) -> Option<()> {
        // (whole parameter, raw key, raw value, decoded key)
        let params: Vec<(&str, &str, &str, Option<String>)> = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (p, k, v, pct_decode(k))
            })
            .collect();
        let mut claimed = vec![false; params.len()];
        for (raw, expanded) in &q.required {
            let mut found = false;
            for (i, (whole, ..)) in params.iter().enumerate() {
                if whole == raw || whole == expanded {
                    claimed[i] = true;
                    found = true;
                }
            }
            if !found {
                return None;
            }
        }
        // Parameter names are compared decoded: `%71=x` is `q=x`.
        let claim = |name: &str, claimed: &mut [bool]| -> Vec<&str> {
            let mut found = Vec::new();
            let Some(name) = pct_decode(name) else {
                return found;
            };
            for (i, (_, _, v, key)) in params.iter().enumerate() {
                if key.as_deref() == Some(&*name) {
                    claimed[i] = true;
                    found.push(*v);
                }
            }
            found
        };
        for &g in &q.vars {
            let spec = &self.specs[g];
            if !spec.explode
                && let Some(raw) = claim(&spec.name, &mut claimed).first()
            {
                values[g] = Some(values::query_value(spec, raw)?);
            }
        }
        let mut unmatched_explode = None;
        for &g in &q.vars {
            let spec = &self.specs[g];
            if spec.explode {
                let found = claim(&spec.name, &mut claimed);
                if found.is_empty() {
                    unmatched_explode.get_or_insert(g);
                } else {
                    values[g] = Some(values::query_list(spec, &found)?);
                }
            }
        }
        if let Some(g) = unmatched_explode {
            let rest: Vec<(&str, &str)> = params
                .iter()
                .zip(&claimed)
                .filter(|(_, c)| !**c)
                .map(|((_, k, v, _), _)| (*k, *v))
                .collect();
            if !rest.is_empty() {
                values[g] = Some(values::query_assoc(&self.specs[g], &rest)?);
            }
        }
        Some(())
    }

    /// Combines the occurrences of each variable into one value (see "Matching semantics"
    /// in the crate docs): a variable is defined at all its occurrences or none, unmodified
    /// occurrences must agree, and prefix occurrences must be prefixes of the full value.
    fn merge(&self, mut values: Vec<Option<Value>>) -> Option<Captures> {
        let mut out = Vec::with_capacity(self.groups.len());
        for (name, occurrences) in &self.groups {
            let mut full: Option<Value> = None;
            let mut prefixes: Vec<(usize, String)> = Vec::new();
            let has_prefix = occurrences.iter().any(|&g| self.specs[g].prefix.is_some());
            let defined = occurrences.iter().filter(|&&g| values[g].is_some()).count();
            if defined == 0 {
                continue;
            }
            // Expansion writes a defined variable at every occurrence.
            if defined < occurrences.len() {
                return None;
            }
            for &g in occurrences {
                let Some(v) = values[g].take() else { continue };
                match (self.specs[g].prefix, v) {
                    (Some(n), Value::String(s)) => prefixes.push((usize::from(n), s)),
                    (Some(_), _) => return None,
                    (None, v) => match &full {
                        Some(f) if *f != v => return None,
                        Some(_) => {}
                        None => full = Some(v),
                    },
                }
            }
            let value = match full {
                Some(v) => {
                    // A composite value cannot be expanded where a prefix applies to it.
                    if has_prefix {
                        let s = v.as_str()?;
                        if prefixes.iter().any(|(n, p)| truncate_chars(s, *n) != p) {
                            return None;
                        }
                    }
                    v
                }
                None => {
                    let Some(longest) = prefixes
                        .iter()
                        .map(|(_, p)| p)
                        .max_by_key(|p| p.chars().count())
                    else {
                        continue;
                    };
                    if prefixes
                        .iter()
                        .any(|(n, p)| truncate_chars(longest, *n) != p)
                    {
                        return None;
                    }
                    Value::String(longest.clone())
                }
            };
            out.push((name.clone(), value));
        }
        Some(Captures::from_vec(out))
    }
}
