//! The item type of a template resource method: a struct with one field per template
//! variable (`PageItem { page_id }` for `fn page(&self, page_id: String)` on
//! `notion://pages/{pageId}`), the only thing its list function can return, so that the
//! compiler checks every listed item against its template.
//!
//! Invariants: the fields are the method's parameters bound to variables, with their
//! names and types (`&str` becomes `String`); the item expands with exactly the
//! template's variable names; the struct is as visible as the method.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Ident, Type};

use super::methods::{Method, Role};
use crate::model::{ParamType, binds, param_type};

/// The name of the item type of template resource method `m`.
pub(super) fn item_name(m: &Method) -> Option<Ident> {
    let Role::Resource {
        args,
        variables: Some(_),
        ..
    } = &m.role
    else {
        return None;
    };
    Some(args.item.clone().unwrap_or_else(|| {
        let name = m.ident.to_string();
        let name = name.strip_prefix("r#").unwrap_or(&name);
        format_ident!(
            "{}Item",
            heck::ToUpperCamelCase::to_upper_camel_case(name),
            span = m.ident.span()
        )
    }))
}

/// One field: the variable, the parameter's name, the field's type and how its value
/// becomes the variable's (`Option<Value>`, `None` leaving it undefined).
struct Field {
    variable: String,
    ident: Ident,
    ty: TokenStream,
    value: TokenStream,
    /// Whether a lone value of the field's type may stand for the item (a one-variable
    /// template whose variable is neither optional nor a list).
    scalar: bool,
    /// Whether the field is a `String` (so that a `&str` may stand for the item too).
    string: bool,
}

