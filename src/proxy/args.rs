//! The proxy's command line and start-up, read the same way by `workbench proxy` and the npm
//! package's `context-workbench proxy`: the flags and their usage text, the config file's
//! format, where the trace store lives and the engine's configuration for the sessions. The
//! shells do the file-system part (create the store, resolve links) and pass the results here.

use lexopt::prelude::*;

use crate::config::Config;
use crate::error::Result;

/// Which shell runs the proxy: the program its help, log lines and errors name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    /// `workbench proxy`, the CLI.
    Native,
    /// `context-workbench proxy`, the npm package's bin (and the VS Code extension's proxy).
    Npm,
}

impl Shell {
    /// The command a user types: `workbench`, `context-workbench`.
    pub fn program(self) -> &'static str {
        match self {
            Shell::Native => "workbench",
            Shell::Npm => "context-workbench",
        }
    }

    /// What the proxy's log lines and its own errors start with (`workbench proxy: …`).
    pub fn proxy(self) -> &'static str {
        match self {
            Shell::Native => "workbench proxy",
            Shell::Npm => "context-workbench proxy",
        }
    }
}

/// Why a server (the proxy, `workbench serve`) cannot listen on `address`: `in_use` when another
/// process has it, else the platform's `detail`.
pub fn cannot_listen(address: &str, in_use: bool, detail: &str) -> String {
    let why = if in_use { "the address is in use" } else { detail };
    format!("cannot listen on {address}: {why} (--port 0 picks a free port)")
}

/// What `--help` prints in `shell`: the database store, `--listen` and the LLM flags only where
/// they are taken (the native CLI).
pub fn usage(shell: Shell) -> String {
    let native = shell == Shell::Native;
    let (store, store_flag, own_flags) = if native {
        ("DIR|URL", NATIVE_STORE_FLAG, " [--listen ADDR:PORT] [--llm-url URL] [--llm-model NAME]")
    } else {
        ("DIR", STORE_FLAG, "")
    };
    let own = if native { NATIVE_FLAGS } else { "" };
    format!(
        "usage: {} [--port N] [--upstream URL | NAME=URL]... [--store {store}] [--window N]\n       \
         [--config FILE] [--otlp URL]{own_flags}\n\n{ABOUT}{UPSTREAM_FLAGS}{store_flag}{OTHER_FLAGS}{own}{USAGE_TAIL}",
        shell.proxy()
    )
}

// Each flag's lines start with two spaces and end with a newline; a string starts on its quote's
// line, since a `\` line continuation would eat the spaces.
const ABOUT: &str = "Puts the Context Workbench engine in front of an agent that speaks Anthropic Messages, OpenAI
Chat Completions, OpenAI Responses or Gemini (Claude Code, Codex, Gemini CLI, Cline, OpenCode,
...): listens on 127.0.0.1, sends the engine's prompt upstream and saves each conversation in the
trace store.

";

