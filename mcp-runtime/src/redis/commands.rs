//! What every Redis store here shares: one retry when the connection dropped, and Redis
//! errors as store errors.

use crate::cluster::StoreError;

/// Runs a Redis operation, and once more when the connection had dropped (Redis restarted,
/// or something between closed the connection): the manager reconnects on the error, so the
/// second try goes out on a fresh connection. Every operation here is safe to repeat.
macro_rules! retried {
    ($connection:expr, |$c:ident| $op:expr) => {{
        let mut $c = $connection.clone();
        match $op.await {
            Err(e) if $crate::redis::commands::dropped(&e) => $op.await,
            done => done,
        }
    }};
}

/// Whether an error says the connection was lost, rather than that Redis refused or was slow.
pub(crate) fn dropped(e: &redis::RedisError) -> bool {
    e.is_connection_dropped() || (e.is_io_error() && !e.is_timeout() && !e.is_connection_refusal())
}

pub(crate) fn store_error(e: redis::RedisError) -> StoreError {
    StoreError(format!("Redis: {e}"))
}
