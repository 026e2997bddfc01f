//! This server as one replica of several: what it publishes on the bus, and what it does
//! with what the other replicas publish (see [`crate::cluster`]).

use std::sync::{Arc, Weak};

use super::Server;
use crate::cluster::{ClusterEvent, SessionRecord};
use crate::protocol::{ListKind, LogLevel, Needs, RequestId, notification_frame};
use crate::session::Session;

impl Server {
    /// Sends an event to the other replicas, when there are any.
    pub(crate) fn publish(&self, event: ClusterEvent) {
        if let Some(bus) = &self.inner.bus {
            bus.publish(event);
        }
    }

    /// Sends an event to the other replicas, and finishes once they have applied it (as far
    /// as the bus can tell; see [`Bus::publish_passed_on`](crate::cluster::Bus)).
    #[cfg(feature = "http")]
    pub(crate) async fn publish_passed_on(&self, event: ClusterEvent) {
        if let Some(bus) = &self.inner.bus {
            bus.publish_passed_on(event).await;
        }
    }

    fn count_session_event(&self, id: &str) {
        self.inner.session_events[session_event_counter(id)]
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    /// How many changes and ends of session `id` (and of the sessions that share its
    /// counter) the other replicas have told of: a record of it read from the shared store
    /// while this moved may be older than what they told.
    #[cfg(feature = "http")]
    pub(crate) fn session_events(&self, id: &str) -> u64 {
        self.inner.session_events[session_event_counter(id)]
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// Whether this server shares its sessions and streams with other replicas.
    pub(crate) fn in_cluster(&self) -> bool {
        self.inner.bus.is_some()
    }

    /// Starts taking the other replicas' events.
    pub(super) fn join_cluster(&self) {
        let Some(bus) = &self.inner.bus else { return };
        let weak = Arc::downgrade(&self.inner);
        bus.subscribe(Box::new(move |event| {
            if let Some(inner) = Weak::upgrade(&weak) {
                Server { inner }.on_cluster_event(event);
            }
        }));
    }

    fn on_cluster_event(&self, event: ClusterEvent) {
        match event {
            ClusterEvent::ListChanged { kinds } => self.deliver_list_changed(kinds),
            ClusterEvent::ResourceUpdated { uri } => self.deliver_resource_updated(&uri),
            ClusterEvent::TaskChanged { task } => self.deliver_task_changed(&task),
            ClusterEvent::SessionChanged { record } => {
                self.count_session_event(&record.id);
                if let Some(session) = self.keyed_session(&record.id) {
                    apply_record(&session, &record);
                }
            }
            ClusterEvent::ListsFetched { session, kinds } => {
                if let Some(session) = self.keyed_session(&session)
                    && session.announced_here()
                {
                    // The change held back may have come after that fetch (the replicas'
                    // events are not ordered among themselves): it is told again, once.
                    let held_back = session.lists_fetched(kinds);
                    for kind in ListKind::ALL
                        .into_iter()
                        .filter(|k| held_back & k.bit() != 0)
                    {
                        let frame = notification_frame(kind.notification(), &serde_json::json!({}));
                        session.notifications().notify(frame);
                    }
                }
            }
            ClusterEvent::SessionEnded { id } => {
                self.count_session_event(&id);
                if let Some(session) = self.keyed_session(&id) {
                    // Its calls here end with it, as on the replica that ended it; the copy
                    // itself goes on its next request, when the record is found gone.
                    session.mark_for_recheck();
                    session.close();
                }
            }
            ClusterEvent::ClientAnswer {
                session,
                request,
                answer,
            } => {
                if let Some(session) = self.keyed_session(&session) {
                    session
                        .client_requests()
                        .deliver(Some(&RequestId::Number(request)), answer);
                }
            }
            ClusterEvent::Resubscribed => {
                self.recheck_every_session();
                self.tell_what_may_have_changed();
                self.pass_on_fetches_again();
            }
        }
    }

    /// The other replicas' lists changed and resources updated while the bus was down are
    /// lost: every client here is told that what it follows may have changed — each list
    /// this server offers, each resource a session is subscribed to or a listener follows —
    /// and reads it again. A notification too many costs a client one read; one too few
    /// leaves it with a stale list or resource until the next change. Subscriptions are
    /// those this replica knows of: one made through another replica during the gap is
    /// known here once the session's copy is read again. Each task a listener follows is
    /// read from the task store, and its state sent unless that state was sent already.
    fn tell_what_may_have_changed(&self) {
        let offered = [Needs::Tools, Needs::Prompts, Needs::Resources];
        let kinds = ListKind::ALL
            .into_iter()
            .zip(offered)
            .filter(|(_, needs)| self.has(*needs))
            .fold(0, |kinds, (kind, _)| kinds | kind.bit());
        if kinds != 0 {
            // A fetch made through another replica during the gap was not heard of: what
            // the client was told no longer holds the next change back.
            for session in self.initialized_sessions() {
                session.forget_lists_told();
            }
            self.deliver_list_changed(kinds);
        }
        // Each follower's own list walked once: the cost is the number of subscriptions,
        // not the resources followed times the sessions and listeners.
        for session in self.initialized_sessions() {
            for uri in session.subscriptions() {
                session.notifications().notify(notification_frame(
                    "notifications/resources/updated",
                    &serde_json::json!({ "uri": uri }),
                ));
            }
        }
        self.inner.listeners.retell_followed_resources();
        let _reading = self.retell_followed_tasks();
    }

    /// Reads each followed task from the store, one after the other, and sends its state to
    /// the listeners that have not had it: a change made on another replica during the gap
    /// reached the store but not this replica.
    fn retell_followed_tasks(&self) -> Option<tokio::task::JoinHandle<()>> {
        let followed = self.inner.listeners.followed_tasks();
        // A bus of the user's may tell of the gap from a thread of its own.
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        if followed.is_empty() {
            return None;
        }
        let server = self.clone();
        Some(runtime.spawn(async move {
            let store = &server.inner.tasks.store;
            for task_id in followed {
                match store.get(&task_id).await {
                    Ok(Some(task)) => server.deliver_task_changed(&task),
                    Ok(None) => {}
                    Err(e) => tracing::warn!(%e, task_id, "cannot read a followed task again"),
                }
            }
        }))
    }

    /// Events about any shared session may have been missed: every copy is read again on
    /// its next request, and a record being read now is not taken as current.
    fn recheck_every_session(&self) {
        for counter in &self.inner.session_events {
            counter.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        }
        let keyed = self
            .inner
            .keyed_sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        for session in keyed.values().filter_map(Weak::upgrade) {
            session.mark_for_recheck();
        }
    }

    /// A fetch this replica passed on during the gap may not have reached the replica that
    /// announces the session's changes, which would then hold back its next change for good:
    /// each copy's client is said to have fetched every list. The announcing replica tells
    /// again only what it held back since it last told, so a client hears at most one
    /// notification more per list.
    fn pass_on_fetches_again(&self) {
        let copies: Vec<String> = self
            .inner
            .keyed_sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|(_, s)| s.upgrade().is_some_and(|s| !s.announced_here()))
            .map(|(key, _)| key.clone())
            .collect();
        for session in copies {
            self.publish(ClusterEvent::ListsFetched {
                session,
                kinds: crate::protocol::ALL_LISTS,
            });
        }
    }

    /// Knows `session` by its shared key, for the other replicas' events about it.
    #[cfg(feature = "http")]
    pub(crate) fn key_session(&self, key: &str, session: &Arc<Session>) {
        let mut keyed = self
            .inner
            .keyed_sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        // Ended sessions are swept before the map would grow, so opening one stays
        // constant-time on average however many are live.
        if keyed.len() == keyed.capacity() {
            keyed.retain(|_, s| s.strong_count() > 0);
            // Mostly live: room for as many again, so the next sweep is as far off.
            let live = keyed.len();
            keyed.reserve(live);
        }
        keyed.insert(key.to_owned(), Arc::downgrade(session));
    }

    fn keyed_session(&self, key: &str) -> Option<Arc<Session>> {
        self.inner
            .keyed_sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .and_then(Weak::upgrade)
    }

    /// A client's answer this process has no request for: the replica that asked gets it.
    pub(crate) fn forward_answer(
        &self,
        session: &Session,
        id: Option<&RequestId>,
        answer: crate::session::ClientAnswer,
    ) {
        if let (Some(key), Some(RequestId::Number(request))) = (session.key(), id) {
            self.publish(ClusterEvent::ClientAnswer {
                session: key.to_owned(),
                request: *request,
                answer,
            });
        }
    }
}

/// How many counters the other replicas' session events are spread over: a record read
/// while another session's event came in is read again only when the two share one.
pub(super) const SESSION_EVENT_COUNTERS: usize = 64;

/// The counter of session `id`'s events, by a hash of the id.
fn session_event_counter(id: &str) -> usize {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(id);
    (hash % SESSION_EVENT_COUNTERS as u64) as usize
}

/// The record of a session's shared state.
#[cfg(feature = "http")]
pub(crate) fn record_of(key: &str, session: &Session) -> Option<SessionRecord> {
    let negotiated = session.negotiated()?;
    let data = session.data();
    Some(SessionRecord {
        id: key.to_owned(),
        protocol_version: negotiated.version.as_str().to_owned(),
        client_info: serde_json::to_value(&negotiated.client_info).unwrap_or_default(),
        client_capabilities: negotiated.client_capabilities.clone(),
        log_level: session
            .log_level()
            .and_then(|l| serde_json::to_value(l).ok())
            .and_then(|v| v.as_str().map(str::to_owned)),
        subscriptions: session.subscriptions(),
        owner: None,
        store: data.values().clone(),
        visibility: data.visibility().clone(),
    })
}

/// Takes a record's log level and subscriptions into a local copy of the session.
pub(crate) fn apply_record(session: &Session, record: &SessionRecord) {
    let changed = take_record(session, record);
    // Another replica changed what the session sees: its client hears it from this one too,
    // which appends to the session's stream wherever the client reads it (every replica
    // holding a copy does, once until the list is fetched through it: a notification too
    // many, never none).
    crate::context::notify_lists_changed(session, changed);
}

/// Takes a session's shared record into a copy of it without telling its client anything:
/// for a copy made from the record just now, whose visibility is the one the client was
/// last told of by whichever replica changed it. Returns the kinds of list whose visibility
/// differs from the copy's.
pub(crate) fn take_record(session: &Session, record: &SessionRecord) -> u8 {
    match record
        .log_level
        .as_ref()
        .and_then(|l| serde_json::from_value::<LogLevel>(l.clone().into()).ok())
    {
        Some(level) => session.set_log_level(level),
        None => session.silence_logs(),
    }
    session.replace_subscriptions(record.subscriptions.iter().cloned());
    session.data().adopt(&record.store, &record.visibility)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Implementation, ProtocolVersion};
    use crate::session::{Negotiated, Outbound};

