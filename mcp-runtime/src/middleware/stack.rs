//! The layers of a server, and [`Next`]: the rest of the stack below one layer, ending in
//! the server's own handling of the request (the terminal, which `server/layered.rs` builds).

use std::sync::Arc;

use super::{Layer, LayerFuture, LayerResult, McpRequest};

/// What runs below the last layer: the server's own handling of one request.
pub(crate) type Terminal = Arc<dyn Fn(McpRequest) -> LayerFuture<'static> + Send + Sync>;

/// A server's layers, outermost first.
#[derive(Clone, Default)]
pub(crate) struct Stack {
    layers: Arc<[Arc<dyn Layer>]>,
}

impl Stack {
    pub(crate) fn new(layers: Vec<Arc<dyn Layer>>) -> Stack {
        Stack {
            layers: layers.into(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// Runs `request` through every layer and then `terminal`.
    pub(crate) fn run(&self, request: McpRequest, terminal: Terminal) -> LayerFuture<'static> {
        let next = Next {
            layers: Arc::clone(&self.layers),
            index: 0,
            terminal,
        };
        Box::pin(next.run(request))
    }
}

/// The rest of the stack below a layer: [`Next::run`] passes the request on and gives back
/// the result. A layer that does not call it answers the request itself.
pub struct Next {
    layers: Arc<[Arc<dyn Layer>]>,
    index: usize,
    terminal: Terminal,
}

impl Next {
    /// Passes the request to the next layer, or to the server's own handling after the last.
    pub async fn run(self, request: McpRequest) -> LayerResult {
        match self.layers.get(self.index).cloned() {
            Some(layer) => {
                let next = Next {
                    layers: Arc::clone(&self.layers),
                    index: self.index + 1,
                    terminal: Arc::clone(&self.terminal),
                };
                layer.handle(request, next).await
            }
            None => (self.terminal)(request).await,
        }
    }
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next")
            .field("layers_below", &(self.layers.len() - self.index))
            .finish()
    }
}
