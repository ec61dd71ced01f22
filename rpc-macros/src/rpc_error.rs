//! `#[derive(RpcError)]`: one declaration of a typed error, on the error
//! enum. Each variant says its code and message; its fields are the
//! error's `data`. Parse and check first (all errors collected), then
//! render `From<E> for ErrorObject`, `FromErrorObject for E`,
//! `RpcError for E` (the catalog's `errors`), `Display` (each variant's
//! message, unless `#[rpc(display = false)]`) and `std::error::Error`.
//! The impls are rendered even when there are errors, as `#[rpc]` and
//! thiserror do, so that one mistake is one error rather than one at every
//! use of the enum as well.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::{parse_quote, Data, DeriveInput, Fields, LitStr};

use crate::attr;
use crate::ctxt::Ctxt;

const CRATE: &str = "crate";
const DISPLAY: &str = "display";
pub(crate) const ENUM_KEYS: &[&str] = &[CRATE, DISPLAY];
const CODE: &str = "code";
const MESSAGE: &str = "message";
pub(crate) const VARIANT_KEYS: &[&str] = &[CODE, MESSAGE];

/// One variant: `#[rpc(code = .., message = "..")] Name { fields }`.
struct Variant {
    ident: syn::Ident,
    code: syn::Expr,
    message: LitStr,
    fields: Fields,
}

/// Options on the enum: `#[rpc(crate = "path", display = false)]`.
struct EnumAttrs {
    /// Where the runtime crate is.
    krate: syn::Path,
    /// Whether the derive writes `Display` (each variant's message); with
    /// `display = false` the user's own `Display` is used.
    display: bool,
}

/// Expands the derive. With errors, the errors and the impls of a
/// best-effort model (a broken variant gets a fallback code and message,
/// see [`parse_variants`]), so that the enum's uses add no errors.
pub fn derive(input: DeriveInput) -> TokenStream {
    let cx = Ctxt::default();
    let attrs = parse_enum_attrs(&cx, &input);
    let variants = parse_variants(&cx, &input);
    let errors = cx.check().err();
    // Every impl in one `const _` block, as serde does: nothing the user
    // could name is added to their module.
    let mut impls = render_error(&input, errors.is_some());
    if attrs.display {
        impls.extend(render_display(&input, variants.as_deref()));
    }
    let mut tokens = render(&input, &attrs.krate, variants.as_deref(), impls);
    if let Some(errors) = errors {
        tokens.extend(errors.to_compile_error());
    }
    tokens
}

/// `#[rpc(crate = "path", display = false)]` on the enum, if given.
fn parse_enum_attrs(cx: &Ctxt, input: &DeriveInput) -> EnumAttrs {
    let mut attrs = EnumAttrs { krate: parse_quote!(::rpc_runtime), display: true };
    for attr in input.attrs.iter().filter(|attr| attr.path().is_ident(attr::RPC)) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(CRATE) {
                let value: LitStr = meta.value()?.parse()?;
                attrs.krate = value.parse()?;
                Ok(())
            } else if meta.path.is_ident(DISPLAY) {
                // ```ignore
                // #[rpc(display)]           // a bool: `display = false`
                // ```
                // A broken value most likely means `false`, the only one
                // worth writing: no derived `Display` to conflict with the
                // enum's own.
                attrs.display = false;
                let value = meta.value()?;
                let lit: syn::LitBool = value.parse().map_err(|err| {
                    syn::Error::new(
                        err.span(),
                        "`display` takes a bool: `#[rpc(display = false)]` when the enum implements `Display` itself",
                    )
                })?;
                attrs.display = lit.value;
                Ok(())
            } else {
                Err(attr::unknown_key(&meta, "on a #[derive(RpcError)] enum", ENUM_KEYS))
            }
        });
        if let Err(err) = result {
            cx.syn_error(err);
        }
    }
    attrs
}