    /// A bus that carries nothing: only what it delivers itself is looked at.
    struct Quiet;

    impl crate::cluster::Bus for Quiet {
        fn publish(&self, _: ClusterEvent) {}
        fn subscribe(&self, _: Box<dyn Fn(ClusterEvent) + Send + Sync>) {}
    }

    /// A server with nothing registered, on a bus that carries nothing.
    fn quiet_replica() -> Server {
        Server::builder("replica", "1.0.0")
            .auto_register(false)
            .bus(Arc::new(Quiet))
            .build()
            .expect("a server")
    }

    /// The methods of the notifications queued so far.
    #[cfg(feature = "http")]
    fn queued(frames: &mut crate::session::OutboundQueue) -> Vec<String> {
        let mut methods = Vec::new();
        while let Some(frame) = frames.try_recv() {
            let message: serde_json::Value = serde_json::from_slice(&frame).expect("JSON");
            methods.push(message["method"].as_str().unwrap_or_default().to_owned());
        }
        methods
    }

    #[cfg(feature = "http")]
    #[test]
    fn a_fetch_through_another_replica_clears_the_hold_and_retells_what_it_held_back() {
        let server = quiet_replica();
        let (out, mut frames) = Outbound::new();
        let session = Arc::new(Session::new(out));
        session.initialize(Negotiated {
            version: ProtocolVersion::LATEST_HANDSHAKE,
            client_info: Implementation::new("client", "1.0"),
            client_capabilities: Default::default(),
        });
        session.set_key("s");
        server.register_session(&session);
        server.key_session("s", &session);
        let tools = ListKind::Tools.bit();
        let changed = "notifications/tools/list_changed";

        // Told once; the second change is held back until the client fetches the list.
        server.deliver_list_changed(tools);
        server.deliver_list_changed(tools);
        assert_eq!(queued(&mut frames), [changed]);

        // Fetched through another replica: the change held back may have come after that
        // fetch, so it is told again, and the next change is news.
        server.on_cluster_event(ClusterEvent::ListsFetched {
            session: "s".into(),
            kinds: tools,
        });
        assert_eq!(queued(&mut frames), [changed]);
        server.deliver_list_changed(tools);
        assert_eq!(queued(&mut frames), [changed]);
        // Nothing held back: a fetch elsewhere tells nothing again.
        server.on_cluster_event(ClusterEvent::ListsFetched {
            session: "s".into(),
            kinds: tools,
        });
        assert_eq!(queued(&mut frames), Vec::<String>::new());
        server.deliver_list_changed(tools);
        assert_eq!(queued(&mut frames), [changed]);
        // Another session's fetch, or one of an unknown session, changes nothing here.
        server.on_cluster_event(ClusterEvent::ListsFetched {
            session: "other".into(),
            kinds: tools,
        });
        server.deliver_list_changed(tools);
        assert_eq!(queued(&mut frames), Vec::<String>::new());
    }

