//! Files under a workspace root. Every path is workspace-relative; a path that escapes the
//! root (by `..`, by being absolute, or through a symbolic link that points outside) is refused.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::UNIX_EPOCH;

use context_workbench::host::{DirEntry, FileContent, FileStat, HostError, HostErrorKind};
use context_workbench::paths::normalize_workspace_path;

#[derive(Debug, Clone)]
pub struct WorkspaceFs {
    root: PathBuf,
    /// The locks this process holds, by path (shared by the clones: the process's threads).
    locks: Arc<Mutex<BTreeMap<PathBuf, fs::File>>>,
}

impl WorkspaceFs {
    /// A file system rooted at `root`, which must be an existing directory.
    pub fn new(root: impl AsRef<Path>) -> Result<Self, HostError> {
        let root = root.as_ref();
        let canonical = root.canonicalize().map_err(|e| io_error(&root.display().to_string(), e))?;
        if !canonical.is_dir() {
            return Err(HostError::new(
                HostErrorKind::Io,
                format!("workspace root {} is not a directory", root.display()),
            ));
        }
        Ok(WorkspaceFs { root: canonical, locks: Arc::default() })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The absolute path for a workspace-relative `path`, after checking it stays inside: the
    /// engine's rule for paths, then no symbolic link on the way may lead outside.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, HostError> {
        let relative = normalize_workspace_path(path)?;
        let full = if relative.is_empty() { self.root.clone() } else { self.root.join(&relative) };
        // Follow symbolic links in the longest existing part of the path.
        let mut existing = full.as_path();
        while fs::symlink_metadata(existing).is_err() {
            existing = existing.parent().unwrap_or(&self.root);
        }
        let outside = |why: &str| {
            HostError::new(
                HostErrorKind::OutsideWorkspace,
                format!("path `{path}` {why}; paths must stay inside the workspace {}", self.root.display()),
            )
        };
        let real = existing.canonicalize().map_err(|_| outside("goes through a link that cannot be resolved"))?;
        if !real.starts_with(&self.root) {
            return Err(outside("leads outside through a symbolic link"));
        }
        Ok(full)
    }

    pub fn read_file(&self, path: &str) -> Result<FileContent, HostError> {
        let full = self.resolve(path)?;
        let meta = fs::metadata(&full).map_err(|e| io_error(path, e))?;
        // A FIFO or a device would block the reader (a server's whole shutdown with it) or never end.
        if !meta.is_file() {
            return Err(HostError::new(HostErrorKind::Io, format!("{path}: not a regular file")));
        }
        let bytes = fs::read(&full).map_err(|e| io_error(path, e))?;
        // Invalid bytes read as U+FFFD, as the JS hosts read them (Node's `utf8`, TextDecoder): a
        // character cut by an interrupted append is then a torn line the store skips (R8.2).
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        Ok(FileContent { text, mtime_ms: mtime_ms(&meta) })
    }

    pub fn stat(&self, path: &str) -> Result<Option<FileStat>, HostError> {
        let full = self.resolve(path)?;
        match fs::metadata(&full) {
            Ok(meta) => Ok(Some(FileStat { is_dir: meta.is_dir(), size: meta.len(), mtime_ms: mtime_ms(&meta) })),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error(path, e)),
        }
    }

    pub fn write_file(&self, path: &str, data: &str) -> Result<(), HostError> {
        let full = self.resolve_for_write(path)?;
        fs::write(full, data).map_err(|e| io_error(path, e))
    }

    pub fn append_file(&self, path: &str, data: &str) -> Result<(), HostError> {
        let full = self.resolve_for_write(path)?;
        let mut file = fs::OpenOptions::new().create(true).append(true).open(full).map_err(|e| io_error(path, e))?;
        file.write_all(data.as_bytes()).map_err(|e| io_error(path, e))
    }

    pub fn rename(&self, from: &str, to: &str) -> Result<(), HostError> {
        let source = self.resolve(from)?;
        let target = self.resolve_for_write(to)?;
        fs::rename(source, target).map_err(|e| io_error(from, e))
    }

    pub fn remove(&self, path: &str) -> Result<(), HostError> {
        match fs::remove_file(self.resolve(path)?) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_error(path, e)),
            _ => Ok(()),
        }
    }

    pub fn list_dir(&self, path: &str) -> Result<Vec<DirEntry>, HostError> {
        let full = self.resolve(path)?;
        let mut entries = Vec::new();
        for entry in fs::read_dir(&full).map_err(|e| io_error(path, e))? {
            let entry = entry.map_err(|e| io_error(path, e))?;
            let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
            entries.push(DirEntry { name: entry.file_name().to_string_lossy().into_owned(), is_dir });
        }
        entries.sort();
        Ok(entries)
    }

    /// Take the OS's advisory lock on the file at `path` (`flock`, `LockFileEx`), which the
    /// system drops when the process ends however it ends; false while another process holds it.
    /// The file says which process holds it, for people.
    pub fn try_lock(&self, path: &str) -> Result<bool, HostError> {
        let full = self.resolve_for_write(path)?;
        let mut locks = self.locks.lock().unwrap_or_else(|e| e.into_inner());
        if locks.contains_key(&full) {
            return Ok(true);
        }
        let mut file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&full)
            .map_err(|e| io_error(path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => return Ok(false),
            Err(fs::TryLockError::Error(e)) => return Err(io_error(path, e)),
        }
        let _ = file.set_len(0).and_then(|()| writeln!(file, "{}", std::process::id()));
        locks.insert(full, file);
        Ok(true)
    }

    /// Let go of a lock [`WorkspaceFs::try_lock`] took (the file stays: removing it would race
    /// with a process opening it to lock it).
    pub fn unlock(&self, path: &str) -> Result<(), HostError> {
        let full = self.resolve(path)?;
        let held = self.locks.lock().unwrap_or_else(|e| e.into_inner()).remove(&full);
        if let Some(file) = held {
            // Emptied first: a holder is named only while it holds the lock.
            let _ = file.set_len(0);
            file.unlock().map_err(|e| io_error(path, e))?;
        }
        Ok(())
    }

    /// Resolve, then create the parent directories of the target.
    fn resolve_for_write(&self, path: &str) -> Result<PathBuf, HostError> {
        let full = self.resolve(path)?;
        if let Some(parent) = full.parent() {
            fs::create_dir_all(parent).map_err(|e| io_error(path, e))?;
        }
        Ok(full)
    }
}

