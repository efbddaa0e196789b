//! The declaration as the macro understands it: each attribute's arguments parsed and
//! checked, each parameter bound to a template variable (or to the request context).
//!
//! Invariant: a model that was built without error describes a declaration `rsrc` accepts
//! at run time: templates parse, every variable has exactly one parameter and every
//! parameter a variable, metadata values are valid.

use heck::ToSnakeCase;
use proc_macro2::Span;
use quote::ToTokens;
use rsrc_uri_template::UriTemplate;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprArray, ExprLit, FnArg, Ident, Lit, LitStr, Meta, Pat, Token, Type};

/// Accumulates errors so that one compile reports all of them.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    pub(crate) fn at<S: Spanned + ?Sized>(&mut self, span: &S, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span.span(), message));
    }

    pub(crate) fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// An icon of `icon = "…"` or `icon(src = …, mime_type = …, sizes = […], theme = …)`.
#[derive(Default)]
pub(crate) struct Icon {
    pub(crate) src: String,
    pub(crate) mime_type: Option<String>,
    pub(crate) sizes: Vec<String>,
    pub(crate) theme: Option<String>,
}

/// The arguments of one `#[resource(…)]`.
pub(crate) struct ResourceArgs {
    pub(crate) uri: LitStr,
    pub(crate) name: Option<String>,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) mime_type: Option<String>,
    pub(crate) size: Option<u64>,
    pub(crate) icons: Vec<Icon>,
    pub(crate) audience: Vec<String>,
    pub(crate) priority: Option<f64>,
    pub(crate) last_modified: Option<String>,
    pub(crate) collection: bool,
    pub(crate) cache_ms: Option<u64>,
    pub(crate) cache_public: bool,
    /// `allow_nul`: template values holding NUL reach the method.
    pub(crate) allow_nul: bool,
    /// `item = "Name"`: the name of the generated item type (default: the method's name in
    /// upper camel case, then `Item`).
    pub(crate) item: Option<Ident>,
}

const RESOURCE_KEYS: &str = "uri, name, title, description, mime_type, size, icon, audience, \
     priority, last_modified, collection, resource_type, cache, cache_scope, allow_nul, item";

fn string(e: &Expr, errors: &mut Errors, key: &str) -> Option<String> {
    match e {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s.value()),
        _ => {
            errors.at(e, format_args!("`{key}` takes a string literal"));
            None
        }
    }
}

fn strings(e: &Expr, errors: &mut Errors, key: &str) -> Vec<String> {
    match e {
        Expr::Array(ExprArray { elems, .. }) => elems
            .iter()
            .filter_map(|e| string(e, errors, key))
            .collect(),
        e => string(e, errors, key).into_iter().collect(),
    }
}

fn key_of(meta: &Meta) -> String {
    meta.path()
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_else(|| meta.path().to_token_stream().to_string())
}

fn parse_icon(meta: &Meta, errors: &mut Errors) -> Option<Icon> {
    match meta {
        Meta::NameValue(nv) => string(&nv.value, errors, "icon").map(|src| Icon {
            src,
            ..Icon::default()
        }),
        Meta::List(list) => {
            let inner = list
                .parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
                .map_err(|e| errors.push(e))
                .ok()?;
            let mut icon = Icon::default();
            for m in &inner {
                let Meta::NameValue(nv) = m else {
                    errors.at(m, "expected `key = value` (src, mime_type, sizes, theme)");
                    continue;
                };
                match key_of(m).as_str() {
                    "src" => icon.src = string(&nv.value, errors, "src").unwrap_or_default(),
                    "mime_type" | "mimeType" => {
                        icon.mime_type = string(&nv.value, errors, "mime_type");
                    }
                    "sizes" => icon.sizes = strings(&nv.value, errors, "sizes"),
                    "theme" => icon.theme = string(&nv.value, errors, "theme"),
                    k => errors.at(
                        m.path(),
                        format_args!(
                            "unknown icon argument `{k}` (known: src, mime_type, sizes, theme)"
                        ),
                    ),
                }
            }
            if icon.src.is_empty() {
                errors.at(list, "an icon needs `src`");
            }
            Some(icon)
        }
        Meta::Path(p) => {
            errors.at(
                p,
                "`icon` takes a URL: `icon = \"https://…\"` or `icon(src = …)`",
            );
            None
        }
    }
}

