//! Transports: they frame bytes and carry per-connection state; the dispatch is the server's.

pub(crate) mod connection;
#[cfg(feature = "http")]
pub mod http;
mod lines;
pub mod memory;
#[cfg(unix)]
mod protocol_stdout;
mod stdio;

#[cfg(feature = "http")]
pub(crate) use stdio::init_stderr_logging;
