//! Serving the endpoint on a TCP listener, with the connection-level defences `axum::serve`
//! does not have: a limit on connections in total and per peer address, a deadline for a
//! request's head once its first byte arrived, a deadline for an idle keep-alive
//! connection, and a shutdown that ends within its grace period.
//!
//! Each connection is served by hyper's HTTP/1 server. A small clock beside it knows whether
//! the connection is idle (between requests), reading a head, or busy (a request or its
//! response under way); a watchdog closes it when the deadline of its state passes. Bodies
//! have their own deadline, in [`guard`](super::guard); a response in progress — an SSE
//! stream above all — has none, and SSE streams send keep-alive comments instead, so a peer
//! that is gone is noticed by the write that fails.

use std::convert::Infallible;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::ConnectInfo;
use axum::http::{Method, Request, Response};
use hyper::body::Incoming;
use hyper::body::{Frame, SizeHint};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::options::HttpOptions;
use super::state::HttpState;
use crate::quota::Quota;

/// Connections of every peer, counted against the limits on one peer's and on all.
fn admission(options: &HttpOptions) -> Quota<IpAddr> {
    Quota::new(
        options.max_connections_per_peer,
        effective_max_connections(options.max_connections),
    )
}

/// The limit on connections, lowered to what the process's file-descriptor limit allows
/// (less a reserve for the files, sockets and pipes the server itself opens): a server that
/// runs out of descriptors can accept nobody, not even the peer that would have been served.
fn effective_max_connections(configured: usize) -> usize {
    const RESERVE: u64 = 64;
    #[cfg(target_os = "linux")]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given and nothing else.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0
            && limit.rlim_cur != libc::RLIM_INFINITY
        {
            let room = limit.rlim_cur.saturating_sub(RESERVE).max(1);
            return configured
                .min(usize::try_from(room).unwrap_or(usize::MAX))
                .max(1);
        }
    }
    let _ = RESERVE;
    configured.max(1)
}

/// Where a connection stands, for its watchdog.
struct Clock {
    epoch: Instant,
    /// Requests (and their responses) under way.
    busy: AtomicUsize,
    /// When the connection last became idle (ms since `epoch`).
    idle_since: AtomicU64,
    /// When the first byte of a head arrived on an idle connection (ms since `epoch`, plus
    /// one; 0 for none).
    head_since: AtomicU64,
    /// The socket, left here by hyper when it closed its side while the peer may still be
    /// sending (see [`linger`]).
    left: Mutex<Option<TcpStream>>,
    /// A response of the server's asked to close the connection: a request refused, its
    /// body perhaps unread (see [`linger`]).
    refused: AtomicBool,
}

impl Clock {
    fn new() -> Arc<Clock> {
        Arc::new(Clock {
            epoch: Instant::now(),
            busy: AtomicUsize::new(0),
            idle_since: AtomicU64::new(0),
            head_since: AtomicU64::new(0),
            left: Mutex::new(None),
            refused: AtomicBool::new(false),
        })
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn bytes_read(&self) {
        if self.busy.load(Ordering::Acquire) == 0 && self.head_since.load(Ordering::Acquire) == 0 {
            let _ = self.head_since.compare_exchange(
                0,
                self.now() + 1,
                Ordering::AcqRel,
                Ordering::Relaxed,
            );
        }
    }

    fn begin(self: &Arc<Self>) -> Busy {
        self.busy.fetch_add(1, Ordering::AcqRel);
        self.head_since.store(0, Ordering::Release);
        Busy(Arc::clone(self))
    }

    /// When the connection's state runs out, if it can (a timeout too long to add to the
    /// clock, such as `Duration::MAX`, never runs out).
    fn deadline(&self, options: &HttpOptions) -> Option<Instant> {
        if self.busy.load(Ordering::Acquire) > 0 {
            return None;
        }
        let (since, allowed) = match self.head_since.load(Ordering::Acquire) {
            0 => (
                self.idle_since.load(Ordering::Acquire),
                options.idle_timeout,
            ),
            head => (head - 1, options.header_read_timeout),
        };
        self.epoch
            .checked_add(Duration::from_millis(since))?
            .checked_add(allowed)
    }
}

/// A request under way on a connection; when dropped (its response sent or abandoned), the
/// connection is idle again unless another one is.
struct Busy(Arc<Clock>);

impl Drop for Busy {
    fn drop(&mut self) {
        if self.0.busy.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle_since.store(self.0.now(), Ordering::Release);
        }
    }
}

