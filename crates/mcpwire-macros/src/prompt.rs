//! `#[prompt]`: each parameter that is not an extractor is an argument of the prompt (a
//! string on the wire, read as its type).

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;

use crate::attrs::{option_str, Allowed, Attrs, Described};
use crate::handler::{self, arguments, await_if, bindings, Source};
use crate::signature;

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let attrs = Attrs::parse(attr, Allowed { uri: false, mime_type: false, tool_keys: false })?;
    let mut function: ItemFn = syn::parse2(item)?;
    let params = signature::params(&mut function.sig)?;
    if params.receiver {
        return Err(syn::Error::new_spanned(&function.sig, "#[prompt] goes on a free function"));
    }
    let glue = attrs.glue();
    let sig = &function.sig;
    let ident = &sig.ident;
    let output = signature::output(sig);
    let Described { name, title, description } = attrs.described(ident, signature::doc(&function.attrs));
    let prompt_args = arguments(&params.params).into_iter().map(|(name, ty, doc, required)| {
        let doc = option_str(doc);
        // The type is checked here so that an unreadable one is reported on its parameter.
        quote!({
            fn __readable<T: #glue::Argument>() {}
            __readable::<#ty>();
            #glue::prompt_argument(#name, #doc, #required)
        })
    });
    let (bind, vars) = bindings(&params.params, Source::Text, &glue);
    let wait = await_if(sig.asyncness.is_some());
    let scopes = attrs.with_scopes();
    let def = quote! {
        #glue::PromptDef::new(
            #glue::prompt(#name, #title, #description, ::std::vec![#(#prompt_args),*]),
            move |__args: ::std::collections::BTreeMap<::std::string::String, ::std::string::String>,
                  __ctx: #glue::Context| async move {
                #bind
                let __out: #output = #ident(#(#vars),*)#wait;
                #glue::IntoPromptResult::into_prompt_result(__out, #description)
            },
        ) #scopes
    };
    Ok(handler::expand(&function, "prompt", quote!(#glue::PromptDef), def))
}
