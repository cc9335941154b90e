//! A team's gateway: several native proxies on one shared store (PostgreSQL) behind HAProxy on
//! 127.0.0.1, round robin, each health-checked on its dashboard's page so a killed one leaves
//! the rotation at once.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::{Build, PATIENCE, Proxy};

pub struct Gateway {
    /// `http://127.0.0.1:PORT`, the balancer.
    pub url: String,
    proxies: Vec<Option<Proxy>>,
    balancer: Child,
    dir: PathBuf,
}

/// The proxies' leases: short, so that a killed one's sessions are taken over within seconds.
const LEASE: (&str, &str) = ("WORKBENCH_STORE_LEASE_MS", "3000");

/// A port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// HAProxy's configuration: `listen` on 127.0.0.1:`port`, the proxies at `ports`, its stats
/// socket at `socket`.
fn haproxy_config(port: u16, ports: &[u16], socket: &Path) -> String {
    let servers: String = ports
        .iter()
        .enumerate()
        .map(|(i, p)| format!("    server proxy{i} 127.0.0.1:{p} check inter 500ms fall 3 rise 2\n"))
        .collect();
    format!(
        "global\n    stats socket {} mode 600 level admin\n\n\
         defaults\n    mode http\n    timeout connect 2s\n    timeout client 10m\n    timeout server 10m\n    timeout check 2s\n    retries 3\n    option redispatch\n\n\
         frontend team\n    bind 127.0.0.1:{port}\n    default_backend proxies\n\n\
         backend proxies\n    balance roundrobin\n    option httpchk\n    http-check send meth GET uri /workbench/ ver HTTP/1.1 hdr Host 127.0.0.1\n{servers}",
        socket.display()
    )
}

impl Gateway {
    /// `instances` native proxies in `dir` (logs `proxy-{i}.log`) on the store `store`, with
    /// `args`, behind a balancer.
    pub fn start(dir: &Path, store: &str, instances: usize, args: &[&str]) -> Gateway {
        let proxies: Vec<Proxy> = (0..instances)
            .map(|i| {
                let with_store = [&["--store", store][..], args].concat();
                Proxy::start_logged(Build::Native, dir, &format!("proxy-{i}.log"), &with_store, &[LEASE])
            })
            .collect();
        let ports: Vec<u16> = proxies.iter().map(|p| p.url.rsplit(':').next().unwrap().parse().unwrap()).collect();
        let port = free_port();
        let config = dir.join("haproxy.cfg");
        std::fs::write(&config, haproxy_config(port, &ports, &dir.join("haproxy.sock"))).unwrap();
        let balancer = Command::new("haproxy")
            .arg("-db")
            .arg("-f")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("haproxy.log")).unwrap())
            .spawn()
            .expect("start haproxy (installed by .ci/setup)");
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < PATIENCE, "haproxy did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Gateway {
            url: format!("http://127.0.0.1:{port}"),
            proxies: proxies.into_iter().map(Some).collect(),
            balancer,
            dir: dir.to_path_buf(),
        }
    }

    /// The proxies serving a request now (HAProxy's `show sess`).
    pub fn serving(&self) -> Vec<usize> {
        let mut socket = UnixStream::connect(self.dir.join("haproxy.sock")).expect("haproxy's stats socket");
        socket.write_all(b"show sess\n").unwrap();
        let mut answer = String::new();
        socket.read_to_string(&mut answer).unwrap();
        let mut serving: Vec<usize> =
            answer.split_whitespace().filter_map(|field| field.strip_prefix("srv=proxy")?.parse().ok()).collect();
        serving.sort();
        serving.dedup();
        serving
    }

    /// SIGKILL proxy `i` (nothing saved at the end); its log.
    pub fn kill(&mut self, i: usize) -> String {
        let proxy = self.proxies[i].take().expect("running");
        let log = proxy.log();
        drop(proxy);
        log
    }

    /// SIGTERM every proxy still running; their exit statuses, and every log (the balancer's too).
    pub fn stop(mut self) -> (Vec<ExitStatus>, String) {
        let statuses = self.proxies.iter_mut().filter_map(Option::take).map(|p| p.stop().0).collect();
        let _ = self.balancer.kill();
        let _ = self.balancer.wait();
        let mut logs = String::new();
        for name in (0..self.proxies.len()).map(|i| format!("proxy-{i}.log")).chain(["haproxy.log".to_owned()]) {
            let text = std::fs::read_to_string(self.dir.join(&name)).unwrap_or_default();
            logs.push_str(&format!("--- {name} ---\n{text}\n"));
        }
        (statuses, logs)
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.balancer.kill();
        let _ = self.balancer.wait();
    }
}
