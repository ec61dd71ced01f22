//! The typed client: `<Trait>Client` with one method per trait method
//! (a plain `fn` returning the runtime's `Call` future, so that no method
//! adds a state machine of its own), and `<Trait>Batch` with one queueing method per trait method.
//! The logic lives in the runtime (`__private`); each generated method only
//! names its types and encodes its params. The runtime helpers that encode
//! and decode carry the serde bounds, called with the user's type and spanned
//! at it, so a type the client cannot send or read is a compile error there
//! (`#[rpc(server_only)]` generates no client).

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{GenericArgument, PathArguments, Type};

use super::generics::{self, Part};
use crate::ast::{Method, Output, Service, SpecKind};

/// The client and batch structs for `service`.
pub fn client(service: &Service) -> TokenStream {
    let krate = &service.attrs.crate_path;
    let private = quote!(#krate::__private);
    let vis = &service.item.vis;
    let trait_ident = &service.item.ident;
    let client = client_ident(service);
    let batch = format_ident!("{}Batch", trait_ident);
    let new = helper(service, "new");
    let peer = helper(service, "peer");
    let with_timeout = helper(service, "with_timeout");
    let batch_fn = helper(service, "batch");
    let send = helper(service, "send");
    // One client per instantiation of a generic trait.
    let turbofish = generics::turbofish_text(service);
    let client_doc = format!(
        " A typed client for [`{trait_ident}`]: one method per trait method, with the same params, returning\n \
         a future of `Result<T, ClientError<E>>` where `E` is the method's own error type. Params are\n \
         encoded when the method is called; the request is sent when the future is first polled.\n\n \
         Params are sent by name (an object), except for methods declared `param_structure = \"by-position\"`\n \
         (an array) and `whole_params` (the value itself). Notifications return once queued for the writer.\n \
         Build one over any connection: `{client}{turbofish}::{new}(peer)` (helpers whose name a trait method\n \
         already takes get an `rpc_` prefix)."
    );
    let batch_doc = format!(
        " A batch of [`{trait_ident}`] calls sent as one JSON-RPC batch: queue calls (each returns a reply to\n \
         await later), then [`{send}`]({batch}::{send}) them all at once."
    );
    // Each method with the index of its spec in the trait's spec table.
    let spec_table = service.spec_table();
    let specs: Vec<_> = spec_table
        .iter()
        .filter_map(|spec| match spec.kind {
            SpecKind::Method(method) => Some((spec.index, method)),
            _ => None,
        })
        .collect();
    let methods = specs.iter().map(|&(index, method)| client_method(service, index, method));
    // A subscription has no place in a batch: its items come after.
    let batch_methods = specs
        .iter()
        .filter(|(_, method)| method.item().is_none())
        .map(|&(index, method)| batch_method(service, index, method));
    // Each method's name and params are read from the trait's spec table,
    // which is here when there is no catalog to hold it.
    let owner = super::server::spec_owner(service);
    let params = generics::params(service);
    let table = if !service.attrs.catalog {
        let specs = super::server::specs(service);
        quote! {
            #specs

            #[automatically_derived]
            impl #params __rpc::SpecTable for #client #params {
                const SPECS: &'static [__rpc::MethodSpec] = &__RPC_SPECS;
            }
        }
    } else {
        TokenStream::new()
    };
    // A generic trait's client and batch are generic over its type
    // parameters, which they only name (a marker field), and their methods
    // exist for the instantiations whose types the client can send and read.
    let generic = service.generics.is_generic();
    let declared = generics::declared(service);
    let bounds = generics::where_clause(service, Part::Client, &quote!(__rpc));
    let (structs, marker) = if generic {
        let marker = generics::marker(service);
        let structs = quote! {
            #[doc = #client_doc]
            #vis struct #client #declared {
                __core: #private::ClientCore,
                __types: #marker,
            }

            #[doc = #batch_doc]
            #vis struct #batch #declared {
                __batch: #private::Batch,
                __types: #marker,
            }
        };
        (structs, quote!(, __types: ::core::marker::PhantomData))
    } else {
        let structs = quote! {
            #[doc = #client_doc]
            #[derive(::core::clone::Clone, ::core::fmt::Debug)]
            #vis struct #client {
                __core: #private::ClientCore,
            }

            #[doc = #batch_doc]
            #vis struct #batch {
                __batch: #private::Batch,
            }
        };
        (structs, TokenStream::new())
    };
    // What `derive` would write, without its bounds on the type parameters.
    let generic_impls = if generic {
        let name = client.to_string();
        quote! {
            #[automatically_derived]
            impl #params ::core::clone::Clone for #client #params {
                fn clone(&self) -> Self {
                    #client { __core: ::core::clone::Clone::clone(&self.__core) #marker }
                }
            }

            #[automatically_derived]
            impl #params ::core::fmt::Debug for #client #params {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.debug_struct(#name).field("__core", &self.__core).finish()
                }
            }
        }
    } else {
        TokenStream::new()
    };
    quote! {
        #structs

        // One block for both impls, so that the selector traits are
        // imported once rather than in every method.
        const _: () = {
        #[allow(unused_imports)]
        use #krate::__private as __rpc;
        #[allow(unused_imports)]
        use __rpc::ViaServerError as _;
        #table
        const __SPECS: &[__rpc::MethodSpec] = <#owner as __rpc::SpecTable>::SPECS;

        #generic_impls

        #[automatically_derived]
        #[allow(clippy::all, deprecated)]
        impl #params #client #params #bounds {
            /// A client that calls over `peer`.
            #vis fn #new(peer: #private::Peer) -> Self {
                #client { __core: #private::ClientCore::new(peer) #marker }
            }

            /// The connection this client calls over.
            #vis fn #peer(&self) -> &#private::Peer {
                self.__core.peer()
            }

            /// The same client with `timeout` for each call, instead of the
            /// connection's default.
            #vis fn #with_timeout(&self, timeout: ::core::time::Duration) -> Self {
                #client { __core: self.__core.with_timeout(timeout) #marker }
            }

            /// Starts a batch: several calls sent as one JSON-RPC batch.
            #vis fn #batch_fn(&self) -> #batch #params {
                #batch { __batch: self.__core.batch() #marker }
            }

            #(#methods)*
        }

        #[automatically_derived]
        impl #params ::core::convert::From<__rpc::Peer> for #client #params #bounds {
            fn from(peer: __rpc::Peer) -> Self {
                #client::#new(peer)
            }
        }

        #[automatically_derived]
        #[allow(clippy::all, deprecated)]
        impl #params #batch #params #bounds {
            /// Sends every queued call and notification as one batch
            /// message; returns once it is written.
            #vis async fn #send(self) -> ::core::result::Result<(), #private::ClientError> {
                self.__batch.send().await
            }

            #(#batch_methods)*
        }
        };
    }
}

