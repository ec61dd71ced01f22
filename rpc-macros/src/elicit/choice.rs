//! `#[derive(Elicit)]` on an enum of unit variants: a choice, whose schema
//! lists the names serde reads its variants by.

use super::*;

/// The enum's `#[serde(...)]`: its `rename_all` (the `deserialize` rule,
/// when split); the keys that make serde read it from something other
/// than a variant's name are errors.
pub(super) fn parse_serde_enum(cx: &Ctxt, input: &DeriveInput) -> Option<RenameRule> {
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
pub(super) fn parse_variants(
    cx: &Ctxt,
    input: &DeriveInput,
    data: &DataEnum,
    rename_all: Option<RenameRule>,
) -> Vec<String> {
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
pub(super) fn variant_name(ident: &syn::Ident, rule: Option<RenameRule>) -> String {
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

/// `impl ElicitField` for the enum: `{"type": "string", "enum": [..]}` of
/// its names. No description: a field's own doc comment describes it.
pub(super) fn render_choice(input: &DeriveInput, krate: &syn::Path, names: &[String]) -> TokenStream {
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