const UPSTREAM_FLAGS: &str = "  --port N            the port on 127.0.0.1 (default 8787; 0 picks a free one)
  --upstream URL      where requests go: a URL for every API, or NAME=URL for one of
                      anthropic (default https://api.anthropic.com), openai
                      (https://api.openai.com; Chat Completions, Responses) and gemini
                      (https://generativelanguage.googleapis.com); repeatable. Each request
                      goes by its path to its API's upstream
";

const STORE_FLAG: &str = "  --store DIR         the trace root every session is saved under (default .trace)
";

/// The native CLI's store: a folder or a PostgreSQL database.
const NATIVE_STORE_FLAG: &str =
    "  --store DIR|URL     the trace root every session is saved under (default .trace), or a
                      PostgreSQL database, postgres://USER@HOST/DB (the password from
                      PGPASSWORD or ~/.pgpass; docs/team.md)
";

const OTHER_FLAGS: &str =
    "  --window N          the model's context window in tokens (default: the config's window, 200000)
  --config FILE       the engine's configuration, TOML (or JSON when it ends in .json)
  --otlp URL          export one OpenTelemetry span per call to this OTLP/HTTP collector
                      (http://localhost:4318; overrides the config's proxy.otlp)
";

/// Whether a `--store` names a PostgreSQL database (`postgres://…`) rather than a folder.
pub fn is_database_store(store: &str) -> bool {
    store.starts_with("postgres://") || store.starts_with("postgresql://")
}

/// The native CLI's own flags: `--listen` (the npm package's proxy listens on 127.0.0.1 only)
/// and the LLM's (it has the embedded compactor only).
const NATIVE_FLAGS: &str =
    "  --listen ADDR:PORT  listen there instead of 127.0.0.1 (0.0.0.0:8787, say); an address other
                      than loopback needs team mode: a member in the store's team.json
                      (`workbench team add NAME --admin --store DIR`)
  --llm-url URL       an OpenAI-compatible endpoint for the compactor (the key from
  --llm-model NAME    WORKBENCH_LLM_API_KEY); without one the embedded compactor writes blocks
";

const USAGE_TAIL: &str = "  -h, --help          this text

Ctrl-C, SIGTERM or SIGHUP (the terminal closed): no new requests; those in flight get
proxy.shutdown_grace_ms to finish, then are cut short with an error in the provider's shape;
every session is saved. A second signal cuts at once.";

/// The proxy's flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyArgs {
    pub port: u16,
    /// `--listen ADDR:PORT`, over `--port` (the shell reads the address).
    pub listen: Option<String>,
    /// `URL` (every API) or `NAME=URL` (`anthropic`, `openai`, `gemini`), in order.
    pub upstream: Vec<String>,
    pub store: String,
    pub window: Option<u32>,
    pub config: Option<String>,
    /// The OTLP/HTTP collector (`--otlp`), over the config's `proxy.otlp`.
    pub otlp: Option<String>,
    pub llm_url: Option<String>,
    pub llm_model: Option<String>,
    pub help: bool,
}

impl Default for ProxyArgs {
    fn default() -> Self {
        ProxyArgs {
            port: 8787,
            listen: None,
            upstream: Vec::new(),
            store: ".trace".into(),
            window: None,
            config: None,
            otlp: None,
            llm_url: None,
            llm_model: None,
            help: false,
        }
    }
}

impl ProxyArgs {
    /// The flags after `shell`'s `proxy`, as it takes them ([`ProxyArgs::check_for`]); a flag
    /// it cannot read says where the list is.
    pub fn parse_for<I: IntoIterator<Item = String>>(shell: Shell, args: I) -> std::result::Result<ProxyArgs, String> {
        let parsed =
            ProxyArgs::parse(args).map_err(|why| format!("{why} ({} --help lists the flags)", shell.proxy()))?;
        parsed.check_for(shell)
    }

    /// Read the flags after `proxy`; the error says which flag and why.
    pub fn parse<I: IntoIterator<Item = String>>(args: I) -> std::result::Result<ProxyArgs, String> {
        let mut parsed = ProxyArgs::default();
        let mut parser = lexopt::Parser::from_args(args);
        while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
            match arg {
                Long("port") => parsed.port = number("--port", &value(&mut parser)?, 0, u16::MAX.into())?,
                Long("listen") => parsed.listen = Some(value(&mut parser)?),
                Long("upstream") => parsed.upstream.push(value(&mut parser)?),
                Long("store") => parsed.store = value(&mut parser)?,
                Long("window") => parsed.window = Some(number("--window", &value(&mut parser)?, 1, u32::MAX.into())?),
                Long("config") => parsed.config = Some(value(&mut parser)?),
                Long("otlp") => parsed.otlp = Some(value(&mut parser)?),
                Long("llm-url") => parsed.llm_url = Some(value(&mut parser)?),
                Long("llm-model") => parsed.llm_model = Some(value(&mut parser)?),
                Short('h') | Long("help") => parsed.help = true,
                other => return Err(other.unexpected().to_string()),
            }
        }
        Ok(parsed)
    }

    /// The flags as `shell` takes them: the npm package's proxy keeps its sessions in a folder,
    /// and listens on 127.0.0.1 only.
    pub fn check_for(self, shell: Shell) -> std::result::Result<ProxyArgs, String> {
        if shell == Shell::Npm && is_database_store(&self.store) {
            return Err(format!(
                "--store: {} keeps its sessions in a folder; a PostgreSQL store needs the native `workbench proxy`",
                shell.proxy()
            ));
        }
        if shell == Shell::Npm && (self.llm_url.is_some() || self.llm_model.is_some()) {
            return Err(format!(
                "--llm-url and --llm-model are for the native `workbench proxy` only: in {} the embedded compactor writes the blocks",
                shell.proxy()
            ));
        }
        if shell == Shell::Npm && self.listen.is_some() {
            return Err(format!(
                "--listen: {} listens on 127.0.0.1 only (team mode, and listening elsewhere, are `workbench proxy`'s)",
                shell.proxy()
            ));
        }
        Ok(self)
    }
}

/// The value of the flag just read.
fn value(parser: &mut lexopt::Parser) -> std::result::Result<String, String> {
    let value = parser.value().map_err(|e| e.to_string())?;
    value.into_string().map_err(|v| format!("`{}` is not UTF-8", v.to_string_lossy()))
}

/// A whole number from `min` to `max`.
fn number<T: TryFrom<u64>>(flag: &str, text: &str, min: u64, max: u64) -> std::result::Result<T, String> {
    let n = text.parse::<u64>().ok().filter(|n| (min..=max).contains(n)).and_then(|n| T::try_from(n).ok());
    n.ok_or_else(|| format!("{flag} `{text}`: expected a whole number from {min} to {max}"))
}

/// A config file's text: JSON when its name ends in `.json`, TOML otherwise. Errors start with
/// the file's name and name the offending key.
pub fn config_from_file(name: &str, text: &str) -> std::result::Result<Config, String> {
    let parsed = if name.ends_with(".json") {
        Config::from_json(text)
    } else {
        let value: toml::Value = toml::from_str(text).map_err(|e| format!("{name}: {e}"))?;
        Config::from_value(serde_json::to_value(value).map_err(|e| format!("{name}: {e}"))?)
    };
    parsed.map_err(|e| format!("{name}: {e}"))
}

/// Where the sessions are saved: the engine's workspace (an absolute directory) and the trace
/// root in it (workspace-relative, `/`-separated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreLocation {
    pub workspace: String,
    pub root: String,
}

