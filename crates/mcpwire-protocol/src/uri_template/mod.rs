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

mod encoding;
mod expand;
mod matching;
mod parse;

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

/// A parsed RFC 6570 URI template.
///
/// ```
/// use std::collections::HashMap;
/// use mcpwire_protocol::uri_template::UriTemplate;
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
    /// By index in `names`: whether the variable appears more than once in the template.
    repeated: Vec<bool>,
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
        parse::parse_template(template)
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
        expand::expand_template(self, vars)
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
        matching::match_template(self, uri)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A map of variables from `(name, value)` pairs; the tests of the submodules use it too.
    pub(super) fn vars(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

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
