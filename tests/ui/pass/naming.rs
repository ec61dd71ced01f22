//! Wire names: `rename_all` (for methods and params), `namespace` with the
//! default and a custom separator, name overrides (which `rename_all` leaves
//! alone and the namespace still prefixes), param renames, raw identifiers.

use rpc_runtime::{rpc, Router};

/// Regression: the generated spec table was named after the upper-cased
/// trait name, so these two traits in one module collided.
#[rpc]
pub trait FooBar {
    fn one(&self) -> u8;
}

#[rpc]
pub trait Foobar {
    fn two(&self) -> u8;
}

#[rpc(rename_all = "camelCase")]
pub trait Camel {
    fn get_block_by_hash(&self, block_hash: String, full_tx: Option<bool>) -> u8;
    #[rpc(name = "exact_Name")]
    fn overridden(&self, #[rpc(name = "Custom-Param")] some_param: u8) -> u8;
}

#[rpc(namespace = "eth")]
pub trait DefaultSeparator {
    fn block_number(&self) -> u64;
    #[rpc(name = "chainId")]
    fn chain_id(&self) -> u64;
}

#[rpc(namespace = "text", namespace_separator = "/", rename_all = "camelCase")]
pub trait Lsp {
    fn did_open(&self, text_document: String);
    #[rpc(name = "hover")]
    fn on_hover(&self, #[rpc(name = "position")] pos: u32);
}

#[rpc(namespace = "x", namespace_separator = "")]
pub trait NoSeparator {
    fn y(&self);
}

#[rpc(rename_all = "PascalCase")]
pub trait Pascal {
    fn get_value(&self, the_key: u8);
}

#[rpc(rename_all = "SCREAMING_SNAKE_CASE")]
pub trait Screaming {
    fn get_value(&self);
}

#[rpc(rename_all = "kebab-case")]
pub trait Kebab {
    fn get_value(&self);
}

#[rpc(rename_all = "SCREAMING-KEBAB-CASE")]
pub trait ScreamingKebab {
    fn get_value(&self);
}

#[rpc(rename_all = "lowercase")]
pub trait Lower {
    fn get_value(&self);
}

#[rpc(rename_all = "UPPERCASE")]
pub trait Upper {
    fn get_value(&self);
}

#[rpc(rename_all = "snake_case")]
pub trait Snake {
    fn get_value(&self);
}

#[rpc]
pub trait Raw {
    fn r#type(&self, r#in: u8, r#match: u8);
}

struct S;

impl Camel for S {
    fn get_block_by_hash(&self, _: String, _: Option<bool>) -> u8 {
        0
    }
    fn overridden(&self, some_param: u8) -> u8 {
        some_param
    }
}
impl DefaultSeparator for S {
    fn block_number(&self) -> u64 {
        1
    }
    fn chain_id(&self) -> u64 {
        1
    }
}
impl Lsp for S {
    fn did_open(&self, _: String) {}
    fn on_hover(&self, _: u32) {}
}
impl NoSeparator for S {
    fn y(&self) {}
}
impl Pascal for S {
    fn get_value(&self, _: u8) {}
}
impl Screaming for S {
    fn get_value(&self) {}
}
impl Kebab for S {
    fn get_value(&self) {}
}
impl ScreamingKebab for S {
    fn get_value(&self) {}
}
impl Lower for S {
    fn get_value(&self) {}
}
impl Upper for S {
    fn get_value(&self) {}
}
impl Snake for S {
    fn get_value(&self) {}
}
impl Raw for S {
    fn r#type(&self, _: u8, _: u8) {}
}

fn params(router: &Router, method: &str) -> Vec<&'static str> {
    router.spec(method).unwrap().params.iter().map(|p| p.name).collect()
}

fn main() {
    let camel = Camel::into_rpc(S);
    assert_eq!(camel.method_names(), ["exact_Name", "getBlockByHash"]);
    assert_eq!(params(&camel, "getBlockByHash"), ["blockHash", "fullTx"]);
    assert_eq!(params(&camel, "exact_Name"), ["Custom-Param"]);

    assert_eq!(DefaultSeparator::into_rpc(S).method_names(), ["eth_block_number", "eth_chainId"]);

    let lsp = Lsp::into_rpc(S);
    assert_eq!(lsp.method_names(), ["text/didOpen", "text/hover"]);
    assert_eq!(params(&lsp, "text/didOpen"), ["textDocument"]);
    assert_eq!(params(&lsp, "text/hover"), ["position"]);

    assert_eq!(NoSeparator::into_rpc(S).method_names(), ["xy"]);

    let pascal = Pascal::into_rpc(S);
    assert_eq!(pascal.method_names(), ["GetValue"]);
    assert_eq!(params(&pascal, "GetValue"), ["TheKey"]);
    assert_eq!(Screaming::into_rpc(S).method_names(), ["GET_VALUE"]);
    assert_eq!(Kebab::into_rpc(S).method_names(), ["get-value"]);
    assert_eq!(ScreamingKebab::into_rpc(S).method_names(), ["GET-VALUE"]);
    assert_eq!(Lower::into_rpc(S).method_names(), ["get_value"]);
    assert_eq!(Upper::into_rpc(S).method_names(), ["GET_VALUE"]);
    assert_eq!(Snake::into_rpc(S).method_names(), ["get_value"]);

    let raw = Raw::into_rpc(S);
    assert_eq!(raw.method_names(), ["type"]);
    assert_eq!(params(&raw, "type"), ["in", "match"]);
}
