//! `#[derive(Elicit)]`: a struct as the form of an MCP elicitation. Each
//! field is a property of the form's `requestedSchema`, under the name
//! serde reads it by (`rename`, `rename_all`), described by its doc
//! comment; its type's `ElicitField` impl gives its schema and whether the
//! user may leave it out (or `#[serde(default)]` says so). Fields serde
//! never reads (`skip`, `skip_deserializing`) are not asked for.
//!
//! On an enum of unit variants it derives a choice instead: `ElicitField`
//! for the enum, whose schema is `{"type": "string", "enum": [..]}` of the
//! names serde reads its variants by (`rename`, `rename_all`; skipped
//! variants left out), so that a form may have a field of it.
//!
//! All mistakes are reported in one build. The impl is rendered even then
//! (from the fields or variants that could be read), as
//! `#[derive(RpcError)]` does, so that the uses of the form or choice add
//! no errors of their own; a generic type or a union gets none.

use proc_macro2::{TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{parse_quote, Attribute, Data, DataEnum, DeriveInput, Fields, LitStr};

use crate::attr;
use crate::case::RenameRule;
use crate::ctxt::Ctxt;

/// The derive's own attribute: `#[elicit(crate = "path")]` on the struct
/// or enum.
mod choice;

use choice::{parse_serde_enum, parse_variants, render_choice};

const ELICIT: &str = "elicit";
const CRATE: &str = "crate";
pub(crate) const STRUCT_KEYS: &[&str] = &[CRATE];

/// What the derive reads of serde's attributes.
const SERDE: &str = "serde";

/// What the derive goes on, for the errors about what it does not.
const USES: &str = "#[derive(Elicit)] goes on a struct with named fields (a form, such as `struct Confirm { confirm: bool }`) or on an enum of unit variants (a choice, such as `enum Priority { Low, High }`)";

/// One property of the form.
struct Field<'a> {
    /// Its name on the wire.
    name: String,
    ty: &'a syn::Type,
    /// `#[serde(default)]` on the field or the struct: the user may leave
    /// it out whatever its type.
    default: bool,
    /// Its doc comment, trimmed (empty without one).
    description: String,
}

/// What the struct's `#[serde(...)]` says about its fields.
#[derive(Default)]
struct SerdeStruct {
    /// `rename_all` (its `deserialize` rule, when split).
    rename_all: Option<RenameRule>,
    /// `default`: every field may be left out.
    default: bool,
}

/// Expands the derive: the `Elicit` impl of a struct or the `ElicitField`
/// impl of an enum, and the errors.
pub fn derive(input: DeriveInput) -> TokenStream {
    let cx = Ctxt::default();
    let krate = parse_elicit_attrs(&cx, &input);
    let generic = !input.generics.params.is_empty();
    let mut tokens = match &input.data {
        Data::Enum(data) => {
            let rename_all = parse_serde_enum(&cx, &input);
            let names = parse_variants(&cx, &input, data, rename_all);
            // ```ignore
            // #[derive(Deserialize, Elicit)]
            // enum Level<T> { Low, High, #[serde(skip)] Other(T) }
            // ```
            if generic {
                cx.error_spanned_by(
                    &input.generics,
                    "#[derive(Elicit)] does not support generic enums: a choice is a fixed list of names; remove the enum's generic parameters",
                );
                TokenStream::new()
            } else {
                render_choice(&input, &krate, &names)
            }
        }
        Data::Struct(_) | Data::Union(_) => {
            let container = parse_serde_struct(&cx, &input);
            let fields = parse_fields(&cx, &input, &container);
            // ```ignore
            // #[derive(Deserialize, Elicit)]
            // struct Form<T> { value: T }   // a form is one concrete schema
            // ```
            // No impl: it would need bounds the derive cannot know.
            if generic {
                cx.error_spanned_by(
                    &input.generics,
                    "#[derive(Elicit)] does not support generic structs: a form's fields have concrete types (`String`, `bool`, numbers); remove the struct's generic parameters",
                );
            }
            match fields {
                Some(fields) if !generic => render(&input, &krate, &fields),
                _ => TokenStream::new(),
            }
        }
    };
    if let Err(errors) = cx.check() {
        tokens.extend(errors.to_compile_error());
    }
    tokens
}

