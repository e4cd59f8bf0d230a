//! RFC 6570 URI templates, as used by MCP resource templates.
//!
//! [`UriTemplate::parse`] accepts every level 1–4 expression: the operators
//! none, `+`, `#`, `.`, `/`, `;`, `?` and `&`, several variables per
//! expression (`{x,y}`), prefix modifiers (`{var:3}`) and the explode
//! modifier (`{var*}`).
//!
//! [`UriTemplate::expand`] follows RFC 6570 section 3 for **string** values.
//! It has no lists or associative arrays, so the explode modifier has no
//! effect, as the RFC says for string values.
//!
//! [`UriTemplate::matches`] goes the other way: it checks whether a URI could
//! have come from the template and, if so, extracts the variables. A server
//! uses it to find which resource template a `resources/read` URI belongs
//! to. Matching is not defined by the RFC, and for some templates it is
//! ambiguous (`{x}{y}`), so it is heuristic. These are the rules:
//!
//! * **Literals** must appear in the URI exactly (byte for byte,
//!   case-sensitive). A literal that contains characters not allowed in a
//!   URI (a space, say) matches both as written and in its percent-encoded
//!   form (the form [`UriTemplate::expand`] produces).
//! * **Simple `{var}` and reserved `{+var}` expressions are required.** They
//!   match at least one character, so a simple `{var}` never matches an
//!   empty string.
//! * **Expressions with a leading operator (`#`, `.`, `/`, `;`, `?`, `&`)
//!   are optional.** Either they are absent, and all their variables are
//!   undefined, or they start with their operator character.
//! * **Which characters each expression may span:**
//!   - `{var}`, `{.var}` and `{;var}`: anything except `/`, `?` and `#`;
//!   - `{/var}`: anything except `?` and `#`, so it covers several `/`
//!     segments;
//!   - `{?var}` and `{&var}`: anything except `#`;
//!   - `{+var}` and `{#var}`: anything at all (this is how `{+path}`
//!     matches across `/`).
//!
//!   Other reserved characters (`:`, `@`, `=`, ...) are allowed even in
//!   expressions that would have percent-encoded them: clients often send
//!   them raw.
//! * **Unnamed operators** (none, `+`, `#`, `.`, `/`) split the matched text
//!   (after the operator character) at their separator (`,` `,` `,` `.` `/`)
//!   and give the pieces to the variables in order. If there are fewer
//!   pieces than variables, the variables left over stay undefined: `{x,y}`
//!   matching `768` gives `x=768`. If there are more pieces than variables:
//!   - for `+`, `#` and `.` the last variable takes the rest, separators
//!     included, since those operators leave their separator unencoded in
//!     values (`{name}{.ext}` matching `a.tar.gz` gives `name=a`,
//!     `ext=tar.gz`);
//!   - for the simple and `/` operators the URI does not match, since their
//!     separator is always percent-encoded in values.
//!
//!   Pieces may be empty (`{/a,b}` matching `/x/` gives `a=x`, `b=""`).
//! * **Named operators** (`;`, `?`, `&`) split the matched text at `;` or
//!   `&` into `name` or `name=value` parameters (a bare `name` gives an
//!   empty value). They can come in any order and any of them can be
//!   missing. A parameter whose name is not a variable of that expression,
//!   an empty parameter (`?a=1&&b=2`, or a lone `?`), or a variable given
//!   twice with different values makes the URI not match. Unknown query
//!   parameters are therefore rejected, not ignored.
//! * **Ambiguity:** the expressions are tried from left to right, and each
//!   takes the *shortest* text with which the rest of the template still
//!   matches (with backtracking). An optional expression is tried as absent
//!   first. So `{a}-{b}` matching `x-y-z` gives `a=x`, `b=y-z`, and
//!   `{+path}{?q}` matching `a/b?q=1` gives `path=a/b`, `q=1`.
//! * **Values** come back percent-decoded (`%41` becomes `A`; a `%` not
//!   followed by two hex digits stays as it is; `+` is *not* a space). A
//!   value that does not decode to UTF-8 makes the URI not match.
//! * **Prefix modifiers** `{var:n}` match at most `n` characters (after
//!   decoding). If a variable appears more than once, every occurrence must
//!   agree. A prefix occurrence has to be the prefix of a full one
//!   (`{/var:1,var}` matching `/v/value` gives `var=value`).
//! * **Explode** (`*`) is ignored: with string values it changes nothing.
//! * **Cost limit:** matching gives up, and returns `None`, once it has done
//!   a fixed amount of work (about 3·10⁷ steps, under 0.1 s). When no
//!   variable repeats, (part, position) pairs that failed are remembered and
//!   not tried again. Ordinary URIs stay far below the limit. Only
//!   adversarial input reaches it, such as more than about 10 KB of
//!   one-character `/` segments for `{+path}/{id}`, or a long non-matching
//!   URI for a highly ambiguous template like `{+a}{+b}{+c}x`.
//!
//! Because of these choices, `expand` followed by `matches` gives back the
//! original variables when every variable is defined, simple and `+`
//! values are non-empty, and no value contains the separators or delimiters
//! that would make the URI ambiguous. `%` in `+`/`#` values is one such
//! case: those operators pass percent-triplets through unchanged, so they
//! come back decoded.
//!
//! The parser rejects malformed *expressions*: unclosed or nested braces,
//! stray `}`, empty expressions or variable names, invalid variable names,
//! reserved or unknown operators, and bad modifiers. Literal text is
//! accepted as it is. When expanding, characters that are not allowed in a
//! URI are percent-encoded.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

/// Upper bound on the work (roughly: bytes examined) that one call to
/// [`UriTemplate::matches`] may do before it gives up.
const MATCH_WORK_LIMIT: usize = 1 << 25;

