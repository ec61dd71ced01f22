// Parameters: plain names, owned types, unique wire names.
use rpc_runtime::rpc;

#[rpc]
pub trait Service {
    fn tuple_pattern(&self, (a, b): (u8, u8)) {
        let _ = (a, b);
    }
    fn pattern_without_body(&self, (a, b): (u8, u8));
    fn wildcard(&self, _: u8);
    fn by_ref(&self, ref name: String) {
        let _ = name;
    }
    fn str_ref(&self, name: &str);
    fn nested_ref(&self, names: Vec<&'static str>);
    fn duplicate(&self, a: u8, #[rpc(name = "a")] b: u8);
}

#[rpc(rename_all = "camelCase")]
pub trait AfterRenameAll {
    fn duplicate(&self, user_id: u8, #[rpc(name = "userId")] other: u8);
}

fn main() {}