fn field(krate: &syn::Path, m: &Method, variable: &str, explodes: bool) -> Option<Field> {
    let p = m.params.iter().find(|p| binds(variable, p))?;
    let f = &p.ident;
    let value = quote!(#krate::uri_template::Value);
    let to_string = quote!(::std::string::ToString::to_string);
    let pt = param_type(&p.ty);
    let string = match &pt {
        ParamType::Str => true,
        ParamType::Parsed(Type::Path(t)) => {
            t.path.segments.last().is_some_and(|s| s.ident == "String")
        }
        _ => false,
    };
    let (ty, conv, scalar): (TokenStream, TokenStream, bool) = match pt {
        ParamType::Str => (
            quote!(::std::string::String),
            quote!(::core::option::Option::Some(#value::String(self.#f))),
            true,
        ),
        ParamType::Parsed(t) => (
            quote!(#t),
            quote!(::core::option::Option::Some(#value::String(#to_string(&self.#f)))),
            true,
        ),
        ParamType::Path(t) if explodes => (
            quote!(#t),
            quote!(::core::option::Option::Some(#value::List(
                self.#f.segments().map(::std::string::String::from).collect()
            ))),
            true,
        ),
        ParamType::Path(t) => (
            quote!(#t),
            quote!(::core::option::Option::Some(#value::String(#to_string(&self.#f)))),
            true,
        ),
        ParamType::Optional(t) => (
            quote!(::core::option::Option<#t>),
            quote!(self.#f.map(|v: #t| #value::String(#to_string(&v)))),
            false,
        ),
        ParamType::Segments(t) if explodes => (
            quote!(::std::vec::Vec<#t>),
            quote!(::core::option::Option::Some(#value::List(
                self.#f.iter().map(#to_string).collect()
            ))),
            false,
        ),
        ParamType::Segments(t) => (
            quote!(::std::vec::Vec<#t>),
            quote!(::core::option::Option::Some(#value::String(
                self.#f.iter().map(#to_string).collect::<::std::vec::Vec<_>>().join("/")
            ))),
            false,
        ),
    };
    Some(Field {
        variable: variable.to_owned(),
        ident: f.clone(),
        ty,
        value: conv,
        scalar,
        string,
    })
}

/// The item type of template resource method `m` of `self_ty`, with its `TemplateItem`
/// and `IntoItem` implementations and metadata setters.
pub(super) fn declare_item(krate: &syn::Path, self_ty: &Type, m: &Method) -> TokenStream {
    let (
        Some(name),
        Role::Resource {
            args,
            variables: Some(variables),
            ..
        },
    ) = (item_name(m), &m.role)
    else {
        return TokenStream::new();
    };
    let template = args.uri.value();
    let Ok(parsed) = rsrc_uri_template::UriTemplate::parse(&template) else {
        return TokenStream::new();
    };
    let Some(fields) = variables
        .iter()
        .map(|v| field(krate, m, v, parsed.explodes(v)))
        .collect::<Option<Vec<Field>>>()
    else {
        return TokenStream::new();
    };
    let vis = &m.vis;
    let method = &m.ident;
    let owner = quote!(#self_ty).to_string().replace(' ', "");
    let doc = format!(
        "A resource of `{template}` (`{owner}::{method}`) as its list function gives it: one \
         field per template variable."
    );
    let field_defs = fields.iter().map(|f| {
        let (ident, ty) = (&f.ident, &f.ty);
        let doc = format!("The value of the variable `{}`.", f.variable);
        quote!(#[doc = #doc] #vis #ident: #ty)
    });
    let values = fields.iter().map(|f| {
        let (var, value) = (&f.variable, &f.value);
        quote!((#var, #value))
    });
    let item = quote!(#krate::declare::ListItem<#name>);
    let setters = [
        (
            "name",
            quote!(impl ::core::convert::Into<::std::string::String>),
            "Overrides the template's name for this resource.",
        ),
        (
            "title",
            quote!(impl ::core::convert::Into<::std::string::String>),
            "This resource with a display title.",
        ),
        (
            "description",
            quote!(impl ::core::convert::Into<::std::string::String>),
            "Overrides the template's description for this resource.",
        ),
        (
            "mime_type",
            quote!(impl ::core::convert::Into<::std::string::String>),
            "Overrides the template's MIME type for this resource.",
        ),
        ("size", quote!(u64), "This resource with its size in bytes."),
        (
            "last_modified",
            quote!(impl ::core::convert::Into<::std::string::String>),
            "This resource with `annotations.lastModified` (ISO 8601).",
        ),
    ]
    .into_iter()
    .map(|(setter, arg, doc)| {
        let setter = format_ident!("{setter}");
        quote! {
            #[doc = #doc]
            #vis fn #setter(self, value: #arg) -> #item {
                <#item as ::core::convert::From<Self>>::from(self).#setter(value)
            }
        }
    });
    let lone = match fields.as_slice() {
        [only] if only.scalar => {
            let (ident, ty) = (&only.ident, &only.ty);
            let from_str = only.string.then(|| {
                quote! {
                    impl #krate::declare::IntoItem<#name> for &str {
                        fn into_item(self) -> #krate::declare::ListItem {
                            #krate::declare::IntoItem::<#name>::into_item(#name { #ident: ::std::string::String::from(self) })
                        }
                    }
                }
            });
            quote! {
                impl #krate::declare::IntoItem<#name> for #ty {
                    fn into_item(self) -> #krate::declare::ListItem {
                        #krate::declare::IntoItem::<#name>::into_item(#name { #ident: self })
                    }
                }
                #from_str
            }
        }
        _ => TokenStream::new(),
    };
    quote! {
        #[doc = #doc]
        #[allow(dead_code)]
        #vis struct #name {
            #(#field_defs,)*
        }

        #[allow(dead_code)]
        impl #name {
            #(#setters)*
        }

        impl #krate::declare::TemplateItem for #name {
            const TEMPLATE: &'static str = #template;

            fn into_values(self) -> ::std::vec::Vec<(&'static str, #krate::uri_template::Value)> {
                let values: ::std::vec::Vec<(&'static str, ::core::option::Option<#krate::uri_template::Value>)> =
                    ::std::vec![#(#values),*];
                values.into_iter().filter_map(|(n, v)| v.map(|v| (n, v))).collect()
            }
        }

        impl #krate::declare::IntoItem<#name> for #name {
            fn into_item(self) -> #krate::declare::ListItem {
                <#item as ::core::convert::From<Self>>::from(self).erase()
            }
        }

        #lone
    }
}
