//! A serde `Deserializer` wrapper that reads structs from JSON objects only.
//!
//! serde's derived structs (and struct variants) also accept a sequence of
//! their fields, in order, so serde_json reads `{"x":1,"y":2}` and `[1,2]`
//! alike. The catalog describes a struct as a JSON Schema `type: object`,
//! so the server must refuse the array form to agree with it, at any depth:
//! a struct param, a struct inside a `Vec`, `Option` or map, a struct
//! variant. [`Strict`] forwards every call to the wrapped deserializer and
//! wraps what comes back (visitors, seeds, `SeqAccess`, `MapAccess`,
//! `EnumAccess`, `VariantAccess`) so that everything below stays strict; a
//! visitor asked for through `deserialize_struct` or `struct_variant` gets
//! a sequence refused.
//!
//! Types that buffer their input first (untagged or internally tagged
//! enums, `#[serde(flatten)]`) deserialize their parts from serde's own
//! buffer, out of this wrapper's reach, and keep serde's leniency there.

use std::fmt;

use std::marker::PhantomData;

use serde::de::{
    Deserialize, DeserializeSeed, Deserializer, EnumAccess, Error as _, Expected, MapAccess, SeqAccess, VariantAccess,
    Visitor,
};

/// Decodes `text` as `T`, refusing an array wherever `T` asks for a struct.
/// Every param is decoded through [`Strict`], so that each param type's
/// `Deserialize` is instantiated once: text without an array reads exactly
/// as with `serde_json::from_str`, as only a sequence is ever refused.
pub(crate) fn from_str<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = T::deserialize(Strict(&mut de))?;
    de.end()?;
    Ok(value)
}

/// The wrapped deserializer (see the module docs).
pub(crate) struct Strict<D>(pub(crate) D);

/// A visitor (or seed) whose nested deserializers are made [`Strict`].
struct Wrap<V>(V);

/// A visitor asked for a struct: a sequence is refused, the rest is [`Wrap`]ped.
struct NoSeq<V> {
    visitor: V,
}

/// The seed of a `T` read through [`Strict`], for the `MapAccess` and
/// `SeqAccess` calls that take no seed: what `PhantomData<T>` would do,
/// but code of this module (`PhantomData`'s would be code of `core`'s, a
/// codegen unit of its own in the crate that decodes a `T`).
struct Seed<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for Seed<T> {
    type Value = T;
    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        T::deserialize(Strict(deserializer))
    }
}

macro_rules! forward_deserialize {
    ($($method:ident),*) => {$(
        #[inline]
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            self.0.$method(Wrap(visitor))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Strict<D> {
    type Error = D::Error;

    forward_deserialize!(
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
        deserialize_option,
        deserialize_unit,
        deserialize_seq,
        deserialize_map,
        deserialize_identifier,
        deserialize_ignored_any
    );

    #[inline]
    fn deserialize_unit_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_unit_struct(name, Wrap(visitor))
    }
    #[inline]
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_newtype_struct(name, Wrap(visitor))
    }
    #[inline]
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, Wrap(visitor))
    }
    #[inline]
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple_struct(name, len, Wrap(visitor))
    }
    #[inline]
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_struct(name, fields, NoSeq { visitor })
    }
    #[inline]
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, Wrap(visitor))
    }
    #[inline]
    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

