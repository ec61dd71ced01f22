//! The `#[rpc]` attribute macro. Use it through `rpc_runtime::rpc`; its
//! documentation (on the macro) lists the options.
//!
//! Layers: `attr`/`ast` parse the trait into a model, `check` applies the
//! rules that need the whole model, `render` generates code from the model.

#![forbid(unsafe_code)]

mod ast;
mod attr;
mod case;
mod check;
mod ctxt;
mod elicit;
mod render;
mod rpc_error;

use proc_macro::TokenStream;

/// Makes a trait a JSON-RPC 2.0 service.
///
/// ```rust,ignore
/// use rpc_runtime::{rpc, ErrorObject};
///
/// /// A calculator.
/// #[rpc(namespace = "calc", namespace_separator = ".", rename_all = "camelCase")]
/// pub trait Calculator {
///     /// Subtracts `subtrahend` from `minuend`.
///     fn subtract(&self, minuend: i64, subtrahend: i64) -> i64;
///     /// Trailing `Option` params may be omitted.
///     async fn greet(&self, name: String, greeting: Option<String>) -> Result<String, ErrorObject>;
///     /// Never answered.
///     #[rpc(notification)]
///     fn did_change(&self, #[rpc(name = "textDocument")] document: String);
/// }
/// ```
///
/// For a trait `Foo` this generates:
/// - the trait itself, with `Send + Sync + 'static` added, each `async fn`
///   turned into `fn .. -> impl Future<Output = T> + Send`, and a provided
///   `fn into_rpc(self) -> Router` that serves every method;
/// - `FooClient`, a typed client over a `Peer` (one method per trait method,
///   returning a future), and `FooBatch` for typed batches (not with
///   `server_only`);
/// - `FooCatalog`, whose `catalog()` is the trait's OpenRPC 1.3 description,
///   with no instance needed (`catalog().document()`).
///
/// Methods take `&self` and return `T` or `Result<T, E>` with
/// `E: Into<ErrorObject>`. Params decode by position (array) and by name
/// (object); a parameter of the runtime's `Context` type, written
/// `Context` (checked at compile time to be the runtime's) or
/// `rpc_runtime::Context`, is injected, not decoded; any other path, such
/// as `model::Context`, is an ordinary param.
///
/// The trait may be generic over types (`trait Chain<Number, Hash: Clone>
/// where Hash: Debug`): then so are `FooClient<..>`, `FooBatch<..>` and
/// `FooCatalog<..>`, and each instantiation is served, called and
/// described on its own. The bounds the generated code needs of the types
/// that name a type parameter (`Serialize`, `Deserialize`, `JsonSchema`,
/// `Send + 'static` ...) are added on `into_rpc`, on the client's and on
/// the catalog's impls, each side asking only what it uses. Lifetime and
/// const parameters are errors.
///
/// Every key below has a section with an example, compiled and run as a
/// test, in `rpc_runtime::attributes` (a test of this crate fails when a
/// key the parser accepts has none).
///
/// Generated items that users do not name (the spec table, the impls)
/// sit in `const _: () = { ... }` blocks, so two traits in one module
/// never collide; generated code reaches the runtime only through its
/// hidden `__private` module.
///
/// Options on the trait, `#[rpc(...)]`:
/// - `namespace = "eth"`: prefix of every method name (`eth_call`);
/// - `namespace_separator = "."`: after the namespace (default `_`);
/// - `rename_all = "camelCase"`: method and param names (`lowercase`,
///   `UPPERCASE`, `PascalCase`, `camelCase`, `snake_case`,
///   `SCREAMING_SNAKE_CASE`, `kebab-case`, `SCREAMING-KEBAB-CASE`);
/// - `crate = "path"`: where `rpc_runtime` is, if renamed or re-exported;
/// - `title = "..."`, `version = "..."`: the catalog's `info` (default: the
///   trait name and the crate version);
/// - `catalog = false`: no catalog;
/// - `strict_schemas`: every param and result type must implement
///   `JsonSchema` (a compile error otherwise); without it, a type that does
///   not appears in the catalog as any value, with a note;
/// - `subscription_notification = "eth_subscription"`: the method of the
///   notifications carrying subscription items (default `subscription`,
///   after the namespace).
/// - `server_only`: no `FooClient` nor `FooBatch`. Without it, every param
///   type must implement `Serialize` and every result (and subscription
///   item) type `DeserializeOwned`, since the client encodes and decodes
///   them; a type that does not is a compile error at that type. A trait
///   served but never called through its generated client says so:
///
/// ```rust,ignore
/// #[rpc(server_only)]
/// pub trait Index {
///     fn search(&self, query: Query) -> Report; // `Query`: Deserialize only; `Report`: Serialize only
/// }
/// ```
///
/// Options on a method:
/// - `name = "textDocument/didOpen"`: the wire name (the namespace applies);
/// - `notification`: never answered; must return `()`;
/// - `param_structure = "by-name"` or `"by-position"` (default `"either"`);
/// - `whole_params`: the single parameter receives the whole params value;
/// - `allow_extra_params`: ignore surplus positional and unknown named
///   params instead of answering -32602;
/// - `alias = "oldName"`: also served under this older name, listed in
///   the catalog as a deprecated method pointing to the new one
///   (repeatable);
/// - `error(code = -32001, message = "...")`: a declared error, for the
///   catalog (repeatable; the code may be a constant). An error type with
///   `#[derive(RpcError)]` declares its errors for every method returning
///   it, so this is rarely needed;
/// - `requires = "admin"`, `requires(any("admin", "ops"))` or
///   `requires(all("read", "write"))`: only callers whose `Context` holds
///   `Permissions` granting that permission (one of the list, every one of
///   the list) may call the method; others get -32003 before their params
///   are decoded, and the catalog shows `"x-requires"`. On a notification a
///   refusal cannot be answered: it is dropped with a logged warning;
/// - `mcp(hidden)`, or `mcp(name = "list_items", title = "List items",
///   read_only, destructive = false, idempotent, open_world = false)`: the
///   method's MCP tool is left out, or gets that name (`[a-zA-Z0-9_-]`, at
///   most 64 characters, as model APIs accept), title and hints. Instead
///   of a tool, the method may be (one of) a resource,
///   `mcp(resource = "notes://{id}", mime_type = "text/markdown")` (a URI
///   or a URI template of `{var}` and `{+var}` whose variables are the
///   method's params, one for one), a resource list, `mcp(resource_list)`
///   (no params), a prompt, `mcp(prompt)` (its params are the prompt's
///   arguments), or a completion of one argument of a prompt or resource
///   template of the same trait,
///   `mcp(complete(prompt = "review", argument = "language"))` or
///   `mcp(complete(resource = "notes://{id}", argument = "id"))` (one or
///   two params: the partial value, then the other arguments); `name` and
///   `title` go with tools, resources and prompts, the hints with tools
///   only;
/// - `blocking`: a plain `fn` that runs on tokio's blocking thread pool
///   instead of inline on its connection's reader, which goes on reading
///   and answering meanwhile; it is answered when it returns, as an
///   `async fn` is (an error on an `async fn`);
/// - `exclusive`: the call runs alone on its connection: it starts once
///   every call read before it has finished, and later calls wait for it
///   (calls between two exclusive ones still run concurrently); for the
///   methods that change what others read, such as an editor's
///   `didChange` (an error on a subscription method);
/// - `unsubscribe = "unsubscribe_ticks"`: on a subscription method (an
///   `async fn` taking a `sink: SubscriptionSink<Item>` parameter, injected like
///   `Context`, and returning `()` or `Result<(), E>`), the method that
///   ends its subscriptions (the namespace applies; several subscription
///   methods may share one); without it, `unsubscribe_<method>` named as the
///   trait names its methods (`rename_all` applied: `unsubscribeTicks` in
///   camelCase), or `unsubscribe_<name>` after a `name` written, and the
///   namespace then applies (an error if that is another method's name
///   or alias). The
///   subscribe call answers with the subscription id; the client method
///   returns a typed stream. A method
///   whose setup must await takes a `pending: PendingSubscription<Item>` instead
///   and answers the call itself with `pending.accept().await` (which
///   gives the `SubscriptionSink`) or `pending.reject(error).await`; its catalog entry
///   and client method are the same.
///
/// Options on a parameter: `name = "..."`; `///` doc comments on a
/// parameter become its description in the catalog.
///
/// Misuse (generic methods, lifetime or const parameters on the trait,
/// `self` by value or `&mut self`, pattern params,
/// duplicate names after renames, names starting with `rpc.`, a notification
/// returning a value, unknown keys) is a compile error on the offending code;
/// the trait is still emitted, so one mistake does not cascade.
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

