//! Behaviour of `UriTemplate::matches`, one test per failure mode seen in other SDKs.

// In tests a panic is the failure report.
#![allow(clippy::unwrap_used)]

use rsrc_uri_template::{Captures, UriTemplate, Value};

fn t(s: &str) -> UriTemplate {
    UriTemplate::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

fn m(template: &str, uri: &str) -> Option<Captures> {
    t(template).matches(uri)
}

fn list(items: &[&str]) -> Value {
    Value::List(items.iter().map(|s| s.to_string()).collect())
}

fn assoc(pairs: &[(&str, &str)]) -> Value {
    Value::Assoc(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

#[test]
fn simple_variable_captures_one_segment() {
    let c = m("file:///docs/{name}", "file:///docs/readme.md").unwrap();
    assert_eq!(c.get_str("name"), Some("readme.md"));
    assert_eq!(c.len(), 1);
    assert!(m("file:///docs/{name}", "file:///docs/a/b").is_none());
    assert!(m("file:///docs/{name}", "file:///docs/").is_none());
    assert!(m("file:///docs/{name}", "file:///doc/x").is_none());
}

#[test]
fn query_parameter_order_does_not_matter() {
    let tpl = "search://docs{?q,limit}";
    let a = m(tpl, "search://docs?q=rust&limit=10").unwrap();
    let b = m(tpl, "search://docs?limit=10&q=rust").unwrap();
    assert_eq!(a.get_str("q"), Some("rust"));
    assert_eq!(a.get_str("limit"), Some("10"));
    assert_eq!(b.get_str("q"), Some("rust"));
    assert_eq!(b.get_str("limit"), Some("10"));
}

#[test]
fn extra_query_parameters_are_ignored() {
    let c = m("search://docs{?q}", "search://docs?utm=x&q=rust&page=2").unwrap();
    assert_eq!(c.get_str("q"), Some("rust"));
    assert_eq!(c.len(), 1);
}

#[test]
fn missing_optional_query_parameters() {
    let tpl = "search://docs{?q,limit}{&page}";
    let c = m(tpl, "search://docs").unwrap();
    assert!(c.is_empty());
    let c = m(tpl, "search://docs?limit=5").unwrap();
    assert_eq!(c.get_str("limit"), Some("5"));
    assert_eq!(c.get("q"), None);
    // What expansion gives when every `{?...}` variable is undefined.
    let c = m(tpl, "search://docs&page=2").unwrap();
    assert_eq!(c.get_str("page"), Some("2"));
}

#[test]
fn literal_query_parameters_are_required() {
    let tpl = "api://items?kind=book{&id}";
    let c = m(tpl, "api://items?id=7&kind=book").unwrap();
    assert_eq!(c.get_str("id"), Some("7"));
    assert!(m(tpl, "api://items?id=7").is_none());
    assert!(m(tpl, "api://items?kind=film&id=7").is_none());
}

#[test]
fn query_lists_and_exploded_forms() {
    let c = m("x:{?list}", "x:?list=red,green,blue").unwrap();
    assert_eq!(c.get("list"), Some(&list(&["red", "green", "blue"])));
    let c = m("x:{?list*}", "x:?list=red&other=1&list=blue").unwrap();
    assert_eq!(c.get("list"), Some(&list(&["red", "blue"])));
    let c = m("x:{?q,keys*}", "x:?a=1&q=s&b=%20").unwrap();
    assert_eq!(c.get_str("q"), Some("s"));
    assert_eq!(c.get("keys"), Some(&assoc(&[("a", "1"), ("b", " ")])));
}

#[test]
fn query_parameter_names_compare_decoded() {
    let c = m("x:{?q}", "x:?%71=rust").unwrap();
    assert_eq!(c.get_str("q"), Some("rust"));
    let c = m("x:{?Stra%C3%9Fe}", "x:?Stra%C3%9Fe=1").unwrap();
    assert_eq!(c.get_str("Stra%C3%9Fe"), Some("1"));
    // The parameter belongs to `a`, whose prefix allows two characters only.
    assert!(m("x:{?a:2,m*}", "x:?%61=xyz").is_none());
}

#[test]
fn repeated_query_parameter_takes_the_first() {
    let c = m("x:{?a}", "x:?a=1&a=2").unwrap();
    assert_eq!(c.get_str("a"), Some("1"));
}

#[test]
fn values_are_percent_decoded_exactly_once() {
    let c = m("file:///docs/{name}", "file:///docs/%2541").unwrap();
    assert_eq!(c.get_str("name"), Some("%41"));
    let c = m("x:{?q}", "x:?q=%2541%20b").unwrap();
    assert_eq!(c.get_str("q"), Some("%41 b"));
    let c = m("x:{+path}", "x:a/%25/b%2Fc").unwrap();
    assert_eq!(c.get_str("path"), Some("a/%/b/c"));
    // `{+x}` expansion keeps a value's `%41` as is, so no value expands to `%2541` there.
    assert!(m("x:{+path}", "x:a/%2541").is_none());
}

#[test]
fn encoded_slash_in_simple_variable_does_not_match() {
    assert!(m("file:///docs/{name}", "file:///docs/a%2Fb").is_none());
    assert!(m("file:///docs/{name}", "file:///docs/a%2fb").is_none());
    assert!(m("x:{/seg}", "x:/a%2Fb").is_none());
    // A query value may carry a URL or a path.
    assert_eq!(m("x:{?q}", "x:?q=a%2Fb").unwrap().get_str("q"), Some("a/b"));
    assert_eq!(
        m("x:{?q}", "x:?q=https%3A%2F%2Fexample.com%2Fx")
            .unwrap()
            .get_str("q"),
        Some("https://example.com/x")
    );
    // A reserved variable may contain `/`, so it may contain `%2F` too.
    assert_eq!(m("x:{+p}", "x:a%2Fb").unwrap().get_str("p"), Some("a/b"));
}

#[test]
fn traversal_through_simple_variable_is_impossible() {
    let tpl = "file:///docs/{name}";
    assert!(m(tpl, "file:///docs/..%2F..%2Fetc%2Fpasswd").is_none());
    assert!(m(tpl, "file:///docs/../../etc/passwd").is_none());
    assert!(m(tpl, "file:///docs/%2E%2E%2F%2E%2E%2Fetc").is_none());
    assert!(m("file:///docs/{name}.md", "file:///docs/..%2Fsecret.md").is_none());
}

#[test]
fn reserved_variable_captures_multiple_segments() {
    let c = m("file:///{+path}", "file:///a/b/c.txt").unwrap();
    assert_eq!(c.get_str("path"), Some("a/b/c.txt"));
    let c = m("repo://{owner}/{+path}", "repo://me/src/lib.rs").unwrap();
    assert_eq!(c.get_str("owner"), Some("me"));
    assert_eq!(c.get_str("path"), Some("src/lib.rs"));
    let c = m("file:///{+path}{?rev}", "file:///a/b?rev=2").unwrap();
    assert_eq!(c.get_str("path"), Some("a/b"));
    assert_eq!(c.get_str("rev"), Some("2"));
}

#[test]
fn exploded_path_captures_a_list_of_segments() {
    let c = m("file://{/segs*}", "file:///a/b%20c/d").unwrap();
    assert_eq!(c.get("segs"), Some(&list(&["a", "b c", "d"])));
    let c = m("file://{/segs*}/end", "file:///a/end").unwrap();
    assert_eq!(c.get("segs"), Some(&list(&["a"])));
    let c = m("x:{/keys*}", "x:/a=1/b=2").unwrap();
    assert_eq!(c.get("keys"), Some(&assoc(&[("a", "1"), ("b", "2")])));
    assert!(m("x:{/keys*}", "x:/a=1/b").is_none());
}

#[test]
fn invalid_percent_encoding_does_not_match() {
    assert!(m("file:///docs/{name}", "file:///docs/%zz").is_none());
    assert!(m("file:///docs/{name}", "file:///docs/a%4").is_none());
    assert!(m("file:///docs/{name}", "file:///docs/%FF%FE").is_none());
    assert!(m("x:{+p}", "x:%C3").is_none());
    assert!(m("x:{?q}", "x:?q=%G1").is_none());
    // An invalid extra parameter is ignored, as the value is not captured.
    assert!(m("x:{?q}", "x:?q=1&z=%zz").is_some());
}

#[test]
fn comma_separates_list_items_but_encoded_comma_does_not() {
    let c = m("x:{v}", "x:a,b").unwrap();
    assert_eq!(c.get("v"), Some(&list(&["a", "b"])));
    let c = m("x:{v}", "x:a%2Cb").unwrap();
    assert_eq!(c.get_str("v"), Some("a,b"));
    let c = m("x:{+v}", "x:a,b").unwrap();
    assert_eq!(c.get_str("v"), Some("a,b"));
    let c = m("x:{+v}", "x:a%2Cb").unwrap();
    assert_eq!(c.get_str("v"), Some("a,b"));
    // `{+v,w}` would expand v = "a,b" to `a,b,c`, which splits elsewhere.
    assert!(m("x:{+v,w}", "x:a%2Cb,c").is_none());
    assert_eq!(
        m("x:{+v,w}", "x:a,b%2Cc").unwrap().get_str("w"),
        Some("b,c")
    );
}

#[test]
fn several_variables_in_one_expression() {
    let c = m("map?{x,y}", "map?1024,768").unwrap();
    assert_eq!(c.get_str("x"), Some("1024"));
    assert_eq!(c.get_str("y"), Some("768"));
    let c = m("{x,y,z}", "1,2").unwrap();
    assert_eq!(
        (c.get_str("x"), c.get_str("y"), c.get("z")),
        (Some("1"), Some("2"), None)
    );
    let c = m("{x,y}", "1,2,3").unwrap();
    assert_eq!(c.get("y"), Some(&list(&["2", "3"])));
    let c = m("{/x,y}", "/a/b").unwrap();
    assert_eq!((c.get_str("x"), c.get_str("y")), (Some("a"), Some("b")));
    let c = m("{;x,y,empty}", ";x=1024;y=768;empty").unwrap();
    assert_eq!(c.get_str("empty"), Some(""));
    let c = m("{;x,y}", ";y=768").unwrap();
    assert_eq!((c.get("x"), c.get_str("y")), (None, Some("768")));
}

#[test]
fn adjacent_variables_earlier_one_is_greedy() {
    let c = m("{a}{b}", "abc").unwrap();
    assert_eq!((c.get_str("a"), c.get_str("b")), (Some("ab"), Some("c")));
    let c = m("{+x}{+y}", "a/b/c").unwrap();
    assert_eq!((c.get_str("x"), c.get_str("y")), (Some("a/b/"), Some("c")));
    let c = m("x:{/a*}{/b*}", "x:/1/2/3").unwrap();
    assert_eq!(c.get("a"), Some(&list(&["1", "2", "3"])));
    assert_eq!(c.get("b"), None);
}

#[test]
fn empty_versus_undefined() {
    let c = m("X{.x}", "X.").unwrap();
    assert_eq!(c.get_str("x"), Some(""));
    let c = m("X{.x}", "X").unwrap();
    assert_eq!(c.get("x"), None);
    let c = m("x:{?q}", "x:?q=").unwrap();
    assert_eq!(c.get_str("q"), Some(""));
    let c = m("x:{?q}", "x:?q").unwrap();
    assert_eq!(c.get_str("q"), Some(""));
    let c = m("x:{?q}", "x:?").unwrap();
    assert_eq!(c.get("q"), None);
}

#[test]
fn label_values_cannot_contain_dots() {
    let c = m("www{.dom*}", "www.example.com").unwrap();
    assert_eq!(c.get("dom"), Some(&list(&["example", "com"])));
    assert!(m("file{.ext}", "file.tar.gz").is_none());
    assert!(m("file{.ext}", "file.tar%2Egz").is_none());
}

#[test]
fn prefix_modifier_limits_length_and_must_agree() {
    let c = m("{var:3}", "val").unwrap();
    assert_eq!(c.get_str("var"), Some("val"));
    assert!(m("{var:3}", "value").is_none());
    let c = m("{x:1}/{x}", "v/value").unwrap();
    assert_eq!(c.get_str("x"), Some("value"));
    assert!(m("{x:1}/{x}", "w/value").is_none());
    let c = m("{x:2}", "%CE%B1%CE%B2").unwrap();
    assert_eq!(c.get_str("x"), Some("αβ"));
}

#[test]
fn repeated_variable_must_agree() {
    assert!(m("{x}/{x}", "a/a").is_some());
    assert!(m("{x}/{x}", "a/b").is_none());
}

#[test]
fn non_ascii_literals_and_values() {
    let c = m("café/{var}", "caf%C3%A9/value").unwrap();
    assert_eq!(c.get_str("var"), Some("value"));
    let c = m("café/{var}", "café/välue").unwrap();
    assert_eq!(c.get_str("var"), Some("välue"));
}

#[test]
fn fragment_section() {
    let c = m("x:{/p}{?q}{#f}", "x:/a?q=1#frag/x").unwrap();
    assert_eq!(c.get_str("f"), Some("frag/x"));
    assert!(m("x:{/p}{?q}", "x:/a?q=1#frag").is_none());
}

#[test]
fn in_place_query_forms_keep_their_order() {
    let c = m("x:/s?q={q}", "x:/s?q=a%20b").unwrap();
    assert_eq!(c.get_str("q"), Some("a b"));
    assert!(m("x:/s?q={q}", "x:/s?q=a&z=1").is_none());
}

#[test]
fn matching_is_anchored_at_both_ends() {
    assert!(m("file:///{name}", "xfile:///a").is_none());
    assert!(m("file:///{name}", "file:///a/").is_none());
}

#[test]
fn pathological_inputs_finish() {
    // A regression to backtracking would make these hang the suite.
    let mut long = String::from("x:");
    for _ in 0..25_000 {
        long.push_str("/a%2C");
    }
    assert!(long.len() > 100_000);
    let c = m("x:{/a*}{/b*}{?q*}", &long).unwrap();
    assert!(matches!(c.get("a"), Some(Value::List(items)) if items.len() == 25_000));
    let c = m(
        "x:{/a*}{/b*}{?q*}",
        &format!("{long}?{}", "k=v&".repeat(100)),
    )
    .unwrap();
    assert!(matches!(c.get("q"), Some(Value::Assoc(pairs)) if pairs.len() == 100));
    assert!(m("x:{/a*}{/b*}{?q*}", &format!("{long}^")).is_none());
    let plus: String = "a/".repeat(50_000);
    let c = m("{+x}{+y}", &plus).unwrap();
    assert_eq!(c.get_str("y"), Some("/"));
    assert!(m("{+x}{+y}z", &plus).is_none());
    let commas = ",".repeat(100_000);
    assert!(m("{x,y,z}", &commas).is_none());
    let c = m("{+x,y}", &format!("a{commas}")).unwrap();
    assert_eq!(c.get_str("x"), Some("a"));
    let query = format!("x:?{}", "a=1&".repeat(25_000));
    let c = m("x:{?a,b}{&keys*}", &query).unwrap();
    assert_eq!(c.get_str("a"), Some("1"));
    let pcts = "%41".repeat(33_000);
    assert!(m("{a}{b}{c}{d}x", &pcts).is_none());
    let segs = format!("file:///{}", "seg/".repeat(25_000));
    let c = m("file:///{+path}", &segs).unwrap();
    assert_eq!(c.get_str("path").map(str::len), Some(100_000));
}
