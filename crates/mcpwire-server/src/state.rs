//! Application state given to the server builder and reached by handlers (the [`State`]
//! extractor, or [`crate::Context::state`]): one value of each type.
//!
//! [`State`]: crate::authoring::State

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

/// Values of distinct types, shared by every request. Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct StateMap {
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl StateMap {
    /// Keeps `value`, replacing an earlier one of its type.
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.values.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The value of type `T`, if one was given.
    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.values.get(&TypeId::of::<T>()).and_then(|v| v.downcast_ref())
    }
}

impl std::fmt::Debug for StateMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StateMap({} values)", self.values.len())
    }
}