macro_rules! forward_visit {
    ($($method:ident: $ty:ty),*) => {$(
        #[inline]
        fn $method<E: serde::de::Error>(self, v: $ty) -> Result<Self::Value, E> {
            self.0.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    #[inline]
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    forward_visit!(
        visit_bool: bool,
        visit_i8: i8,
        visit_i16: i16,
        visit_i32: i32,
        visit_i64: i64,
        visit_i128: i128,
        visit_u8: u8,
        visit_u16: u16,
        visit_u32: u32,
        visit_u64: u64,
        visit_u128: u128,
        visit_f32: f32,
        visit_f64: f64,
        visit_char: char,
        visit_str: &str,
        visit_borrowed_str: &'de str,
        visit_string: String,
        visit_bytes: &[u8],
        visit_borrowed_bytes: &'de [u8],
        visit_byte_buf: Vec<u8>
    );

    #[inline]
    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_none()
    }
    #[inline]
    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_unit()
    }
    #[inline]
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.0.visit_some(Strict(deserializer))
    }
    #[inline]
    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.0.visit_newtype_struct(Strict(deserializer))
    }
    #[inline]
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.0.visit_seq(Strict(seq))
    }
    #[inline]
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.visit_map(Strict(map))
    }
    #[inline]
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        self.0.visit_enum(Strict(data))
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for NoSeq<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }
    #[cold]
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        // What the visitor expects (for a derived struct, "struct Point"),
        // through serde's `dyn Expected`: nothing here is formatted per `V`.
        let expected: &dyn Expected = &self.visitor;
        Err(A::Error::custom(format_args!("invalid type: array, expected an object ({expected})")))
    }
    #[inline]
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.visitor.visit_map(Strict(map))
    }
    // serde_json gives a struct only a map or a sequence; anything else is
    // passed on for the visitor's own error message.
    #[inline]
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
        self.visitor.visit_bool(v)
    }
    #[inline]
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
        self.visitor.visit_i64(v)
    }
    #[inline]
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
        self.visitor.visit_u64(v)
    }
    #[inline]
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
        self.visitor.visit_f64(v)
    }
    #[inline]
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.visitor.visit_str(v)
    }
    #[inline]
    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        self.visitor.visit_borrowed_str(v)
    }
    #[inline]
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Self::Value, E> {
        self.visitor.visit_string(v)
    }
    #[inline]
    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        self.visitor.visit_unit()
    }
    #[inline]
    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        self.visitor.visit_none()
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Wrap<S> {
    type Value = S::Value;
    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.0.deserialize(Strict(deserializer))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Strict<A> {
    type Error = A::Error;
    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Wrap(seed))
    }
    #[inline]
    fn next_element<T: Deserialize<'de>>(&mut self) -> Result<Option<T>, A::Error> {
        self.0.next_element_seed(Seed(PhantomData))
    }
    #[inline]
    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Strict<A> {
    type Error = A::Error;
    #[inline]
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(Wrap(seed))
    }
    #[inline]
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.0.next_value_seed(Wrap(seed))
    }
    #[inline]
    fn next_key<K: Deserialize<'de>>(&mut self) -> Result<Option<K>, A::Error> {
        self.0.next_key_seed(Seed(PhantomData))
    }
    #[inline]
    fn next_value<V: Deserialize<'de>>(&mut self) -> Result<V, A::Error> {
        self.0.next_value_seed(Seed(PhantomData))
    }
    #[inline]
    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Strict<A> {
    type Error = A::Error;
    type Variant = Strict<A::Variant>;
    #[inline]
    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self::Variant), A::Error> {
        let (value, variant) = self.0.variant_seed(Wrap(seed))?;
        Ok((value, Strict(variant)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Strict<A> {
    type Error = A::Error;
    #[inline]
    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }
    #[inline]
    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, A::Error> {
        self.0.newtype_variant_seed(Wrap(seed))
    }
    #[inline]
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Wrap(visitor))
    }
    #[inline]
    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.0.struct_variant(fields, NoSeq { visitor })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;

    use super::from_str;

    #[derive(Debug, PartialEq, Deserialize)]
    struct Point {
        x: i32,
        y: i32,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    enum Shape {
        Dot(Point),
        Line { from: Point, to: Point },
        Pair(Point, Point),
        Empty,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Wrapper(Point);

    #[test]
    fn structs_read_from_objects_only_at_any_depth() {
        assert_eq!(from_str::<Point>(r#"{"x":1,"y":2}"#).unwrap(), Point { x: 1, y: 2 });
        let err = from_str::<Point>("[1,2]").unwrap_err().to_string();
        assert!(err.starts_with("invalid type: array, expected an object (struct Point)"), "{err}");
        assert!(from_str::<Vec<Point>>(r#"[{"x":1,"y":2}]"#).is_ok());
        assert!(from_str::<Vec<Point>>("[[1,2]]").is_err());
        assert!(from_str::<Option<Point>>("[1,2]").is_err());
        assert_eq!(from_str::<Option<Point>>("null").unwrap(), None);
        assert!(from_str::<BTreeMap<String, Point>>(r#"{"a":[1,2]}"#).is_err());
        assert!(from_str::<BTreeMap<String, Point>>(r#"{"a":{"x":1,"y":2}}"#).is_ok());
        assert!(from_str::<Wrapper>("[1,2]").is_err());
        assert!(from_str::<(Point, i32)>(r#"[{"x":1,"y":2},3]"#).is_ok(), "a tuple is an array");
        assert!(from_str::<(Point, i32)>("[[1,2],3]").is_err());
    }

    #[test]
    fn struct_variants_and_structs_inside_variants_read_from_objects_only() {
        let p = r#"{"x":1,"y":2}"#;
        assert!(from_str::<Shape>(&format!(r#"{{"Dot":{p}}}"#)).is_ok());
        assert!(from_str::<Shape>(r#"{"Dot":[1,2]}"#).is_err());
        assert!(from_str::<Shape>(&format!(r#"{{"Line":{{"from":{p},"to":{p}}}}}"#)).is_ok());
        let err = from_str::<Shape>(&format!(r#"{{"Line":[{p},{p}]}}"#)).unwrap_err().to_string();
        assert!(err.contains("expected an object (struct variant Shape::Line)"), "{err}");
        assert!(from_str::<Shape>(r#"{"Line":{"from":[1,2],"to":[1,2]}}"#).is_err());
        assert!(from_str::<Shape>(&format!(r#"{{"Pair":[{p},{p}]}}"#)).is_ok(), "a tuple variant is an array");
        assert!(from_str::<Shape>(r#"{"Pair":[[1,2],[1,2]]}"#).is_err());
        assert_eq!(from_str::<Shape>(r#""Empty""#).unwrap(), Shape::Empty);
    }

    #[test]
    fn other_errors_and_trailing_text_are_serde_jsons() {
        assert!(from_str::<Point>(r#"{"x":1,"y":2} x"#).is_err());
        let err = from_str::<Point>("3").unwrap_err().to_string();
        assert!(err.contains("expected struct Point"), "{err}");
        assert!(from_str::<Vec<i32>>("[1,2]").is_ok());
        assert!(from_str::<String>(r#""[1,2]""#).is_ok());
    }
}
