//! Building the model from the syn input: the trait, its generics, each
//! method and each parameter, with the rules that concern one of them.

use syn::{FnArg, ItemTrait, Pat, ReturnType, TraitItem, TraitItemFn, Type};

use super::signature::{check_async_output, check_generics, check_receiver};
use super::types::{
    complete_sink, find_borrowed_or_generic, is_result_segment, is_runtime_context, last_segment_is, sink_item,
    SinkKind,
};
use super::{Generics, Method, Output, Param, Service};
use crate::attr::{self, ServiceAttrs, Structure};
use crate::ctxt::Ctxt;

/// Reads the trait into the model, recording every problem in `cx`; the
/// model is built even then, so that the trait can still be emitted.
pub fn parse_service(cx: &Ctxt, attrs: ServiceAttrs, mut item: ItemTrait) -> Service {
    let generics = parse_generics(cx, &item.generics);
    let mut methods = Vec::new();
    for trait_item in &mut item.items {
        match trait_item {
            TraitItem::Fn(method) => methods.push(parse_method(cx, &attrs, method)),
            other => cx.error_spanned_by(
                &*other,
                "an #[rpc] trait may only contain methods; move associated types and constants to another trait",
            ),
        }
    }
    let docs = attr::doc_lines(&item.attrs);
    Service { item, attrs, generics, methods, docs }
}

/// The trait's type parameters; rejects `trait T<'a>` and
/// `trait T<const N: usize>`.
fn parse_generics(cx: &Ctxt, generics: &syn::Generics) -> Generics {
    let mut params = Vec::new();
    for param in &generics.params {
        match param {
            syn::GenericParam::Type(param) => params.push(param.ident.clone()),
            syn::GenericParam::Lifetime(param) => cx.error_spanned_by(
                param,
                format!(
                    "#[rpc] traits cannot have lifetime parameters (`{}`): params and results are owned values decoded from each message, and a served service lives as long as its server; remove the lifetime and use owned types (`String` for `&'a str`)",
                    param.lifetime
                ),
            ),
            syn::GenericParam::Const(param) => cx.error_spanned_by(
                param,
                format!(
                    "#[rpc] traits cannot have const parameters (`const {}: {}`): the generated client, catalog and dispatch are generic over types only; make it a constant of the implementation, or a type parameter",
                    param.ident,
                    crate::render::type_name(&param.ty)
                ),
            ),
        }
    }
    Generics { params, written: generics.clone() }
}

fn parse_method(cx: &Ctxt, service: &ServiceAttrs, method: &mut TraitItemFn) -> Method {
    let attrs = attr::take_method_attrs(cx, &mut method.attrs);
    let sig = &mut method.sig;
    check_receiver(cx, sig);
    check_generics(cx, &sig.generics);
    check_async_output(cx, sig);
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(variadic, "#[rpc] methods cannot be variadic");
    }
    let mut params = Vec::new();
    let has_body = method.default.is_some();
    for input in sig.inputs.iter_mut() {
        if let FnArg::Typed(typed) = input {
            let param_attrs = attr::take_param_attrs(cx, &mut typed.attrs);
            // Doc comments on params are for the catalog; Rust does not
            // accept them on the emitted trait's params.
            let docs = attr::doc_lines(&typed.attrs);
            typed.attrs.retain(|attr| !attr.path().is_ident("doc"));
            match parse_param(cx, service, typed, param_attrs) {
                Some(mut param) => {
                    param.docs = docs;
                    if matches!(sink_item(&param.ty), Some((_, None))) {
                        // Reported already: emit `SubscriptionSink<()>`, so that the
                        // compiler does not report it again.
                        complete_sink(&mut typed.ty);
                    }
                    params.push(param);
                }
                // A pattern is an error of its own in a method without a
                // body; emit `_` so that only our error is reported.
                None if !has_body => *typed.pat = syn::parse_quote!(_),
                None => {}
            }
        }
    }
    let ident = sig.ident.clone();
    let plain_name = unraw(&ident);
    let (base, name_span) = match &attrs.name {
        Some(name) => (name.value(), name.span()),
        None => (service.rename_all.map_or(plain_name.clone(), |rule| rule.apply(&plain_name)), ident.span()),
    };
    let namespaced = |base: String| match &service.namespace {
        Some(ns) => format!("{}{}{base}", ns.value(), service.separator),
        None => base,
    };
    let wire_name = namespaced(base);
    let aliases = attrs.aliases.iter().map(|alias| (namespaced(alias.value()), alias.span())).collect();
    // A subscription method without `unsubscribe` (nor a malformed one,
    // reported already) is ended by `unsubscribe_<method>`, named as the
    // trait names its methods (`rename_all` applied: `unsubscribeTicks`
    // in camelCase), or `unsubscribe_<name>` after a `name` written; the
    // namespace applied as to a name written.
    let subscription = params.iter().any(|param: &Param| param.sink.is_some());
    let (unsubscribe, unsubscribe_default) = match &attrs.unsubscribe {
        Some(name) => (Some((namespaced(name.value()), name.span())), false),
        None if subscription && !attrs.unsubscribe_malformed => {
            let default = match &attrs.name {
                Some(name) => format!("unsubscribe_{}", name.value()),
                None => {
                    let plain = format!("unsubscribe_{plain_name}");
                    service.rename_all.map_or(plain.clone(), |rule| rule.apply(&plain))
                }
            };
            (Some((namespaced(default), ident.span())), true)
        }
        None => (None, false),
    };
    let item_notification = match &service.subscription_notification {
        Some(name) => name.value(),
        None => namespaced("subscription".to_owned()),
    };
    if let (Some(span), Some((_, structure_span))) = (attrs.whole_params, attrs.structure) {
        let mut err =
            syn::Error::new(structure_span, "`param_structure` has no effect with `whole_params`; remove one of them");
        err.combine(syn::Error::new(span, "`whole_params` given here"));
        cx.syn_error(err);
    }
    // A notification is never a tool, resource, prompt or completion (it
    // has no result).
    if let (Some(_), Some(span)) = (attrs.notification, attrs.mcp.span) {
        cx.syn_error(syn::Error::new(
            span,
            "`mcp(...)` has no effect on a notification: notifications are not offered over MCP (a tool call, a resource read, a prompt and a completion each need a result); remove it",
        ));
    }
    Method {
        ident,
        wire_name,
        name_span,
        notification: attrs.notification,
        structure: attrs.structure.map_or(Structure::Either, |(s, _)| s),
        whole_params: attrs.whole_params.is_some(),
        allow_extra: attrs.allow_extra,
        is_async: sig.asyncness.is_some(),
        params,
        output: parse_output(&sig.output),
        docs: attr::doc_lines(&method.attrs),
        deprecated: method.attrs.iter().any(|a| a.path().is_ident("deprecated")),
        errors: attrs.errors,
        aliases,
        requires: attrs.requires,
        mcp: attrs.mcp,
        unsubscribe,
        unsubscribe_default,
        item_notification,
        blocking: attrs.blocking,
        exclusive: attrs.exclusive,
        sig: sig.clone(),
    }
}

