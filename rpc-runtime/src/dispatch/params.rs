//! Decoding a request's `params` straight from the raw JSON, by position or
//! by name, against the method's declared parameter list.

use std::borrow::Cow;
use std::fmt;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;

use serde::de::{DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::strict;
use crate::spec::{MethodSpec, ParamSpec, ParamStructure};
use crate::wire::ErrorObject;
use crate::wire::words::{has_byte, word_at};

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

enum Slots<'a> {
    Whole,
    /// Not split yet (see [`Params::unsplit`]).
    Unsplit,
    /// The request has no `params`: every parameter is absent.
    Absent,
    /// One entry per declared parameter (its JSON text); `None` when absent.
    Split(SlotBuf<'a>),
    /// Read in declaration order straight from the text, one walk in all
    /// (see [`Params::parse_for`]).
    Stream(Cursor),
}

/// Where a [`Slots::Stream`] read is: the params text is walked once, each
/// [`Params::decode`] taking the next value where the last one ended.
/// Atomics (only ever used `Relaxed`, plain loads and stores) keep
/// `Params` `Sync` while `decode` takes `&self`.
struct Cursor {
    /// Byte offset in the params text where parameter `next` starts (its
    /// key, for an object), or of the closing bracket once every given
    /// param is read.
    at: AtomicUsize,
    /// The index of the parameter read next.
    next: AtomicUsize,
    /// An object (by name) rather than an array (by position).
    named: bool,
}

/// Most methods declare few parameters: up to this many are split without
/// a heap allocation.
const INLINE_SLOTS: usize = 6;

/// One slot per declared parameter, inline when there are few.
enum SlotBuf<'a> {
    Inline([Option<&'a str>; INLINE_SLOTS]),
    Heap(Vec<Option<&'a str>>),
}

impl<'a> SlotBuf<'a> {
    /// `len` empty slots.
    fn new(len: usize) -> Self {
        if len <= INLINE_SLOTS { SlotBuf::Inline([None; INLINE_SLOTS]) } else { SlotBuf::Heap(vec![None; len]) }
    }

    /// Slot `index`, which must be below the length given to `new`.
    fn slot(&mut self, index: usize) -> &mut Option<&'a str> {
        match self {
            SlotBuf::Inline(slots) => &mut slots[index],
            SlotBuf::Heap(slots) => &mut slots[index],
        }
    }

    fn get(&self, index: usize) -> Option<&'a str> {
        match self {
            SlotBuf::Inline(slots) => slots[index],
            SlotBuf::Heap(slots) => slots[index],
        }
    }
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
    /// reads its value where the one before ended instead (for an object,
    /// while its keys come in declaration order), and the last one checks
    /// that nothing follows. Anything else (a key out of order, too many
    /// params, a value that does not decode) splits and decodes as `parse`
    /// would have, so the errors are the same, "too many params" before a
    /// type error included.
    #[inline(always)]
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
    /// not read in one walk to [`Params::split_if_needed`].
    #[inline(always)]
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
    #[inline(always)]
    pub(crate) fn split_if_needed(&mut self) -> Result<(), ErrorObject> {
        match self.slots {
            Slots::Unsplit => self.split_in_place(),
            _ => Ok(()),
        }
    }

    #[inline(never)]
    fn split_in_place(&mut self) -> Result<(), ErrorObject> {
        self.slots = Self::split(self.raw, self.spec)?.slots;
        Ok(())
    }

    /// [`Params::parse_for`] splitting the params up front: each param's
    /// text is found first, then decoded on demand (in any order).
    fn split(raw: Option<&'a RawValue>, spec: &'static MethodSpec) -> Result<Self, ErrorObject> {
        let slots = match raw {
            None => return Ok(Params { spec, raw, slots: Slots::Absent, notification: false }),
            Some(raw) => match first_byte(raw) {
                b'[' => {
                    if spec.structure == ParamStructure::ByName {
                        return Err(structure_error(spec, "an array"));
                    }
                    split_positional(raw, spec)?
                }
                b'{' => {
                    if spec.structure == ParamStructure::ByPosition {
                        return Err(structure_error(spec, "an object"));
                    }
                    split_named(raw, spec)?
                }
                // The engine rejects other shapes with -32600 before we get here.
                _ => return Err(ErrorObject::invalid_params("params must be an array or an object")),
            },
        };
        Ok(Params { spec, raw, slots: Slots::Split(slots), notification: false })
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
        self.decode_as(index, Some(asks_for_object::<T>))
    }

    /// [`Params::decode`]; `probe` (for params taken whole) says whether
    /// `T` reads itself from an object only. Everything but the decode of
    /// the value itself is code of its own, not one copy per `T`.
    #[inline(always)]
    pub(crate) fn decode_as<T: DeserializeOwned>(
        &self,
        index: usize,
        probe: Option<fn() -> bool>,
    ) -> Result<T, ErrorObject> {
        // The one-walk read first: generated handlers take it on every call.
        let detour = match &self.slots {
            Slots::Stream(cursor) => {
                let text = self.raw.map_or("", RawValue::get);
                match cursor.locate(text, self.spec, index) {
                    Located::At(at) => match decode_prefix::<T>(&text[at..]) {
                        Ok((value, used)) if cursor.advance(text, self.spec, index, at + used) => return Ok(value),
                        Ok(_) => Detour::Split,
                        Err(err) => Detour::Failed(at, err),
                    },
                    Located::Absent => Detour::Absent,
                    Located::Split => Detour::Split,
                }
            }
            _ => Detour::Slot,
        };
        self.decode_off_stream(index, detour, probe)
    }
}

/// Where [`Cursor::locate`] found a parameter (small enough to be
/// returned in registers).
enum Located {
    /// Its value starts at this offset.
    At(usize),
    /// Every given param is read: this one is absent.
    Absent,
    /// Not where the cursor is: the split path says what.
    Split,
}

/// Why a parameter is not read on the one-walk path (see [`Cursor`]).
enum Detour {
    /// Every given param is read: this one is absent.
    Absent,
    /// Anything else (out of order, a key other than expected, too many
    /// params): the split path says what.
    Split,
    /// The value at this offset failed to decode with this error; the
    /// split path says whether another error comes first.
    Failed(usize, serde_json::Error),
    /// The params are not read in one walk: the value is in its slot.
    Slot,
}

/// What a parameter off the one-walk path is decoded from.
enum Source<'a> {
    /// Its text.
    Text(&'a str),
    /// Its text, which failed to decode with this error already.
    Failed(&'a str, serde_json::Error),
    /// `null`: the parameter is absent, and optional.
    Null,
}

impl<'a> Params<'a> {
    /// Parameter `index`, off the one-walk path: its value or error as
    /// the split path gives it. The one function per `T` that every such
    /// case shares; what to decode is [`Params::source`]'s to say, once
    /// for every type. Unoptimized, inlined into its caller: as a function
    /// of its own it would be the only code of this module instantiated in
    /// the crate that decodes a `T`, a codegen unit of its own there.
    #[cold]
    #[cfg_attr(not(debug_assertions), inline(never))]
    #[cfg_attr(debug_assertions, inline(always))]
    fn decode_off_stream<T: DeserializeOwned>(
        &self,
        index: usize,
        detour: Detour,
        probe: Option<fn() -> bool>,
    ) -> Result<T, ErrorObject> {
        // Matched rather than `?` and closures, which would be code of
        // their own for every `T`.
        let (text, err) = match self.source(index, detour, probe) {
            Ok(Source::Text(text)) => match strict::from_str(text) {
                Ok(value) => return Ok(value),
                Err(err) => (text, err),
            },
            Ok(Source::Failed(text, err)) => (text, err),
            Ok(Source::Null) => {
                return match strict::from_str("null") {
                    Ok(value) => Ok(value),
                    Err(_) => Err(missing_error(self.spec, &self.spec.params[index])),
                };
            }
            Err(err) => return Err(err),
        };
        // JSON's `-0` is an integer zero, but serde_json reads it as the
        // float `-0.0`, which integer types refuse: on failure, and only if
        // the text has a `-0`, decode once more with each `-0` read as `0`
        // (so a float parameter still gets `-0.0` the first time).
        if let Some(again) = without_negative_zero(text)
            && let Ok(value) = strict::from_str(&again)
        {
            return Ok(value);
        }
        Err(decode_error(self.spec, &self.spec.params[index], &err))
    }

    /// What parameter `index` is decoded from, off the one-walk path for
    /// `detour`: found in its slot, or by splitting the params as
    /// [`Params::parse`] would have (so that "too many params" comes
    /// before a type error). Params taken whole that are an array, where
    /// `probe` says the type reads itself from an object only, are refused.
    fn source(&self, index: usize, detour: Detour, probe: Option<fn() -> bool>) -> Result<Source<'a>, ErrorObject> {
        let text = match detour {
            Detour::Absent => None,
            Detour::Split => return Params::split(self.raw, self.spec)?.source(index, Detour::Slot, probe),
            Detour::Failed(at, err) => {
                let raw = self.raw.map_or("", RawValue::get);
                let rest = raw[at..].as_ptr();
                // By position, the split could only put "too many params"
                // first: the elements are counted, and the failed one's
                // text kept, without building the slots (which, with the
                // params built around them, cost about as much as the walk
                // again: some 250 instructions of an invalid param's answer).
                if raw.starts_with('[')
                    && let Some(text) = positional_slot(raw, self.spec, index)?.filter(|text| text.as_ptr() == rest)
                {
                    return Ok(Source::Failed(text, err));
                }
                let split = Params::split(self.raw, self.spec)?;
                // The same value (not only the same text: the same place)
                // failed already; it is not decoded a second time.
                if let Slots::Split(slots) = &split.slots
                    && let Some(text) = slots.get(index).filter(|text| text.as_ptr() == rest)
                {
                    return Ok(Source::Failed(text, err));
                }
                return split.source(index, Detour::Slot, probe);
            }
            Detour::Slot => match &self.slots {
                Slots::Split(slots) => slots.get(index),
                Slots::Whole => self.raw.map(RawValue::get),
                Slots::Absent | Slots::Stream(_) => None,
                Slots::Unsplit => return Params::split(self.raw, self.spec)?.source(index, Detour::Slot, probe),
            },
        };
        let param = &self.spec.params[index];
        match text {
            // serde also reads a struct from an array of its fields, in
            // order; the catalog describes such params as an object
            // (`by-name`), so an array is refused as the catalog says.
            Some(text) if self.spec.whole && text.starts_with('[') && probe.is_some_and(|asks| asks()) => {
                Err(structure_error(self.spec, "an array"))
            }
            Some(text) => Ok(Source::Text(text)),
            None if !param.optional && !self.spec.whole => Err(missing_error(self.spec, param)),
            None => Ok(Source::Null),
        }
    }
}

impl Cursor {
    /// A cursor at the first param of `text` (raw JSON, so valid), when
    /// `spec` takes it in this shape and has params to read; `None` sends
    /// the params the split way (which also finds `[1]` too many for a
    /// method without params).
    #[inline(always)]
    fn start(text: &str, spec: &MethodSpec) -> Option<Self> {
        let named = match text.as_bytes().first() {
            Some(b'[') => false,
            Some(b'{') => true,
            _ => return None,
        };
        let refused = if named { ParamStructure::ByPosition } else { ParamStructure::ByName };
        if spec.structure == refused || spec.params.is_empty() {
            return None;
        }
        Some(Cursor { at: AtomicUsize::new(1), next: AtomicUsize::new(0), named })
    }

    /// Where the value of parameter `index` starts in `text`, if it is the
    /// next one. Inlined into every param's decode when optimizing (a call
    /// cost an invalid param's answer some 25 instructions); unoptimized,
    /// one copy in this crate is shared by them, as it is code of its own,
    /// not `T`'s (an `#[inline]` copy would be a codegen unit of its own in
    /// the crate that instantiates the decode).
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn locate(&self, text: &str, spec: &MethodSpec, index: usize) -> Located {
        if self.next.load(Relaxed) != index {
            return Located::Split;
        }
        let bytes = text.as_bytes();
        let at = skip_whitespace(bytes, self.at.load(Relaxed));
        if matches!(bytes.get(at), Some(b']' | b'}')) {
            // Fewer params given than declared: the rest are absent.
            self.next.store(index + 1, Relaxed);
            return Located::Absent;
        }
        if !self.named {
            return Located::At(at);
        }
        match key_end(bytes, at, spec.params[index].name) {
            Some(end) => Located::At(skip_whitespace(bytes, end)),
            None => Located::Split,
        }
    }

    /// Moves past parameter `index`, whose value ends at `end`: false
    /// when what follows sends the params the split way. Unoptimized, not
    /// `#[inline]`, as [`Cursor::locate`] is not.
    #[cfg_attr(not(debug_assertions), inline)]
    fn advance(&self, text: &str, spec: &MethodSpec, index: usize, end: usize) -> bool {
        let bytes = text.as_bytes();
        let mut at = skip_whitespace(bytes, end);
        let last = index + 1 == spec.params.len();
        match bytes.get(at) {
            Some(b',') if !last => at += 1,
            Some(b']' | b'}') => {}
            // Surplus positional params are ignored when allowed; surplus
            // names may repeat one already read, which the split refuses.
            Some(b',') if spec.allow_extra && !self.named => {}
            _ => return false,
        }
        self.at.store(at, Relaxed);
        self.next.store(index + 1, Relaxed);
        true
    }
}

/// The offset just past `"name":` when the key at `at` is `name` written
/// without escapes (any other spelling takes the split path).
#[inline(always)]
fn key_end(bytes: &[u8], at: usize, name: &str) -> Option<usize> {
    let close = at + 1 + name.len();
    if bytes.get(at) != Some(&b'"')
        || bytes.get(at + 1..close) != Some(name.as_bytes())
        || bytes.get(close) != Some(&b'"')
    {
        return None;
    }
    let colon = skip_whitespace(bytes, close + 1);
    (bytes.get(colon) == Some(&b':')).then_some(colon + 1)
}

/// The offset of the first byte at or after `at` that is not JSON whitespace.
#[inline(always)]
fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\n' | b'\t' | b'\r')) {
        at += 1;
    }
    at
}

