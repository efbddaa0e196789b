//! Property: `matches(&expand(v)) == Some(v)` on the unambiguous subset of templates and
//! values.
//!
//! The subset, following the "Matching semantics" section of the crate docs:
//! - templates are `t:` + path slots separated by `:` (a character no non-reserved value
//!   can contain raw), then optionally a query section (`{?a,b}{&c}{&e*}`) and, only with a
//!   query section, a fragment `{#f}`;
//! - a `{+r}` slot comes last in the path, its value has no `%`, `?` or `#`, and when a
//!   query follows, the first query variable is defined (else `{+r}` would absorb the
//!   `&c=` that expansion writes without a `?`);
//! - values of non-reserved variables contain no `/` (and no `.` in `{.x}`);
//! - `{x}` values are non-empty; lists have at least two items (a one-item list reads back
//!   as a string) except exploded ones; in `{x,y}` and `{/x,y}` only trailing variables may
//!   be undefined;
//! - exploded associative arrays have keys that are not the variable's (or another query
//!   variable's) name, and a query section has at most one exploded variable;
//! - `{/x:N}` values have at most N characters.

use proptest::prelude::*;
use rsrc_uri_template::{UriTemplate, Value};

/// Characters for values: everything interesting except `/`.
const CHARS: &[char] = &[
    'a',
    'b',
    'Z',
    '0',
    '9',
    ' ',
    ',',
    ';',
    '=',
    '&',
    '?',
    '#',
    '!',
    '*',
    '\'',
    '(',
    ')',
    '~',
    '.',
    '_',
    '-',
    '%',
    'é',
    '€',
    ':',
    '@',
    '+',
    '[',
    '"',
    '\u{1F600}',
];

fn string(min: usize, exclude: &'static [char]) -> BoxedStrategy<String> {
    let chars: Vec<char> = CHARS
        .iter()
        .copied()
        .filter(|c| !exclude.contains(c))
        .collect();
    prop::collection::vec(prop::sample::select(chars), min..5)
        .prop_map(|v| v.into_iter().collect())
        .boxed()
}

fn list(min: usize, first_nonempty: bool, exclude: &'static [char]) -> BoxedStrategy<Value> {
    (
        string(usize::from(first_nonempty), exclude),
        prop::collection::vec(string(0, exclude), min.saturating_sub(1)..3),
    )
        .prop_map(|(first, rest)| Value::List(std::iter::once(first).chain(rest).collect()))
        .boxed()
}

fn assoc(exclude: &'static [char]) -> BoxedStrategy<Value> {
    prop::collection::vec(("k[a-z]{0,2}", string(0, exclude)), 1..3)
        .prop_map(Value::Assoc)
        .boxed()
}

fn maybe(s: BoxedStrategy<Value>) -> BoxedStrategy<Option<Value>> {
    prop_oneof![1 => Just(None), 4 => s.prop_map(Some)].boxed()
}

fn s(min: usize, exclude: &'static [char]) -> BoxedStrategy<Value> {
    string(min, exclude).prop_map(Value::String).boxed()
}

/// One path slot: an expression shape (`{N}` stands for the next variable name) and the
/// values of its variables.
fn slot() -> BoxedStrategy<(String, Vec<Option<Value>>)> {
    const NS: &[char] = &[];
    const NODOT: &[char] = &['.'];
    let one = |shape: &'static str, v: BoxedStrategy<Option<Value>>| {
        v.prop_map(move |v| (shape.to_string(), vec![v])).boxed()
    };
    prop_oneof![
        one(
            "{N}",
            prop_oneof![s(1, NS), list(2, true, NS)]
                .prop_map(Some)
                .boxed()
        ),
        one(
            "{/N}",
            maybe(prop_oneof![s(0, NS), list(2, false, NS)].boxed())
        ),
        one(
            "{/N*}",
            maybe(prop_oneof![list(1, false, NS), assoc(NS)].boxed())
        ),
        one(
            "{.N}",
            maybe(prop_oneof![s(0, NODOT), list(2, false, NODOT)].boxed())
        ),
        one(
            "{.N*}",
            maybe(prop_oneof![list(1, false, NODOT), assoc(NODOT)].boxed())
        ),
        one(
            "{;N}",
            maybe(prop_oneof![s(0, NS), list(2, false, NS)].boxed())
        ),
        one(
            "{;N*}",
            maybe(prop_oneof![list(1, false, NS), assoc(NS)].boxed())
        ),
        one(
            "{/N:3}",
            maybe(
                string(0, NS)
                    .prop_map(|s| Value::String(s.chars().take(3).collect()))
                    .boxed()
            )
        ),
        (1usize..4, s(1, NS), prop::collection::vec(s(0, NS), 2)).prop_map(
            |(defined, first, rest)| {
                let vals = std::iter::once(first).chain(rest).take(defined).map(Some);
                let mut vals: Vec<Option<Value>> = vals.collect();
                vals.resize(3, None);
                ("{N,N,N}".to_string(), vals)
            }
        ),
        (1usize..3, prop::collection::vec(s(0, NS), 2)).prop_map(|(defined, v)| {
            let mut vals: Vec<Option<Value>> = v.into_iter().take(defined).map(Some).collect();
            vals.resize(2, None);
            ("{/N,N}".to_string(), vals)
        }),
        prop::collection::vec(maybe(prop_oneof![s(0, NS), list(2, false, NS)].boxed()), 2)
            .prop_map(|vals| ("{;N,N}".to_string(), vals)),
    ]
    .boxed()
}