    /// A `subscriptions/listen` (id 7) of `owner` following `tasks`, each with the version
    /// last sent to it, open on `server`.
    fn following_tasks<const N: usize>(
        server: &Server,
        tasks: [(&str, Option<u64>); N],
        owner: Option<&str>,
    ) -> (
        Arc<super::super::listeners::Listener>,
        crate::session::OutboundQueue,
    ) {
        let (out, frames) = Outbound::new();
        let listener = Arc::new(super::super::listeners::Listener {
            id: RequestId::Number(7),
            lists: [false; 3],
            resources: Default::default(),
            tasks: std::sync::Mutex::new(
                tasks
                    .into_iter()
                    .map(|(id, version)| (id.to_owned(), version))
                    .collect(),
            ),
            owner: owner.map(str::to_owned),
            out,
        });
        server.inner.listeners.add(&listener);
        (listener, frames)
    }

    /// The next message queued, waited for.
    async fn next_told(frames: &mut crate::session::OutboundQueue) -> serde_json::Value {
        let frame = tokio::time::timeout(std::time::Duration::from_secs(10), frames.recv())
            .await
            .expect("told in time")
            .expect("a frame");
        serde_json::from_slice(&frame).expect("JSON")
    }

    #[tokio::test]
    async fn a_bus_back_after_a_gap_sends_each_followed_task_as_the_store_has_it() {
        use crate::tasks::{StoredTask, TaskChange};
        let server = quiet_replica();
        let store = &server.inner.tasks.store;
        let ttl = Some(std::time::Duration::from_secs(60));
        let poll = std::time::Duration::from_millis(500);
        let first = StoredTask::new("t".into(), None, ttl, poll);
        store.create(first.clone()).await.expect("stored");
        // Waiting for the client, since a change on another replica this one did not hear.
        let change = TaskChange::Ask {
            key: "k".into(),
            request: serde_json::json!({"method": "elicitation/create"}),
        };
        store
            .update("t", change)
            .await
            .expect("updated")
            .expect("known");
        // The task's first state was told; one unknown to the store is followed too.
        let (_listener, mut frames) = following_tasks(
            &server,
            [("t", Some(first.version)), ("unknown", None)],
            None,
        );

        server.on_cluster_event(ClusterEvent::Resubscribed);
        let told = next_told(&mut frames).await;
        assert_eq!(told["method"], "notifications/tasks", "{told}");
        assert_eq!(told["params"]["taskId"], "t");
        assert_eq!(told["params"]["status"], "input_required");
        assert_eq!(
            told["params"]["_meta"][super::super::listeners::SUBSCRIPTION_ID],
            7
        );

        assert!(frames.try_recv().is_none(), "one state told, once");

        // Told already: a second gap does not tell it again.
        let reading = server.retell_followed_tasks().expect("tasks followed");
        reading.await.expect("read");
        assert!(frames.try_recv().is_none(), "the same state told again");
        // A later state in the store is.
        let _ = store
            .update("t", TaskChange::Cancel)
            .await
            .expect("updated")
            .expect("known");
        server
            .retell_followed_tasks()
            .expect("tasks followed")
            .await
            .expect("read");
        let told = next_told(&mut frames).await;
        assert_eq!(told["params"]["status"], "cancelled", "{told}");
        assert!(frames.try_recv().is_none(), "one state told, once");
    }

