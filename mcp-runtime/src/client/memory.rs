//! A server in the same process, spoken to through the dispatch every transport shares
//! (what mounting a server built in this program uses): no pipe, no socket, the same
//! messages.

use std::sync::{Arc, Weak};

use serde_json::Value;
use tokio::sync::{Mutex, mpsc};

use super::CallError;
use super::engine::Engine;
use crate::server::Server;
use crate::session::Outbound;
use crate::transport::connection::{Inbound, serve_connection};

pub(crate) struct Memory {
    input: Mutex<Option<mpsc::Sender<Inbound>>>,
}

impl Memory {
    /// Serves a connection of `server` whose messages `engine` reads.
    pub(crate) fn connect(server: &Server, engine: &Arc<Engine>) -> Memory {
        let (input, inbound) = mpsc::channel(64);
        let (out, mut frames) = Outbound::new();
        tokio::spawn(serve_connection(server.clone(), inbound, out));
        let weak: Weak<Engine> = Arc::downgrade(engine);
        let shutdown = engine.shutdown.clone();
        tokio::spawn(async move {
            let read = async {
                while let Some(frame) = frames.recv().await {
                    if frame.is_empty() {
                        break;
                    }
                    let Some(engine) = weak.upgrade() else { return };
                    match serde_json::from_slice::<Value>(&frame) {
                        Ok(message) => engine.receive(message),
                        Err(e) => {
                            tracing::warn!(error = %e, "the server sent a frame that is not JSON")
                        }
                    }
                }
                if let Some(engine) = weak.upgrade() {
                    engine.close("the in-process server closed the connection");
                }
            };
            tokio::select! {
                () = read => {}
                () = shutdown.cancelled() => {}
            }
        });
        Memory {
            input: Mutex::new(Some(input)),
        }
    }

    pub(crate) async fn send(&self, message: &Value) -> Result<(), CallError> {
        let line = serde_json::to_vec(message).expect("a JSON value serialises");
        let input = self.input.lock().await.clone();
        let Some(input) = input else {
            return Err(CallError::Closed("the connection is closed".into()));
        };
        input
            .send(Inbound::Message(line))
            .await
            .map_err(|_| CallError::Closed("the in-process server is gone".into()))
    }

    /// Ends the connection: the server finishes the calls in flight and closes.
    pub(crate) async fn close(&self) {
        self.input.lock().await.take();
    }
}
