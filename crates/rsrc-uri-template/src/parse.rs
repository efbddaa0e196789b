//! Parsing: template text to a list of literal and expression parts.
//!
//! The parser checks the whole RFC 6570 grammar (section 2) in one left-to-right pass and
//! stops at the first error, reporting its byte offset. It also enforces the crate's size
//! limits ([`crate::limits`]), so every later stage works on a template of bounded size.

use std::fmt;

use crate::chars::{is_hex, is_literal_ascii, is_ucschar_or_iprivate};
use crate::limits::{
    MAX_EXPRESSIONS, MAX_PREFIX, MAX_TEMPLATE_LEN, MAX_VARIABLES, MAX_VARNAME_LEN,
};

/// An expression operator (RFC 6570 section 2.2, table in appendix A).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// `{var}`: simple string expansion.
    Simple,
    /// `{+var}`: reserved expansion.
    Reserved,
    /// `{#var}`: fragment expansion.
    Fragment,
    /// `{.var}`: label expansion.
    Label,
    /// `{/var}`: path segment expansion.
    Path,
    /// `{;var}`: path-style parameter expansion.
    PathParam,
    /// `{?var}`: form-style query expansion.
    Query,
    /// `{&var}`: form-style query continuation.
    QueryCont,
}

impl Op {
    fn from_byte(b: u8) -> Option<Op> {
        Some(match b {
            b'+' => Op::Reserved,
            b'#' => Op::Fragment,
            b'.' => Op::Label,
            b'/' => Op::Path,
            b';' => Op::PathParam,
            b'?' => Op::Query,
            b'&' => Op::QueryCont,
            _ => return None,
        })
    }

    /// The string written before the first defined variable.
    pub(crate) fn first(self) -> Option<char> {
        match self {
            Op::Simple | Op::Reserved => None,
            Op::Fragment => Some('#'),
            Op::Label => Some('.'),
            Op::Path => Some('/'),
            Op::PathParam => Some(';'),
            Op::Query => Some('?'),
            Op::QueryCont => Some('&'),
        }
    }

    /// The separator written between defined variables (and exploded items).
    pub(crate) fn sep(self) -> char {
        match self {
            Op::Simple | Op::Reserved | Op::Fragment => ',',
            Op::Label => '.',
            Op::Path => '/',
            Op::PathParam => ';',
            Op::Query | Op::QueryCont => '&',
        }
    }

    /// Whether variables are written as `name=value` pairs.
    pub(crate) fn named(self) -> bool {
        matches!(self, Op::PathParam | Op::Query | Op::QueryCont)
    }

    /// What follows the name of a named variable whose value is empty.
    pub(crate) fn ifemp(self) -> &'static str {
        match self {
            Op::Query | Op::QueryCont => "=",
            _ => "",
        }
    }

    /// Whether reserved characters (and pct-encoded triplets) pass through expansion.
    pub(crate) fn allow_reserved(self) -> bool {
        matches!(self, Op::Reserved | Op::Fragment)
    }
}

/// A value modifier (RFC 6570 section 2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Modifier {
    /// No modifier.
    None,
    /// `:N`, keep at most N characters of a string value.
    Prefix(u16),
    /// `*`, explode a composite value.
    Explode,
}

/// One variable of an expression.
#[derive(Clone, Debug)]
pub(crate) struct VarSpec {
    /// The name exactly as written (pct-encoded triplets included).
    pub(crate) name: Box<str>,
    pub(crate) modifier: Modifier,
}

impl VarSpec {
    pub(crate) fn explode(&self) -> bool {
        self.modifier == Modifier::Explode
    }
    pub(crate) fn prefix(&self) -> Option<u16> {
        match self.modifier {
            Modifier::Prefix(n) => Some(n),
            _ => None,
        }
    }
}

/// An expression `{...}`.
#[derive(Clone, Debug)]
pub(crate) struct Expression {
    pub(crate) op: Op,
    pub(crate) vars: Vec<VarSpec>,
    /// Byte offset of the opening brace in the template.
    pub(crate) start: usize,
    /// Byte offset just past the closing brace.
    pub(crate) end: usize,
}

/// A piece of a template.
#[derive(Clone, Debug)]
pub(crate) enum Part {
    /// Literal text, as written in the template (already checked against the grammar).
    Literal(Box<str>),
    /// An expression.
    Expr(Expression),
}

