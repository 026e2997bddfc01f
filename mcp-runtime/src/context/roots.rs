//! `ctx.roots()`: the client's roots (`roots/list`), cached per session and refreshed when the
//! client says they changed.

use serde::Deserialize;

use super::Context;
use super::client::{ClientError, read_answer};
use crate::fence::Roots;
use crate::protocol::Root;

#[derive(Deserialize)]
struct ListRootsResult {
    roots: Vec<Root>,
}

impl Context {
    /// The client's roots (`roots/list`), asked once per session and asked again after the
    /// client announces a change. Needs the client's `roots` capability.
    pub async fn roots(&self) -> Result<Roots, ClientError> {
        self.require(&["roots"], "roots")?;
        let changes = match self.inner.session.cached_roots() {
            Ok(cached) => return Ok(Roots::new(cached)),
            Err(changes) => changes,
        };
        let answer = self
            .request_client("roots/list", &serde_json::json!({}), None)
            .await?;
        let result: ListRootsResult = read_answer("roots/list", answer)?;
        self.inner
            .session
            .cache_roots(result.roots.clone(), changes);
        Ok(Roots::new(result.roots))
    }
}
