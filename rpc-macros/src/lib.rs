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
            let mut out = proc_macro2::TokenStream::from(input);
            let err = syn::Error::new(err.span(), "#[rpc] goes on a trait: `#[rpc] pub trait MyService { ... }`");
            out.extend(err.to_compile_error());
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
