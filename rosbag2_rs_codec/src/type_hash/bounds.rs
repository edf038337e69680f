//! What a type description from another node may make this process build: the rcl backend hands
//! such descriptions to rcl, which builds a type support (and the rmw a reader's sample) from
//! them, allocating fixed-size arrays whole and recursing through nested types.

use std::collections::HashMap;

use super::{field_type_id, IndividualTypeDescription, TypeDescription};
use crate::limits::{DESCRIPTION_FIELDS, FIXED_ELEMENTS};

/// How deep nested types may go (`a.b.c...`): ROS 2's own messages nest a few levels.
pub const MAX_NESTING: usize = 32;

/// A type description this process refuses to build a type from, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the type description of '{type_name}' is refused: {problem}")]
pub struct DescriptionRefused {
    /// The described type.
    pub type_name: String,
    /// What is beyond the bounds.
    pub problem: String,
}

impl TypeDescription {
    /// Checks the description against the budgets for descriptions from other nodes: at most
    /// [`DESCRIPTION_FIELDS`] fields in all, every nested type described, no type nesting itself,
    /// nesting at most [`MAX_NESTING`] deep, and at most [`FIXED_ELEMENTS`] elements of
    /// fixed-size arrays in one message (arrays of nested types multiply).
    pub fn check_bounds(&self) -> Result<(), DescriptionRefused> {
        let refuse = |problem: String| DescriptionRefused {
            type_name: self.type_description.type_name.clone(),
            problem,
        };
        let fields: usize = std::iter::once(&self.type_description)
            .chain(&self.referenced_type_descriptions)
            .map(|t| t.fields.len())
            .sum();
        let budget = DESCRIPTION_FIELDS.get();
        if fields as u64 > budget {
            return Err(refuse(format!(
                "{fields} fields, more than the {budget} allowed (set {} to raise it)",
                DESCRIPTION_FIELDS.env
            )));
        }
        let types: HashMap<&str, &IndividualTypeDescription> = self
            .referenced_type_descriptions
            .iter()
            .map(|t| (t.type_name.as_str(), t))
            .collect();
        let mut walk = Walk {
            types,
            elements: HashMap::new(),
            path: Vec::new(),
        };
        let elements = walk
            .elements(&self.type_description)
            .map_err(|problem| refuse(problem.0))?;
        let budget = FIXED_ELEMENTS.get();
        if elements > budget {
            return Err(refuse(format!(
                "{elements} elements in fixed-size arrays, more than the {budget} allowed \
                 (set {} to raise it)",
                FIXED_ELEMENTS.env
            )));
        }
        Ok(())
    }
}

/// What a [`Walk`] found wrong, for [`DescriptionRefused::problem`].
struct Problem(String);

/// A depth-first walk through nested types, counting each type's elements once.
struct Walk<'a> {
    types: HashMap<&'a str, &'a IndividualTypeDescription>,
    /// Elements of one message of each type walked: fields, fixed arrays multiplied out.
    elements: HashMap<&'a str, u64>,
    /// The types being walked, outermost first.
    path: Vec<&'a str>,
}

