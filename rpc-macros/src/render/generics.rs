//! What the generated items of a generic trait take from the trait's type
//! parameters (`<H, K>` on the client, batch and catalog structs), and the
//! bounds each part of the generated code needs of the types that name
//! them. Generic code is checked once for every instantiation, so it may
//! use of `Vec<H>` only what a bound promises.
//!
//! The bounds are added where the generated code needs them (on `into_rpc`,
//! on the client's and on the catalog's impl), not asked of the trait's
//! declaration: a user's bound may come through a trait of their own that a
//! macro cannot see through, and each side asks only what it uses, so that
//! an instantiation whose types allow one side only (a param type that
//! implements `Deserialize` but not `Serialize`) still has that side. A
//! trait without type parameters gets none of this: its expansion is the
//! same as before generic traits were supported.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Type;

use crate::ast::{Output, Service};

/// A part of the generated code, by what it needs of a type.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// `into_rpc`: decodes params, encodes results and items, converts
    /// errors, runs methods on tasks.
    Server,
    /// The client and batch: encodes params, decodes results and items,
    /// reads typed errors.
    Client,
    /// The catalog: describes params, results and items, lists errors.
    Catalog,
}

/// The type parameters as a struct declares them, with the trait's
/// defaults (those that do not name `Self`): `<H, K = u64>`; empty for a
/// trait without type parameters.
pub fn declared(service: &Service) -> TokenStream {
    if !service.generics.is_generic() {
        return TokenStream::new();
    }
    let params = service.generics.written.type_params().map(|param| {
        let ident = &param.ident;
        match &param.default {
            Some((_, default)) if !names_self(default) => quote!(#ident = #default),
            _ => quote!(#ident),
        }
    });
    quote!(<#(#params),*>)
}

/// The type parameters, bare: `<H, K>` (for an impl's parameters and the
/// type it implements); empty for a trait without type parameters.
pub fn params(service: &Service) -> TokenStream {
    if !service.generics.is_generic() {
        return TokenStream::new();
    }
    let params = &service.generics.params;
    quote!(<#(#params),*>)
}

/// `::<H, K>`, as docs write a generated type of a generic trait in an
/// expression; empty for a trait without type parameters.
pub fn turbofish_text(service: &Service) -> String {
    let params: Vec<String> = service.generics.params.iter().map(ToString::to_string).collect();
    if params.is_empty() {
        String::new()
    } else {
        format!("::<{}>", params.join(", "))
    }
}

/// The type parameters each replaced by `()`, `<(), ()>`, to name a
/// generated type where they are not in scope, for what does not depend
/// on them (the spec table).
pub fn filled(service: &Service) -> TokenStream {
    if !service.generics.is_generic() {
        return TokenStream::new();
    }
    let units = service.generics.params.iter().map(|_| quote!(()));
    quote!(<#(#units),*>)
}

/// The type of the field that makes a generated struct use its type
/// parameters, without owning any value of them: `Send`, `Sync`, `Copy`
/// whatever they are.
pub fn marker(service: &Service) -> TokenStream {
    let params = &service.generics.params;
    quote!(::core::marker::PhantomData<fn() -> (#(#params,)*)>)
}

/// `where` and the predicates of `part`, or nothing when there are none.
pub fn where_clause(service: &Service, part: Part, private: &TokenStream) -> TokenStream {
    let predicates = predicates(service, part, private);
    if predicates.is_empty() {
        TokenStream::new()
    } else {
        quote!(where #(#predicates),*)
    }
}

/// What `part` needs of each type that names a type parameter, as `where`
/// predicates (`Vec<H>: DecodedParam`), each once, in the order of the
/// methods. The traits are the runtime's (`private` is its `__private`
/// path); each says on failure which type needs what, and why.
pub fn predicates(service: &Service, part: Part, private: &TokenStream) -> Vec<TokenStream> {
    let generics = &service.generics;
    let mut out = Predicates(Vec::new());
    if !generics.is_generic() {
        return out.0;
    }
    let mentions = |ty: &Type| generics.mentions(ty);
    if part == Part::Server {
        // Requests run on tasks of a multi-threaded runtime, and the
        // router (which holds the dispatch of every instantiation it
        // serves) lives as long as its server.
        for param in &generics.params {
            out.push(quote!(#param), quote!(::core::marker::Send + 'static));
        }
    }
    let (param_bound, value_bound, error_bound) = match part {
        Part::Server => {
            (quote!(#private::DecodedParam), quote!(#private::EncodedResult), quote!(#private::IntoErrorObject))
        }
        Part::Client => {
            (quote!(#private::EncodedParam), quote!(#private::DecodedResult), quote!(#private::ClientErrorType))
        }
        Part::Catalog => {
            (quote!(#private::DescribedType), quote!(#private::DescribedType), quote!(#private::DescribedError))
        }
    };
    // What the client decodes is the owned form of a borrowed result.
    let value = |ty: &Type| match part {
        Part::Client => super::client::owned(ty),
        _ => quote!(#ty),
    };
    for method in &service.methods {
        for param in method.wire_params().filter(|param| mentions(&param.ty)) {
            let ty = &param.ty;
            out.push(quote!(#ty), param_bound.clone());
        }
        if method.notification.is_some() && part != Part::Server {
            // No result to decode nor describe.
            continue;
        }
        let subscription = method.item().is_some();
        if let Some(item) = method.item().filter(|item| mentions(item)) {
            out.push(value(item), value_bound.clone());
        }
        match &method.output {
            Output::Unit => {}
            // A subscription's answer is its id (its return type is `()`
            // or `Result<(), E>`, checked elsewhere).
            Output::Plain(ty) if mentions(ty) && !subscription => out.push(value(ty), value_bound.clone()),
            Output::Plain(_) => {}
            Output::Result(ty) => match super::client::result_args(ty) {
                Some((ok, err)) => {
                    if mentions(ok) && !subscription {
                        out.push(value(ok), value_bound.clone());
                    }
                    if mentions(err) {
                        out.push(quote!(#err), error_bound.clone());
                    }
                }
                // An alias of a `Result` (`RpcResult<H>`): its parts
                // through `ResultTypes`, or the whole for the server.
                None if mentions(ty) => match part {
                    Part::Server if subscription => out.push(quote!(#ty), quote!(#private::IntoSubscriptionEnd)),
                    Part::Server => out.push(quote!(#ty), quote!(#private::IntoMethodResult)),
                    _ => {
                        if !subscription {
                            out.push(quote!(<#ty as #private::ResultTypes>::Ok), value_bound.clone());
                        }
                        out.push(quote!(<#ty as #private::ResultTypes>::Err), error_bound.clone());
                    }
                },
                None => {}
            },
        }
    }
    out.0
}

/// Predicates, each once.
struct Predicates(Vec<TokenStream>);

impl Predicates {
    fn push(&mut self, ty: TokenStream, bound: TokenStream) {
        let predicate = quote!(#ty: #bound);
        let text = predicate.to_string();
        if !self.0.iter().any(|known| known.to_string() == text) {
            self.0.push(predicate);
        }
    }
}

/// Whether `ty` names `Self` (a default such as `Rhs = Self`, which means
/// the implementing type and has no meaning on a generated struct).
fn names_self(ty: &Type) -> bool {
    struct Finder(bool);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_ident(&mut self, ident: &'ast syn::Ident) {
            self.0 |= ident == "Self";
        }
    }
    let mut finder = Finder(false);
    syn::visit::Visit::visit_type(&mut finder, ty);
    finder.0
}

/// The trait's generics for a generic `fn` nested in `into_rpc` (which
/// cannot name the trait's parameters): the type parameters with their
/// inline bounds and no defaults, then the `where` clause, each `Self`
/// replaced by `service` (the implementing type's parameter).
pub fn nested_fn(service: &Service, service_param: &syn::Ident) -> (Vec<TokenStream>, Vec<TokenStream>) {
    struct ReplaceSelf<'a>(&'a syn::Ident);
    impl syn::visit_mut::VisitMut for ReplaceSelf<'_> {
        fn visit_ident_mut(&mut self, ident: &mut syn::Ident) {
            if ident == "Self" {
                *ident = self.0.clone();
            }
        }
    }
    let mut generics = service.generics.written.clone();
    syn::visit_mut::VisitMut::visit_generics_mut(&mut ReplaceSelf(service_param), &mut generics);
    let params = generics
        .type_params_mut()
        .map(|param| {
            param.default = None;
            quote!(#param)
        })
        .collect();
    let predicates =
        generics.where_clause.iter().flat_map(|clause| clause.predicates.iter()).map(|p| quote!(#p)).collect();
    (params, predicates)
}
