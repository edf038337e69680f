//! The syntax of rosidl's IDL: modules, `#include`, structs, typedefs, constants and
//! annotations, read from tokens into a [`File`] whose names are not yet resolved.
//!
//! Nesting (modules in modules, sequences of sequences) is limited to [`MAX_DEPTH`]; bounds and
//! array sizes are read as numbers and nothing is reserved for them.

use std::num::IntErrorKind;

use super::ast::{Const, File, Literal, Member, Struct, TypeSpec, Typedef};
use super::lexer::{Spanned, Token};
use super::IdlError;
use crate::msg::definition::Primitive;

/// Deepest nesting of modules, or of types within a type, that is read.
pub(super) const MAX_DEPTH: usize = 32;

/// An annotation's name and its parameters (`None` for a positional one).
struct Annotation {
    name: String,
    params: Vec<(Option<String>, Literal)>,
}

/// Reads the declarations of a tokenized IDL text.
pub(super) fn parse(tokens: &[Spanned]) -> Result<File, IdlError> {
    let mut p = Parser {
        tokens,
        pos: 0,
        scope: Vec::new(),
        file: File::default(),
    };
    p.definitions()?;
    Ok(p.file)
}

struct Parser<'t> {
    tokens: &'t [Spanned],
    pos: usize,
    scope: Vec<String>,
    file: File,
}

