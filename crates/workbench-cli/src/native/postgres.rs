//! The trace store in PostgreSQL: the host's file operations as rows (`migrations/`), so the
//! store keeps the folder store's layout and crash-safety invariants. A file is a row of
//! `store_files` and its bytes rows of `store_chunks`: an append is one INSERT, a whole-file
//! write replaces the chunks in one statement, a rename is one transaction. An owner lock is a
//! lease in `store_leases` that this process renews and that expires by the database's clock
//! when the process dies.
//!
//! The queries run on a runtime of their own: callers block (the engine's actor threads run
//! without a Tokio context, under `pollster`).

use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use context_workbench::host::{DirEntry, FileContent, FileStat, HostError, HostErrorKind};
use sqlx::migrate::MigrateError;
use sqlx::postgres::{PgPool, PgPoolOptions};

/// The schema's migrations, embedded: a store is migrated forward when opened.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// How long a lease lasts unless renewed (renewed every third of it).
const LEASE_MS: u64 = 15_000;
/// Connections an instance holds at most.
const MAX_CONNECTIONS: u32 = 16;
/// How long an operation waits for a connection (all busy, or the database unreachable) before
/// it fails: what an outage adds to each operation that tries the database.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);
/// Overrides [`LEASE_MS`] (the tests' short leases).
pub const LEASE_MS_ENV: &str = "WORKBENCH_STORE_LEASE_MS";

/// A PostgreSQL store, shared by the clones.
#[derive(Clone)]
pub struct PgStore {
    pool: PgPool,
    /// The URL without its password, for messages.
    shown: String,
    /// Who holds this process's leases: a random id, the host name and the process id.
    holder: String,
    lease_ms: u64,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("url", &self.shown).field("holder", &self.holder).finish()
    }
}

/// `url` without its password (in the authority or a `password=` parameter).
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{name}:***@{host}"),
            None => authority.to_owned(),
        },
        None => authority.to_owned(),
    };
    let tail: Vec<String> = tail
        .split('&')
        .map(|part| match part.split_once("password=") {
            Some((before, _)) if before.is_empty() || before.ends_with('?') => format!("{before}password=***"),
            _ => part.to_owned(),
        })
        .collect();
    format!("{scheme}://{authority}{}", tail.join("&"))
}

/// The runtime the queries and the lease renewal run on, for the whole process.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("store-postgres")
            .enable_all()
            .build()
            .expect("a Tokio runtime for the PostgreSQL store")
    })
}

/// Run `work` on the store's runtime and wait for it, from any thread.
fn run<T: Send + 'static>(work: impl Future<Output = T> + Send + 'static) -> Result<T, HostError> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    runtime().spawn(async move {
        let _ = tx.send(work.await);
    });
    rx.recv().map_err(|_| HostError::new(HostErrorKind::Io, "the PostgreSQL store's task failed"))
}

impl PgStore {
    /// Connect, migrate the schema forward and start renewing this process's leases. The
    /// error names the URL without its password.
    pub fn connect(url: &str) -> Result<PgStore, String> {
        let shown = redact_url(url);
        let lease_ms = std::env::var(LEASE_MS_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(LEASE_MS).max(30);
        let (owned, shown_too) = (url.to_owned(), shown.clone());
        let pool = run(async move {
            let pool = PgPoolOptions::new()
                .max_connections(MAX_CONNECTIONS)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .connect(&owned)
                .await
                .map_err(|e| format!("cannot open the PostgreSQL store {shown_too}: {}", clean(&e, &owned)))?;
            MIGRATOR.run(&pool).await.map_err(|e| migrate_error(&e, &shown_too, &owned))?;
            Ok::<_, String>(pool)
        })
        .map_err(|e| e.message)??;
        let store = PgStore { pool, shown, holder: holder(), lease_ms };
        store.renew_leases();
        Ok(store)
    }

    /// The URL without its password.
    pub fn shown_url(&self) -> &str {
        &self.shown
    }

    /// Who holds this process's leases.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    fn run<T: Send + 'static, F: Future<Output = Result<T, sqlx::Error>> + Send + 'static>(
        &self,
        path: &str,
        work: impl FnOnce(PgPool) -> F,
    ) -> Result<T, HostError> {
        let (pool, path, shown) = (self.pool.clone(), path.to_owned(), self.shown.clone());
        let work = work(pool);
        run(async move { work.await.map_err(|e| HostError::new(HostErrorKind::Io, format!("{path}: {shown}: {e}"))) })?
    }

