//! The bus between replicas on Redis pub/sub: one channel, each message the event and the
//! replica it comes from, which ignores its own. An event its publisher waits for carries a
//! number, and every replica that receives it answers on the publisher's own channel once it
//! has applied it, so the publisher knows when all of them have.
//!
//! Which replicas there are, each learns from a second channel on which every replica says
//! it is there: when it connects, and then every [`HELLO_EVERY`] as long as it still hears
//! its own hellos (a replica whose subscription has stopped delivering falls silent). The
//! publisher waits for the replicas heard from within [`HEARD_WITHIN`] by name, so a
//! subscriber that is no replica (someone watching with `redis-cli PSUBSCRIBE '*'`) or a
//! replica of a version that does not answer is never waited for, and an answer that comes
//! twice counts once. It also stops waiting once as many replicas answered as Redis passed
//! the event on to, so a replica that crashed since its last hello holds nothing up; one that
//! fails to answer in time is not waited for again until it next says hello.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis::aio::ConnectionManager;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};

use crate::cluster::{Bus, ClusterEvent};

#[derive(Serialize, Deserialize)]
struct Envelope {
    origin: String,
    /// The number the publisher waits on: each replica that receives the event answers
    /// `<its origin> <number>` on `<channel>:applied:<origin>` once the event is applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    applied: Option<u64>,
    #[serde(flatten)]
    event: ClusterEvent,
}

/// A message for Redis to publish: on which channel, and the number of the event when its
/// publisher waits for the replicas to apply it.
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
    /// Messages leave in the order they were published, through one task, which tells
    /// [`Waits`] how many subscribers Redis passed a waited event on to.
    outbox: mpsc::UnboundedSender<Outgoing>,
    waits: Arc<Waits>,
    /// How long a publisher waits for the replicas to apply its event, in milliseconds.
    applied_wait_ms: std::sync::atomic::AtomicU64,
    /// Subscribed while connecting, so that nothing published once `connect` returned is
    /// missed; taken by [`Bus::subscribe`].
    first: std::sync::Mutex<Option<redis::aio::PubSub>>,
}

/// The channel on which the replicas tell `origin` that they applied its event.
fn applied_channel(channel: &str, origin: &str) -> String {
    format!("{channel}:applied:{origin}")
}

/// The channel on which every replica says it is there (its origin).
fn hello_channel(channel: &str) -> String {
    format!("{channel}:hello")
}

/// How often a replica says it is there.
const HELLO_EVERY: Duration = Duration::from_secs(10);

/// How long a replica not heard from is still waited for.
const HEARD_WITHIN: Duration = Duration::from_secs(30);

/// How long a publisher waits for every replica to apply its event unless set
/// ([`RedisBus::set_applied_wait`]).
const APPLIED_WAIT: Duration = Duration::from_secs(2);

/// The most messages sent to Redis in one round trip.
const BATCH: usize = 64;

