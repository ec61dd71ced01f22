//! The model of an `#[rpc]` trait: what each method is called on the wire,
//! how its params decode and what it returns. Built from the syn input;
//! keeps the syn nodes for spans. Only rules that concern one item are
//! checked here; rules across items live in `check.rs`.
//!
//! This file holds the model and the spec table the renderers share.
//! Building it is in `parse`, the rules on a method's signature in
//! `signature`, and what a written type is (a `Context`, a subscription
//! sink, a `Result`, a borrow) in `types`.

use proc_macro2::Span;
use syn::{ItemTrait, Type};

use crate::attr::{DeclaredError, McpAttrs, ServiceAttrs, Structure};

mod parse;
mod signature;
mod types;

pub use parse::parse_service;

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
    /// point errors about it. Without it, a subscription method's is
    /// `unsubscribe_<method>` (`rename_all` applied), or `unsubscribe_<name>`
    /// after a `name` written (namespace applied), pointed at by the
    /// method's name: see
    /// [`Method::unsubscribe_default`].
    pub unsubscribe: Option<(String, Span)>,
    /// [`Method::unsubscribe`] is the default name: `unsubscribe` was not
    /// written. (Written, but not as a string, it is reported already,
    /// and there is no default either: no second error about a name the
    /// user did not choose.)
    pub unsubscribe_default: bool,
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
    /// The runtime's `Context` (see [`types::is_runtime_context`]): injected by
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
