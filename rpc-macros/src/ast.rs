//! The model of an `#[rpc]` trait: what each method is called on the wire,
//! how its params decode and what it returns. Built from the syn input;
//! keeps the syn nodes for spans. Only rules that concern one item are
//! checked here; rules across items live in `check.rs`.

use proc_macro2::Span;
use syn::{FnArg, ItemTrait, Pat, ReturnType, TraitItem, TraitItemFn, Type};

use crate::attr::{self, DeclaredError, McpAttrs, ServiceAttrs, Structure};
use crate::ctxt::Ctxt;

/// The whole trait.
pub struct Service {
    /// The trait as it will be emitted: `#[rpc]` attributes removed.
    pub item: ItemTrait,
    pub attrs: ServiceAttrs,
    /// The trait's type parameters: every renderer takes the generics of
    /// what it emits from here.
    pub generics: Generics,
    pub methods: Vec<Method>,
    pub docs: Vec<String>,
}

/// One trait method.
pub struct Method {
    pub ident: syn::Ident,
    /// Name on the wire, after namespace and renames.
    pub wire_name: String,
    /// Where to point errors about the wire name.
    pub name_span: Span,
    pub notification: Option<Span>,
    pub structure: Structure,
    pub whole_params: bool,
    pub allow_extra: bool,
    pub is_async: bool,
    pub params: Vec<Param>,
    pub output: Output,
    pub docs: Vec<String>,
    pub deprecated: bool,
    /// `#[rpc(error(...))]`, for the catalog.
    pub errors: Vec<DeclaredError>,
    /// `#[rpc(alias = "...")]`: older wire names (namespace applied), each
    /// with where to point errors about it.
    pub aliases: Vec<(String, Span)>,
    /// `#[rpc(requires = "...")]` (or `requires(any(..))`, `requires(all(..))`):
    /// what a caller must hold.
    pub requires: Option<crate::attr::Requires>,
    /// `#[rpc(mcp(...))]`: the method's MCP tool.
    pub mcp: McpAttrs,
    /// `#[rpc(unsubscribe = "...")]`: the wire name (namespace applied) of
    /// the method that ends this method's subscriptions, with where to
    /// point errors about it.
    pub unsubscribe: Option<(String, Span)>,
    /// `unsubscribe` was given, but not as a string (reported already).
    pub unsubscribe_malformed: bool,
    /// The method of the notifications that carry subscription items
    /// (the trait's `subscription_notification`, or `subscription` after
    /// the namespace).
    pub item_notification: String,
    /// `#[rpc(blocking)]`: a plain `fn` that runs on the blocking thread
    /// pool instead of on the connection's reader; where it was written.
    pub blocking: Option<Span>,
    /// `#[rpc(exclusive)]`: the call starts once every earlier call on its
    /// connection has finished, and later calls wait for it; where it was
    /// written.
    pub exclusive: Option<Span>,
    /// The signature as written (for spans).
    pub sig: syn::Signature,
}

/// One method parameter.
pub struct Param {
    pub ident: syn::Ident,
    pub ty: Type,
    /// Name on the wire, after renames.
    pub wire_name: String,
    /// Where to point errors about the wire name.
    pub name_span: Span,
    /// `Option<T>`: may be omitted.
    pub optional: bool,
    /// The runtime's `Context` (see [`is_runtime_context`]): injected by
    /// the runtime, not decoded.
    pub context: bool,
    /// `SubscriptionSink<T>` or `PendingSubscription<T>`: the item type `T`; the method is a
    /// subscription, and the sink is injected by the runtime, not decoded.
    pub sink: Option<Type>,
    /// The sink is a `PendingSubscription<T>`: the method answers the subscribe
    /// call itself (accept or reject), after any setup.
    pub pending: bool,
    /// Doc comments on the parameter (removed from the emitted trait).
    pub docs: Vec<String>,
}

/// What a method returns.
pub enum Output {
    /// Nothing (`()`), answered with `null`.
    Unit,
    /// A value, always a success.
    Plain(Type),
    /// `Result<T, E>` (or a generic alias ending in `Result`).
    Result(Type),
}

/// The trait's generics, read once. Only type parameters are accepted
/// (lifetime and const parameters are errors); each may have inline
/// bounds and a default, and the trait a `where` clause.
pub struct Generics {
    /// The type parameters' names, in order.
    pub params: Vec<syn::Ident>,
    /// The generics as written: the type parameters with their inline
    /// bounds and defaults, and the `where` clause.
    pub written: syn::Generics,
}

impl Generics {
    /// Whether the trait has type parameters.
    pub fn is_generic(&self) -> bool {
        !self.params.is_empty()
    }

