//! SIGINT/SIGTERM as a channel, so that the player and recorder can stop cleanly (close the bag,
//! restore the terminal) instead of dying mid-write.

use std::sync::OnceLock;

use crossbeam_channel::{Receiver, Sender};

use anyhow::{anyhow, Result};

static SIGNALS: OnceLock<(Sender<()>, Receiver<()>)> = OnceLock::new();

/// A channel that receives one message per SIGINT or SIGTERM. The handler is installed on the
/// first call; later calls share the same channel.
pub fn shutdown_requested() -> Result<Receiver<()>> {
    if let Some((_, rx)) = SIGNALS.get() {
        return Ok(rx.clone());
    }
    let (tx, rx) = crossbeam_channel::unbounded();
    let (tx, rx) = SIGNALS.get_or_init(|| (tx, rx));
    let tx = tx.clone();
    match ctrlc::set_handler(move || {
        let _ = tx.send(());
    }) {
        Ok(()) | Err(ctrlc::Error::MultipleHandlers) => Ok(rx.clone()),
        Err(e) => Err(anyhow!("cannot install the SIGINT/SIGTERM handler: {e}")),
    }
}
