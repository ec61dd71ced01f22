//! Collects every error found in one expansion so the user sees them all.

use std::cell::RefCell;
use std::fmt::Display;

use quote::ToTokens;

/// Error sink shared by the parse and check layers. As serde_derive's
/// `Ctxt`: [`check`](Ctxt::check) must be called before it is dropped (it
/// panics otherwise), so that no code path can lose the errors it
/// recorded.
pub struct Ctxt {
    /// `None` once [`check`](Ctxt::check) has taken the errors.
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Default for Ctxt {
    fn default() -> Self {
        Ctxt { errors: RefCell::new(Some(Vec::new())) }
    }
}

impl Ctxt {
    /// Records an error pointing at `tokens`.
    pub fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.syn_error(syn::Error::new_spanned(tokens, message));
    }

    /// Records an already built error.
    pub fn syn_error(&self, error: syn::Error) {
        self.errors.borrow_mut().as_mut().expect("Ctxt used after check").push(error);
    }

    /// All errors combined into one, or `Ok` if there were none.
    pub fn check(self) -> Result<(), syn::Error> {
        let errors = self.errors.borrow_mut().take().expect("Ctxt checked twice");
        let mut errors = errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        // Not while unwinding: a second panic would abort, hiding the first.
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to check for errors");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Ctxt;

    #[test]
    fn checked_errors_are_returned() {
        let cx = Ctxt::default();
        cx.error_spanned_by(quote::quote!(a), "first");
        cx.syn_error(syn::Error::new(proc_macro2::Span::call_site(), "second"));
        let errors: Vec<String> = cx.check().unwrap_err().into_iter().map(|error| error.to_string()).collect();
        assert_eq!(errors, ["first", "second"]);
        assert!(Ctxt::default().check().is_ok());
    }

    #[test]
    #[should_panic = "forgot to check for errors"]
    fn dropped_unchecked_panics() {
        let cx = Ctxt::default();
        cx.error_spanned_by(quote::quote!(a), "never reported");
    }

    #[test]
    #[should_panic = "forgot to check for errors"]
    fn dropped_unchecked_without_errors_panics() {
        drop(Ctxt::default());
    }

    #[test]
    fn no_second_panic_while_unwinding() {
        // A panic while a `Ctxt` is alive unwinds through its drop: only
        // the first panic is reported, the process does not abort.
        let result = std::panic::catch_unwind(|| {
            let _cx = Ctxt::default();
            panic!("the first panic");
        });
        let payload = result.unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"the first panic"));
    }
}