/// Decodes the value at the start of `text` (leading whitespace allowed)
/// and says how many bytes it took; what follows is left for the caller.
/// Through [`strict`], as every param is: see [`strict::from_str`].
#[inline(always)]
fn decode_prefix<T: DeserializeOwned>(text: &str) -> Result<(T, usize), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = T::deserialize(strict::Strict(&mut de))?;
    Ok((value, de.into_iter::<IgnoredAny>().byte_offset()))
}

/// Whether `T` reads itself from a JSON object only: a struct or a map,
/// possibly inside `Option` or a newtype. Found by letting `T` start to
/// deserialize from a probe that records what it asks for.
fn asks_for_object<T: DeserializeOwned>() -> bool {
    let mut object = false;
    let _ = T::deserialize(ShapeProbe { object: &mut object });
    object
}

/// A deserializer that has no data: it notes whether the type asked for a
/// struct or a map, looks through `Option` and newtypes, and fails.
struct ShapeProbe<'p> {
    object: &'p mut bool,
}

impl ShapeProbe<'_> {
    fn stop<V>(self) -> Result<V, serde::de::value::Error> {
        Err(serde::de::Error::custom("shape probe"))
    }
}

macro_rules! probe_stops {
    ($($method:ident),*) => {$(
        fn $method<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            self.stop()
        }
    )*};
}