    #[tokio::test]
    async fn another_callers_task_reaches_no_listener_from_the_bus_or_after_a_gap() {
        use crate::tasks::StoredTask;
        let server = quiet_replica();
        let ttl = Some(std::time::Duration::from_secs(60));
        let poll = std::time::Duration::from_millis(500);
        let theirs = StoredTask::new("theirs".into(), Some("bob".into()), ttl, poll);
        let own = StoredTask::new("own".into(), Some("alice".into()), ttl, poll);
        let store = &server.inner.tasks.store;
        store.create(theirs.clone()).await.expect("stored");
        store.create(own.clone()).await.expect("stored");
        // Alice's listener names Bob's task beside her own.
        let (_listener, mut frames) =
            following_tasks(&server, [("theirs", None), ("own", None)], Some("alice"));

        // Told by another replica: Bob's task first, then hers.
        server.on_cluster_event(ClusterEvent::TaskChanged { task: theirs });
        server.on_cluster_event(ClusterEvent::TaskChanged { task: own });
        let told = next_told(&mut frames).await;
        assert_eq!(told["params"]["taskId"], "own", "{told}");
        assert!(frames.try_recv().is_none(), "Bob's task was sent");

        // Read again from the store after a gap: hers was sent already, Bob's never is.
        server
            .retell_followed_tasks()
            .expect("tasks followed")
            .await
            .expect("read");
        assert!(frames.try_recv().is_none(), "Bob's task was sent");
    }

