//! A PostgreSQL cluster of a test's own: `initdb` into a temporary folder, started on a free
//! port of 127.0.0.1 (and a socket in that folder), stopped and removed when dropped. Runs the
//! server binaries of Debian's `postgresql` package (`/usr/lib/postgresql/*/bin`), as the
//! `postgres` user when the test runs as root (the server refuses root). `pg_stat_statements` is
//! loaded, so a bench can count the statements a run made.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The password of the cluster's superuser, in every URL (never in a log).
pub const PASSWORD: &str = "pw-s3cret-Zq";
const USER: &str = "workbench";

/// A running cluster.
pub struct Postgres {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    as_postgres: bool,
}

impl Postgres {
    /// `initdb` and start a cluster; panics with the server's log when it cannot.
    pub fn start() -> Postgres {
        let bin = server_bin();
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("cw-pg-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let as_postgres = unsafe { libc::geteuid() } == 0;
        std::fs::write(dir.join("pwfile"), PASSWORD).unwrap();
        if as_postgres {
            let owned = Command::new("chown").args(["-R", "postgres:postgres"]).arg(&dir).status().unwrap();
            assert!(owned.success(), "chown {} to postgres", dir.display());
        }
        let cluster = Postgres { port: free_port(), dir, bin, as_postgres };
        let data = cluster.dir.join("data");
        cluster.run(
            "initdb",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-U".as_ref(),
                USER.as_ref(),
                "--pwfile".as_ref(),
                cluster.dir.join("pwfile").as_os_str(),
                "--auth-host=scram-sha-256".as_ref(),
                "--auth-local=trust".as_ref(),
                "--no-sync".as_ref(),
            ],
        );
        cluster.resume();
        cluster
    }

    /// Stop the server at once, as a crash or an outage would (the data stays).
    pub fn halt(&self) {
        let data = self.dir.join("data");
        self.run("pg_ctl", &["-D".as_ref(), data.as_os_str(), "-m".as_ref(), "immediate".as_ref(), "stop".as_ref()]);
    }

    /// Start the server (again) on its port; returns once it accepts connections.
    pub fn resume(&self) {
        let data = self.dir.join("data");
        let options = format!(
            "-c listen_addresses=127.0.0.1 -c port={} -c unix_socket_directories={} -c fsync=off \
             -c synchronous_commit=off -c full_page_writes=off -c shared_preload_libraries=pg_stat_statements",
            self.port,
            self.dir.display()
        );
        self.run(
            "pg_ctl",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-l".as_ref(),
                self.log_path().as_os_str(),
                "-o".as_ref(),
                options.as_ref(),
                "-w".as_ref(),
                "start".as_ref(),
            ],
        );
    }

    /// `postgres://workbench:PASSWORD@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> String {
        self.url_of("postgres")
    }

    /// The URL of another database of the cluster (made with [`Postgres::create_database`]).
    pub fn url_of(&self, database: &str) -> String {
        format!("postgres://{USER}:{PASSWORD}@127.0.0.1:{}/{database}", self.port)
    }

    /// A new, empty database.
    pub fn create_database(&self, name: &str) -> String {
        self.psql("postgres", &format!("CREATE DATABASE \"{name}\""));
        self.url_of(name)
    }

    /// Run SQL with `psql` over the socket; its output (unaligned, tuples only).
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let psql = self.bin.join("psql");
        let psql = if psql.exists() { psql } else { PathBuf::from("psql") };
        let mut command = self.command(&psql);
        command.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h"]).arg(&self.dir);
        command.args(["-p", &self.port.to_string(), "-U", USER, "-d", database, "-c", sql]);
        let output = command.output().expect("run psql");
        assert!(output.status.success(), "psql {sql}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).trim_end().to_owned()
    }

    /// The statements the `postgres` database has run so far (`pg_stat_statements`).
    pub fn statements(&self) -> u64 {
        self.psql("postgres", "CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        let sql = "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements \
                   WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'postgres')";
        self.psql("postgres", sql).parse().expect("a count")
    }

    /// The store in the `postgres` database, copied into the folder `to` (`workbench store export`).
    pub fn export(&self, to: &Path) {
        let output = Command::new(env!("CARGO_BIN_EXE_workbench"))
            .args(["store", "export", &self.url()])
            .arg(to)
            .output()
            .expect("run workbench store export");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    }

    /// The server's log.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("server.log")
    }

    fn command(&self, program: &Path) -> Command {
        if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(program);
            command
        } else {
            Command::new(program)
        }
    }

    fn run(&self, program: &str, args: &[&std::ffi::OsStr]) -> Output {
        let output = self.command(&self.bin.join(program)).args(args).current_dir(&self.dir).output().unwrap();
        assert!(
            output.status.success(),
            "{program}: {}{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
            self.log()
        );
        output
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let _ = self
            .command(&self.bin.join("pg_ctl"))
            .args(["-D".as_ref(), data.as_os_str(), "-m".as_ref(), "immediate".as_ref(), "stop".as_ref()])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The newest installed server's binaries.
fn server_bin() -> PathBuf {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL's server in /usr/lib/postgresql (bash .ci/setup test installs it)")
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("initdb").exists())
        .collect();
    versions.sort_by_key(|bin| {
        bin.parent().and_then(|v| v.file_name()).and_then(|v| v.to_str()).and_then(|v| v.parse::<u32>().ok())
    });
    versions.pop().expect("an initdb under /usr/lib/postgresql/*/bin")
}

/// A port nobody listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