#[derive(Debug, Clone)]
struct Case {
    template: String,
    /// Defined variables, in template order.
    vars: Vec<(String, Value)>,
}

fn case() -> impl Strategy<Value = Case> {
    const NS: &[char] = &[];
    (
        prop::collection::vec(slot(), 0..4),
        prop::option::of(string(1, &['%', '?', '#'])),
        prop::option::of((
            prop::collection::vec(
                maybe(prop_oneof![s(0, NS), list(2, false, NS)].boxed()),
                1..4,
            ),
            prop::option::of(maybe(prop_oneof![list(1, false, NS), assoc(NS)].boxed())),
            prop::option::of(maybe(string(0, &['%']).prop_map(Value::String).boxed())),
        )),
    )
        .prop_map(|(slots, reserved, query)| {
            let mut template = String::from("t:");
            let mut vals: Vec<Option<Value>> = Vec::new();
            let mut n = 0;
            let mut fill = |shape: &str, template: &mut String| {
                let mut parts = shape.split('N');
                template.push_str(parts.next().unwrap_or_default());
                for rest in parts {
                    template.push_str(&format!("v{n}"));
                    n += 1;
                    template.push_str(rest);
                }
            };
            for (i, (shape, v)) in slots.into_iter().enumerate() {
                if i > 0 {
                    template.push(':');
                }
                fill(&shape, &mut template);
                vals.extend(v);
            }
            let has_reserved = reserved.is_some();
            if let Some(r) = reserved {
                template.push(':');
                fill("{+N}", &mut template);
                vals.push(Some(Value::String(r)));
            }
            if let Some((mut qvars, explode, fragment)) = query {
                if has_reserved && qvars[0].is_none() {
                    qvars[0] = Some(Value::String("q".into()));
                }
                let shape = format!("{{?{}}}", vec!["N"; qvars.len().min(2)].join(","));
                fill(&shape, &mut template);
                if qvars.len() > 2 {
                    fill("{&N}", &mut template);
                }
                vals.extend(qvars);
                if let Some(e) = explode {
                    fill("{&N*}", &mut template);
                    vals.push(e);
                }
                if let Some(f) = fragment {
                    fill("{#N}", &mut template);
                    vals.push(f);
                }
            }
            let vars = vals
                .into_iter()
                .enumerate()
                .filter_map(|(i, v)| v.map(|v| (format!("v{i}"), v)))
                .collect();
            Case { template, vars }
        })
}

proptest! {
    // 2000 cases unless PROPTEST_CASES says otherwise.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(2000),
        ..ProptestConfig::default()
    })]

    #[test]
    fn match_inverts_expand(c in case()) {
        let t = UriTemplate::parse(&c.template).expect("generated templates are valid");
        let vars: Vec<(&str, Value)> = c.vars.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        let uri = t.try_expand(&vars[..]).expect("no prefix on composite values");
        let captures = t.matches(&uri);
        prop_assert!(captures.is_some(), "{} expanded to {uri:?}, which does not match", c.template);
        let got: Vec<(String, Value)> = captures
            .iter()
            .flat_map(|c| c.iter())
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        prop_assert_eq!(got, c.vars.clone(), "template {} uri {:?}", c.template, uri);
    }
}