/// The variants, each with its code and message; `None` when there are
/// none to write the impls from (the input is not an enum, or is generic:
/// both reported), and the impls are rendered with bodies that never run.
///
/// A variant whose attribute is missing or broken (reported) is still
/// modelled, with the code of an internal error (-32603) and its name as
/// the message where they could not be read, so that the impls exist.
fn parse_variants(cx: &Ctxt, input: &DeriveInput) -> Option<Vec<Variant>> {
    // ```ignore
    // #[derive(RpcError)]
    // struct NotFound;          // which code? say it per variant of an enum
    // ```
    let Data::Enum(data) = &input.data else {
        cx.error_spanned_by(
            &input.ident,
            "#[derive(RpcError)] goes on an enum: one variant per error, each with `#[rpc(code = ..., message = \"...\")]`",
        );
        return None;
    };
    // ```ignore
    // #[derive(RpcError)]
    // enum Error<T> { .. }      // the catalog needs one concrete type
    // ```
    let generic = !input.generics.params.is_empty();
    if generic {
        cx.error_spanned_by(&input.generics, "#[derive(RpcError)] enums cannot be generic; use concrete types");
    }
    let mut variants = Vec::new();
    for variant in &data.variants {
        let mut code = None;
        let mut message = None;
        let mut broken = false;
        for attr in variant.attrs.iter().filter(|attr| attr.path().is_ident(attr::RPC)) {
            let result = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident(CODE) {
                    let expr: syn::Expr = meta.value()?.parse()?;
                    code = Some(attr::parse_code(&expr)?);
                } else if meta.path.is_ident(MESSAGE) {
                    message = Some(meta.value()?.parse::<LitStr>()?);
                } else {
                    return Err(attr::unknown_key(&meta, "on a #[derive(RpcError)] variant", VARIANT_KEYS));
                }
                Ok(())
            });
            if let Err(err) = result {
                broken = true;
                cx.syn_error(err);
            }
        }
        // ```ignore
        // #[derive(RpcError)]
        // enum Error { NotFound }   // no code and message
        // ```
        // A broken attribute is reported already.
        if (code.is_none() || message.is_none()) && !broken {
            cx.error_spanned_by(
                &variant.ident,
                format!(
                    "variant `{}` needs its code and message: `#[rpc(code = -32001, message = \"...\")]` (the code may be a constant)",
                    variant.ident
                ),
            );
        }
        variants.push(Variant {
            ident: variant.ident.clone(),
            code: code.unwrap_or_else(|| parse_quote!(-32603)),
            message: message.unwrap_or_else(|| LitStr::new(&variant.ident.to_string(), variant.ident.span())),
            fields: variant.fields.clone(),
        });
    }
    (!generic).then_some(variants)
}

