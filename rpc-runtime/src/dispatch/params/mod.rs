//! Decoding a request's `params` straight from the raw JSON, by position or
//! by name, against the method's declared parameter list.
//!
//! [`Params`] is what a handler receives. Generated handlers decode every
//! declared parameter in order, so their params are read in a single pass
//! over the text ([`single_pass`]); anything that pass does not handle
//! plainly (a key out of order, a value that does not decode, too many
//! params) and every handler registered by hand go through the split path
//! instead ([`split`], then [`decode`]), which finds each parameter's text
//! first and decodes it on demand. The split path is the reference: the
//! single pass only ever answers what it would, and leaves every error to
//! it, so both give the same messages ([`errors`]).

mod decode;
pub(crate) mod errors;
mod shape;
mod single_pass;
mod split;

use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::spec::MethodSpec;
use crate::wire::ErrorObject;

use single_pass::{Cursor, Located};
use split::SlotBuf;

/// The params of one call, split against a [`MethodSpec`] but not yet
/// decoded: each entry borrows its bytes from the request.
pub struct Params<'a> {
    spec: &'static MethodSpec,
    raw: Option<&'a RawValue>,
    slots: Slots<'a>,
    /// The call has no id: nobody receives its answer.
    pub(crate) notification: bool,
}

impl fmt::Debug for Params<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Params").field("method", &self.spec.name).field("raw", &self.raw).finish()
    }
}

/// Where each parameter's text is found.
enum Slots<'a> {
    /// The method takes its params whole: the one parameter is all of them.
    Whole,
    /// Not split yet (see [`Params::unsplit`]).
    Unsplit,
    /// The request has no `params`: every parameter is absent.
    Absent,
    /// One entry per declared parameter (its JSON text); `None` when absent.
    Split(SlotBuf<'a>),
    /// Read in declaration order straight from the text, in a single pass.
    Stream(Cursor),
}

impl<'a> Params<'a> {
    /// Splits `raw` (the request's `params` member, if present) by position or
    /// by name as `spec` allows. Errors are -32602 with a message naming the
    /// offending parameter.
    pub fn parse(raw: Option<&'a RawValue>, spec: &'static MethodSpec) -> Result<Self, ErrorObject> {
        Self::parse_for(raw, spec, false)
    }

    /// [`Params::parse`], or with `decodes_all` (the handler decodes every
    /// declared parameter, in order, as generated ones do) params are not
    /// split up front: splitting walks the whole text only to find the
    /// values that the decodes then walk again. Each [`Params::decode`]
    /// reads its value where the one before ended instead, and whatever
    /// that single pass does not handle is split and decoded as `parse`
    /// would have, so the errors are the same.
    pub(crate) fn parse_for(
        raw: Option<&'a RawValue>,
        spec: &'static MethodSpec,
        decodes_all: bool,
    ) -> Result<Self, ErrorObject> {
        let mut params = Self::unsplit(raw, spec, decodes_all, false);
        params.split_if_needed()?;
        Ok(params)
    }

    /// [`Params::parse_for`] in two steps, so that the params are built
    /// where they stay: this one cannot fail, and leaves params that are
    /// not read in a single pass to [`Params::split_if_needed`].
    // This and `split_if_needed` run on every call: `#[inline]`, so that
    // the router (another codegen unit) builds the params in place.
    #[inline]
    pub(crate) fn unsplit(
        raw: Option<&'a RawValue>,
        spec: &'static MethodSpec,
        decodes_all: bool,
        notification: bool,
    ) -> Self {
        let slots = match raw {
            // Without params, a whole-params method reads them as absent too.
            None => Slots::Absent,
            Some(_) if spec.whole => Slots::Whole,
            Some(raw) => match Cursor::start(raw.get(), spec).filter(|_| decodes_all) {
                Some(cursor) => Slots::Stream(cursor),
                None => Slots::Unsplit,
            },
        };
        Params { spec, raw, slots, notification }
    }

    /// Splits params that [`Params::unsplit`] left whole; the errors are
    /// [`Params::parse`]'s.
    #[inline]
    pub(crate) fn split_if_needed(&mut self) -> Result<(), ErrorObject> {
        if let (Slots::Unsplit, Some(raw)) = (&self.slots, self.raw) {
            self.slots = Slots::Split(split::split(raw, self.spec)?);
        }
        Ok(())
    }

