//! A small expression language over decoded message fields, for `convert --where`.
//!
//! ```text
//! clause     := TOPIC ':' expr                e.g.  /odom: pose.pose.position.x > 3
//! expr       := and ( ('or' | '||') and )*
//! and        := not ( ('and' | '&&') not )*
//! not        := ('not' | '!') not | compare
//! compare    := operand ( ('==' | '!=' | '<' | '<=' | '>' | '>=') operand )?
//! operand    := NUMBER | STRING | 'true' | 'false' | PATH | '(' expr ')'
//! PATH       := NAME ( '.' NAME | '[' INDEX ']' )*     INDEX: an integer, negative from the end
//! STRING     := '...' or "..." (backslash escapes the next character)
//! ```
//!
//! `True`/`False` are accepted too, so that the Python spelling of a condition works. Field paths
//! are checked against the topic's definition when the clause is compiled: a misspelt field, an
//! index into something that is not an array, or a comparison of a string with a number is an
//! [`ExprError`] naming the column. Numbers of every integer and float kind compare as numbers;
//! a bare field is true when it is a true bool or a non-zero number. An array index past the end
//! makes the comparison false.

use rosbag2_rs_codec::msg::definition::{ArrayKind, BaseType, Primitive};
use rosbag2_rs_codec::msg::{Registry, TopicDecoder, Value};

/// A `--where` clause or expression that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExprError {
    /// The text does not follow the grammar.
    #[error("'{text}', column {column}: {reason}")]
    Syntax {
        /// The expression.
        text: String,
        /// 1-based column of the problem.
        column: usize,
        /// What is wrong.
        reason: String,
    },
    /// A field path or comparison that does not fit the topic's type.
    #[error("'{text}': {reason}")]
    Type {
        /// The expression.
        text: String,
        /// What is wrong.
        reason: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Num(f64),
    Str(String),
    Name(String),
    Op(&'static str),
}

fn tokenize(text: &str) -> Result<Vec<(usize, Token)>, ExprError> {
    let err = |column: usize, reason: String| ExprError::Syntax {
        text: text.to_string(),
        column: column + 1,
        reason,
    };
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c == '\'' || c == '"' {
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(err(start, "unterminated string".into())),
                    Some('\\') => {
                        if let Some(&n) = chars.get(i + 1) {
                            s.push(n);
                        }
                        i += 2;
                    }
                    Some(&q) if q == c => {
                        i += 1;
                        break;
                    }
                    Some(&other) => {
                        s.push(other);
                        i += 1;
                    }
                }
            }
            out.push((start, Token::Str(s)));
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric()
                    || chars[i] == '.'
                    || ((chars[i] == '-' || chars[i] == '+') && matches!(chars[i - 1], 'e' | 'E')))
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let value = word
                .parse::<f64>()
                .ok()
                .or_else(|| {
                    let hex = word.strip_prefix("0x")?;
                    i64::from_str_radix(hex, 16).ok().map(|v| v as f64)
                })
                .ok_or_else(|| err(start, format!("'{word}' is not a number")))?;
            out.push((start, Token::Num(value)));
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((start, Token::Name(chars[start..i].iter().collect())));
            continue;
        }
        let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
        let op = ["==", "!=", "<=", ">=", "&&", "||"]
            .into_iter()
            .find(|o| *o == two)
            .or_else(|| {
                ["<", ">", "!", "(", ")", "[", "]", ".", "-"]
                    .into_iter()
                    .find(|o| o.starts_with(c))
            })
            .ok_or_else(|| err(start, format!("unexpected character '{c}'")))?;
        i += op.len();
        out.push((start, Token::Op(op)));
    }
    Ok(out)
}

/// One step of a field path.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(usize),
    Index(i64),
}

/// What a path or literal evaluates to, known when compiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Number,
    Text,
    Bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Num(f64),
    Str(String),
    Bool(bool),
    Path(Vec<Step>, Kind),
    Not(Box<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Cmp(&'static str, Box<Node>, Box<Node>),
}

/// A scalar a node evaluates to.
#[derive(Debug, Clone, PartialEq)]
enum Scalar {
    Num(f64),
    Str(String),
    Bool(bool),
}

impl Scalar {
    fn truthy(&self) -> bool {
        match self {
            Self::Num(n) => *n != 0.0,
            Self::Str(s) => !s.is_empty(),
            Self::Bool(b) => *b,
        }
    }
}

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<(usize, Token)>,
    pos: usize,
    registry: &'a Registry,
    root: usize,
}