/// Parses a `humantime` duration such as `"300s"` or `"1h30m"` into milliseconds.
pub(crate) fn duration_ms(text: &str) -> Result<u64, String> {
    let d =
        humantime::parse_duration(text).map_err(|e| format!("invalid duration {text:?}: {e}"))?;
    let ms = u64::try_from(d.as_millis()).map_err(|_| format!("{text:?} is too long"))?;
    if ms == 0 {
        return Err(format!(
            "a cache time to live must be at least 1ms, not {text:?}"
        ));
    }
    Ok(ms)
}

impl ResourceArgs {
    /// Parses `#[resource(…)]`'s arguments; `None` if `uri` is missing.
    pub(crate) fn parse(attr: &syn::Attribute, errors: &mut Errors) -> Option<ResourceArgs> {
        let metas = match attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated) {
            Ok(m) => m,
            Err(e) => {
                errors.push(e);
                return None;
            }
        };
        let mut uri = None;
        let mut args = ResourceArgs {
            uri: LitStr::new("", Span::call_site()),
            name: None,
            title: None,
            description: None,
            mime_type: None,
            size: None,
            icons: Vec::new(),
            audience: Vec::new(),
            priority: None,
            last_modified: None,
            collection: false,
            cache_ms: None,
            cache_public: false,
            allow_nul: false,
            item: None,
        };
        let mut seen: Vec<String> = Vec::new();
        let mut scope_span = None;
        for meta in &metas {
            let key = key_of(meta);
            let canonical = match key.as_str() {
                "uri_template" => "uri",
                "mimeType" => "mime_type",
                "lastModified" => "last_modified",
                "resource_type" => "collection",
                k => k,
            }
            .to_owned();
            if canonical != "icon" {
                if seen.contains(&canonical) {
                    errors.at(meta.path(), format_args!("`{key}` is given twice"));
                    continue;
                }
                seen.push(canonical.clone());
            }
            if canonical == "icon" {
                args.icons.extend(parse_icon(meta, errors));
                continue;
            }
            if canonical == "collection" && key == "collection" {
                match meta {
                    Meta::Path(_) => args.collection = true,
                    _ => errors.at(meta, "`collection` is a flag: write `collection` alone"),
                }
                continue;
            }
            if canonical == "allow_nul" {
                match meta {
                    Meta::Path(_) => args.allow_nul = true,
                    _ => errors.at(meta, "`allow_nul` is a flag: write `allow_nul` alone"),
                }
                continue;
            }
            let Meta::NameValue(nv) = meta else {
                errors.at(meta, format_args!("expected `{key} = value`"));
                continue;
            };
            let v = &nv.value;
            match canonical.as_str() {
                "uri" => match v {
                    Expr::Lit(ExprLit {
                        lit: Lit::Str(s), ..
                    }) => uri = Some(s.clone()),
                    _ => errors.at(v, "`uri` takes a string literal"),
                },
                "name" => args.name = string(v, errors, "name"),
                "title" => args.title = string(v, errors, "title"),
                "description" => args.description = string(v, errors, "description"),
                "mime_type" => args.mime_type = string(v, errors, "mime_type"),
                "last_modified" => args.last_modified = string(v, errors, "last_modified"),
                "item" => {
                    if let Some(name) = string(v, errors, "item") {
                        match syn::parse_str::<Ident>(&name) {
                            Ok(mut ident) => {
                                ident.set_span(v.span());
                                args.item = Some(ident);
                            }
                            Err(_) => {
                                errors.at(v, "`item` takes a type name, such as \"PageItem\"");
                            }
                        }
                    }
                }
                "collection" => match string(v, errors, "resource_type").as_deref() {
                    Some("collection") => args.collection = true,
                    Some("document") | None => {}
                    Some(other) => errors.at(
                        v,
                        format_args!(
                            "`resource_type` is \"document\" or \"collection\", not {other:?}"
                        ),
                    ),
                },
                "size" => match v {
                    Expr::Lit(ExprLit {
                        lit: Lit::Int(i), ..
                    }) => match i.base10_parse() {
                        Ok(n) => args.size = Some(n),
                        Err(e) => errors.push(e),
                    },
                    _ => errors.at(v, "`size` takes an integer (bytes)"),
                },
                "priority" => {
                    let p = match v {
                        Expr::Lit(ExprLit {
                            lit: Lit::Float(f), ..
                        }) => f.base10_parse::<f64>().ok(),
                        Expr::Lit(ExprLit {
                            lit: Lit::Int(i), ..
                        }) => i.base10_parse::<u8>().ok().map(f64::from),
                        _ => None,
                    };
                    match p {
                        Some(p) if (0.0..=1.0).contains(&p) => args.priority = Some(p),
                        _ => errors.at(v, "`priority` is a number from 0 to 1"),
                    }
                }
                "audience" => {
                    for role in strings(v, errors, "audience") {
                        if role == "user" || role == "assistant" {
                            args.audience.push(role);
                        } else {
                            errors.at(
                                v,
                                format_args!(
                                    "the audience is \"user\" or \"assistant\", not {role:?}"
                                ),
                            );
                        }
                    }
                }
                "cache" => {
                    if let Some(text) = string(v, errors, "cache") {
                        match duration_ms(&text) {
                            Ok(ms) => args.cache_ms = Some(ms),
                            Err(e) => errors.at(v, e),
                        }
                    }
                }
                "cache_scope" => {
                    scope_span = Some(v.span());
                    match string(v, errors, "cache_scope").as_deref() {
                        Some("public") => args.cache_public = true,
                        Some("private") | None => {}
                        Some(other) => errors.at(
                            v,
                            format_args!(
                                "`cache_scope` is \"private\" or \"public\", not {other:?}"
                            ),
                        ),
                    }
                }
                _ => errors.at(
                    meta.path(),
                    format_args!(
                        "unknown argument `{key}` of #[resource] (known: {RESOURCE_KEYS})"
                    ),
                ),
            }
        }
        if let (Some(span), None) = (scope_span, args.cache_ms) {
            errors.at(&span, "`cache_scope` needs `cache = \"…\"` too");
        }
        match uri {
            Some(uri) => {
                args.uri = uri;
                Some(args)
            }
            None => {
                errors.at(attr, "#[resource] needs `uri = \"…\"`");
                None
            }
        }
    }
}