impl<'de> Deserializer<'de> for ShapeProbe<'_> {
    type Error = serde::de::value::Error;

    probe_stops!(
        deserialize_any,
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_unit,
        deserialize_seq,
        deserialize_identifier,
        deserialize_ignored_any
    );

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_some(self)
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }
    fn deserialize_map<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        *self.object = true;
        self.stop()
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        *self.object = true;
        self.stop()
    }
    fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &'static str, _: V) -> Result<V::Value, Self::Error> {
        self.stop()
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Self::Error> {
        self.stop()
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.stop()
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.stop()
    }
}

/// `text` (valid JSON) with the sign of every `-0` number outside strings
/// blanked, or `None` if it has none. `-0.5` and `-0e1` keep their sign.
#[cold]
fn without_negative_zero(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    // A string, `true`, `false` or `null` (a usual wrong value) holds no
    // number: not walked.
    if matches!(bytes.first(), Some(b'"' | b't' | b'f' | b'n')) {
        return None;
    }
    let mut signs = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // Skip the string: an escape is a backslash and one character.
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'-' if bytes.get(i + 1) == Some(&b'0')
                && !matches!(bytes.get(i + 2), Some(b'.' | b'e' | b'E' | b'0'..=b'9')) =>
            {
                signs.push(i);
            }
            _ => {}
        }
        i += 1;
    }
    if signs.is_empty() {
        return None;
    }
    let mut owned = text.as_bytes().to_vec();
    for at in signs {
        owned[at] = b' '; // whitespace before a number is still valid JSON
    }
    String::from_utf8(owned).ok()
}