    #[test]
    fn a_bus_back_after_a_gap_tells_each_session_of_what_it_follows_and_of_lists_offered() {
        static NOOP: crate::registry::ToolDescriptor = crate::registry::ToolDescriptor {
            name: "noop",
            title: None,
            description: None,
            annotations: crate::protocol::ToolAnnotations {
                read_only: None,
                destructive: None,
                idempotent: None,
                open_world: None,
            },
            icons: &[],
            meta: None,
            input_schema: || serde_json::json!({"type": "object"}),
            output_schema: || None,
            task: crate::tasks::TaskSupport::Never,
            timeout: None,
            schema_profile: None,
            call: |_, _| Box::pin(async { crate::content::CallToolResult::error("unused") }),
            states: &[],
            scopes: &[],
            location: crate::registry::SourceLocation {
                file: file!(),
                line: line!(),
            },
        };
        let server = Server::builder("replica", "1.0.0")
            .auto_register(false)
            .tools([&NOOP])
            .bus(Arc::new(Quiet))
            .build()
            .expect("a server");
        let session_following = |uris: &[&str]| {
            let (out, frames) = Outbound::new();
            let session = Arc::new(Session::new(out));
            session.initialize(Negotiated {
                version: ProtocolVersion::LATEST_HANDSHAKE,
                client_info: Implementation::new("client", "1.0"),
                client_capabilities: Default::default(),
            });
            for uri in uris {
                session.subscribe(uri);
            }
            server.register_session(&session);
            (session, frames)
        };
        let (_a, mut told_a) = session_following(&["test://one", "test://two"]);
        let (_b, mut told_b) = session_following(&["test://two"]);

        server.on_cluster_event(ClusterEvent::Resubscribed);

        let told = |frames: &mut crate::session::OutboundQueue| {
            let mut told = Vec::new();
            while let Some(frame) = frames.try_recv() {
                let message: serde_json::Value = serde_json::from_slice(&frame).expect("JSON");
                told.push(format!(
                    "{} {}",
                    message["method"].as_str().unwrap_or_default(),
                    message["params"]["uri"].as_str().unwrap_or_default()
                ));
            }
            told.sort();
            told
        };
        // The server offers tools only: no prompts or resources list is said to change.
        assert_eq!(
            told(&mut told_a),
            [
                "notifications/resources/updated test://one",
                "notifications/resources/updated test://two",
                "notifications/tools/list_changed ",
            ]
        );
        assert_eq!(
            told(&mut told_b),
            [
                "notifications/resources/updated test://two",
                "notifications/tools/list_changed ",
            ]
        );
        // Told already and not fetched since: a change is held back, but after another gap
        // (in which a fetch elsewhere may have been lost) the list is news again.
        server.deliver_list_changed(ListKind::Tools.bit());
        assert_eq!(told(&mut told_b), Vec::<String>::new());
        server.on_cluster_event(ClusterEvent::Resubscribed);
        assert_eq!(
            told(&mut told_b),
            [
                "notifications/resources/updated test://two",
                "notifications/tools/list_changed ",
            ]
        );
    }

