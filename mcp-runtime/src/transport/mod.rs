//! Transports: they frame bytes and carry per-connection state; the dispatch is the server's.

pub(crate) mod connection;
pub mod memory;
mod stdio;