/// A socket that tells its clock when bytes arrive, and that is left to the clock to be
/// drained (see [`linger`]) when hyper lets go of it after closing its own side, following a
/// refusal of the server's, while the peer had not closed its side.
struct Watched {
    /// Always there until dropped.
    tcp: Option<TcpStream>,
    clock: Arc<Clock>,
    /// A read found the peer's side closed.
    peer_closed: bool,
    /// hyper closed this side (after its last response).
    closed: bool,
}

impl Watched {
    fn tcp(&mut self) -> Pin<&mut TcpStream> {
        Pin::new(
            self.tcp
                .as_mut()
                .expect("the socket is there until dropped"),
        )
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if self.closed
            && !self.peer_closed
            && self.clock.refused.load(Ordering::Acquire)
            && let Ok(mut left) = self.clock.left.lock()
        {
            *left = self.tcp.take();
        }
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let room = buf.remaining() > 0;
        let polled = self.tcp().poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) {
            if buf.filled().len() > before {
                self.clock.bytes_read();
            } else if room {
                self.peer_closed = true;
            }
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.tcp().poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.tcp().poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.as_ref().is_some_and(TcpStream::is_write_vectored)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        self.tcp().poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        let polled = self.tcp().poll_shutdown(cx);
        if matches!(polled, Poll::Ready(Ok(()))) {
            self.closed = true;
        }
        polled
    }
}

/// How the connections end at shutdown.
pub(crate) struct Stopping {
    /// Fires first: no new connection, idle ones close, busy ones finish what they serve.
    pub graceful: CancellationToken,
    /// Fires when the grace period is over: every connection still open is dropped.
    pub hard: CancellationToken,
}

/// Accepts and serves connections until `stopping.graceful` fires, then waits for the open
/// ones until `stopping.hard` fires, and drops what is left.
///
/// `endpoint` is the state of the router's endpoint, whose options are the connections'
/// too: its POSTs are served straight from the connection (see
/// [`endpoint::post_request`](super::endpoint::post_request)), every other request through
/// the router.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    endpoint: Arc<HttpState>,
    stopping: Stopping,
) {
    let admission = admission(&endpoint.options);
    let refusals = Arc::new(Semaphore::new(REFUSALS_LINGERING));
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stopping.graceful.cancelled() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let (tcp, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of descriptors or memory, or a connection reset before it was taken:
                // wait a moment rather than spin, and go on serving those already in.
                tracing::warn!(%e, "cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(slot) = admission.take(peer.ip()) else {
            tracing::debug!(%peer, "connection refused: at the connection limit");
            write_refusal(&tcp);
            // Drained like a refused body, while few are: each holds a descriptor past the
            // limit (out of the reserve kept for the server's own files).
            if let Ok(lingering) = Arc::clone(&refusals).try_acquire_owned() {
                let endpoint = Arc::clone(&endpoint);
                let graceful = stopping.graceful.clone();
                connections.spawn(async move {
                    let _lingering = lingering;
                    linger_after_refusal(tcp, &endpoint.options, &graceful).await;
                });
            }
            continue;
        };
        tune(&tcp, &endpoint.options);
        let router = router.clone();
        let endpoint = Arc::clone(&endpoint);
        let graceful = stopping.graceful.clone();
        connections.spawn(async move {
            let _slot = slot;
            serve_connection(tcp, peer, router, endpoint, graceful).await;
        });
    }
    drop(listener);
    tokio::select! {
        () = async { while connections.join_next().await.is_some() {} } => {}
        () = stopping.hard.cancelled() => {
            tracing::warn!(
                open = connections.len(),
                "connections still open after the shutdown grace period are closed"
            );
            connections.shutdown().await;
        }
    }
}

/// How many connections refused over the limits may be drained at once (see
/// [`linger_after_refusal`]); past that a refused connection is closed as soon as it is
/// answered. Well under the descriptors `effective_max_connections` keeps in reserve.
const REFUSALS_LINGERING: usize = 16;

/// Answers a connection over the limits with 503, without waiting for its request.
fn write_refusal(tcp: &TcpStream) {
    const BODY: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"too many connections: retry in a moment"}}"#;
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         retry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{BODY}",
        BODY.len()
    );
    let _ = tcp.try_write(response.as_bytes());
}

