//! The declaration of a completion method: a `.complete(template, variable, …)` call.
//!
//! Invariants: the variable is named as in the template or as its parameter; the
//! parameter bound to it receives what the user typed so far, the others the values
//! already chosen for their variables (as `Option<T>`); the values of a method that does
//! not take what was typed are filtered to those starting with it.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};

use super::methods::{Method, Role, call, template_of};
use crate::model::{Errors, ParamType, binds, is_ref_to, param_type};

pub(super) fn declare_complete(
    krate: &syn::Path,
    m: &Method,
    methods: &[Method],
    errors: &mut Errors,
) -> TokenStream {
    let Role::Complete { resource, variable } = &m.role else {
        return TokenStream::new();
    };
    let Some((_, uri, variables)) = template_of(methods, resource, "variables to complete", errors)
    else {
        return TokenStream::new();
    };
    // The variable may be named as in the template or as its parameter.
    let wanted = variable.value();
    let Some(var) = variables
        .iter()
        .find(|v| **v == wanted || heck::ToSnakeCase::to_snake_case(v.as_str()) == wanted)
    else {
        errors.at(
            variable,
            format_args!(
                "`{}` has no variable `{wanted}` (its variables: {})",
                uri.value(),
                variables.join(", ")
            ),
        );
        return TokenStream::new();
    };
    let mut lets = Vec::new();
    let mut call_args = Vec::new();
    let mut takes_value = false;
    for p in &m.params {
        let ident = format_ident!("__{}", p.ident);
        let span = p.span;
        if binds(var, p) {
            takes_value = true;
            if is_ref_to(&p.ty, "str") {
                call_args.push(quote!(&__input.value));
            } else {
                lets.push(quote_spanned!(span=> let #ident: ::std::string::String = ::core::clone::Clone::clone(&__input.value);));
                call_args.push(quote!(#ident));
            }
            continue;
        }
        let Some(other) = variables.iter().find(|v| binds(v, p)) else {
            errors.at(
                &span,
                format_args!(
                    "parameter `{}` matches no variable of `{}` (its variables: {})",
                    p.ident,
                    uri.value(),
                    variables.join(", ")
                ),
            );
            continue;
        };
        match param_type(&p.ty) {
            ParamType::Optional(t) => {
                lets.push(quote_spanned!(span=> let #ident: ::core::option::Option<#t> = __input.arg::<#t>(#other);));
                call_args.push(quote!(#ident));
            }
            _ => errors.at(
                &span,
                format_args!(
                    "`{}` receives the value already chosen for `{other}`, if any: its type must be `Option<T>`",
                    p.ident
                ),
            ),
        }
    }
    let values = call(
        m,
        &call_args,
        &quote!(#krate::declare::IntoCompletion::into_completion),
    );
    let result = if takes_value {
        values
    } else {
        quote! {
            let __values = { #values }?;
            ::core::result::Result::Ok(#krate::declare::starting_with(__values, &__input.value))
        }
    };
    let template = uri.value();
    quote! {
        .complete(#template, #var, |__this: ::std::sync::Arc<Self>, __input: #krate::CompletionInput| async move {
            #(#lets)*
            #result
        })
    }
}
