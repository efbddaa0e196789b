//! The declaration of a list method: a `.list(template, …)` call enumerating a
//! template's resources.
//!
//! Invariants: a list method takes nothing but the request context; its result is
//! converted as a listing of its template's item type (`IntoListing<PageItem>`), so an
//! item the template cannot name does not compile.

use proc_macro2::TokenStream;
use quote::quote;

use super::item::item_name;
use super::methods::{Method, Role, call, template_of};
use crate::model::{Errors, is_ref_to};

pub(super) fn declare_list(
    krate: &syn::Path,
    m: &Method,
    methods: &[Method],
    errors: &mut Errors,
) -> TokenStream {
    let Role::List { resource } = &m.role else {
        return TokenStream::new();
    };
    let Some((target, uri, _)) = template_of(methods, resource, "resources to list", errors) else {
        return TokenStream::new();
    };
    let Some(item) = item_name(target) else {
        return TokenStream::new();
    };
    let mut call_args = Vec::new();
    for p in &m.params {
        if is_ref_to(&p.ty, "RequestContext") {
            call_args.push(quote!(&__ctx));
        } else {
            errors.at(
                &p.span,
                "a list function takes no arguments but `&RequestContext`",
            );
        }
    }
    let body = call(
        m,
        &call_args,
        &quote!(#krate::declare::IntoListing::<#item>::into_listing),
    );
    let template = uri.value();
    quote! {
        .list(#template, |__this: ::std::sync::Arc<Self>, __ctx: #krate::RequestContext| async move {
            #body
        })
    }
}
