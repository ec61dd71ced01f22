use super::choice::variant_name;
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