/// The conversions and the catalog's `ERRORS`, with `impls` (`Display`,
/// `Error`), in one `const _` block. Without `variants` (reported), the
/// conversions' bodies never run: the build fails.
fn render(input: &DeriveInput, krate: &syn::Path, variants: Option<&[Variant]>, impls: TokenStream) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let stub = variants.is_none();
    let variants = variants.unwrap_or_default();
    // Each code once, as an `i64` constant: a constant of another type is
    // one error, at the user's code.
    let code_consts: Vec<_> = (0..variants.len()).map(|i| format_ident!("__CODE_{}", i)).collect();
    let code_defs = variants.iter().zip(&code_consts).map(|(variant, name)| {
        let code = &variant.code;
        quote!(const #name: i64 = #code;)
    });
    let into_object = variants.iter().zip(&code_consts).map(|(variant, code)| {
        let Variant { ident: name, message, fields, .. } = variant;
        let new = quote!(__rpc::ErrorObject::new(#code, #message));
        match fields {
            Fields::Unit => quote!(#ident::#name => #new,),
            Fields::Named(named) => {
                let names: Vec<_> = named.named.iter().filter_map(|field| field.ident.as_ref()).collect();
                let keys = names.iter().map(|name| attr_name(name));
                quote! {
                    #ident::#name { #(#names),* } =>
                        #new.with_data(&__rpc::serde_json::json!({ #(#keys: #names),* })),
                }
            }
            Fields::Unnamed(unnamed) => {
                let names: Vec<_> = (0..unnamed.unnamed.len()).map(|i| format_ident!("__f{}", i)).collect();
                // One field is the data itself; several are an array.
                let data = if names.len() == 1 { quote!(#(#names)*) } else { quote!((#(#names),*)) };
                quote!(#ident::#name(#(#names),*) => #new.with_data(&#data),)
            }
        }
    });
    let from_object = variants.iter().zip(&code_consts).map(|(variant, code)| {
        let Variant { ident: name, fields, .. } = variant;
        let value = match fields {
            Fields::Unit => quote!(#ident::#name),
            Fields::Named(named) => {
                let fields = named.named.iter().filter_map(|field| field.ident.as_ref()).map(|field| {
                    let key = attr_name(field);
                    quote!(#field: __rpc::error_field(__error, #key)?)
                });
                quote!(#ident::#name { #(#fields),* })
            }
            Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 => {
                quote!(#ident::#name(__rpc::error_data(__error)?))
            }
            Fields::Unnamed(unnamed) => {
                let names: Vec<_> = (0..unnamed.unnamed.len()).map(|i| format_ident!("__f{}", i)).collect();
                quote!({
                    let (#(#names),*) = __rpc::error_data(__error)?;
                    #ident::#name(#(#names),*)
                })
            }
        };
        // Variants sharing a code are told apart by their data: the first
        // whose data decodes wins.
        quote! {
            if __error.code() == #code {
                let __decoded = (|| ::core::option::Option::Some(#value))();
                if __decoded.is_some() {
                    return __decoded;
                }
            }
        }
    });
    let infos = variants
        .iter()
        .zip(&code_consts)
        .map(|(Variant { message, .. }, code)| quote!(__rpc::ErrorInfo::new(#code, #message)));
    let into_object = match stub {
        true => quote!(::core::unreachable!()),
        false => quote! {
            match __value {
                #(#into_object)*
            }
        },
    };
    quote! {
        #[allow(clippy::all, non_local_definitions)]
        const _: () = {
            use #krate::__private as __rpc;
            // `json!` calls `.into()` on object keys: in scope even where
            // the prelude is not (`#![no_implicit_prelude]`).
            #[allow(unused_imports)]
            use ::core::convert::Into as _;
            #(#code_defs)*

            #[automatically_derived]
            impl #impl_generics ::core::convert::From<#ident #ty_generics> for __rpc::ErrorObject #where_clause {
                fn from(__value: #ident #ty_generics) -> Self {
                    #into_object
                }
            }

            #[automatically_derived]
            impl #impl_generics __rpc::FromErrorObject for #ident #ty_generics #where_clause {
                fn from_error_object(__error: &__rpc::ErrorObject) -> ::core::option::Option<Self> {
                    #(#from_object)*
                    ::core::option::Option::None
                }
            }

            #[automatically_derived]
            impl #impl_generics __rpc::RpcError for #ident #ty_generics #where_clause {
                const ERRORS: &'static [__rpc::ErrorInfo] = &[#(#infos),*];
            }

            #impls
        };
    }
}

/// `Display`: the variant's message, as the server sends it (the data
/// is not part of it). Without `variants` (reported), a body that never
/// runs.
fn render_display(input: &DeriveInput, variants: Option<&[Variant]>) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let body = match variants {
        Some(variants) => {
            let arms = variants.iter().map(|Variant { ident: name, message, fields, .. }| {
                let pattern = match fields {
                    Fields::Unit => quote!(#ident::#name),
                    Fields::Named(_) => quote!(#ident::#name { .. }),
                    Fields::Unnamed(_) => quote!(#ident::#name(..)),
                };
                quote!(#pattern => #message,)
            });
            quote! {
                __f.write_str(match *self {
                    #(#arms)*
                })
            }
        }
        None => quote!(::core::unreachable!()),
    };
    quote! {
        #[automatically_derived]
        impl #impl_generics ::core::fmt::Display for #ident #ty_generics #where_clause {
            fn fmt(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                #body
            }
        }
    }
}

/// `std::error::Error`, with no `source`: a variant's fields are the
/// error's JSON data, not a wrapped error. It needs `Debug` and `Display`.
///
/// The impl asks for `Debug` in a bound that names a lifetime of its own,
/// which the compiler checks where the impl is used rather than here (a
/// bound without any generic parameter would be checked here, as a
/// supertrait is): a missing `Debug` is reported instead at the enum's
/// name, by a check of its own (`__private::RpcErrorDebug`) that says to
/// derive it. A missing `Display` (with `display = false`) is reported at
/// the enum's name, as the impl's supertrait. When errors are `reported`
/// already, as thiserror does, both are asked for in that bound and
/// neither is checked here.
fn render_error(input: &DeriveInput, reported: bool) -> TokenStream {
    let ident = &input.ident;
    let mut generics = input.generics.clone();
    let (_, ty_generics, _) = input.generics.split_for_impl();
    let deferred = match reported {
        true => quote!(::core::fmt::Debug + ::core::fmt::Display),
        false => quote!(::core::fmt::Debug),
    };
    generics.make_where_clause().predicates.push(parse_quote! {
        for<'__rpc> #ident #ty_generics: #deferred
    });
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let error = quote_spanned!(ident.span()=> ::std::error::Error);
    // Spanned at the enum's name: a missing `Debug` is reported there.
    let debug = (!reported).then(|| quote_spanned!(ident.span()=> const _: () = __rpc::rpc_error_debug::<#ident>();));
    quote! {
        #[automatically_derived]
        impl #impl_generics #error for #ident #ty_generics #where_clause {}
        #debug
    }
}

/// A field's key in the error data: its name without `r#`.
fn attr_name(ident: &syn::Ident) -> String {
    let name = ident.to_string();
    name.strip_prefix("r#").map(str::to_owned).unwrap_or(name)
}