    /// The text of the file at `key` (a path under the trace root) and its mtime.
    pub fn read_file(&self, key: &str) -> Result<FileContent, HostError> {
        let k = key.to_owned();
        let rows: Vec<(i64, Option<Vec<u8>>)> = self.run(key, |pool| async move {
            sqlx::query_as(
                "SELECT f.modified_ms, c.data FROM store_files f LEFT JOIN store_chunks c ON c.path = f.path \
                 WHERE f.path = $1 ORDER BY c.seq",
            )
            .bind(k)
            .fetch_all(&pool)
            .await
        })?;
        let Some(&(modified, _)) = rows.first() else {
            return Err(match self.stat(key)? {
                Some(_) => HostError::new(HostErrorKind::Io, format!("{key}: not a regular file")),
                None => HostError::new(HostErrorKind::NotFound, format!("{key}: no such file in {}", self.shown)),
            });
        };
        let bytes: Vec<u8> = rows.into_iter().filter_map(|(_, data)| data).flatten().collect();
        Ok(content(bytes, modified))
    }

    /// A file, a folder (one that holds files: folders are implied), or nothing.
    pub fn stat(&self, key: &str) -> Result<Option<FileStat>, HostError> {
        if key.is_empty() {
            return Ok(Some(FileStat { is_dir: true, size: 0, mtime_ms: 0 }));
        }
        let (k, (low, high)) = (key.to_owned(), subtree(key));
        self.run(key, |pool| async move {
            let file: Option<(i64, i64)> = sqlx::query_as("SELECT modified_ms, size FROM store_files WHERE path = $1")
                .bind(&k)
                .fetch_optional(&pool)
                .await?;
            if let Some((modified, size)) = file {
                return Ok(Some(FileStat {
                    is_dir: false,
                    size: size.max(0) as u64,
                    mtime_ms: modified.max(0) as u64,
                }));
            }
            let dir: Option<i64> = sqlx::query_scalar(
                "SELECT max(modified_ms) FROM store_files WHERE dir = $1 OR (dir >= $2 AND dir < $3)",
            )
            .bind(&k)
            .bind(low)
            .bind(high)
            .fetch_one(&pool)
            .await?;
            Ok(dir.map(|modified| FileStat { is_dir: true, size: 0, mtime_ms: modified.max(0) as u64 }))
        })
    }

    /// Create or replace the file: its chunks replaced, in one statement (atomic).
    pub fn write_file(&self, key: &str, data: &str) -> Result<(), HostError> {
        let (k, (dir, name), data) = (key.to_owned(), split(key), data.as_bytes().to_vec());
        self.run(key, |pool| async move {
            // The DELETE sees the chunks from before the statement only, not the one inserted.
            sqlx::query(
                "WITH file AS ( \
                   INSERT INTO store_files (path, dir, name, modified_ms, size) \
                   VALUES ($1, $2, $3, store_now_ms(), octet_length($4)) \
                   ON CONFLICT (path) DO UPDATE SET modified_ms = EXCLUDED.modified_ms, size = EXCLUDED.size \
                   RETURNING path), \
                 old AS (DELETE FROM store_chunks WHERE path = $1) \
                 INSERT INTO store_chunks (path, data) SELECT path, $4 FROM file",
            )
            .bind(k)
            .bind(dir)
            .bind(name)
            .bind(data)
            .execute(&pool)
            .await
            .map(drop)
        })
    }

    /// Append to the file, creating it: one statement, nothing written before is touched.
    pub fn append_file(&self, key: &str, data: &str) -> Result<(), HostError> {
        let (k, (dir, name), data) = (key.to_owned(), split(key), data.as_bytes().to_vec());
        self.run(key, |pool| async move {
            sqlx::query(
                "WITH file AS ( \
                   INSERT INTO store_files (path, dir, name, modified_ms, size) \
                   VALUES ($1, $2, $3, store_now_ms(), octet_length($4)) \
                   ON CONFLICT (path) DO UPDATE SET modified_ms = EXCLUDED.modified_ms, \
                     size = store_files.size + EXCLUDED.size \
                   RETURNING path) \
                 INSERT INTO store_chunks (path, data) SELECT path, $4 FROM file",
            )
            .bind(k)
            .bind(dir)
            .bind(name)
            .bind(data)
            .execute(&pool)
            .await
            .map(drop)
        })
    }

    /// Move `from` over `to` in one transaction; a missing `from` is `not_found`.
    pub fn rename(&self, from: &str, to: &str) -> Result<(), HostError> {
        let (source, target, (dir, name)) = (from.to_owned(), to.to_owned(), split(to));
        let moved = self.run(from, |pool| async move {
            let mut tx = pool.begin().await?;
            sqlx::query("DELETE FROM store_files WHERE path = $1 AND path <> $2")
                .bind(&target)
                .bind(&source)
                .execute(&mut *tx)
                .await?;
            let moved = sqlx::query("UPDATE store_files SET path = $2, dir = $3, name = $4 WHERE path = $1")
                .bind(&source)
                .bind(&target)
                .bind(dir)
                .bind(name)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if moved == 1 {
                tx.commit().await?
            } else {
                tx.rollback().await?
            }
            Ok(moved == 1)
        })?;
        if !moved {
            return Err(HostError::new(HostErrorKind::NotFound, format!("{from}: no such file in {}", self.shown)));
        }
        Ok(())
    }

