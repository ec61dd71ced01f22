//! The `#[rpc]` attribute macro. Use it through `rpc_runtime::rpc`; the
//! documentation of the attribute and its options lives there.
//!
//! Layers: `attr`/`ast` parse the trait into a model, `check` applies the
//! rules that need the whole model, `render` generates code from the model.

mod ast;
mod attr;
mod case;
mod check;
mod ctxt;
mod render;

use proc_macro::TokenStream;

/// Generates JSON-RPC 2.0 server dispatch (and more) for a trait. See the
/// `rpc_runtime` crate documentation for the options.
#[proc_macro_attribute]
pub fn rpc(args: TokenStream, input: TokenStream) -> TokenStream {
    let item = match syn::parse::<syn::ItemTrait>(input.clone()) {
        Ok(item) => item,
        Err(err) => {
            // Not a trait: keep the item so that only this error is reported.
            let mut out = proc_macro2::TokenStream::from(input.clone());
            out.extend(not_a_trait(input, err).to_compile_error());
            return out.into();
        }
    };
    let cx = ctxt::Ctxt::default();
    let attrs = attr::parse_service_attrs(&cx, args.into());
    let service = ast::parse_service(&cx, attrs, item);
    check::check(&cx, &service);
    match cx.check() {
        Ok(()) => render::expand(&service),
        Err(errors) => render::fallback(&service, errors),
    }
    .into()
}

/// The error for `#[rpc]` on something other than a trait, pointing at the
/// item's keyword.
#[cold]
fn not_a_trait(input: TokenStream, err: syn::Error) -> syn::Error {
    use syn::spanned::Spanned;
    let (span, what) = match syn::parse::<syn::Item>(input) {
        Ok(syn::Item::Struct(item)) => (item.struct_token.span, "a struct"),
        Ok(syn::Item::Enum(item)) => (item.enum_token.span, "an enum"),
        Ok(syn::Item::Impl(item)) => (item.impl_token.span, "an impl block"),
        Ok(syn::Item::Fn(item)) => (item.sig.fn_token.span, "a function"),
        Ok(syn::Item::Mod(item)) => (item.mod_token.span, "a module"),
        Ok(item) => (item.span(), "this item"),
        // Not valid item syntax (e.g. `macro_rules!` inside a trait): the
        // parser's own error says what is wrong.
        Err(_) => return err,
    };
    syn::Error::new(
        span,
        format!(
            "#[rpc] goes on a trait, not on {what}: declare the methods in `#[rpc] pub trait MyService {{ ... }}` and implement that trait for your type"
        ),
    )
}
