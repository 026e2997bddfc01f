//! Transports: they frame bytes and carry per-connection state, and drive the server, which
//! knows none of them.

pub(crate) mod connection;
#[cfg(feature = "http")]
pub mod http;
mod lines;
pub mod memory;
#[cfg(unix)]
mod protocol_stdout;
mod stdio;
pub(crate) mod tracker;

#[cfg(feature = "http")]
pub(crate) use stdio::init_stderr_logging;