fn first_byte(raw: &RawValue) -> u8 {
    raw.get().as_bytes().first().copied().unwrap_or(b' ')
}

#[cold]
fn structure_error(spec: &MethodSpec, got: &str) -> ErrorObject {
    let wanted = match spec.structure {
        ParamStructure::ByName => "by name (an object)",
        _ if spec.whole => "by name (an object)",
        _ => "by position (an array)",
    };
    ErrorObject::invalid_params(format!("method `{}` takes params {wanted}, got {got}", spec.name))
}

#[cold]
fn decode_error(spec: &MethodSpec, param: &ParamSpec, err: &serde_json::Error) -> ErrorObject {
    use std::fmt::Write;
    // Built in one buffer: `invalid <what> of method `<name>`: <reason>[ (expected <type>)]`.
    let mut message = String::with_capacity(128);
    if spec.whole {
        message.push_str("invalid params");
    } else {
        message.push_str("invalid parameter `");
        message.push_str(param.name);
        message.push('`');
    }
    message.push_str(" of method `");
    message.push_str(spec.name);
    message.push_str("`: ");
    let reason = message.len();
    // serde_json appends " at line 1 column 7", which points into the
    // parameter's own slice and would only confuse a caller. The
    // formatting stops where it starts (its numbers, formatted only to be
    // cut, were about 150 instructions of an invalid param's answer)...
    if write!(UpToPosition(&mut message), "{err}").is_err() {
        return with_expected(message, reason, param);
    }
    // ...or, should serde_json write it otherwise, it is cut by its
    // length, known from the numbers (no search for it), when there.
    let position = match err.line() {
        0 => None,
        line => Some(" at line ".len() + decimal_len(line) + " column ".len() + decimal_len(err.column())),
    };
    match position {
        Some(len) if message.len() >= reason + len && message[message.len() - len..].starts_with(" at line ") => {
            message.truncate(message.len() - len);
        }
        _ => {
            if let Some(pos) = message[reason..].rfind(" at line ") {
                message.truncate(reason + pos);
            }
        }
    }
    with_expected(message, reason, param)
}

