//! The annotated methods: each one's helper attribute read and taken off, its role
//! (a resource, a completion, a list), and how a generated closure calls it.
//!
//! Invariants: a method declares at most one thing and must return something; a helper
//! that names a resource names a method of the block declaring a template; a call's
//! return type is spanned as the user wrote it, so a type that does not convert is
//! reported there.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Attribute, Ident, ImplItemFn, LitStr, ReturnType, Token, Type};

use crate::model::{Errors, Param, ResourceArgs, params, template_variables};

/// What a method declares.
pub(super) enum Role {
    Resource {
        args: Box<ResourceArgs>,
        /// The template's variables, or `None` for a fixed URI.
        variables: Option<Vec<String>>,
        doc: Option<String>,
    },
    Complete {
        resource: Ident,
        variable: LitStr,
    },
    List {
        resource: Ident,
    },
}

pub(super) struct Method {
    pub(super) ident: Ident,
    pub(super) vis: syn::Visibility,
    is_async: bool,
    pub(super) ret: Option<Type>,
    pub(super) params: Vec<Param>,
    sig_span: Span,
    pub(super) role: Role,
}

const HELPERS: [&str; 3] = ["resource", "complete", "list"];

fn doc_of(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value().trim().to_owned()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// `#[complete(resource, variable)]`: the variable as an identifier or a string.
fn parse_complete(attr: &Attribute) -> syn::Result<(Ident, LitStr)> {
    attr.parse_args_with(|input: ParseStream<'_>| {
        let resource: Ident = input.parse()?;
        input.parse::<Token![,]>()?;
        let variable = if input.peek(LitStr) {
            input.parse::<LitStr>()?
        } else {
            let id: Ident = input.parse()?;
            LitStr::new(&id.to_string(), id.span())
        };
        let _ = input.parse::<Option<Token![,]>>()?;
        Ok((resource, variable))
    })
}

/// Takes the helper attribute off `f` and reads it; `None` for a method without one.
pub(super) fn method_of(f: &mut ImplItemFn, errors: &mut Errors) -> Option<Method> {
    let (ours, kept): (Vec<Attribute>, Vec<Attribute>) = f
        .attrs
        .drain(..)
        .partition(|a| HELPERS.iter().any(|h| a.path().is_ident(h)));
    f.attrs = kept;
    let attr = ours.first()?;
    if let Some(second) = ours.get(1) {
        errors.at(
            second,
            "a method declares one thing: a resource, a completion or a list",
        );
    }
    let role = if attr.path().is_ident("resource") {
        let args = ResourceArgs::parse(attr, errors)?;
        let variables = if args.uri.value().contains('{') {
            match template_variables(&args.uri) {
                Ok(v) => Some(v),
                Err(e) => {
                    errors.push(e);
                    return None;
                }
            }
        } else {
            None
        };
        Role::Resource {
            doc: doc_of(&f.attrs),
            args: Box::new(args),
            variables,
        }
    } else if attr.path().is_ident("complete") {
        match parse_complete(attr) {
            Ok((resource, variable)) => Role::Complete { resource, variable },
            Err(e) => {
                errors.push(e);
                return None;
            }
        }
    } else {
        match attr.parse_args::<Ident>() {
            Ok(resource) => Role::List { resource },
            Err(e) => {
                errors.push(e);
                return None;
            }
        }
    };
    let ret = match &f.sig.output {
        ReturnType::Default => {
            errors.at(
                &f.sig,
                "this method must return something: content for a resource, values for a completion, items for a list",
            );
            None
        }
        ReturnType::Type(_, t) => Some((**t).clone()),
    };
    Some(Method {
        ident: f.sig.ident.clone(),
        vis: f.vis.clone(),
        is_async: f.sig.asyncness.is_some(),
        params: params(&mut f.sig, errors),
        sig_span: f.sig.span(),
        ret,
        role,
    })
}

/// The call of method `m` with `args` (awaited if it is async), bound to `__out` with
/// the method's return type spanned as the user wrote it, and then converted by
/// `convert` (e.g. `IntoContent::into_content`): a return type that does not convert is
/// reported on the return type.
pub(super) fn call(m: &Method, args: &[TokenStream], convert: &TokenStream) -> TokenStream {
    let ident = &m.ident;
    let span = m.sig_span;
    let call = if m.is_async {
        quote_spanned!(span=> __this.#ident(#(#args),*).await)
    } else {
        quote_spanned!(span=> __this.#ident(#(#args),*))
    };
    match &m.ret {
        Some(ret) if !quote!(#ret).to_string().contains("impl ") => {
            let out = Ident::new("__out", ret.span());
            quote! {
                let #out: #ret = #call;
                #convert(#out)
            }
        }
        _ => quote!(#convert(#call)),
    }
}

/// The resource method `name`, which must be a template: the method, its template and
/// its variables.
pub(super) fn template_of<'a>(
    methods: &'a [Method],
    resource: &Ident,
    what: &str,
    errors: &mut Errors,
) -> Option<(&'a Method, &'a LitStr, &'a [String])> {
    let Some(target) = methods.iter().find(|m| m.ident == *resource) else {
        errors.at(
            resource,
            format_args!("no method `{resource}` of this block declares a resource"),
        );
        return None;
    };
    match &target.role {
        Role::Resource {
            args,
            variables: Some(v),
            ..
        } => Some((target, &args.uri, v)),
        Role::Resource { args, .. } => {
            errors.at(
                resource,
                format_args!(
                    "`{resource}` has a fixed URI ({}): only a template has {what}",
                    args.uri.value()
                ),
            );
            None
        }
        _ => {
            errors.at(
                resource,
                format_args!("`{resource}` does not declare a resource"),
            );
            None
        }
    }
}
