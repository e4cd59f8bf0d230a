//! Percent-encoding (RFC 3986) of values and literals, and percent-decoding of matched text.

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
pub(super) fn encode_into(value: &str, allow_reserved: bool, out: &mut String) {
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
pub(super) fn percent_decode(s: &str) -> Option<String> {
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