    /// Remove the file (its chunks go with it); a missing file is not an error.
    pub fn remove(&self, key: &str) -> Result<(), HostError> {
        let k = key.to_owned();
        self.run(key, |pool| async move {
            sqlx::query("DELETE FROM store_files WHERE path = $1").bind(k).execute(&pool).await.map(drop)
        })
    }

    /// The files of a folder and the folders implied by the paths below it, sorted by name.
    pub fn list_dir(&self, key: &str) -> Result<Vec<DirEntry>, HostError> {
        let (k, (low, high)) = (key.to_owned(), subtree(key));
        let skip = low.chars().count() as i32 + 1;
        let rows: Vec<(String, bool)> = self.run(key, |pool| async move {
            sqlx::query_as(
                "SELECT name, false FROM store_files WHERE dir = $1 \
                 UNION SELECT DISTINCT split_part(substr(dir, $4), '/', 1), true FROM store_files \
                 WHERE dir >= $2 AND ($3::text IS NULL OR dir < $3) AND dir <> $1",
            )
            .bind(k)
            .bind(low)
            .bind(high)
            .bind(skip)
            .fetch_all(&pool)
            .await
        })?;
        if rows.is_empty() && !key.is_empty() && self.stat(key)?.is_none() {
            return Err(HostError::new(HostErrorKind::NotFound, format!("{key}: no such folder in {}", self.shown)));
        }
        let mut entries: Vec<DirEntry> = rows.into_iter().map(|(name, is_dir)| DirEntry { name, is_dir }).collect();
        entries.sort();
        entries.dedup_by(|a, b| a.name == b.name);
        Ok(entries)
    }

    /// The files directly in folder `key` whose names end with `suffix`, with their text, sorted
    /// by name: one query (a session's messages, read at each call on a shared store).
    pub fn read_files(&self, key: &str, suffix: &str) -> Result<Vec<(String, FileContent)>, HostError> {
        let (k, suffix) = (key.to_owned(), suffix.to_owned());
        let rows: Vec<(String, i64, Option<Vec<u8>>)> = self.run(key, |pool| async move {
            sqlx::query_as(
                "SELECT f.name, f.modified_ms, c.data FROM store_files f LEFT JOIN store_chunks c ON c.path = f.path \
                 WHERE f.dir = $1 AND right(f.name, length($2)) = $2 ORDER BY f.name, c.seq",
            )
            .bind(k)
            .bind(suffix)
            .fetch_all(&pool)
            .await
        })?;
        let mut files: Vec<(String, i64, Vec<u8>)> = Vec::new();
        for (name, modified, data) in rows {
            match files.last_mut() {
                Some((last, _, bytes)) if *last == name => bytes.extend(data.unwrap_or_default()),
                _ => files.push((name, modified, data.unwrap_or_default())),
            }
        }
        Ok(files.into_iter().map(|(name, modified, bytes)| (name, content(bytes, modified))).collect())
    }

    /// Take the lease at `key`: when nobody holds it, its holder's lease expired, or this
    /// process holds it already.
    pub fn try_lock(&self, key: &str) -> Result<bool, HostError> {
        let (k, holder, ttl) = (key.to_owned(), self.holder.clone(), self.lease_ms as i64);
        self.run(key, |pool| async move {
            let taken: Option<String> = sqlx::query_scalar(
                "INSERT INTO store_leases (path, holder, expires_at) \
                 VALUES ($1, $2, now() + $3 * interval '1 millisecond') \
                 ON CONFLICT (path) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at \
                 WHERE store_leases.holder = EXCLUDED.holder OR store_leases.expires_at < now() \
                 RETURNING holder",
            )
            .bind(k)
            .bind(holder)
            .bind(ttl)
            .fetch_optional(&pool)
            .await?;
            Ok(taken.is_some())
        })
    }

    /// Let go of the lease at `key` if this process holds it.
    pub fn unlock(&self, key: &str) -> Result<(), HostError> {
        let (k, holder) = (key.to_owned(), self.holder.clone());
        self.run(key, |pool| async move {
            sqlx::query("DELETE FROM store_leases WHERE path = $1 AND holder = $2")
                .bind(k)
                .bind(holder)
                .execute(&pool)
                .await
                .map(drop)
        })
    }

