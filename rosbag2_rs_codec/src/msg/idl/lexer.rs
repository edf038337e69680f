//! Tokens of the IDL rosidl reads: identifiers and keywords, number, string and character
//! literals, `#include` directives and punctuation, each with its line. Comments (`//`, `/* */`)
//! are dropped; adjacent string literals are joined into one, as IDL joins them.

use super::IdlError;

/// One token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    /// An identifier or a keyword.
    Ident(String),
    /// A number as written, without its sign: `42`, `0x2A`, `052`, `1.5e-3`.
    Number(String),
    /// One or more adjacent string literals, unescaped and joined; `wide` for `L"..."`.
    Str {
        /// The characters.
        value: String,
        /// A wide literal.
        wide: bool,
    },
    /// A character literal, unescaped.
    Char(String),
    /// `#include "path"` or `#include <path>`: the path.
    Include(String),
    /// `::`.
    Scope,
    /// Any other punctuation.
    Punct(char),
}

impl std::fmt::Display for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Ident(s) | Self::Number(s) => write!(f, "'{s}'"),
            Self::Str { .. } => f.write_str("a string literal"),
            Self::Char(_) => f.write_str("a character literal"),
            Self::Include(p) => write!(f, "'#include {p}'"),
            Self::Scope => f.write_str("'::'"),
            Self::Punct(c) => write!(f, "'{c}'"),
        }
    }
}

/// A token and the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Spanned {
    /// The token.
    pub tok: Token,
    /// Its line.
    pub line: usize,
}

const PUNCTUATION: &str = "{}()<>[];,=@+-*/%|&^~:";

