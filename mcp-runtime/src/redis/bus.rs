//! The bus between replicas on Redis pub/sub: one channel, each message the event and the
//! replica it comes from, which ignores its own. An event its publisher waits for carries a
//! number, and every replica that receives it answers on the publisher's own channel once it
//! has applied it, so the publisher knows when all of them have. Which replicas there are,
//! each learns from a second channel on which every replica says it is there, when it
//! subscribes and then every [`HELLO_EVERY`]: a subscriber that is no replica (someone
//! watching the channel with `redis-cli`), or a replica of a version that does not answer,
//! is never waited for.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis::aio::ConnectionManager;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};

use crate::cluster::{Bus, ClusterEvent};

#[derive(Serialize, Deserialize)]
struct Envelope {
    origin: String,
    /// The number the publisher waits on: each replica that receives the event answers with
    /// it on `<channel>:applied:<origin>` once the event is applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    applied: Option<u64>,
    #[serde(flatten)]
    event: ClusterEvent,
}

/// A message for Redis to publish: on which channel, and whether the publisher waits for
/// the replicas to apply it (its number).
struct Outgoing {
    channel: String,
    message: String,
    waited: Option<u64>,
}

/// A [`Bus`] on one Redis pub/sub channel.
pub struct RedisBus {
    client: redis::Client,
    channel: String,
    origin: String,
    /// Events leave in the order they were published, through one task, which tells
    /// [`Waits`] how many replicas Redis passed an event on to.
    outbox: mpsc::UnboundedSender<Outgoing>,
    waits: Arc<Waits>,
    /// Subscribed while connecting, so that nothing published once `connect` returned is
    /// missed; taken by [`Bus::subscribe`].
    first: std::sync::Mutex<Option<redis::aio::PubSub>>,
}

/// The channel on which the replicas say to `origin` that they applied its event.
fn applied_channel(channel: &str, origin: &str) -> String {
    format!("{channel}:applied:{origin}")
}

/// The channel on which every replica says it is there (its origin).
fn hello_channel(channel: &str) -> String {
    format!("{channel}:hello")
}

/// How often a replica says it is there.
const HELLO_EVERY: Duration = Duration::from_secs(10);

/// How long a replica not heard from is still counted as there.
const HEARD_WITHIN: Duration = Duration::from_secs(30);

impl RedisBus {
    pub(super) async fn new(
        client: redis::Client,
        connection: ConnectionManager,
        channel: String,
    ) -> redis::RedisResult<Self> {
        let mut bytes = [0u8; 8];
        let _ = getrandom::fill(&mut bytes);
        let origin: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let first = subscribed(&client, &channel, &origin).await?;
        let waits = Arc::new(Waits::default());
        let (outbox, mut queue) = mpsc::unbounded_channel::<Outgoing>();
        let publisher_waits = Arc::clone(&waits);
        tokio::spawn(async move {
            while let Some(out) = queue.recv().await {
                let publish = redis::cmd("PUBLISH")
                    .arg(&out.channel)
                    .arg(&out.message)
                    .clone();
                let sent: redis::RedisResult<i64> =
                    retried!(connection, |c| publish.query_async(&mut c));
                let receivers = match sent {
                    Ok(receivers) => usize::try_from(receivers).unwrap_or(0),
                    Err(e) => {
                        tracing::warn!(%e, "an event for the other replicas is lost: Redis is unreachable");
                        0
                    }
                };
                // Sent or lost, the publisher waits no longer than for those that got it.
                if let Some(number) = out.waited {
                    publisher_waits.passed_on(number, receivers);
                }
            }
        });
        Ok(RedisBus {
            client,
            channel,
            origin,
            outbox,
            waits,
            first: std::sync::Mutex::new(Some(first)),
        })
    }
}

impl RedisBus {
    fn send(&self, event: ClusterEvent, applied: Option<u64>) {
        let envelope = Envelope {
            origin: self.origin.clone(),
            applied,
            event,
        };
        if let Ok(message) = serde_json::to_string(&envelope) {
            let _ = self.outbox.send(Outgoing {
                channel: self.channel.clone(),
                message,
                waited: applied,
            });
        }
    }
}