/// A parsed RFC 6570 URI template.
///
/// ```
/// use std::collections::HashMap;
/// use mcp_protocol::uri_template::UriTemplate;
///
/// let t = UriTemplate::parse("test://template/{id}/data{?format}").unwrap();
/// let vars = t.matches("test://template/123/data?format=json").unwrap();
/// assert_eq!(vars["id"], "123");
/// assert_eq!(vars["format"], "json");
///
/// let mut v = HashMap::new();
/// v.insert("id".to_string(), "a b".to_string());
/// assert_eq!(t.expand(&v), "test://template/a%20b/data");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
    /// Distinct variable names, in order of first appearance.
    names: Vec<String>,
    /// True if some variable appears more than once in the template.
    has_duplicates: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal {
        /// The literal as written in the template.
        raw: String,
        /// The literal with characters not allowed in a URI percent-encoded.
        encoded: String,
    },
    Expr(Expression),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Expression {
    op: Operator,
    vars: Vec<VarSpec>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct VarSpec {
    name: String,
    /// Index of `name` in `UriTemplate::names`.
    index: usize,
    modifier: Modifier,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Modifier {
    None,
    Prefix(usize),
    Explode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParam,
    Query,
    QueryContinuation,
}

impl Operator {
    fn from_char(c: char) -> Option<Self> {
        Some(match c {
            '+' => Operator::Reserved,
            '#' => Operator::Fragment,
            '.' => Operator::Label,
            '/' => Operator::Path,
            ';' => Operator::PathParam,
            '?' => Operator::Query,
            '&' => Operator::QueryContinuation,
            _ => return None,
        })
    }

    /// The character that starts a non-empty expansion, if any.
    fn first(self) -> Option<u8> {
        match self {
            Operator::Simple | Operator::Reserved => None,
            Operator::Fragment => Some(b'#'),
            Operator::Label => Some(b'.'),
            Operator::Path => Some(b'/'),
            Operator::PathParam => Some(b';'),
            Operator::Query => Some(b'?'),
            Operator::QueryContinuation => Some(b'&'),
        }
    }

    fn sep(self) -> char {
        match self {
            Operator::Simple | Operator::Reserved | Operator::Fragment => ',',
            Operator::Label => '.',
            Operator::Path => '/',
            Operator::PathParam => ';',
            Operator::Query | Operator::QueryContinuation => '&',
        }
    }

    fn named(self) -> bool {
        matches!(self, Operator::PathParam | Operator::Query | Operator::QueryContinuation)
    }

    fn if_empty(self) -> &'static str {
        match self {
            Operator::Query | Operator::QueryContinuation => "=",
            _ => "",
        }
    }

    fn allow_reserved(self) -> bool {
        matches!(self, Operator::Reserved | Operator::Fragment)
    }

    /// Whether the byte `b` can never occur inside this expression's match.
    fn forbids(self, b: u8) -> bool {
        match self {
            Operator::Reserved | Operator::Fragment => false,
            Operator::Simple | Operator::Label | Operator::PathParam => {
                matches!(b, b'/' | b'?' | b'#')
            }
            Operator::Path => matches!(b, b'?' | b'#'),
            Operator::Query | Operator::QueryContinuation => b == b'#',
        }
    }

    /// Whether extra separator-delimited pieces are folded into the last
    /// variable (the separator can appear unencoded in values).
    fn joins_extra(self) -> bool {
        matches!(self, Operator::Reserved | Operator::Fragment | Operator::Label)
    }
}

/// What is wrong with a malformed URI template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UriTemplateErrorKind {
    /// A `{` has no matching `}`.
    UnclosedExpression,
    /// A `}` has no `{` before it.
    UnmatchedClosingBrace,
    /// A `{` appears inside an expression.
    NestedExpression,
    /// An expression is empty: `{}`.
    EmptyExpression,
    /// A variable name is missing, as in `{x,}`, `{+}` or `{/:3}`.
    EmptyVariableName,
    /// A variable name contains a character RFC 6570 does not allow, or
    /// misplaces a `.` or a percent-encoding.
    InvalidVariableName,
    /// The expression uses an operator that RFC 6570 reserves for future
    /// use (`=`, `,`, `!`, `@`, `|`).
    ReservedOperator(char),
    /// The expression starts with a character that is neither an operator
    /// nor a variable name.
    UnknownOperator(char),
    /// A bad modifier: a prefix length that is not 1–9999, or a `*` or `:`
    /// in the wrong place.
    InvalidModifier,
}

/// Why a URI template could not be parsed, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UriTemplateError {
    kind: UriTemplateErrorKind,
    position: usize,
}

impl UriTemplateError {
    fn new(kind: UriTemplateErrorKind, position: usize) -> Self {
        UriTemplateError { kind, position }
    }

    /// The kind of error.
    pub fn kind(&self) -> UriTemplateErrorKind {
        self.kind
    }

    /// The byte offset in the template where the error was found.
    pub fn position(&self) -> usize {
        self.position
    }
}

impl fmt::Display for UriTemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid URI template: ")?;
        match self.kind {
            UriTemplateErrorKind::UnclosedExpression => f.write_str("unclosed expression, '{' without '}'")?,
            UriTemplateErrorKind::UnmatchedClosingBrace => f.write_str("'}' without a matching '{'")?,
            UriTemplateErrorKind::NestedExpression => f.write_str("'{' inside an expression")?,
            UriTemplateErrorKind::EmptyExpression => f.write_str("empty expression '{}'")?,
            UriTemplateErrorKind::EmptyVariableName => f.write_str("empty variable name")?,
            UriTemplateErrorKind::InvalidVariableName => f.write_str("invalid character in variable name")?,
            UriTemplateErrorKind::ReservedOperator(c) => write!(f, "reserved operator '{c}'")?,
            UriTemplateErrorKind::UnknownOperator(c) => write!(f, "unknown operator '{c}'")?,
            UriTemplateErrorKind::InvalidModifier => {
                f.write_str("invalid modifier (prefix length must be 1-9999; '*' or ':N' must end the variable)")?
            }
        }
        write!(f, " at byte {}", self.position)
    }
}

impl std::error::Error for UriTemplateError {}

impl UriTemplate {
    /// Parses an RFC 6570 (level 1–4) URI template.
    ///
    /// Fails if an expression is malformed; see [`UriTemplateErrorKind`].
    /// Literal text between expressions is accepted as it is.
    pub fn parse(template: &str) -> Result<UriTemplate, UriTemplateError> {
        let bytes = template.as_bytes();
        let mut parts = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let mut has_duplicates = false;
        let mut literal_start = 0;
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'{' => {
                    push_literal(&mut parts, &template[literal_start..i]);
                    let body_start = i + 1;
                    let close = template[body_start..].find(['{', '}']).map(|r| body_start + r);
                    let close = match close {
                        None => return Err(UriTemplateError::new(UriTemplateErrorKind::UnclosedExpression, i)),
                        Some(j) if bytes.get(j) == Some(&b'{') => {
                            return Err(UriTemplateError::new(UriTemplateErrorKind::NestedExpression, j))
                        }
                        Some(j) => j,
                    };
                    let expr =
                        parse_expression(&template[body_start..close], body_start, &mut names, &mut has_duplicates)?;
                    parts.push(Part::Expr(expr));
                    i = close + 1;
                    literal_start = i;
                }
                b'}' => return Err(UriTemplateError::new(UriTemplateErrorKind::UnmatchedClosingBrace, i)),
                _ => i += 1,
            }
        }
        push_literal(&mut parts, &template[literal_start..]);
        Ok(UriTemplate { source: template.to_owned(), parts, names, has_duplicates })
    }

    /// The template exactly as it was given to [`UriTemplate::parse`].
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The names of the template's variables, in order of first appearance,
    /// each given once.
    pub fn variables(&self) -> impl Iterator<Item = &str> + '_ {
        self.names.iter().map(String::as_str)
    }

    /// Expands the template (RFC 6570 section 3) with string values.
    ///
    /// Variables missing from `vars` are undefined. They are left out, with
    /// their separators, as the RFC says, and an expression whose variables
    /// are all undefined expands to nothing. An empty string is a defined
    /// value. Values are percent-encoded. The `+` and `#` operators keep
    /// unreserved and reserved characters and existing percent-triplets; the
    /// other operators keep unreserved characters only.
    pub fn expand(&self, vars: &HashMap<String, String>) -> String {
        let mut out = String::with_capacity(self.source.len());
        for part in &self.parts {
            match part {
                Part::Literal { encoded, .. } => out.push_str(encoded),
                Part::Expr(expr) => expand_expression(expr, vars, &mut out),
            }
        }
        out
    }

    /// Tests whether `uri` could be an expansion of this template and, if
    /// so, returns the variables it defines, percent-decoded.
    ///
    /// Variables of optional expressions that are absent from the URI are
    /// left out of the map. Matching is heuristic for ambiguous templates:
    /// the exact rules are described in the [module documentation](self).
    /// Returns `None` if the URI does not match, or if matching would cost
    /// too much.
    pub fn matches(&self, uri: &str) -> Option<HashMap<String, String>> {
        if self.parts.is_empty() {
            return uri.is_empty().then(HashMap::new);
        }
        Matcher { template: self, uri, work: 0 }.run()
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl FromStr for UriTemplate {
    type Err = UriTemplateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        UriTemplate::parse(s)
    }
}

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

