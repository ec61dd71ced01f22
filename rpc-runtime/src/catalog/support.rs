//! What the code `#[rpc]` generates reaches to build a trait's catalog:
//! the schema functions of its types and the errors they declare, picked
//! by autoref specialization. Reached through `__private`, not a public API.

use schemars::{JsonSchema, Schema, SchemaGenerator};

use super::{ErrorInfo, RpcError, SchemaFn};

/// The schema of `T` (hoisted into the definitions if `T` is a named type).
pub fn schema_of<T: JsonSchema + ?Sized>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// The schema of a type that does not implement [`JsonSchema`]: any value,
/// with a note that says why (outside `#[rpc(strict_schemas)]`).
pub fn unknown_schema_of<T: ?Sized>(_: &mut SchemaGenerator) -> Schema {
    let note = format!(
        "Any JSON value: `{}` has no JSON Schema (it does not implement `JsonSchema`).",
        std::any::type_name::<T>()
    );
    let mut schema = Schema::default();
    schema.insert("description".into(), note.into());
    schema.insert("x-no-schema".into(), true.into());
    schema
}

/// Picks, where `#[rpc]` names a param or result type, schemars'
/// `SchemaGenerator::subschema_for` (what [`schema_of`] calls) when the
/// type implements [`JsonSchema`] and [`unknown_schema_of`] otherwise:
/// `SchemaOf::<T>::FN` is the inherent constant when `T: JsonSchema`, else
/// [`NoJsonSchema::FN`] (an inherent item whose bounds do not hold is
/// skipped; the generated code names a concrete `T`). A constant, so the
/// catalog's table holds the schema function itself, one per distinct
/// type, rather than a closure per use.
pub struct SchemaOf<T: ?Sized>(std::marker::PhantomData<fn() -> std::marker::PhantomData<T>>);

impl<T: ?Sized> std::fmt::Debug for SchemaOf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SchemaOf").field(&std::any::type_name::<T>()).finish()
    }
}

impl<T: JsonSchema + ?Sized> SchemaOf<T> {
    /// The schema function of `T`.
    pub const FN: SchemaFn = SchemaGenerator::subschema_for::<T>;
}

/// Chosen when the type does not implement [`JsonSchema`].
pub trait NoJsonSchema {
    /// A schema function that says the type has no schema.
    const FN: SchemaFn;
}

impl<T: ?Sized> NoJsonSchema for SchemaOf<T> {
    const FN: SchemaFn = unknown_schema_of::<T>;
}

/// No errors: what a method that cannot fail, or whose error type is not
/// an [`RpcError`], declares through its type.
pub fn no_errors() -> &'static [ErrorInfo] {
    &[]
}

/// Picks the errors [`RpcError::ERRORS`] of `E` declares when `E`
/// implements it, and no errors otherwise, as [`SchemaOf`] picks a schema
/// function: `ErrorsOf::<E>::FN`.
pub struct ErrorsOf<E: ?Sized>(std::marker::PhantomData<fn() -> std::marker::PhantomData<E>>);

impl<E: ?Sized> std::fmt::Debug for ErrorsOf<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ErrorsOf").field(&std::any::type_name::<E>()).finish()
    }
}

impl<E: RpcError + ?Sized> ErrorsOf<E> {
    /// The errors `E` declares.
    pub const FN: fn() -> &'static [ErrorInfo] = errors_of::<E>;
}

/// Chosen when the error type does not implement [`RpcError`].
pub trait NoRpcError {
    /// No errors.
    const FN: fn() -> &'static [ErrorInfo];
}

impl<E: ?Sized> NoRpcError for ErrorsOf<E> {
    const FN: fn() -> &'static [ErrorInfo] = no_errors;
}

/// The errors `E` declares.
fn errors_of<E: RpcError + ?Sized>() -> &'static [ErrorInfo] {
    E::ERRORS
}

/// The success type of a `Result`-like return type, for the catalog's `result`.
pub trait ResultSchema {
    /// The schema of the `Ok` value.
    fn ok_schema(generator: &mut SchemaGenerator) -> Schema;
}

impl<T: JsonSchema, E> ResultSchema for Result<T, E> {
    fn ok_schema(generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<T>()
    }
}

/// The schema of the `Ok` value of `R`.
pub fn result_schema_of<R: ResultSchema>(generator: &mut SchemaGenerator) -> Schema {
    R::ok_schema(generator)
}