fn mtime_ms(meta: &fs::Metadata) -> u64 {
    let modified = meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok());
    modified.map_or(0, |d| d.as_millis() as u64)
}

fn io_error(path: &str, e: io::Error) -> HostError {
    let kind = if e.kind() == io::ErrorKind::NotFound { HostErrorKind::NotFound } else { HostErrorKind::Io };
    HostError::new(kind, format!("{path}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> (PathBuf, WorkspaceFs) {
        let dir = std::env::temp_dir().join(format!("cw-fs-{}-{:?}", std::process::id(), std::thread::current().id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("ws/src")).unwrap();
        fs::write(dir.join("secret.txt"), "outside").unwrap();
        let ws = WorkspaceFs::new(dir.join("ws")).unwrap();
        (dir, ws)
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_not_waited_on() {
        let (dir, ws) = workspace();
        let made = std::process::Command::new("mkfifo").arg(dir.join("ws/events.jsonl")).status().unwrap();
        assert!(made.success());
        let error = ws.read_file("events.jsonl").unwrap_err();
        assert_eq!((error.kind, error.message.as_str()), (HostErrorKind::Io, "events.jsonl: not a regular file"));
    }

    #[test]
    fn escapes_are_refused_with_the_path_named() {
        let (dir, ws) = workspace();
        for path in ["../secret.txt", "src/../../secret.txt", "/etc/passwd"] {
            let err = ws.read_file(path).unwrap_err();
            assert_eq!(err.kind, HostErrorKind::OutsideWorkspace, "{path}");
            assert!(err.message.contains(&format!("`{path}`")), "{}", err.message);
        }
        let absolute_inside = dir.join("ws/src").display().to_string();
        assert_eq!(ws.stat(&absolute_inside).unwrap_err().kind, HostErrorKind::OutsideWorkspace);
        assert!(ws.write_file("../evil.txt", "x").is_err());
        assert!(!dir.join("evil.txt").exists());
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn symbolic_links_out_of_the_root_are_refused() {
        let (dir, ws) = workspace();
        std::os::unix::fs::symlink(dir.join("secret.txt"), dir.join("ws/link.txt")).unwrap();
        std::os::unix::fs::symlink(&dir, dir.join("ws/up")).unwrap();
        std::os::unix::fs::symlink(dir.join("missing"), dir.join("ws/dangling")).unwrap();
        std::os::unix::fs::symlink(dir.join("ws/src"), dir.join("ws/inner")).unwrap();
        assert!(ws.read_file("link.txt").unwrap_err().message.contains("symbolic link"));
        assert_eq!(ws.write_file("up/new.txt", "x").unwrap_err().kind, HostErrorKind::OutsideWorkspace);
        assert_eq!(ws.write_file("dangling", "x").unwrap_err().kind, HostErrorKind::OutsideWorkspace);
        assert!(!dir.join("new.txt").exists() && !dir.join("missing").exists());
        ws.write_file("inner/ok.rs", "fn ok() {}").unwrap();
        assert_eq!(ws.read_file("src/ok.rs").unwrap().text, "fn ok() {}");
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn files_round_trip() {
        let (dir, ws) = workspace();
        ws.write_file("a/b.txt", "one").unwrap();
        ws.append_file("a/b.txt", " two").unwrap();
        ws.rename("a/b.txt", "a/c.txt").unwrap();
        assert_eq!(ws.read_file("./a/c.txt").unwrap().text, "one two");
        assert!(ws.stat("a/c.txt").unwrap().unwrap().mtime_ms > 0);
        assert_eq!(ws.stat("a/b.txt").unwrap(), None);
        let names: Vec<String> = ws.list_dir("").unwrap().into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["a", "src"]);
        ws.remove("a/c.txt").unwrap();
        ws.remove("a/c.txt").unwrap();
        assert_eq!(ws.read_file("a/c.txt").unwrap_err().kind, HostErrorKind::NotFound);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_lock_is_one_holders_until_it_lets_go() {
        let (dir, ws) = workspace();
        // Another handle on the file stands for another process: the OS lock is per handle.
        let other = WorkspaceFs::new(dir.join("ws")).unwrap();
        assert!(ws.try_lock("t/owner.lock").unwrap());
        assert!(ws.clone().try_lock("t/owner.lock").unwrap(), "the holder's own threads hold it");
        assert!(!other.try_lock("t/owner.lock").unwrap());
        assert_eq!(ws.read_file("t/owner.lock").unwrap().text, format!("{}\n", std::process::id()));
        ws.unlock("t/owner.lock").unwrap();
        assert_eq!(ws.read_file("t/owner.lock").unwrap().text, "", "named only while held");
        assert!(other.try_lock("t/owner.lock").unwrap());
        fs::remove_dir_all(dir).unwrap();
    }
}
