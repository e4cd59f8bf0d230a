//! The attribute macros of the `mcpwire` crate: `#[tool]`, `#[tools]`, `#[resource]` and
//! `#[prompt]`. Use them through `mcpwire` (`use mcpwire::{tool, tools, resource, prompt};`), whose
//! documentation describes them; the code they generate names `::mcpwire` (another path with
//! `crate = some::path`).
//!
//! - `attrs`: the macros' own arguments.
//! - `signature`: a handler's parameters (arguments or extractors) and docs.
//! - `handler`: the code common to the four macros: the function that returns a free
//!   function's definition (`add_tool()` for `#[tool] fn add`), the parameters' bindings.
//! - [`tool`], [`resource`], [`prompt`]: one file per macro.

mod attrs;
mod handler;
mod prompt;
mod resource;
mod signature;
mod tool;

use proc_macro::TokenStream;

/// Makes a function a tool. See the `mcpwire` crate.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::free(attr.into(), item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Makes the `#[tool]` methods of an impl block a set of tools. See the `mcpwire` crate.
#[proc_macro_attribute]
pub fn tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::set(attr.into(), item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Makes a function a resource or a resource template. See the `mcpwire` crate.
#[proc_macro_attribute]
pub fn resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    resource::expand(attr.into(), item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Makes a function a prompt. See the `mcpwire` crate.
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    prompt::expand(attr.into(), item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}
