//! `ros2idl` definitions: the OMG IDL that rosidl generates for interfaces (`rosidl_adapter`'s
//! `.idl` next to every `.msg`, `.srv` and `.action`, and hand-written `.idl` files), read into
//! the same [`MessageType`]s that [`parse_message`](super::definition::parse_message) gives for
//! `.msg`, so that decoding, rendering and RIHS01 hashing work alike.
//!
//! What is read: `#include`, nested `module`s, `struct`s (a message's, a service's `_Request`
//! and `_Response`, an action's `_Goal`, `_Result` and `_Feedback`), `typedef`s (of arrays too:
//! `typedef double double__9[9];`), constants in `module <Struct>_Constants { const T N = v; }`,
//! every primitive spelling (`boolean`, `octet`, `char`, `wchar`, `int8`…`uint64`, `short`,
//! `long`, `long long`, `unsigned …`, `float`, `double`), `string`, `wstring`, `string<N>`,
//! `wstring<N>`, `sequence<T>`, `sequence<T, N>`, arrays `name[N]`, scoped names
//! (`pkg::msg::Type`, `::pkg::msg::Type`), annotations (`@default (value=…)` gives the field's
//! default, spelled as `.msg` spells it; `@verbatim`, `@key`, `@unit` and others are skipped),
//! `//` and `/* */` comments, string literals with escapes and adjacent literals joined.
//!
//! What is refused, with an error naming the type and line: `long double`, `fixed`, `enum`,
//! `union` and the rest of IDL that rosidl does not generate, multi-dimensional arrays, arrays or
//! sequences of arrays or sequences, constant expressions with operators, and names that are
//! neither typedefs nor `pkg::msg::Type`. Nothing is reserved for a bound or array size read
//! from the text, and nesting is limited (32 levels of modules, of types, of typedefs).
//!
//! The member `uint8 structure_needs_at_least_one_member` rosidl gives a message without fields
//! is dropped (`.msg` has none; hashing adds it back). A `.msg` `char` is a `uint8` in IDL;
//! IDL's own `char` and `wchar` are [`Primitive::IdlChar`](super::definition::Primitive) and
//! [`Primitive::WChar`](super::definition::Primitive).
//!
//! ```
//! use rosbag2_rs_codec::msg::idl::parse_idl;
//! use rosbag2_rs_codec::msg::definition::{ArrayKind, BaseType};
//! let types = parse_idl(
//!     "pkg/msg/Thing",
//!     "module pkg { module msg {\n\
//!        typedef double double__3[3];\n\
//!        module Thing_Constants { const uint8 READY = 1; };\n\
//!        struct Thing { @default (value=\"abc\") string<5> name; double__3 xyz; };\n\
//!      }; };\n",
//! )?;
//! let thing = &types[0];
//! assert_eq!(thing.name, "pkg/Thing");
//! assert_eq!(thing.fields[0].base, BaseType::String { bound: Some(5) });
//! assert_eq!(thing.fields[0].default.as_deref(), Some("\"abc\""));
//! assert_eq!(thing.fields[1].array, ArrayKind::Fixed(3));
//! assert_eq!(thing.constants[0].value, "1");
//! # Ok::<(), rosbag2_rs_codec::msg::CodecError>(())
//! ```

mod ast;
mod concatenated;
mod lexer;
mod lower;
mod parser;

use super::definition::MessageType;
use super::error::CodecError;

/// A problem at a line of one IDL text, before the text's type name is attached.
#[derive(Debug, Clone, PartialEq, Eq)]
struct IdlError {
    line: usize,
    reason: String,
}

impl IdlError {
    fn new(line: usize, reason: impl Into<String>) -> Self {
        Self {
            line,
            reason: reason.into(),
        }
    }

    /// The same problem, said to be in `what` (`member 'x'`, `bound`).
    fn within(self, what: &str) -> Self {
        Self {
            line: self.line,
            reason: format!("{what}: {}", self.reason),
        }
    }

    fn into_codec(self, type_name: &str) -> CodecError {
        CodecError::Definition {
            type_name: type_name.to_string(),
            line: self.line,
            reason: self.reason,
        }
    }
}

/// Parses one IDL text (an `.idl` file, or one section of a `ros2idl` definition) into the
/// message types it declares, in order. `name` (`pkg/msg/Type`) names the text in errors.
pub fn parse_idl(name: &str, text: &str) -> Result<Vec<MessageType>, CodecError> {
    let tokens = lexer::tokenize(text).map_err(|e| e.into_codec(name))?;
    let file = parser::parse(&tokens).map_err(|e| e.into_codec(name))?;
    lower::lower(&file).map_err(|e| e.into_codec(name))
}

/// The files an IDL text `#include`s, as written (`pkg/msg/Type.idl`): the dependencies rosbag2
/// appends after it.
pub fn idl_includes(text: &str) -> Result<Vec<String>, CodecError> {
    let tokens = lexer::tokenize(text).map_err(|e| e.into_codec("<idl>"))?;
    Ok(tokens
        .into_iter()
        .filter_map(|t| match t.tok {
            lexer::Token::Include(path) => Some(path),
            _ => None,
        })
        .collect())
}

#[cfg(test)]
mod tests;
