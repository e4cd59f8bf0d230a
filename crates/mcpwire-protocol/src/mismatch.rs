//! Why a JSON value does not read as a Rust type, in words rather than serde's: `expected an
//! unsigned integer, got "abc"` where serde says `invalid type: string "abc", expected u64`,
//! with where in the value it went wrong (`items[0].title`).
//!
//! For what reads values the client or the server sent: a handler's arguments, a prompt
//! argument or a template variable read as its type, a tool's result read by the client.

use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Reads `value` as a `T`, or says why it does not.
pub fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, Mismatch> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { None } else { Some(path) };
        Mismatch::new(path, e.into_inner())
    })
}

/// Reads the JSON text `text` as a `T`, or says why it does not (as [`from_value`], without
/// a [`Value`] in between). A value that does not fit is told by its path, as [`from_value`]
/// tells it, not by its position in the text; text that is not JSON keeps its position.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Mismatch> {
    // Nearly every text reads: it is read plainly, and only when it does not is it read again
    // with its path tracked, to say where it went wrong (tracking costs on every member).
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(value);
    }
    let mut reader = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut reader).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { None } else { Some(path) };
        let error = e.into_inner();
        let error = match (error.is_data(), error.line()) {
            (true, line) if line > 0 => {
                let said = error.to_string();
                let position = format!(" at line {line} column {}", error.column());
                <serde_json::Error as serde::de::Error>::custom(said.strip_suffix(&position).unwrap_or(&said))
            }
            _ => error,
        };
        Mismatch::new(path, error)
    })?;
    reader.end().map_err(|e| Mismatch::new(None, e))?;
    Ok(value)
}

/// A value that does not read as the type wanted: where, and why in words.
///
/// Displayed as `` `{path}`: {message} `` when the fault is inside the value (a member of an
/// object, an element of a list), as `{message}` when it is the value itself.
#[derive(Debug)]
pub struct Mismatch {
    path: Option<String>,
    message: String,
    error: serde_json::Error,
}

impl Mismatch {
    /// The mismatch that the decoder's `error` describes, at `path` (`None`: the value
    /// itself). Only a data error is reworded: a syntax error keeps serde's words. The
    /// position in a JSON text, if any, stays at the end (`at line 1 column 5`).
    pub fn new(path: Option<String>, error: serde_json::Error) -> Self {
        let text = error.to_string();
        let message = match (error.is_data(), error.line()) {
            (false, _) => text,
            (true, 0) => reword(&text),
            (true, line) => {
                let position = format!(" at line {line} column {}", error.column());
                format!("{}{position}", reword(text.strip_suffix(&position).unwrap_or(&text)))
            }
        };
        Self { path, message, error }
    }

    /// Where in the value: `title`, `items[0].title`; `None` for the value itself.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// What is wrong, in words, without the path.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether the value is of the wrong kind altogether (a string where a number goes),
    /// rather than of the right kind and refused (`300` for a `u8`, a name that is no
    /// variant's, a missing member).
    pub fn is_wrong_kind(&self) -> bool {
        self.error.is_data() && self.error.to_string().starts_with("invalid type: ")
    }

    /// The decoder's own error, as serde worded it.
    pub fn json_error(&self) -> &serde_json::Error {
        &self.error
    }

