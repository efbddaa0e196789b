//! `#[resource_handler]`: rsrc's resource methods supplied to an `impl ServerHandler`,
//! in the manner of rmcp's `#[tool_handler]`. Re-exported by `rsrc-rmcp`, whose docs
//! describe it.
//!
//! Invariants: a method the impl already has is never replaced; the five methods both
//! sides answer (`get_info`, `complete`, `set_level`, `on_initialized`,
//! `on_custom_request`) keep the impl's own body, moved unchanged into an inherent impl
//! of the same type and called from the generated one. The generated code names only
//! `::rsrc_rmcp` and `::core` paths. The default field, `self.resources`, is read in one
//! place, so a type without it gets one error, at the attribute, naming the way out.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::{Expr, ImplItem, ImplItemFn, ItemImpl, Token, parse_macro_input, parse_quote};

/// See `rsrc_rmcp::resource_handler`.
#[proc_macro_attribute]
pub fn resource_handler(attr: TokenStream, item: TokenStream) -> TokenStream {
    let args = parse_macro_input!(attr as Args);
    let item = parse_macro_input!(item as ItemImpl);
    expand(&args, item)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// `resources = EXPR`, or `None` for the default, the field `self.resources`.
struct Args {
    resources: Option<Expr>,
}

/// The inherent method through which the generated methods reach the default field.
const ACCESSOR: &str = "__rsrc_rmcp_resources";

/// The default field, `self.resources`, read in one method of its own ([`ACCESSOR`]), so
/// that a type without that field fails in one place, at the attribute. rustc's message
/// for a missing field cannot be chosen, but it names the type the field was looked up
/// on: the method first looks the field up on a wrapper of `Self` whose name spells the
/// way out, ``no field `resources` on type
/// `resource_handler_resources_eq_self_your_field<'_, MyServer>` `` (read
/// `#[resource_handler(resources = self.your_field)]`). The wrapper dereferences to `Self`
/// and has no field visible here, so the field found through it is `Self`'s; that lookup
/// only checks (its closure is never called), the plain one after it reads.
fn default_accessor() -> ImplItemFn {
    let accessor = format_ident!("{}", ACCESSOR);
    parse_quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #[inline]
        fn #accessor(&self) -> &::rsrc_rmcp::Resources {
            mod hint {
                pub(super) struct resource_handler_resources_eq_self_your_field<'a, T: ?::core::marker::Sized>(
                    &'a T,
                );
                pub(super) fn wrap<T: ?::core::marker::Sized>(
                    this: &T,
                ) -> resource_handler_resources_eq_self_your_field<'_, T> {
                    resource_handler_resources_eq_self_your_field(this)
                }
                impl<T: ?::core::marker::Sized> ::core::ops::Deref
                    for resource_handler_resources_eq_self_your_field<'_, T>
                {
                    type Target = T;
                    fn deref(&self) -> &T {
                        self.0
                    }
                }
            }
            let _check = |this: &Self| {
                let _: &::rsrc_rmcp::Resources = &hint::wrap(this).resources;
            };
            &self.resources
        }
    }
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.is_empty() {
            return Ok(Args { resources: None });
        }
        let key: syn::Ident = input.parse()?;
        if key != "resources" {
            return Err(syn::Error::new(
                key.span(),
                "expected `resources = <expression>`, as in \
                 `#[resource_handler(resources = self.your_field)]`",
            ));
        }
        input.parse::<Token![=]>()?;
        let resources = input.parse()?;
        if !input.is_empty() {
            return Err(input.error("unexpected tokens after the expression"));
        }
        Ok(Args {
            resources: Some(resources),
        })
    }
}

fn take_method(item: &mut ItemImpl, name: &str) -> Option<ImplItemFn> {
    let at = item
        .items
        .iter()
        .position(|i| matches!(i, ImplItem::Fn(f) if f.sig.ident == name))?;
    match item.items.remove(at) {
        ImplItem::Fn(f) => Some(f),
        _ => None,
    }
}

fn has_method(item: &ItemImpl, name: &str) -> bool {
    item.items
        .iter()
        .any(|i| matches!(i, ImplItem::Fn(f) if f.sig.ident == name))
}

/// Whether a sibling attribute (`tool_handler`, `prompt_handler`) is on the impl.
fn has_sibling(item: &ItemImpl, name: &str) -> bool {
    item.attrs
        .iter()
        .any(|a| a.path().segments.last().is_some_and(|s| s.ident == name))
}

