// Method- and parameter-level options: every mistake in one trait is
// reported in one build.
use rpc_runtime::rpc;

#[rpc]
pub trait Service {
    #[rpc(nmae = "x")]
    fn unknown_method_key(&self);

    #[rpc(param_structure = "positional")]
    fn bad_param_structure(&self, a: u8);

    #[rpc(whole_params, param_structure = "by-name")]
    fn whole_params_with_structure(&self, all: Vec<u8>);

    fn unknown_param_key(&self, #[rpc(rename = "b")] a: u8);

    #[rpc(notification = true)]
    fn flag_with_value(&self);

    #[rpc(name)]
    fn name_without_value(&self);

    #[rpc(name = 5)]
    fn name_not_a_string(&self);

    #[rpc]
    fn bare_attribute(&self);

    #[rpc(name = "a", name = "b")]
    fn duplicate_key(&self);

    #[rpc(notification)]
    #[rpc(notification)]
    fn duplicate_across_attributes(&self);

    #[rpc = "x"]
    fn attribute_with_value(&self);
}

fn main() {}