/// `#[elicit(crate = "path")]` on the struct or enum, if given
/// (`::rpc_runtime` otherwise); an `#[elicit]` on a field or a variant is
/// an error.
fn parse_elicit_attrs(cx: &Ctxt, input: &DeriveInput) -> syn::Path {
    let mut krate = parse_quote!(::rpc_runtime);
    let (kind, place) = match &input.data {
        Data::Struct(_) => ("struct", "on a #[derive(Elicit)] struct"),
        Data::Enum(_) => ("enum", "on a #[derive(Elicit)] enum"),
        Data::Union(_) => ("union", "on a #[derive(Elicit)] union"),
    };
    for attr in input.attrs.iter().filter(|attr| attr.path().is_ident(ELICIT)) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(CRATE) {
                let wrong = |span| {
                    syn::Error::new(
                        span,
                        "`crate` must be the path of the runtime crate or a re-export of it, such as `#[elicit(crate = \"::rpc_runtime\")]` or `#[elicit(crate = \"my_facade::rpc\")]`",
                    )
                };
                let value = meta.value()?;
                let span = value.span();
                let value: LitStr = value.parse().map_err(|_| wrong(span))?;
                krate = value.parse().map_err(|_| wrong(value.span()))?;
                Ok(())
            } else {
                Err(attr::unknown_key(&meta, place, STRUCT_KEYS))
            }
        });
        if let Err(err) = result {
            cx.syn_error(err);
        }
    }
    let (fields, variants) = match &input.data {
        Data::Struct(data) => (data.fields.iter().collect(), Vec::new()),
        Data::Union(data) => (data.fields.named.iter().collect(), Vec::new()),
        Data::Enum(data) => (
            data.variants.iter().flat_map(|variant| &variant.fields).collect::<Vec<_>>(),
            data.variants.iter().collect(),
        ),
    };
    for attr in fields.iter().flat_map(|field| &field.attrs).filter(|attr| attr.path().is_ident(ELICIT)) {
        cx.error_spanned_by(
            attr,
            format!("`#[elicit]` goes on the {kind} (`#[elicit(crate = \"...\")]`): a field's description is its doc comment, its name serde's (`#[serde(rename = \"...\")]`)"),
        );
    }
    // ```ignore
    // #[elicit(rename = "low")]
    // Low,
    // ```
    for attr in variants.iter().flat_map(|variant| &variant.attrs).filter(|attr| attr.path().is_ident(ELICIT)) {
        cx.error_spanned_by(
            attr,
            "`#[elicit]` goes on the enum (`#[elicit(crate = \"...\")]`): a variant's name in the choice is serde's (`#[serde(rename = \"...\")]`)",
        );
    }
    krate
}

/// The struct's `#[serde(...)]`: `rename_all` and `default`; the keys that
/// make its wire form something other than its own fields are errors.
fn parse_serde_struct(cx: &Ctxt, input: &DeriveInput) -> SerdeStruct {
    let mut container = SerdeStruct::default();
    serde_keys(&input.attrs, |meta| {
        if meta.path.is_ident("rename_all") {
            container.rename_all = deserialize_name(meta)?.and_then(|rule| RenameRule::from_str(&rule.value()));
        } else if meta.path.is_ident("default") {
            container.default = true;
            skip(meta)?;
        } else if meta.path.is_ident("transparent") {
            // ```ignore
            // #[derive(Deserialize, Elicit)]
            // #[serde(transparent)]
            // struct Name { name: String }  // read as a bare string
            // ```
            cx.error_spanned_by(
                &meta.path,
                "a `#[serde(transparent)]` struct is read as its one field, not as an object: MCP forms are flat objects, so derive Elicit on a struct serde reads by its fields",
            );
        } else if meta.path.is_ident("from") || meta.path.is_ident("try_from") {
            // ```ignore
            // #[derive(Deserialize, Elicit)]
            // #[serde(from = "Raw")]        // the wire form is `Raw`'s
            // struct Form { .. }
            // ```
            let key = if meta.path.is_ident("from") { "from" } else { "try_from" };
            cx.error_spanned_by(
                &meta.path,
                format!("`#[serde({key} = \"...\")]` reads this struct as another type, whose fields the form would have to list: derive Elicit on that type and ask for it instead"),
            );
            skip(meta)?;
        } else {
            return Ok(false);
        }
        Ok(true)
    });
    container
}

