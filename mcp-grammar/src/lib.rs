//! The grammar that `mcp-macros` checks when a program is compiled and `mcp-runtime` reads
//! when a server is built: URI templates ([`uri_template`]) and the names of the headers tool
//! arguments are mirrored into ([`header`]).
//!
//! Both crates use this one definition, so a `#[resource]` template or a `#[header]` name
//! that compiles is one the runtime accepts. Each crate words its own messages: the macro's
//! point at the user's tokens, the runtime's at a byte offset or a schema property.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod header;
pub mod uri_template;
