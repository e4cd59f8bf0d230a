//! `#[tool]` on a free function, and `#[tools]` on an impl block whose methods are marked
//! `#[tool]`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::ext::IdentExt;
use syn::{ImplItem, ItemFn, ItemImpl, Type};

use crate::attrs::{option_str, Allowed, Attrs};
use crate::handler::{self, arguments, await_if, bindings, capitalize, Source};
use crate::signature::{self, Params};

const ALLOWED: Allowed = Allowed { uri: false, mime_type: false, tool_keys: true };

/// `#[tool]` on a free function.
pub(crate) fn free(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let attrs = Attrs::parse(attr, ALLOWED)?;
    let mut function: ItemFn = syn::parse2(item)?;
    let params = signature::params(&mut function.sig)?;
    if params.receiver {
        return Err(syn::Error::new_spanned(&function.sig, "a method marked #[tool] needs #[tools] on its impl block"));
    }
    let glue = attrs.glue();
    let output = signature::output(&function.sig);
    let doc = signature::doc(&function.attrs);
    let ident = &function.sig.ident;
    let call = quote!(#ident);
    let name = ident.unraw().to_string();
    let def = definition(&attrs, &name, doc, &params, &output, call, function.sig.asyncness.is_some(), &glue);
    Ok(handler::expand(&function, "tool", quote!(#glue::ToolDef), def))
}

/// `#[tools]` on an impl block: its `#[tool]` methods (taking `&self`, or nothing) become the
/// tools of a `ToolSet`.
pub(crate) fn set(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let outer = Attrs::parse(attr, Allowed { uri: false, mime_type: false, tool_keys: false })?;
    let glue = outer.glue();
    let mut block: ItemImpl = syn::parse2(item)?;
    if let Some(param) = block.generics.params.first() {
        return Err(syn::Error::new_spanned(param, "#[tools] does not take a generic impl block"));
    }
    if let Some((_, path, _)) = &block.trait_ {
        return Err(syn::Error::new_spanned(path, "#[tools] goes on an inherent impl block, not a trait's"));
    }
    let self_ty: Type = (*block.self_ty).clone();
    let mut defs = Vec::new();
    for item in block.items.iter_mut() {
        let ImplItem::Fn(method) = item else { continue };
        let Some(position) = method.attrs.iter().position(|a| a.path().is_ident("tool")) else { continue };
        let marker = method.attrs.remove(position);
        let tokens = match &marker.meta {
            syn::Meta::Path(_) => TokenStream::new(),
            syn::Meta::List(list) => list.tokens.clone(),
            syn::Meta::NameValue(nv) => return Err(syn::Error::new_spanned(nv, "write #[tool] or #[tool(...)]")),
        };
        let mut attrs = Attrs::parse(tokens, ALLOWED)?;
        attrs.krate = outer.krate.clone();
        let params = signature::params(&mut method.sig)?;
        let doc = signature::doc(&method.attrs);
        let output = signature::output(&method.sig);
        let ident = &method.sig.ident;
        let call = match params.receiver {
            true => quote!(__this.#ident),
            false => quote!(<#self_ty>::#ident),
        };
        let is_async = method.sig.asyncness.is_some();
        let def = definition(&attrs, &ident.unraw().to_string(), doc, &params, &output, call, is_async, &glue);
        let this = params.receiver.then(|| quote!(let __this = ::std::sync::Arc::clone(&self);));
        defs.push(quote!({
            #this
            #def
        }));
    }
    if defs.is_empty() {
        return Err(syn::Error::new_spanned(&block.self_ty, "#[tools] found no method marked #[tool]"));
    }
    Ok(quote! {
        #block

        impl #glue::ToolSet for #self_ty {
            fn tool_defs(self: ::std::sync::Arc<Self>) -> ::std::vec::Vec<#glue::ToolDef> {
                ::std::vec![#(#defs),*]
            }
        }
    })
}

/// The expression that makes the `ToolDef`: the schema, the definition, and the handler
/// that binds the parameters and calls `call` (a path, or a method on `__this`).
#[allow(clippy::too_many_arguments)]
fn definition(
    attrs: &Attrs,
    default_name: &str,
    doc: Option<String>,
    params: &Params,
    output: &Type,
    call: TokenStream,
    is_async: bool,
    glue: &TokenStream,
) -> TokenStream {
    let this = params.receiver.then(|| quote!(let __this = ::std::sync::Arc::clone(&__this);));
    let params = &params.params[..];
    let name = attrs.name.as_ref().map(|n| n.value()).unwrap_or_else(|| default_name.to_owned());
    let description = attrs.description.as_ref().map(|d| d.value()).or(doc);
    let description = option_str(description.as_deref());
    let properties = arguments(params).into_iter().map(|(name, ty, doc, required)| {
        let doc = option_str(doc);
        quote!(__schema.add::<#ty>(#name, #doc, #required);)
    });
    let title = attrs.title.as_ref().map(|t| quote!(__tool.title = ::core::option::Option::Some(#t.into());));
    let hints = (!attrs.flags.is_empty()).then(|| {
        let set = attrs.flags.iter().map(|(flag, value)| {
            let field = quote::format_ident!("{flag}_hint");
            quote!(__hints.#field = ::core::option::Option::Some(#value);)
        });
        quote! {
            let mut __hints = #glue::ToolAnnotations::default();
            #(#set)*
            __tool.annotations = ::core::option::Option::Some(__hints);
        }
    });
    let icons = (!attrs.icons.is_empty()).then(|| {
        let icons = &attrs.icons;
        quote!(__tool.icons = ::core::option::Option::Some(::std::vec![#(#glue::icon(#icons)),*]);)
    });
    let task = attrs.task.as_ref().map(|t| {
        let variant = quote::format_ident!("{}", capitalize(&t.value()));
        quote!(__tool = __tool.with_task_support(#glue::TaskSupport::#variant);)
    });
    let (bind, vars) = bindings(params, Source::Json, glue);
    let wait = await_if(is_async);
    let scopes = attrs.with_scopes();
    let app = attrs.app.as_ref().map(|uri| quote!(.app(#uri)));
    quote! {{
        let mut __schema = #glue::ArgumentsSchema::new();
        #(#properties)*
        let mut __tool = #glue::tool(#name, #description, __schema.finish());
        #title
        #hints
        #icons
        #task
        let __output = <#output as #glue::IntoToolResult>::output_schema();
        let __wrapped = __output.as_ref().is_some_and(|o| o.wrapped);
        __tool.output_schema = __output.map(|o| o.schema);
        #glue::ToolDef::new(__tool, move |__args: #glue::JsonObject, __ctx: #glue::Context| {
            #this
            async move {
                #[allow(unused_mut, unused_variables)]
                let mut __args = __args;
                #bind
                let __out: #output = #call(#(#vars),*)#wait;
                #glue::IntoToolResult::into_tool_result(__out, __wrapped)
            }
        }) #scopes #app
    }}
}
