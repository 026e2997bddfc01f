//! A stand-in authorization server on a loopback port, for the verifiers' tests. It notes
//! every request it receives and holds every answer until the test opens it, so a test can
//! give up on a request while the verifier's fetch is under way, and count the fetches.

use std::sync::Arc;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// The JSON answer to a path, given the server's base URL (`http://127.0.0.1:port`); `None`
/// is a 404.
type Answers = dyn Fn(&str, &str) -> Option<String> + Send + Sync;

pub(crate) struct StubProvider {
    /// `http://127.0.0.1:port`, without a trailing slash.
    pub(crate) url: String,
    /// The paths of the requests received, in order.
    received: watch::Receiver<Vec<String>>,
    open: watch::Sender<bool>,
}

impl StubProvider {
    /// Starts the server, closed: requests are received and noted, not answered.
    pub(crate) async fn start(
        answers: impl Fn(&str, &str) -> Option<String> + Send + Sync + 'static,
    ) -> StubProvider {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("bound"));
        let (note, received) = watch::channel(Vec::new());
        let (open, _) = watch::channel(false);
        let answers: Arc<Answers> = Arc::new(answers);
        let (note, base, opened) = (Arc::new(note), url.clone(), open.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (note, answers, base) = (Arc::clone(&note), Arc::clone(&answers), base.clone());
                let opened = opened.subscribe();
                tokio::spawn(answer(stream, note, answers, base, opened));
            }
        });
        StubProvider {
            url,
            received,
            open,
        }
    }

    /// Lets every answer go, those held and those to come.
    pub(crate) fn open(&self) {
        self.open.send_replace(true);
    }

    /// Holds the answers to the requests from now on.
    pub(crate) fn close(&self) {
        self.open.send_replace(false);
    }

    /// How many requests for `path` were received.
    pub(crate) fn count(&self, path: &str) -> usize {
        self.received.borrow().iter().filter(|p| *p == path).count()
    }

    /// Waits until `n` requests for `path` were received.
    pub(crate) async fn received(&self, path: &str, n: usize) {
        let mut received = self.received.clone();
        received
            .wait_for(|paths| paths.iter().filter(|p| *p == path).count() >= n)
            .await
            .expect("the stub provider runs as long as the test");
    }
}

async fn answer(
    mut stream: TcpStream,
    note: Arc<watch::Sender<Vec<String>>>,
    answers: Arc<Answers>,
    base: String,
    mut opened: watch::Receiver<bool>,
) {
    let mut request = Vec::new();
    let mut buffer = [0u8; 4096];
    // The head, then as much body as it announces.
    let head_end = loop {
        if let Some(at) = request.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buffer[..n]),
        }
    };
    let head = String::from_utf8_lossy(&request[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse().ok())
        .unwrap_or(0);
    while request.len() < head_end + length {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buffer[..n]),
        }
    }
    let path = head.split(' ').nth(1).unwrap_or_default().to_owned();
    note.send_modify(|paths| paths.push(path.clone()));
    if opened.wait_for(|open| *open).await.is_err() {
        return;
    }
    let response = match answers(&base, &path) {
        Some(body) => format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        ),
        None => "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into(),
    };
    // The verifier may have given up meanwhile: its connection is gone, which is fine.
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}