impl<'a> Walk<'a> {
    fn elements(&mut self, t: &'a IndividualTypeDescription) -> Result<u64, Problem> {
        if let Some(&n) = self.elements.get(t.type_name.as_str()) {
            return Ok(n);
        }
        if self.path.contains(&t.type_name.as_str()) {
            return Err(Problem(format!(
                "'{}' contains itself ({} > {})",
                t.type_name,
                self.path.join(" > "),
                t.type_name
            )));
        }
        if self.path.len() >= MAX_NESTING {
            return Err(Problem(format!(
                "types nest more than {MAX_NESTING} deep ({} > ...)",
                self.path[..3].join(" > ")
            )));
        }
        self.path.push(&t.type_name);
        let mut total = 0u64;
        for field in &t.fields {
            let ft = &field.field_type;
            let element = ft.type_id % field_type_id::ARRAY_OFFSET;
            let each = if element == field_type_id::NESTED_TYPE {
                let nested = *self
                    .types
                    .get(ft.nested_type_name.as_str())
                    .ok_or_else(|| {
                        Problem(format!(
                            "field '{}' of '{}' has the type '{}', which it does not describe",
                            field.name, t.type_name, ft.nested_type_name
                        ))
                    })?;
                self.elements(nested)?
            } else {
                1
            };
            let fixed_array = (field_type_id::ARRAY_OFFSET..field_type_id::BOUNDED_SEQUENCE_OFFSET)
                .contains(&ft.type_id);
            let count = if fixed_array { ft.capacity } else { 1 };
            total = total.saturating_add(each.saturating_mul(count));
        }
        self.path.pop();
        self.elements.insert(&t.type_name, total);
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::type_hash::{FieldDescription, FieldType};

    const UINT8: u8 = 3;

    fn field(name: &str, type_id: u8, capacity: u64, nested: &str) -> FieldDescription {
        FieldDescription {
            name: name.into(),
            field_type: FieldType {
                type_id,
                capacity,
                string_capacity: 0,
                nested_type_name: nested.into(),
            },
        }
    }

    fn described(type_name: &str, fields: Vec<FieldDescription>) -> IndividualTypeDescription {
        IndividualTypeDescription {
            type_name: type_name.into(),
            fields,
        }
    }

    fn description(
        main: IndividualTypeDescription,
        referenced: Vec<IndividualTypeDescription>,
    ) -> TypeDescription {
        TypeDescription {
            type_description: main,
            referenced_type_descriptions: referenced,
        }
    }

    /// `n` bytes in a fixed array of nested `p/msg/Inner` of `m` bytes each.
    fn arrays(n: u64, m: u64) -> TypeDescription {
        let nested = field(
            "inner",
            field_type_id::NESTED_TYPE + field_type_id::ARRAY_OFFSET,
            n,
            "p/msg/Inner",
        );
        description(
            described("p/msg/Outer", vec![nested]),
            vec![described(
                "p/msg/Inner",
                vec![field("b", UINT8 + field_type_id::ARRAY_OFFSET, m, "")],
            )],
        )
    }

    #[test]
    fn ordinary_types_pass() {
        let sep = "=".repeat(80);
        let definition = crate::MessageDefinition {
            topic_type: "p/msg/Stamped".into(),
            encoding: "ros2msg".into(),
            encoded_message_definition: format!(
                "std_msgs/Header header\nfloat64[9] covariance\n{sep}\nMSG: std_msgs/Header\n\
                 builtin_interfaces/Time stamp\nstring frame_id\n{sep}\n\
                 MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n"
            ),
            type_description_hash: String::new(),
        };
        let stamped = TypeDescription::from_definition("p/msg/Stamped", &definition).unwrap();
        assert_eq!(stamped.referenced_type_descriptions.len(), 2);
        assert_eq!(stamped.check_bounds(), Ok(()));
        assert_eq!(arrays(4096, 4096).check_bounds(), Ok(()));
    }

    #[test]
    fn fixed_arrays_multiply_through_nested_types() {
        let e = arrays(5000, 5000).check_bounds().unwrap_err();
        assert!(
            e.problem.contains("25000000 elements in fixed-size arrays"),
            "{e}"
        );
        // A sequence's elements are what a sample brings, not allocated up front.
        let mut sequence = arrays(5000, 5000);
        sequence.type_description.fields[0].field_type.type_id =
            field_type_id::NESTED_TYPE + field_type_id::UNBOUNDED_SEQUENCE_OFFSET;
        assert_eq!(sequence.check_bounds(), Ok(()));
    }

    #[test]
    fn a_type_containing_itself_or_an_undescribed_type_is_refused() {
        let own = field("again", field_type_id::NESTED_TYPE, 0, "p/msg/A");
        let a = described("p/msg/A", vec![field("x", UINT8, 0, ""), own]);
        let e = description(a.clone(), vec![a]).check_bounds().unwrap_err();
        assert!(e.problem.contains("'p/msg/A' contains itself"), "{e}");
        let missing = field("m", field_type_id::NESTED_TYPE, 0, "p/msg/Missing");
        let e = description(described("p/msg/B", vec![missing]), vec![])
            .check_bounds()
            .unwrap_err();
        assert!(
            e.problem
                .contains("'p/msg/Missing', which it does not describe"),
            "{e}"
        );
    }

    #[test]
    fn deep_nesting_and_many_fields_are_refused() {
        let chain: Vec<_> = (0..=MAX_NESTING)
            .map(|i| {
                let next = field(
                    "n",
                    field_type_id::NESTED_TYPE,
                    0,
                    &format!("p/msg/T{}", i + 1),
                );
                let leaf = field("x", UINT8, 0, "");
                described(
                    &format!("p/msg/T{i}"),
                    vec![if i == MAX_NESTING { leaf } else { next }],
                )
            })
            .collect();
        let e = description(chain[0].clone(), chain[1..].to_vec())
            .check_bounds()
            .unwrap_err();
        assert!(e.problem.contains("nest more than 32 deep"), "{e}");
        let wide = (0..=DESCRIPTION_FIELDS.default).map(|i| field(&format!("f{i}"), UINT8, 0, ""));
        let e = description(described("p/msg/Wide", wide.collect()), vec![])
            .check_bounds()
            .unwrap_err();
        assert!(e.problem.contains("10001 fields"), "{e}");
    }
}