impl StoreLocation {
    /// From the directory the proxy runs in and the store, both absolute with links resolved
    /// (the shell creates the store first): the working directory is the workspace when the
    /// store lies inside it, else the store's parent is.
    pub fn new(cwd: &str, store: &str) -> std::result::Result<StoreLocation, String> {
        let (cwd, store) = (cwd.replace('\\', "/"), store.replace('\\', "/"));
        let cwd = cwd.trim_end_matches('/');
        let inside = store.strip_prefix(cwd).and_then(|rest| rest.strip_prefix('/')).filter(|r| !r.is_empty());
        if let Some(inside) = inside {
            return Ok(StoreLocation { workspace: cwd.to_owned(), root: inside.trim_end_matches('/').to_owned() });
        }
        let store = store.trim_end_matches('/');
        match store.rsplit_once('/') {
            Some((parent, name)) if !name.is_empty() => {
                let parent =
                    if parent.is_empty() || parent.ends_with(':') { format!("{parent}/") } else { parent.into() };
                Ok(StoreLocation { workspace: parent, root: name.to_owned() })
            }
            _ => Err("--store must not be the file system's root".into()),
        }
    }

    /// Why the store at `absolute` could not be created (named by that path, with no flag: it
    /// may be the default one), with the platform's `detail`.
    pub fn cannot_create(absolute: &str, detail: &str) -> String {
        format!("cannot create the trace store {absolute}: {detail}")
    }

