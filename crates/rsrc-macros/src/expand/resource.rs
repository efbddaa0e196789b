//! The declaration of a resource method: a `.resource(…)` call for a fixed URI or a
//! `.template(…)` call, with its metadata, options and typed variables.
//!
//! Invariants: every template variable is bound to exactly one parameter and every
//! parameter to a variable (or is the request context, given once), decided here, with
//! the error spanned on the parameter or the template; a fixed URI takes no variables and
//! no template has a `size`; a `Json` return type implies `application/json` unless a
//! MIME type is given.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::{LitStr, Type};

use super::methods::{Method, Role, call};
use crate::model::{Binding, Errors, ParamType, ResourceArgs, binds, is_ref_to, param_type};

/// Binds each parameter of a resource method; `None` for the context.
fn bind_resource(
    m: &Method,
    uri: &LitStr,
    variables: &[String],
    errors: &mut Errors,
) -> Vec<Binding> {
    let mut out = Vec::new();
    let mut context = false;
    for p in &m.params {
        if is_ref_to(&p.ty, "RequestContext") && p.rename.is_none() {
            if context {
                errors.at(&p.span, "the request context is given once");
            }
            context = true;
            out.push(Binding::Context);
            continue;
        }
        match variables.iter().find(|v| binds(v, p)) {
            Some(v) => out.push(Binding::Variable {
                name: v.clone(),
                ty: Box::new(param_type(&p.ty)),
            }),
            None if variables.is_empty() => errors.at(
                &p.span,
                format_args!(
                    "parameter `{}`: a resource with a fixed URI ({}) has no variables; it may take only `&RequestContext`",
                    p.ident,
                    uri.value()
                ),
            ),
            None => errors.at(
                &p.span,
                format_args!(
                    "parameter `{}` matches no variable of `{}` (its variables: {}); rename it, or mark it #[var(\"…\")]",
                    p.ident,
                    uri.value(),
                    variables.join(", ")
                ),
            ),
        }
    }
    for v in variables {
        if !m.params.iter().any(|p| binds(v, p)) {
            errors.at(
                uri,
                format_args!(
                    "the variable `{v}` of `{}` has no parameter: add `{}: T` to `fn {}`",
                    uri.value(),
                    heck::ToSnakeCase::to_snake_case(v.as_str()),
                    m.ident
                ),
            );
        }
    }
    out
}

/// The MIME type a return type implies: `application/json` for `Json<T>`, also inside
/// `Option` and `Result`.
fn implied_mime_type(ret: Option<&Type>) -> Option<&'static str> {
    let mut ty = ret?;
    loop {
        let Type::Path(p) = ty else { return None };
        let last = p.path.segments.last()?;
        match last.ident.to_string().as_str() {
            "Json" => return Some("application/json"),
            "Option" | "Result" => {
                let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
                    return None;
                };
                let Some(syn::GenericArgument::Type(inner)) = a.args.first() else {
                    return None;
                };
                ty = inner;
            }
            _ => return None,
        }
    }
}