    /// The wire name of the method called.
    pub fn method(&self) -> &'static str {
        self.spec.name
    }

    /// Whether the call is a notification: it has no id, and its answer
    /// (a result or an error) is never sent.
    pub fn is_notification(&self) -> bool {
        self.notification
    }

    /// The request's whole `params` member, as received (`None` when the
    /// request has none): for a handler that reads params its own way, as
    /// a protocol's methods registered with [`Router::register`](crate::Router::register) may.
    pub fn raw(&self) -> Option<&'a RawValue> {
        self.raw
    }

    /// Decodes parameter `index` as `T`. An absent optional parameter decodes
    /// from `null` (so `Option<T>` yields `None`).
    pub fn decode<T: DeserializeOwned>(&self, index: usize) -> Result<T, ErrorObject> {
        self.decode_as(index, Some(shape::asks_for_object::<T>))
    }

    /// [`Params::decode`]; `probe` (for params taken whole) says whether
    /// `T` reads itself from an object only.
    // Every parameter of a valid call to a generated handler is read here,
    // so this is inlined into the handler, the single pass with it. Always,
    // also unoptimized: a function of its own per `T` would be compiled in
    // a codegen unit of its own in each crate that decodes params. What is
    // off the single pass is one call out, to `decode_slot`.
    #[inline(always)]
    pub(crate) fn decode_as<T: DeserializeOwned>(
        &self,
        index: usize,
        probe: Option<fn() -> bool>,
    ) -> Result<T, ErrorObject> {
        if let Slots::Stream(cursor) = &self.slots {
            let text = self.raw.map_or("", RawValue::get);
            match cursor.locate(text, self.spec, index) {
                Located::At(at) => match single_pass::decode_prefix::<T>(&text[at..]) {
                    Ok((value, used)) if cursor.advance(text, self.spec, index, at + used) => return Ok(value),
                    Ok(_) => {}
                    // The split finds this same value; its error is the
                    // answer unless the split has one to put first.
                    Err(err) => return self.decode_slot(index, self.find(index, probe), Some(err)),
                },
                Located::Absent => return self.decode_slot(index, Ok(None), None),
                Located::Elsewhere => {}
            }
        }
        // Not read in a single pass, or the pass gave up on this one: the
        // split path finds it, decodes it and says what is wrong, if anything.
        self.decode_slot(index, self.find(index, probe), None)
    }
}

/// Named params (an object) rewritten as the positional params (an
/// array) of a `by-position` method, checked as by-name params are:
/// unknown and repeated names and missing required params are -32602
/// (`Invalid params`). For protocols that only send names (MCP's tool
/// arguments) calling methods that take positions.
///
/// ```
/// use rpc_runtime::dispatch::named_to_positional;
/// use rpc_runtime::rpc;
/// use rpc_runtime::serde_json::value::RawValue;
///
/// #[rpc]
/// pub trait Calc {
///     /// Subtracts.
///     #[rpc(param_structure = "by-position")]
///     fn subtract(&self, minuend: i64, subtrahend: i64) -> i64;
/// }
///
/// let spec = CalcCatalog::catalog().method("subtract").unwrap().spec;
/// let named = RawValue::from_string(r#"{"subtrahend": 23, "minuend": 42}"#.into()).unwrap();
/// assert_eq!(named_to_positional(Some(&named), spec).unwrap().get(), "[42,23]");
/// let unknown = RawValue::from_string(r#"{"minuend": 1, "subtrahend": 2, "x": 3}"#.into()).unwrap();
/// assert_eq!(named_to_positional(Some(&unknown), spec).unwrap_err().code(), -32602);
/// ```
pub fn named_to_positional(raw: Option<&RawValue>, spec: &'static MethodSpec) -> Result<Box<RawValue>, ErrorObject> {
    let slots = match raw {
        Some(raw) if raw.get().starts_with('{') => split::split_named(raw, spec)?,
        Some(_) => return Err(ErrorObject::invalid_params("params must be an object of named params")),
        None => SlotBuf::new(spec.params.len()),
    };
    let mut array = String::from("[");
    for (index, param) in spec.params.iter().enumerate() {
        let text = match slots.get(index) {
            Some(text) => text,
            None if param.optional => "null",
            None => return Err(errors::missing(spec, param)),
        };
        if index > 0 {
            array.push(',');
        }
        array.push_str(text);
    }
    array.push(']');
    RawValue::from_string(array).map_err(|err| ErrorObject::invalid_params(format!("malformed params: {err}")))
}