impl Parser<'_> {
    fn syntax(&self, reason: impl Into<String>) -> ExprError {
        let column = self
            .tokens
            .get(self.pos)
            .map_or(self.text.chars().count(), |(c, _)| *c);
        ExprError::Syntax {
            text: self.text.to_string(),
            column: column + 1,
            reason: reason.into(),
        }
    }

    fn type_error(&self, reason: impl Into<String>) -> ExprError {
        ExprError::Type {
            text: self.text.to_string(),
            reason: reason.into(),
        }
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos).map(|(_, t)| t)
    }

    fn eat_op(&mut self, ops: &[&str]) -> Option<&'static str> {
        match self.peek() {
            Some(Token::Op(o)) if ops.contains(o) => {
                let o = *o;
                self.pos += 1;
                Some(o)
            }
            _ => None,
        }
    }

    fn eat_word(&mut self, words: &[&str]) -> bool {
        match self.peek() {
            Some(Token::Name(n)) if words.contains(&n.as_str()) => {
                self.pos += 1;
                true
            }
            _ => false,
        }
    }

    fn or(&mut self) -> Result<Node, ExprError> {
        let mut left = self.and()?;
        while self.eat_word(&["or"]) || self.eat_op(&["||"]).is_some() {
            left = Node::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Node, ExprError> {
        let mut left = self.not()?;
        while self.eat_word(&["and"]) || self.eat_op(&["&&"]).is_some() {
            left = Node::And(Box::new(left), Box::new(self.not()?));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Node, ExprError> {
        if self.eat_word(&["not"]) || self.eat_op(&["!"]).is_some() {
            return Ok(Node::Not(Box::new(self.not()?)));
        }
        self.compare()
    }

    fn kind_of(node: &Node) -> Option<Kind> {
        match node {
            Node::Num(_) => Some(Kind::Number),
            Node::Str(_) => Some(Kind::Text),
            Node::Bool(_) => Some(Kind::Bool),
            Node::Path(_, k) => Some(*k),
            _ => None,
        }
    }

    fn compare(&mut self) -> Result<Node, ExprError> {
        let left = self.operand()?;
        let Some(op) = self.eat_op(&["==", "!=", "<=", ">=", "<", ">"]) else {
            return Ok(left);
        };
        let right = self.operand()?;
        let (a, b) = (Self::kind_of(&left), Self::kind_of(&right));
        let name = |k: Option<Kind>| match k {
            Some(Kind::Number) => "a number",
            Some(Kind::Text) => "a string",
            Some(Kind::Bool) => "a bool",
            None => "a condition",
        };
        let bool_number = matches!(
            (a, b),
            (Some(Kind::Bool), Some(Kind::Number)) | (Some(Kind::Number), Some(Kind::Bool))
        );
        if a.is_none() || b.is_none() || (a != b && !bool_number) {
            return Err(self.type_error(format!(
                "cannot compare {} with {} ('{op}')",
                name(a),
                name(b)
            )));
        }
        if a == Some(Kind::Bool) && !matches!(op, "==" | "!=") && !bool_number {
            return Err(self.type_error(format!("bools compare with == and != only, not '{op}'")));
        }
        Ok(Node::Cmp(op, Box::new(left), Box::new(right)))
    }

    fn operand(&mut self) -> Result<Node, ExprError> {
        let Some(token) = self.peek().cloned() else {
            return Err(self.syntax("expected a value, found the end"));
        };
        self.pos += 1;
        match token {
            Token::Num(n) => Ok(Node::Num(n)),
            Token::Str(s) => Ok(Node::Str(s)),
            Token::Op("-") => match self.operand()? {
                Node::Num(n) => Ok(Node::Num(-n)),
                _ => {
                    self.pos -= 1;
                    Err(self.syntax("'-' goes before a number only"))
                }
            },
            Token::Op("(") => {
                let inner = self.or()?;
                if self.eat_op(&[")"]).is_none() {
                    return Err(self.syntax("expected ')'"));
                }
                Ok(inner)
            }
            Token::Name(n) if n == "true" || n == "True" => Ok(Node::Bool(true)),
            Token::Name(n) if n == "false" || n == "False" => Ok(Node::Bool(false)),
            Token::Name(n) if matches!(n.as_str(), "and" | "or" | "not") => {
                self.pos -= 1;
                Err(self.syntax(format!("expected a value, found '{n}'")))
            }
            Token::Name(n) => self.path(n),
            Token::Op(o) => {
                self.pos -= 1;
                Err(self.syntax(format!("expected a value, found '{o}'")))
            }
        }
    }

    /// A field path from the root type, checked against the definitions.
    fn path(&mut self, first: String) -> Result<Node, ExprError> {
        let mut steps = Vec::new();
        let mut spelled = String::new();
        let mut type_index = self.root;
        // The field being looked at: its base type and whether it is still an array.
        let mut current: Option<(BaseType, bool, usize)> = None;
        let mut name = Some(first);
        loop {
            if let Some(field_name) = name.take() {
                if let Some((base, array, _)) = &current {
                    if *array || !matches!(base, BaseType::Message(_)) {
                        return Err(self.type_error(format!(
                            "'{spelled}' has no fields (it is not a message)"
                        )));
                    }
                }
                let ty = self.registry.by_index(type_index);
                let i = ty.field_index(&field_name).ok_or_else(|| {
                    let fields: Vec<&str> = ty.fields.iter().map(|f| f.name.as_str()).collect();
                    self.type_error(format!(
                        "{} has no field '{field_name}' (it has: {})",
                        ty.name,
                        fields.join(", ")
                    ))
                })?;
                let field = &ty.fields[i];
                if !spelled.is_empty() {
                    spelled.push('.');
                }
                spelled.push_str(&field_name);
                steps.push(Step::Field(i));
                current = Some((
                    field.base.clone(),
                    field.array != ArrayKind::Single,
                    field.type_index(),
                ));
                type_index = field.type_index();
            }
            if self.eat_op(&["."]).is_some() {
                match self.peek().cloned() {
                    Some(Token::Name(n)) => {
                        self.pos += 1;
                        name = Some(n);
                        continue;
                    }
                    _ => return Err(self.syntax("expected a field name after '.'")),
                }
            }
            if self.eat_op(&["["]).is_some() {
                let negative = self.eat_op(&["-"]).is_some();
                let index = match self.peek() {
                    Some(Token::Num(n)) if n.fract() == 0.0 => *n as i64,
                    _ => return Err(self.syntax("expected an integer index")),
                };
                self.pos += 1;
                if self.eat_op(&["]"]).is_none() {
                    return Err(self.syntax("expected ']'"));
                }
                match &mut current {
                    Some((_, array, _)) if *array => *array = false,
                    _ => {
                        return Err(self.type_error(format!("'{spelled}' is not an array to index")))
                    }
                }
                spelled.push_str(&format!("[{}{index}]", if negative { "-" } else { "" }));
                steps.push(Step::Index(if negative { -index } else { index }));
                continue;
            }
            break;
        }
        let kind = match current {
            Some((_, true, _)) => {
                return Err(
                    self.type_error(format!("'{spelled}' is an array: pick an element with [i]"))
                )
            }
            Some((BaseType::Primitive(Primitive::Bool), false, _)) => Kind::Bool,
            Some((BaseType::Primitive(_), false, _)) => Kind::Number,
            Some((BaseType::String { .. } | BaseType::WString { .. }, false, _)) => Kind::Text,
            Some((BaseType::Message(_), false, _)) => {
                return Err(self.type_error(format!(
                    "'{spelled}' is a message: compare one of its fields"
                )))
            }
            None => unreachable!("a path has at least one field"),
        };
        Ok(Node::Path(steps, kind))
    }
}

/// A compiled expression over the messages of one type.
#[derive(Debug, Clone)]
pub struct Expr {
    text: String,
    node: Node,
}

impl Expr {
    /// Compiles `text` for messages decoded by `decoder`.
    pub fn compile(text: &str, decoder: &TopicDecoder) -> Result<Self, ExprError> {
        let tokens = tokenize(text)?;
        let mut parser = Parser {
            text,
            tokens,
            pos: 0,
            registry: &decoder.registry,
            root: decoder.index,
        };
        if parser.tokens.is_empty() {
            return Err(parser.syntax("empty expression"));
        }
        let node = parser.or()?;
        if parser.pos < parser.tokens.len() {
            return Err(parser.syntax("unexpected text after the expression"));
        }
        Ok(Self {
            text: text.to_string(),
            node,
        })
    }

    /// The expression's text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the expression holds for `message` (a decoded message of the compiled type).
    pub fn matches(&self, message: &Value) -> bool {
        eval(&self.node, message).is_some_and(|s| s.truthy())
    }
}

fn resolve<'a>(mut value: &'a Value, steps: &[Step]) -> Option<&'a Value> {
    for step in steps {
        value = match (step, value) {
            (Step::Field(i), Value::Struct(fields)) => fields.get(*i)?,
            (Step::Index(i), Value::Array(items)) => {
                let at = if *i < 0 { items.len() as i64 + i } else { *i };
                items.get(usize::try_from(at).ok()?)?
            }
            (Step::Index(i), Value::Bytes(bytes)) => {
                // Octet arrays are kept as bytes: hand out the element as a value of its own.
                let at = if *i < 0 { bytes.len() as i64 + i } else { *i };
                let b = *bytes.get(usize::try_from(at).ok()?)?;
                return Some(leak_byte(b));
            }
            _ => return None,
        };
    }
    Some(value)
}

/// The `Value` of one octet, from a static table (so that [`resolve`] can return a reference).
fn leak_byte(b: u8) -> &'static Value {
    static TABLE: std::sync::OnceLock<Vec<Value>> = std::sync::OnceLock::new();
    &TABLE.get_or_init(|| (0..=255u8).map(Value::UInt8).collect())[b as usize]
}

