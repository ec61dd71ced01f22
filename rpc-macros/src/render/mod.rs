//! Code generation from the model only.

mod catalog;
mod client;
mod generics;
mod server;

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::{parse_quote, TraitItem};

use crate::ast::Service;

pub use client::result_args;

/// The trait plus everything generated from it.
pub fn expand(service: &Service) -> TokenStream {
    let into_rpc = server::into_rpc(service);
    let mut tokens = emit_trait(service, into_rpc);
    tokens.extend(catalog::catalog(service));
    if !service.attrs.server_only {
        tokens.extend(client::client(service));
    }
    tokens
}

/// What is emitted when the input has errors: the trait itself (so that
/// code using it still type-checks) and the errors.
pub fn fallback(service: &Service, errors: syn::Error) -> TokenStream {
    let krate = &service.attrs.crate_path;
    let into_rpc: TraitItem = parse_quote! {
        #[doc(hidden)]
        fn into_rpc(self) -> #krate::__private::Router where Self: ::core::marker::Sized {
            ::core::unimplemented!()
        }
    };
    // A user method called `into_rpc` is already an error; adding ours would
    // only add a "defined multiple times" error.
    let declared = service.methods.iter().any(|method| method.ident == "into_rpc");
    let extra = if declared { Vec::new() } else { vec![into_rpc] };
    let mut tokens = emit_trait(service, extra);
    tokens.extend(catalog_fallback(service));
    tokens.extend(errors.to_compile_error());
    tokens
}

/// The catalog struct without its contents, so that code naming it does
/// not add errors of its own.
fn catalog_fallback(service: &Service) -> TokenStream {
    if !service.attrs.catalog {
        return TokenStream::new();
    }
    let krate = &service.attrs.crate_path;
    let ident = catalog::catalog_ident(service);
    let vis = &service.item.vis;
    let (declared, params) = (generics::declared(service), generics::params(service));
    let fields = if service.generics.is_generic() {
        let marker = generics::marker(service);
        quote!((#marker))
    } else {
        TokenStream::new()
    };
    quote! {
        #[doc(hidden)]
        #vis struct #ident #declared #fields;
        impl #params #ident #params {
            #[doc(hidden)]
            pub fn catalog() -> #krate::__private::Catalog {
                ::core::unimplemented!()
            }
        }
    }
}

/// The user's trait with `#[rpc]` attributes removed, `async fn` turned into
/// `fn -> impl Future + Send`, `Send + Sync + 'static` added, and `extra`
/// items appended.
fn emit_trait(service: &Service, extra: Vec<TraitItem>) -> TokenStream {
    let mut item = service.item.clone();
    item.supertraits.push(parse_quote!(::core::marker::Send));
    item.supertraits.push(parse_quote!(::core::marker::Sync));
    item.supertraits.push(parse_quote!('static));
    for trait_item in &mut item.items {
        if let TraitItem::Fn(method) = trait_item {
            desugar_async(method);
        }
    }
    item.items.extend(extra);
    item.into_token_stream()
}

/// `async fn f(&self) -> T` becomes `fn f(&self) -> impl Future<Output = T>
/// + Send`, so servers can run it on a multi-threaded runtime without boxing.
fn desugar_async(method: &mut syn::TraitItemFn) {
    let sig = &mut method.sig;
    if sig.asyncness.take().is_none() {
        return;
    }
    let output = match &sig.output {
        syn::ReturnType::Default => quote!(()),
        syn::ReturnType::Type(_, ty) => ty.to_token_stream(),
    };
    sig.output = parse_quote! {
        -> impl ::core::future::Future<Output = #output> + ::core::marker::Send
    };
    if let Some(body) = &method.default {
        let stmts = &body.stmts;
        method.default = Some(parse_quote!({ async move { #(#stmts)* } }));
    }
}

/// A type as a person would write it: `Option<String>`, not `Option < String >`.
pub fn type_name(ty: &syn::Type) -> String {
    let spaced = ty.to_token_stream().to_string();
    let chars: Vec<char> = spaced.chars().collect();
    let mut out = String::with_capacity(chars.len());
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' {
            let word = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric() || *c == '_');
            let keep = word(chars.get(i.wrapping_sub(1))) && word(chars.get(i + 1));
            if keep || chars.get(i.wrapping_sub(1)) == Some(&',') {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    out
}
