//! `workbench team add NAME [--admin] | revoke NAME | list [--store DIR]`: team mode's members,
//! in the store's `team.json` (the engine's `proxy::team`: the format, the checks, the hash),
//! read and written through the host's files like every trace file. `add` prints the new
//! member's token once, alone on stdout (the token's randomness is the OS's); nothing keeps it
//! but its SHA-256.

use std::path::Path;
use std::process::ExitCode;

use context_workbench::Host;
use context_workbench::goals::utc_day;
use context_workbench::proxy::team::{self, TOKEN_BYTES, TOKEN_HEADER, Team};
use workbench_cli::native::{NativeHost, WorkspaceFs};

/// The lock `add` and `revoke` hold while they change the team.
const LOCK: &str = ".team.lock";

/// What `workbench team` does.
pub enum Action {
    Add { name: String, admin: bool },
    Revoke { name: String },
    List,
}

pub fn run(store: &Path, action: Action) -> ExitCode {
    match pollster::block_on(act(store, action)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("workbench: team: {message}");
            ExitCode::from(2)
        }
    }
}

async fn act(store: &Path, action: Action) -> Result<(), String> {
    if matches!(action, Action::Add { .. }) {
        std::fs::create_dir_all(store).map_err(|e| format!("cannot create the store {}: {e}", store.display()))?;
    }
    let fs = WorkspaceFs::new(store).map_err(|e| format!("the store {}: {e}", store.display()))?;
    let host = NativeHost::new(fs, None);
    // One change of the team at a time (two `add`s at once would each write the file).
    if !matches!(action, Action::List) && !host.try_lock(LOCK).await.map_err(|e| e.to_string())? {
        return Err(format!("another `workbench team` is changing the team of {}; try again", store.display()));
    }
    let loaded = team::load(&host, ".").await.map_err(|e| format!("{}: {e}", store.display()))?;
    let mut members = loaded.unwrap_or_default();
    match action {
        Action::Add { name, admin } => {
            let mut random = [0u8; TOKEN_BYTES];
            getrandom::fill(&mut random).map_err(|e| format!("no randomness from the OS: {e}"))?;
            let token = team::token_from(&random);
            members.add(&name, &token, admin, host.now_ms()).map_err(|e| e.to_string())?;
            team::save(&host, ".", &members).await.map_err(|e| e.to_string())?;
            let role = if admin { "an admin" } else { "a member" };
            eprintln!(
                "workbench: team: added {name} as {role} of the team in {}. Their token, shown this once \
                 (agents send it in the `{TOKEN_HEADER}` header, or end their base URL with /t/<token>):",
                store.display()
            );
            println!("{token}");
        }
        Action::Revoke { name } => {
            members.revoke(&name, host.now_ms()).map_err(|e| e.to_string())?;
            team::save(&host, ".", &members).await.map_err(|e| e.to_string())?;
            eprintln!("workbench: team: revoked {name}'s token; their sessions stay theirs");
        }
        Action::List => print!("{}", list(&members, store)),
    }
    Ok(())
}

/// The members: name, admin, added, revoked (never a hash).
fn list(team: &Team, store: &Path) -> String {
    if team.members.is_empty() {
        return format!(
            "No team in {}: the proxy is in single-user mode. `workbench team add NAME --admin` starts one.\n",
            store.display()
        );
    }
    let mut out = format!("{:<32} {:<5} {:<17} {}\n", "name", "admin", "added (UTC)", "revoked (UTC)");
    for member in &team.members {
        let admin = if member.admin { "yes" } else { "no" };
        let revoked = member.revoked_at.map_or_else(|| "-".to_owned(), utc_minute);
        out.push_str(&format!("{:<32} {admin:<5} {:<17} {revoked}\n", member.name, utc_minute(member.created_at)));
    }
    out
}

/// `YYYY-MM-DD HH:MM` (UTC).
fn utc_minute(ms: u64) -> String {
    let minutes = ms / 60_000 % 1440;
    format!("{} {:02}:{:02}", utc_day(ms), minutes / 60, minutes % 60)
}