fn eval(node: &Node, message: &Value) -> Option<Scalar> {
    Some(match node {
        Node::Num(n) => Scalar::Num(*n),
        Node::Str(s) => Scalar::Str(s.clone()),
        Node::Bool(b) => Scalar::Bool(*b),
        Node::Path(steps, _) => {
            let v = resolve(message, steps)?;
            match v {
                Value::Bool(b) => Scalar::Bool(*b),
                Value::String(_) => Scalar::Str(v.as_str()?.into_owned()),
                other => Scalar::Num(other.as_f64()?),
            }
        }
        Node::Not(inner) => Scalar::Bool(!eval(inner, message).is_some_and(|s| s.truthy())),
        Node::And(a, b) => Scalar::Bool(
            eval(a, message).is_some_and(|s| s.truthy())
                && eval(b, message).is_some_and(|s| s.truthy()),
        ),
        Node::Or(a, b) => Scalar::Bool(
            eval(a, message).is_some_and(|s| s.truthy())
                || eval(b, message).is_some_and(|s| s.truthy()),
        ),
        Node::Cmp(op, a, b) => {
            let (a, b) = (eval(a, message)?, eval(b, message)?);
            let ordering = match (&a, &b) {
                (Scalar::Num(x), Scalar::Num(y)) => x.partial_cmp(y)?,
                (Scalar::Str(x), Scalar::Str(y)) => x.cmp(y),
                (Scalar::Bool(x), Scalar::Bool(y)) => x.cmp(y),
                (Scalar::Bool(x), Scalar::Num(y)) => (*x as u8 as f64).partial_cmp(y)?,
                (Scalar::Num(x), Scalar::Bool(y)) => x.partial_cmp(&(*y as u8 as f64))?,
                _ => return None,
            };
            use std::cmp::Ordering::*;
            Scalar::Bool(match *op {
                "==" => ordering == Equal,
                "!=" => ordering != Equal,
                "<" => ordering == Less,
                "<=" => ordering != Greater,
                ">" => ordering == Greater,
                _ => ordering != Less,
            })
        }
    })
}

