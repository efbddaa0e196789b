//! The expansion: the `impl` block with the helper attributes removed, plus an
//! `impl rsrc::IntoProvider` that declares every annotated method through
//! `rsrc::declare::Resources`.
//!
//! Invariant: the generated code calls only `rsrc`'s public API, and every check that can
//! be made at compile time is made here, with the error spanned on the user's tokens.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Attribute, Ident, ImplItem, ImplItemFn, ItemImpl, LitStr, ReturnType, Token, Type};

use crate::model::{
    Binding, Errors, Param, ParamType, ResourceArgs, binds, is_ref_to, param_type, params, shape,
    template_variables,
};

/// What a method declares.
enum Role {
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

struct Method {
    ident: Ident,
    is_async: bool,
    ret: Option<Type>,
    params: Vec<Param>,
    sig_span: Span,
    role: Role,
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
fn method_of(f: &mut ImplItemFn, errors: &mut Errors) -> Option<Method> {
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
fn call(m: &Method, args: &[TokenStream], convert: &TokenStream) -> TokenStream {
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
    if let Some(ms) = args.cache_ms {
        out.extend(quote!(.cache(::core::time::Duration::from_millis(#ms))));
        if args.cache_public {
            out.extend(quote!(.cache_scope(#krate::protocol::CacheScope::Public)));
        }
    }
    out
}

/// The `.resource(…)` or `.template(…)` call declaring `m`.
fn declare_resource(krate: &syn::Path, m: &Method, errors: &mut Errors) -> TokenStream {
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

/// The resource method `name`, which must be a template.
fn template_of<'a>(
    methods: &'a [Method],
    resource: &Ident,
    what: &str,
    errors: &mut Errors,
) -> Option<(&'a LitStr, &'a [String])> {
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
        } => Some((&args.uri, v)),
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

fn declare_complete(
    krate: &syn::Path,
    m: &Method,
    methods: &[Method],
    errors: &mut Errors,
) -> TokenStream {
    let Role::Complete { resource, variable } = &m.role else {
        return TokenStream::new();
    };
    let Some((uri, variables)) = template_of(methods, resource, "variables to complete", errors)
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

fn declare_list(
    krate: &syn::Path,
    m: &Method,
    methods: &[Method],
    errors: &mut Errors,
) -> TokenStream {
    let Role::List { resource } = &m.role else {
        return TokenStream::new();
    };
    let Some((uri, _)) = template_of(methods, resource, "resources to list", errors) else {
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
        &quote!(#krate::declare::IntoListing::into_listing),
    );
    let template = uri.value();
    quote! {
        .list(#template, |__this: ::std::sync::Arc<Self>, __ctx: #krate::RequestContext| async move {
            #body
        })
    }
}

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