fn expand(args: &Args, mut item: ItemImpl) -> syn::Result<TokenStream2> {
    let accessor = format_ident!("{}", ACCESSOR);
    let r = match &args.resources {
        Some(expr) => quote!(#expr),
        None => quote!(self.#accessor()),
    };
    let m = quote!(::rsrc_rmcp::rmcp::model);
    let ctx = quote!(::rsrc_rmcp::rmcp::service::RequestContext<::rsrc_rmcp::rmcp::RoleServer>);
    let err = quote!(::rsrc_rmcp::rmcp::ErrorData);
    let handler = quote!(::rsrc_rmcp::rmcp::ServerHandler);

    // The impl's own methods that the generated ones wrap, moved to an inherent impl, with
    // the accessor of the default field.
    let mut moved = Vec::new();
    if args.resources.is_none() {
        moved.push(default_accessor());
    }
    let mut own = |item: &mut ItemImpl, name: &str| {
        take_method(item, name).map(|mut f| {
            let ident = format_ident!("__rsrc_rmcp_own_{}", name);
            f.sig.ident = ident.clone();
            f.vis = syn::Visibility::Inherited;
            f.attrs.push(parse_quote!(#[doc(hidden)]));
            moved.push(f);
            ident
        })
    };
    let own_get_info = own(&mut item, "get_info");
    let own_complete = own(&mut item, "complete");
    let own_set_level = own(&mut item, "set_level");
    let own_initialized = own(&mut item, "on_initialized");
    let own_custom = own(&mut item, "on_custom_request");

    let mut added: Vec<ImplItem> = Vec::new();

    let base_info = match &own_get_info {
        Some(f) => quote!(self.#f()),
        None => {
            let tools = has_sibling(&item, "tool_handler").then(|| quote!(.enable_tools()));
            let prompts = has_sibling(&item, "prompt_handler").then(|| quote!(.enable_prompts()));
            quote! {
                #m::ServerConfig::new(#m::ServerCapabilities::builder() #tools #prompts .build())
                    .with_server_info(#m::Implementation::from_build_env())
            }
        }
    };
    added.push(parse_quote! {
        fn get_info(&self) -> #m::ServerConfig {
            #r.merge_info(#base_info)
        }
    });

    let prompt_completion = match &own_complete {
        Some(f) => quote!(self.#f(request, context).await),
        None => quote!(::core::result::Result::Ok(#m::CompleteResult::default())),
    };
    added.push(parse_quote! {
        async fn complete(
            &self,
            request: #m::CompleteRequestParams,
            context: #ctx,
        ) -> ::core::result::Result<#m::CompleteResult, #err> {
            if ::rsrc_rmcp::Resources::completes(&request) {
                #r.complete(request, context).await
            } else {
                #prompt_completion
            }
        }
    });

    let own_level =
        own_set_level.map(|f| quote!(self.#f(request.clone(), context.clone()).await?;));
    added.push(parse_quote! {
        #[allow(deprecated)]
        async fn set_level(
            &self,
            request: #m::SetLevelRequestParams,
            context: #ctx,
        ) -> ::core::result::Result<(), #err> {
            #own_level
            #r.set_level(request, context).await
        }
    });

    let own_init = own_initialized.map(|f| quote!(self.#f(context).await;));
    added.push(parse_quote! {
        async fn on_initialized(
            &self,
            context: ::rsrc_rmcp::rmcp::service::NotificationContext<::rsrc_rmcp::rmcp::RoleServer>,
        ) {
            #r.on_initialized(&context);
            #own_init
        }
    });

    let not_served = match &own_custom {
        Some(f) => quote!(self.#f(request, context).await),
        None => quote! {
            ::core::result::Result::Err(#err::new(
                #m::ErrorCode::METHOD_NOT_FOUND,
                request.method,
                ::core::option::Option::None,
            ))
        },
    };
    added.push(parse_quote! {
        async fn on_custom_request(
            &self,
            request: #m::CustomRequest,
            context: #ctx,
        ) -> ::core::result::Result<#m::CustomResult, #err> {
            match #r.on_custom_request(request, context).await {
                ::rsrc_rmcp::CustomOutcome::Answered(answer) => answer,
                ::rsrc_rmcp::CustomOutcome::NotServed(request, context) => #not_served,
            }
        }
    });

    // The methods only the resources answer, where the impl has none of its own.
    let supplied: Vec<(&str, ImplItem)> = vec![
        (
            "list_resources",
            parse_quote! {
                async fn list_resources(
                    &self,
                    request: ::core::option::Option<#m::PaginatedRequestParams>,
                    context: #ctx,
                ) -> ::core::result::Result<#m::ListResourcesResult, #err> {
                    #r.list_resources(request, context).await
                }
            },
        ),
        (
            "list_resource_templates",
            parse_quote! {
                async fn list_resource_templates(
                    &self,
                    request: ::core::option::Option<#m::PaginatedRequestParams>,
                    context: #ctx,
                ) -> ::core::result::Result<#m::ListResourceTemplatesResult, #err> {
                    #r.list_resource_templates(request, context).await
                }
            },
        ),
        (
            "read_resource",
            parse_quote! {
                async fn read_resource(
                    &self,
                    request: #m::ReadResourceRequestParams,
                    context: #ctx,
                ) -> ::core::result::Result<#m::ReadResourceResponse, #err> {
                    #r.read_resource(request, context).await
                }
            },
        ),
        (
            "subscribe",
            parse_quote! {
                #[allow(deprecated)]
                async fn subscribe(
                    &self,
                    request: #m::SubscribeRequestParams,
                    context: #ctx,
                ) -> ::core::result::Result<(), #err> {
                    #r.subscribe(request, context).await
                }
            },
        ),
        (
            "unsubscribe",
            parse_quote! {
                #[allow(deprecated)]
                async fn unsubscribe(
                    &self,
                    request: #m::UnsubscribeRequestParams,
                    context: #ctx,
                ) -> ::core::result::Result<(), #err> {
                    #r.unsubscribe(request, context).await
                }
            },
        ),
        (
            "accepted_subscription_filter",
            parse_quote! {
                fn accepted_subscription_filter(
                    &self,
                    requested: &#m::SubscriptionFilter,
                ) -> ::core::option::Option<#m::SubscriptionFilter> {
                    #r.accepted_subscription_filter(requested)
                }
            },
        ),
        (
            "listen",
            parse_quote! {
                async fn listen(
                    &self,
                    context: ::rsrc_rmcp::rmcp::service::SubscriptionContext,
                ) -> ::core::result::Result<(), #err> {
                    #r.listen(context).await
                }
            },
        ),
        (
            "list_skills",
            parse_quote! {
                async fn list_skills(
                    &self,
                    request: ::core::option::Option<#m::PaginatedRequestParams>,
                    context: #ctx,
                ) -> ::core::result::Result<#m::ListSkillsResult, #err> {
                    #r.list_skills(request, context).await
                }
            },
        ),
        (
            "get_skill",
            parse_quote! {
                async fn get_skill(
                    &self,
                    request: #m::GetSkillRequestParams,
                    context: #ctx,
                ) -> ::core::result::Result<#m::GetSkillResult, #err> {
                    #r.get_skill(request, context).await
                }
            },
        ),
        (
            "read_resource_directory",
            parse_quote! {
                async fn read_resource_directory(
                    &self,
                    request: #m::ReadResourceDirectoryRequestParams,
                    context: #ctx,
                ) -> ::core::result::Result<#m::ReadResourceDirectoryResult, #err> {
                    #r.read_resource_directory(request, context).await
                }
            },
        ),
        (
            "supported_protocol_versions",
            parse_quote! {
                fn supported_protocol_versions(
                    &self,
                ) -> ::std::borrow::Cow<'static, [#m::ProtocolVersion]> {
                    ::rsrc_rmcp::Resources::supported_protocol_versions()
                }
            },
        ),
        (
            "discover",
            parse_quote! {
                async fn discover(
                    &self,
                    _context: #ctx,
                ) -> ::core::result::Result<#m::DiscoverResult, #err> {
                    ::core::result::Result::Ok(#r.discover(
                        <Self as #handler>::supported_protocol_versions(self).into_owned(),
                        <Self as #handler>::get_info(self),
                    ))
                }
            },
        ),
    ];
    for (name, method) in supplied {
        if !has_method(&item, name) {
            added.push(method);
        }
    }
    item.items.extend(added);

    let inherent = (!moved.is_empty()).then(|| {
        let (impl_generics, _, where_clause) = item.generics.split_for_impl();
        let self_ty = &item.self_ty;
        quote! {
            impl #impl_generics #self_ty #where_clause {
                #(#moved)*
            }
        }
    });
    Ok(quote! {
        #item
        #inherent
    })
}