/// The longest a publisher waits for every replica to apply its event: a bus that is down,
/// or a replica that has stopped reading it, delays a response by this much at most. A
/// replica that has not applied the event by then still reads the shared record again
/// within its recheck interval.
const APPLIED_WAIT: Duration = Duration::from_secs(2);

/// The events whose publishers wait for them to be applied, by number, and the other
/// replicas this one has heard from.
#[derive(Default)]
struct Waits {
    next: std::sync::atomic::AtomicU64,
    waiting: Mutex<HashMap<u64, Waiting>>,
    /// When each other replica was last heard from, by origin.
    heard: Mutex<HashMap<String, Instant>>,
}

struct Waiting {
    /// How many replicas must apply the event: this one and the others heard from within
    /// [`HEARD_WITHIN`], and no more than Redis passed it on to (a replica gone since it
    /// was last heard from is no longer subscribed); `None` until PUBLISH has answered.
    needed: Option<usize>,
    /// The replicas heard from when the event was published, this one included.
    replicas: usize,
    /// How many said they applied it (this one too, when it gets its own event back).
    applied: usize,
    done: Option<oneshot::Sender<()>>,
}

impl Waits {
    fn start(&self) -> (u64, oneshot::Receiver<()>) {
        let number = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (done, finished) = oneshot::channel();
        let replicas = 1 + self.others();
        self.lock().insert(
            number,
            Waiting {
                needed: None,
                replicas,
                applied: 0,
                done: Some(done),
            },
        );
        (number, finished)
    }

    /// Another replica said something: it is there. True when it was not known.
    fn heard(&self, origin: &str) -> bool {
        let mut heard = self.heard.lock().unwrap_or_else(|e| e.into_inner());
        match heard.get_mut(origin) {
            Some(at) => {
                *at = Instant::now();
                false
            }
            None => {
                heard.insert(origin.to_owned(), Instant::now());
                true
            }
        }
    }

    /// How many other replicas were heard from within [`HEARD_WITHIN`]; the rest are
    /// forgotten.
    fn others(&self) -> usize {
        let mut heard = self.heard.lock().unwrap_or_else(|e| e.into_inner());
        heard.retain(|_, at| at.elapsed() < HEARD_WITHIN);
        heard.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Waiting>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Redis passed event `number` on to `receivers` subscribers.
    fn passed_on(&self, number: u64, receivers: usize) {
        self.update(number, |w| w.needed = Some(receivers.min(w.replicas)));
    }

    /// One replica applied event `number` (which may come before PUBLISH answered).
    fn applied(&self, number: u64) {
        self.update(number, |w| w.applied += 1);
    }

    fn update(&self, number: u64, change: impl FnOnce(&mut Waiting)) {
        let mut waiting = self.lock();
        let Some(w) = waiting.get_mut(&number) else {
            // Given up on, or not this replica's.
            return;
        };
        change(w);
        if w.needed.is_some_and(|needed| w.applied >= needed)
            && let Some(done) = waiting.remove(&number).and_then(|mut w| w.done.take())
        {
            let _ = done.send(());
        }
    }

    /// Stops waiting for event `number`; how many replicas had applied it, of how many.
    fn give_up(&self, number: u64) -> Option<(usize, Option<usize>)> {
        self.lock().remove(&number).map(|w| (w.applied, w.needed))
    }
}

impl Bus for RedisBus {
    fn publish(&self, event: ClusterEvent) {
        self.send(event, None);
    }

    /// Finishes once every replica subscribed when Redis passed the event on has applied it
    /// (or after [`APPLIED_WAIT`]): a client answered afterwards finds the change on any
    /// replica it asks next.
    fn publish_passed_on(
        &self,
        event: ClusterEvent,
    ) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        let (number, finished) = self.waits.start();
        self.send(event, Some(number));
        Box::pin(async move {
            if tokio::time::timeout(APPLIED_WAIT, finished).await.is_err()
                && let Some((applied, needed)) = self.waits.give_up(number)
            {
                tracing::warn!(
                    applied,
                    needed = ?needed,
                    "not every replica applied a session's change in time; they read it again within their recheck interval"
                );
            }
        })
    }

