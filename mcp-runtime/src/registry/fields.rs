//! A `#[tool]` function's parameters read by name into a tree of their values, without a
//! reader of their own: `()` for none, `(a,)` for one, and a pair of the trees of the first
//! and second half for more (`((a,), ((b,), (c,)))`), one generic reader for every tool whose
//! parameters have the same types. The tree is balanced so that its depth, which rustc's
//! recursion limit bounds, grows with the logarithm of the number of parameters.
//!
//! A derived `Deserialize` is code of the user's crate, placed where the tool is, and every
//! reader it is read through (the arguments are read two ways) is compiled again for each
//! tool; an edit that moves a tool's code makes rustc compile all of those again. The types
//! here are the runtime's, so none of that happens, and what a parameter list reads is exactly
//! what serde's derive reads for a struct of the same fields: a field named twice, one missing
//! (unless its type reads nothing as a value, as an `Option` does), and a name the list does
//! not know (read as [`IgnoredAny`], and noted as skipped by the reading that notes names)
//! are reported as serde's derive reports them.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, Visitor};

use super::arguments::{Note, Segment, segments};

/// The values of a tool's parameters, as a tree: `()` for none, `(P,)` for one parameter of
/// type `P`, `(Left, Right)` for the parameters of `Left` followed by those of `Right`.
/// Implemented for every such tree of types that deserialise.
pub trait ArgumentFields: Sized {
    /// How many parameters the tree holds.
    #[doc(hidden)]
    const LEN: usize;

    /// The values read so far.
    #[doc(hidden)]
    type Slots: Default;

    /// Reads the value of the parameter at `index` of the tree into its slot; `names` are
    /// the tree's own, in order, and `reader` reads it (noting what its type skips inside
    /// it, or not).
    #[doc(hidden)]
    fn read_value<'de, A: MapAccess<'de>, R: ReadValue>(
        slots: &mut Self::Slots,
        index: usize,
        names: &'static [&'static str],
        map: &mut A,
        reader: &mut R,
    ) -> Result<(), A::Error>;

    /// The values, once the object is read; a parameter not given is read as serde's
    /// derive reads a missing field.
    #[doc(hidden)]
    fn finish<E: de::Error>(slots: Self::Slots, names: &'static [&'static str]) -> Result<Self, E>;
}

impl ArgumentFields for () {
    const LEN: usize = 0;
    type Slots = ();

    fn read_value<'de, A: MapAccess<'de>, R: ReadValue>(
        _: &mut (),
        _: usize,
        _: &'static [&'static str],
        map: &mut A,
        _: &mut R,
    ) -> Result<(), A::Error> {
        // Not reached: an index is one of the names.
        map.next_value::<IgnoredAny>().map(drop)
    }

    fn finish<E: de::Error>(_: (), _: &'static [&'static str]) -> Result<(), E> {
        Ok(())
    }
}

impl<P: DeserializeOwned> ArgumentFields for (P,) {
    const LEN: usize = 1;
    type Slots = Option<P>;

    fn read_value<'de, A: MapAccess<'de>, R: ReadValue>(
        slot: &mut Option<P>,
        _: usize,
        names: &'static [&'static str],
        map: &mut A,
        reader: &mut R,
    ) -> Result<(), A::Error> {
        if slot.is_some() {
            return Err(de::Error::duplicate_field(name(names)));
        }
        *slot = Some(reader.read(name(names), map)?);
        Ok(())
    }

    fn finish<E: de::Error>(slot: Option<P>, names: &'static [&'static str]) -> Result<Self, E> {
        match slot {
            Some(value) => Ok((value,)),
            None => P::deserialize(MissingField(name(names), PhantomData)).map(|value| (value,)),
        }
    }
}

impl<Left: ArgumentFields, Right: ArgumentFields> ArgumentFields for (Left, Right) {
    const LEN: usize = Left::LEN + Right::LEN;
    type Slots = (Left::Slots, Right::Slots);

    fn read_value<'de, A: MapAccess<'de>, R: ReadValue>(
        (left, right): &mut Self::Slots,
        index: usize,
        names: &'static [&'static str],
        map: &mut A,
        reader: &mut R,
    ) -> Result<(), A::Error> {
        let (left_names, right_names) = split(names, Left::LEN);
        match index.checked_sub(Left::LEN) {
            None => Left::read_value(left, index, left_names, map, reader),
            Some(index) => Right::read_value(right, index, right_names, map, reader),
        }
    }

    fn finish<E: de::Error>(
        (left, right): Self::Slots,
        names: &'static [&'static str],
    ) -> Result<Self, E> {
        let (left_names, right_names) = split(names, Left::LEN);
        Ok((
            Left::finish(left, left_names)?,
            Right::finish(right, right_names)?,
        ))
    }
}

/// A leaf's name (the names are the generated code's, one per parameter; none would be a
/// name of no parameter, not a failure).
fn name(names: &'static [&'static str]) -> &'static str {
    names.first().copied().unwrap_or_default()
}

/// The names of a pair's two halves.
fn split(
    names: &'static [&'static str],
    at: usize,
) -> (&'static [&'static str], &'static [&'static str]) {
    names.split_at_checked(at).unwrap_or((names, &[]))
}

/// Reads an object of named arguments as `F`, the names of its parameters in order.
pub(crate) struct FieldsSeed<F> {
    names: &'static [&'static str],
    fields: PhantomData<fn() -> F>,
}

impl<F> FieldsSeed<F> {
    pub(crate) fn new(names: &'static [&'static str]) -> Self {
        FieldsSeed {
            names,
            fields: PhantomData,
        }
    }
}

