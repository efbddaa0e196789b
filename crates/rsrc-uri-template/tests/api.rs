//! Parse errors, limits, expansion entry points and specificity ordering.

// In tests a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, HashMap};

use rsrc_uri_template::limits::{
    MAX_EXPRESSIONS, MAX_TEMPLATE_LEN, MAX_VARIABLES, MAX_VARNAME_LEN,
};
use rsrc_uri_template::{ParseErrorKind, UriTemplate, Value};

fn err(template: &str) -> (usize, ParseErrorKind, String) {
    let e = UriTemplate::parse(template).expect_err(template);
    (e.position(), e.kind().clone(), e.to_string())
}

#[test]
fn parse_errors_carry_position_and_reason() {
    assert_eq!(err("abc{de").2, "at byte 3: unclosed expression");
    assert_eq!(err("a}b").0, 1);
    assert_eq!(err("a}b").1, ParseErrorKind::UnmatchedClosingBrace);
    assert_eq!(err("x{}").1, ParseErrorKind::EmptyExpression);
    assert_eq!(err("{=path}").1, ParseErrorKind::ReservedOperator('='));
    assert_eq!(err("{|var}").1, ParseErrorKind::ReservedOperator('|'));
    assert_eq!(err("a b").1, ParseErrorKind::InvalidLiteral(' '));
    assert_eq!(err("a\u{7}b").1, ParseErrorKind::InvalidLiteral('\u{7}'));
    assert_eq!(err("a<b").0, 1);
    assert_eq!(err("a%4g").1, ParseErrorKind::InvalidPercentEncoding);
    assert_eq!(err("a%").0, 1);
    assert_eq!(err("{%2x}").1, ParseErrorKind::InvalidPercentEncoding);
    assert_eq!(err("{x.}").1, ParseErrorKind::DotWithoutName);
    assert_eq!(err("{x..y}").0, 3);
    assert_eq!(err("{var:0}").1, ParseErrorKind::InvalidPrefix);
    assert_eq!(err("{var:10000}").0, 5);
    assert_eq!(err("{var:}").1, ParseErrorKind::InvalidPrefix);
    assert_eq!(err("{var:2*}").1, ParseErrorKind::UnexpectedCharacter('*'));
    assert_eq!(err("{a, b}").1, ParseErrorKind::UnexpectedCharacter(' '));
    assert_eq!(err("{a,}").1, ParseErrorKind::ExpectedVarName);
    assert_eq!(err("{+}").1, ParseErrorKind::ExpectedVarName);
    assert_eq!(err("{é}").1, ParseErrorKind::UnexpectedCharacter('é'));
    assert_eq!(
        err("x\u{FFFE}").1,
        ParseErrorKind::InvalidLiteral('\u{FFFE}')
    );
    let e = UriTemplate::parse("{").unwrap_err();
    let _: &dyn std::error::Error = &e;
}

#[test]
fn limits_are_enforced() {
    let long = "a".repeat(MAX_TEMPLATE_LEN + 1);
    assert_eq!(err(&long).1, ParseErrorKind::TemplateTooLong);
    assert!(UriTemplate::parse(&long[1..]).is_ok());
    let many = "{a}".repeat(MAX_EXPRESSIONS + 1);
    assert_eq!(err(&many).1, ParseErrorKind::TooManyExpressions);
    assert_eq!(err(&many).0, 3 * MAX_EXPRESSIONS);
    let vars: Vec<String> = (0..=MAX_VARIABLES).map(|i| format!("v{i}")).collect();
    assert_eq!(
        err(&format!("{{{}}}", vars.join(","))).1,
        ParseErrorKind::TooManyVariables
    );
    let name = "n".repeat(MAX_VARNAME_LEN + 1);
    assert_eq!(
        err(&format!("x{{{name}}}")),
        (
            2,
            ParseErrorKind::VarNameTooLong,
            format!("at byte 2: variable name longer than {MAX_VARNAME_LEN} bytes")
        )
    );
    assert!(UriTemplate::parse(&format!("{{{}}}", &name[1..])).is_ok());
}

#[test]
fn accessors() {
    let t = UriTemplate::parse("x:{a}/{+b}{?a,c*}").unwrap();
    assert_eq!(t.as_str(), "x:{a}/{+b}{?a,c*}");
    assert_eq!(t.variables().collect::<Vec<_>>(), ["a", "b", "c"]);
    assert_eq!(t.to_string(), t.as_str());
    assert_eq!(format!("{t:?}"), "UriTemplate(\"x:{a}/{+b}{?a,c*}\")");
    let u: UriTemplate = "x:{a}/{+b}{?a,c*}".parse().unwrap();
    assert_eq!(t, u);
}

