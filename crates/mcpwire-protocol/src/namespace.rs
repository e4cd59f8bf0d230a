//! How a mounted server's names appear to the clients of the server it is mounted in (a
//! gateway's, or a server built with `ServerBuilder::mount`): as they are, or under a prefix.
//!
//! Under the prefix `fs`:
//!
//! - tools and prompts are named `fs_{name}` (`read_file` becomes `fs_read_file`);
//! - a resource URI or URI template gets the prefix as its first segment after the scheme
//!   and its `//`, if any: `file:///tmp/a` becomes `file://fs//tmp/a`,
//!   `test://static/{id}` becomes `test://fs/static/{id}`, `urn:isbn:1` becomes
//!   `urn:fs/isbn:1`.
//!
//! Both are reversible: stripping the prefix gives back exactly the upstream name or URI,
//! so a downstream request finds its upstream server and what to ask it. A URI without a
//! scheme (or a template whose scheme is not literal) has no prefixed form and is not
//! mounted under a prefix.

use std::fmt;

/// The separator between a prefix and a tool's or prompt's name.
pub const NAME_SEPARATOR: char = '_';

/// A namespace: none (names as they are) or a prefix.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Namespace {
    prefix: Option<String>,
}

/// A prefix that cannot name a namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadPrefix(String);

impl fmt::Display for BadPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} cannot be a prefix: use letters, digits, `_`, `-` and `.` (a tool name's characters), at most 64",
            self.0
        )
    }
}

impl std::error::Error for BadPrefix {}

/// The most characters of a prefix.
const MAX_PREFIX: usize = 64;

impl Namespace {
    /// Names as they are.
    pub fn root() -> Self {
        Self { prefix: None }
    }

    /// Names under `prefix`: letters, digits, `_`, `-` and `.`, the characters of a tool
    /// name (the specification's). Two mounts can still give the same downstream name
    /// (`a_b` + `c` and `a` + `b_c`).
    pub fn prefixed(prefix: impl Into<String>) -> Result<Self, BadPrefix> {
        let prefix = prefix.into();
        let valid = !prefix.is_empty()
            && prefix.len() <= MAX_PREFIX
            && prefix.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if valid {
            Ok(Self { prefix: Some(prefix) })
        } else {
            Err(BadPrefix(prefix))
        }
    }

    /// The prefix, if any.
    pub fn prefix(&self) -> Option<&str> {
        self.prefix.as_deref()
    }

    /// The downstream name of an upstream tool or prompt.
    pub fn name(&self, upstream: &str) -> String {
        match &self.prefix {
            Some(p) => format!("{p}{NAME_SEPARATOR}{upstream}"),
            None => upstream.to_owned(),
        }
    }

    /// The upstream name behind a downstream one, if it is in this namespace.
    pub fn upstream_name<'a>(&self, name: &'a str) -> Option<&'a str> {
        match &self.prefix {
            Some(p) => name.strip_prefix(p.as_str())?.strip_prefix(NAME_SEPARATOR),
            None => Some(name),
        }
    }

    /// The downstream form of an upstream URI or URI template (`None`: it has no scheme, so
    /// no prefixed form).
    pub fn uri(&self, upstream: &str) -> Option<String> {
        let Some(prefix) = &self.prefix else { return Some(upstream.to_owned()) };
        let at = insertion_point(upstream)?;
        Some(format!("{}{prefix}/{}", &upstream[..at], &upstream[at..]))
    }

    /// The upstream URI behind a downstream one, if it is in this namespace.
    pub fn upstream_uri(&self, uri: &str) -> Option<String> {
        let Some(prefix) = &self.prefix else { return Some(uri.to_owned()) };
        let at = insertion_point(uri)?;
        let rest = uri[at..].strip_prefix(prefix.as_str())?.strip_prefix('/')?;
        Some(format!("{}{rest}", &uri[..at]))
    }
}

impl Namespace {
    /// A read's result as the outer server's client should see it: each part's URI in its
    /// prefixed form (a part whose URI has none is left as it is).
    pub fn contents(&self, mut result: crate::types::ReadResourceResult) -> crate::types::ReadResourceResult {
        if self.prefix.is_some() {
            for part in &mut result.contents {
                if let Some(uri) = self.uri(&part.uri) {
                    part.uri = uri;
                }
            }
        }
        result
    }
}

/// Where the prefix goes in a URI: after `scheme:` and the `//` that may follow (RFC 3986:
/// a scheme is a letter, then letters, digits, `+`, `-` and `.`).
fn insertion_point(uri: &str) -> Option<usize> {
    let colon = uri.find(':')?;
    let scheme = &uri[..colon];
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !valid {
        return None;
    }
    let after = colon + 1;
    Some(if uri[after..].starts_with("//") { after + 2 } else { after })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_and_stripped_back() {
        let fs = Namespace::prefixed("fs").unwrap();
        assert_eq!(fs.name("read_file"), "fs_read_file");
        assert_eq!(fs.upstream_name("fs_read_file"), Some("read_file"));
        assert_eq!(fs.upstream_name("fsread"), None);
        assert_eq!(fs.upstream_name("other_read"), None);
        assert_eq!(Namespace::root().name("x"), "x");
        assert_eq!(Namespace::root().upstream_name("x"), Some("x"));
    }

    #[test]
    fn uris_and_templates_are_prefixed_reversibly() {
        let fs = Namespace::prefixed("fs").unwrap();
        let cases = [
            ("file:///tmp/a", "file://fs//tmp/a"),
            ("test://static/resource/1", "test://fs/static/resource/1"),
            ("test://static/{id}", "test://fs/static/{id}"),
            ("urn:isbn:1", "urn:fs/isbn:1"),
            ("demo://fs/x", "demo://fs/fs/x"),
            ("a+b.c-d:rest", "a+b.c-d:fs/rest"),
        ];
        for (upstream, downstream) in cases {
            assert_eq!(fs.uri(upstream).as_deref(), Some(downstream), "{upstream}");
            assert_eq!(fs.upstream_uri(downstream).as_deref(), Some(upstream), "{downstream}");
        }
        assert_eq!(fs.uri("no-scheme/x"), None);
        assert_eq!(fs.uri("{+uri}"), None, "a template whose scheme is not literal");
        assert_eq!(fs.uri("1x:y"), None);
        assert_eq!(fs.upstream_uri("file:///tmp/a"), None, "not in the namespace");
        assert_eq!(fs.upstream_uri("test://other/x"), None);
        assert_eq!(Namespace::root().uri("no-scheme").as_deref(), Some("no-scheme"));
    }

    #[test]
    fn prefixes_are_checked() {
        for good in ["fs", "server-everything", "v1.2", "A9", "my_server"] {
            assert!(Namespace::prefixed(good).is_ok(), "{good}");
        }
        for bad in ["", "a b", "a/b", "é", &"x".repeat(65)] {
            let e = Namespace::prefixed(bad).unwrap_err();
            assert!(e.to_string().contains("cannot be a prefix"), "{bad}");
        }
    }
}
