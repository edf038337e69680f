//! Errors keep their causes as sources (not in their own message); where one is logged rather
//! than returned, the whole chain is written out.

use std::error::Error;
use std::fmt;

/// Displays an error followed by each of its sources: `outer: cause: root cause`.
pub(crate) struct Chain<'a>(pub &'a dyn Error);

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut last = self.0.to_string();
        f.write_str(&last)?;
        let mut source = self.0.source();
        while let Some(e) = source {
            // A transparent wrapper shows its cause already: it is not repeated.
            let text = e.to_string();
            if !last.ends_with(&text) {
                write!(f, ": {text}")?;
            }
            last = text;
            source = e.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn writes_every_cause_once() {
        let e = Outer(std::io::Error::other("disk full"));
        assert_eq!(Chain(&e).to_string(), "outer: disk full");
    }
}
