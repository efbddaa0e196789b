//! The expansion: the `impl` block with the helper attributes removed, plus an
//! `impl rsrc::IntoProvider` that declares every annotated method through
//! `rsrc::declare::Resources`.
//!
//! Invariant: the generated code calls only `rsrc`'s public API, and every check that can
//! be made at compile time is made here, with the error spanned on the user's tokens.
//!
//! This file reads the block (its annotated methods, no URI or template shape declared
//! twice, one list per resource and one completion per variable) and emits the result;
//! beside it, `methods.rs` reads each method's helper attribute and says how a method
//! is called, `resource.rs`, `complete.rs` and `list.rs` generate the declaration of
//! each role, and `item.rs` each template's item type.

mod complete;
mod item;
mod list;
mod methods;
mod resource;

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::{Ident, ImplItem, ItemImpl};

use crate::model::{Errors, shape};
use complete::declare_complete;
use item::declare_item;
use list::declare_list;
use methods::{Method, Role, method_of};
use resource::declare_resource;

/// `crate = "path"` (default `::rsrc`).
fn crate_path(args: TokenStream) -> syn::Result<syn::Path> {
    if args.is_empty() {
        return Ok(syn::parse_quote!(::rsrc));
    }
    let nv: syn::MetaNameValue = syn::parse2(args)?;
    if !nv.path.is_ident("crate") {
        return Err(syn::Error::new(
            nv.path.span(),
            "the only argument is `crate = \"path\"`",
        ));
    }
    match &nv.value {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => s.parse(),
        v => Err(syn::Error::new(
            v.span(),
            "`crate` takes a path in a string",
        )),
    }
}

pub(crate) fn resources(args: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let krate = crate_path(args)?;
    let mut block: ItemImpl = syn::parse2(item)?;
    if let Some((_, path, _)) = &block.trait_ {
        return Err(syn::Error::new(
            path.span(),
            "#[resources] goes on an inherent `impl Type` block, not a trait implementation",
        ));
    }
    let mut errors = Errors::default();
    let methods: Vec<Method> = block
        .items
        .iter_mut()
        .filter_map(|item| match item {
            ImplItem::Fn(f) => method_of(f, &mut errors),
            _ => None,
        })
        .collect();

    // No two resources with the same URI, or templates with the same shape.
    let mut seen: Vec<(String, &Ident)> = Vec::new();
    for m in &methods {
        if let Role::Resource { args, .. } = &m.role {
            let key = shape(&args.uri.value());
            match seen.iter().find(|(k, _)| *k == key) {
                Some((_, first)) => errors.at(
                    &args.uri,
                    format_args!(
                        "`{}` is declared twice: `fn {first}` already serves {}",
                        args.uri.value(),
                        if key.contains('{') {
                            "the same URIs"
                        } else {
                            "this URI"
                        }
                    ),
                ),
                None => seen.push((key, &m.ident)),
            }
        }
    }
    // One list per resource, one completion per variable.
    let mut lists: Vec<String> = Vec::new();
    let mut completions: Vec<(String, String)> = Vec::new();
    for m in &methods {
        match &m.role {
            Role::List { resource } => {
                if lists.contains(&resource.to_string()) {
                    errors.at(
                        resource,
                        format_args!("`{resource}` already has a list function"),
                    );
                }
                lists.push(resource.to_string());
            }
            Role::Complete { resource, variable } => {
                let key = (
                    resource.to_string(),
                    heck::ToSnakeCase::to_snake_case(variable.value().as_str()),
                );
                if completions.contains(&key) {
                    errors.at(variable, "this variable already has a completion function");
                }
                completions.push(key);
            }
            Role::Resource { .. } => {}
        }
    }

    let mut calls = Vec::new();
    for m in &methods {
        match &m.role {
            Role::Resource { .. } => {
                calls.push(declare_resource(&krate, m, &mut errors));
            }
            Role::Complete { .. } => {
                calls.push(declare_complete(&krate, m, &methods, &mut errors));
            }
            Role::List { .. } => {
                calls.push(declare_list(&krate, m, &methods, &mut errors));
            }
        }
    }
    let self_ty = &block.self_ty;
    let items: Vec<TokenStream> = methods
        .iter()
        .map(|m| declare_item(&krate, self_ty, m))
        .collect();
    let (impl_generics, _, where_clause) = block.generics.split_for_impl();
    if let Err(e) = errors.finish() {
        // The block and a provider impl are still emitted, so that the errors above are
        // the only ones reported (the body never runs: the crate does not compile).
        let e = e.into_compile_error();
        return Ok(quote! {
            #block
            #e
            impl #impl_generics #krate::IntoProvider for #self_ty #where_clause {
                type Provider = #krate::ResourceSet;
                fn into_provider(self) -> ::core::result::Result<#krate::ResourceSet, #krate::declare::DeclareError> {
                    ::core::unreachable!()
                }
            }
        });
    }
    Ok(quote! {
        #block

        #(#items)*

        impl #impl_generics #krate::IntoProvider for #self_ty #where_clause {
            type Provider = #krate::ResourceSet;

            fn into_provider(self) -> ::core::result::Result<#krate::ResourceSet, #krate::declare::DeclareError> {
                #krate::declare::Resources::new(self)
                    #(#calls)*
                    .build()
            }
        }
    })
}
