//! Transports: they frame bytes and carry per-connection state; the dispatch is the server's.

pub(crate) mod connection;
#[cfg(feature = "http")]
pub mod http;
pub mod memory;
#[cfg(unix)]
mod protocol_stdout;
mod stdio;
pub(crate) mod trace;

pub(crate) use stdio::memchr as find_byte;

#[cfg(feature = "http")]
pub(crate) use stdio::init_stderr_logging;