/// The -32602 error of `message`, whose reason (from `reason` on) gets
/// the declared type of `param` when it does not say what was expected
/// (serde usually does).
fn with_expected(mut message: String, reason: usize, param: &ParamSpec) -> ErrorObject {
    if !says_expected(&message.as_bytes()[reason..]) {
        message.push_str(" (expected ");
        message.push_str(param.ty);
        message.push(')');
    }
    ErrorObject::invalid_params(message)
}

/// Appends to a message what serde_json's `Display` of an error writes,
/// and stops the formatting (with an error) at the piece that starts the
/// position, `" at line "`.
struct UpToPosition<'m>(&'m mut String);

impl fmt::Write for UpToPosition<'_> {
    fn write_str(&mut self, piece: &str) -> fmt::Result {
        if piece == " at line " {
            return Err(fmt::Error);
        }
        self.0.push_str(piece);
        Ok(())
    }
}

/// How many decimal digits `n` has.
fn decimal_len(mut n: usize) -> usize {
    let mut len = 1;
    while n >= 10 {
        n /= 10;
        len += 1;
    }
    len
}

#[cold]
fn missing_error(spec: &MethodSpec, param: &ParamSpec) -> ErrorObject {
    if spec.whole {
        return ErrorObject::invalid_params(format!("method `{}` requires params ({})", spec.name, param.ty));
    }
    ErrorObject::invalid_params(format!(
        "missing required parameter `{}` ({}) of method `{}`",
        param.name, param.ty, spec.name
    ))
}

#[inline(always)]
fn split_positional<'a>(raw: &'a RawValue, spec: &'static MethodSpec) -> Result<SlotBuf<'a>, ErrorObject> {
    let declared = spec.params.len();
    let mut slots = SlotBuf::new(declared);
    let given = for_each_element(raw.get(), |index, element| {
        if index < declared {
            *slots.slot(index) = Some(element);
        }
    })
    .ok_or_else(malformed_array)?;
    check_count(spec, given)?;
    Ok(slots)
}

/// The text of element `index` of positional params `text` (`None` when
/// there are fewer), with [`split_positional`]'s errors: what the split
/// would say of that parameter, without the slots of the others.
fn positional_slot<'a>(text: &'a str, spec: &'static MethodSpec, index: usize) -> Result<Option<&'a str>, ErrorObject> {
    let mut found = None;
    let given = for_each_element(text, |at, element| {
        if at == index {
            found = Some(element);
        }
    })
    .ok_or_else(malformed_array)?;
    check_count(spec, given)?;
    Ok(found)
}

#[cold]
fn malformed_array() -> ErrorObject {
    ErrorObject::invalid_params("malformed params: expected an array")
}

/// "Too many params" when `given` positional params are more than `spec`
/// declares and it does not allow extra ones.
#[inline(always)]
fn check_count(spec: &MethodSpec, given: usize) -> Result<(), ErrorObject> {
    let declared = spec.params.len();
    if given > declared && !spec.allow_extra {
        return Err(too_many(spec, given));
    }
    Ok(())
}

#[cold]
fn too_many(spec: &MethodSpec, given: usize) -> ErrorObject {
    ErrorObject::invalid_params(format!(
        "too many params: method `{}` takes at most {}, got {given}",
        spec.name,
        spec.params.len()
    ))
}