/// The form's fields: the struct's named fields that serde reads. A
/// shape that is not a flat object is reported, and has no fields; `None`
/// for a union, for which no impl is rendered (serde cannot derive
/// `Deserialize`, the impl's supertrait, for it), and for an enum, which
/// is a choice (`parse_variants`).
fn parse_fields<'a>(cx: &Ctxt, input: &'a DeriveInput, container: &SerdeStruct) -> Option<Vec<Field<'a>>> {
    const FLAT: &str = "MCP forms are flat objects: derive Elicit on a struct with named fields";
    let named = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => named,
            // ```ignore
            // #[derive(Deserialize, Elicit)]
            // struct Confirm(bool);      // no field names: no keys
            // ```
            Fields::Unnamed(unnamed) => {
                cx.error_spanned_by(
                    unnamed,
                    format!("{FLAT}, such as `struct Confirm {{ confirm: bool }}`: each field's name is its key in the form, and a tuple struct's fields have none"),
                );
                return Some(Vec::new());
            }
            Fields::Unit => {
                cx.error_spanned_by(
                    &input.ident,
                    format!("{FLAT}, such as `struct Confirm {{ confirm: bool }}`: a unit struct has no fields to ask the user for"),
                );
                return Some(Vec::new());
            }
        },
        // An enum is a choice: `parse_variants`.
        Data::Enum(_) => return None,
        // ```ignore
        // #[derive(Elicit)]
        // union Bits { int: u32, float: f32 }
        // ```
        Data::Union(syn::DataUnion { union_token: keyword, .. }) => {
            let ident = &input.ident;
            cx.error_spanned_by(quote!(#keyword #ident), format!("{USES}, not on a union"));
            return None;
        }
    };
    let mut fields = Vec::new();
    for field in &named.named {
        let Some(ident) = &field.ident else { continue };
        let mut rename = None;
        let mut skipped = false;
        let mut default = container.default;
        let mut flattened = false;
        serde_keys(&field.attrs, |meta| {
            if meta.path.is_ident("rename") {
                rename = deserialize_name(meta)?;
            } else if meta.path.is_ident("skip") || meta.path.is_ident("skip_deserializing") {
                skipped = true;
            } else if meta.path.is_ident("default") {
                default = true;
                skip(meta)?;
            } else if meta.path.is_ident("flatten") {
                // ```ignore
                // #[serde(flatten)]
                // address: Address,          // a nested object
                // ```
                flattened = true;
                cx.error_spanned_by(
                    &meta.path,
                    "`#[serde(flatten)]` cannot be used in an elicitation form: MCP forms are flat objects of strings, numbers and booleans; list the flattened struct's fields in this struct instead",
                );
            } else {
                return Ok(false);
            }
            Ok(true)
        });
        if skipped || flattened {
            continue;
        }
        let name = match rename {
            Some(name) => name.value(),
            None => wire_name(ident, container.rename_all),
        };
        let description = attr::doc_lines(&field.attrs).join("\n").trim().to_owned();
        fields.push(Field { name, ty: &field.ty, default, description });
    }
    Some(fields)
}

/// The name serde reads field `ident` by under `rule`. As serde does for
/// fields, `lowercase` and `snake_case` leave the name as it is (a field
/// name is snake_case already).
fn wire_name(ident: &syn::Ident, rule: Option<RenameRule>) -> String {
    let name = ident.unraw().to_string();
    match rule {
        None | Some(RenameRule::Lower | RenameRule::Snake) => name,
        Some(rule) => rule.apply(&name),
    }
}

/// Calls `each` on every key of the `#[serde(...)]` attributes in `attrs`;
/// a key it does not take (`Ok(false)`) is skipped with its value. A
/// malformed serde attribute is serde_derive's to report: the rest of it is
/// ignored here, so that the mistake is reported once.
fn serde_keys(attrs: &[Attribute], mut each: impl FnMut(&ParseNestedMeta<'_>) -> syn::Result<bool>) {
    for attr in attrs.iter().filter(|attr| attr.path().is_ident(SERDE)) {
        let _ = attr.parse_nested_meta(|meta| {
            if !each(&meta)? {
                skip(&meta)?;
            }
            Ok(())
        });
    }
}

/// Skips the value of a key, whatever its form (`= ..`, `(..)`, none): up
/// to the comma that ends it.
fn skip(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    meta.input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tree, next)) = rest.token_tree() {
            if matches!(&tree, TokenTree::Punct(punct) if punct.as_char() == ',') {
                break;
            }
            rest = next;
        }
        Ok(((), rest))
    })
}

/// The deserializing side of `key = ".."` or `key(serialize = "..",
/// deserialize = "..")` (`None` when only the serializing side is given).
fn deserialize_name(meta: &ParseNestedMeta<'_>) -> syn::Result<Option<LitStr>> {
    if meta.input.peek(syn::Token![=]) {
        return meta.value()?.parse().map(Some);
    }
    let mut name = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("deserialize") {
            name = Some(inner.value()?.parse()?);
        } else {
            skip(&inner)?;
        }
        Ok(())
    })?;
    Ok(name)
}

/// `impl Elicit`: `form_schema` of the fields. Each field's type is named
/// with its own span, so that a type that is not an `ElicitField` is
/// reported there, with the trait's message.
fn render(input: &DeriveInput, krate: &syn::Path, fields: &[Field<'_>]) -> TokenStream {
    let ident = &input.ident;
    let fields = fields.iter().map(|Field { name, ty, default, description }| {
        let field = |item: TokenStream| quote_spanned!(ty.span()=> <#ty as #krate::__private::ElicitField>::#item);
        let schema = field(quote!(schema));
        let optional = if *default { quote!(true) } else { field(quote!(OPTIONAL)) };
        let description = if description.is_empty() {
            quote!(::core::option::Option::None)
        } else {
            quote!(::core::option::Option::Some(#description))
        };
        quote! {
            #krate::__private::FormField { name: #name, schema: #schema, optional: #optional, description: #description }
        }
    });
    quote! {
        #[automatically_derived]
        impl #krate::__private::Elicit for #ident {
            fn requested_schema() -> #krate::__private::serde_json::Map<::std::string::String, #krate::__private::serde_json::Value> {
                #krate::__private::form_schema(&[#(#fields),*])
            }
        }
    }
}

#[cfg(test)]
mod tests;