/// Constructs of IDL that rosidl does not generate and this parser refuses by name.
const UNSUPPORTED: &[&str] = &[
    "enum",
    "union",
    "bitset",
    "bitmask",
    "exception",
    "interface",
    "valuetype",
    "native",
    "abstract",
    "local",
    "component",
    "home",
    "eventtype",
    "porttype",
    "connector",
    "fixed",
    "any",
    "map",
];

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos).map(|s| &s.tok)
    }

    fn peek_at(&self, ahead: usize) -> Option<&Token> {
        self.tokens.get(self.pos + ahead).map(|s| &s.tok)
    }

    /// The line of the next token (or of the last one at the end).
    fn line(&self) -> usize {
        self.tokens
            .get(self.pos)
            .or(self.tokens.last())
            .map_or(1, |s| s.line)
    }

    fn error(&self, reason: impl Into<String>) -> IdlError {
        IdlError::new(self.line(), reason)
    }

    fn unexpected(&self, expected: &str) -> IdlError {
        match self.peek() {
            Some(t) => self.error(format!("expected {expected}, found {t}")),
            None => self.error(format!("expected {expected}, found the end of the text")),
        }
    }

    fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(&Token::Punct(c))
    }

    fn is_word(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Token::Ident(w)) if w == word)
    }

    fn eat_punct(&mut self, c: char) -> bool {
        let found = self.is_punct(c);
        if found {
            self.pos += 1;
        }
        found
    }

    fn eat_word(&mut self, word: &str) -> bool {
        let found = self.is_word(word);
        if found {
            self.pos += 1;
        }
        found
    }

    fn expect_punct(&mut self, c: char) -> Result<(), IdlError> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("'{c}'")))
        }
    }

    fn ident(&mut self, what: &str) -> Result<String, IdlError> {
        match self.peek() {
            Some(Token::Ident(s)) => {
                let s = s.clone();
                self.pos += 1;
                Ok(s)
            }
            _ => Err(self.unexpected(what)),
        }
    }

    /// Declarations up to the end of the text (at the top) or the `}` closing a module.
    fn definitions(&mut self) -> Result<(), IdlError> {
        loop {
            match self.peek() {
                None if self.scope.is_empty() => return Ok(()),
                None => {
                    return Err(
                        self.error(format!("module '{}' is not closed", self.scope.join("::")))
                    )
                }
                Some(Token::Punct('}')) if !self.scope.is_empty() => return Ok(()),
                Some(Token::Include(path)) => {
                    let path = path.clone();
                    self.pos += 1;
                    self.file.includes.push(path);
                }
                _ => self.definition()?,
            }
        }
    }

    fn definition(&mut self) -> Result<(), IdlError> {
        // Annotations of modules, structs, typedefs and constants carry nothing used here.
        self.annotations()?;
        let line = self.line();
        let Some(Token::Ident(word)) = self.peek() else {
            return Err(self.unexpected("a module, struct, typedef or const"));
        };
        match word.as_str() {
            "module" => self.module(),
            "struct" => self.structure(line),
            "typedef" => self.typedef(),
            "const" => self.constant(line),
            w if UNSUPPORTED.contains(&w) => Err(self.error(format!(
                "'{w}' is not supported (rosidl does not generate it)"
            ))),
            _ => Err(self.unexpected("a module, struct, typedef or const")),
        }
    }

    fn module(&mut self) -> Result<(), IdlError> {
        self.pos += 1;
        let name = self.ident("a module name")?;
        if self.scope.len() >= MAX_DEPTH {
            return Err(self.error(format!("modules nested deeper than {MAX_DEPTH}")));
        }
        self.expect_punct('{')?;
        self.scope.push(name);
        self.definitions()?;
        self.expect_punct('}')?;
        self.scope.pop();
        self.expect_punct(';')
    }

    fn structure(&mut self, line: usize) -> Result<(), IdlError> {
        self.pos += 1;
        let name = self.ident("a struct name")?;
        if self.eat_punct(';') {
            return Ok(()); // A forward declaration.
        }
        self.expect_punct('{')?;
        let mut members = Vec::new();
        while !self.eat_punct('}') {
            self.members(&mut members)?;
        }
        self.expect_punct(';')?;
        self.file.structs.push(Struct {
            scope: self.scope.clone(),
            name,
            members,
            line,
        });
        Ok(())
    }

    /// One member declaration: annotations, a type, one or more declarators, `;`.
    fn members(&mut self, out: &mut Vec<Member>) -> Result<(), IdlError> {
        let annotations = self.annotations()?;
        let default = annotations
            .into_iter()
            .find(|a| a.name == "default")
            .map(|a| {
                a.params
                    .into_iter()
                    .find(|(name, _)| name.as_deref().is_none_or(|n| n == "value"))
                    .map(|(_, value)| value)
                    .ok_or_else(|| self.error("@default without a value"))
            })
            .transpose()?;
        let ty = self.type_spec(0)?;
        loop {
            let line = self.line();
            let (name, array) = self.declarator()?;
            out.push(Member {
                ty: ty.clone(),
                name,
                array,
                default: default.clone(),
                line,
            });
            if !self.eat_punct(',') {
                break;
            }
        }
        self.expect_punct(';')
    }

    /// `name` or `name[N]`.
    fn declarator(&mut self) -> Result<(String, Option<usize>), IdlError> {
        let name = self.ident("a name")?;
        if !self.eat_punct('[') {
            return Ok((name, None));
        }
        let size = self.bound()?;
        self.expect_punct(']')?;
        if self.is_punct('[') {
            return Err(self.error(format!(
                "'{name}': multi-dimensional arrays are not supported"
            )));
        }
        Ok((name, Some(size)))
    }

    fn typedef(&mut self) -> Result<(), IdlError> {
        self.pos += 1;
        let ty = self.type_spec(0)?;
        loop {
            let line = self.line();
            let (name, array) = self.declarator()?;
            self.file.typedefs.push(Typedef {
                scope: self.scope.clone(),
                name,
                ty: ty.clone(),
                array,
                line,
            });
            if !self.eat_punct(',') {
                break;
            }
        }
        self.expect_punct(';')
    }

    fn constant(&mut self, line: usize) -> Result<(), IdlError> {
        self.pos += 1;
        let ty = self.type_spec(0)?;
        let name = self.ident("a constant name")?;
        self.expect_punct('=')?;
        let value = self.const_expr()?;
        self.expect_punct(';')?;
        self.file.consts.push(Const {
            scope: self.scope.clone(),
            name,
            ty,
            value,
            line,
        });
        Ok(())
    }

    /// `@name`, `@name(value)` or `@name(key=value, ...)`, any number of them.
    fn annotations(&mut self) -> Result<Vec<Annotation>, IdlError> {
        let mut out = Vec::new();
        while self.eat_punct('@') {
            let path = self.scoped_name()?;
            let name = path.last().cloned().unwrap_or_default();
            let mut params = Vec::new();
            if self.eat_punct('(') {
                loop {
                    let key = match (self.peek(), self.peek_at(1)) {
                        (Some(Token::Ident(k)), Some(Token::Punct('='))) => {
                            let k = k.clone();
                            self.pos += 2;
                            Some(k)
                        }
                        _ => None,
                    };
                    params.push((key, self.const_expr()?));
                    if !self.eat_punct(',') {
                        break;
                    }
                }
                self.expect_punct(')')?;
            }
            out.push(Annotation { name, params });
        }
        Ok(out)
    }

    /// `a`, `a::b::c` or `::a::b`.
    fn scoped_name(&mut self) -> Result<Vec<String>, IdlError> {
        if self.peek() == Some(&Token::Scope) {
            self.pos += 1;
        }
        let mut path = vec![self.ident("a name")?];
        while self.peek() == Some(&Token::Scope) {
            self.pos += 1;
            path.push(self.ident("a name after '::'")?);
        }
        Ok(path)
    }

    /// A literal, possibly signed, or a name. rosidl evaluates nothing more (no operators).
    fn const_expr(&mut self) -> Result<Literal, IdlError> {
        let negative = if self.eat_punct('-') {
            true
        } else {
            self.eat_punct('+');
            false
        };
        let line = self.line();
        let value = match self.peek().cloned() {
            Some(Token::Number(text)) => {
                self.pos += 1;
                number(&text, negative, line)?
            }
            Some(Token::Ident(w)) if w == "TRUE" || w == "FALSE" => {
                self.pos += 1;
                Literal::Bool(w == "TRUE")
            }
            Some(Token::Str { value, .. }) => {
                self.pos += 1;
                Literal::Str(value)
            }
            Some(Token::Char(value)) => {
                self.pos += 1;
                Literal::Char(value)
            }
            Some(Token::Ident(_) | Token::Scope) => Literal::Name(self.scoped_name()?),
            _ => return Err(self.unexpected("a literal")),
        };
        let signed = matches!(value, Literal::Integer(_) | Literal::Float(_));
        if negative && !signed {
            return Err(IdlError::new(
                line,
                "'-' before a value that is not a number",
            ));
        }
        if let Some(Token::Punct(op)) = self.peek() {
            if "+-*/%|&^<>~".contains(*op) {
                return Err(self.error(format!(
                    "operator '{op}' in a constant expression is not supported"
                )));
            }
        }
        Ok(value)
    }

    /// A bound or array size: a non-negative integer literal.
    fn bound(&mut self) -> Result<usize, IdlError> {
        let line = self.line();
        let text = match self.peek() {
            Some(Token::Number(text)) => text.clone(),
            Some(Token::Ident(name)) => {
                return Err(self.error(format!(
                    "bound '{name}' is a name; only integer literals are supported"
                )))
            }
            _ => return Err(self.unexpected("an integer bound")),
        };
        self.pos += 1;
        match number(&text, false, line) {
            Ok(Literal::Integer(n)) => usize::try_from(n)
                .map_err(|_| IdlError::new(line, format!("bound {text} is too large"))),
            Ok(_) => Err(IdlError::new(
                line,
                format!("bound '{text}' is not an integer"),
            )),
            Err(e) => Err(e.within("bound")),
        }
    }

    /// A type: builtin, `string<N>`, `sequence<T, N>` or a scoped name.
    fn type_spec(&mut self, depth: usize) -> Result<TypeSpec, IdlError> {
        if depth >= MAX_DEPTH {
            return Err(self.error(format!("types nested deeper than {MAX_DEPTH}")));
        }
        let line = self.line();
        let word = match self.peek() {
            Some(Token::Ident(w)) => w.clone(),
            Some(Token::Scope) => return Ok(TypeSpec::Named(self.scoped_name()?)),
            _ => return Err(self.unexpected("a type")),
        };
        if self.peek_at(1) == Some(&Token::Scope) {
            return Ok(TypeSpec::Named(self.scoped_name()?));
        }
        self.pos += 1;
        let primitive = |p| Ok(TypeSpec::Primitive(p));
        match word.as_str() {
            "boolean" => primitive(Primitive::Bool),
            "octet" => primitive(Primitive::Byte),
            "char" => primitive(Primitive::IdlChar),
            "wchar" => primitive(Primitive::WChar),
            "int8" => primitive(Primitive::Int8),
            "uint8" => primitive(Primitive::UInt8),
            "int16" | "short" => primitive(Primitive::Int16),
            "uint16" => primitive(Primitive::UInt16),
            "int32" => primitive(Primitive::Int32),
            "uint32" => primitive(Primitive::UInt32),
            "int64" => primitive(Primitive::Int64),
            "uint64" => primitive(Primitive::UInt64),
            "float" => primitive(Primitive::Float32),
            "double" => primitive(Primitive::Float64),
            "long" if self.is_word("double") => Err(IdlError::new(
                line,
                "'long double' is not supported (no CDR decoder reads it the same way)",
            )),
            "long" if self.eat_word("long") => primitive(Primitive::Int64),
            "long" => primitive(Primitive::Int32),
            "unsigned" => {
                if self.eat_word("short") {
                    primitive(Primitive::UInt16)
                } else if self.eat_word("long") {
                    if self.eat_word("long") {
                        primitive(Primitive::UInt64)
                    } else {
                        primitive(Primitive::UInt32)
                    }
                } else {
                    Err(self.unexpected("'short' or 'long' after 'unsigned'"))
                }
            }
            "string" | "wstring" => {
                let bound = if self.eat_punct('<') {
                    let b = self.bound()?;
                    self.expect_punct('>')?;
                    Some(b)
                } else {
                    None
                };
                Ok(TypeSpec::String {
                    bound,
                    wide: word == "wstring",
                })
            }
            "sequence" => {
                self.expect_punct('<')?;
                let element = Box::new(self.type_spec(depth + 1)?);
                let bound = if self.eat_punct(',') {
                    Some(self.bound()?)
                } else {
                    None
                };
                self.expect_punct('>')?;
                Ok(TypeSpec::Sequence { element, bound })
            }
            w if UNSUPPORTED.contains(&w) => Err(IdlError::new(
                line,
                format!("type '{w}' is not supported (rosidl does not generate it)"),
            )),
            _ => Ok(TypeSpec::Named(vec![word])),
        }
    }
}

/// An integer (decimal, `0x` hexadecimal, `0` octal) or floating point literal at `line`.
fn number(text: &str, negative: bool, line: usize) -> Result<Literal, IdlError> {
    let fail = |what: &str| Err(IdlError::new(line, format!("'{text}' is {what}")));
    let hex = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"));
    let float = hex.is_none() && text.contains(['.', 'e', 'E']);
    if float {
        return match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Literal::Float(if negative {
                format!("-{text}")
            } else {
                text.to_string()
            })),
            _ => fail("not a number"),
        };
    }
    let (digits, radix) = match hex {
        Some(h) => (h, 16),
        None if text.len() > 1 && text.starts_with('0') => (&text[1..], 8),
        None => (text, 10),
    };
    let value = match u128::from_str_radix(digits, radix) {
        Ok(v) if !digits.starts_with(['+', '-']) => v,
        Err(e) if *e.kind() == IntErrorKind::PosOverflow => return fail("out of range"),
        _ => return fail("not a number"),
    };
    let Ok(value) = i128::try_from(value) else {
        return fail("out of range");
    };
    Ok(Literal::Integer(if negative { -value } else { value }))
}