#[test]
fn expand_from_maps_and_slices() {
    let t = UriTemplate::parse("file:///{dir}/{name}{?tags}").unwrap();
    let mut h: HashMap<String, Value> = HashMap::new();
    h.insert("dir".into(), "a b".into());
    h.insert("name".into(), "x/y".into());
    h.insert("tags".into(), vec!["1", "2"].into());
    assert_eq!(t.expand(&h), "file:///a%20b/x%2Fy?tags=1,2");
    let b: BTreeMap<&str, Value> = [("dir", Value::from("d"))].into_iter().collect();
    assert_eq!(t.expand(&b), "file:///d/");
    let s = [("name", Value::from("n"))];
    assert_eq!(t.expand(&s), "file:////n");
    assert_eq!(t.expand(&s[..]), "file:////n");
}

#[test]
fn prefix_on_composite_value_fails_strictly_and_is_copied_leniently() {
    let t = UriTemplate::parse("a{keys:1}b{x}").unwrap();
    let vars = [
        ("keys", Value::from(vec![("k", "v")])),
        ("x", Value::from("1")),
    ];
    let e = t.try_expand(&vars).unwrap_err();
    assert_eq!(e.position(), 1);
    assert_eq!(e.variable(), "keys");
    assert_eq!(t.expand(&vars), "a{keys:1}b1");
}

#[test]
fn undefined_values() {
    let t = UriTemplate::parse("x{?a,b,c,d}").unwrap();
    let vars = [
        ("a", Value::List(vec![])),
        ("b", Value::Assoc(vec![])),
        ("c", Value::from("")),
    ];
    assert!(Value::List(vec![]).is_undefined());
    assert!(!Value::from("").is_undefined());
    assert_eq!(t.expand(&vars), "x?c=");
}

#[test]
fn matches_then_expand_round_trips() {
    let t = UriTemplate::parse("file:///docs/{name}{?rev,fmt}").unwrap();
    let c = t.matches("file:///docs/a%20b?fmt=md&rev=1").unwrap();
    assert_eq!(t.expand(&c), "file:///docs/a%20b?rev=1&fmt=md");
    let names: Vec<&str> = c.iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["name", "rev", "fmt"]);
    assert_eq!((&c).into_iter().count(), 3);
}

fn spec(t: &str) -> rsrc_uri_template::Specificity {
    UriTemplate::parse(t).unwrap().specificity()
}

#[test]
fn specificity_literal_characters_beat_variables() {
    assert!(spec("file:///docs/{name}") > spec("file:///{+path}"));
    assert!(spec("file:///docs/readme") > spec("file:///docs/{name}"));
    assert!(spec("a") > spec("file:///docs/very/long/literal/{x}"));
    assert!(spec("file:///docs/{name}.md") > spec("file:///docs/{name}"));
}

#[test]
fn specificity_ties_break_on_variables_then_text() {
    // Same literal count: fewer variables wins.
    assert!(spec("x:/{a}") > spec("x:/{a}{b}"));
    // Same literal count and variables: fewer multi-segment variables wins.
    assert!(spec("x:/{a}") > spec("x:/{+a}"));
    assert!(spec("x:/{a}") > spec("x:/{/a*}"));
    // Otherwise the text sorting first wins; never equal for different templates.
    assert!(spec("x:/{a}") > spec("x:/{b}"));
    assert_eq!(spec("x:/{a}"), spec("x:/{a}"));
    let s = spec("x:%20{a}{+b}{/c*}");
    assert_eq!(
        (
            s.literal_chars(),
            s.variables(),
            s.multi_segment_variables()
        ),
        (3, 3, 2)
    );
}

#[test]
fn router_picks_most_specific_match() {
    let templates = [
        "file:///{+path}",
        "file:///docs/{name}",
        "file:///docs/readme",
        "file:///{dir}/{name}",
    ];
    let parsed: Vec<UriTemplate> = templates
        .iter()
        .map(|t| UriTemplate::parse(t).unwrap())
        .collect();
    let best = |uri: &str| {
        parsed
            .iter()
            .filter(|t| t.matches(uri).is_some())
            .max_by_key(|t| t.specificity())
            .map(UriTemplate::as_str)
    };
    assert_eq!(best("file:///docs/readme"), Some("file:///docs/readme"));
    assert_eq!(best("file:///docs/other"), Some("file:///docs/{name}"));
    assert_eq!(best("file:///src/main.rs"), Some("file:///{dir}/{name}"));
    assert_eq!(best("file:///a/b/c"), Some("file:///{+path}"));
}

#[test]
fn a_variable_explodes_only_where_every_use_explodes_it() {
    let t = UriTemplate::parse("x://a{/segs*}{?q}{+path}{/both*}/{both}").unwrap();
    assert!(t.explodes("segs"));
    assert!(!t.explodes("q"));
    assert!(!t.explodes("path"));
    assert!(!t.explodes("both"));
    assert!(!t.explodes("absent"));
}
