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

/// The enum's `#[serde(...)]`: its `rename_all` (the `deserialize` rule,
/// when split); the keys that make serde read it from something other
/// than a variant's name are errors.
fn parse_serde_enum(cx: &Ctxt, input: &DeriveInput) -> Option<RenameRule> {
    let mut rename_all = None;
    let mut tagged = false;
    serde_keys(&input.attrs, |meta| {
        if meta.path.is_ident("rename_all") {
            rename_all = deserialize_name(meta)?.and_then(|rule| RenameRule::from_str(&rule.value()));
        } else if meta.path.is_ident("untagged") {
            // ```ignore
            // #[derive(Deserialize, Elicit)]
            // #[serde(untagged)]             // each variant read from `null`
            // enum Priority { Low, High }
            // ```
            cx.error_spanned_by(
                &meta.path,
                "`#[serde(untagged)]` is not supported by #[derive(Elicit)]: serde reads an untagged unit variant from `null`, not from its name, and a choice in an MCP form is one of the variants' names; remove it",
            );
        } else if meta.path.is_ident("tag") || meta.path.is_ident("content") {
            // ```ignore
            // #[derive(Deserialize, Elicit)]
            // #[serde(tag = "level")]        // read from `{"level": "Low"}`
            // enum Priority { Low, High }
            // ```
            // One error for `tag` and `content` together.
            if !tagged {
                tagged = true;
                cx.error_spanned_by(
                    &meta.path,
                    "`#[serde(tag = \"...\")]` and `#[serde(content = \"...\")]` are not supported by #[derive(Elicit)]: serde then reads the variant from an object that holds its name, and a choice in an MCP form is the bare name; remove them",
                );
            }
            skip(meta)?;
        } else if meta.path.is_ident("from") || meta.path.is_ident("try_from") {
            // ```ignore
            // #[derive(Deserialize, Elicit)]
            // #[serde(from = "String")]      // any string, not the names
            // enum Priority { Low, High }
            // ```
            let key = if meta.path.is_ident("from") { "from" } else { "try_from" };
            cx.error_spanned_by(
                &meta.path,
                format!("`#[serde({key} = \"...\")]` reads this enum as another type, not by its variants' names, which the choice lists: remove it, or ask for that type instead"),
            );
            skip(meta)?;
        } else {
            return Ok(false);
        }
        Ok(true)
    });
    rename_all
}

