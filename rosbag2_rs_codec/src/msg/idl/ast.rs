//! The declarations of one IDL text as written: names not yet resolved, values not yet spelled.

use crate::msg::definition::Primitive;

/// A type as written, names not resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum TypeSpec {
    /// A builtin number, boolean, octet or character.
    Primitive(Primitive),
    /// `string`, `string<N>`, `wstring`, `wstring<N>`.
    String {
        /// The bound, if any.
        bound: Option<usize>,
        /// `wstring`.
        wide: bool,
    },
    /// `sequence<T>`, `sequence<T, N>`.
    Sequence {
        /// The element type.
        element: Box<TypeSpec>,
        /// The bound, if any.
        bound: Option<usize>,
    },
    /// A (scoped) name: a typedef or a struct.
    Named(Vec<String>),
}

/// A constant expression: a literal with its sign applied, or a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Literal {
    /// An integer.
    Integer(i128),
    /// A floating point number as written, with its sign.
    Float(String),
    /// `TRUE` or `FALSE`.
    Bool(bool),
    /// A (joined) string literal.
    Str(String),
    /// A character literal.
    Char(String),
    /// A (scoped) name.
    Name(Vec<String>),
}

/// One member of a struct (a member declared `T a, b;` gives two).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Member {
    pub ty: TypeSpec,
    pub name: String,
    /// `name[N]`.
    pub array: Option<usize>,
    /// From `@default (value=...)`.
    pub default: Option<Literal>,
    pub line: usize,
}

/// A struct with the modules it is declared in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Struct {
    pub scope: Vec<String>,
    pub name: String,
    pub members: Vec<Member>,
    pub line: usize,
}

/// `typedef T name;` or `typedef T name[N];`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Typedef {
    pub scope: Vec<String>,
    pub name: String,
    pub ty: TypeSpec,
    pub array: Option<usize>,
    pub line: usize,
}

/// `const T NAME = value;`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Const {
    pub scope: Vec<String>,
    pub name: String,
    pub ty: TypeSpec,
    pub value: Literal,
    pub line: usize,
}

/// What one IDL text declares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct File {
    pub includes: Vec<String>,
    pub structs: Vec<Struct>,
    pub typedefs: Vec<Typedef>,
    pub consts: Vec<Const>,
}