/// Declares a typed error once, on the error enum: each variant's code
/// and message, with its fields as the error's `data`.
///
/// ```rust,ignore
/// use rpc_runtime::RpcError;
///
/// pub const NOT_FOUND: i64 = -32004;
///
/// #[derive(Debug, RpcError)]
/// pub enum StoreError {
///     #[rpc(code = NOT_FOUND, message = "Key not found")]
///     NotFound { key: String },                  // data: {"key": ...}
///     #[rpc(code = -32005, message = "Store is read-only")]
///     ReadOnly,                                  // no data
///     #[rpc(code = -32006, message = "Value too large")]
///     TooLarge(u64),                             // data: the value
/// }
/// ```
///
/// This gives `From<StoreError> for ErrorObject` (what the server sends),
/// `FromErrorObject for StoreError` (so the generated client returns
/// `ClientError::App(StoreError::NotFound { .. })`) and `RpcError`, whose
/// errors the catalog lists for every method returning
/// `Result<_, StoreError>`. Field types need `Serialize` and
/// `Deserialize`.
///
/// It also derives `Display`, which writes the variant's message
/// (`StoreError::NotFound { .. }` displays as `Key not found`; the data is
/// not part of it), and `std::error::Error` (with no `source`: fields are
/// data, not wrapped errors), so `ClientError<StoreError>` is an error
/// too and `?` turns it into a `Box<dyn Error>`. `Error` needs `Debug`:
/// derive it beside `RpcError`.
///
/// Every key has a tested example in `rpc_runtime::attributes`.
///
/// Options on the enum, `#[rpc(...)]`:
/// - `crate = "path"`: where `rpc_runtime` is, if renamed or re-exported;
/// - `display = false`: the enum implements `Display` itself (say, to
///   show its data); the derive still implements `std::error::Error`.
///
/// Options on a variant: `code = ...` (a literal or a constant; variants
/// may share a code and are then told apart by their data) and
/// `message = "..."`, both required.
///
/// ```rust,ignore
/// #[derive(Debug, RpcError)]
/// #[rpc(display = false)]
/// pub enum QuotaError {
///     #[rpc(code = -32010, message = "Quota exceeded")]
///     Exceeded { limit: u64 },
/// }
///
/// impl std::fmt::Display for QuotaError {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         match self {
///             QuotaError::Exceeded { limit } => write!(f, "quota of {limit} calls exceeded"),
///         }
///     }
/// }
/// ```
#[proc_macro_derive(RpcError, attributes(rpc))]
pub fn derive_rpc_error(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input) {
        Ok(input) => rpc_error::derive(input).into(),
        Err(err) => err.to_compile_error().into(),
    }
}