    /// Whether `ty` names one of the type parameters (`H`, `Vec<H>`,
    /// `H::Output`, `<H as Trait>::Output`): the generated code then needs
    /// a bound on it, since it is checked once for every instantiation.
    pub fn mentions(&self, ty: &Type) -> bool {
        struct Finder<'a> {
            params: &'a [syn::Ident],
            found: bool,
        }
        impl<'ast> syn::visit::Visit<'ast> for Finder<'_> {
            fn visit_path(&mut self, path: &'ast syn::Path) {
                if path.leading_colon.is_none() && path.segments.first().is_some_and(|s| self.params.contains(&s.ident))
                {
                    self.found = true;
                }
                syn::visit::visit_path(self, path);
            }
        }
        if self.params.is_empty() {
            return false;
        }
        let mut finder = Finder { params: &self.params, found: false };
        syn::visit::Visit::visit_type(&mut finder, ty);
        finder.found
    }
}

impl Method {
    /// The parameters decoded from the request (everything but `Context`
    /// and `SubscriptionSink`).
    pub fn wire_params(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| !p.context && p.sink.is_none())
    }

    /// The item type of a subscription method (one with a `SubscriptionSink<T>`
    /// parameter).
    pub fn item(&self) -> Option<&Type> {
        self.params.iter().find_map(|param| param.sink.as_ref())
    }
}

/// One entry of the trait's spec table: the `static __RPC_SPECS` of
/// `MethodSpec`s that the dispatch, the catalog and the client share (see
/// [`Service::spec_table`] for its order).
pub struct Spec<'a> {
    /// Its position in the table: `__RPC_SPECS[index]`.
    pub index: usize,
    pub kind: SpecKind<'a>,
}

