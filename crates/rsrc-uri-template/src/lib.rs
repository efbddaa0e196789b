//! RFC 6570 URI Templates: parse, expand, and match URIs back to variable values.
//!
//! Built for the `rsrc` resources server, whose router needs to find which resource
//! template a requested URI belongs to, with which arguments, safely and in linear time.
//!
//! ```
//! use rsrc_uri_template::UriTemplate;
//!
//! let t = UriTemplate::parse("file:///docs/{name}{?rev}").unwrap();
//! let c = t.matches("file:///docs/read%20me?rev=3&x=1").unwrap();
//! assert_eq!(c.get_str("name"), Some("read me"));
//! assert_eq!(c.get_str("rev"), Some("3"));
//! assert_eq!(t.expand(&c), "file:///docs/read%20me?rev=3");
//! assert!(t.matches("file:///docs/..%2F..%2Fetc%2Fpasswd").is_none());
//! ```
//!
//! [`UriTemplate::parse`] checks the full grammar of levels 1 to 4 and reports the byte
//! offset of the first error (like the shared test suite, it accepts `'` in literals,
//! which the RFC's ABNF leaves out). [`UriTemplate::expand`] follows section 3 of the RFC
//! exactly. [`UriTemplate::matches`] is the inverse, and [`UriTemplate::specificity`] orders
//! templates for a router. Nothing here panics on any input, and no crate is depended on.
//!
//! # How matching works
//!
//! The key decision: **structure first, on the raw text; decoding once, afterwards.**
//!
//! Each template is compiled once into a small non-deterministic automaton that accepts
//! exactly the raw text its expansions can produce (section 3.2 of the RFC, with the
//! tolerances listed below). Matching simulates the automaton over the URI with all
//! alternatives in step (a Pike VM): no backtracking, so the time is linear in the URI
//! length for a given template (`O(uri.len() × template size)`, and the template size is
//! bounded by [`limits`]). Memory is bounded by the template size plus a small multiple of
//! the URI length.
//!
//! The automaton never looks through percent-encoding: `%2F` is three ordinary value
//! characters, never a `/`. Once the structure is decided, each captured value is split on
//! its unencoded separators and each piece is percent-decoded exactly once, so `%2541`
//! gives `%41`, not `A`. A value whose encoding is invalid (`%zz`, or bytes that are not
//! UTF-8) makes the whole URI not match.
//!
//! # Matching semantics
//!
//! Where RFC 6570 leaves matching open, this crate decides as follows.
//!
//! - **Encoded separators.** A variable of a non-reserved path expression (`{x}`, `{.x}`,
//!   `{/x}`, `{;x}`) never yields a value containing `/`: if the decoded value would
//!   contain one (the URI had `%2F` there), the URI does not match. Query values (`{?x}`,
//!   `{&x}`) may contain a decoded `/`, since clients pass URLs and paths as parameters. So
//!   `file:///docs/{name}` does not match `file:///docs/..%2F..%2Fetc`. In the same way a
//!   `{.x}` value never contains `.`. Values that need `/` must use `{+x}` or `{#x}`. A
//!   value may still be `.` or `..`: code that maps values to files must refuse those.
//! - **Multi-segment variables.** `{+path}` captures unreserved and reserved characters,
//!   `/` included; `{/seg*}` captures a [`Value::List`] of segments. A reserved value whose
//!   decoded text contains a `%XX` (the URI had `%25XX`) does not match, because reserved
//!   expansion would copy that `%XX` instead of encoding it again; for the same reason an
//!   item of `{+x*}` or `{#x*}` cannot contain a decoded `,`, nor its key a decoded `=`,
//!   and neither can `x` in `{+x,y}`.
//! - **Accepted characters.** A non-reserved value may contain unreserved characters,
//!   pct-encoded UTF-8, `! * ' ( )` (which some clients leave unencoded) and any non-ASCII
//!   character (IRIs); query keys and values in a query section likewise. A pct-encoded
//!   character (`%C3%A9`) is one unit: a boundary never falls inside it, and a sequence
//!   that is not UTF-8 never matches. A literal non-ASCII character in the template matches
//!   either itself or its pct-encoded UTF-8; hex digits of literal triplets match in either
//!   case; everything else in a literal matches exactly.
//! - **Adjacent variables** (`{a}{b}`, `{+x}{+y}`, `{/a*}{/b*}`): the earlier variable takes
//!   as much as it can while the rest still matches.
//! - **Non-empty simple expressions.** An expression with no operator character (`{x}`,
//!   `{+x}`, `{x,y}`) never matches empty text, and its first value is non-empty (for `{x}`
//!   its first list item): `file:///docs/{name}` does not match `file:///docs/`.
//! - **Empty versus undefined.** An expression that matches no text leaves its variables
//!   undefined (absent from [`Captures`]). A variable whose text is present but empty is
//!   an empty string: `X{.x}` on `X.` gives `x = ""`; `{;x}` on `;x`, and `{?x}` on `?x=`
//!   or `?x`, give `x = ""`.
//! - **Lists versus strings.** In a non-reserved expression expansion encodes commas inside
//!   values, so an unencoded `,` in a value separates list items: `a,b` is a
//!   [`Value::List`], `a%2Cb` the string `a,b`. A one-item list is captured as a string,
//!   and a non-exploded associative array as a list of alternating keys and values. In
//!   `{+x}` and `{#x}` values are strings, commas included.
//! - **Several variables in one expression.** In `{x,y}`, `{+x,y}` and `{#x,y}` every
//!   variable but the last takes one comma-separated item; the last takes the rest (a list
//!   when it has commas, in non-reserved expressions). Undefined variables are skipped by
//!   expansion, so trailing ones come out undefined: `{x,y,z}` on `1,2` gives `x = 1`,
//!   `y = 2`, no `z`. With `.` and `/` the operator's own separator splits variables; with
//!   `;` the names do.
//! - **Exploded variables** take as many items as they can. Unnamed (`{/x*}`, `{.x*}`,
//!   `{x*}`): a [`Value::Assoc`] when every item is `key=value`, a [`Value::List`] when
//!   none is (mixed: no match); in `{+x*}` and `{#x*}` items split on every `,`, and they
//!   form an associative array only when every item contains `=`. Named (`{;x*}`, and
//!   `{?x*}` outside a query section): a list when every key is the variable's name
//!   (`;x=1;x=2`), else an associative array. So an associative array whose keys all
//!   equal the variable's name reads back as a list.
//! - **Prefixes.** `{x:3}` matches like `{x}`, then requires a string of at most 3
//!   characters; the captured value is that prefix.
//! - **Repeated variables.** A variable used several times is defined at all its
//!   occurrences or at none (as in any expansion); unmodified occurrences must be equal,
//!   and prefix occurrences must be prefixes of the full value (`{x:1}/{x}`). Otherwise the
//!   URI does not match. The check is made on the structure the rules above choose: no
//!   other structure is searched for.
//! - **Query section.** A template ending in `{?a,b}`, optionally followed by `{&c}`
//!   expressions and `&k=v` literals (or with a literal `?k=v` followed by `{&c}`), and
//!   optionally then a fragment, matches the URI's query as an unordered set of
//!   `&`-separated parameters: every query variable is optional, order does not matter,
//!   and parameters the template does not name are ignored. The template's literal
//!   parameters (`?k=v`) are required. The query starts at the URI's first `?` or, when the
//!   template starts the query with `{?...}` and the URI has no `?`, at the first `&` where
//!   the path can end (expansion writes no `?` when every `{?...}` variable is undefined).
//!   Hence variables before a query section never capture `?`, and a `{+x}` there may not
//!   contain `?` or `#` even encoded. Parameter names are compared decoded (`%71=x` sets
//!   `q`). A non-exploded variable takes the first parameter with its name. An exploded
//!   `{?list*}` collects every parameter with its name, as a list. The first exploded
//!   variable that finds no parameter with its name collects, as an associative array,
//!   every parameter not claimed by another variable or literal parameter (so `{?q*}`
//!   captures the extra parameters). Other query forms (`?q={q}`, or `{?a}` followed by
//!   a path) are matched in place, in order, like the rest of the template.
//! - **Fragments.** A template with a query section and no fragment section does not match
//!   a URI with a `#` fragment.
//!
//! # Invariants
//!
//! - Round trip: for the unambiguous subset (the property test in `tests/roundtrip.rs`
//!   describes it), `matches(&expand(v)) == Some(v)`.
//! - If a URI matches, expanding the captures with the same template gives a URI that
//!   matches too (the hidden `fuzz_check` asserts this, from the fuzz target and the
//!   tests).
//! - Parsing, expanding and matching never panic, and all work is bounded by [`limits`]
//!   and linear in the input length.

mod chars;
mod expand;
#[cfg(feature = "fuzzing")]
mod fuzz;
pub mod limits;
mod matching;
mod parse;
mod specificity;
mod template;
mod value;

pub use chars::is_uri_char;
pub use expand::ExpandError;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use fuzz::fuzz_check;
pub use parse::{ParseError, ParseErrorKind};
pub use specificity::Specificity;
pub use template::UriTemplate;
pub use value::{Captures, Value, VarSource};
