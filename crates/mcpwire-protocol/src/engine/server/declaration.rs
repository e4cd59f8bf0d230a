//! The client's declaration in a 2026-07-28 request's `_meta` (its capabilities and its info),
//! read once per text rather than once per request.
//!
//! A client sends the same declaration, byte for byte, on every request, and the server reads
//! it into typed values for the request's context: two reads and their allocations per
//! request. So each thread keeps the last text of each it read and what it read, and a request
//! that carries the same text shares that value. It is a memo of a pure function (the text
//! decides the value), so a cache per thread needs no lock and cannot be stale; a text longer
//! than [`MAX_KEPT`] is read every time, so that a client cannot make a thread keep a large
//! text.

use std::cell::RefCell;
use std::sync::Arc;
use std::thread::LocalKey;

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::types::{ClientCapabilities, Implementation};

/// The longest declaration text kept: far above what any client sends (a few hundred bytes).
pub(super) const MAX_KEPT: usize = 4096;

/// The last text read on this thread, and what it read as.
struct Last<T> {
    text: String,
    value: Option<Arc<T>>,
}

impl<T> Default for Last<T> {
    fn default() -> Self {
        Self { text: String::new(), value: None }
    }
}

thread_local! {
    static CAPABILITIES: RefCell<Last<ClientCapabilities>> = RefCell::default();
    static CLIENT_INFO: RefCell<Last<Implementation>> = RefCell::default();
}

/// The client capabilities `raw` declares.
pub(super) fn capabilities(raw: &RawValue) -> Result<Arc<ClientCapabilities>, serde_json::Error> {
    read(&CAPABILITIES, raw)
}

/// The client info `raw` declares.
pub(super) fn client_info(raw: &RawValue) -> Result<Arc<Implementation>, serde_json::Error> {
    read(&CLIENT_INFO, raw)
}

fn read<T: DeserializeOwned>(
    last: &'static LocalKey<RefCell<Last<T>>>,
    raw: &RawValue,
) -> Result<Arc<T>, serde_json::Error> {
    let text = raw.get();
    last.with_borrow_mut(|last| {
        if let Some(value) = last.value.as_ref().filter(|_| last.text == text) {
            return Ok(value.clone());
        }
        let value = Arc::new(serde_json::from_str::<T>(text)?);
        if text.len() <= MAX_KEPT {
            last.text.clear();
            last.text.push_str(text);
            last.value = Some(value.clone());
        }
        Ok(value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn the_same_text_shares_its_value_and_another_text_is_read_for_itself() {
        let a = raw(r#"{"name":"c","version":"1"}"#);
        let first = client_info(&a).unwrap();
        let again = client_info(&raw(r#"{"name":"c","version":"1"}"#)).unwrap();
        assert!(Arc::ptr_eq(&first, &again), "the same text is read once");
        let other = client_info(&raw(r#"{"name":"d","version":"1"}"#)).unwrap();
        assert_eq!(other.name, "d");
        assert_eq!(client_info(&a).unwrap().name, "c", "the newest text is the one kept; the old one is read again");
        assert!(client_info(&raw(r#"{"name":3}"#)).is_err(), "a bad text is an error every time");
        assert!(client_info(&raw(r#"{"name":3}"#)).is_err());

        let long = format!(r#"{{"name":"{}","version":"1"}}"#, "x".repeat(MAX_KEPT));
        let one = client_info(&raw(&long)).unwrap();
        let two = client_info(&raw(&long)).unwrap();
        assert!(!Arc::ptr_eq(&one, &two), "a long text is not kept");
        assert_eq!(one, two);

        let caps = capabilities(&raw(r#"{"sampling":{}}"#)).unwrap();
        assert!(caps.sampling.is_some());
        assert!(Arc::ptr_eq(&caps, &capabilities(&raw(r#"{"sampling":{}}"#)).unwrap()));
    }
}
