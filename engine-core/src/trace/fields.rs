//! The snapshot's top-level fields as compact JSON, for the timeline's changed fields: a field
//! changed when its text did, which is what comparing `serde_json::Value`s of the two snapshots
//! says (the snapshot's maps are ordered, so equal values have equal texts), without building a
//! `Value` of the whole snapshot per record. The thread, the one field that grows with a long
//! answer, is compared as messages (`Message: PartialEq`) and summarized by its ids, without
//! being written out.

use serde::Serialize;
use serde::ser::{Impossible, SerializeStruct, Serializer};
use serde_json::Value;

use crate::message::Message;
use crate::snapshot::Snapshot;

/// Each top-level field of the last snapshot seen: its camelCase name and compact JSON.
pub(super) struct Fields {
    texts: Vec<(&'static str, Vec<u8>)>,
    /// The thread of the last snapshot.
    thread: Vec<std::sync::Arc<Message>>,
}

/// The thread's field name, compared as messages.
const THREAD: &str = "thread";

impl Fields {
    /// The fields of `snapshot`.
    pub(super) fn of(snapshot: Snapshot) -> Fields {
        let mut fields = Fields {
            texts: Vec::new(),
            thread: Vec::new(),
        };
        fields.update(snapshot);
        fields
    }

    /// Takes `snapshot`'s fields; returns those that changed with their new values summarized
    /// (the thread and the session list as ids), in name order.
    pub(super) fn update(&mut self, mut snapshot: Snapshot) -> Vec<(String, Value)> {
        let mut writer = FieldWriter {
            texts: &mut self.texts,
            at: 0,
            scratch: Vec::new(),
            changed: Vec::new(),
        };
        // Serializing into memory fails only on a map with non-string keys, which the
        // snapshot has none of; a field that failed is left as it was.
        let _ = snapshot.serialize(&mut writer);
        let changed = writer.changed;
        let mut changes: Vec<(String, Value)> = changed
            .into_iter()
            .filter_map(|i| self.texts.get(i))
            .map(|(name, text)| {
                let value = serde_json::from_slice::<Value>(text).unwrap_or(Value::Null);
                ((*name).to_owned(), summary(name, &value))
            })
            .collect();
        if snapshot.thread != self.thread {
            let ids = snapshot.thread.iter().map(|m| Value::from(m.id.as_str()));
            changes.push((THREAD.to_owned(), Value::Array(ids.collect())));
            self.thread = std::mem::take(&mut snapshot.thread);
        }
        changes.sort_by(|a, b| a.0.cmp(&b.0));
        changes
    }
}

/// A serializer that accepts one struct and writes each of its fields apart.
struct FieldWriter<'a> {
    texts: &'a mut Vec<(&'static str, Vec<u8>)>,
    /// The index of the next field.
    at: usize,
    scratch: Vec<u8>,
    /// The indexes of the fields whose text changed (all of them the first time).
    changed: Vec<usize>,
}

type Error = serde_json::Error;

fn only_a_struct() -> Error {
    serde::ser::Error::custom("the field writer takes a struct")
}

impl SerializeStruct for &mut FieldWriter<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        if key == THREAD {
            return Ok(());
        }
        self.scratch.clear();
        serde_json::to_writer(&mut self.scratch, value)?;
        let at = self.at;
        self.at += 1;
        match self.texts.get_mut(at) {
            Some((name, text)) if *name == key => {
                if *text != self.scratch {
                    std::mem::swap(text, &mut self.scratch);
                    self.changed.push(at);
                }
            }
            _ => {
                let text = std::mem::take(&mut self.scratch);
                self.texts.truncate(at);
                self.texts.push((key, text));
                self.changed.push(at);
            }
        }
        Ok(())
    }

    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

macro_rules! refuse {
    ($($name:ident($($arg:ty),*) -> $ret:ty;)*) => {
        $(fn $name(self, $(_: $arg),*) -> Result<$ret, Error> {
            Err(only_a_struct())
        })*
    };
}

impl<'w, 'a> Serializer for &'w mut FieldWriter<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = &'w mut FieldWriter<'a>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Error> {
        Ok(self)
    }

    refuse! {
        serialize_bool(bool) -> ();
        serialize_i8(i8) -> ();
        serialize_i16(i16) -> ();
        serialize_i32(i32) -> ();
        serialize_i64(i64) -> ();
        serialize_u8(u8) -> ();
        serialize_u16(u16) -> ();
        serialize_u32(u32) -> ();
        serialize_u64(u64) -> ();
        serialize_f32(f32) -> ();
        serialize_f64(f64) -> ();
        serialize_char(char) -> ();
        serialize_str(&str) -> ();
        serialize_bytes(&[u8]) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<(), Error> {
        Err(only_a_struct())
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        Err(only_a_struct())
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        Err(only_a_struct())
    }
}

/// The timeline keeps large fields as a summary (the thread and the session list as their ids),
/// so a long streamed answer does not keep a copy of the whole thread per chunk.
pub(super) fn summary(key: &str, value: &Value) -> Value {
    match (key, value) {
        ("thread" | "agentSessions", Value::Array(items)) => Value::Array(
            items
                .iter()
                .map(|item| {
                    item.get("id")
                        .or_else(|| item.get("uid"))
                        .cloned()
                        .unwrap_or(Value::Null)
                })
                .collect(),
        ),
        _ => value.clone(),
    }
}