    /// A bus that keeps what is published on it.
    #[cfg(feature = "http")]
    #[derive(Default)]
    struct Kept(std::sync::Mutex<Vec<ClusterEvent>>);

    #[cfg(feature = "http")]
    impl crate::cluster::Bus for Kept {
        fn publish(&self, event: ClusterEvent) {
            self.0.lock().unwrap().push(event);
        }
        fn subscribe(&self, _: Box<dyn Fn(ClusterEvent) + Send + Sync>) {}
    }

    #[cfg(feature = "http")]
    #[test]
    fn a_copy_tells_the_announcing_replica_of_every_fetch_and_the_announcer_tells_no_one() {
        let bus = Arc::new(Kept::default());
        let server = Server::builder("replica", "1.0.0")
            .auto_register(false)
            .bus(Arc::clone(&bus) as Arc<dyn crate::cluster::Bus>)
            .build()
            .expect("a server");
        let keyed = |key: &str| {
            let (out, _frames) = Outbound::new();
            let session = Arc::new(Session::new(out));
            session.set_key(key);
            server.key_session(key, &session);
            session
        };
        let copy = keyed("copy");
        let own = keyed("own");
        server.register_session(&own);
        let tools = ListKind::Tools.bit();
        // The copy has heard of no change, yet each fetch is told: the announcing replica
        // may have announced one whose event has not arrived here.
        for _ in 0..2 {
            server.lists_fetched(&copy, tools);
            server.lists_fetched(&own, tools);
        }
        let published: Vec<_> = std::mem::take(&mut *bus.0.lock().unwrap());
        assert_eq!(published.len(), 2, "{published:?}");
        for event in published {
            assert!(
                matches!(&event, ClusterEvent::ListsFetched { session, kinds }
                    if session == "copy" && *kinds == tools),
                "{event:?}"
            );
        }
        // After a gap, what was passed on may have been lost: each copy passes on a fetch
        // of every list again.
        server.on_cluster_event(ClusterEvent::Resubscribed);
        let published: Vec<_> = std::mem::take(&mut *bus.0.lock().unwrap());
        assert_eq!(
            published,
            [ClusterEvent::ListsFetched {
                session: "copy".into(),
                kinds: crate::protocol::ALL_LISTS
            }]
        );
        // A fetch elsewhere is the announcing replica's business: a copy that told its
        // client of a change to what the session sees keeps holding back the next.
        assert_eq!(copy.lists_changed(tools), tools);
        server.on_cluster_event(ClusterEvent::ListsFetched {
            session: "copy".into(),
            kinds: tools,
        });
        assert_eq!(copy.lists_changed(tools), 0, "held back still");
    }
}
