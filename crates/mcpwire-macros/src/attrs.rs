//! The macros' arguments: `name = "..."`, flags such as `read_only`, `crate = path`, and for
//! `#[resource]` a leading URI literal.

use proc_macro2::TokenStream;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Expr, ExprLit, Lit, LitStr, Meta, Path, Token};

/// What a macro was given.
#[derive(Default)]
pub(crate) struct Attrs {
    /// The leading string literal (`#[resource("notes://{id}")]`).
    pub(crate) uri: Option<LitStr>,
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) mime_type: Option<LitStr>,
    pub(crate) icons: Vec<LitStr>,
    /// `app = "ui://..."`: the tool is an MCP App whose interface is that resource.
    pub(crate) app: Option<LitStr>,
    /// `task = "optional" | "required" | "forbidden"`.
    pub(crate) task: Option<LitStr>,
    /// `scopes = ["notes:read", ...]`: the OAuth scopes a principal needs.
    pub(crate) scopes: Vec<LitStr>,
    /// Flags, with the value given (`read_only`, `read_only = false`).
    pub(crate) flags: Vec<(syn::Ident, bool)>,
    /// The path of the `mcpwire` crate.
    pub(crate) krate: Option<Path>,
}

/// Which keys a macro takes.
pub(crate) struct Allowed {
    pub(crate) uri: bool,
    pub(crate) mime_type: bool,
    pub(crate) tool_keys: bool,
}

impl Attrs {
    pub(crate) fn parse(tokens: TokenStream, allowed: Allowed) -> syn::Result<Self> {
        let mut attrs = Attrs::default();
        let parser = |input: ParseStream| {
            if allowed.uri && input.peek(LitStr) {
                attrs.uri = Some(input.parse()?);
                if input.is_empty() {
                    return Ok(Punctuated::new());
                }
                input.parse::<Token![,]>()?;
            }
            Punctuated::<Item, Token![,]>::parse_terminated(input)
        };
        let items = parser.parse2(tokens)?;
        for item in items {
            attrs.take(item.0, &allowed)?;
        }
        Ok(attrs)
    }

    fn take(&mut self, meta: Meta, allowed: &Allowed) -> syn::Result<()> {
        let key = meta.path().get_ident().map(ToString::to_string).unwrap_or_default();
        let string = |meta: &Meta| -> syn::Result<LitStr> {
            match meta {
                Meta::NameValue(nv) => match &nv.value {
                    Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Ok(s.clone()),
                    other => Err(syn::Error::new_spanned(other, format!("`{key}` takes a string"))),
                },
                other => Err(syn::Error::new_spanned(other, format!("`{key}` takes a string: {key} = \"...\""))),
            }
        };
        match key.as_str() {
            "name" => self.name = Some(string(&meta)?),
            "title" => self.title = Some(string(&meta)?),
            "description" => self.description = Some(string(&meta)?),
            "mime_type" if allowed.mime_type => self.mime_type = Some(string(&meta)?),
            "icon" => self.icons.push(string(&meta)?),
            "scopes" => {
                let array = match &meta {
                    Meta::NameValue(syn::MetaNameValue { value: Expr::Array(array), .. }) => array,
                    other => {
                        return Err(syn::Error::new_spanned(other, "`scopes` takes strings: scopes = [\"a\", \"b\"]"))
                    }
                };
                for element in &array.elems {
                    match element {
                        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => self.scopes.push(s.clone()),
                        other => return Err(syn::Error::new_spanned(other, "a scope is a string")),
                    }
                }
            }
            "app" if allowed.tool_keys => {
                let value = string(&meta)?;
                if value.value().strip_prefix("ui://").is_none_or(str::is_empty) {
                    return Err(syn::Error::new_spanned(value, "`app` takes the `ui://` URI of the app's resource"));
                }
                self.app = Some(value);
            }
            "task" if allowed.tool_keys => {
                let value = string(&meta)?;
                if !matches!(value.value().as_str(), "optional" | "required" | "forbidden") {
                    return Err(syn::Error::new_spanned(value, "task is \"optional\", \"required\" or \"forbidden\""));
                }
                self.task = Some(value);
            }
            "crate" => match &meta {
                Meta::NameValue(nv) => match &nv.value {
                    Expr::Path(p) => self.krate = Some(p.path.clone()),
                    Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => self.krate = Some(s.parse()?),
                    other => return Err(syn::Error::new_spanned(other, "`crate` takes a path")),
                },
                other => return Err(syn::Error::new_spanned(other, "`crate` takes a path: crate = my::mcp")),
            },
            "read_only" | "destructive" | "idempotent" | "open_world" if allowed.tool_keys => {
                let value = match &meta {
                    Meta::Path(_) => true,
                    Meta::NameValue(nv) => match &nv.value {
                        Expr::Lit(ExprLit { lit: Lit::Bool(b), .. }) => b.value,
                        other => return Err(syn::Error::new_spanned(other, format!("`{key}` takes true or false"))),
                    },
                    Meta::List(l) => return Err(syn::Error::new_spanned(l, format!("`{key}` is a flag"))),
                };
                let ident = meta.path().get_ident().cloned().expect("checked above");
                self.flags.push((ident, value));
            }
            _ => {
                let known = match (allowed.tool_keys, allowed.mime_type) {
                    (true, _) => {
                        "name, title, description, icon, scopes, read_only, destructive, idempotent, open_world, task, app, crate"
                    }
                    (false, true) => "a URI first, then name, title, description, mime_type, icon, scopes, crate",
                    (false, false) => "name, title, description, icon, scopes, crate",
                };
                return Err(syn::Error::new_spanned(
                    meta.path(),
                    format!("unknown argument `{key}`; this macro takes {known}"),
                ));
            }
        }
        Ok(())
    }