    /// A [`serde_json::Error`] that says what this says (path included), for where a
    /// decoder's error is kept: of the same category as the decoder's when that is a data
    /// error, the decoder's own otherwise.
    pub fn into_json_error(self) -> serde_json::Error {
        match self.error.is_data() {
            true => <serde_json::Error as serde::de::Error>::custom(self.to_string()),
            false => self.error,
        }
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(path) => write!(f, "`{path}`: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Mismatch {}

/// serde's message for a value of the wrong type or out of range, in words: `invalid type:
/// string "abc", expected u64` becomes `expected an unsigned integer, got "abc"`. A message of
/// another form (`missing field `title``, a type's own) is kept.
pub fn reword(message: &str) -> String {
    let rest = message.strip_prefix("invalid type: ").or_else(|| message.strip_prefix("invalid value: "));
    if let Some((got, expected)) = rest.and_then(split_unexpected) {
        return format!("expected {}, got {}", expected_words(expected), got_words(got));
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        if let Some((variant, expected)) = rest.split_once("`, expected ") {
            return format!("expected {expected}, got {variant:?}");
        }
    }
    if let Some(rest) = message.strip_prefix("invalid length ") {
        if let Some((length, expected)) = rest.split_once(", expected ") {
            let elements = if length == "1" { "element" } else { "elements" };
            return format!("expected {}, got {length} {elements}", expected_words(expected));
        }
    }
    message.to_owned()
}

/// `string "a, b", expected u64` -> (`string "a, b"`, `u64`): a string is read to its closing
/// quote (it may hold `, expected `), anything else to the first `, expected `.
fn split_unexpected(rest: &str) -> Option<(&str, &str)> {
    let end = match rest.strip_prefix("string \"") {
        Some(quoted) => {
            let mut escaped = false;
            let close = quoted.char_indices().find(|&(_, c)| {
                let closes = c == '"' && !escaped;
                escaped = c == '\\' && !escaped;
                closes
            })?;
            "string \"".len() + close.0 + 1
        }
        None => rest.find(", expected ")?,
    };
    let expected = rest[end..].strip_prefix(", expected ")?;
    Some((&rest[..end], expected))
}

/// serde's account of the value found, as the value is written: `"abc"`, `5`, `true`, `null`.
fn got_words(got: &str) -> String {
    if let Some(text) = got.strip_prefix("string ") {
        return text.to_owned();
    }
    for prefix in ["integer `", "floating point `", "boolean `"] {
        if let Some(value) = got.strip_prefix(prefix).and_then(|v| v.strip_suffix('`')) {
            return value.to_owned();
        }
    }
    if let Some(c) = got.strip_prefix("character `").and_then(|v| v.strip_suffix('`')) {
        return format!("{c:?}");
    }
    match got {
        "null" | "unit value" => "null".to_owned(),
        "map" => "an object".to_owned(),
        "sequence" => "a list".to_owned(),
        "byte array" => "bytes".to_owned(),
        other => other.to_owned(),
    }
}

/// serde's account of the type wanted (what its visitor expects), in words.
fn expected_words(expected: &str) -> String {
    let words = match expected {
        "u8" => "an integer from 0 to 255",
        "u16" => "an integer from 0 to 65535",
        "u32" => "an integer from 0 to 4294967295",
        "u64" | "u128" | "usize" => "an unsigned integer",
        "i8" => "an integer from -128 to 127",
        "i16" => "an integer from -32768 to 32767",
        "i32" => "an integer from -2147483648 to 2147483647",
        "i64" | "i128" | "isize" => "an integer",
        "f32" | "f64" => "a number",
        "a boolean" => "true or false",
        "a character" => "a single character",
        "a borrowed string" | "path string" | "os string" => "a string",
        "a sequence" => "a list",
        "a map" => "an object",
        "unit" => "null",
        "option" => "a value or null",
        "variant identifier" => "the name of a variant",
        "field identifier" => "the name of a field",
        other => {
            if let Some(kind) = other.strip_prefix("a nonzero ") {
                return match kind {
                    "u8" => "an integer from 1 to 255",
                    "u16" => "an integer from 1 to 65535",
                    "u32" => "an integer from 1 to 4294967295",
                    "u64" | "u128" | "usize" => "a positive integer",
                    _ => "an integer other than 0",
                }
                .to_owned();
            }
            if let Some(name) = other.strip_prefix("struct ") {
                return format!("an object ({name})");
            }
            if let Some(name) = other.strip_prefix("enum ") {
                return format!("a variant of {name}");
            }
            other
        }
    };
    words.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    fn why<T: DeserializeOwned + fmt::Debug>(value: Value) -> String {
        from_value::<T>(value).unwrap_err().to_string()
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Note {
        title: String,
        tags: Vec<String>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Notes {
        items: Vec<Note>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Unit {
        Celsius,
        Fahrenheit,
        Kelvin,
    }

    #[test]
    fn the_text_reader_says_what_the_value_reader_says() {
        fn both<T: DeserializeOwned + fmt::Debug>(value: Value) {
            let text = from_str::<T>(&value.to_string()).unwrap_err();
            let read = from_value::<T>(value).unwrap_err();
            assert_eq!((text.to_string(), text.is_wrong_kind()), (read.to_string(), read.is_wrong_kind()));
        }
        both::<u64>(json!("abc"));
        both::<Notes>(json!({"items": [{"title": "a", "tags": [1]}]}));
        both::<Notes>(json!({"items": [{"tags": []}]}));
        both::<Unit>(json!("rankine"));
        // Text that is not JSON at all keeps its position.
        assert!(from_str::<Vec<u64>>("[1,").unwrap_err().to_string().contains("line 1"));
        assert!(from_str::<u64>("1 2").is_err(), "trailing text is refused");
    }

    #[test]
    fn numbers_say_which_numbers() {
        assert_eq!(why::<u64>(json!("abc")), r#"expected an unsigned integer, got "abc""#);
        assert_eq!(why::<u64>(json!(-5)), "expected an unsigned integer, got -5");
        assert_eq!(why::<u64>(json!(1.5)), "expected an unsigned integer, got 1.5");
        assert_eq!(why::<u8>(json!(300)), "expected an integer from 0 to 255, got 300");
        assert_eq!(why::<i32>(json!(true)), "expected an integer from -2147483648 to 2147483647, got true");
        assert_eq!(why::<f64>(json!(null)), "expected a number, got null");
        assert_eq!(why::<std::num::NonZeroU32>(json!(0)), "expected an integer from 1 to 4294967295, got 0");
    }

    #[test]
    fn other_types_say_what_they_take() {
        assert_eq!(why::<bool>(json!("yes")), r#"expected true or false, got "yes""#);
        assert_eq!(why::<String>(json!(5)), "expected a string, got 5");
        assert_eq!(why::<char>(json!("ab")), r#"expected a single character, got "ab""#);
        assert_eq!(why::<Vec<u8>>(json!({"a": 1})), "expected a list, got an object");
        assert_eq!(why::<Note>(json!(5)), "expected an object (Note), got 5");
        assert_eq!(why::<(u8, u8)>(json!([1])), "expected a tuple of size 2, got 1 element");
        assert_eq!(
            why::<Unit>(json!("kelvinn")),
            r#"expected one of `celsius`, `fahrenheit`, `kelvin`, got "kelvinn""#
        );
    }

    #[test]
    fn a_fault_inside_the_value_says_where() {
        let notes = json!({"items": [{"title": "a", "tags": []}, {"title": 5, "tags": []}]});
        assert_eq!(why::<Notes>(notes), "`items[1].title`: expected a string, got 5");
        let missing = json!({"items": [{"tags": ["x"]}]});
        assert_eq!(why::<Notes>(missing), "`items[0]`: missing field `title`");
        let tag = json!({"items": [{"title": "a", "tags": [1]}]});
        let e = from_value::<Notes>(tag).unwrap_err();
        assert_eq!(e.path(), Some("items[0].tags[0]"));
        assert_eq!(e.message(), "expected a string, got 1");
        assert_eq!(e.json_error().to_string(), "invalid type: integer `1`, expected a string");
        let kept = e.into_json_error();
        assert!(kept.is_data());
        assert_eq!(kept.to_string(), "`items[0].tags[0]`: expected a string, got 1");
    }

    #[test]
    fn strings_are_read_to_their_closing_quote() {
        assert_eq!(
            reword(r#"invalid type: string "a\", expected b", expected u64"#),
            r#"expected an unsigned integer, got "a\", expected b""#
        );
        assert_eq!(reword("missing field `title`"), "missing field `title`");
        let in_text = serde_json::from_str::<u32>(r#""x""#).unwrap_err();
        assert_eq!(
            Mismatch::new(None, in_text).to_string(),
            r#"expected an integer from 0 to 4294967295, got "x" at line 1 column 3"#
        );
        let syntax = serde_json::from_str::<u32>("x").unwrap_err();
        assert_eq!(
            Mismatch::new(None, syntax).to_string(),
            "expected value at line 1 column 1",
            "a syntax error is kept"
        );
        assert_eq!(reword("the type's own words"), "the type's own words");
    }
}