/// Splits a `--where` clause `TOPIC: EXPR` into the topic and the expression.
pub fn split_clause(clause: &str) -> Result<(String, String), ExprError> {
    let trimmed = clause.trim_start();
    let colon = trimmed
        .starts_with('/')
        .then(|| trimmed.find(':'))
        .flatten()
        .ok_or_else(|| ExprError::Syntax {
            text: clause.to_string(),
            column: 1,
            reason: "a --where clause starts with its topic: '/topic: field > 3'".into(),
        })?;
    let topic = trimmed[..colon].trim().to_string();
    let expr = trimmed[colon + 1..].trim().to_string();
    Ok((topic, expr))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rosbag2_rs_codec::MessageDefinition;

    fn decoder() -> TopicDecoder {
        TopicDecoder::new(
            "test_msgs/msg/Probe",
            &MessageDefinition {
                topic_type: "test_msgs/msg/Probe".into(),
                encoding: "ros2msg".into(),
                encoded_message_definition: "int32 a\nfloat64 b\nstring name\nbool ok\n\
                     test_msgs/Point[] points\nuint8[] raw\n\
                     ================================================================================\n\
                     MSG: test_msgs/Point\nfloat64 x\nfloat64 y\n"
                    .into(),
                type_description_hash: String::new(),
            },
        )
        .unwrap()
    }

    fn message(a: i32, b: f64, name: &str, ok: bool, points: &[(f64, f64)]) -> Value {
        Value::Struct(vec![
            Value::Int32(a),
            Value::Float64(b),
            Value::string(name),
            Value::Bool(ok),
            Value::Array(
                points
                    .iter()
                    .map(|(x, y)| Value::Struct(vec![Value::Float64(*x), Value::Float64(*y)]))
                    .collect(),
            ),
            Value::Bytes(vec![7, 8, 9]),
        ])
    }

    fn holds(text: &str, m: &Value) -> bool {
        Expr::compile(text, &decoder()).unwrap().matches(m)
    }

    #[test]
    fn comparisons_logic_strings_and_indexes() {
        let m = message(5, 2.5, "left wheel", true, &[(1.0, 2.0), (3.0, -4.0)]);
        assert!(holds("a > 3", &m));
        assert!(!holds("a > 5", &m));
        assert!(holds("a >= 5 and b < 3", &m));
        assert!(holds("a == 4 or b == 2.5", &m));
        assert!(holds("not (a == 4)", &m));
        assert!(holds("!(a == 4) && ok", &m));
        assert!(holds("ok == True", &m));
        assert!(holds("name == 'left wheel'", &m));
        assert!(holds("name != \"right\"", &m));
        assert!(holds("points[1].y < -3.5", &m));
        assert!(holds("points[-1].x == 3", &m));
        assert!(!holds("points[2].x == 3", &m), "past the end: false");
        assert!(holds("raw[0] == 7 and raw[-1] == 9", &m));
        assert!(holds("a == 0x5 and b == 25e-1", &m));
        assert!(holds("a", &m));
    }

    #[test]
    fn errors_name_the_problem() {
        let d = decoder();
        let err = |t: &str| Expr::compile(t, &d).unwrap_err().to_string();
        assert!(err("c > 3").contains("no field 'c'"), "{}", err("c > 3"));
        assert!(err("a > 'x'").contains("cannot compare a number with a string"));
        assert!(err("a >").contains("column 4"), "{}", err("a >"));
        assert!(err("(a > 3").contains("expected ')'"));
        assert!(err("points > 3").contains("is an array"));
        assert!(err("points[0] > 3").contains("is a message"));
        assert!(err("a[0] > 3").contains("not an array"));
        assert!(err("a.b > 3").contains("has no fields"));
        assert!(err("name == 'x").contains("unterminated string"));
        assert!(err("a > 3 3").contains("unexpected text"));
        assert!(err("a ? 3").contains("unexpected character '?'"));
        assert!(err("").contains("empty expression"));
        assert!(err("ok < true").contains("bools compare"));
    }

    #[test]
    fn clauses_start_with_their_topic() {
        assert_eq!(
            split_clause("/odom: pose.x > 3").unwrap(),
            ("/odom".to_string(), "pose.x > 3".to_string())
        );
        assert!(split_clause("pose.x > 3").is_err());
    }
}
