//! The error of building or serving a server.

use std::fmt;

use crate::registry::CatalogueError;

/// Why a server could not be built or stopped serving.
///
/// Its `Debug` form is its message, so that `fn main() -> mcp_runtime::Result<()>` prints
/// something a person can act on.
#[non_exhaustive]
pub enum Error {
    /// The catalogue is inconsistent (e.g. two tools with one name).
    Catalogue(CatalogueError),
    /// Reading or writing the transport failed.
    Io(std::io::Error),
    /// The program was started with arguments it does not understand.
    Usage(String),
    /// A store shared between replicas could not be reached.
    Store(crate::cluster::StoreError),
    /// Another MCP server could not be reached or used (feature `client`: a mounted server).
    #[cfg(feature = "client")]
    Client(crate::client::CallError),
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// `Result` with this crate's [`Error`]; the return type of a server's `main`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Catalogue(e) => write!(f, "invalid server catalogue: {e}"),
            Error::Io(e) => write!(f, "transport error: {e}"),
            Error::Usage(e) => f.write_str(e),
            Error::Store(e) => write!(f, "{e}"),
            #[cfg(feature = "client")]
            Error::Client(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Catalogue(e) => Some(e),
            Error::Io(e) => Some(e),
            Error::Usage(_) => None,
            Error::Store(e) => Some(e),
            #[cfg(feature = "client")]
            Error::Client(e) => Some(e),
        }
    }
}

impl From<CatalogueError> for Error {
    fn from(e: CatalogueError) -> Self {
        Error::Catalogue(e)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

impl From<crate::cluster::StoreError> for Error {
    fn from(e: crate::cluster::StoreError) -> Self {
        Error::Store(e)
    }
}

#[cfg(feature = "client")]
impl From<crate::client::CallError> for Error {
    fn from(e: crate::client::CallError) -> Self {
        Error::Client(e)
    }
}
