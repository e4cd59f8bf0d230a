//! Expansion (RFC 6570 section 3) with string values.

use std::collections::HashMap;

use super::encoding::encode_into;
use super::{Expression, Modifier, Part, UriTemplate};

/// Expands `template` with `vars`: see [`UriTemplate::expand`].
pub(super) fn expand_template(template: &UriTemplate, vars: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(template.source.len());
    for part in &template.parts {
        match part {
            Part::Literal { encoded, .. } => out.push_str(encoded),
            Part::Expr(expr) => expand_expression(expr, vars, &mut out),
        }
    }
    out
}

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
pub(super) fn truncate_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((idx, _)) => &s[..idx],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uri_template::tests::vars;

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
}
