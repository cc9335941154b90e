//! The store's team file as the servers (`workbench proxy`, `workbench serve`) read it: through
//! the host's files, again whenever it changed (its size or time), so a member added or revoked
//! counts from the next request on. What a token means is the engine's (`proxy::team`).

use std::sync::{Arc, Mutex};

use context_workbench::Host;
use context_workbench::proxy::team::{self, Team, team_path};
use workbench_cli::native::{NativeHost, StoreFs};

/// The team file of one store.
pub struct TeamFile {
    fs: StoreFs,
    /// The store root in `fs` (`.` when `fs` is rooted at the store).
    root: String,
    /// Team mode whatever the file says (a server beyond loopback): without a member, every
    /// request is refused.
    required: bool,
    seen: Mutex<Seen>,
}

#[derive(Default)]
struct Seen {
    /// The file's size and time when it was last read; `None`: not read yet.
    stamp: Option<Option<(u64, u64)>>,
    team: Option<Arc<Team>>,
}

impl TeamFile {
    pub fn new(fs: StoreFs, root: &str, required: bool) -> TeamFile {
        TeamFile { fs, root: root.to_owned(), required, seen: Mutex::default() }
    }

    /// The team requests must sign in to now (`None`: single-user mode, no sign-in), and a
    /// line to log when the file could not be read (once per change of the file). A file that
    /// cannot be read is a team nobody signs in to: it never opens a server up.
    pub fn current(&self) -> (Option<Arc<Team>>, Option<String>) {
        let host = NativeHost::new(self.fs.clone(), None);
        let path = team_path(&self.root);
        let stamp = match pollster::block_on(host.stat(&path)) {
            Ok(stat) => stat.map(|s| (s.size, s.mtime_ms)),
            Err(e) => {
                return (Some(Arc::default()), Some(format!("the team file {path}: {e}; every request is refused")));
            }
        };
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let mut note = None;
        if seen.stamp != Some(stamp) {
            seen.team = match pollster::block_on(team::load(&host, &self.root)) {
                Ok(team) => team.filter(Team::is_on).map(Arc::new),
                Err(e) => {
                    note = Some(format!("the team file {path}: {e}; every request is refused until it is mended"));
                    Some(Arc::default())
                }
            };
            seen.stamp = Some(stamp);
        }
        let team = seen.team.clone().or_else(|| self.required.then(Arc::default));
        (team, note)
    }

    /// Whether the store has a team now (a member in its file).
    pub fn is_on(&self) -> bool {
        self.current().0.is_some_and(|team| team.is_on())
    }
}