fn metadata(
    krate: &syn::Path,
    args: &ResourceArgs,
    doc: Option<&String>,
    implied_mime: Option<&str>,
    name: &str,
    template: bool,
) -> TokenStream {
    let uri = &args.uri;
    let mut out = if template {
        quote!(#krate::protocol::ResourceTemplate::new(#uri, #name))
    } else {
        quote!(#krate::protocol::Resource::new(#uri, #name))
    };
    if let Some(t) = &args.title {
        out.extend(quote!(.with_title(#t)));
    }
    if let Some(d) = args.description.as_ref().or(doc) {
        out.extend(quote!(.with_description(#d)));
    }
    if let Some(m) = args.mime_type.as_deref().or(implied_mime) {
        out.extend(quote!(.with_mime_type(#m)));
    }
    if let Some(s) = args.size {
        out.extend(quote!(.with_size(#s)));
    }
    if !args.icons.is_empty() {
        let icons = args.icons.iter().map(|i| {
            let src = &i.src;
            let mime = match &i.mime_type {
                Some(m) => quote!(::core::option::Option::Some(::std::string::String::from(#m))),
                None => quote!(::core::option::Option::None),
            };
            let sizes = if i.sizes.is_empty() {
                quote!(::core::option::Option::None)
            } else {
                let s = &i.sizes;
                quote!(::core::option::Option::Some(::std::vec![#(::std::string::String::from(#s)),*]))
            };
            let theme = match &i.theme {
                Some(t) => quote!(::core::option::Option::Some(::std::string::String::from(#t))),
                None => quote!(::core::option::Option::None),
            };
            quote!(#krate::protocol::Icon { src: ::std::string::String::from(#src), mime_type: #mime, sizes: #sizes, theme: #theme })
        });
        out.extend(quote!(.with_icons(::std::vec![#(#icons),*])));
    }
    if !args.audience.is_empty() || args.priority.is_some() || args.last_modified.is_some() {
        let audience = if args.audience.is_empty() {
            quote!(::core::option::Option::None)
        } else {
            let roles = args.audience.iter().map(|r| {
                if r == "user" {
                    quote!(#krate::protocol::Role::User)
                } else {
                    quote!(#krate::protocol::Role::Assistant)
                }
            });
            quote!(::core::option::Option::Some(::std::vec![#(#roles),*]))
        };
        let priority = match args.priority {
            Some(p) => quote!(::core::option::Option::Some(#p)),
            None => quote!(::core::option::Option::None),
        };
        let last = match &args.last_modified {
            Some(l) => quote!(::core::option::Option::Some(::std::string::String::from(#l))),
            None => quote!(::core::option::Option::None),
        };
        out.extend(quote!(.with_annotations(#krate::protocol::Annotations {
            audience: #audience, priority: #priority, last_modified: #last,
        })));
    }
    out
}

fn options(krate: &syn::Path, args: &ResourceArgs) -> TokenStream {
    let mut out = quote!(#krate::declare::Options::new());
    if args.collection {
        out.extend(quote!(.collection()));
    }
    if args.allow_nul {
        out.extend(quote!(.allow_nul()));
    }
    if let Some(ms) = args.cache_ms {
        out.extend(quote!(.cache(::core::time::Duration::from_millis(#ms))));
        if args.cache_public {
            out.extend(quote!(.cache_scope(#krate::protocol::CacheScope::Public)));
        }
    }
    out
}

/// The `.resource(…)` or `.template(…)` call declaring `m`.
pub(super) fn declare_resource(krate: &syn::Path, m: &Method, errors: &mut Errors) -> TokenStream {
    let Role::Resource {
        args,
        variables,
        doc,
    } = &m.role
    else {
        return TokenStream::new();
    };
    let template = variables.is_some();
    if template && args.size.is_some() {
        errors.at(
            &args.uri,
            "`size` is for a resource with a fixed URI, not a template",
        );
    }
    let name = args.name.clone().unwrap_or_else(|| m.ident.to_string());
    let implied = implied_mime_type(m.ret.as_ref());
    let meta = metadata(krate, args, doc.as_ref(), implied, &name, template);
    let opts = options(krate, args);
    let bindings = bind_resource(m, &args.uri, variables.as_deref().unwrap_or(&[]), errors);
    let mut lets = Vec::new();
    let mut call_args = Vec::new();
    for (p, b) in m.params.iter().zip(&bindings) {
        let ident = format_ident!("__{}", p.ident);
        match b {
            Binding::Context => call_args.push(quote!(&__ctx)),
            Binding::Variable { name, ty } => {
                let span = p.span;
                match &**ty {
                    ParamType::Str => {
                        lets.push(quote_spanned!(span=> let #ident: ::std::string::String = __vars.get::<::std::string::String>(#name)?;));
                        call_args.push(quote!(&#ident));
                    }
                    ParamType::Optional(t) => {
                        lets.push(quote_spanned!(span=> let #ident: ::core::option::Option<#t> = __vars.get_optional::<#t>(#name)?;));
                        call_args.push(quote!(#ident));
                    }
                    ParamType::Segments(t) => {
                        lets.push(quote_spanned!(span=> let #ident: ::std::vec::Vec<#t> = __vars.get_segments::<#t>(#name)?;));
                        call_args.push(quote!(#ident));
                    }
                    ParamType::Path(t) => {
                        lets.push(quote_spanned!(span=> let #ident: #t = __vars.path(#name)?;));
                        call_args.push(quote!(#ident));
                    }
                    ParamType::Parsed(t) => {
                        lets.push(
                            quote_spanned!(span=> let #ident: #t = __vars.get::<#t>(#name)?;),
                        );
                        call_args.push(quote!(#ident));
                    }
                }
            }
        }
    }
    let body = call(
        m,
        &call_args,
        &quote!(#krate::declare::IntoContent::into_content),
    );
    if template {
        quote! {
            .template(#meta, #opts, |__this: ::std::sync::Arc<Self>, __ctx: #krate::RequestContext, __vars: #krate::Vars| async move {
                #(#lets)*
                #body
            })
        }
    } else {
        quote! {
            .resource(#meta, #opts, |__this: ::std::sync::Arc<Self>, __ctx: #krate::RequestContext| async move {
                #body
            })
        }
    }
}