    /// The name (given, or the function's), the title, and the description (given, or the
    /// doc comment), the last two as `Option<&str>` tokens.
    pub(crate) fn described(&self, ident: &syn::Ident, doc: Option<String>) -> Described {
        let name =
            self.name.as_ref().map(LitStr::value).unwrap_or_else(|| syn::ext::IdentExt::unraw(ident).to_string());
        let title = option_str(self.title.as_ref().map(LitStr::value).as_deref());
        let description = self.description.as_ref().map(LitStr::value).or(doc);
        Described { name, title, description: option_str(description.as_deref()) }
    }

    /// `.with_scopes([...])` when scopes were given, to follow the expression of a definition.
    pub(crate) fn with_scopes(&self) -> TokenStream {
        if self.scopes.is_empty() {
            return TokenStream::new();
        }
        let scopes = &self.scopes;
        quote::quote!(.with_scopes([#(#scopes),*]))
    }

    /// The path generated code reaches the runtime by.
    pub(crate) fn glue(&self) -> TokenStream {
        match &self.krate {
            Some(path) => quote::quote!(#path::__private),
            None => quote::quote!(::mcpwire::__private),
        }
    }
}

/// What [`Attrs::described`] gives.
pub(crate) struct Described {
    pub(crate) name: String,
    pub(crate) title: TokenStream,
    pub(crate) description: TokenStream,
}

struct Item(Meta);

impl Parse for Item {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        // `crate` is a keyword: read it as a name.
        if input.peek(Token![crate]) {
            let kw: Token![crate] = input.parse()?;
            let eq: Token![=] = input.parse()?;
            let value: Expr = input.parse()?;
            let path = Path::from(syn::Ident::new("crate", kw.span));
            return Ok(Item(Meta::NameValue(syn::MetaNameValue { path, eq_token: eq, value })));
        }
        Ok(Item(input.parse()?))
    }
}

/// `Some("text")` or `None`, as tokens.
pub(crate) fn option_str(s: Option<&str>) -> TokenStream {
    match s {
        Some(s) => quote::quote!(::core::option::Option::Some(#s)),
        None => quote::quote!(::core::option::Option::None),
    }
}