/// The name of the generated client: `Calculator` -> `CalculatorClient`.
pub fn client_ident(service: &Service) -> syn::Ident {
    format_ident!("{}Client", service.item.ident)
}

/// The name of a generated helper method: `name`, or `rpc_name` when the
/// trait has a method called `name` (which the client needs for itself).
fn helper(service: &Service, name: &str) -> syn::Ident {
    if service.methods.iter().any(|method| method.ident == name) {
        format_ident!("rpc_{}", name)
    } else {
        format_ident!("{}", name)
    }
}

/// The success and error types a client method returns, where the user
/// wrote the success type (for errors about it), and how an error object
/// becomes the method's `ClientError`.
struct Types {
    ok: TokenStream,
    ok_span: Span,
    err: TokenStream,
    convert: TokenStream,
}

fn types(service: &Service, method: &Method) -> Types {
    let private = quote!(__rpc);
    // `ErrorObject` is no `FromErrorObject`: its errors stay server errors,
    // which is what `AppError` would pick, without the lookup.
    let server = |ok, ok_span| Types {
        ok,
        ok_span,
        err: quote!(#private::ErrorObject),
        convert: quote!(#private::ClientError::Server),
    };
    // An error type that names a type parameter is converted as its
    // instantiation's bound says (`ClientErrorType`): the selection
    // through `AppError` would be made once for all instantiations.
    let app = |ok, ok_span, err: TokenStream, generic: bool| Types {
        ok,
        ok_span,
        convert: match generic {
            true => quote!(<#err as #private::ClientErrorType>::CONVERT),
            false => quote!(#private::AppError::<#err>::CONVERT),
        },
        err,
    };
    let mentions = |ty: &Type| service.generics.mentions(ty);
    match &method.output {
        Output::Unit => server(quote!(()), Span::call_site()),
        Output::Plain(ty) => server(owned(ty), ty.span()),
        Output::Result(ty) => match result_args(ty) {
            Some((ok, err)) => app(owned(ok), ok.span(), quote!(#err), mentions(err)),
            // Spanned at the alias, so that an error about the success
            // type points there rather than at the attribute.
            None => app(
                quote_spanned!(ty.span()=> <#ty as #private::ResultTypes>::Ok),
                ty.span(),
                quote!(<#ty as #private::ResultTypes>::Err),
                mentions(ty),
            ),
        },
    }
}

/// The decoder of `ty`, spanned at the user's type: `ty` not
/// `DeserializeOwned` is an error there.
fn decoder(ty: &TokenStream, span: Span) -> TokenStream {
    quote_spanned!(span=> __rpc::decoder::<#ty>())
}

/// What the client decodes a result into: the type itself, or for a
/// borrowed result (`-> &'static str`, served from the server's own data)
/// its owned form (`String`), since a decoded value cannot borrow. Borrows
/// inside a tuple, array or generic type are replaced the same way:
/// `(&'static str, i64)` decodes as `(String, i64)`.
pub(super) fn owned(ty: &Type) -> TokenStream {
    struct Owned;
    impl syn::visit_mut::VisitMut for Owned {
        fn visit_type_mut(&mut self, ty: &mut Type) {
            syn::visit_mut::visit_type_mut(self, ty);
            if let Type::Reference(reference) = ty {
                let elem = &reference.elem;
                *ty = syn::parse_quote!(<#elem as ::std::borrow::ToOwned>::Owned);
            }
        }
    }
    let mut ty = ty.clone();
    syn::visit_mut::VisitMut::visit_type_mut(&mut Owned, &mut ty);
    quote!(#ty)
}

/// `T` and `E` of a return type written `Result<T, E>`; aliases go through
/// the `ResultTypes` projection instead.
pub fn result_args(ty: &Type) -> Option<(&Type, &Type)> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else { return None };
    let mut types = args.args.iter().filter_map(|arg| match arg {
        GenericArgument::Type(ty) => Some(ty),
        _ => None,
    });
    match (types.next(), types.next(), types.next()) {
        (Some(ok), Some(err), None) => Some((ok, err)),
        _ => None,
    }
}

/// The method's params as `name: Type` and the array of their encoded
/// values, in the order of the spec's params (which gives their wire names,
/// which may be left out and how they are sent).
fn params(method: &Method) -> (Vec<TokenStream>, TokenStream) {
    let mut args = Vec::new();
    let mut values = Vec::new();
    for param in method.wire_params() {
        let ident = &param.ident;
        let ty = &param.ty;
        args.push(quote!(#ident: #ty));
        // Spanned at the type: `ty` not `Serialize` is an error there.
        values.push(quote_spanned!(ty.span()=> __rpc::encode_param::<#ty>(&#ident)));
    }
    (args, quote!([#(#values),*]))
}

fn docs(method: &Method) -> TokenStream {
    let lines = &method.docs;
    quote!(#(#[doc = #lines])*)
}

fn client_method(service: &Service, index: usize, method: &Method) -> TokenStream {
    let private = quote!(__rpc);
    let vis = &service.item.vis;
    let ident = &method.ident;
    let docs = docs(method);
    let (args, encode) = params(method);
    if method.notification.is_some() {
        return quote! {
            #docs
            ///
            /// A notification: returns once it is written; there is no answer.
            #[inline]
            #vis fn #ident(&self, #(#args),*) -> #private::Notify {
                self.__core.notify(&__SPECS[#index], #encode)
            }
        };
    }
    if let Some(item) = method.item() {
        let decode_item = decoder(&owned(item), item.span());
        let item = owned(item);
        let Types { err, convert, .. } = types(service, method);
        let notification = &method.item_notification;
        let unsubscribe = method.unsubscribe.as_ref().map_or("", |(name, _)| name.as_str());
        return quote! {
            #docs
            ///
            /// A subscription: await it for the stream of its items; dropping the stream unsubscribes.
            #[inline]
            #vis fn #ident(&self, #(#args),*) -> #private::Subscribe<#item, #err> {
                self.__core.subscribe(
                    &__SPECS[#index],
                    #encode,
                    #notification,
                    #unsubscribe,
                    #decode_item,
                    #convert,
                )
            }
        };
    }
    let Types { ok, ok_span, err, convert } = types(service, method);
    let decode = decoder(&ok, ok_span);
    quote! {
        #docs
        #[inline]
        #vis fn #ident(&self, #(#args),*) -> #private::Call<#ok, #err> {
            self.__core.call(
                &__SPECS[#index],
                #encode,
                #decode,
                #convert,
            )
        }
    }
}

fn batch_method(service: &Service, index: usize, method: &Method) -> TokenStream {
    let private = quote!(__rpc);
    let vis = &service.item.vis;
    let ident = &method.ident;
    let docs = docs(method);
    let (args, encode) = params(method);
    if method.notification.is_some() {
        return quote! {
            #docs
            ///
            /// A notification: queued, never answered.
            #[inline]
            #vis fn #ident(&mut self, #(#args),*) {
                #private::batch_notification(&mut self.__batch, &__SPECS[#index], #encode)
            }
        };
    }
    let Types { ok, ok_span, err, convert } = types(service, method);
    let decode = decoder(&ok, ok_span);
    quote! {
        #docs
        ///
        /// Queued; await the reply after the batch is sent.
        #[inline]
        #vis fn #ident(&mut self, #(#args),*) -> #private::BatchReply<#ok, #err> {
            #private::batch_call(
                &mut self.__batch,
                &__SPECS[#index],
                #encode,
                #decode,
                #convert,
            )
        }
    }
}