/// Why a template failed to parse.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The template is longer than [`MAX_TEMPLATE_LEN`] bytes.
    TemplateTooLong,
    /// The template has more than [`MAX_EXPRESSIONS`] expressions.
    TooManyExpressions,
    /// The template has more than [`MAX_VARIABLES`] variables in total.
    TooManyVariables,
    /// A variable name is longer than [`MAX_VARNAME_LEN`] bytes.
    VarNameTooLong,
    /// An expression is opened with `{` but never closed.
    UnclosedExpression,
    /// A `}` appears outside an expression.
    UnmatchedClosingBrace,
    /// An expression has nothing inside the braces: `{}`.
    EmptyExpression,
    /// An operator reserved for future extensions (`=` `,` `!` `@` `|`).
    ReservedOperator(char),
    /// A character that a literal may not contain (space, control, `"`, `<`, `>`, `\`, `^`,
    /// `` ` ``, `|`, or a non-ASCII character outside `ucschar` / `iprivate`).
    InvalidLiteral(char),
    /// A `%` not followed by two hexadecimal digits.
    InvalidPercentEncoding,
    /// A character that does not fit the expression grammar at this point.
    UnexpectedCharacter(char),
    /// A variable name was expected here.
    ExpectedVarName,
    /// A `.` in a variable name not followed by a name character (`{x.}`, `{x..y}`).
    DotWithoutName,
    /// A prefix length that is not a number from 1 to 9999 without leading zeros.
    InvalidPrefix,
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseErrorKind::TemplateTooLong => {
                write!(f, "template longer than {MAX_TEMPLATE_LEN} bytes")
            }
            ParseErrorKind::TooManyExpressions => {
                write!(f, "more than {MAX_EXPRESSIONS} expressions")
            }
            ParseErrorKind::TooManyVariables => write!(f, "more than {MAX_VARIABLES} variables"),
            ParseErrorKind::VarNameTooLong => {
                write!(f, "variable name longer than {MAX_VARNAME_LEN} bytes")
            }
            ParseErrorKind::UnclosedExpression => f.write_str("unclosed expression"),
            ParseErrorKind::UnmatchedClosingBrace => f.write_str("'}' outside an expression"),
            ParseErrorKind::EmptyExpression => f.write_str("empty expression"),
            ParseErrorKind::ReservedOperator(c) => {
                write!(f, "operator {c:?} is reserved for future extensions")
            }
            ParseErrorKind::InvalidLiteral(c) => write!(f, "{c:?} is not allowed in a literal"),
            ParseErrorKind::InvalidPercentEncoding => {
                f.write_str("'%' must be followed by two hex digits")
            }
            ParseErrorKind::UnexpectedCharacter(c) => {
                write!(f, "unexpected {c:?} in expression")
            }
            ParseErrorKind::ExpectedVarName => f.write_str("expected a variable name"),
            ParseErrorKind::DotWithoutName => {
                f.write_str("'.' in a variable name must be followed by a name character")
            }
            ParseErrorKind::InvalidPrefix => {
                write!(f, "prefix length must be a number from 1 to {MAX_PREFIX}")
            }
        }
    }
}

/// A template that does not follow the RFC 6570 grammar or exceeds a limit.
///
/// Displays as `at byte 5: unclosed expression`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    position: usize,
    kind: ParseErrorKind,
}

impl ParseError {
    fn new(position: usize, kind: ParseErrorKind) -> Self {
        ParseError { position, kind }
    }

    /// Byte offset in the template where the error was found.
    pub fn position(&self) -> usize {
        self.position
    }

    /// What is wrong.
    pub fn kind(&self) -> &ParseErrorKind {
        &self.kind
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.position, self.kind)
    }
}

impl std::error::Error for ParseError {}

/// The character starting at byte `i` (or U+FFFD if `i` is not a boundary, which the
/// parser never asks for).
fn char_at(s: &str, i: usize) -> char {
    s.get(i..)
        .and_then(|rest| rest.chars().next())
        .unwrap_or(char::REPLACEMENT_CHARACTER)
}

fn is_varchar_start(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'%'
}

