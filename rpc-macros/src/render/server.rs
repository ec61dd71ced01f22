//! The provided `into_rpc` method: one registration per trait method.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::TraitItem;

use super::generics::{self, Part};
use crate::ast::{Method, Output, Service, SpecKind};
use crate::attr::{Requires, Structure};

/// `fn into_rpc(self) -> Router`, added to the trait.
pub fn into_rpc(service: &Service) -> Vec<TraitItem> {
    let krate = &service.attrs.crate_path;
    let private = quote!(#krate::__private);
    let trait_ident = &service.item.ident;
    let type_params = generics::params(service);
    // From the spec table: a handler arm per method (its index is its
    // spec's), the method of each alias spec, and each unsubscribe spec.
    let mut arms = Vec::new();
    let mut alias_methods = Vec::new();
    let mut unsubscribes = Vec::new();
    for spec in service.spec_table() {
        let index = spec.index;
        match spec.kind {
            SpecKind::Method(method) => arms.push(handler(service, index, method)),
            SpecKind::Alias { of, .. } => alias_methods.push(of),
            SpecKind::Unsubscribe { .. } => {
                unsubscribes.push(quote!(__rpc::register_unsubscribe(&mut __router, &__specs[#index]);))
            }
        }
    }
    let count = arms.len();
    let doc = format!(
        " Turns this `{trait_ident}` implementation into a [`Router`]({}::Router) that serves all of its methods.",
        quote!(#krate).to_string().replace(' ', "")
    );
    // The spec table sits in the catalog's or the client's `const _` block
    // (they read it too), else in this body: never beside the trait.
    let specs = match spec_owner(service) {
        Some(owner) => quote!(let __specs = <#owner as __rpc::SpecTable>::SPECS;),
        None => {
            let table = specs(service);
            quote!(#table let __specs: &'static [__rpc::MethodSpec] = &__RPC_SPECS;)
        }
    };
    let attach_catalog = if service.attrs.catalog {
        let catalog = super::catalog::catalog_ident(service);
        let turbofish = (!type_params.is_empty()).then(|| quote!(::));
        quote!(__router.add_catalog(#catalog #turbofish #type_params::catalog());)
    } else {
        TokenStream::new()
    };
    // A generic trait: what the dispatch needs of its types, and the
    // catalog's, since `into_rpc` attaches it.
    let mut bounds = generics::predicates(service, Part::Server, &private);
    let server_bounds = bounds.clone();
    if service.attrs.catalog {
        bounds.extend(generics::predicates(service, Part::Catalog, &private));
    }
    // The nested function cannot name the trait's parameters: it declares
    // them again, with the trait's own bounds, `Self` being `__S` (not
    // `S`, which may be a user's type or type parameter).
    let service_param = format_ident!("__S");
    let (nested_params, mut nested_bounds) = generics::nested_fn(service, &service_param);
    nested_bounds.extend(server_bounds);
    let nested_where = (!nested_bounds.is_empty()).then(|| quote!(where #(#nested_bounds),*));
    let call_params = &service.generics.params;
    // Verbatim: the tokens go to the output as they are; parsing them into
    // a syntax tree would only be undone by printing them again.
    vec![TraitItem::Verbatim(quote! {
        #[doc = #doc]
        #[allow(deprecated, clippy::all)]
        fn into_rpc(self) -> #krate::__private::Router
        where
            Self: ::core::marker::Sized,
            #(#bounds,)*
        {
            use #krate::__private as __rpc;
            #specs
            // Every method's handler is an arm of this one function, so
            // the compiler checks, lowers and builds one generic item for
            // the trait rather than one per method.
            fn __rpc_call<__S: #trait_ident #type_params #(, #nested_params)*>(
                __this: &__rpc::Arc<__S>,
                __index: usize,
                __params: &__rpc::Params<'_>,
                __cx: &__rpc::Context,
                __out: &mut __rpc::Vec<u8>,
            ) -> __rpc::Direct
            #nested_where
            {
                match __index {
                    #(#arms)*
                    _ => ::core::unreachable!(),
                }
            }
            let mut __router = __rpc::Router::new();
            __rpc::register_methods(&mut __router, __specs, self, __rpc_call::<Self #(, #call_params)*>, #count, &[#(#alias_methods),*]);
            #(#unsubscribes)*
            #attach_catalog
            __router
        }
    })]
}

/// The generated type whose `const _` block holds the spec table and
/// implements `SpecTable`: the catalog struct, else the client struct;
/// `None` when there is neither (the table is then in `into_rpc`).
///
/// The type as named where the trait's type parameters are not in scope
/// (`<(), ()>` for them: the table does not depend on them).
pub fn spec_owner(service: &Service) -> Option<TokenStream> {
    let filled = generics::filled(service);
    if service.attrs.catalog {
        let owner = super::catalog::catalog_ident(service);
        Some(quote!(#owner #filled))
    } else if !service.attrs.server_only {
        let owner = super::client::client_ident(service);
        Some(quote!(#owner #filled))
    } else {
        None
    }
}

/// One `static __RPC_SPECS` with every method's spec, shared by the
/// dispatch, the catalog and the client. It is emitted inside a block
/// (the catalog's or the client's `const _`, or `into_rpc`'s body), so the
/// name is never seen beside another trait's.
pub fn specs(service: &Service) -> TokenStream {
    let krate = &service.attrs.crate_path;
    // In the order of `Service::spec_table`.
    let table = service.spec_table();
    let count = table.len();
    let specs = table.iter().map(|spec| match &spec.kind {
        SpecKind::Method(method) => method_spec(method),
        // The method's spec under the older name.
        SpecKind::Alias { of, name } => method_spec_named(&service.methods[*of], name),
        SpecKind::Unsubscribe { name, .. } => quote!(__rpc::unsubscribe_spec(#name)),
    });
    quote! {
        #[doc(hidden)]
        #[allow(deprecated, non_upper_case_globals, clippy::all)]
        static __RPC_SPECS: [#krate::__private::MethodSpec; #count] = {
            use #krate::__private as __rpc;
            [#(#specs),*]
        };
    }
}

/// Method `index`'s handler: its arm in `__rpc_call`, a generic `fn` of the
/// service type `__S` (an item in `into_rpc`'s body cannot name its `Self`),
/// which decodes the params, calls the method and encodes its outcome.
fn handler(service: &Service, index: usize, method: &Method) -> TokenStream {
    let private = quote!(__rpc);
    let trait_ident = &service.item.ident;
    let ident = &method.ident;

    let mut decode = Vec::new();
    let mut args = Vec::new();
    let mut position = 0usize;

    for (i, param) in method.params.iter().enumerate() {
        let var = format_ident!("__arg{}", i);
        let ty = &param.ty;
        if param.context {
            // Checked to be the runtime's: a user type imported as
            // `Context` is reported on the parameter, with the fix.
            decode
                .push(quote_spanned!(ty.span()=> let #var: #ty = <#ty as #private::InjectedContext>::injected(__cx);));
        } else if param.sink.is_some() {
            // Made by the runtime once the params decoded (see below).
        } else {
            // Only params taken whole ask whether their type reads itself
            // from an object (see `__private::decode_param`).
            // Spanned so that a type that is not Deserialize is reported on
            // the user's parameter.
            let read = match method.whole_params {
                true => quote_spanned!(ty.span()=> __params.decode::<#ty>(#position)),
                false => quote_spanned!(ty.span()=> #private::decode_param::<#ty>(__params, #position)),
            };
            decode.push(quote_spanned!(ty.span()=> let #var: #ty = #read?;));
            position += 1;
        }
        args.push(var);
    }
    let type_params = generics::params(service);
    let call = quote!(<__S as #trait_ident #type_params>::#ident(&__this, #(#args),*));
    // Spanned so that a return type that is not Serialize (or an error type
    // that does not convert into an error object) is reported on it.
    let span = match &method.output {
        Output::Plain(ty) | Output::Result(ty) => ty.span(),
        Output::Unit => Span::call_site(),
    };
    let outcome = match (method.is_async, &method.output) {
        // On the blocking pool: the call and the encoding of its outcome
        // in a closure, boxed where it is made (so that `blocking` is not
        // generic).
        (false, Output::Result(_)) if method.blocking.is_some() => quote! {{
            let __this = ::core::clone::Clone::clone(__this);
            #private::blocking(#private::Boxed::new(move || #private::result_output(#call)))
        }},
        (false, _) if method.blocking.is_some() => quote! {{
            let __this = ::core::clone::Clone::clone(__this);
            #private::blocking(#private::Boxed::new(move || #private::encode_output(#call)))
        }},
        (false, Output::Result(_)) => quote!(#private::ready_result_into(__out, #call)),
        (false, _) => quote!(#private::ready_into(__out, #call)),
        // One future per method: the method's own, awaited and encoded
        // in the block that holds the service, boxed where it is made (so
        // that `pending_into` is not generic).
        (true, Output::Result(_)) => quote! {{
            let __this = ::core::clone::Clone::clone(__this);
            #private::pending_into(#private::Boxed::new(async move { #private::result_output(#call.await) }))
        }},
        (true, _) => quote! {{
            let __this = ::core::clone::Clone::clone(__this);
            #private::pending_into(#private::Boxed::new(async move { #private::encode_output(#call.await) }))
        }},
    };
    let outcome = match method.params.iter().position(|param| param.sink.is_some()) {
        Some(index) => subscription(method, index, &call, span),
        None => respan(outcome, span),
    };
    quote! {
        #index => {
            #(#decode)*
            #outcome
        }
    }
}

/// The outcome of a subscription method whose `SubscriptionSink` is parameter `index`:
/// the runtime opens the subscription, answers with its id and runs the
/// method with the sink once that answer is queued. With a `PendingSubscription`,
/// the method runs at once and the answer waits for its decision.
fn subscription(method: &Method, index: usize, call: &TokenStream, output_span: Span) -> TokenStream {
    let var = format_ident!("__arg{}", index);
    let param = &method.params[index];
    let ty = &param.ty;
    let notification = &method.item_notification;
    let unsubscribe = method.unsubscribe.as_ref().map_or("", |(name, _)| name.as_str());
    // Spanned so that an error type that does not convert into an error
    // object is reported on the return type...
    let end = respan(quote!(__rpc::subscription_end(#call.await)), output_span);
    // ...and an item type that is not Serialize on the item type, with a
    // message of its own (`SubscriptionItem`). The runtime function's own
    // `Serialize` bound is asked for over the same span, from the first
    // to the last token of the item type, so that rustc leaves it out as
    // implied by the first.
    let item = param.sink.as_ref().unwrap_or(ty);
    let (first, last) = ends(item);
    let check = over(quote_spanned!(first=> __rpc), quote!(subscription_item), Some(item), quote!(), last);
    let (open, args) = if param.pending {
        // The method answers the call itself, through its `PendingSubscription`.
        (quote!(pending_subscription), quote!(__params, __cx, #notification, #unsubscribe, __run))
    } else {
        (quote!(subscription), quote!(__params, __cx, __out, #notification, #unsubscribe, __run))
    };
    let open = over(quote_spanned!(first=> __rpc), open, None, args, last);
    quote! {{
        #check;
        let __this = ::core::clone::Clone::clone(__this);
        let __run = move |#var: #ty| async move { #end };
        #open
    }}
}

/// The spans of the first and the last token of `ty`: an expression
/// whose tokens run from one to the other is reported over the whole
/// type (a proc macro on stable Rust cannot join spans itself).
fn ends(ty: &syn::Type) -> (Span, Span) {
    let mut tokens = quote::ToTokens::to_token_stream(ty).into_iter();
    let first = tokens.next().map_or_else(Span::call_site, |token| token.span());
    let last = tokens.last().map_or(first, |token| token.span());
    (first, last)
}

/// `path::name(args)`, or `path::name::<ty>(args)`: `path` as given
/// (spanned by the caller), `ty` with its own spans (rustc reports a bound
/// of a type parameter given so on the type), the rest at `last`, so that
/// the call and the path to the function span from the path's first
/// token to `last`.
fn over(path: TokenStream, name: TokenStream, ty: Option<&syn::Type>, args: TokenStream, last: Span) -> TokenStream {
    let mut name = respan(quote!(::#name), last);
    if let Some(ty) = ty {
        name.extend(respan(quote!(::<), last));
        name.extend(quote!(#ty));
        name.extend(respan(quote!(>), last));
    }
    let mut group = Group::new(proc_macro2::Delimiter::Parenthesis, respan(args, last));
    group.set_span(last);
    quote!(#path #name #group)
}

/// `tokens` with every span set to `span`, so that errors about them are
/// reported there.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Group(group) => {
                let mut respanned = Group::new(group.delimiter(), respan(group.stream(), span));
                respanned.set_span(span);
                TokenTree::Group(respanned)
            }
            mut other => {
                other.set_span(span);
                other
            }
        })
        .collect()
}

/// `__rpc::spec(..)` of one method (`__rpc` is the `__private` module).
fn method_spec(method: &Method) -> TokenStream {
    method_spec_named(method, &method.wire_name)
}

/// The spec of `method` under the wire name `name`.
fn method_spec_named(method: &Method, name: &str) -> TokenStream {
    let private = quote!(__rpc);
    let params = method.wire_params().map(|param| {
        let name = &param.wire_name;
        let ty = super::type_name(&param.ty);
        let optional = param.optional;
        quote!(#private::param_spec(#name, #ty, #optional))
    });
    let structure = match method.structure {
        Structure::Either => quote!(Either),
        Structure::ByName => quote!(ByName),
        Structure::ByPosition => quote!(ByPosition),
    };
    let allow_extra = method.allow_extra;
    let whole = method.whole_params;
    let notification = method.notification.is_some();
    let exclusive = method.exclusive.is_some().then(|| quote!(.exclusive(true)));
    let requires = method.requires.as_ref().map(|requires| match requires {
        Requires::One(permission) => quote!(.requiring(#permission)),
        Requires::Any(permissions) => quote!(.requiring_any(&[#(#permissions),*])),
        Requires::All(permissions) => quote!(.requiring_all(&[#(#permissions),*])),
    });
    quote! {
        #private::spec(#name, &[#(#params),*], #private::ParamStructure::#structure, #allow_extra, #whole, #notification)#requires #exclusive
    }
}
