//! What the four macros share: a free function becomes a unit struct of the same name that
//! still calls like the function (it dereferences to a function pointer), with its handler
//! generated beside it; and the statements that take each parameter's value.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{Attribute, Ident, ItemFn, Type};

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

/// A free function turned into a handler: the unit struct standing for it, the function
/// itself under a hidden name, and whatever `impls` implement for the struct.
pub(crate) struct Callable {
    /// The function, renamed `__mcp_body`, its parameters' doc comments taken off.
    pub(crate) body: ItemFn,
    /// The doc comments of the function (they go on the struct).
    pub(crate) docs: Vec<Attribute>,
}

impl Callable {
    /// Splits `function` (whose parameters' docs are taken off already) into the struct's
    /// docs and the renamed body.
    pub(crate) fn new(mut function: ItemFn) -> Self {
        let (docs, attrs): (Vec<Attribute>, Vec<Attribute>) =
            function.attrs.drain(..).partition(|a| a.path().is_ident("doc"));
        function.attrs = attrs;
        Self { body: function, docs }
    }

    /// The code: the struct, its `Deref` to a function pointer, the body and `impls`.
    pub(crate) fn expand(mut self, params: &[Param], impls: TokenStream, glue: &TokenStream) -> TokenStream {
        let ident = self.body.sig.ident.clone();
        let vis = self.body.vis.clone();
        let docs = &self.docs;
        self.body.sig.ident = Ident::new("__mcp_body", Span::call_site());
        self.body.vis = syn::Visibility::Inherited;
        let body = &self.body;
        let types: Vec<&Type> = params.iter().map(|p| &p.ty).collect();
        let output = crate::signature::output(&self.body.sig);
        let vars: Vec<Ident> = (0..params.len()).map(|i| format_ident!("__p{i}")).collect();
        let (target, pointer) = match self.body.sig.asyncness {
            Some(_) => (
                quote!(fn(#(#types),*) -> #glue::BoxFuture<'static, #output>),
                quote!(|#(#vars),*| ::std::boxed::Box::pin(__mcp_body(#(#vars),*))),
            ),
            None => (quote!(fn(#(#types),*) -> #output), quote!(__mcp_body)),
        };
        quote! {
            #(#docs)*
            #[allow(non_camel_case_types)]
            #[derive(Clone, Copy, Debug)]
            #vis struct #ident;

            const _: () = {
                #body

                // The struct calls like the function: a call goes through this pointer.
                impl ::core::ops::Deref for #ident {
                    type Target = #target;
                    fn deref(&self) -> &Self::Target {
                        const POINTER: #target = #pointer;
                        &POINTER
                    }
                }

                #impls
            };
        }
    }
}

/// `.await` when the handler is async.
pub(crate) fn await_if(is_async: bool) -> TokenStream {
    match is_async {
        true => quote!(.await),
        false => TokenStream::new(),
    }
}