/// Parses a whole template into parts.
pub(crate) fn parse(template: &str) -> Result<Vec<Part>, ParseError> {
    if template.len() > MAX_TEMPLATE_LEN {
        return Err(ParseError::new(
            MAX_TEMPLATE_LEN,
            ParseErrorKind::TemplateTooLong,
        ));
    }
    let bytes = template.as_bytes();
    let mut parts = Vec::new();
    let mut i = 0;
    let mut lit_start = 0;
    let mut expressions = 0;
    let mut variables = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                if lit_start < i {
                    parts.push(Part::Literal(template[lit_start..i].into()));
                }
                expressions += 1;
                if expressions > MAX_EXPRESSIONS {
                    return Err(ParseError::new(i, ParseErrorKind::TooManyExpressions));
                }
                let expr = parse_expression(template, i, &mut variables)?;
                i = expr.end;
                lit_start = i;
                parts.push(Part::Expr(expr));
            }
            b'}' => return Err(ParseError::new(i, ParseErrorKind::UnmatchedClosingBrace)),
            b'%' => {
                if !(bytes.get(i + 1).copied().is_some_and(is_hex)
                    && bytes.get(i + 2).copied().is_some_and(is_hex))
                {
                    return Err(ParseError::new(i, ParseErrorKind::InvalidPercentEncoding));
                }
                i += 3;
            }
            b if b.is_ascii() => {
                if !is_literal_ascii(b) {
                    return Err(ParseError::new(
                        i,
                        ParseErrorKind::InvalidLiteral(b as char),
                    ));
                }
                i += 1;
            }
            _ => {
                let c = char_at(template, i);
                if !is_ucschar_or_iprivate(c) {
                    return Err(ParseError::new(i, ParseErrorKind::InvalidLiteral(c)));
                }
                i += c.len_utf8();
            }
        }
    }
    if lit_start < bytes.len() {
        parts.push(Part::Literal(template[lit_start..].into()));
    }
    Ok(parts)
}

/// Parses the expression whose `{` is at byte `open`.
fn parse_expression(
    template: &str,
    open: usize,
    variables: &mut usize,
) -> Result<Expression, ParseError> {
    let bytes = template.as_bytes();
    let unclosed = || ParseError::new(open, ParseErrorKind::UnclosedExpression);
    let unexpected =
        |j: usize| ParseError::new(j, ParseErrorKind::UnexpectedCharacter(char_at(template, j)));
    let mut j = open + 1;
    let first = *bytes.get(j).ok_or_else(unclosed)?;
    let op = match first {
        b'}' => return Err(ParseError::new(open, ParseErrorKind::EmptyExpression)),
        b'=' | b',' | b'!' | b'@' | b'|' => {
            return Err(ParseError::new(
                j,
                ParseErrorKind::ReservedOperator(first as char),
            ));
        }
        _ => match Op::from_byte(first) {
            Some(op) => {
                j += 1;
                op
            }
            None => Op::Simple,
        },
    };
    let mut vars = Vec::new();
    loop {
        // varname = varchar *( ["."] varchar )
        let name_start = j;
        loop {
            let b = *bytes.get(j).ok_or_else(unclosed)?;
            if b.is_ascii_alphanumeric() || b == b'_' {
                j += 1;
            } else if b == b'%' {
                if !(bytes.get(j + 1).copied().is_some_and(is_hex)
                    && bytes.get(j + 2).copied().is_some_and(is_hex))
                {
                    return Err(ParseError::new(j, ParseErrorKind::InvalidPercentEncoding));
                }
                j += 3;
            } else if j == name_start {
                return Err(if b == b'}' || b == b',' {
                    ParseError::new(j, ParseErrorKind::ExpectedVarName)
                } else {
                    unexpected(j)
                });
            } else {
                break;
            }
            if bytes.get(j) == Some(&b'.') {
                if !bytes.get(j + 1).copied().is_some_and(is_varchar_start) {
                    return Err(ParseError::new(j + 1, ParseErrorKind::DotWithoutName));
                }
                j += 1;
            }
        }
        if j - name_start > MAX_VARNAME_LEN {
            return Err(ParseError::new(name_start, ParseErrorKind::VarNameTooLong));
        }
        let name: Box<str> = template[name_start..j].into();
        *variables += 1;
        if *variables > MAX_VARIABLES {
            return Err(ParseError::new(
                name_start,
                ParseErrorKind::TooManyVariables,
            ));
        }
        let modifier = match bytes.get(j) {
            Some(b':') => {
                j += 1;
                let digits_start = j;
                let mut n: u32 = 0;
                while let Some(&d) = bytes.get(j).filter(|d| d.is_ascii_digit()) {
                    if j - digits_start == 4 || (j == digits_start && d == b'0') {
                        return Err(ParseError::new(digits_start, ParseErrorKind::InvalidPrefix));
                    }
                    n = n * 10 + u32::from(d - b'0');
                    j += 1;
                }
                if j == digits_start {
                    return Err(ParseError::new(digits_start, ParseErrorKind::InvalidPrefix));
                }
                // At most four digits, so n <= 9999 fits u16.
                Modifier::Prefix(u16::try_from(n).unwrap_or(u16::MAX))
            }
            Some(b'*') => {
                j += 1;
                Modifier::Explode
            }
            _ => Modifier::None,
        };
        vars.push(VarSpec { name, modifier });
        match bytes.get(j) {
            Some(b',') => j += 1,
            Some(b'}') => {
                return Ok(Expression {
                    op,
                    vars,
                    start: open,
                    end: j + 1,
                });
            }
            Some(_) => return Err(unexpected(j)),
            None => return Err(unclosed()),
        }
    }
}