/// Makes a struct a form to ask the user for through an MCP client (an
/// elicitation, `Context::elicit`): each field is a field of the form. On
/// an enum of unit variants, makes it a choice: a field of a form whose
/// value the user picks from the variants' names.
///
/// ```rust,ignore
/// use rpc_runtime::mcp::Elicit;
/// use rpc_runtime::serde::Deserialize;
///
/// #[derive(Deserialize, Elicit)]
/// #[serde(crate = "rpc_runtime::serde", rename_all = "camelCase")]
/// struct NewNote {
///     /// The note's title.
///     title: String,                 // required, described
///     pinned: bool,                  // required
///     expires_in_days: Option<u32>,  // `expiresInDays`, may be left out
///     #[serde(default)]
///     tags: String,                  // may be left out ("" then)
///     #[serde(skip)]
///     draft: Vec<u8>,                // not asked for
///     /// How urgent it is.
///     priority: Priority,            // one of "low", "high", required
///     color: Option<Color>,          // one of "Red", "Green", may be left out
/// }
///
/// #[derive(Deserialize, Elicit)]
/// #[serde(crate = "rpc_runtime::serde", rename_all = "lowercase")]
/// enum Priority { Low, High }
///
/// #[derive(Deserialize, Elicit)]
/// #[serde(crate = "rpc_runtime::serde")]
/// enum Color { Red, Green }
/// ```
///
/// This gives `Elicit for NewNote`, whose `requested_schema()` is MCP's
/// `requestedSchema`, `{"type": "object", "properties": {..},
/// "required": [..]}`. What the user fills in is decoded into the struct
/// by serde: derive `Deserialize` beside `Elicit`.
///
/// - Field types: `String`, `bool`, integers, `f32`/`f64`, an enum that
///   derives `Elicit` (a choice), or an `Option` of one (a field the user
///   may leave out). Any other type (a `Vec`, a nested struct) is a
///   compile error at the type: MCP forms are flat.
/// - Field names are serde's: `#[serde(rename = "...")]` on a field,
///   `#[serde(rename_all = "...")]` on the struct (the `deserialize` name
///   when they differ).
/// - `#[serde(default)]` on a field (on the struct: on every field): the
///   user may leave it out.
/// - `#[serde(skip)]` or `#[serde(skip_deserializing)]`: not asked for
///   (and not an `ElicitField`).
/// - A field's `///` doc comment is its description in the form.
///
/// On an enum, the derive gives `ElicitField for Priority` instead, whose
/// `schema()` is `{"type": "string", "enum": ["low", "high"]}`:
///
/// - The names are those serde reads the variants by:
///   `#[serde(rename = "...")]` on a variant, `#[serde(rename_all =
///   "...")]` on the enum (`alias`es are not listed).
/// - `#[serde(skip)]` or `#[serde(skip_deserializing)]` on a variant: not
///   offered (and it may hold data).
/// - The enum's doc comment is not used: the field's describes it.
///
/// Options on the struct or enum, `#[elicit(...)]`:
/// - `crate = "path"`: where `rpc_runtime` is, if renamed or re-exported.
///
/// A union, a tuple or unit struct, a generic struct or enum,
/// `#[serde(flatten)]` on a field and `#[serde(transparent)]`,
/// `#[serde(from = "...")]` or `#[serde(try_from = "...")]` on the struct
/// are compile errors on the offending code: none is a flat object of its
/// own fields. So are, on an enum, a variant with fields, no variant to
/// offer, `#[serde(from = "...")]`/`try_from`, `#[serde(untagged)]`,
/// `#[serde(tag = "...")]` or `#[serde(content = "...")]`, and
/// `#[serde(other)]` or `#[serde(untagged)]` on a variant: serde would not
/// read the enum by one of its names.
#[proc_macro_derive(Elicit, attributes(elicit))]
pub fn derive_elicit(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input) {
        Ok(input) => elicit::derive(input).into(),
        Err(err) => err.to_compile_error().into(),
    }
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

