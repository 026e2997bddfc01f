//! A real Prometheus (Debian's, which `./run-tests` prepares like redis-server and nginx)
//! scraping a server's metrics route, and PromQL against what it kept.

use std::net::SocketAddr;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::Scratch;
use crate::cluster::{free_port, require, wait_for_port};
use crate::group::ProcessGroup;
use crate::http::{Request, url_encode};

/// A Prometheus of the test's own, with its storage in a scratch directory.
pub struct Prometheus {
    // Dropped first: the process ends before its directory goes.
    _process: ProcessGroup,
    _scratch: Scratch,
    addr: SocketAddr,
}

impl Prometheus {
    /// Starts one scraping `target`'s `/metrics` every second, presenting `token`.
    pub fn scraping(target: SocketAddr, token: &str) -> Prometheus {
        let program = require("prometheus");
        let scratch = Scratch::new("prometheus");
        let config = scratch.path("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: mcp\n    metrics_path: /metrics\n    authorization:\n      credentials: {token}\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .expect("write the configuration");
        let port = free_port();
        let mut command = Command::new(program);
        command
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                scratch.path("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let process = ProcessGroup::spawn(&mut command, libc::SIGKILL).expect("start prometheus");
        wait_for_port(port, "prometheus", &process);
        Prometheus {
            _process: process,
            _scratch: scratch,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        }
    }

    /// The answer to an instant PromQL query, or `Null` while Prometheus is not ready (503).
    pub fn query(&self, expr: &str) -> Value {
        let target = format!("/api/v1/query?query={}", url_encode(expr));
        let response = Request::new(self.addr, "GET", &target).send();
        if response.status == 200 {
            response.json()
        } else {
            Value::Null
        }
    }
}