/// What one parameter of a method receives.
pub(crate) enum Binding {
    /// The request context (`&RequestContext`).
    Context,
    /// A template variable, by its name in the template.
    Variable { name: String, ty: Box<ParamType> },
}

/// How a variable's text becomes the parameter's value, decided by the parameter's type.
pub(crate) enum ParamType {
    /// `&str`: the decoded text, borrowed.
    Str,
    /// `Option<T>`.
    Optional(Type),
    /// `Vec<T>`: segments.
    Segments(Type),
    /// `RelativePath`: segments, checked and joined.
    Path(Type),
    /// Any other `T: FromStr`.
    Parsed(Type),
}

/// Types that would carry a URI's text into the filesystem unchecked: `..`, a leading
/// `/` and NUL included.
const PATH_SHAPED: [&str; 6] = [
    "PathBuf",
    "Path",
    "OsString",
    "OsStr",
    "Utf8PathBuf",
    "Utf8Path",
];

/// The path-shaped type `ty` is or holds (behind `&`, `Option`, `Vec`, `Box`, `Cow`).
fn path_shaped(ty: &Type) -> Option<&'static str> {
    match ty {
        Type::Reference(r) => path_shaped(&r.elem),
        Type::Paren(p) => path_shaped(&p.elem),
        Type::Path(p) => {
            let last = p.path.segments.last()?;
            if let Some(name) = PATH_SHAPED.iter().find(|n| last.ident == **n) {
                return Some(name);
            }
            let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                return None;
            };
            args.args.iter().find_map(|a| match a {
                syn::GenericArgument::Type(t) => path_shaped(t),
                _ => None,
            })
        }
        _ => None,
    }
}