/// Socket options: no Nagle delay (each small SSE event would wait for the peer's delayed
/// ACK, ~40 ms), and on Linux a bound on how long sent data may stay unacknowledged, so a
/// peer that vanished without closing is noticed by the next keep-alive comment.
fn tune(tcp: &TcpStream, options: &HttpOptions) {
    if let Err(e) = tcp.set_nodelay(true) {
        tracing::debug!(%e, "cannot set TCP_NODELAY");
    }
    #[cfg(target_os = "linux")]
    {
        let timeout = (options.sse_keep_alive * 2).max(Duration::from_secs(10));
        let ms = libc::c_uint::try_from(timeout.as_millis()).unwrap_or(libc::c_uint::MAX);
        // SAFETY: setsockopt reads `ms` for the length given; the descriptor is the
        // stream's own, open for the call's duration.
        let set = unsafe {
            libc::setsockopt(
                std::os::fd::AsRawFd::as_raw_fd(tcp),
                libc::IPPROTO_TCP,
                libc::TCP_USER_TIMEOUT,
                (&raw const ms).cast(),
                std::mem::size_of::<libc::c_uint>() as libc::socklen_t,
            )
        };
        if set != 0 {
            tracing::debug!(e = %io::Error::last_os_error(), "cannot set TCP_USER_TIMEOUT");
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = options;
}

async fn serve_connection(
    tcp: TcpStream,
    peer: SocketAddr,
    router: Router,
    endpoint: Arc<HttpState>,
    graceful: CancellationToken,
) {
    let clock = Clock::new();
    let io = TokioIo::new(Watched {
        tcp: Some(tcp),
        clock: Arc::clone(&clock),
        peer_closed: false,
        closed: false,
    });
    // hyper's connection, and with it the socket, is dropped when this returns: a socket
    // left to drain is then in the clock.
    serve_http1(io, &clock, peer, router, &endpoint, &graceful).await;
    let left = clock.left.lock().ok().and_then(|mut left| left.take());
    if let Some(tcp) = left {
        // Boxed: most connections end without it, and their tasks stay the smaller.
        Box::pin(linger(tcp, &endpoint.options, &graceful)).await;
    }
}

/// Serves the connection's requests with hyper until it ends: at its own close, at a
/// deadline of the clock's, or by graceful shutdown.
async fn serve_http1(
    io: TokioIo<Watched>,
    clock: &Arc<Clock>,
    peer: SocketAddr,
    router: Router,
    endpoint: &Arc<HttpState>,
    graceful: &CancellationToken,
) {
    let tower = TowerToHyperService::new(router);
    // What this connection's last POST sent, not read again when repeated.
    let memo = Arc::new(super::memo::ConnectionMemo::default());
    let service = {
        let clock = Arc::clone(clock);
        let endpoint = Arc::clone(endpoint);
        hyper::service::service_fn(move |request: Request<Incoming>| {
            let memo = Arc::clone(&memo);
            let busy = clock.begin();
            let route = if request.method() == Method::POST
                && request.uri().path() == endpoint.options.path
            {
                // The body and the peer's address are handed over as they are: not boxed,
                // and not through the request's extensions (a map made for it).
                Route::Endpoint(Arc::clone(&endpoint), request)
            } else {
                let mut request = request.map(Body::new);
                request.extensions_mut().insert(ConnectInfo(peer));
                Route::Router(hyper::service::Service::call(&tower, request))
            };
            async move {
                let response: Response<Body> = match route {
                    Route::Endpoint(state, request) => {
                        super::endpoint::post_request(state, request, peer, &memo).await
                    }
                    Route::Router(routed) => match routed.await {
                        Ok(response) => response,
                        Err(never) => match never {},
                    },
                };
                // Only a refusal (a client error) closes the connection this way.
                if response.status().is_client_error()
                    && response
                        .headers()
                        .get(axum::http::header::CONNECTION)
                        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"close"))
                {
                    busy.0.refused.store(true, Ordering::Release);
                }
                // The connection is busy until the response body is sent or dropped (hyper
                // takes the wrapper as it is, without boxing it once more).
                Ok::<_, Infallible>(response.map(|body| Tracked { body, _busy: busy }))
            }
        })
    };
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.header_read_timeout(None).keep_alive(true);
    let mut connection = pin!(builder.serve_connection(io, service));
    let mut shutting_down = false;
    let options = &endpoint.options;
    // The watchdog is not told when a head starts or a request ends, which would cost each
    // request a wake-up of this task and a new timer. It looks at the clock instead, at
    // each deadline and at least this often: a deadline that begins between two looks is
    // at least this far off, so the next look sets the timer to it, and it is kept exactly
    // (timeouts under 10 ms, to within 10 ms). A busy connection is looked at as often, at
    // no cost worth counting with the default timeouts (10 s for a head, 60 s idle).
    let every = options
        .idle_timeout
        .min(options.header_read_timeout)
        .max(Duration::from_millis(10));
    let mut watchdog = pin!(tokio::time::sleep(every));
    loop {
        tokio::select! {
            served = connection.as_mut() => {
                if let Err(e) = served {
                    tracing::debug!(%e, %peer, "connection ended with an error");
                }
                return;
            }
            () = graceful.cancelled(), if !shutting_down => {
                shutting_down = true;
                connection.as_mut().graceful_shutdown();
            }
            () = watchdog.as_mut() => {
                let now = Instant::now();
                let next = match clock.deadline(options) {
                    Some(deadline) if deadline <= now => {
                        tracing::debug!(%peer, "connection closed: idle or too slow to send its head");
                        return;
                    }
                    deadline => {
                        // Timeouts of `Duration::MAX` say "never": a look about once in 34 years.
                        let look = now
                            .checked_add(every)
                            .unwrap_or_else(|| now + Duration::from_secs(1 << 30));
                        deadline.map_or(look, |deadline| deadline.min(look))
                    }
                };
                watchdog.as_mut().reset(next.into());
            }
        }
    }
}