    fn subscribe(&self, deliver: Box<dyn Fn(ClusterEvent) + Send + Sync>) {
        let client = self.client.clone();
        let listener = Listener {
            channel: self.channel.clone(),
            origin: self.origin.clone(),
            outbox: self.outbox.clone(),
            waits: Arc::clone(&self.waits),
            deliver: Arc::from(deliver),
        };
        let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner()).take();
        tokio::spawn(async move {
            // Subscribed again whenever the connection drops: events published meanwhile
            // are lost, as the bus promises no more.
            loop {
                let pubsub = match first.take() {
                    Some(pubsub) => Ok(pubsub),
                    None => subscribed(&client, &listener.channel, &listener.origin).await,
                };
                let listened = match pubsub {
                    Ok(pubsub) => listener.listen(pubsub).await,
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

/// The bus's channel and this replica's channel of answers, subscribed.
async fn subscribed(
    client: &redis::Client,
    channel: &str,
    origin: &str,
) -> redis::RedisResult<redis::aio::PubSub> {
    let mut pubsub = client.get_async_pubsub().await?;
    pubsub.subscribe(channel).await?;
    pubsub.subscribe(applied_channel(channel, origin)).await?;
    pubsub.subscribe(hello_channel(channel)).await?;
    Ok(pubsub)
}

/// What takes the other replicas' events, and their answers to this one's.
struct Listener {
    channel: String,
    origin: String,
    outbox: mpsc::UnboundedSender<Outgoing>,
    waits: Arc<Waits>,
    deliver: Arc<dyn Fn(ClusterEvent) + Send + Sync>,
}

impl Listener {
    fn say_hello(&self, hello: &str) {
        let _ = self.outbox.send(Outgoing {
            channel: hello.to_owned(),
            message: self.origin.clone(),
            waited: None,
        });
    }

    async fn listen(&self, mut pubsub: redis::aio::PubSub) -> redis::RedisResult<()> {
        let hello = hello_channel(&self.channel);
        let mut messages = pubsub.on_message();
        // The first tick is at once: the others learn of this replica as it subscribes.
        let mut hellos = tokio::time::interval(HELLO_EVERY);
        loop {
            let next = tokio::select! {
                next = std::future::poll_fn(|cx| {
                    futures_core::Stream::poll_next(std::pin::Pin::new(&mut messages), cx)
                }) => next,
                _ = hellos.tick() => {
                    self.say_hello(&hello);
                    // Replicas gone for good are forgotten even when nothing is published.
                    self.waits.others();
                    continue;
                }
            };
            let Some(message) = next else {
                return Ok(());
            };
            let Ok(payload) = message.get_payload::<String>() else {
                continue;
            };
            let channel = message.get_channel_name();
            if channel == hello {
                // A replica new to this one is told of it at once, rather than at its next
                // hello.
                if payload != self.origin && self.waits.heard(&payload) {
                    self.say_hello(&hello);
                }
                continue;
            }
            if channel != self.channel {
                // An answer: a replica applied one of this replica's events.
                if let Ok(number) = payload.parse() {
                    self.waits.applied(number);
                }
                continue;
            }
            match serde_json::from_str::<Envelope>(&payload) {
                // This replica's own event: it has it already, and counts as having
                // applied it.
                Ok(envelope) if envelope.origin == self.origin => {
                    if let Some(number) = envelope.applied {
                        self.waits.applied(number);
                    }
                }
                Ok(envelope) => {
                    (self.deliver)(envelope.event);
                    if let Some(number) = envelope.applied {
                        let _ = self.outbox.send(Outgoing {
                            channel: applied_channel(&self.channel, &envelope.origin),
                            message: number.to_string(),
                            waited: None,
                        });
                    }
                }
                Err(e) => tracing::debug!(%e, "ignoring a malformed event on the bus"),
            }
        }
    }
}