    /// Who holds the lease at `key` now (expired leases hold nothing).
    pub fn lease_holder(&self, key: &str) -> Result<Option<String>, HostError> {
        let k = key.to_owned();
        self.run(key, |pool| async move {
            sqlx::query_scalar("SELECT holder FROM store_leases WHERE path = $1 AND expires_at >= now()")
                .bind(k)
                .fetch_optional(&pool)
                .await
        })
    }

    /// Every third of a lease, push this process's leases on by a lease, for as long as the
    /// process lives; a failure is said once and retried.
    fn renew_leases(&self) {
        let (pool, holder, ttl) = (self.pool.clone(), self.holder.clone(), self.lease_ms);
        let shown = self.shown.clone();
        runtime().spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(ttl / 3));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut failing = false;
            loop {
                tick.tick().await;
                let renewed = sqlx::query(
                    "UPDATE store_leases SET expires_at = now() + $2 * interval '1 millisecond' WHERE holder = $1",
                )
                .bind(&holder)
                .bind(ttl as i64)
                .execute(&pool)
                .await;
                match renewed {
                    Err(e) if !failing => {
                        failing = true;
                        eprintln!("workbench: the leases in {shown} could not be renewed: {e}");
                    }
                    Err(_) => {}
                    Ok(_) => failing = false,
                }
            }
        });
    }
}

/// A path's folder ('' at the root) and name.
/// A file's text (invalid UTF-8 replaced) and its time.
fn content(bytes: Vec<u8>, modified_ms: i64) -> FileContent {
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    FileContent { text, mtime_ms: modified_ms.max(0) as u64 }
}

fn split(key: &str) -> (String, String) {
    match key.rsplit_once('/') {
        Some((dir, name)) => (dir.to_owned(), name.to_owned()),
        None => (String::new(), key.to_owned()),
    }
}

/// The range of `dir` values strictly below folder `key`: `key/` up to `key0` ('0' follows '/'
/// in the "C" collation); the whole table for the root.
fn subtree(key: &str) -> (String, Option<String>) {
    if key.is_empty() { (String::new(), None) } else { (format!("{key}/"), Some(format!("{key}0"))) }
}

/// A random id for this process, with the host name and process id for people.
fn holder() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher
        .write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into());
    format!("{:016x} {host} pid {}", hasher.finish(), std::process::id())
}

/// An error's words with the URL's password taken out, should the driver repeat it.
fn clean(error: &dyn std::fmt::Display, url: &str) -> String {
    let text = error.to_string();
    let password = url.split_once("://").and_then(|(_, rest)| {
        let authority = &rest[..rest.find(['/', '?']).unwrap_or(rest.len())];
        authority.rsplit_once('@')?.0.split_once(':').map(|(_, p)| p.to_owned())
    });
    match password.filter(|p| !p.is_empty()) {
        Some(p) => text.replace(&p, "***"),
        None => text,
    }
}

/// A migration failure in words; a store migrated by a newer workbench is refused.
fn migrate_error(error: &MigrateError, shown: &str, url: &str) -> String {
    let known = MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0);
    match error {
        MigrateError::VersionMissing(version) => format!(
            "the PostgreSQL store {shown} was made by a newer workbench (its schema is at version {version}; this \
             workbench knows versions up to {known}): upgrade workbench, or give it a store of its own version"
        ),
        MigrateError::VersionMismatch(version) => format!(
            "the PostgreSQL store {shown} has a version {version} schema that differs from this workbench's: it \
             was made by another build; use a store made by this version"
        ),
        other => format!("cannot migrate the PostgreSQL store {shown}: {}", clean(other, url)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        assert_eq!(redact_url("postgres://me:s3cret@db:5432/wb"), "postgres://me:***@db:5432/wb");
        assert_eq!(redact_url("postgres://me@db/wb"), "postgres://me@db/wb");
        assert_eq!(redact_url("postgresql://db/wb?user=me&password=s3cret"), "postgresql://db/wb?user=me&password=***");
        assert_eq!(redact_url("postgres://db/wb?password=x"), "postgres://db/wb?password=***");
        assert_eq!(clean(&"auth failed for s3cret", "postgres://me:s3cret@db/wb"), "auth failed for ***");
    }

    #[test]
    fn folders_and_their_subtrees() {
        assert_eq!(split("t/messages/m1.json"), ("t/messages".into(), "m1.json".into()));
        assert_eq!(split(".gitignore"), (String::new(), ".gitignore".into()));
        assert_eq!(subtree("t"), ("t/".into(), Some("t0".into())));
        assert_eq!(subtree(""), (String::new(), None));
    }
}
