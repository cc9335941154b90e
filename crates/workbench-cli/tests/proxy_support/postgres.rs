//! A PostgreSQL cluster of the test's own (the Debian package `.ci/setup` installs), in a
//! scratch folder, on 127.0.0.1 at a free port, with `pg_stat_statements` loaded; stopped and
//! removed when dropped. As root, its programs run as the `postgres` user, who owns the folder.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Postgres {
    dir: PathBuf,
    port: u16,
    bin: PathBuf,
}

/// The newest installed server's programs.
fn server_bin() -> PathBuf {
    let mut versions: Vec<u32> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is not installed: run `bash .ci/setup`")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    versions.sort();
    let newest = versions.last().expect("a PostgreSQL server under /usr/lib/postgresql");
    PathBuf::from(format!("/usr/lib/postgresql/{newest}/bin"))
}

fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

impl Postgres {
    /// A new cluster in `dir` (made, emptied first), its database `workbench` created.
    pub fn start(dir: &Path) -> Postgres {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).unwrap();
        if is_root() {
            assert!(Command::new("chown").args(["-R", "postgres:postgres"]).arg(dir).status().unwrap().success());
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let postgres = Postgres { dir: dir.to_path_buf(), port, bin: server_bin() };
        let data = dir.join("data");
        postgres.run("initdb", &["-D", path(&data), "-U", "workbench", "--auth=trust", "--no-locale", "-E", "UTF8"]);
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c shared_preload_libraries=pg_stat_statements -c fsync=off",
            dir.display()
        );
        let log = dir.join("server.log");
        postgres.run("pg_ctl", &["-D", path(&data), "-l", path(&log), "-o", &options, "-w", "start"]);
        postgres.run("createdb", &["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "workbench", "workbench"]);
        postgres.psql("CREATE EXTENSION pg_stat_statements");
        postgres
    }

    /// `program` of the server's, as the `postgres` user when root; panics with its output on failure.
    fn run(&self, program: &str, args: &[&str]) -> String {
        let program = self.bin.join(program);
        let mut command = if is_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(&program);
            command
        } else {
            Command::new(&program)
        };
        let output = command.args(args).current_dir(&self.dir).output().unwrap();
        let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success(), "{} {args:?}: {said}", program.display());
        said
    }

    /// The result of `sql`, unaligned, as psql prints it.
    pub fn psql(&self, sql: &str) -> String {
        let output = Command::new("psql")
            .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql, &self.url()])
            .output()
            .expect("psql");
        assert!(output.status.success(), "{sql}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// `postgres://…` of its database.
    pub fn url(&self) -> String {
        format!("postgres://workbench@127.0.0.1:{}/workbench", self.port)
    }

    /// The statements the database has run so far (`pg_stat_statements`).
    pub fn statements(&self) -> u64 {
        let sql = "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())";
        self.psql(sql).parse().expect("a count")
    }

    /// The store it holds, copied into the folder `to` (`workbench store export`).
    pub fn export(&self, to: &Path) {
        let output = Command::new(env!("CARGO_BIN_EXE_workbench"))
            .args(["store", "export", &self.url()])
            .arg(to)
            .output()
            .expect("run workbench store export");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let program = self.bin.join("pg_ctl");
        let mut command = if is_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(&program);
            command
        } else {
            Command::new(&program)
        };
        let _ = command.args(["-D", path(&data), "-m", "immediate", "stop"]).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
