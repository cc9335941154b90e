//! Where the native host's files go: everything on disk (the folder store), or the paths under
//! the trace root in PostgreSQL and the rest (the workspace's files) on disk. One routing type
//! for every reader and writer of the store: the proxy's sessions, `serve`, `stats`, `dump`,
//! `prompt`, `store import`.

use context_workbench::host::{DirEntry, FileContent, FileStat, HostError, HostErrorKind};
use context_workbench::paths::normalize_workspace_path;
use context_workbench::proxy::args::is_database_store;

use super::WorkspaceFs;
use super::postgres::PgStore;

/// A store as named on the command line, for people: a folder as given, a URL without its
/// password.
pub fn shown_store(store: &str) -> String {
    if is_database_store(store) { super::postgres::redact_url(store) } else { store.to_owned() }
}

#[derive(Debug, Clone)]
pub enum StoreFs {
    /// Every path on disk, under the workspace root.
    Folder(WorkspaceFs),
    /// The paths under `root` (workspace-relative; `.` for all of them) in the database, the
    /// others on `disk` (refused when there is none).
    Database { db: PgStore, root: String, disk: Option<WorkspaceFs> },
}

impl From<WorkspaceFs> for StoreFs {
    fn from(fs: WorkspaceFs) -> Self {
        StoreFs::Folder(fs)
    }
}

/// Where one path goes.
enum Route<'a> {
    Disk(&'a WorkspaceFs),
    /// The path under the trace root ('' for the root itself).
    Db(&'a PgStore, String),
}

impl StoreFs {
    /// A trace root named on the command line, read with the root at `.`: a folder (which must
    /// exist) or a `postgres://` URL.
    pub fn open_root(store: &str) -> Result<StoreFs, String> {
        if is_database_store(store) {
            let db = PgStore::connect(store)?;
            return Ok(StoreFs::Database { db, root: ".".into(), disk: None });
        }
        let fs = WorkspaceFs::new(store).map_err(|e| format!("trace root {store}: {e}"))?;
        Ok(StoreFs::Folder(fs))
    }

    /// True when other processes on other machines share this store (PostgreSQL): what a
    /// session's owner may have to wait for or take over.
    pub fn is_shared(&self) -> bool {
        matches!(self, StoreFs::Database { .. })
    }

    /// The database, when the store is one.
    pub fn database(&self) -> Option<&PgStore> {
        match self {
            StoreFs::Database { db, .. } => Some(db),
            StoreFs::Folder(_) => None,
        }
    }

    /// The store, for people: a folder's path or the URL without its password.
    pub fn shown(&self) -> String {
        match self {
            StoreFs::Folder(fs) => fs.root().display().to_string(),
            StoreFs::Database { db, .. } => db.shown_url().to_owned(),
        }
    }

    fn route(&self, path: &str) -> Result<Route<'_>, HostError> {
        let (db, root, disk) = match self {
            StoreFs::Folder(fs) => return Ok(Route::Disk(fs)),
            StoreFs::Database { db, root, disk } => (db, root, disk),
        };
        let path = normalize_workspace_path(path)?;
        let under = if root == "." || root.is_empty() {
            Some(path.as_str())
        } else if path == *root {
            Some("")
        } else {
            path.strip_prefix(root.as_str()).and_then(|rest| rest.strip_prefix('/'))
        };
        match (under, disk) {
            (Some(key), _) => Ok(Route::Db(db, key.to_owned())),
            (None, Some(fs)) => Ok(Route::Disk(fs)),
            (None, None) => Err(HostError::new(
                HostErrorKind::OutsideWorkspace,
                format!("path `{path}` is outside the trace store {}", db.shown_url()),
            )),
        }
    }

    pub fn read_file(&self, path: &str) -> Result<FileContent, HostError> {
        match self.route(path)? {
            Route::Disk(fs) => fs.read_file(path),
            Route::Db(db, key) => db.read_file(&key),
        }
    }

    pub fn stat(&self, path: &str) -> Result<Option<FileStat>, HostError> {
        match self.route(path)? {
            Route::Disk(fs) => fs.stat(path),
            Route::Db(db, key) => db.stat(&key),
        }
    }

    pub fn write_file(&self, path: &str, data: &str) -> Result<(), HostError> {
        match self.route(path)? {
            Route::Disk(fs) => fs.write_file(path, data),
            Route::Db(db, key) => db.write_file(&key, data),
        }
    }

    pub fn append_file(&self, path: &str, data: &str) -> Result<(), HostError> {
        match self.route(path)? {
            Route::Disk(fs) => fs.append_file(path, data),
            Route::Db(db, key) => db.append_file(&key, data),
        }
    }

    pub fn rename(&self, from: &str, to: &str) -> Result<(), HostError> {
        match (self.route(from)?, self.route(to)?) {
            (Route::Disk(fs), Route::Disk(_)) => fs.rename(from, to),
            (Route::Db(db, source), Route::Db(_, target)) => db.rename(&source, &target),
            _ => Err(HostError::new(
                HostErrorKind::Io,
                format!("cannot move `{from}` to `{to}`: one is in the database, the other on disk"),
            )),
        }
    }

    pub fn remove(&self, path: &str) -> Result<(), HostError> {
        match self.route(path)? {
            Route::Disk(fs) => fs.remove(path),
            Route::Db(db, key) => db.remove(&key),
        }
    }

    pub fn list_dir(&self, path: &str) -> Result<Vec<DirEntry>, HostError> {
        match self.route(path)? {
            Route::Disk(fs) => fs.list_dir(path),
            Route::Db(db, key) => db.list_dir(&key),
        }
    }

    /// The files of folder `path` whose names end with `suffix` (one query in the database).
    pub fn read_files(&self, path: &str, suffix: &str) -> Option<Result<Vec<(String, FileContent)>, HostError>> {
        match self.route(path) {
            Ok(Route::Db(db, key)) => Some(db.read_files(&key, suffix)),
            Ok(Route::Disk(_)) => None,
            Err(e) => Some(Err(e)),
        }
    }

    pub fn try_lock(&self, path: &str) -> Result<bool, HostError> {
        match self.route(path)? {
            Route::Disk(fs) => fs.try_lock(path),
            Route::Db(db, key) => db.try_lock(&key),
        }
    }

    pub fn unlock(&self, path: &str) -> Result<(), HostError> {
        match self.route(path)? {
            Route::Disk(fs) => fs.unlock(path),
            Route::Db(db, key) => db.unlock(&key),
        }
    }

    /// The bytes of a file from `offset` on, and its size; `None` when it does not exist. For
    /// readers that follow a log as it grows (`serve`'s watchers).
    pub fn read_from(&self, path: &str, offset: u64) -> Result<Option<(u64, Vec<u8>)>, HostError> {
        // A log that did not grow (most polls) costs a look at its size only.
        match self.stat(path)? {
            None => return Ok(None),
            Some(stat) if stat.size == offset => return Ok(Some((stat.size, Vec::new()))),
            Some(_) => {}
        }
        let content = match self.read_file(path) {
            Ok(content) => content,
            Err(e) if e.kind == HostErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let bytes = content.text.into_bytes();
        let size = bytes.len() as u64;
        let start = (offset.min(size)) as usize;
        Ok(Some((size, bytes[start..].to_vec())))
    }
}
