//! Errors of the message codec. Every error names the message type and, when it concerns a
//! payload, the field path and byte offset.

/// What went wrong while parsing a definition or decoding, encoding or mapping a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// A message definition that does not parse.
    #[error("definition of {type_name}, line {line}: {reason}")]
    Definition {
        /// The type whose definition is wrong.
        type_name: String,
        /// 1-based line within that type's section.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A field refers to a type that no definition provides.
    #[error("definition of {type_name}: field '{field}' has unknown type '{missing}'")]
    UnknownType {
        /// The type containing the field.
        type_name: String,
        /// The field.
        field: String,
        /// The type that is missing.
        missing: String,
    },
    /// Types that contain themselves (ROS forbids recursive messages).
    #[error("definition of {type_name}: recursive type")]
    Recursive {
        /// A type on the cycle.
        type_name: String,
    },
    /// A type was asked for that the registry does not hold.
    #[error("no definition for type '{0}'")]
    Missing(String),
    /// Bytes that are not a valid message of the type.
    #[error("{type_name}: field '{field}' at offset {offset}: {reason}")]
    Decode {
        /// The message type being decoded.
        type_name: String,
        /// Dotted path of the field (`header.frame_id`, `points[3].x`).
        field: String,
        /// Offset in the payload where decoding failed.
        offset: usize,
        /// What is wrong.
        reason: String,
    },
    /// A value that does not fit the type.
    #[error("{type_name}: field '{field}': {reason}")]
    Encode {
        /// The message type being encoded.
        type_name: String,
        /// Dotted path of the field.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// A message whose arrays claim more elements of no wire size than the budget
    /// ([`crate::limits::EMPTY_ELEMENTS`]).
    #[error("{type_name}: field '{field}' at offset {offset}: {source}")]
    TooManyElements {
        /// The message type being decoded.
        type_name: String,
        /// Dotted path of the array that went over.
        field: String,
        /// Offset in the payload of the array's elements.
        offset: usize,
        /// What the array claimed and the budget.
        #[source]
        source: crate::limits::TooManyElements,
    },
    /// A type that has no equivalent in the other ROS version.
    #[error("{type_name}: cannot map between ROS 1 and ROS 2: {reason}")]
    Unmappable {
        /// The type.
        type_name: String,
        /// Why.
        reason: String,
    },
}

/// A field type that does not parse (`uint8[3`, `int32<=3`, `a/b/c/d`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldTypeError {
    /// `[` without its `]`.
    #[error("'{0}': unterminated array")]
    UnterminatedArray(String),
    /// An array or string bound that is not a number.
    #[error("invalid bound '{bound}'")]
    InvalidBound {
        /// The bound as written.
        bound: String,
        /// Why it is not a number.
        #[source]
        source: std::num::ParseIntError,
    },
    /// `<=` on a type other than a string.
    #[error("'{0}': only strings take a '<=' bound")]
    BoundedNonString(String),
    /// A name that is neither a builtin nor `pkg/Type`.
    #[error("invalid type '{0}'")]
    InvalidType(String),
    /// A `<=` bound in a ROS 1 definition: ROS 1 has no bounded strings or sequences (genmsg
    /// refuses them), and what a ROS 1 message holds would not fit the bounded ROS 2 type.
    #[error("'{0}': ROS 1 types take no '<=' bound")]
    BoundInRos1(String),
}

/// A failure deep inside a payload, before the type and field path are known.
#[derive(Debug)]
pub(crate) struct Fail {
    pub offset: usize,
    pub reason: String,
    /// Field names, innermost first.
    pub path: Vec<String>,
    /// Set when the message went over its element budget.
    pub over_budget: Option<crate::limits::TooManyElements>,
}

impl Fail {
    pub(crate) fn new(offset: usize, reason: impl Into<String>) -> Self {
        Self {
            offset,
            reason: reason.into(),
            path: Vec::new(),
            over_budget: None,
        }
    }

    /// A message over its element budget, at `offset`.
    pub(crate) fn budget(offset: usize, source: crate::limits::TooManyElements) -> Self {
        Self {
            over_budget: Some(source),
            ..Self::new(offset, source.to_string())
        }
    }

    pub(crate) fn within(mut self, segment: impl Into<String>) -> Self {
        self.path.push(segment.into());
        self
    }

    pub(crate) fn field_path(&self) -> String {
        let mut out = String::new();
        for seg in self.path.iter().rev() {
            if !out.is_empty() && !seg.starts_with('[') {
                out.push('.');
            }
            out.push_str(seg);
        }
        if out.is_empty() {
            out.push_str("<message>");
        }
        out
    }

    pub(crate) fn into_decode(self, type_name: &str) -> CodecError {
        if let Some(source) = self.over_budget {
            return CodecError::TooManyElements {
                type_name: type_name.to_string(),
                field: self.field_path(),
                offset: self.offset,
                source,
            };
        }
        CodecError::Decode {
            type_name: type_name.to_string(),
            field: self.field_path(),
            offset: self.offset,
            reason: self.reason,
        }
    }

    pub(crate) fn into_encode(self, type_name: &str) -> CodecError {
        CodecError::Encode {
            type_name: type_name.to_string(),
            field: self.field_path(),
            reason: self.reason,
        }
    }
}
