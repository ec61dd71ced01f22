//! The rules on a method's signature that need nothing but it: the
//! receiver, generics, and what an `async fn` may return.

use syn::ReturnType;

use super::types::find_borrowed_or_generic;
use crate::ctxt::Ctxt;

/// Rejects `fn f()`, `fn f(self)`, `fn f(&mut self)`, `fn f(self: Box<Self>)`.
pub(super) fn check_receiver(cx: &Ctxt, sig: &syn::Signature) {
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
pub(super) fn check_generics(cx: &Ctxt, generics: &syn::Generics) {
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

/// Rejects `async fn f(&self) -> &str` and `async fn f(&self) -> impl Trait`:
/// the answer is encoded after the future completes, when the borrow of the
/// service it was called on has ended. Rejects `fn f(&self) -> impl
/// Serialize` too: the catalog and the client need to name the type.
pub(super) fn check_async_output(cx: &Ctxt, sig: &syn::Signature) {
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
