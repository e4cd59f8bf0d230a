//! No code: this crate holds the compile-fail cases of `tests/ui`, the diagnostics of the
//! `mcpwire` macros and of the traits they rely on, as users see them (see `tests/it`).