impl<F> Clone for FieldsSeed<F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F> Copy for FieldsSeed<F> {}

impl<'de, F: ArgumentFields> DeserializeSeed<'de> for FieldsSeed<F> {
    type Value = F;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<F, D::Error> {
        self.deserialize_with(deserializer, &mut Plain)
    }
}

impl<F: ArgumentFields> FieldsSeed<F> {
    /// Reads as the seed does, noting in `skipped` each name it skips, at the top or inside
    /// a parameter's value, as `serde_ignored` would have around the whole read; only the
    /// values are read through `serde_ignored` (with their parameter's name in front of the
    /// paths it reports), so a name that is known costs no copy of itself.
    pub(crate) fn deserialize_noting<'de, D: de::Deserializer<'de>>(
        self,
        deserializer: D,
        skipped: &mut Skipped,
    ) -> Result<F, D::Error> {
        self.deserialize_with(deserializer, skipped)
    }

    fn deserialize_with<'de, D: de::Deserializer<'de>, R: ReadValue>(
        self,
        deserializer: D,
        reader: &mut R,
    ) -> Result<F, D::Error> {
        let reading = Reading { seed: self, reader };
        deserializer.deserialize_struct("arguments", self.names, reading)
    }
}

/// Segments of the paths to names the arguments' type skipped, as
/// [`Arguments`](super::arguments::Arguments) notes them.
#[doc(hidden)]
#[derive(Default)]
pub struct Skipped(pub(crate) Vec<Vec<Segment>>);

/// [`FieldsSeed`]'s visitor: each known parameter's value read by `reader`, each unknown
/// name handed to it.
struct Reading<'r, F, R> {
    seed: FieldsSeed<F>,
    reader: &'r mut R,
}

impl<'de, F: ArgumentFields, R: ReadValue> Visitor<'de> for Reading<'_, F, R> {
    type Value = F;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of named arguments")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<F, A::Error> {
        let names = self.seed.names;
        let mut slots = F::Slots::default();
        while let Some(index) = map.next_key_seed(FieldIndex(names))? {
            match index {
                Ok(index) => F::read_value(&mut slots, index, names, &mut map, self.reader)?,
                Err(unknown) => {
                    map.next_value::<IgnoredAny>()?;
                    self.reader.skipped(unknown);
                }
            }
        }
        F::finish(slots, names)
    }
}

/// A parameter's value read through `serde_ignored`, each path it reports noted with the
/// parameter's name in front.
struct Noted<'s, P> {
    name: &'static str,
    skipped: &'s mut Skipped,
    value: PhantomData<P>,
}

impl<'de, P: de::Deserialize<'de>> DeserializeSeed<'de> for Noted<'_, P> {
    type Value = P;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<P, D::Error> {
        let (name, skipped) = (self.name, &mut self.skipped.0);
        let mut note = |path: serde_ignored::Path<'_>| {
            let mut at = vec![Segment::Key(name.to_owned())];
            at.extend(segments(&path));
            skipped.push(at);
        };
        // One callback type for every parameter type, as for a whole struct's read.
        let mut note: &mut Note = &mut note;
        P::deserialize(serde_ignored::Deserializer::new(deserializer, &mut note))
    }
}

/// Reads a key as the index of the parameter it names, or as the name itself when no
/// parameter has it (copied then only), as an identifier, the way serde's derive reads a
/// field's name.
struct FieldIndex(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for FieldIndex {
    type Value = Result<usize, String>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for FieldIndex {
    type Value = Result<usize, String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an argument's name")
    }

    // JSON's keys are strings: no other form of a name is read.
    fn visit_str<E: de::Error>(self, name: &str) -> Result<Self::Value, E> {
        Ok(self
            .0
            .iter()
            .position(|known| *known == name)
            .ok_or_else(|| name.to_owned()))
    }
}

/// What a parameter not given is read from: nothing, which an `Option` reads as `None` and
/// anything else refuses as a missing field (what serde's derive does for a struct's field).
struct MissingField<E>(&'static str, PhantomData<E>);

impl<'de, E: de::Error> de::Deserializer<'de> for MissingField<E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, E> {
        Err(E::missing_field(self.0))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// How a parameter's value is read. Chosen by type rather than by a value, so that each way
/// of reading the arguments compiles its own reader of each parameter type and no other.
#[doc(hidden)]
pub trait ReadValue {
    #[doc(hidden)]
    fn read<'de, P: DeserializeOwned, A: MapAccess<'de>>(
        &mut self,
        name: &'static str,
        map: &mut A,
    ) -> Result<P, A::Error>;

    /// A name no parameter has, whose value was skipped.
    #[doc(hidden)]
    fn skipped(&mut self, name: String);
}

/// A value read as it is (the read that tracks a failure's path).
#[doc(hidden)]
pub struct Plain;

impl ReadValue for Plain {
    fn read<'de, P: DeserializeOwned, A: MapAccess<'de>>(
        &mut self,
        _: &'static str,
        map: &mut A,
    ) -> Result<P, A::Error> {
        map.next_value()
    }

    fn skipped(&mut self, _: String) {}
}

/// A value read noting what its type skips inside it.
impl ReadValue for Skipped {
    fn read<'de, P: DeserializeOwned, A: MapAccess<'de>>(
        &mut self,
        name: &'static str,
        map: &mut A,
    ) -> Result<P, A::Error> {
        map.next_value_seed(Noted {
            name,
            skipped: self,
            value: PhantomData::<P>,
        })
    }

    fn skipped(&mut self, name: String) {
        self.0.push(vec![Segment::Key(name)]);
    }
}
