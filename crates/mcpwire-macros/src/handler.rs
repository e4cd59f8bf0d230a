//! What the four macros share: a free function stays as it is, and a function named after it
//! (`add_tool()` for `#[tool] fn add`) returns its definition; and the statements that take
//! each parameter's value.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::{Ident, ItemFn, Type};

use crate::signature::{Param, ParamKind};

/// Where a handler's arguments come from.
pub(crate) enum Source {
    /// A tool's JSON arguments, in `__args`.
    Json,
    /// Strings by name (prompt arguments, template variables), in `__args`.
    Text,
}

/// The statements that bind `__p0`, `__p1`, ... to the parameters' values, and those names.
pub(crate) fn bindings(params: &[Param], source: Source, glue: &TokenStream) -> (TokenStream, Vec<Ident>) {
    let mut statements = TokenStream::new();
    let mut names = Vec::new();
    for (i, param) in params.iter().enumerate() {
        let var = format_ident!("__p{i}");
        let ty = &param.ty;
        let value = match (&param.kind, &source) {
            (ParamKind::Extractor, _) => quote!(#glue::extract::<#ty>(&__ctx)?),
            (ParamKind::Argument { name, .. }, Source::Json) => quote!(#glue::argument::<#ty>(&mut __args, #name)?),
            (ParamKind::Argument { name, .. }, Source::Text) => {
                quote!(#glue::text_argument::<#ty>(__args.get(#name), #name)?)
            }
        };
        statements.extend(quote!(let #var: #ty = #value;));
        names.push(var);
    }
    (statements, names)
}

/// The arguments of the parameters, as `(name, type, doc, required)`.
pub(crate) fn arguments(params: &[Param]) -> Vec<(&str, &Type, Option<&str>, bool)> {
    params
        .iter()
        .filter_map(|p| match &p.kind {
            ParamKind::Argument { name, doc, optional } => Some((name.as_str(), &p.ty, doc.as_deref(), !optional)),
            ParamKind::Extractor => None,
        })
        .collect()
}

/// What a macro makes of a free function: the function itself, unchanged but for its
/// parameters' doc comments (taken off already), and beside it a function named after it
/// (`add_tool()` for `#[tool] fn add`) that returns its definition (`def`, of type `ty`).
///
/// The function's own name stays a plain function: `add(1.0, 2.0)` calls it, and a local
/// `let add = ...` in the same module is a new binding, as with any function. (A unit struct
/// of that name, the older design, made such a `let` a pattern of the struct.)
pub(crate) fn expand(function: &ItemFn, kind: &str, ty: TokenStream, def: TokenStream) -> TokenStream {
    let ident = &function.sig.ident;
    let name = definition_name(ident, kind);
    let vis = &function.vis;
    // A `#[cfg]` after the macro's attribute stays on the function: the definition follows it.
    let cfgs = function.attrs.iter().filter(|a| a.path().is_ident("cfg"));
    let doc = format!(
        " The {kind} `{}` as a `{}Def` (what `#[{kind}]` makes of it), to register: `.{kind}({name}())`.",
        ident.unraw(),
        capitalize(kind),
    );
    quote! {
        #function

        #(#cfgs)*
        #[doc = #doc]
        #vis fn #name() -> #ty {
            #def
        }
    }
}

/// The name of the function that returns the definition of `ident`: `{ident}_{kind}`, at the
/// span of `ident` (so that a diagnostic about it points at the function).
pub(crate) fn definition_name(ident: &Ident, kind: &str) -> Ident {
    format_ident!("{}_{kind}", ident.unraw(), span = ident.span())
}

/// `tool` -> `Tool`.
pub(crate) fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
}

/// `.await` when the handler is async.
pub(crate) fn await_if(is_async: bool) -> TokenStream {
    match is_async {
        true => quote!(.await),
        false => TokenStream::new(),
    }
}