/// Calls `each(index, text)` for every element of a JSON array and returns
/// how many there are (`None` if `array` is not an array).
///
/// `array` is the text of a `RawValue`, so it is valid JSON already: this
/// only has to find the top-level commas, skipping over strings and
/// counting brackets, instead of parsing every element a second
/// time before it is decoded. Nesting depth is a counter, not recursion.
fn for_each_element<'a>(array: &'a str, mut each: impl FnMut(usize, &'a str)) -> Option<usize> {
    let array = array.trim_ascii();
    let inner = array.strip_prefix('[')?.strip_suffix(']')?;
    if inner.trim_ascii().is_empty() {
        return Some(0);
    }
    let bytes = inner.as_bytes();
    let (mut depth, mut start, mut count, mut i) = (0usize, 0usize, 0usize, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // To the closing quote; an escape is a backslash and one
                // ASCII character (`\uXXXX` continues with hex digits).
                // Strings in params are mostly short: a plain loop beats
                // memchr's setup here.
                i += 1;
                while let Some(&byte) = bytes.get(i) {
                    match byte {
                        b'"' => break,
                        b'\\' => i += 2,
                        _ => i += 1,
                    }
                }
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                each(count, inner[start..i].trim_ascii());
                count += 1;
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    each(count, inner[start..].trim_ascii());
    Some(count + 1)
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
        Some(raw) if first_byte(raw) == b'{' => split_named(raw, spec)?,
        Some(_) => return Err(ErrorObject::invalid_params("params must be an object of named params")),
        None => SlotBuf::new(spec.params.len()),
    };
    let mut array = String::from("[");
    for (index, param) in spec.params.iter().enumerate() {
        let text = match slots.get(index) {
            Some(text) => text,
            None if param.optional => "null",
            None => return Err(missing_error(spec, param)),
        };
        if index > 0 {
            array.push(',');
        }
        array.push_str(text);
    }
    array.push(']');
    RawValue::from_string(array).map_err(|err| ErrorObject::invalid_params(format!("malformed params: {err}")))
}

#[inline(always)]
fn split_named<'a>(raw: &'a RawValue, spec: &'static MethodSpec) -> Result<SlotBuf<'a>, ErrorObject> {
    /// Stops the walk with an error of ours, kept in `problem`.
    struct Named<'s> {
        spec: &'s MethodSpec,
        problem: &'s mut Option<ErrorObject>,
    }
    impl<'de> Visitor<'de> for Named<'_> {
        type Value = SlotBuf<'de>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object of params")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut slots = SlotBuf::new(self.spec.params.len());
            while let Some(key) = map.next_key_seed(KeySeed)? {
                match self.spec.params.iter().position(|p| p.name == key) {
                    Some(index) => {
                        let value = map.next_value::<&'de RawValue>()?;
                        if slots.slot(index).replace(value.get()).is_some() {
                            *self.problem = Some(ErrorObject::invalid_params(format!(
                                "parameter `{key}` of method `{}` is given twice",
                                self.spec.name
                            )));
                            return Err(serde::de::Error::custom("stop"));
                        }
                    }
                    None if self.spec.allow_extra => {
                        map.next_value::<IgnoredAny>()?;
                    }
                    None => {
                        *self.problem = Some(unknown_param(self.spec, &key));
                        return Err(serde::de::Error::custom("stop"));
                    }
                }
            }
            Ok(slots)
        }
    }
    let mut problem = None;
    let mut de = serde_json::Deserializer::from_str(raw.get());
    let result = de.deserialize_map(Named { spec, problem: &mut problem });
    match (result, problem) {
        (_, Some(problem)) => Err(problem),
        (Ok(slots), None) => Ok(slots),
        (Err(err), None) => Err(ErrorObject::invalid_params(format!("malformed params: {err}"))),
    }
}

/// Whether `text` has `expected` in it. Found from its rarest letter,
/// eight bytes at a time: a general substring search sets up more than
/// this short text needs, and a loop over every byte cost ~300
/// instructions on a typical message.
fn says_expected(text: &[u8]) -> bool {
    let expected_at = |x: usize| x > 0 && text[x - 1..].starts_with(b"expected");
    let mut at = 0;
    while at + 8 <= text.len() {
        if has_byte(word_at(text, at), b'x') && (at..at + 8).any(expected_at) {
            return true;
        }
        at += 8;
    }
    (at..text.len()).any(expected_at)
}

#[cold]
fn unknown_param(spec: &MethodSpec, key: &str) -> ErrorObject {
    let names: Vec<&str> = spec.params.iter().map(|p| p.name).collect();
    let expected = if names.is_empty() {
        "it takes no params".to_owned()
    } else {
        format!("expected one of: {}", names.join(", "))
    };
    let suggestion = match closest(key, &names) {
        Some(name) => format!(" (did you mean `{name}`?)"),
        None => String::new(),
    };
    ErrorObject::invalid_params(format!("unknown parameter `{key}` for method `{}`{suggestion}; {expected}", spec.name))
}