/// What a [`Spec`] is the spec of.
pub enum SpecKind<'a> {
    /// A trait method, under its wire name.
    Method(&'a Method),
    /// An alias (`#[rpc(alias = "...")]`): the spec of method `of` (its
    /// index in [`Service::methods`] and in the table) under the older
    /// wire name `name`.
    Alias { of: usize, name: &'a str },
    /// An unsubscribe method: its wire name and the subscription methods
    /// whose subscriptions it ends.
    Unsubscribe { name: &'a str, subscriptions: Vec<&'a Method> },
}

impl Service {
    /// The spec table, in the one order every renderer and the runtime
    /// (`__private::register_methods`) rely on:
    ///
    /// 1. every method, in the trait's order: method `i` of
    ///    [`Service::methods`] is entry `i` (and arm `i` of the generated
    ///    `__rpc_call`);
    /// 2. every alias, method by method, each method's in the order
    ///    written;
    /// 3. every unsubscribe method, once, in order of first mention (see
    ///    [`Service::unsubscribe_methods`]).
    pub fn spec_table(&self) -> Vec<Spec<'_>> {
        let methods = self.methods.iter().map(SpecKind::Method);
        let aliases = self.methods.iter().enumerate().flat_map(|(of, method)| {
            method.aliases.iter().map(move |(name, _)| SpecKind::Alias { of, name: name.as_str() })
        });
        let unsubscribes = self
            .unsubscribe_methods()
            .into_iter()
            .map(|(name, subscriptions)| SpecKind::Unsubscribe { name, subscriptions });
        methods.chain(aliases).chain(unsubscribes).enumerate().map(|(index, kind)| Spec { index, kind }).collect()
    }

    /// Each unsubscribe method, once, in order of first mention, with the
    /// subscription methods it ends.
    pub fn unsubscribe_methods(&self) -> Vec<(&str, Vec<&Method>)> {
        let mut out: Vec<(&str, Vec<&Method>)> = Vec::new();
        for method in self.methods.iter().filter(|method| method.item().is_some()) {
            let Some((name, _)) = &method.unsubscribe else { continue };
            match out.iter_mut().find(|(known, _)| known == name) {
                Some((_, methods)) => methods.push(method),
                None => out.push((name, vec![method])),
            }
        }
        out
    }
}

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
    let unsubscribe = attrs.unsubscribe.as_ref().map(|name| (namespaced(name.value()), name.span()));
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
    // A notification is never a tool (it has no result).
    if let (Some(_), Some(span)) = (attrs.notification, attrs.mcp.span) {
        cx.syn_error(syn::Error::new(
            span,
            "`mcp(...)` has no effect on a notification: notifications are not MCP tools (a tool call needs a result); remove it",
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
        unsubscribe_malformed: attrs.unsubscribe_malformed,
        item_notification,
        blocking: attrs.blocking,
        exclusive: attrs.exclusive,
        sig: sig.clone(),
    }
}

/// Rejects `fn f()`, `fn f(self)`, `fn f(&mut self)`, `fn f(self: Box<Self>)`.
fn check_receiver(cx: &Ctxt, sig: &syn::Signature) {
    match sig.receiver() {
        None => cx.error_spanned_by(
            &sig.ident,
            format!("#[rpc] method `{}` needs a `&self` receiver: write `fn {}(&self, ...)`", sig.ident, sig.ident),
        ),
        Some(receiver) => match &receiver.kind {
            syn::ReceiverKind::Reference(_, _, None) => {}
            syn::ReceiverKind::Reference(_, _, Some(_)) => cx.error_spanned_by(
                receiver,
                "#[rpc] methods take `&self`, not `&mut self`: requests run concurrently; write `&self` and keep mutable state behind a Mutex or an atomic",
            ),
            syn::ReceiverKind::Value => cx.error_spanned_by(
                receiver,
                "#[rpc] methods take `&self`, not `self`: one service value serves all requests concurrently, so a method cannot consume it; write `&self`",
            ),
            syn::ReceiverKind::Typed(_, ty) => cx.error_spanned_by(
                receiver,
                format!(
                    "#[rpc] methods take a plain `&self` receiver, not `self: {}`: one shared service value serves all requests; write `&self`",
                    crate::render::type_name(ty)
                ),
            ),
            // A receiver form newer than this macro.
            _ => cx.error_spanned_by(receiver, "#[rpc] methods take a plain `&self` receiver; write `&self`"),
        },
    }
}

/// Rejects `fn f<T>(&self, x: T)`, `fn f<'a>(&'a self)`, `fn f(&self) where ...`.
fn check_generics(cx: &Ctxt, generics: &syn::Generics) {
    if generics.type_params().next().is_some() || generics.const_params().next().is_some() {
        cx.error_spanned_by(
            generics,
            "#[rpc] methods cannot be generic: params are decoded into concrete types; use a concrete type (or `serde_json::Value` for any JSON)",
        );
    } else if !generics.params.is_empty() {
        cx.error_spanned_by(
            generics,
            "#[rpc] methods cannot have lifetime parameters: params are owned values decoded from each request; remove the lifetimes and use owned types",
        );
    }
    if let Some(where_clause) = &generics.where_clause {
        cx.error_spanned_by(
            where_clause,
            "#[rpc] methods cannot have a `where` clause: the generated dispatch calls every method the same way; remove it",
        );
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

/// `Result<T, E>`, `RpcResult<T>`, `io::Result<T>`: a name ending in
/// `Result` with generic arguments. A plain `SearchResult` struct is a
/// value like any other.
fn is_result_segment(segment: &syn::PathSegment) -> bool {
    segment.ident.to_string().ends_with("Result") && matches!(segment.arguments, syn::PathArguments::AngleBracketed(_))
}

/// Which sink a subscription method takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SinkKind {
    /// `SubscriptionSink<T>`: answered with the id once the method's setup ran up to
    /// its first `.await`.
    Open,
    /// `PendingSubscription<T>`: answered when the method accepts.
    Pending,
}

/// For `SubscriptionSink<T>` or `PendingSubscription<T>` (any path ending so): which, with
/// `Some(T)`, or `None` when it does not have exactly one type argument;
/// `None` for other types.
fn sink_item(ty: &Type) -> Option<(SinkKind, Option<Type>)> {
    let segment = match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last()?,
        Type::Group(group) => return sink_item(&group.elem),
        Type::Paren(paren) => return sink_item(&paren.elem),
        _ => return None,
    };
    let kind = if segment.ident == "SubscriptionSink" {
        SinkKind::Open
    } else if segment.ident == "PendingSubscription" {
        SinkKind::Pending
    } else {
        return None;
    };
    let syn::PathArguments::AngleBracketed(args) = &segment.arguments else { return Some((kind, None)) };
    let mut types = args.args.iter().map(|arg| match arg {
        syn::GenericArgument::Type(ty) => Some(ty.clone()),
        _ => None,
    });
    match (types.next(), types.next()) {
        (Some(Some(item)), None) => Some((kind, Some(item))),
        _ => Some((kind, None)),
    }
}

/// `SubscriptionSink` or `SubscriptionSink<A, B>` becomes `SubscriptionSink<()>` (and so for `PendingSubscription`).
fn complete_sink(ty: &mut Type) {
    if let Type::Path(path) = ty {
        if let Some(last) = path.path.segments.last_mut() {
            last.arguments = syn::PathArguments::AngleBracketed(syn::parse_quote!(<()>));
        }
    }
}

/// Whether a parameter of type `ty` is the runtime's `Context`, which the
/// runtime injects instead of decoding: a bare `Context`, or the runtime's
/// own path to it (`rpc_runtime::Context`, `::rpc_runtime::Context`, or
/// the trait's `crate = "..."` path followed by `Context`). Any other path
/// is an ordinary param, however it ends: `model::Context`,
/// `crate::Context`, `self::Context`.
///
/// A macro cannot resolve names, so a bare `Context` might still be a user
/// type imported under that name: the generated code checks that it is
/// the runtime's (`__private::InjectedContext`), and the build fails on
/// the parameter with the fix (write the type's path) if it is not.
fn is_runtime_context(ty: &Type, crate_path: &syn::Path) -> bool {
    let path = match ty {
        Type::Path(path) if path.qself.is_none() => &path.path,
        Type::Group(group) => return is_runtime_context(&group.elem, crate_path),
        Type::Paren(paren) => return is_runtime_context(&paren.elem, crate_path),
        _ => return false,
    };
    if path.segments.iter().any(|segment| !segment.arguments.is_none()) {
        return false;
    }
    let names: Vec<&syn::Ident> = path.segments.iter().map(|segment| &segment.ident).collect();
    if names.last().is_none_or(|last| *last != "Context") {
        return false;
    }
    let prefix = &names[..names.len() - 1];
    if prefix.is_empty() {
        return path.leading_colon.is_none();
    }
    let runtime: Vec<&syn::Ident> = crate_path.segments.iter().map(|segment| &segment.ident).collect();
    let is = |names: &[&syn::Ident], expected: &[&str]| {
        names.len() == expected.len() && names.iter().zip(expected).all(|(name, expected)| *name == expected)
    };
    is(prefix, &["rpc_runtime"]) || (!runtime.is_empty() && prefix == runtime.as_slice())
}

fn last_segment_is(ty: &Type, name: &str) -> bool {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last().is_some_and(|s| s.ident == name),
        Type::Group(group) => last_segment_is(&group.elem, name),
        Type::Paren(paren) => last_segment_is(&paren.elem, name),
        _ => false,
    }
}

