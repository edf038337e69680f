//! Keeping a panic from unwinding out of a middleware callback: through an `extern "C"` frame
//! (Fast DDS listeners call into Rust) it aborts the process, and on a backend thread (Cyclone's
//! dispatcher) it ends the thread and with it every reader of the node. Each callback runs in
//! [`guarded`]: a panic is caught, counted and logged, and the backend goes on.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};

/// Runs `call`, catching a panic: counted in `panics` and logged (the first and then at every
/// power of two, with its message) as from `what`. Returns whether `call` returned normally.
pub fn guarded(panics: &AtomicU64, what: &str, call: impl FnOnce()) -> bool {
    match catch_unwind(AssertUnwindSafe(call)) {
        Ok(()) => true,
        Err(panic) => {
            let n = panics.fetch_add(1, Ordering::Relaxed).saturating_add(1);
            if n.is_power_of_two() {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                log::error!("{what} panicked ({n} so far, caught): {message}");
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_caught_and_counted_and_the_caller_goes_on() {
        let panics = AtomicU64::new(0);
        assert!(guarded(&panics, "test callback", || {}));
        for _ in 0..3 {
            assert!(!guarded(&panics, "test callback", || panic!("boom")));
        }
        assert_eq!(panics.load(Ordering::Relaxed), 3);
    }
}
