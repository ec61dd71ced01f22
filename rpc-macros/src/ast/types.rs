//! What a written type is, as far as a macro can tell without resolving
//! names: the runtime's `Context`, a subscription sink and its item type,
//! a `Result`, and the borrows and `impl Trait` a param or result may not
//! hold.

use syn::Type;

/// `Result<T, E>`, `RpcResult<T>`, `io::Result<T>`: a name ending in
/// `Result` with generic arguments. A plain `SearchResult` struct is a
/// value like any other.
pub(super) fn is_result_segment(segment: &syn::PathSegment) -> bool {
    segment.ident.to_string().ends_with("Result") && matches!(segment.arguments, syn::PathArguments::AngleBracketed(_))
}

/// Which sink a subscription method takes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum SinkKind {
    /// `SubscriptionSink<T>`: answered with the id once the method's setup ran up to
    /// its first `.await`.
    Open,
    /// `PendingSubscription<T>`: answered when the method accepts.
    Pending,
}

/// For `SubscriptionSink<T>` or `PendingSubscription<T>` (any path ending so): which, with
/// `Some(T)`, or `None` when it does not have exactly one type argument;
/// `None` for other types.
pub(super) fn sink_item(ty: &Type) -> Option<(SinkKind, Option<Type>)> {
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
pub(super) fn complete_sink(ty: &mut Type) {
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
pub(super) fn is_runtime_context(ty: &Type, crate_path: &syn::Path) -> bool {
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

pub(super) fn last_segment_is(ty: &Type, name: &str) -> bool {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last().is_some_and(|s| s.ident == name),
        Type::Group(group) => last_segment_is(&group.elem, name),
        Type::Paren(paren) => last_segment_is(&paren.elem, name),
        _ => false,
    }
}

/// The first `&T` (other than `&'static T` when `allow_static`) and the
/// first `impl Trait` inside a type.
pub(super) fn find_borrowed_or_generic(
    ty: &Type,
    allow_static: bool,
) -> (Option<syn::TypeReference>, Option<syn::TypeImplTrait>) {
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