/// The choice's names: those serde reads the enum's variants by, but for
/// the variants it never reads (`skip`, `skip_deserializing`). A variant
/// with fields, an empty enum and the keys that make a variant read from
/// something other than its name are errors.
fn parse_variants(cx: &Ctxt, input: &DeriveInput, data: &DataEnum, rename_all: Option<RenameRule>) -> Vec<String> {
    let ident = &input.ident;
    let keyword = &data.enum_token;
    // ```ignore
    // #[derive(Deserialize, Elicit)]
    // enum Never {}
    // ```
    if data.variants.is_empty() {
        cx.error_spanned_by(
            quote!(#keyword #ident),
            "an empty enum has no names to choose from: a choice in an MCP form is one of the enum's unit variants, such as `enum Priority { Low, High }`; add its variants",
        );
        return Vec::new();
    }
    let mut names = Vec::new();
    let mut wrong = false;
    for variant in &data.variants {
        let mut rename = None;
        let mut skipped = false;
        serde_keys(&variant.attrs, |meta| {
            if meta.path.is_ident("rename") {
                rename = deserialize_name(meta)?;
            } else if meta.path.is_ident("skip") || meta.path.is_ident("skip_deserializing") {
                skipped = true;
            } else if meta.path.is_ident("other") {
                // ```ignore
                // #[serde(other)]
                // Unknown,                   // any other name
                // ```
                wrong = true;
                cx.error_spanned_by(
                    &meta.path,
                    "`#[serde(other)]` is not supported by #[derive(Elicit)]: it makes the variant stand for every name not listed, and a choice in an MCP form is one of the names it lists; remove it",
                );
            } else if meta.path.is_ident("untagged") {
                // ```ignore
                // #[serde(untagged)]
                // Unknown,                   // read from `null`
                // ```
                wrong = true;
                cx.error_spanned_by(
                    &meta.path,
                    "`#[serde(untagged)]` is not supported by #[derive(Elicit)]: serde reads an untagged unit variant from `null`, not from its name, and a choice in an MCP form is one of the variants' names; remove it",
                );
            } else {
                return Ok(false);
            }
            Ok(true)
        });
        // A variant serde never reads is never chosen: it may hold data.
        if skipped {
            continue;
        }
        // ```ignore
        // #[derive(Deserialize, Elicit)]
        // enum Priority { Low, Custom(u8) }
        // ```
        if !matches!(variant.fields, Fields::Unit) {
            wrong = true;
            cx.error_spanned_by(
                &variant.fields,
                format!("a choice in an MCP form is one of some names: every variant must be a unit variant like `Low`; {USES}"),
            );
            continue;
        }
        names.push(match rename {
            Some(name) => name.value(),
            None => variant_name(&variant.ident, rename_all),
        });
    }
    // ```ignore
    // #[derive(Deserialize, Elicit)]
    // enum Priority { #[serde(skip)] Low }
    // ```
    if names.is_empty() && !wrong {
        cx.error_spanned_by(
            quote!(#keyword #ident),
            "every variant of this enum is skipped (`#[serde(skip)]`, `#[serde(skip_deserializing)]`): a choice in an MCP form needs at least one name to choose; read at least one unit variant",
        );
    }
    names
}

/// The name serde reads variant `ident` by under `rule`, as serde applies
/// a rule to a variant (a PascalCase name).
fn variant_name(ident: &syn::Ident, rule: Option<RenameRule>) -> String {
    let name = ident.unraw().to_string();
    let snake = |name: &str| {
        let mut snake = String::new();
        for (i, ch) in name.char_indices() {
            if i > 0 && ch.is_uppercase() {
                snake.push('_');
            }
            snake.push(ch.to_ascii_lowercase());
        }
        snake
    };
    match rule {
        None | Some(RenameRule::Pascal) => name,
        Some(RenameRule::Lower) => name.to_ascii_lowercase(),
        Some(RenameRule::Upper) => name.to_ascii_uppercase(),
        Some(RenameRule::Camel) => {
            let mut chars = name.chars();
            chars.next().map(|first| first.to_ascii_lowercase().to_string() + chars.as_str()).unwrap_or_default()
        }
        Some(RenameRule::Snake) => snake(&name),
        Some(RenameRule::ScreamingSnake) => snake(&name).to_ascii_uppercase(),
        Some(RenameRule::Kebab) => snake(&name).replace('_', "-"),
        Some(RenameRule::ScreamingKebab) => snake(&name).to_ascii_uppercase().replace('_', "-"),
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

/// `impl ElicitField` for the enum: `{"type": "string", "enum": [..]}` of
/// its names. No description: a field's own doc comment describes it.
fn render_choice(input: &DeriveInput, krate: &syn::Path, names: &[String]) -> TokenStream {
    let ident = &input.ident;
    let string =
        |text: &str| quote!(#krate::__private::serde_json::Value::String(::std::borrow::ToOwned::to_owned(#text)));
    let kind = string("string");
    let names = names.iter().map(|name| string(name));
    quote! {
        #[automatically_derived]
        impl #krate::__private::ElicitField for #ident {
            fn schema() -> #krate::__private::serde_json::Map<::std::string::String, #krate::__private::serde_json::Value> {
                let mut schema = #krate::__private::serde_json::Map::new();
                schema.insert(::std::borrow::ToOwned::to_owned("type"), #kind);
                schema.insert(::std::borrow::ToOwned::to_owned("enum"), #krate::__private::serde_json::Value::Array(::std::vec![#(#names),*]));
                schema
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(input: DeriveInput) -> Vec<(String, bool, String)> {
        let cx = Ctxt::default();
        let container = parse_serde_struct(&cx, &input);
        let fields = parse_fields(&cx, &input, &container)
            .unwrap()
            .into_iter()
            .map(|field| (field.name, field.default, field.description))
            .collect();
        cx.check().unwrap();
        fields
    }

    #[test]
    fn names_are_serdes_and_skipped_fields_are_left_out() {
        let fields = form(parse_quote! {
            #[serde(rename_all(serialize = "kebab-case", deserialize = "camelCase"), deny_unknown_fields)]
            struct Form {
                /// First line.
                ///   Second line.
                first_name: String,
                #[serde(rename = "TAG", default = "tag")]
                tag: String,
                #[serde(rename(serialize = "x"))]
                r#type: u8,
                #[serde(skip)]
                cache: Vec<u8>,
                #[serde(skip_deserializing, default)]
                seen: bool,
                #[serde(with = "module", bound(deserialize = "T: X"))]
                plain_value: f64,
            }
        });
        let expected = [
            ("firstName", false, "First line.\n  Second line."),
            ("TAG", true, ""),
            ("type", false, ""),
            ("plainValue", false, ""),
        ];
        let expected: Vec<_> = expected.iter().map(|(n, d, s)| (n.to_string(), *d, s.to_string())).collect();
        assert_eq!(fields, expected);
    }

    #[test]
    fn a_struct_default_makes_every_field_optional() {
        let fields = form(parse_quote! {
            #[serde(default, rename_all = "lowercase")]
            struct Form { a_b: bool }
        });
        assert_eq!(fields, [("a_b".to_owned(), true, String::new())]);
    }

    #[test]
    fn shapes_that_are_not_flat_objects_are_errors() {
        for input in [
            parse_quote!(
                union U {
                    a: u32,
                }
            ),
            parse_quote!(
                struct T(bool);
            ),
            parse_quote!(
                struct U;
            ),
            parse_quote!(
                struct F {
                    #[serde(flatten)]
                    inner: Inner,
                }
            ),
            parse_quote!(
                #[serde(transparent)]
                struct N {
                    n: String,
                }
            ),
        ] {
            let cx = Ctxt::default();
            let container = parse_serde_struct(&cx, &input);
            parse_fields(&cx, &input, &container);
            assert!(cx.check().is_err());
        }
    }

    fn choice(input: DeriveInput) -> Result<Vec<String>, syn::Error> {
        let cx = Ctxt::default();
        let Data::Enum(data) = &input.data else { panic!("not an enum") };
        let rename_all = parse_serde_enum(&cx, &input);
        let names = parse_variants(&cx, &input, data, rename_all);
        cx.check().map(|()| names)
    }

    #[test]
    fn a_choice_is_its_variants_serde_names() {
        let names = choice(parse_quote! {
            #[serde(rename_all(serialize = "kebab-case", deserialize = "SCREAMING_SNAKE_CASE"), deny_unknown_fields)]
            enum Priority {
                /// Not urgent.
                VeryLow,
                #[serde(rename = "mid", alias = "medium")]
                Medium,
                #[serde(rename(serialize = "x"))]
                r#High,
                #[serde(skip)]
                Draft,
                #[serde(skip_deserializing)]
                Custom(u8),
            }
        });
        assert_eq!(names.unwrap(), ["VERY_LOW", "mid", "HIGH"]);
    }

    #[test]
    fn variant_names_follow_serdes_rules_for_variants() {
        let ident: syn::Ident = parse_quote!(HttpServerV2);
        let expected = [
            (None, "HttpServerV2"),
            (Some(RenameRule::Lower), "httpserverv2"),
            (Some(RenameRule::Upper), "HTTPSERVERV2"),
            (Some(RenameRule::Pascal), "HttpServerV2"),
            (Some(RenameRule::Camel), "httpServerV2"),
            (Some(RenameRule::Snake), "http_server_v2"),
            (Some(RenameRule::ScreamingSnake), "HTTP_SERVER_V2"),
            (Some(RenameRule::Kebab), "http-server-v2"),
            (Some(RenameRule::ScreamingKebab), "HTTP-SERVER-V2"),
        ];
        for (rule, name) in expected {
            assert_eq!(variant_name(&ident, rule), name, "{rule:?}");
        }
    }

    #[test]
    fn choices_that_are_not_names_are_errors() {
        for input in [
            parse_quote!(
                enum E {
                    A,
                    B(u8),
                }
            ),
            parse_quote!(
                enum E {
                    A,
                    B { b: u8 },
                }
            ),
            parse_quote!(
                enum E {}
            ),
            parse_quote!(
                enum E {
                    #[serde(skip)]
                    A,
                }
            ),
            parse_quote!(
                #[serde(untagged)]
                enum E {
                    A,
                }
            ),
            parse_quote!(
                #[serde(tag = "t")]
                enum E {
                    A,
                }
            ),
            parse_quote!(
                #[serde(tag = "t", content = "c")]
                enum E {
                    A,
                }
            ),
            parse_quote!(
                #[serde(from = "String")]
                enum E {
                    A,
                }
            ),
            parse_quote!(
                enum E {
                    A,
                    #[serde(other)]
                    B,
                }
            ),
            parse_quote!(
                enum E {
                    A,
                    #[serde(untagged)]
                    B,
                }
            ),
        ] {
            assert!(choice(input).is_err());
        }
    }
}
