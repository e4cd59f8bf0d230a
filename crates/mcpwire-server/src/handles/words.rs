//! What a handle looks like (its kind, `_`, random hex), and the retention policy in words.

use std::time::Duration;

/// The longest handle looked at: longer ones are malformed without reading further.
pub(super) const MAX_HANDLE_LEN: usize = 200;

/// The longest kind: the rest of [`MAX_HANDLE_LEN`] is for the random part.
const MAX_KIND_LEN: usize = 32;

/// How many hex digits [`mcpwire_protocol::id::random_id`] gives (128 bits).
const RANDOM_DIGITS: usize = 32;

/// Whether `kind` may start handles: a short word a model reads.
pub(super) fn is_kind(kind: &str) -> bool {
    (1..=MAX_KIND_LEN).contains(&kind.len())
        && kind.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A new handle of `kind`: the kind, so that a model tells its handles apart, then 128
/// random bits.
pub(super) fn new_handle(kind: &str) -> String {
    format!("{kind}_{}", mcpwire_protocol::id::random_id())
}

/// Whether `handle` is one [`new_handle`] could have made for `kind`. Checked before any
/// lookup, so that the store never sees a key of a caller's making.
pub(super) fn is_handle(kind: &str, handle: &str) -> bool {
    if handle.len() > MAX_HANDLE_LEN {
        return false;
    }
    let random = handle.strip_prefix(kind).and_then(|rest| rest.strip_prefix('_'));
    random.is_some_and(|r| r.len() == RANDOM_DIGITS && r.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

/// The retention policy of handles of `kind`, for the description of the tool that makes
/// them.
pub(super) fn retention(kind: &str, ttl: Duration) -> String {
    format!(
        "Returns a {kind} handle: pass it to the other {kind} tools. \
         A handle expires after {} unused; after that, create a new one.",
        humane(ttl)
    )
}

/// A duration as a person says it, in the largest unit (day, hour, minute, second) that
/// measures its whole seconds exactly: "30 minutes", "2 hours", "90 seconds"; in
/// milliseconds when under a second.
fn humane(d: Duration) -> String {
    let secs = d.as_secs();
    let (n, unit) = match secs {
        0 => return plural(d.as_millis().max(1) as u64, "millisecond"),
        s if s % 86_400 == 0 => (s / 86_400, "day"),
        s if s % 3_600 == 0 => (s / 3_600, "hour"),
        s if s % 60 == 0 => (s / 60, "minute"),
        s => (s, "second"),
    };
    plural(n, unit)
}

fn plural(n: u64, unit: &str) -> String {
    match n {
        1 => format!("1 {unit}"),
        n => format!("{n} {unit}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_the_kind_then_128_random_bits() {
        let h = new_handle("cart");
        assert!(h.starts_with("cart_") && h.len() == 5 + 32, "{h}");
        assert!(is_handle("cart", &h));
        assert_ne!(h, new_handle("cart"));
    }

    #[test]
    fn malformed_handles_are_refused() {
        let good = format!("cart_{}", "0123456789abcdef".repeat(2));
        assert!(is_handle("cart", &good));
        for bad in [
            String::new(),
            "cart_".into(),
            "cart".into(),
            good.replace("cart_", "order_"),
            good.replace("cart_", "cart-"),
            good.replace("cart_", "cartx_"),
            good.to_uppercase().replace("CART_", "cart_"),
            format!("{good}0"),
            good[..good.len() - 1].to_owned(),
            format!("{good}é"),
            "cart_".to_owned() + &"a".repeat(10_000),
            good.replace('a', "\u{0}"),
        ] {
            assert!(!is_handle("cart", &bad), "{bad:?}");
        }
    }

    #[test]
    fn kinds_are_short_words() {
        assert!(is_kind("cart") && is_kind("shopping_cart") && is_kind("v2-doc"));
        assert!(!is_kind("") && !is_kind("a:b") && !is_kind("a b") && !is_kind(&"a".repeat(33)));
    }

    #[test]
    fn durations_in_words() {
        assert_eq!(humane(Duration::from_secs(30 * 60)), "30 minutes");
        assert_eq!(humane(Duration::from_secs(3600)), "1 hour");
        assert_eq!(humane(Duration::from_secs(7200)), "2 hours");
        assert_eq!(humane(Duration::from_secs(90)), "90 seconds");
        assert_eq!(humane(Duration::from_secs(1)), "1 second");
        assert_eq!(humane(Duration::from_secs(2 * 86_400)), "2 days");
        assert_eq!(humane(Duration::from_millis(250)), "250 milliseconds");
        assert_eq!(
            retention("cart", Duration::from_secs(1800)),
            "Returns a cart handle: pass it to the other cart tools. \
             A handle expires after 30 minutes unused; after that, create a new one."
        );
    }
}
