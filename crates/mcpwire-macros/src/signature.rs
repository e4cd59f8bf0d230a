//! A handler's signature: which parameters the client gives (arguments, in the schema) and
//! which come from the request's context (extractors), and the docs of each.

use syn::{Attribute, Expr, ExprLit, FnArg, Lit, Meta, Pat, ReturnType, Signature, Type};

/// The extractors, by the last segment of their type's path.
const EXTRACTORS: &[&str] = &["Context", "State", "Principal"];

/// One parameter.
pub(crate) struct Param {
    pub(crate) ty: Type,
    pub(crate) kind: ParamKind,
}

pub(crate) enum ParamKind {
    /// Given by the client, under this name.
    Argument { name: String, doc: Option<String>, optional: bool },
    /// Taken from the context.
    Extractor,
}

/// The parameters of a handler, and whether it takes `&self`.
pub(crate) struct Params {
    pub(crate) params: Vec<Param>,
    pub(crate) receiver: bool,
}

/// Reads the parameters of `sig`, taking their doc comments off (the compiler refuses doc
/// comments on parameters; here they describe arguments).
pub(crate) fn params(sig: &mut Signature) -> syn::Result<Params> {
    if let Some(param) = sig.generics.params.first() {
        return Err(syn::Error::new_spanned(param, "a handler cannot be generic: its argument types make its schema"));
    }
    let mut params = Vec::new();
    let mut receiver = false;
    for input in sig.inputs.iter_mut() {
        match input {
            FnArg::Receiver(r) => {
                if r.reference.is_none() || r.mutability.is_some() {
                    return Err(syn::Error::new_spanned(r, "a tool method takes `&self`"));
                }
                receiver = true;
            }
            FnArg::Typed(pt) => {
                let doc = take_doc(&mut pt.attrs);
                let ty = (*pt.ty).clone();
                let kind = match last_segment(&ty).as_deref() {
                    _ if is_extractor(&ty) => ParamKind::Extractor,
                    last => {
                        let Pat::Ident(ident) = &*pt.pat else {
                            return Err(syn::Error::new_spanned(
                                &pt.pat,
                                "an argument must be a plain name: the name is the argument's name in the schema",
                            ));
                        };
                        let name = ident.ident.to_string();
                        let name = name.strip_prefix("r#").unwrap_or(&name).to_owned();
                        ParamKind::Argument { name, doc, optional: last == Some("Option") }
                    }
                };
                params.push(Param { ty, kind });
            }
        }
    }
    Ok(Params { params, receiver })
}

/// The return type (`()` when none is written).
pub(crate) fn output(sig: &Signature) -> Type {
    match &sig.output {
        ReturnType::Default => syn::parse_quote!(()),
        ReturnType::Type(_, ty) => (**ty).clone(),
    }
}

/// Whether `ty` is an extractor, or `Option<Principal>` (an optional principal is an
/// extractor too, not an optional argument).
fn is_extractor(ty: &Type) -> bool {
    let Some(name) = last_segment(ty) else { return false };
    if EXTRACTORS.contains(&name.as_str()) {
        return true;
    }
    let Type::Path(p) = ty else { return false };
    let Some(segment) = p.path.segments.last().filter(|_| name == "Option") else { return false };
    let syn::PathArguments::AngleBracketed(args) = &segment.arguments else { return false };
    matches!(args.args.first(), Some(syn::GenericArgument::Type(inner)) if last_segment(inner).as_deref() == Some("Principal"))
}

fn last_segment(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

/// The text of the doc comments among `attrs`, which are taken out.
pub(crate) fn take_doc(attrs: &mut Vec<Attribute>) -> Option<String> {
    let mut lines = Vec::new();
    attrs.retain(|attr| match doc_line(attr) {
        Some(line) => {
            lines.push(line);
            false
        }
        None => true,
    });
    join(lines)
}

/// The text of the doc comments among `attrs`, which stay.
pub(crate) fn doc(attrs: &[Attribute]) -> Option<String> {
    join(attrs.iter().filter_map(doc_line).collect())
}

fn doc_line(attr: &Attribute) -> Option<String> {
    let Meta::NameValue(nv) = &attr.meta else { return None };
    if !nv.path.is_ident("doc") {
        return None;
    }
    match &nv.value {
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s.value()),
        _ => None,
    }
}

/// Doc lines as one text: each line's leading space (the one after `///`) dropped, the
/// whole trimmed.
fn join(lines: Vec<String>) -> Option<String> {
    let text: Vec<&str> = lines.iter().map(|l| l.strip_prefix(' ').unwrap_or(l)).collect();
    let text = text.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}