/// Every key the parser accepts has a section with an example in
/// `rpc_runtime::attributes` (`rpc-runtime/src/attributes.md`, whose
/// examples run as rpc-runtime's doc tests): a new key without one fails
/// here.
#[cfg(test)]
mod documented_keys {
    const DOC: &str = include_str!("../../rpc-runtime/src/attributes.md");

    /// The text of the section whose heading is exactly `heading`, up to
    /// the next heading of the same or a higher level (lines in code
    /// blocks are not headings: `# ` hides a line of a doc test).
    fn section(heading: &str) -> Option<String> {
        let level = |line: &str| {
            let hashes = line.bytes().take_while(|&b| b == b'#').count();
            (hashes > 0 && line[hashes..].starts_with(' ')).then_some(hashes)
        };
        let own = level(heading)?;
        let mut lines = DOC.lines().skip_while(|line| *line != heading).skip(1);
        let mut text = String::new();
        let mut in_code = false;
        for line in lines.by_ref() {
            if line.starts_with("```") {
                in_code = !in_code;
            } else if !in_code && level(line).is_some_and(|level| level <= own) {
                break;
            }
            text.push_str(line);
            text.push('\n');
        }
        DOC.lines().any(|line| line == heading).then_some(text)
    }

    /// Every key under `heading(key)` has a section with a Rust example
    /// that uses the key.
    fn check(keys: &[&str], heading: impl Fn(&str) -> String, used: impl Fn(&str) -> String) {
        let mut missing = Vec::new();
        for key in keys {
            let heading = heading(key);
            match section(&heading) {
                Some(text) if text.contains("```") && text.contains(&used(key)) => {}
                _ => missing.push(heading),
            }
        }
        assert!(missing.is_empty(), "attributes.md has no section with an example for: {missing:?}");
    }

    #[test]
    fn every_trait_key_has_an_example() {
        check(crate::attr::TRAIT_KEYS, |key| format!("## `{key}`"), |key| key.to_owned());
    }

    #[test]
    fn every_method_key_has_an_example() {
        check(crate::attr::METHOD_KEYS, |key| format!("## `{key}`"), |key| key.to_owned());
        check(crate::attr::MCP_KEYS, |key| format!("### `mcp({key})`"), |key| key.to_owned());
        check(crate::attr::ERROR_KEYS, |_| "## `error`".to_owned(), |key| format!("{key} ="));
        check(crate::attr::REQUIRES_KEYS, |_| "## `requires`".to_owned(), |key| format!("{key}("));
    }

    #[test]
    fn every_param_key_has_an_example() {
        check(crate::attr::PARAM_KEYS, |key| format!("## `{key}` (parameter)"), |key| format!("{key} ="));
    }

    #[test]
    fn every_rpc_error_key_has_an_example() {
        check(
            crate::rpc_error::ENUM_KEYS,
            |key| match key {
                "crate" => "## `crate` (RpcError)".to_owned(),
                _ => format!("## `{key}`"),
            },
            |key| format!("{key} ="),
        );
        check(crate::rpc_error::VARIANT_KEYS, |key| format!("## `{key}` (RpcError variant)"), |key| format!("{key} ="));
    }

    #[test]
    fn a_missing_key_is_reported() {
        let result = std::panic::catch_unwind(|| check(&["no_such_key"], |key| format!("## `{key}`"), str::to_owned));
        assert!(result.is_err());
    }
}