/// One parameter of a method (after `&self`).
pub(crate) struct Param {
    pub(crate) ident: Ident,
    pub(crate) ty: Type,
    /// `#[var("…")]`, if given.
    pub(crate) rename: Option<LitStr>,
    pub(crate) span: Span,
}

/// The one type argument of `Wrapper<T>`, when `ty` is that wrapper (by its last path
/// segment, as written).
fn wrapped(ty: &Type, wrapper: &str) -> Option<Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != wrapper {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first() {
        Some(syn::GenericArgument::Type(t)) if args.args.len() == 1 => Some(t.clone()),
        _ => None,
    }
}

/// Whether `ty` is `&X` with `X`'s last path segment `name`.
pub(crate) fn is_ref_to(ty: &Type, name: &str) -> bool {
    match ty {
        Type::Reference(r) => match &*r.elem {
            Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == name),
            _ => false,
        },
        _ => false,
    }
}

pub(crate) fn param_type(ty: &Type) -> ParamType {
    if is_ref_to(ty, "str") {
        ParamType::Str
    } else if let Some(t) = wrapped(ty, "Option") {
        ParamType::Optional(t)
    } else if let Some(t) = wrapped(ty, "Vec") {
        ParamType::Segments(t)
    } else if matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "RelativePath"))
    {
        ParamType::Path(ty.clone())
    } else {
        ParamType::Parsed(ty.clone())
    }
}

/// The parameters of a method after its receiver; strips `#[var]` from them. A receiver
/// other than `&self` is an error.
pub(crate) fn params(sig: &mut syn::Signature, errors: &mut Errors) -> Vec<Param> {
    let mut out = Vec::new();
    let mut has_self = false;
    for arg in &mut sig.inputs {
        match arg {
            FnArg::Receiver(r) => {
                has_self = true;
                if r.reference.is_none() || r.mutability.is_some() {
                    errors.at(
                        &*r,
                        "resource methods take `&self` (state is shared by every request)",
                    );
                }
            }
            FnArg::Typed(pt) => {
                let mut rename = None;
                let mut kept = Vec::new();
                for a in pt.attrs.drain(..) {
                    if a.path().is_ident("var") {
                        match a.parse_args::<LitStr>() {
                            Ok(l) => rename = Some(l),
                            Err(e) => errors.push(e),
                        }
                    } else {
                        kept.push(a);
                    }
                }
                pt.attrs = kept;
                if let Some(name) = path_shaped(&pt.ty) {
                    errors.at(
                        &pt.ty,
                        format_args!(
                            "a template value would reach this `{name}` unchecked (`..`, a leading `/`, NUL): take `rsrc::declare::RelativePath` (segments only, each checked) and join it with `.join_to(base)`"
                        ),
                    );
                }
                let ident = match &*pt.pat {
                    Pat::Ident(p) => p.ident.clone(),
                    other => {
                        errors.at(
                            other,
                            "use a plain name for this parameter: it is bound by name",
                        );
                        continue;
                    }
                };
                out.push(Param {
                    span: pt.span(),
                    ident,
                    ty: (*pt.ty).clone(),
                    rename,
                });
            }
        }
    }
    if !has_self {
        errors.at(
            &sig.ident,
            "resource methods take `&self` (state is shared by every request)",
        );
    }
    out
}

/// Whether parameter `param` is the one for template variable `var`.
pub(crate) fn binds(var: &str, param: &Param) -> bool {
    match &param.rename {
        Some(r) => r.value() == var,
        None => {
            let p = param.ident.to_string();
            let p = p.strip_prefix("r#").unwrap_or(&p);
            p == var || p == var.to_snake_case()
        }
    }
}