fn push_literal(parts: &mut Vec<Part>, raw: &str) {
    if raw.is_empty() {
        return;
    }
    let mut encoded = String::with_capacity(raw.len());
    encode_into(raw, true, &mut encoded);
    parts.push(Part::Literal { raw: raw.to_owned(), encoded });
}

/// Parses the text between `{` and `}`; `offset` is its byte offset in the
/// template (for error positions).
fn parse_expression(
    body: &str,
    offset: usize,
    names: &mut Vec<String>,
    has_duplicates: &mut bool,
) -> Result<Expression, UriTemplateError> {
    let Some(first) = body.chars().next() else {
        return Err(UriTemplateError::new(UriTemplateErrorKind::EmptyExpression, offset.saturating_sub(1)));
    };
    let (op, list, list_offset) = if let Some(op) = Operator::from_char(first) {
        (op, &body[1..], offset + 1)
    } else if matches!(first, '=' | ',' | '!' | '@' | '|') {
        return Err(UriTemplateError::new(UriTemplateErrorKind::ReservedOperator(first), offset));
    } else if first.is_ascii_alphanumeric() || first == '_' || first == '%' {
        (Operator::Simple, body, offset)
    } else {
        return Err(UriTemplateError::new(UriTemplateErrorKind::UnknownOperator(first), offset));
    };

    let mut vars = Vec::new();
    let mut spec_offset = list_offset;
    for spec in list.split(',') {
        let (name, modifier) = parse_varspec(spec, spec_offset)?;
        let index = match names.iter().position(|n| n == name) {
            Some(index) => {
                *has_duplicates = true;
                index
            }
            None => {
                names.push(name.to_owned());
                names.len() - 1
            }
        };
        vars.push(VarSpec { name: name.to_owned(), index, modifier });
        spec_offset += spec.len() + 1;
    }
    Ok(Expression { op, vars })
}

/// Parses one `varspec`: `varname [ ":" max-length | "*" ]`.
fn parse_varspec(spec: &str, offset: usize) -> Result<(&str, Modifier), UriTemplateError> {
    let err = |kind, at: usize| Err(UriTemplateError::new(kind, offset + at));
    let b = spec.as_bytes();
    let mut k = 0;
    // True at the start and just after a '.', where a '.' may not follow.
    let mut after_dot = true;
    while let Some(&c) = b.get(k) {
        match c {
            c if c.is_ascii_alphanumeric() || c == b'_' => {
                k += 1;
                after_dot = false;
            }
            b'%' => {
                let hex = |j: usize| b.get(j).is_some_and(u8::is_ascii_hexdigit);
                if !(hex(k + 1) && hex(k + 2)) {
                    return err(UriTemplateErrorKind::InvalidVariableName, k);
                }
                k += 3;
                after_dot = false;
            }
            b'.' => {
                if after_dot {
                    return err(UriTemplateErrorKind::InvalidVariableName, k);
                }
                k += 1;
                after_dot = true;
            }
            _ => break,
        }
    }
    let name = &spec[..k];
    if name.is_empty() {
        if b.is_empty() || matches!(b.first(), Some(b':' | b'*')) {
            return err(UriTemplateErrorKind::EmptyVariableName, 0);
        }
        return err(UriTemplateErrorKind::InvalidVariableName, 0);
    }
    if after_dot {
        // The name ends with '.'.
        return err(UriTemplateErrorKind::InvalidVariableName, k - 1);
    }
    let modifier = match b.get(k) {
        None => Modifier::None,
        Some(b'*') => {
            if k + 1 != b.len() {
                return err(UriTemplateErrorKind::InvalidModifier, k + 1);
            }
            Modifier::Explode
        }
        Some(b':') => {
            let digits = &spec[k + 1..];
            let valid = (1..=4).contains(&digits.len())
                && digits.bytes().all(|d| d.is_ascii_digit())
                && !digits.starts_with('0');
            match digits.parse::<usize>() {
                Ok(n) if valid => Modifier::Prefix(n),
                _ => return err(UriTemplateErrorKind::InvalidModifier, k),
            }
        }
        Some(_) => return err(UriTemplateErrorKind::InvalidVariableName, k),
    };
    Ok((name, modifier))
}

// ---------------------------------------------------------------------------
// Expansion
// ---------------------------------------------------------------------------

fn expand_expression(expr: &Expression, vars: &HashMap<String, String>, out: &mut String) {
    let op = expr.op;
    let mut first = true;
    for spec in &expr.vars {
        let Some(value) = vars.get(&spec.name) else {
            continue;
        };
        if first {
            if let Some(c) = op.first() {
                out.push(char::from(c));
            }
            first = false;
        } else {
            out.push(op.sep());
        }
        if op.named() {
            out.push_str(&spec.name);
            if value.is_empty() {
                out.push_str(op.if_empty());
                continue;
            }
            out.push('=');
        }
        let value = match spec.modifier {
            Modifier::Prefix(n) => truncate_chars(value, n),
            Modifier::None | Modifier::Explode => value.as_str(),
        };
        encode_into(value, op.allow_reserved(), out);
    }
}

/// The first `n` characters (Unicode scalar values) of `s`.
fn truncate_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((idx, _)) => &s[..idx],
        None => s,
    }
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn is_reserved(b: u8) -> bool {
    matches!(
        b,
        b':' | b'/'
            | b'?'
            | b'#'
            | b'['
            | b']'
            | b'@'
            | b'!'
            | b'$'
            | b'&'
            | b'\''
            | b'('
            | b')'
            | b'*'
            | b'+'
            | b','
            | b';'
            | b'='
    )
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Percent-encodes `value` into `out`. Unreserved characters are always
/// kept; with `allow_reserved`, reserved characters and well-formed
/// percent-triplets are kept too.
fn encode_into(value: &str, allow_reserved: bool, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let b = value.as_bytes();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if is_unreserved(c) || (allow_reserved && is_reserved(c)) {
            out.push(char::from(c));
            i += 1;
            continue;
        }
        if allow_reserved && c == b'%' {
            let hi = b.get(i + 1).copied().filter(u8::is_ascii_hexdigit);
            let lo = b.get(i + 2).copied().filter(u8::is_ascii_hexdigit);
            if let (Some(hi), Some(lo)) = (hi, lo) {
                out.push('%');
                out.push(char::from(hi));
                out.push(char::from(lo));
                i += 3;
                continue;
            }
        }
        out.push('%');
        out.push(char::from(HEX[usize::from(c >> 4)]));
        out.push(char::from(HEX[usize::from(c & 0x0f)]));
        i += 1;
    }
}

/// Percent-decodes `s`. A `%` without two hex digits stays as it is.
/// Returns `None` if the result is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c == b'%' {
            let hi = b.get(i + 1).copied().and_then(hex_value);
            let lo = b.get(i + 2).copied().and_then(hex_value);
            if let (Some(hi), Some(lo)) = (hi, lo) {
                out.push((hi << 4) | lo);
                i += 3;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    String::from_utf8(out).ok()
}

// ---------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------

/// One variable value extracted from the URI.
struct Capture {
    /// Index into `UriTemplate::names`.
    var: usize,
    value: String,
    /// `Some(n)` if it came from a `{var:n}` occurrence.
    prefix: Option<usize>,
}

/// A backtracking point: part `part` starts at byte `pos`; `candidates`
/// yields the end positions still to try for it.
struct Frame {
    part: usize,
    pos: usize,
    candidates: Candidates,
    captures_len: usize,
}

