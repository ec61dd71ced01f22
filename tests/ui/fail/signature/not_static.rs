// A service value is shared by every request of every connection, for as
// long as the server runs: it cannot borrow.
use rpc_runtime::rpc;

#[rpc]
pub trait Service {
    fn len(&self) -> usize;
}

pub struct Borrowing<'a> {
    pub text: &'a str,
}

impl<'a> Service for Borrowing<'a> {
    fn len(&self) -> usize {
        self.text.len()
    }
}

fn main() {}