/// After the server refused a request and closed its side (the response said
/// `Connection: close`), reads and throws away what the peer still sends, until the peer
/// closes its side too, for a bounded time and amount.
///
/// A request refused before its body is read — one declared over the size limit, answered
/// 413 at once — leaves the client still writing it. Closing a socket with bytes unread, or
/// with more arriving, makes the kernel reset the connection: the client's write fails, and
/// it may never read the answer already sent to it. Draining a little longer (what web
/// servers call a lingering close) lets it finish, read the answer and close. The
/// connection keeps its slot meanwhile; the wait is at most the head deadline in all and
/// the idle deadline between reads (and 10 s and 2 s), so it holds a slot no longer than an
/// idle or slow client may anyway. Connections closed for other reasons (the client's
/// `Connection: close`, a deadline) are not drained.
async fn linger(mut tcp: TcpStream, options: &HttpOptions, stop: &CancellationToken) {
    /// The most to drain.
    const BYTES: usize = 16 << 20;
    let time = options.header_read_timeout.min(Duration::from_secs(10));
    let quiet = options.idle_timeout.min(Duration::from_secs(2));
    let end = tokio::time::Instant::now() + time;
    let mut buf = vec![0; 4 << 10];
    let mut drained = 0;
    while drained < BYTES {
        let next = end.min(tokio::time::Instant::now() + quiet);
        tokio::select! {
            read = tokio::time::timeout_at(next, tcp.read(&mut buf)) => match read {
                Ok(Ok(n)) if n > 0 => drained += n,
                // The peer closed its side, the socket failed, or the peer is quiet.
                _ => return,
            },
            () = stop.cancelled() => return,
        }
    }
}

/// After a connection over the limits was answered 503 (before anything of its request was
/// read), closes this side and drains what the peer still sends, as [`linger`] does after a
/// refused body: closing at once with its request unread would reset the connection, and a
/// client that writes its whole request before it reads would lose the 503. It holds one
/// of the [`REFUSALS_LINGERING`] places meanwhile, not a connection's slot.
async fn linger_after_refusal(mut tcp: TcpStream, options: &HttpOptions, stop: &CancellationToken) {
    use tokio::io::AsyncWriteExt as _;
    if tcp.shutdown().await.is_ok() {
        linger(tcp, options, stop).await;
    }
}

/// A response body that keeps its connection busy until it is sent or dropped. It says
/// what it knows of its length (a JSON answer's is exact), so hyper writes a
/// `Content-Length` rather than chunks.
struct Tracked {
    body: Body,
    _busy: Busy,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Where a request goes: the endpoint's POST, or the router. One lives in each request's
/// future, which holds the request either way (the router's future holds it too), so the
/// request is not boxed apart.
#[allow(clippy::large_enum_variant)]
enum Route<F> {
    Endpoint(Arc<HttpState>, Request<Incoming>),
    Router(F),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_too_long_for_the_clock_never_runs_out() {
        let never = HttpOptions::default()
            .idle_timeout(Duration::MAX)
            .header_read_timeout(Duration::MAX);
        let clock = Clock::new();
        assert_eq!(clock.deadline(&never), None, "idle");
        clock.bytes_read();
        assert_eq!(clock.deadline(&never), None, "reading a head");
        let soon = HttpOptions::default().header_read_timeout(Duration::from_secs(1));
        let deadline = clock.deadline(&soon).expect("a head has a deadline");
        assert!(deadline <= Instant::now() + Duration::from_secs(1));
    }
}