/// The candidate closest to `key` by edit distance, if it is close enough
/// to be a likely typo: at most one edit per three characters (a case
/// difference alone always is).
fn closest<'n>(key: &str, candidates: &[&'n str]) -> Option<&'n str> {
    let limit = (key.chars().count() * 2 / 3).max(1);
    candidates
        .iter()
        .map(|candidate| (edit_distance(key, candidate), *candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Twice the Levenshtein distance, a case difference counting one (half
/// an edit), so `Name` is closer to `name` than `nme` is.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).map(|i| i * 2).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = (i + 1) * 2;
        for (j, cb) in b.iter().enumerate() {
            let substitution = match (ca == *cb, ca.eq_ignore_ascii_case(cb)) {
                (true, _) => 0,
                (false, true) => 1,
                (false, false) => 2,
            };
            let next = (diagonal + substitution).min(row[j] + 2).min(row[j + 1] + 2);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// A map key that borrows when it has no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(CowStr)
    }
}

/// Visits a JSON string as a `Cow<str>`, borrowed when possible.
pub(crate) struct CowStr;

impl<'de> Visitor<'de> for CowStr {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The elements `for_each_element` finds, next to serde_json's own split.
    fn both_ways(array: &str) -> (Vec<String>, Vec<String>) {
        let mut ours = Vec::new();
        let count = for_each_element(array, |index, text| {
            assert_eq!(index, ours.len());
            ours.push(text.to_owned());
        });
        assert_eq!(count, Some(ours.len()));
        let theirs: Vec<&RawValue> = serde_json::from_str(array).unwrap();
        (ours, theirs.iter().map(|raw| raw.get().to_owned()).collect())
    }

    #[test]
    fn elements_are_split_like_serde_json_does() {
        for array in [
            "[]",
            "[ ]",
            "[1]",
            "[ 1 , 2 ,3 ]",
            r#"["a,b", "c\"d,", "e\\", "\\\"", "\u00e9,\n"]"#,
            r#"[[1,[2,3]],{"k":[4,{"l":","}],"m":"]"},"}",null]"#,
            "[\"héllo, wörld\", {\"ключ\": \"значение, да\"}, -1.5e3, true, false]",
            "\n[\t{}\n,\r[] ]",
        ] {
            let (ours, theirs) = both_ways(array);
            assert_eq!(ours, theirs, "{array}");
        }
    }

    #[test]
    fn unknown_names_suggest_the_closest_declared_one() {
        assert_eq!(closest("nme", &["name", "greeting"]), Some("name"));
        assert_eq!(closest("Greeting", &["name", "greeting"]), Some("greeting"));
        assert_eq!(closest("x", &["name", "greeting"]), None);
        assert_eq!(closest("colour", &["name", "greeting"]), None);
        assert_eq!(closest("b", &["a"]), None);
        assert_eq!(edit_distance("kitten", "sitting"), 6);
    }

    #[test]
    fn negative_zero_is_blanked_only_where_it_is_an_integer() {
        assert_eq!(without_negative_zero("-0").as_deref(), Some(" 0"));
        assert_eq!(without_negative_zero("[-0, -0 ,{\"a\":-0}]").as_deref(), Some("[ 0,  0 ,{\"a\": 0}]"));
        for kept in ["-0.0", "-0e1", "-0E+2", "-1", "-10", "\"-0\"", "[\"a\\\"-0\"]", "0"] {
            assert_eq!(without_negative_zero(kept), None, "{kept}");
        }
        /// Decodes `text` as the one param of a method, split first.
        fn decode_text<T: DeserializeOwned>(text: &str) -> Result<T, ErrorObject> {
            static PARAMS: [ParamSpec; 1] = [ParamSpec::new("p", "T")];
            static SPEC: MethodSpec = MethodSpec::new("m", &PARAMS);
            let raw = RawValue::from_string(format!("[{text}]")).unwrap();
            Params::parse(Some(&raw), &SPEC)?.decode(0)
        }
        assert_eq!(decode_text::<i64>("-0").unwrap(), 0);
        assert_eq!(decode_text::<u8>("-0").unwrap(), 0);
        assert_eq!(decode_text::<Vec<i32>>("[-0,1]").unwrap(), [0, 1]);
        assert!(decode_text::<f64>("-0").unwrap().is_sign_negative(), "a float keeps its sign");
        assert!(decode_text::<i64>("-0.5").is_err());
    }

    /// The message as it was built before the position was cut by its
    /// length: formatted, then searched.
    fn searched_message(spec: &MethodSpec, param: &ParamSpec, err: &serde_json::Error) -> String {
        let what = if spec.whole { "params".to_owned() } else { format!("parameter `{}`", param.name) };
        let mut message = format!("invalid {what} of method `{}`: ", spec.name);
        let reason = message.len();
        message.push_str(&err.to_string());
        if let Some(pos) = message[reason..].rfind(" at line ") {
            message.truncate(reason + pos);
        }
        if !message[reason..].contains("expected") {
            message.push_str(&format!(" (expected {})", param.ty));
        }
        message
    }

    #[test]
    fn decode_errors_say_what_the_searched_message_said() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Point {
            x: i64,
        }
        static PARAMS: [ParamSpec; 1] = [ParamSpec::new("p", "T")];
        static SPEC: MethodSpec = MethodSpec::new("m", &PARAMS);
        static WHOLE: MethodSpec = MethodSpec::new("w", &PARAMS).whole(true);
        let errors = [
            serde_json::from_str::<i64>("\"forty\"").unwrap_err(),
            serde_json::from_str::<i64>("1.5").unwrap_err(),
            serde_json::from_str::<u8>("300").unwrap_err(),
            serde_json::from_str::<Point>("{}").unwrap_err(),
            serde_json::from_str::<Point>("{\"x\":1,\n\n \"x\":2}").unwrap_err(),
            serde_json::from_str::<(i64, i64)>("[1]").unwrap_err(),
            serde_json::from_str::<bool>("null").unwrap_err(),
            serde_json::from_str::<Vec<i64>>(&format!("[{}]", "1,".repeat(2_000) + "\"x\"")).unwrap_err(),
            <serde_json::Error as serde::de::Error>::custom("said at line 3 without a position"),
            <serde_json::Error as serde::de::Error>::custom("nothing expected here"),
        ];
        for err in &errors {
            for spec in [&SPEC, &WHOLE] {
                assert_eq!(decode_error(spec, &PARAMS[0], err).message(), searched_message(spec, &PARAMS[0], err));
            }
        }
    }

    /// Decodes every param in order as a generated handler does, stopping
    /// at the first error; with `decodes_all` the one-walk read is taken.
    fn decoded(raw: &str, spec: &'static MethodSpec, decodes_all: bool) -> String {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Point {
            x: i64,
        }
        let raw = RawValue::from_string(raw.to_owned()).unwrap();
        let all = || -> Result<String, ErrorObject> {
            let params = Params::parse_for(Some(&raw), spec, decodes_all)?;
            let a: i64 = params.decode(0)?;
            let b: Option<String> = params.decode(1)?;
            let c: Option<Vec<Point>> = params.decode(2)?;
            Ok(format!("{a:?} {b:?} {c:?}"))
        };
        match all() {
            Ok(values) => values,
            Err(err) => format!("error {} {}", err.code(), err.message()),
        }
    }

    #[test]
    fn params_read_in_one_walk_decode_as_split_ones() {
        static PARAMS: [ParamSpec; 3] = [
            ParamSpec::new("a", "i64"),
            ParamSpec::new("b", "Option<String>").optional(true),
            ParamSpec::new("c", "Option<Vec<Point>>").optional(true),
        ];
        static EITHER: MethodSpec = MethodSpec::new("m", &PARAMS);
        static EXTRA: MethodSpec = MethodSpec::new("m", &PARAMS).allow_extra(true);
        static BY_NAME: MethodSpec = MethodSpec::new("m", &PARAMS).structure(ParamStructure::ByName);
        static BY_POSITION: MethodSpec = MethodSpec::new("m", &PARAMS).structure(ParamStructure::ByPosition);
        let inputs = [
            "[1]",
            "[1,\"b\"]",
            "[ 1 , \"b\" , [ {\"x\" : 2} ] ]",
            "[1,null,null]",
            "[]",
            "[-0]",
            "[-0,\"-0\",[{\"x\":-0}]]",
            "[1,2]",
            "[\"one\",\"b\",[]]",
            "[1,\"b\",[],4]",
            "[\"one\",\"b\",[],4]",
            "[1,\"b\",[[2]]]",
            "[1,\"b\",[{\"x\":2,\"y\":3}]]",
            "[1.5]",
            "{\"a\":1}",
            "{\"a\":1,\"b\":\"b\",\"c\":[{\"x\":2}]}",
            "{ \"a\" : 1 , \"c\" : [] }",
            "{\"c\":[],\"b\":\"b\",\"a\":1}",
            "{\"a\":1,\"a\":2}",
            "{\"a\":1,\"b\":\"b\",\"c\":null,\"a\":2}",
            "{\"a\":1,\"d\":4}",
            "{\"a\":\"one\",\"d\":4}",
            "{\"\\u0061\":1}",
            "{\"b\":\"b\"}",
            "{}",
            "{\"a\":-0}",
            "{\"a\":1,\"b\":2}",
            "{\"a\":1,\"c\":[[1]]}",
        ];
        for spec in [&EITHER, &EXTRA, &BY_NAME, &BY_POSITION] {
            for input in inputs {
                let split = decoded(input, spec, false);
                assert_eq!(decoded(input, spec, true), split, "{input} with {spec:?}");
            }
        }
        assert_eq!(decoded("[1,\"b\",[{\"x\":2}]]", &EITHER, true), "1 Some(\"b\") Some([Point { x: 2 }])");
    }

    #[test]
    fn not_an_array_is_refused() {
        assert_eq!(for_each_element("{\"a\":1}", |_, _| {}), None);
        assert_eq!(for_each_element("\"[1]\"", |_, _| {}), None);
    }
}