/// A name for this replica on the bus: random, or when the system has no randomness to
/// give, the process and the time.
fn new_origin() -> String {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        bytes = (nanos ^ (u64::from(std::process::id()) << 32)).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl RedisBus {
    pub(super) async fn new(
        client: redis::Client,
        connection: ConnectionManager,
        channel: String,
    ) -> redis::RedisResult<Self> {
        let origin = new_origin();
        let first = subscribed(&client, &channel, &origin).await?;
        let waits = Arc::new(Waits::default());
        let (outbox, queue) = mpsc::unbounded_channel::<Outgoing>();
        tokio::spawn(publish_all(queue, connection, Arc::clone(&waits)));
        // The others learn of this replica before it serves anything.
        let _ = outbox.send(Outgoing {
            channel: hello_channel(&channel),
            message: origin.clone(),
            waited: None,
        });
        Ok(RedisBus {
            client,
            channel,
            origin,
            outbox,
            waits,
            applied_wait_ms: std::sync::atomic::AtomicU64::new(APPLIED_WAIT.as_millis() as u64),
            first: std::sync::Mutex::new(Some(first)),
        })
    }

    /// The longest a session's change or end waits for every replica to apply it before it
    /// is answered (2 s unless set): a replica that has stopped reading the bus delays a
    /// response by this much at most, and it then reads the shared record again within its
    /// recheck interval.
    ///
    /// ```no_run
    /// # async fn run() -> mcp_runtime::Result<()> {
    /// let redis = mcp_runtime::redis::RedisCluster::connect("redis://127.0.0.1:6379").await?;
    /// redis.bus().set_applied_wait(std::time::Duration::from_millis(500));
    /// # Ok(())
    /// # }
    /// ```
    pub fn set_applied_wait(&self, limit: Duration) {
        self.applied_wait_ms.store(
            u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
            std::sync::atomic::Ordering::Relaxed,
        );
    }

    /// Queues the event for Redis; false when it is none to send between replicas
    /// ([`ClusterEvent::Resubscribed`] does not serialise).
    fn send(&self, event: ClusterEvent, applied: Option<u64>) -> bool {
        let envelope = Envelope {
            origin: self.origin.clone(),
            applied,
            event,
        };
        let Ok(message) = serde_json::to_string(&envelope) else {
            return false;
        };
        let _ = self.outbox.send(Outgoing {
            channel: self.channel.clone(),
            message,
            waited: applied,
        });
        true
    }
}

/// Publishes what is queued, in order: whatever has gathered while the last round trip was
/// under way goes in one pipeline, so that answers and hellos do not queue behind each other.
async fn publish_all(
    mut queue: mpsc::UnboundedReceiver<Outgoing>,
    connection: ConnectionManager,
    waits: Arc<Waits>,
) {
    let mut batch = Vec::with_capacity(BATCH);
    while queue.recv_many(&mut batch, BATCH).await > 0 {
        let mut pipe = redis::pipe();
        for out in &batch {
            pipe.cmd("PUBLISH").arg(&out.channel).arg(&out.message);
        }
        let sent: redis::RedisResult<Vec<i64>> = retried!(connection, |c| pipe.query_async(&mut c));
        match sent {
            // A publisher waits for no more replicas than got its event.
            Ok(receivers) => {
                for (out, got) in batch.iter().zip(receivers) {
                    if let Some(number) = out.waited {
                        waits.passed_on(number, usize::try_from(got).unwrap_or(0));
                    }
                }
            }
            // Whether Redis ran the commands is unknown (a reply that timed out may still
            // come): the publishers wait for the replicas they know of, within their limit.
            Err(e) => {
                tracing::warn!(%e, "events for the other replicas may be lost: Redis did not answer")
            }
        }
        batch.clear();
    }
}

/// The events whose publishers wait for them to be applied, by number, and the other
/// replicas this one has heard from.
#[derive(Default)]
struct Waits {
    next: std::sync::atomic::AtomicU64,
    waiting: Mutex<HashMap<u64, Waiting>>,
    /// When each other replica last said hello, by origin.
    heard: Mutex<HashMap<String, Instant>>,
}

struct Waiting {
    /// The other replicas heard from when the event was published: once each has answered,
    /// every replica has applied it.
    expected: HashSet<String>,
    /// Those that answered (this one too, when it gets its own event back).
    answered: HashSet<String>,
    /// How many subscribers Redis passed the event on to; `None` until PUBLISH answered.
    /// When that many have answered, no one else got it.
    receivers: Option<usize>,
    done: Option<oneshot::Sender<()>>,
}

impl Waiting {
    fn complete(&self) -> bool {
        self.expected.is_subset(&self.answered)
            || self
                .receivers
                .is_some_and(|receivers| self.answered.len() >= receivers)
    }
}

impl Waits {
    fn start(&self) -> (u64, oneshot::Receiver<()>) {
        let number = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (done, finished) = oneshot::channel();
        let expected = self.others();
        self.lock().insert(
            number,
            Waiting {
                expected,
                answered: HashSet::new(),
                receivers: None,
                done: Some(done),
            },
        );
        (number, finished)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Waiting>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn heard_lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Instant>> {
        self.heard.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Another replica said hello. True when it was not known.
    fn hello(&self, origin: &str) -> bool {
        self.heard_lock()
            .insert(origin.to_owned(), Instant::now())
            .is_none()
    }

    /// The other replicas heard from within [`HEARD_WITHIN`]; the rest are forgotten.
    fn others(&self) -> HashSet<String> {
        let mut heard = self.heard_lock();
        heard.retain(|_, at| at.elapsed() < HEARD_WITHIN);
        heard.keys().cloned().collect()
    }

    /// Redis passed event `number` on to `receivers` subscribers.
    fn passed_on(&self, number: u64, receivers: usize) {
        self.update(number, |w| w.receivers = Some(receivers));
    }

    /// Replica `origin` applied event `number` (which may come before PUBLISH answered).
    fn applied(&self, number: u64, origin: &str) {
        self.update(number, |w| {
            w.answered.insert(origin.to_owned());
        });
    }

    fn update(&self, number: u64, change: impl FnOnce(&mut Waiting)) {
        let mut waiting = self.lock();
        let Some(w) = waiting.get_mut(&number) else {
            // Given up on, or not this replica's.
            return;
        };
        change(w);
        if w.complete()
            && let Some(done) = waiting.remove(&number).and_then(|mut w| w.done.take())
        {
            let _ = done.send(());
        }
    }

    /// Stops waiting for event `number`. When the wait timed out, the replicas expected that
    /// did not answer are not waited for again until they next say hello, and a warning says
    /// how many.
    fn give_up(&self, number: u64, timed_out: bool) {
        let Some(w) = self.lock().remove(&number) else {
            return;
        };
        if !timed_out {
            return;
        }
        let silent: Vec<&String> = w.expected.difference(&w.answered).collect();
        let mut heard = self.heard_lock();
        for origin in &silent {
            heard.remove(*origin);
        }
        tracing::warn!(
            answered = w.answered.len(),
            silent = silent.len(),
            "not every replica applied a session's change in time; those silent read it again \
             within their recheck interval"
        );
    }
}

/// Stops the wait for an event when its publisher stops waiting before the end, its request
/// dropped (its connection closed).
struct WaitGuard<'a> {
    waits: &'a Waits,
    number: u64,
}

impl Drop for WaitGuard<'_> {
    fn drop(&mut self) {
        self.waits.give_up(self.number, false);
    }
}

impl Bus for RedisBus {
    fn publish(&self, event: ClusterEvent) {
        let _ = self.send(event, None);
    }

    /// Finishes once every replica has applied the event (see the module's documentation),
    /// or after [`RedisBus::set_applied_wait`]'s limit: a client answered afterwards finds the change on any
    /// replica it asks next.
    fn publish_passed_on(
        &self,
        event: ClusterEvent,
    ) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        let (number, finished) = self.waits.start();
        // Made before the future is: dropped unpolled, it still ends the wait.
        let guard = WaitGuard {
            waits: &self.waits,
            number,
        };
        if !self.send(event, Some(number)) {
            // Nothing went out, so nothing will be answered: the guard ends the wait now.
            return Box::pin(std::future::ready(()));
        }
        let limit = Duration::from_millis(
            self.applied_wait_ms
                .load(std::sync::atomic::Ordering::Relaxed),
        );
        Box::pin(async move {
            // The whole guard moves in (its fields alone would be copied), so that it ends
            // the wait when the future ends or is dropped, not when this function returns.
            let guard = guard;
            if tokio::time::timeout(limit, finished).await.is_err() {
                guard.waits.give_up(guard.number, true);
            }
        })
    }

    fn subscribe(&self, deliver: Box<dyn Fn(ClusterEvent) + Send + Sync>) {
        let client = self.client.clone();
        let listener = Listener {
            channel: self.channel.clone(),
            applied: applied_channel(&self.channel, &self.origin),
            hello: hello_channel(&self.channel),
            origin: self.origin.clone(),
            outbox: self.outbox.clone(),
            waits: Arc::clone(&self.waits),
            deliver: Arc::from(deliver),
        };
        let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner()).take();
        tokio::spawn(async move {
            // Subscribed again whenever the connection drops or falls silent: events
            // published meanwhile are lost, as the bus promises no more, and the server is
            // told so that it reads its copies of shared sessions again.
            loop {
                let pubsub = match first.take() {
                    Some(pubsub) => Ok(pubsub),
                    None => subscribed(&client, &listener.channel, &listener.origin)
                        .await
                        .inspect(|_| (listener.deliver)(ClusterEvent::Resubscribed)),
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

/// The bus's channel, this replica's channel of answers and the channel of hellos,
/// subscribed in one command.
async fn subscribed(
    client: &redis::Client,
    channel: &str,
    origin: &str,
) -> redis::RedisResult<redis::aio::PubSub> {
    let mut pubsub = client.get_async_pubsub().await?;
    pubsub
        .subscribe(&[
            channel.to_owned(),
            applied_channel(channel, origin),
            hello_channel(channel),
        ])
        .await?;
    Ok(pubsub)
}

/// What takes the other replicas' events, their answers to this one's, and their hellos.
struct Listener {
    channel: String,
    applied: String,
    hello: String,
    origin: String,
    outbox: mpsc::UnboundedSender<Outgoing>,
    waits: Arc<Waits>,
    deliver: Arc<dyn Fn(ClusterEvent) + Send + Sync>,
}

impl Listener {
    fn say_hello(&self) {
        let _ = self.outbox.send(Outgoing {
            channel: self.hello.clone(),
            message: self.origin.clone(),
            waited: None,
        });
    }

    async fn listen(&self, mut pubsub: redis::aio::PubSub) -> redis::RedisResult<()> {
        let mut messages = pubsub.on_message();
        // The first tick is at once: subscribed again, this replica says so.
        let mut hellos = tokio::time::interval(HELLO_EVERY);
        // When this replica last heard its own hello: a subscription that has delivered none
        // for as long as the others remember a replica is subscribed again.
        let mut heard_own = Instant::now();
        loop {
            let next = tokio::select! {
                next = std::future::poll_fn(|cx| {
                    futures_core::Stream::poll_next(std::pin::Pin::new(&mut messages), cx)
                }) => next,
                _ = hellos.tick() => {
                    if heard_own.elapsed() > HEARD_WITHIN {
                        tracing::warn!("the bus's subscription delivers nothing; subscribing again");
                        return Ok(());
                    }
                    self.say_hello();
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
            if channel == self.hello {
                if payload == self.origin {
                    heard_own = Instant::now();
                } else if self.waits.hello(&payload) {
                    // A replica new to this one is told of it at once, rather than at its
                    // next hello.
                    self.say_hello();
                }
            } else if channel == self.applied {
                // An answer: a replica applied one of this replica's events.
                if let Some((origin, number)) = payload.split_once(' ')
                    && let Ok(number) = number.parse()
                {
                    self.waits.applied(number, origin);
                }
            } else if channel == self.channel {
                self.take(&payload);
            }
        }
    }

    /// An event on the bus: another replica's is applied and answered when its publisher
    /// waits; this replica's own counts as applied by it.
    fn take(&self, payload: &str) {
        let envelope = match serde_json::from_str::<Envelope>(payload) {
            Ok(envelope) => envelope,
            Err(e) => {
                tracing::debug!(%e, "ignoring a malformed event on the bus");
                return;
            }
        };
        if envelope.origin == self.origin {
            if let Some(number) = envelope.applied {
                self.waits.applied(number, &self.origin);
            }
            return;
        }
        (self.deliver)(envelope.event);
        if let Some(number) = envelope.applied {
            let _ = self.outbox.send(Outgoing {
                channel: applied_channel(&self.channel, &envelope.origin),
                message: format!("{} {number}", self.origin),
                waited: None,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bus with no Redis behind it: what it publishes stays in the returned queue.
    fn unconnected() -> (RedisBus, mpsc::UnboundedReceiver<Outgoing>) {
        let (outbox, queue) = mpsc::unbounded_channel();
        let waits = Arc::new(Waits::default());
        // Another replica heard from: a waited event expects its answer.
        waits
            .heard_lock()
            .insert("other".to_owned(), Instant::now());
        let bus = RedisBus {
            client: redis::Client::open("redis://127.0.0.1:1").expect("a client, not connected"),
            channel: "mcp".to_owned(),
            origin: "this".to_owned(),
            outbox,
            waits,
            applied_wait_ms: std::sync::atomic::AtomicU64::new(60_000),
            first: std::sync::Mutex::new(None),
        };
        (bus, queue)
    }

    #[tokio::test]
    async fn resubscribed_is_never_sent_and_never_waited_for() {
        let (bus, mut queue) = unconnected();
        // Another replica is expected to answer a waited event, and the wait is a minute:
        // finishing within a second means nothing was waited for.
        tokio::time::timeout(
            Duration::from_secs(1),
            bus.publish_passed_on(ClusterEvent::Resubscribed),
        )
        .await
        .expect("finished at once");
        assert!(queue.try_recv().is_err(), "nothing went out");
        assert!(bus.waits.lock().is_empty(), "no wait is left open");

        // A session's end does go out and is waited for, until its future is dropped.
        let ended = ClusterEvent::SessionEnded { id: "s".to_owned() };
        let waiting = bus.publish_passed_on(ended);
        let sent = queue.try_recv().expect("the event went out");
        assert!(sent.message.contains("\"s\""), "{}", sent.message);
        assert!(sent.waited.is_some());
        assert_eq!(bus.waits.lock().len(), 1);
        drop(waiting);
        assert!(
            bus.waits.lock().is_empty(),
            "a dropped publisher ends its wait"
        );
    }
}
