//! Whether a parameter type reads itself from a JSON object only, for
//! params taken whole: serde also reads a struct from an array of its
//! fields, but the catalog describes such params as an object, so the
//! server refuses the array. Asked only when whole params are an array.

use serde::de::{DeserializeOwned, Deserializer, Visitor};

/// Whether `T` reads itself from a JSON object only: a struct or a map,
/// possibly inside `Option` or a newtype. Found by letting `T` start to
/// deserialize from a probe that records what it asks for.
pub(super) fn asks_for_object<T: DeserializeOwned>() -> bool {
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