    /// The engine's configuration for the proxy's sessions: `config` with the window of
    /// `--window`, this trace root, and originals named by absolute path (agents' file tools,
    /// Claude Code's Read, want one) unless the config names a base.
    pub fn session_config(&self, mut config: Config, window: Option<u32>) -> Result<Config> {
        if let Some(window) = window {
            config.window = window;
        }
        config.store.root = self.root.clone();
        if config.store.originals_base.is_empty() {
            config.store.originals_base = self.workspace.clone();
        }
        config.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> std::result::Result<ProxyArgs, String> {
        ProxyArgs::parse(args.iter().map(|a| a.to_string()))
    }

    #[test]
    fn flags_in_both_spellings() {
        let args = parse(&["--port=0", "--upstream", "openai=http://h/v1", "--upstream=http://a", "--window", "16000"]);
        let args = args.unwrap();
        assert_eq!((args.port, args.window), (0, Some(16_000)));
        assert_eq!(args.upstream, ["openai=http://h/v1", "http://a"]);
        assert_eq!(args.store, ".trace");
        assert!(parse(&["-h"]).unwrap().help);
        let database = parse(&["--store", "postgres://me@db/wb"]).unwrap();
        assert!(database.clone().check_for(Shell::Native).is_ok());
        let refused = database.check_for(Shell::Npm).unwrap_err();
        assert!(refused.contains("keeps its sessions in a folder"), "{refused}");
        assert!(usage(Shell::Native).contains("--store DIR|URL") && !usage(Shell::Npm).contains("postgres"));
    }

    #[test]
    fn bad_flags_say_which_and_why() {
        assert_eq!(parse(&["--port", "x"]).unwrap_err(), "--port `x`: expected a whole number from 0 to 65535");
        assert_eq!(parse(&["--port", "70000"]).unwrap_err(), "--port `70000`: expected a whole number from 0 to 65535");
        assert_eq!(
            parse(&["--window", "0"]).unwrap_err(),
            "--window `0`: expected a whole number from 1 to 4294967295"
        );
        assert_eq!(parse(&["--bogus"]).unwrap_err(), "invalid option '--bogus'");
        assert_eq!(parse(&["--store"]).unwrap_err(), "missing argument for option '--store'");
        assert_eq!(parse(&["extra"]).unwrap_err(), "unexpected argument \"extra\"");
    }

    #[test]
    fn config_files_in_toml_or_json_with_the_key_named() {
        let config = config_from_file("w.toml", "window = 32000\n[proxy]\nmax_sessions = 3\n").unwrap();
        assert_eq!((config.window, config.proxy.max_sessions), (32_000, 3));
        assert_eq!(config_from_file("w.json", r#"{"window": 9}"#).unwrap().window, 9);
        let error = config_from_file("w.toml", "windw = 1").unwrap_err();
        assert!(error.starts_with("w.toml: invalid config: at `windw`: unknown field"), "{error}");
    }

    #[test]
    fn the_store_inside_the_working_directory_or_beside_it() {
        let inside = StoreLocation::new("/home/me/project", "/home/me/project/.trace").unwrap();
        assert_eq!((inside.workspace.as_str(), inside.root.as_str()), ("/home/me/project", ".trace"));
        let nested = StoreLocation::new("/p", "/p/a/b").unwrap();
        assert_eq!(nested.root, "a/b");
        let outside = StoreLocation::new("/home/me/project", "/var/traces").unwrap();
        assert_eq!((outside.workspace.as_str(), outside.root.as_str()), ("/var", "traces"));
        let sibling = StoreLocation::new("/p", "/p2/t").unwrap();
        assert_eq!(sibling.workspace, "/p2");
        assert_eq!(StoreLocation::new("/p", "/t").unwrap().workspace, "/");
        assert!(StoreLocation::new("/p", "/").is_err());
        assert_eq!(StoreLocation::new("/p", "/p").unwrap().workspace, "/");
    }
}