fn parse_param(cx: &Ctxt, service: &ServiceAttrs, typed: &syn::PatType, attrs: attr::ParamAttrs) -> Option<Param> {
    let ident = match &*typed.pat {
        Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => pat.ident.clone(),
        other => {
            cx.error_spanned_by(
                other,
                "#[rpc] method parameters need a plain name, which is the param's name on the wire: write `name: Type` and destructure inside the method",
            );
            return None;
        }
    };
    let ty = (*typed.ty).clone();
    let (reference, impl_trait) = find_borrowed_or_generic(&ty, false);
    if let Some(reference) =
        reference.as_ref().filter(|reference| is_runtime_context(&reference.elem, &service.crate_path))
    {
        cx.error_spanned_by(
            reference,
            "take the `Context` by value, `cx: Context`: the runtime injects a fresh handle (a cheap clone) for each request",
        );
    } else if let Some(reference) =
        reference.as_ref().filter(|reference| last_segment_is(&reference.elem, "SubscriptionSink"))
    {
        cx.error_spanned_by(
            reference,
            "take the `SubscriptionSink` by value, `sink: SubscriptionSink<Item>`: the subscription's method owns it while it runs",
        );
    } else if let Some(reference) =
        reference.as_ref().filter(|reference| last_segment_is(&reference.elem, "PendingSubscription"))
    {
        cx.error_spanned_by(
            reference,
            "take the `PendingSubscription` by value, `pending: PendingSubscription<Item>`: `accept` consumes it to answer the subscribe call",
        );
    } else if let Some(reference) = reference {
        cx.error_spanned_by(
            reference,
            "#[rpc] parameter types must be owned (they are decoded from the request and may outlive it); use `String` for `&str`, `Vec<T>` for `&[T]`",
        );
    }
    if let Some(impl_trait) = impl_trait {
        cx.error_spanned_by(
            impl_trait,
            "#[rpc] parameter types must be concrete: `impl Trait` makes the method generic, and params are decoded into one known type; use a concrete type (or `serde_json::Value` for any JSON)",
        );
    }
    let plain = unraw(&ident);
    let (wire_name, name_span) = match &attrs.name {
        Some(name) => (name.value(), name.span()),
        None => (service.rename_all.map_or(plain.clone(), |rule| rule.apply(&plain)), ident.span()),
    };
    let (sink, pending) = match sink_item(&ty) {
        Some((kind, Some(item))) => (Some(item), kind == SinkKind::Pending),
        Some((SinkKind::Open, None)) => {
            cx.error_spanned_by(
                &ty,
                "a `SubscriptionSink` parameter names the type of the items it sends: write `sink: SubscriptionSink<Item>` (the item type must be `Serialize`)",
            );
            (None, false)
        }
        Some((SinkKind::Pending, None)) => {
            cx.error_spanned_by(
                &ty,
                "a `PendingSubscription` parameter names the type of the items its subscription sends: write `pending: PendingSubscription<Item>` (the item type must be `Serialize`)",
            );
            (None, false)
        }
        None => (None, false),
    };
    Some(Param {
        name_span,
        optional: last_segment_is(&ty, "Option"),
        context: is_runtime_context(&ty, &service.crate_path),
        sink,
        pending,
        ident,
        ty,
        wire_name,
        docs: Vec::new(),
    })
}

fn parse_output(output: &ReturnType) -> Output {
    match output {
        ReturnType::Default => Output::Unit,
        ReturnType::Type(_, ty) => match &**ty {
            Type::Tuple(tuple) if tuple.elems.is_empty() => Output::Unit,
            Type::Path(path) if path.path.segments.last().is_some_and(is_result_segment) => {
                Output::Result((**ty).clone())
            }
            _ => Output::Plain((**ty).clone()),
        },
    }
}

/// `r#type` -> `type`.
fn unraw(ident: &syn::Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}