/// A parsed template: its variables, each once, in order.
pub(crate) fn template_variables(uri: &LitStr) -> Result<Vec<String>, syn::Error> {
    let text = uri.value();
    let t = UriTemplate::parse(&text)
        .map_err(|e| syn::Error::new(uri.span(), format!("invalid URI template {text:?}: {e}")))?;
    Ok(t.variables().map(str::to_owned).collect())
}

/// The template with every variable name replaced by `_`: two templates with the same
/// shape match exactly the same URIs.
pub(crate) fn shape(template: &str) -> String {
    let mut out = String::with_capacity(template.len());
    let mut in_expr = false;
    let mut in_name = false;
    for c in template.chars() {
        match (in_expr, c) {
            (false, '{') => {
                in_expr = true;
                in_name = true;
                out.push(c);
            }
            (true, '}') => {
                in_expr = false;
                out.push(c);
            }
            (true, '+' | '#' | '.' | '/' | ';' | '?' | '&') if in_name && out.ends_with('{') => {
                out.push(c);
            }
            (true, ',') => {
                in_name = true;
                out.push(c);
            }
            (true, ':' | '*') => {
                in_name = false;
                out.push(c);
            }
            (true, _) if in_name => {
                if !out.ends_with('_') {
                    out.push('_');
                }
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(name: &str, rename: Option<&str>) -> Param {
        Param {
            ident: Ident::new(name, Span::call_site()),
            ty: syn::parse_quote!(String),
            rename: rename.map(|r| LitStr::new(r, Span::call_site())),
            span: Span::call_site(),
        }
    }

    #[test]
    fn camel_case_variables_bind_snake_case_parameters() {
        assert!(binds("pageId", &param("page_id", None)));
        assert!(binds("id", &param("id", None)));
        assert!(!binds("pageId", &param("page", None)));
        assert!(binds("pageId", &param("id", Some("pageId"))));
        assert!(!binds("id", &param("id", Some("pageId"))));
    }

    #[test]
    fn templates_differing_only_in_names_have_one_shape() {
        assert_eq!(
            shape("x://{a}/{+path}{?q,limit}"),
            shape("x://{b}/{+p}{?r,s}")
        );
        assert_ne!(shape("x://{a}"), shape("x://{+a}"));
        assert_ne!(shape("x://{a:3}"), shape("x://{a}"));
        assert_eq!(shape("x://{pageId}"), "x://{_}");
    }

    #[test]
    fn durations_are_parsed_to_milliseconds() {
        assert_eq!(duration_ms("300s"), Ok(300_000));
        assert_eq!(duration_ms("1h 30m"), Ok(5_400_000));
        assert!(duration_ms("0s").is_err());
        assert!(duration_ms("soon").is_err());
    }

    #[test]
    fn parameter_types_choose_the_extraction() {
        assert!(matches!(
            param_type(&syn::parse_quote!(&str)),
            ParamType::Str
        ));
        assert!(matches!(
            param_type(&syn::parse_quote!(Option<u32>)),
            ParamType::Optional(_)
        ));
        assert!(matches!(
            param_type(&syn::parse_quote!(Vec<String>)),
            ParamType::Segments(_)
        ));
        assert!(matches!(
            param_type(&syn::parse_quote!(u64)),
            ParamType::Parsed(_)
        ));
        assert!(is_ref_to(
            &syn::parse_quote!(&rsrc::RequestContext),
            "RequestContext"
        ));
    }

    #[test]
    fn templates_are_checked_and_their_variables_listed() {
        let ok = LitStr::new("notion://pages/{pageId}{?q}", Span::call_site());
        assert_eq!(template_variables(&ok).unwrap(), ["pageId", "q"]);
        let bad = LitStr::new("x://{unclosed", Span::call_site());
        assert!(
            template_variables(&bad)
                .unwrap_err()
                .to_string()
                .contains("at byte")
        );
    }
}