/// Splits `text` into tokens.
pub(super) fn tokenize(text: &str) -> Result<Vec<Spanned>, IdlError> {
    let mut lexer = Lexer {
        chars: text.chars().collect(),
        pos: 0,
        line: 1,
        out: Vec::new(),
    };
    lexer.run()?;
    Ok(lexer.out)
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    line: usize,
    out: Vec<Spanned>,
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn error(&self, reason: impl Into<String>) -> IdlError {
        IdlError::new(self.line, reason)
    }

    fn push(&mut self, tok: Token, line: usize) {
        self.out.push(Spanned { tok, line });
    }

    fn run(&mut self) -> Result<(), IdlError> {
        while let Some(c) = self.peek(0) {
            let line = self.line;
            match c {
                c if c.is_whitespace() => {
                    self.bump();
                }
                '/' if self.peek(1) == Some('/') => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                '/' if self.peek(1) == Some('*') => self.block_comment()?,
                '#' => self.directive()?,
                'L' if self.peek(1) == Some('"') => {
                    self.bump();
                    self.string(true)?;
                }
                'L' if self.peek(1) == Some('\'') => {
                    self.bump();
                    self.character()?;
                }
                '"' => self.string(false)?,
                '\'' => self.character()?,
                c if c.is_ascii_alphabetic() || c == '_' => {
                    let word = self.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
                    self.push(Token::Ident(word), line);
                }
                c if c.is_ascii_digit()
                    || (c == '.' && self.peek(1).is_some_and(|c| c.is_ascii_digit())) =>
                {
                    self.number(line);
                }
                ':' if self.peek(1) == Some(':') => {
                    self.bump();
                    self.bump();
                    self.push(Token::Scope, line);
                }
                c if PUNCTUATION.contains(c) => {
                    self.bump();
                    self.push(Token::Punct(c), line);
                }
                c => return Err(self.error(format!("unexpected character {c:?}"))),
            }
        }
        Ok(())
    }

    fn take_while(&mut self, keep: impl Fn(char) -> bool) -> String {
        let mut s = String::new();
        while let Some(c) = self.peek(0).filter(|&c| keep(c)) {
            s.push(c);
            self.bump();
        }
        s
    }

    fn block_comment(&mut self) -> Result<(), IdlError> {
        let start = self.line;
        self.bump();
        self.bump();
        loop {
            match self.bump() {
                Some('*') if self.peek(0) == Some('/') => {
                    self.bump();
                    return Ok(());
                }
                Some(_) => {}
                None => {
                    return Err(IdlError::new(
                        start,
                        "comment opened with '/*' is never closed",
                    ))
                }
            }
        }
    }

    /// `#include "path"` or `#include <path>`; no other directive is part of rosidl's IDL.
    fn directive(&mut self) -> Result<(), IdlError> {
        let line = self.line;
        self.bump();
        let word = self.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
        if word != "include" {
            return Err(self.error(format!("unsupported preprocessor directive '#{word}'")));
        }
        self.take_while(|c| c == ' ' || c == '\t');
        let close = match self.bump() {
            Some('"') => '"',
            Some('<') => '>',
            _ => return Err(self.error("'#include' without a \"path\" or <path>")),
        };
        let path = self.take_while(|c| c != close && c != '\n');
        if self.bump() != Some(close) || path.is_empty() {
            return Err(self.error("unterminated '#include' path"));
        }
        self.push(Token::Include(path), line);
        Ok(())
    }

    fn number(&mut self, line: usize) {
        let mut s = String::new();
        while let Some(c) = self.peek(0) {
            let exponent_sign = (c == '+' || c == '-')
                && s.ends_with(['e', 'E'])
                && !s.starts_with("0x")
                && !s.starts_with("0X");
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' || exponent_sign {
                s.push(c);
                self.bump();
            } else {
                break;
            }
        }
        self.push(Token::Number(s), line);
    }

    /// A string literal after its opening quote's position; joined to the string literal just
    /// before it, if any, of the same width.
    fn string(&mut self, wide: bool) -> Result<(), IdlError> {
        let line = self.line;
        self.bump();
        let mut value = String::new();
        loop {
            match self.bump() {
                Some('"') => break,
                Some('\\') => self.escape(&mut value, wide)?,
                Some('\n') | None => {
                    return Err(IdlError::new(line, "unterminated string literal"))
                }
                Some(c) => value.push(c),
            }
        }
        if let Some(Spanned {
            tok:
                Token::Str {
                    value: previous,
                    wide: w,
                },
            ..
        }) = self.out.last_mut()
        {
            if *w == wide {
                previous.push_str(&value);
                return Ok(());
            }
        }
        self.push(Token::Str { value, wide }, line);
        Ok(())
    }

    fn character(&mut self) -> Result<(), IdlError> {
        let line = self.line;
        self.bump();
        let mut value = String::new();
        match self.bump() {
            Some('\\') => self.escape(&mut value, true)?,
            Some(c) if c != '\'' && c != '\n' => value.push(c),
            _ => return Err(IdlError::new(line, "invalid character literal")),
        }
        if self.bump() != Some('\'') {
            return Err(IdlError::new(line, "unterminated character literal"));
        }
        self.push(Token::Char(value), line);
        Ok(())
    }

    /// The escape sequences of IDL 4.2 table 7-9 (as rosidl_parser decodes them: `\x`, octal and
    /// `\u` give the character of that code point); an unknown one is kept as written.
    fn escape(&mut self, out: &mut String, wide: bool) -> Result<(), IdlError> {
        let Some(c) = self.peek(0) else {
            return Err(self.error("unterminated string literal"));
        };
        let simple = match c {
            'n' => Some('\n'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            'b' => Some('\u{8}'),
            'r' => Some('\r'),
            'f' => Some('\u{c}'),
            'a' => Some('\u{7}'),
            '\\' | '?' | '\'' | '"' => Some(c),
            _ => None,
        };
        if let Some(s) = simple {
            self.bump();
            out.push(s);
            return Ok(());
        }
        let (radix, max, skip) = match c {
            '0'..='7' => (8, 3, 0),
            'x' => (16, 2, 1),
            'u' if wide => (16, 4, 1),
            _ => {
                out.push('\\');
                return Ok(());
            }
        };
        let digits: String = (skip..skip + max)
            .map_while(|i| self.peek(i).filter(|d| d.is_digit(radix)))
            .collect();
        if digits.is_empty() {
            out.push('\\');
            return Ok(());
        }
        for _ in 0..skip + digits.len() {
            self.bump();
        }
        let code = u32::from_str_radix(&digits, radix).unwrap_or(0);
        match char::from_u32(code) {
            Some(ch) => out.push(ch),
            None => return Err(self.error(format!("escape \\{c}{digits} is not a character"))),
        }
        Ok(())
    }
}