/// The first `&T` (other than `&'static T` when `allow_static`) and the
/// first `impl Trait` inside a type.
fn find_borrowed_or_generic(ty: &Type, allow_static: bool) -> (Option<syn::TypeReference>, Option<syn::TypeImplTrait>) {
    struct Finder {
        allow_static: bool,
        reference: Option<syn::TypeReference>,
        impl_trait: Option<syn::TypeImplTrait>,
    }
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_type_reference(&mut self, reference: &'ast syn::TypeReference) {
            let is_static = reference.lifetime.as_ref().is_some_and(|lifetime| lifetime.ident == "static");
            if !(self.allow_static && is_static) {
                self.reference.get_or_insert_with(|| reference.clone());
            }
            syn::visit::visit_type_reference(self, reference);
        }
        fn visit_type_impl_trait(&mut self, impl_trait: &'ast syn::TypeImplTrait) {
            self.impl_trait.get_or_insert_with(|| impl_trait.clone());
        }
    }
    let mut finder = Finder { allow_static, reference: None, impl_trait: None };
    syn::visit::Visit::visit_type(&mut finder, ty);
    (finder.reference, finder.impl_trait)
}

/// Rejects `async fn f(&self) -> &str` and `async fn f(&self) -> impl Trait`:
/// the answer is encoded after the future completes, when the borrow of the
/// service it was called on has ended. Rejects `fn f(&self) -> impl
/// Serialize` too: the catalog and the client need to name the type.
fn check_async_output(cx: &Ctxt, sig: &syn::Signature) {
    let ReturnType::Type(_, ty) = &sig.output else {
        return;
    };
    if sig.asyncness.is_none() {
        if let (_, Some(impl_trait)) = find_borrowed_or_generic(ty, true) {
            cx.error_spanned_by(
                impl_trait,
                "#[rpc] methods must return a named type, not `impl Trait`: the client decodes the result and the catalog describes it, so both need its type; return the concrete type (or `serde_json::Value` for any JSON)",
            );
        }
        return;
    }
    let (reference, impl_trait) = find_borrowed_or_generic(ty, true);
    if let Some(reference) = reference {
        cx.error_spanned_by(
            reference,
            "async #[rpc] methods must return owned values: the result is encoded after the future completes, when the borrow of `self` has ended; return `String` for `&str`, `Vec<T>` for `&[T]`",
        );
    }
    if let Some(impl_trait) = impl_trait {
        cx.error_spanned_by(
            impl_trait,
            "async #[rpc] methods must return a concrete type: an `impl Trait` result may borrow `self`, which has ended when the result is encoded; name the type",
        );
    }
}

/// `r#type` -> `type`.
fn unraw(ident: &syn::Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}