/// The end positions still to try for one part, generated lazily so that a
/// part whose first candidate works costs O(1).
enum Candidates {
    /// An explicit list (literals, and the last part of the template).
    List { ends: Vec<usize>, next: usize },
    /// An expression followed by another part: every end from `cursor` on,
    /// shortest first, until a byte the operator forbids.
    Scan {
        op: Operator,
        /// Whether "absent" (end == pos) is still to be tried.
        absent: bool,
        /// Where the expression's text starts after its operator character.
        body_start: usize,
        /// The smallest end that can be yielded.
        min_end: usize,
        /// The next end to examine.
        cursor: usize,
        /// Set once a forbidden byte or the end of the URI is reached.
        done: bool,
    },
}

struct Matcher<'a> {
    template: &'a UriTemplate,
    uri: &'a str,
    work: usize,
}

impl Matcher<'_> {
    /// Counts `n` units of work; `None` once the budget is exhausted.
    fn charge(&mut self, n: usize) -> Option<()> {
        self.work = self.work.saturating_add(n.max(1));
        (self.work <= MATCH_WORK_LIMIT).then_some(())
    }

    /// Iterative depth-first search over the candidate end positions of
    /// each part (no recursion, so the template's length cannot overflow
    /// the stack). If no variable occurs twice, the result of matching from
    /// a given (part, position) cannot depend on earlier choices, so those
    /// that failed are remembered and not explored again.
    fn run(mut self) -> Option<HashMap<String, String>> {
        let parts_len = self.template.parts.len();
        let memoize = !self.template.has_duplicates;
        let mut failed: HashSet<(usize, usize)> = HashSet::new();
        let mut captures: Vec<Capture> = Vec::new();
        let mut stack = vec![self.frame(0, 0, 0)?];
        while let Some(top) = stack.last_mut() {
            let (part, pos, captures_len) = (top.part, top.pos, top.captures_len);
            let Some(end) = self.next_end(part, pos, &mut top.candidates)? else {
                if memoize {
                    failed.insert((part, pos));
                }
                stack.pop();
                continue;
            };
            captures.truncate(captures_len);
            if !self.capture(part, pos, end, &mut captures)? {
                continue;
            }
            let next = part + 1;
            if next == parts_len {
                if end == self.uri.len() {
                    if let Some(found) = self.resolve(&captures) {
                        return Some(found);
                    }
                }
                continue;
            }
            if memoize && failed.contains(&(next, end)) {
                continue;
            }
            let frame = self.frame(next, end, captures.len())?;
            stack.push(frame);
        }
        None
    }

    /// Whether the part after `part` can start at byte `end`. `None` if the
    /// work budget is exhausted.
    fn next_can_start(&mut self, part: usize, end: usize) -> Option<bool> {
        let rest = self.uri.get(end..).unwrap_or("");
        Some(match self.template.parts.get(part + 1) {
            None => rest.is_empty(),
            Some(Part::Literal { raw, encoded }) => {
                self.charge(raw.len())?;
                rest.starts_with(raw.as_str()) || rest.starts_with(encoded.as_str())
            }
            Some(Part::Expr(_)) => true,
        })
    }

    /// Builds the frame for `part` starting at byte `pos`.
    fn frame(&mut self, part: usize, pos: usize, captures_len: usize) -> Option<Frame> {
        let uri = self.uri;
        let bytes = uri.as_bytes();
        let rest = uri.get(pos..).unwrap_or("");
        let is_last = part + 1 == self.template.parts.len();
        let candidates = match self.template.parts.get(part) {
            None => Candidates::List { ends: Vec::new(), next: 0 },
            Some(Part::Literal { raw, encoded }) => {
                self.charge(raw.len())?;
                let mut ends = Vec::new();
                for lit in [raw, encoded] {
                    let end = pos + lit.len();
                    if rest.starts_with(lit.as_str()) && !ends.contains(&end) && self.next_can_start(part, end)? {
                        ends.push(end);
                    }
                }
                Candidates::List { ends, next: 0 }
            }
            Some(Part::Expr(expr)) => {
                let op = expr.op;
                let present = op.first().is_none_or(|first| bytes.get(pos) == Some(&first));
                let absent = op.first().is_some();
                let body_start = if absent { pos + 1 } else { pos };
                // Simple and `+` expressions match at least one character;
                // the others at least their operator character.
                let min_end = if absent { body_start } else { pos + 1 };
                if is_last {
                    // Only one candidate: the rest of the URI (if allowed),
                    // after "absent".
                    let mut ends = Vec::new();
                    if absent && rest.is_empty() {
                        ends.push(pos);
                    }
                    if present && min_end <= bytes.len() {
                        let body = bytes.get(body_start..).unwrap_or_default();
                        self.charge(body.len())?;
                        if !body.iter().any(|&b| op.forbids(b)) {
                            ends.push(bytes.len());
                        }
                    }
                    Candidates::List { ends, next: 0 }
                } else {
                    Candidates::Scan { op, absent, body_start, min_end, cursor: body_start, done: !present }
                }
            }
        };
        Some(Frame { part, pos, candidates, captures_len })
    }

    /// The next candidate end for `part` at `pos`: `Some(None)` when there
    /// are no more, `None` if the work budget is exhausted.
    fn next_end(&mut self, part: usize, pos: usize, candidates: &mut Candidates) -> Option<Option<usize>> {
        match candidates {
            Candidates::List { ends, next } => {
                let end = ends.get(*next).copied();
                *next += 1;
                Some(end)
            }
            Candidates::Scan { op, absent, body_start, min_end, cursor, done } => {
                if *absent {
                    *absent = false;
                    if self.next_can_start(part, pos)? {
                        return Some(Some(pos));
                    }
                }
                let bytes = self.uri.as_bytes();
                while !*done {
                    self.charge(1)?;
                    let end = *cursor;
                    if end > bytes.len() {
                        *done = true;
                        break;
                    }
                    if end > *body_start && bytes.get(end - 1).is_some_and(|&b| op.forbids(b)) {
                        *done = true;
                        break;
                    }
                    *cursor += 1;
                    if end >= *min_end && self.uri.is_char_boundary(end) && self.next_can_start(part, end)? {
                        return Some(Some(end));
                    }
                }
                Some(None)
            }
        }
    }

    /// Decodes the text `uri[pos..end]` matched by `part` into `captures`.
    /// `Some(false)` if that text cannot be an expansion of the part;
    /// `None` if the work budget is exhausted.
    fn capture(&mut self, part: usize, pos: usize, end: usize, captures: &mut Vec<Capture>) -> Option<bool> {
        let Some(Part::Expr(expr)) = self.template.parts.get(part) else {
            return Some(true);
        };
        if end == pos {
            // An absent optional expression: all its variables undefined.
            return Some(true);
        }
        let Some(span) = self.uri.get(pos..end) else {
            return Some(false);
        };
        // Decoding is a fast bulk pass: a quarter unit per byte.
        self.charge(span.len() / 4)?;
        let op = expr.op;
        let body = if op.first().is_some() { span.get(1..).unwrap_or("") } else { span };
        let ok = if op.named() { capture_named(expr, body, captures) } else { capture_unnamed(expr, body, captures) };
        Some(ok.is_some())
    }

    /// Turns the captures into the result map, checking that repeated
    /// variables agree.
    fn resolve(&self, captures: &[Capture]) -> Option<HashMap<String, String>> {
        let names = &self.template.names;
        let mut full: Vec<Option<&str>> = vec![None; names.len()];
        let mut longest_prefix: Vec<Option<&str>> = vec![None; names.len()];
        for c in captures {
            if c.prefix.is_none() {
                let slot = full.get_mut(c.var)?;
                match slot {
                    Some(v) if *v != c.value => return None,
                    _ => *slot = Some(&c.value),
                }
            } else {
                let slot = longest_prefix.get_mut(c.var)?;
                if slot.is_none_or(|v| v.chars().count() < c.value.chars().count()) {
                    *slot = Some(&c.value);
                }
            }
        }
        // The value of each variable: its full occurrence, or else its
        // longest prefix occurrence. Every prefix occurrence must agree.
        let value =
            |var: usize| full.get(var).copied().flatten().or_else(|| longest_prefix.get(var).copied().flatten());
        for c in captures {
            if let Some(n) = c.prefix {
                if truncate_chars(value(c.var)?, n) != c.value {
                    return None;
                }
            }
        }
        let mut out = HashMap::new();
        for (var, name) in names.iter().enumerate() {
            if let Some(v) = value(var) {
                out.insert(name.clone(), v.to_owned());
            }
        }
        Some(out)
    }
}

