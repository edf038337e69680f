//! DDS-XTypes type objects as a peer that is not ours serves them: the recorder asks the type
//! lookup service for the complete type object of a type no node describes, and for each type
//! it names, and builds the `.msg` definition and RIHS01 hash it records from them.
//!
//! The input is up to 16 type objects, each a little-endian `u16` length and its bytes. The
//! first byte picks how they are read: even, as the wire carries them (XCDR2, deserialized as
//! Cyclone DDS deserializes a reply, then read as the backend reads Cyclone's type objects);
//! odd, in a compact form of the shared model (a name, then members) so that the mutations
//! reach the description more often. The first object is the announced type; a nested type's
//! hash resolves to the object of that hash (XTypes hashes a type object's XCDR2 bytes with
//! MD5), else to the object its first byte picks (a peer answers what it likes). What is
//! described must become a definition whose text parses to a description of the same hash,
//! the hash of the type described where `.msg` text can carry it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use md5::{Digest, Md5};
use rosbag2_rs_codec::type_hash::TypeDescription;
use rosbag2_rs_cyclonedds::xtypes::decode_type_object;
use rosbag2_rs_dds_common::xtypes::{
    describe, ros_type_name, StructType, TypeHash, TypeIdentifier, XTypesError,
};

/// At most this many type objects in one input.
const MAX_OBJECTS: usize = 16;

fuzz_target!(init: rosbag2_rs_fuzz::budgets(), |data: &[u8]| {
    let Some((&pick, mut rest)) = data.split_first() else {
        return;
    };
    let mut objects: Vec<Option<StructType>> = Vec::new();
    let mut hashes: Vec<TypeHash> = Vec::new();
    while objects.len() < MAX_OBJECTS && rest.len() >= 2 {
        let len = usize::from(u16::from_le_bytes([rest[0], rest[1]])).min(rest.len() - 2);
        let (object, tail) = rest[2..].split_at(len);
        rest = tail;
        hashes.push(Md5::digest(object)[..14].try_into().expect("14 of 16 bytes"));
        objects.push(if pick % 2 == 0 {
            decode_type_object(object)
        } else {
            Model(object).struct_type()
        });
    }
    let Some(Some(root)) = objects.first() else {
        return;
    };
    let type_name = ros_type_name(&root.name).unwrap_or_else(|| "fuzz_msgs/msg/Root".into());
    let mut resolve = |hash: &TypeHash| {
        let index = hashes.iter().position(|h| h == hash);
        objects[index.unwrap_or(usize::from(hash[0]) % objects.len())]
            .clone()
            .ok_or_else(|| XTypesError::Unresolved {
                hash: String::new(),
                reason: "no type object".into(),
            })
    };
    let Ok(description) = describe(&type_name, root, &mut resolve) else {
        return;
    };
    assert_eq!(description.type_description.type_name, type_name);
    let Ok(definition) = description.definition(&|_| None, None) else {
        return;
    };
    let parsed = TypeDescription::from_definition(&type_name, &definition)
        .expect("a definition built from a description parses");
    assert_eq!(parsed.rihs01(), definition.type_description_hash);
    // The text of what was parsed (what the player serves back) has the same hash.
    parsed
        .definition(&|_| None, Some(&definition.type_description_hash))
        .expect("the parsed description spells a definition of the same hash");
    // What the recorder records describes the type the peer announced (the same RIHS01 hash:
    // a peer that announces none is not checked), unless it holds what `.msg` text cannot
    // carry: an IDL `char` (`.msg` char is uint8), a structure without members (rosidl gives
    // it one), types of other kinds than `msg`, two structures of one ROS name.
    if faithful(&description, &objects) {
        assert_eq!(
            definition.type_description_hash,
            description.rihs01(),
            "the definition recorded describes another type:\n{}",
            definition.encoded_message_definition
        );
    }
});

/// Whether `.msg` text can describe `description` exactly (see the target's last check).
fn faithful(
    description: &rosbag2_rs_codec::type_hash::TypeDescription,
    objects: &[Option<StructType>],
) -> bool {
    let types = std::iter::once(&description.type_description)
        .chain(&description.referenced_type_descriptions);
    let plain = types.clone().all(|t| {
        t.type_name.split('/').nth(1) == Some("msg")
            && !t.fields.is_empty()
            && t.fields.iter().all(|f| f.field_type.type_id % 48 != 13)
    });
    let mut by_name = std::collections::HashMap::new();
    let one_each = objects.iter().flatten().all(|o| {
        let name = ros_type_name(&o.name);
        by_name.entry(name).or_insert(&o.members) == &&o.members
    });
    plain && one_each
}

/// The compact form of a structure: a name (a length byte and its bytes), then members (a name,
/// then an identifier) to the end.
struct Model<'a>(&'a [u8]);

impl Model<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    fn u32(&mut self) -> Option<u32> {
        let bytes = self.0.get(..4)?;
        let value = u32::from_le_bytes(bytes.try_into().ok()?);
        self.0 = &self.0[4..];
        Some(value)
    }

    fn name(&mut self) -> Option<String> {
        let len = usize::from(self.byte()?).min(self.0.len());
        let (name, rest) = self.0.split_at(len);
        self.0 = rest;
        Some(String::from_utf8_lossy(name).into_owned())
    }

    /// A tag byte, then what the identifier holds; collections nest at most 4 deep.
    fn identifier(&mut self, depth: u32) -> Option<TypeIdentifier> {
        let tag = self.byte()?;
        let element = |m: &mut Self| -> Option<Box<TypeIdentifier>> {
            if depth >= 4 {
                return Some(Box::new(TypeIdentifier::Primitive(0x04)));
            }
            Some(Box::new(m.identifier(depth + 1)?))
        };
        Some(match tag % 6 {
            0 => TypeIdentifier::Primitive(self.byte()?),
            1 => TypeIdentifier::String {
                wide: tag & 0x80 != 0,
                bound: self.u32()?,
            },
            2 => TypeIdentifier::Sequence {
                bound: self.u32()?,
                element: element(self)?,
            },
            3 => {
                let dimensions = usize::from(self.byte()? % 4);
                let bounds = (0..dimensions)
                    .map(|_| self.u32())
                    .collect::<Option<Vec<_>>>()?;
                TypeIdentifier::Array {
                    bounds,
                    element: element(self)?,
                }
            }
            4 => TypeIdentifier::Complete([self.byte()?; 14]),
            _ => TypeIdentifier::Other(self.byte()?),
        })
    }

    fn struct_type(mut self) -> Option<StructType> {
        let name = self.name()?;
        let mut members = Vec::new();
        while !self.0.is_empty() {
            let member = self.name()?;
            members.push((member, self.identifier(0)?));
        }
        Some(StructType { name, members })
    }
}
