//! The OAuth scopes a tool, resource or prompt needs, and whether a request's principal may
//! use it.
//!
//! Scopes are checked against the principal an authorizing transport gave the request (HTTP
//! behind a resource server). A request without a principal came over a transport without
//! authorization (stdio, an HTTP endpoint left open): what such a transport reaches, it may
//! use, as the authorization specification leaves those transports to their own means.

use std::sync::Arc;

use mcpwire_protocol::Principal;

/// The scopes something needs, every one of them; none by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scopes(Option<Arc<[String]>>);

impl Scopes {
    /// These scopes (none if `scopes` is empty).
    pub fn new(scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let scopes: Arc<[String]> = scopes.into_iter().map(Into::into).collect();
        Self((!scopes.is_empty()).then_some(scopes))
    }

    /// The scopes.
    pub fn as_slice(&self) -> &[String] {
        self.0.as_deref().unwrap_or_default()
    }

    /// Whether no scope is needed.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// Whether a request of `principal` may use what needs these scopes: one without a
    /// principal may (see the module docs), one with a principal if its token grants them all.
    pub fn permit(&self, principal: Option<&Principal>) -> bool {
        match (&self.0, principal) {
            (None, _) | (_, None) => true,
            (Some(needed), Some(p)) => p.has_scopes(needed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_principal_needs_every_scope_and_no_principal_needs_none() {
        let scopes = Scopes::new(["notes:read", "notes:write"]);
        let reader = Principal { scopes: vec!["notes:read".into()], ..Principal::default() };
        let writer = Principal { scopes: vec!["notes:write".into(), "notes:read".into()], ..Principal::default() };
        assert!(!scopes.permit(Some(&reader)));
        assert!(scopes.permit(Some(&writer)));
        assert!(scopes.permit(None));
        assert!(Scopes::default().permit(Some(&Principal::default())));
        assert!(Scopes::new(Vec::<String>::new()).is_empty());
    }
}