/// Decodes one value and checks it against the variable's prefix modifier.
fn decode_value(spec: &VarSpec, raw: &str) -> Option<Capture> {
    let value = percent_decode(raw)?;
    let prefix = match spec.modifier {
        Modifier::Prefix(n) => {
            if value.chars().count() > n {
                return None;
            }
            Some(n)
        }
        Modifier::None | Modifier::Explode => None,
    };
    Some(Capture { var: spec.index, value, prefix })
}

/// Operators none, `+`, `#`, `.`, `/`: positional, separator-delimited
/// values.
fn capture_unnamed(expr: &Expression, body: &str, captures: &mut Vec<Capture>) -> Option<()> {
    let sep = expr.op.sep();
    let count = expr.vars.len();
    if !expr.op.joins_extra() && body.split(sep).nth(count).is_some() {
        return None;
    }
    for (spec, piece) in expr.vars.iter().zip(body.splitn(count, sep)) {
        captures.push(decode_value(spec, piece)?);
    }
    Some(())
}

/// Operators `;`, `?`, `&`: `name[=value]` parameters in any order.
fn capture_named(expr: &Expression, body: &str, captures: &mut Vec<Capture>) -> Option<()> {
    let start = captures.len();
    for item in body.split(expr.op.sep()) {
        if item.is_empty() {
            return None;
        }
        let (name, raw) = item.split_once('=').unwrap_or((item, ""));
        let spec = expr.vars.iter().find(|s| s.name == name)?;
        let capture = decode_value(spec, raw)?;
        let earlier = captures.get(start..).unwrap_or_default().iter().find(|c| c.var == capture.var);
        match earlier {
            Some(c) if c.value != capture.value => return None,
            Some(_) => {}
            None => captures.push(capture),
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    /// The variables of RFC 6570 sections 1.2 and 3.2 that are strings
    /// (the lists and associative arrays cannot be expressed here).
    fn rfc_vars() -> HashMap<String, String> {
        vars(&[
            ("var", "value"),
            ("hello", "Hello World!"),
            ("path", "/foo/bar"),
            ("empty", ""),
            ("x", "1024"),
            ("y", "768"),
            ("dub", "me/too"),
            ("half", "50%"),
            ("who", "fred"),
            ("base", "http://example.com/home/"),
            ("v", "6"),
        ])
    }

    fn check_expansions(cases: &[(&str, &str)]) {
        let v = rfc_vars();
        for (template, expected) in cases {
            let t = UriTemplate::parse(template).unwrap_or_else(|e| panic!("{template}: {e}"));
            assert_eq!(t.expand(&v), *expected, "expanding {template}");
        }
    }

    // --- RFC 6570 section 1.2 -------------------------------------------

    #[test]
    fn rfc_level1() {
        check_expansions(&[("{var}", "value"), ("{hello}", "Hello%20World%21")]);
    }

    #[test]
    fn rfc_level2() {
        check_expansions(&[
            ("{+var}", "value"),
            ("{+hello}", "Hello%20World!"),
            ("{+path}/here", "/foo/bar/here"),
            ("here?ref={+path}", "here?ref=/foo/bar"),
            ("X{#var}", "X#value"),
            ("X{#hello}", "X#Hello%20World!"),
        ]);
    }

    #[test]
    fn rfc_level3() {
        check_expansions(&[
            ("map?{x,y}", "map?1024,768"),
            ("{x,hello,y}", "1024,Hello%20World%21,768"),
            ("{+x,hello,y}", "1024,Hello%20World!,768"),
            ("{+path,x}/here", "/foo/bar,1024/here"),
            ("{#x,hello,y}", "#1024,Hello%20World!,768"),
            ("{#path,x}/here", "#/foo/bar,1024/here"),
            ("X{.var}", "X.value"),
            ("X{.x,y}", "X.1024.768"),
            ("{/var}", "/value"),
            ("{/var,x}/here", "/value/1024/here"),
            ("{;x,y}", ";x=1024;y=768"),
            ("{;x,y,empty}", ";x=1024;y=768;empty"),
            ("{?x,y}", "?x=1024&y=768"),
            ("{?x,y,empty}", "?x=1024&y=768&empty="),
            ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
            ("{&x,y,empty}", "&x=1024&y=768&empty="),
        ]);
    }

    #[test]
    fn rfc_level4_string_values() {
        check_expansions(&[
            ("{var:3}", "val"),
            ("{var:30}", "value"),
            ("{+path:6}/here", "/foo/b/here"),
            ("{#path:6}/here", "#/foo/b/here"),
            ("X{.var:3}", "X.val"),
            ("{/var:1,var}", "/v/value"),
            ("{;hello:5}", ";hello=Hello"),
            ("{?var:3}", "?var=val"),
            ("{&var:3}", "&var=val"),
            // Explode has no effect on a string value.
            ("{var*}", "value"),
            ("{/var*,x*}", "/value/1024"),
            ("{?x*}", "?x=1024"),
        ]);
    }

    #[test]
    fn list_values_are_plain_strings() {
        // The RFC's `list` is a list; here a value is always a string, so
        // its commas are data and get encoded.
        let t = UriTemplate::parse("{list}").unwrap();
        assert_eq!(t.expand(&vars(&[("list", "red,green,blue")])), "red%2Cgreen%2Cblue");
        let t = UriTemplate::parse("{+list}").unwrap();
        assert_eq!(t.expand(&vars(&[("list", "red,green,blue")])), "red,green,blue");
    }

    // --- RFC 6570 section 3.2 (string values) -----------------------------

    #[test]
    fn rfc_section3_examples() {
        check_expansions(&[
            // 3.2.2 simple
            ("{var}", "value"),
            ("{hello}", "Hello%20World%21"),
            ("{half}", "50%25"),
            ("O{empty}X", "OX"),
            ("O{undef}X", "OX"),
            ("{x,y}", "1024,768"),
            ("{x,hello,y}", "1024,Hello%20World%21,768"),
            ("?{x,empty}", "?1024,"),
            ("?{x,undef}", "?1024"),
            ("?{undef,y}", "?768"),
            ("{var:3}", "val"),
            ("{var:30}", "value"),
            // 3.2.3 reserved
            ("{+var}", "value"),
            ("{+hello}", "Hello%20World!"),
            ("{+half}", "50%25"),
            ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
            ("{+base}index", "http://example.com/home/index"),
            ("O{+empty}X", "OX"),
            ("O{+undef}X", "OX"),
            ("{+path}/here", "/foo/bar/here"),
            ("here?ref={+path}", "here?ref=/foo/bar"),
            ("up{+path}{var}/here", "up/foo/barvalue/here"),
            ("{+x,hello,y}", "1024,Hello%20World!,768"),
            ("{+path,x}/here", "/foo/bar,1024/here"),
            ("{+path:6}/here", "/foo/b/here"),
            // 3.2.4 fragment
            ("{#var}", "#value"),
            ("{#hello}", "#Hello%20World!"),
            ("{#half}", "#50%25"),
            ("foo{#empty}", "foo#"),
            ("foo{#undef}", "foo"),
            ("{#x,hello,y}", "#1024,Hello%20World!,768"),
            ("{#path,x}/here", "#/foo/bar,1024/here"),
            ("{#path:6}/here", "#/foo/b/here"),
            // 3.2.5 label
            ("{.who}", ".fred"),
            ("{.who,who}", ".fred.fred"),
            ("{.half,who}", ".50%25.fred"),
            ("X{.var}", "X.value"),
            ("X{.empty}", "X."),
            ("X{.undef}", "X"),
            ("X{.var:3}", "X.val"),
            // 3.2.6 path segments
            ("{/who}", "/fred"),
            ("{/who,who}", "/fred/fred"),
            ("{/half,who}", "/50%25/fred"),
            ("{/who,dub}", "/fred/me%2Ftoo"),
            ("{/var}", "/value"),
            ("{/var,empty}", "/value/"),
            ("{/var,undef}", "/value"),
            ("{/var,x}/here", "/value/1024/here"),
            ("{/var:1,var}", "/v/value"),
            // 3.2.7 path-style parameters
            ("{;who}", ";who=fred"),
            ("{;half}", ";half=50%25"),
            ("{;empty}", ";empty"),
            ("{;v,empty,who}", ";v=6;empty;who=fred"),
            ("{;v,bar,who}", ";v=6;who=fred"),
            ("{;x,y}", ";x=1024;y=768"),
            ("{;x,y,empty}", ";x=1024;y=768;empty"),
            ("{;x,y,undef}", ";x=1024;y=768"),
            ("{;hello:5}", ";hello=Hello"),
            // 3.2.8 form-style query
            ("{?who}", "?who=fred"),
            ("{?half}", "?half=50%25"),
            ("{?x,y}", "?x=1024&y=768"),
            ("{?x,y,empty}", "?x=1024&y=768&empty="),
            ("{?x,y,undef}", "?x=1024&y=768"),
            ("{?var:3}", "?var=val"),
            // 3.2.9 form-style query continuation
            ("{&who}", "&who=fred"),
            ("{&half}", "&half=50%25"),
            ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
            ("{&x,y,empty}", "&x=1024&y=768&empty="),
            ("{&var:3}", "&var=val"),
        ]);
    }

    #[test]
    fn all_undefined_expands_to_nothing() {
        let empty = HashMap::new();
        for t in ["{a}", "{+a}", "{#a}", "{.a}", "{/a}", "{;a}", "{?a}", "{&a}", "{a,b,c}"] {
            assert_eq!(UriTemplate::parse(t).unwrap().expand(&empty), "", "{t}");
        }
        let t = UriTemplate::parse("test://x/{a}/y{?q}").unwrap();
        assert_eq!(t.expand(&empty), "test://x//y");
    }

    #[test]
    fn encoding_details() {
        let v = vars(&[("u", "é/ü"), ("pct", "a%2Fb%zz%"), ("r", ":/?#[]@!$&'()*+,;=")]);
        let cases = [
            ("{u}", "%C3%A9%2F%C3%BC"),
            ("{+u}", "%C3%A9/%C3%BC"),
            // `+` and `#` keep well-formed triplets only.
            ("{+pct}", "a%2Fb%25zz%25"),
            ("{pct}", "a%252Fb%25zz%25"),
            ("{r}", "%3A%2F%3F%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D"),
            ("{+r}", ":/?#[]@!$&'()*+,;="),
            ("{#r}", "#:/?#[]@!$&'()*+,;="),
            ("{u:1}", "%C3%A9"),
        ];
        for (template, expected) in cases {
            assert_eq!(UriTemplate::parse(template).unwrap().expand(&v), expected, "{template}");
        }
    }

    #[test]
    fn literals_are_encoded_when_needed() {
        let t = UriTemplate::parse("a b/ü%20{x}").unwrap();
        assert_eq!(t.expand(&vars(&[("x", "1")])), "a%20b/%C3%BC%201");
        // Matching accepts the literal as written and encoded.
        assert_eq!(t.matches("a%20b/%C3%BC%201").unwrap()["x"], "1");
        assert_eq!(t.matches("a b/ü%201").unwrap()["x"], "1");
    }

    // --- Parsing ----------------------------------------------------------

    #[test]
    fn accessors() {
        let src = "test://{a}/{b,a}{?c,b}{&d:3}{#e*}";
        let t = UriTemplate::parse(src).unwrap();
        assert_eq!(t.as_str(), src);
        assert_eq!(t.to_string(), src);
        assert_eq!(t.variables().collect::<Vec<_>>(), ["a", "b", "c", "d", "e"]);
        let parsed: UriTemplate = src.parse().unwrap();
        assert_eq!(parsed, t);
        let t = UriTemplate::parse("no variables").unwrap();
        assert_eq!(t.variables().count(), 0);
        assert!(UriTemplate::parse("").unwrap().matches("").is_some());
        assert!(UriTemplate::parse("").unwrap().matches("x").is_none());
    }

    #[test]
    fn valid_variable_names() {
        for t in ["{a.b}", "{a_b1}", "{%41b}", "{A.B.C}", "{_}", "{x:9999}", "{x:1}"] {
            assert!(UriTemplate::parse(t).is_ok(), "{t}");
        }
    }

    #[test]
    fn malformed_templates() {
        use UriTemplateErrorKind as K;
        let cases: &[(&str, K, usize)] = &[
            ("{", K::UnclosedExpression, 0),
            ("abc{def", K::UnclosedExpression, 3),
            ("abc}", K::UnmatchedClosingBrace, 3),
            ("{a}}", K::UnmatchedClosingBrace, 3),
            ("{a{b}}", K::NestedExpression, 2),
            ("x{}", K::EmptyExpression, 1),
            ("{x,}", K::EmptyVariableName, 3),
            ("{x,,y}", K::EmptyVariableName, 3),
            ("{+}", K::EmptyVariableName, 2),
            ("{?x,}", K::EmptyVariableName, 4),
            ("{:3}", K::UnknownOperator(':'), 1),
            ("{/:3}", K::EmptyVariableName, 2),
            ("{=x}", K::ReservedOperator('='), 1),
            ("{,x}", K::ReservedOperator(','), 1),
            ("{!x}", K::ReservedOperator('!'), 1),
            ("{@x}", K::ReservedOperator('@'), 1),
            ("{|x}", K::ReservedOperator('|'), 1),
            ("{$x}", K::UnknownOperator('$'), 1),
            ("{ x}", K::UnknownOperator(' '), 1),
            ("{-x}", K::UnknownOperator('-'), 1),
            ("{x y}", K::InvalidVariableName, 2),
            ("{x-y}", K::InvalidVariableName, 2),
            ("{xé}", K::InvalidVariableName, 2),
            ("{a..b}", K::InvalidVariableName, 3),
            ("{a.}", K::InvalidVariableName, 2),
            ("{..a}", K::InvalidVariableName, 2),
            ("{%zz}", K::InvalidVariableName, 1),
            ("{a%4}", K::InvalidVariableName, 2),
            ("{x:0}", K::InvalidModifier, 2),
            ("{x:01}", K::InvalidModifier, 2),
            ("{x:10000}", K::InvalidModifier, 2),
            ("{x:}", K::InvalidModifier, 2),
            ("{x:abc}", K::InvalidModifier, 2),
            ("{x:-1}", K::InvalidModifier, 2),
            ("{x:3*}", K::InvalidModifier, 2),
            ("{x*:3}", K::InvalidModifier, 3),
            ("{x**}", K::InvalidModifier, 3),
            ("{x*y}", K::InvalidModifier, 3),
        ];
        for (template, kind, position) in cases {
            let err = UriTemplate::parse(template).expect_err(template);
            assert_eq!(err.kind(), *kind, "{template}");
            assert_eq!(err.position(), *position, "{template}");
            let msg = err.to_string();
            assert!(msg.starts_with("invalid URI template: "), "{msg}");
            assert!(msg.ends_with(&format!("at byte {position}")), "{msg}");
        }
        let err: Box<dyn std::error::Error> = Box::new(UriTemplate::parse("{").unwrap_err());
        assert_eq!(err.to_string(), "invalid URI template: unclosed expression, '{' without '}' at byte 0");
    }

    // --- Matching ---------------------------------------------------------

    fn m(template: &str, uri: &str) -> Option<HashMap<String, String>> {
        UriTemplate::parse(template).unwrap().matches(uri)
    }

    #[test]
    fn match_simple_segment() {
        let t = "test://template/{id}/data";
        assert_eq!(m(t, "test://template/123/data"), Some(vars(&[("id", "123")])));
        assert_eq!(m(t, "test://template/1/2/data"), None);
        assert_eq!(m(t, "test://other/123/data"), None);
        assert_eq!(m(t, "test://template//data"), None);
        assert_eq!(m(t, "test://template/123/data/"), None);
        assert_eq!(m(t, "test://template/123/dat"), None);
        assert_eq!(m(t, "test://template/123/data?x=1"), None);
        assert_eq!(m(t, "test://template/a%20b/data"), Some(vars(&[("id", "a b")])));
        // Lenient: raw reserved characters other than / ? # are accepted.
        assert_eq!(m(t, "test://template/a:b@c/data"), Some(vars(&[("id", "a:b@c")])));
    }

    #[test]
    fn simple_never_matches_empty_or_slash() {
        assert_eq!(m("{id}", ""), None);
        assert_eq!(m("{id}", "/"), None);
        assert_eq!(m("{id}", "a/b"), None);
        assert_eq!(m("x/{id}", "x/"), None);
        assert_eq!(m("{id}", "%2F"), Some(vars(&[("id", "/")])));
        assert_eq!(m("{a}{b}", "x"), None);
        assert_eq!(m("{a}{b}", "xy"), Some(vars(&[("a", "x"), ("b", "y")])));
    }

    #[test]
    fn match_reserved_crosses_slashes() {
        let t = "file:///{+path}";
        assert_eq!(m(t, "file:///a/b/c.txt"), Some(vars(&[("path", "a/b/c.txt")])));
        assert_eq!(m(t, "file:///"), None);
        assert_eq!(m(t, "file:///a%20b/c"), Some(vars(&[("path", "a b/c")])));
        assert_eq!(
            m("repo://{owner}/{+path}/raw", "repo://me/src/lib.rs/raw"),
            Some(vars(&[("owner", "me"), ("path", "src/lib.rs")]))
        );
        assert_eq!(m("{+path}{?q}", "a/b?q=1"), Some(vars(&[("path", "a/b"), ("q", "1")])));
        assert_eq!(m("{+a}/{b}", "x/y/z"), Some(vars(&[("a", "x/y"), ("b", "z")])));
    }

    #[test]
    fn match_path_segments() {
        let t = "api{/a,b}";
        assert_eq!(m(t, "api/x/y"), Some(vars(&[("a", "x"), ("b", "y")])));
        assert_eq!(m(t, "api/x"), Some(vars(&[("a", "x")])));
        assert_eq!(m(t, "api/x/"), Some(vars(&[("a", "x"), ("b", "")])));
        assert_eq!(m(t, "api"), Some(HashMap::new()));
        assert_eq!(m(t, "api/x/y/z"), None);
        assert_eq!(m(t, "api/x%2Fy"), Some(vars(&[("a", "x/y")])));
        assert_eq!(m(t, "apix"), None);
        assert_eq!(m("{/a}{/b}/end", "/1/2/end"), Some(vars(&[("a", "1"), ("b", "2")])));
    }

    #[test]
    fn match_query() {
        let t = "search://items{?q,lang}";
        assert_eq!(m(t, "search://items?q=rust&lang=en"), Some(vars(&[("q", "rust"), ("lang", "en")])));
        assert_eq!(m(t, "search://items?lang=en&q=rust"), Some(vars(&[("q", "rust"), ("lang", "en")])));
        assert_eq!(m(t, "search://items?lang=en"), Some(vars(&[("lang", "en")])));
        assert_eq!(m(t, "search://items"), Some(HashMap::new()));
        assert_eq!(m(t, "search://items?q="), Some(vars(&[("q", "")])));
        assert_eq!(m(t, "search://items?q"), Some(vars(&[("q", "")])));
        assert_eq!(m(t, "search://items?q=a%26b%3Dc"), Some(vars(&[("q", "a&b=c")])));
        assert_eq!(m(t, "search://items?q=a+b"), Some(vars(&[("q", "a+b")])));
        assert_eq!(m(t, "search://items?other=1"), None);
        assert_eq!(m(t, "search://items?q=1&other=1"), None);
        assert_eq!(m(t, "search://items?q=1&&lang=2"), None);
        assert_eq!(m(t, "search://items?"), None);
        assert_eq!(m(t, "search://items?q=1&q=2"), None);
        assert_eq!(m(t, "search://items?q=1&q=1"), Some(vars(&[("q", "1")])));
        assert_eq!(m(t, "search://items?q=1#frag"), None);

        let t = "list?fixed=yes{&x,y}";
        assert_eq!(m(t, "list?fixed=yes&y=2&x=1"), Some(vars(&[("x", "1"), ("y", "2")])));
        assert_eq!(m(t, "list?fixed=yes"), Some(HashMap::new()));
        assert_eq!(m(t, "list?fixed=no&x=1"), None);
        assert_eq!(m("q{?a}{&b}", "q?a=1&b=2"), Some(vars(&[("a", "1"), ("b", "2")])));
        assert_eq!(m("q{?a}{&b}", "q?b=2&a=1"), None);
        assert_eq!(m("{;x,y}", ";y=2;x=1"), Some(vars(&[("x", "1"), ("y", "2")])));
        assert_eq!(m("{;x,empty}", ";x=1;empty"), Some(vars(&[("x", "1"), ("empty", "")])));
    }

    #[test]
    fn match_fragment_and_label() {
        assert_eq!(m("doc://a{#frag}", "doc://a#sec/2"), Some(vars(&[("frag", "sec/2")])));
        assert_eq!(m("doc://a{#frag}", "doc://a"), Some(HashMap::new()));
        assert_eq!(m("doc://a{#frag}", "doc://a#"), Some(vars(&[("frag", "")])));
        assert_eq!(m("doc://a{#frag}", "doc://ab"), None);
        assert_eq!(m("doc://{id}{#frag}", "doc://x#y"), Some(vars(&[("id", "x"), ("frag", "y")])));
        assert_eq!(m("files/{name}{.ext}", "files/a.tar.gz"), Some(vars(&[("name", "a"), ("ext", "tar.gz")])));
        assert_eq!(m("files/{name}{.ext}", "files/readme"), Some(vars(&[("name", "readme")])));
    }

    #[test]
    fn match_prefix_and_repeated_variables() {
        assert_eq!(m("{var:3}", "val"), Some(vars(&[("var", "val")])));
        assert_eq!(m("{var:3}", "valu"), None);
        assert_eq!(m("{var:1}", "%C3%A9"), Some(vars(&[("var", "é")])));
        assert_eq!(m("{/var:1,var}", "/v/value"), Some(vars(&[("var", "value")])));
        assert_eq!(m("{/var:1,var}", "/x/value"), None);
        assert_eq!(m("{a}/{a}", "x/x"), Some(vars(&[("a", "x")])));
        assert_eq!(m("{a}/{a}", "x/y"), None);
        assert_eq!(m("{a:2}/{a:4}", "ab/abcd"), Some(vars(&[("a", "abcd")])));
        assert_eq!(m("{a:2}/{a:4}", "ab/abc"), Some(vars(&[("a", "abc")])));
        assert_eq!(m("{a:3}/{a:4}", "ab/abc"), None);
        // Backtracking over repeated variables: a=x-y, not a=x.
        assert_eq!(m("{a}-{b}/{a}", "x-y-z/x-y"), Some(vars(&[("a", "x-y"), ("b", "z")])));
    }

    #[test]
    fn match_decoding() {
        assert_eq!(m("{x}", "%E2%82%AC"), Some(vars(&[("x", "€")])));
        assert_eq!(m("{x}", "%e2%82%ac"), Some(vars(&[("x", "€")])));
        assert_eq!(m("{x}", "%FF"), None);
        assert_eq!(m("{x}", "100%"), Some(vars(&[("x", "100%")])));
        assert_eq!(m("{x}", "%zz"), Some(vars(&[("x", "%zz")])));
        assert_eq!(m("{x}", "é"), Some(vars(&[("x", "é")])));
        assert_eq!(m("ü/{x}", "ü/ß"), Some(vars(&[("x", "ß")])));
    }

    #[test]
    fn unnamed_multi_variable_rules() {
        assert_eq!(m("{x,y}", "1,2"), Some(vars(&[("x", "1"), ("y", "2")])));
        assert_eq!(m("{x,y}", "768"), Some(vars(&[("x", "768")])));
        assert_eq!(m("{x,y}", ",2"), Some(vars(&[("x", ""), ("y", "2")])));
        assert_eq!(m("{x,y}", "1,2,3"), None);
        assert_eq!(m("{+x,y}", "1,2,3"), Some(vars(&[("x", "1"), ("y", "2,3")])));
        assert_eq!(m("{#x,y}", "#1,2,3"), Some(vars(&[("x", "1"), ("y", "2,3")])));
    }

    #[test]
    fn round_trips() {
        let cases: &[(&str, &[(&str, &str)])] = &[
            ("test://template/{id}/data", &[("id", "123")]),
            ("test://template/{id}/data", &[("id", "a b/c?d#e,f")]),
            ("{var}", &[("var", "Hello World!")]),
            ("{x,hello,y}", &[("x", "1024"), ("hello", "Hello World!"), ("y", "768")]),
            ("{+path}/here", &[("path", "/foo/bar")]),
            ("here?ref={+path}", &[("path", "/foo/bar")]),
            ("{+x,hello,y}", &[("x", "1024"), ("hello", "Hello World!"), ("y", "768")]),
            ("{+path,x}/here", &[("path", "/foo/bar"), ("x", "1024")]),
            ("X{#hello}", &[("hello", "Hello World!")]),
            ("{#x,hello,y}", &[("x", "1024"), ("hello", "Hello World!"), ("y", "768")]),
            ("{#path,x}/here", &[("path", "/foo/bar"), ("x", "1024")]),
            ("X{.x,y}", &[("x", "1024"), ("y", "768")]),
            ("{/var,x}/here", &[("var", "value"), ("x", "1024")]),
            ("{/who,dub}", &[("who", "fred"), ("dub", "me/too")]),
            ("{/half,who}", &[("half", "50%"), ("who", "fred")]),
            ("{;x,y,empty}", &[("x", "1024"), ("y", "768"), ("empty", "")]),
            ("{?x,y,empty}", &[("x", "1024"), ("y", "768"), ("empty", "")]),
            ("?fixed=yes{&x}", &[("x", "1024")]),
            ("{&x,y,empty}", &[("x", "1024"), ("y", "768"), ("empty", "")]),
            ("{var:3}", &[("var", "val")]),
            ("{/var:1,var}", &[("var", "value")]),
            ("{.who,who}", &[("who", "fred")]),
            (
                "search://{index}/items{?q,lang,page}{#frag}",
                &[("index", "main"), ("q", "a&b=c d"), ("page", "2"), ("frag", "top")],
            ),
            ("file:///{+path}", &[("path", "home/user/some file.txt")]),
            ("db://{schema}/{table}{?limit,offset}", &[("schema", "public"), ("table", "ünïcode"), ("offset", "10")]),
            ("{?q}", &[("q", "50% off; a=b & c")]),
            ("{;p}", &[("p", "x;y=z")]),
        ];
        for (template, pairs) in cases {
            let t = UriTemplate::parse(template).unwrap();
            let v = vars(pairs);
            let uri = t.expand(&v);
            assert_eq!(t.matches(&uri), Some(v), "{template} -> {uri}");
        }
    }

    #[test]
    fn pathological_inputs_terminate() {
        // Highly ambiguous template against a long run of separators: the
        // memo keeps this polynomial, the budget bounds it.
        let t = UriTemplate::parse("{+a}/{+b}/{+c}/{+d}/x").unwrap();
        let uri = "/".repeat(5_000);
        assert_eq!(t.matches(&uri), None);
        // Repeated variables disable the memo; the budget still bounds it.
        let t = UriTemplate::parse("{+a}/{+b}/{+a}/{+b}/x").unwrap();
        assert_eq!(t.matches(&"a/".repeat(2_000)), None);
        // A long URI for a simple template is linear.
        let t = UriTemplate::parse("file:///{+path}").unwrap();
        let long = format!("file:///{}", "ab/".repeat(200_000));
        assert_eq!(t.matches(&long).map(|v| v["path"].len()), Some(600_000));
        // Many expressions: no recursion, so no stack overflow.
        let template = "{a}".repeat(50_000);
        let t = UriTemplate::parse(&template).unwrap();
        assert_eq!(t.matches("x"), None);
        assert!(t.matches(&"x".repeat(50_000)).is_some());
    }

    #[test]
    fn fuzzish_inputs_never_panic() {
        // Deterministic xorshift generator over an alphabet rich in syntax.
        let alphabet: Vec<char> = "{}+#./;?&=,!@|:*%0129aAzZ_ -é€\u{0}".chars().collect();
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut parsed = 0;
        for _ in 0..20_000 {
            let len = (next() % 16) as usize;
            let s: String = (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect();
            let u: String =
                (0..(next() % 16) as usize).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect();
            if let Ok(t) = UriTemplate::parse(&s) {
                parsed += 1;
                let names: Vec<String> = t.variables().map(str::to_owned).collect();
                let v: HashMap<String, String> = names.iter().map(|n| (n.clone(), u.clone())).collect();
                let expanded = t.expand(&v);
                let _ = t.matches(&expanded);
                let _ = t.matches(&u);
                assert_eq!(t.as_str(), s);
            }
        }
        assert!(parsed > 100, "only {parsed} templates parsed");
    }
}
