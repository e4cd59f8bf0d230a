//! `#[resource("uri")]`: a resource when the URI has no variable, a resource template when
//! it has some. Each variable is a parameter of the same name (read from its text), and each
//! parameter that is not an extractor is a variable.

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;

use crate::attrs::{option_str, Allowed, Attrs, Described};
use crate::handler::{self, arguments, await_if, bindings, Source};
use crate::signature;

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let attrs = Attrs::parse(attr, Allowed { uri: true, mime_type: true, tool_keys: false })?;
    let mut function: ItemFn = syn::parse2(item)?;
    let Some(uri) = attrs.uri.clone() else {
        return Err(syn::Error::new_spanned(
            &function.sig.ident,
            "#[resource] needs a URI or URI template first: #[resource(\"notes://{id}\")]",
        ));
    };
    let params = signature::params(&mut function.sig)?;
    if params.receiver {
        return Err(syn::Error::new_spanned(&function.sig, "#[resource] goes on a free function"));
    }
    let variables = variables(&uri.value()).map_err(|e| syn::Error::new_spanned(&uri, e))?;
    let args = arguments(&params.params);
    for variable in &variables {
        if !args.iter().any(|(name, ..)| name == variable) {
            return Err(syn::Error::new_spanned(
                &uri,
                format!("the template variable `{variable}` has no parameter: add `{variable}: T` to the function"),
            ));
        }
    }
    for (name, ty, ..) in &args {
        if !variables.iter().any(|v| v == name) {
            return Err(syn::Error::new_spanned(
                ty,
                format!("the parameter `{name}` is not a variable of the URI template {:?}", uri.value()),
            ));
        }
    }
    let glue = attrs.glue();
    let sig = &function.sig;
    let ident = &sig.ident;
    let output = signature::output(sig);
    let Described { name, title, description } = attrs.described(ident, signature::doc(&function.attrs));
    let mime = option_str(attrs.mime_type.as_ref().map(|m| m.value()).as_deref());
    let (bind, vars) = bindings(&params.params, Source::Text, &glue);
    let wait = await_if(sig.asyncness.is_some());
    let run = quote! {
        #bind
        let __out: #output = #ident(#(#vars),*)#wait;
        #glue::IntoReadResult::into_read_result(__out, &__uri, #mime)
    };
    let def = match variables.is_empty() {
        true => quote! {
            #glue::ResourceDef::fixed(
                #glue::resource(#uri, #name, #title, #description, #mime),
                move |__uri: ::std::string::String, __ctx: #glue::Context| async move { #run },
            )
        },
        false => quote! {
            #glue::ResourceDef::template(
                #glue::template(#uri, #name, #title, #description, #mime),
                move |__uri: ::std::string::String,
                      __args: ::std::collections::HashMap<::std::string::String, ::std::string::String>,
                      __ctx: #glue::Context| async move { #run },
            )
        },
    };
    let scopes = attrs.with_scopes();
    Ok(handler::expand(&function, "resource", quote!(#glue::ResourceDef), quote!(#def #scopes)))
}

/// The variable names of an RFC 6570 URI template, in order.
fn variables(template: &str) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            return Err(format!("unclosed `{{` in the URI template {template:?}"));
        };
        let expression = &after[..close];
        let expression = expression.trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for spec in expression.split(',') {
            let name = spec.split(':').next().unwrap_or_default().trim_end_matches('*');
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
                return Err(format!("`{spec}` is not a variable name in the URI template {template:?}"));
            }
            names.push(name.to_owned());
        }
        rest = &after[close + 1..];
    }
    if rest.contains('}') {
        return Err(format!("unopened `}}` in the URI template {template:?}"));
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::variables;

    #[test]
    fn variables_of_each_operator_are_found() {
        assert_eq!(variables("notes://{id}").unwrap(), ["id"]);
        assert_eq!(variables("file:///{+path}{?q,limit}").unwrap(), ["path", "q", "limit"]);
        assert_eq!(variables("x://{/a*}{.b:3}").unwrap(), ["a", "b"]);
        assert!(variables("static://x").unwrap().is_empty());
        assert!(variables("x://{id").is_err());
        assert!(variables("x://{}").is_err());
    }
}
