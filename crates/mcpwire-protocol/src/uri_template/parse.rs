//! Parsing: the text of a template into literals and expressions (RFC 6570 section 2).

use super::encoding::encode_into;
use super::{Expression, Modifier, Operator, Part, UriTemplate, UriTemplateError, UriTemplateErrorKind, VarSpec};

/// Parses `template`: see [`UriTemplate::parse`].
pub(super) fn parse_template(template: &str) -> Result<UriTemplate, UriTemplateError> {
    let bytes = template.as_bytes();
    let mut parts = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut repeated: Vec<bool> = Vec::new();
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
                let expr = parse_expression(&template[body_start..close], body_start, &mut names, &mut repeated)?;
                parts.push(Part::Expr(expr));
                i = close + 1;
                literal_start = i;
            }
            b'}' => return Err(UriTemplateError::new(UriTemplateErrorKind::UnmatchedClosingBrace, i)),
            _ => i += 1,
        }
    }
    push_literal(&mut parts, &template[literal_start..]);
    Ok(UriTemplate { source: template.to_owned(), parts, names, repeated })
}

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
    repeated: &mut Vec<bool>,
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
                if let Some(r) = repeated.get_mut(index) {
                    *r = true;
                }
                index
            }
            None => {
                names.push(name.to_owned());
                repeated.push(false);
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
