//! The bus between replicas on Redis pub/sub: one channel, each message the event and the
//! replica it comes from, which ignores its own.

use std::sync::Arc;
use std::time::Duration;

use redis::aio::ConnectionManager;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};

use crate::cluster::{Bus, ClusterEvent};

#[derive(Serialize, Deserialize)]
struct Envelope {
    origin: String,
    #[serde(flatten)]
    event: ClusterEvent,
}

/// A [`Bus`] on one Redis pub/sub channel.
pub struct RedisBus {
    client: redis::Client,
    channel: String,
    origin: String,
    /// Events leave in the order they were published, through one task, which says when
    /// Redis took one whose publisher waits for that.
    outbox: mpsc::UnboundedSender<(String, Option<oneshot::Sender<()>>)>,
    /// Subscribed while connecting, so that nothing published once `connect` returned is
    /// missed; taken by [`Bus::subscribe`].
    first: std::sync::Mutex<Option<redis::aio::PubSub>>,
}

impl RedisBus {
    pub(super) async fn new(
        client: redis::Client,
        connection: ConnectionManager,
        channel: String,
    ) -> redis::RedisResult<Self> {
        let mut first = client.get_async_pubsub().await?;
        first.subscribe(&channel).await?;
        let mut bytes = [0u8; 8];
        let _ = getrandom::fill(&mut bytes);
        let origin: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let (outbox, mut queue) =
            mpsc::unbounded_channel::<(String, Option<oneshot::Sender<()>>)>();
        let publish_to = channel.clone();
        tokio::spawn(async move {
            while let Some((message, passed_on)) = queue.recv().await {
                let publish = redis::cmd("PUBLISH").arg(&publish_to).arg(&message).clone();
                let sent: redis::RedisResult<i64> =
                    retried!(connection, |c| publish.query_async(&mut c));
                if let Err(e) = sent {
                    tracing::warn!(%e, "an event for the other replicas is lost: Redis is unreachable");
                }
                // Sent or lost, it is past: the publisher goes on.
                if let Some(passed_on) = passed_on {
                    let _ = passed_on.send(());
                }
            }
        });
        Ok(RedisBus {
            client,
            channel,
            origin,
            outbox,
            first: std::sync::Mutex::new(Some(first)),
        })
    }
}

impl RedisBus {
    fn send(&self, event: ClusterEvent, passed_on: Option<oneshot::Sender<()>>) {
        let envelope = Envelope {
            origin: self.origin.clone(),
            event,
        };
        if let Ok(message) = serde_json::to_string(&envelope) {
            let _ = self.outbox.send((message, passed_on));
        }
    }
}

/// The longest a publisher waits for Redis to take its event: a bus that is down delays a
/// response by this much at most (the event is then lost, as the bus promises no more).
const PASS_ON_WAIT: Duration = Duration::from_secs(2);

impl Bus for RedisBus {
    fn publish(&self, event: ClusterEvent) {
        self.send(event, None);
    }

    fn publish_passed_on(
        &self,
        event: ClusterEvent,
    ) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        let (passed_on, taken) = oneshot::channel();
        self.send(event, Some(passed_on));
        Box::pin(async move {
            let _ = tokio::time::timeout(PASS_ON_WAIT, taken).await;
        })
    }

    fn subscribe(&self, deliver: Box<dyn Fn(ClusterEvent) + Send + Sync>) {
        let client = self.client.clone();
        let channel = self.channel.clone();
        let origin = self.origin.clone();
        let deliver: Arc<dyn Fn(ClusterEvent) + Send + Sync> = Arc::from(deliver);
        let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner()).take();
        tokio::spawn(async move {
            // Subscribed again whenever the connection drops: events published meanwhile
            // are lost, as the bus promises no more.
            loop {
                let pubsub = match first.take() {
                    Some(pubsub) => Ok(pubsub),
                    None => subscribed(&client, &channel).await,
                };
                let listened = match pubsub {
                    Ok(pubsub) => listen(pubsub, &origin, &deliver).await,
                    Err(e) => Err(e),
                };
                match listened {
                    Ok(()) => tracing::warn!("the bus's Redis connection closed; reconnecting"),
                    Err(e) => tracing::warn!(%e, "cannot listen to the other replicas; retrying"),
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        });
    }
}

async fn subscribed(
    client: &redis::Client,
    channel: &str,
) -> redis::RedisResult<redis::aio::PubSub> {
    let mut pubsub = client.get_async_pubsub().await?;
    pubsub.subscribe(channel).await?;
    Ok(pubsub)
}

async fn listen(
    mut pubsub: redis::aio::PubSub,
    origin: &str,
    deliver: &Arc<dyn Fn(ClusterEvent) + Send + Sync>,
) -> redis::RedisResult<()> {
    let mut messages = pubsub.on_message();
    loop {
        let next = std::future::poll_fn(|cx| {
            futures_core::Stream::poll_next(std::pin::Pin::new(&mut messages), cx)
        })
        .await;
        let Some(message) = next else {
            return Ok(());
        };
        let Ok(payload) = message.get_payload::<String>() else {
            continue;
        };
        match serde_json::from_str::<Envelope>(&payload) {
            Ok(envelope) if envelope.origin != origin => deliver(envelope.event),
            Ok(_) => {}
            Err(e) => tracing::debug!(%e, "ignoring a malformed event on the bus"),
        }
    }
}
