//! The suite's third build: the proxy's machine itself, with no socket. Each request is the
//! engine's `Exchange`, whose effects are carried out here in order on one thread: the body is
//! what the case posted, the upstream is the scripted upstream's script called in process (it
//! still listens on 127.0.0.1 for the shells; the machine never connects to it), and the
//! sessions are one `Worker` on the case's folder (as an engine thread of the npm shell holds
//! several keys). What only the shells do (connections and their timers, threads, signals) is
//! tested through them; every decision of a request is tested here a third time.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::mpsc::{Sender, channel};
use std::thread::JoinHandle;

use context_workbench::proxy::args::{ProxyArgs, Shell, StoreLocation, config_from_file};
use context_workbench::proxy::gateway::passes_to_upstream;
use context_workbench::proxy::{
    Cause, ClientRequest, Effect, End, Event, Exchange, Failure, Gateway, RequestHead, SessionTable, Upstreams, Worker,
};
use pollster::block_on;
use workbench_cli::native::{NativeHost, StoreFs, WorkspaceFs};

use super::{Received, Reply, sse_chunks};

/// A request as a case sends it.
struct Request {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// What the agent got: the status, the content type and the body.
pub type Answer = (u16, String, String);

enum Job {
    Request(Request, Sender<Answer>),
    /// Save every session, write the closing lines, and end.
    Stop(Sender<()>),
}

/// Each running machine's jobs, by the number in its address (`machine://N`); taken out when it
/// stops or is killed, so that its thread ends.
static MACHINES: Mutex<Vec<Option<Sender<Job>>>> = Mutex::new(Vec::new());

/// A machine running on its own thread.
pub struct Machine {
    number: usize,
    thread: Option<JoinHandle<()>>,
}

impl Machine {
    /// Start on `dir` with the proxy's flags, as `workbench proxy` would in that directory; its
    /// lines go to `log`. Returns it and its address.
    pub fn start(dir: &Path, log: PathBuf, args: &[&str]) -> (Machine, String) {
        let args = ProxyArgs::parse(args.iter().map(|a| (*a).to_owned())).expect("the flags");
        let (jobs, received) = channel();
        let (started_tx, started) = channel();
        let number = {
            let mut machines = MACHINES.lock().unwrap();
            machines.push(Some(jobs));
            machines.len() - 1
        };
        let url = format!("machine://{number}");
        let (dir, address) = (dir.to_path_buf(), url.clone());
        let thread = std::thread::spawn(move || {
            let mut state = match State::start(&dir, log, &args, &address) {
                Ok(state) => state,
                Err(message) => return started_tx.send(Err(message)).unwrap(),
            };
            started_tx.send(Ok(())).unwrap();
            while let Ok(job) = received.recv() {
                match job {
                    Job::Request(request, answer) => {
                        let _ = answer.send(state.serve(request));
                    }
                    Job::Stop(done) => {
                        state.stop();
                        let _ = done.send(());
                        return;
                    }
                }
            }
            // Killed: the sessions are dropped unsaved, and the store's lock with them.
        });
        let machine = Machine { number, thread: Some(thread) };
        started.recv().unwrap().unwrap_or_else(|message| panic!("the machine did not start: {message}"));
        (machine, url)
    }

    /// Save every session and end, as a stop signal does.
    pub fn stop(mut self) {
        let (done, stopped) = channel();
        if let Some(jobs) = self.take_jobs() {
            jobs.send(Job::Stop(done)).unwrap();
            stopped.recv().unwrap();
        }
        self.join();
    }

    fn take_jobs(&self) -> Option<Sender<Job>> {
        MACHINES.lock().unwrap()[self.number].take()
    }

    fn join(&mut self) {
        if let Some(thread) = self.thread.take() {
            thread.join().expect("the machine's thread");
        }
    }
}

impl Drop for Machine {
    /// Killed: nothing is saved.
    fn drop(&mut self) {
        drop(self.take_jobs());
        self.join();
    }
}

/// `method url` to the machine `url` names, when it names one.
pub fn call(method: &str, url: &str, body: &[u8], headers: &[(&str, &str)]) -> Option<Answer> {
    let address = url.strip_prefix("machine://")?;
    let (number, target) = address.split_once('/').unwrap_or((address, ""));
    let jobs = MACHINES.lock().unwrap()[number.parse::<usize>().ok()?].clone().expect("the machine runs");
    // What an HTTP client adds, unless the case sends its own.
    let mut sent: Vec<(String, String)> = headers.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect();
    let given = |name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    for (name, value) in [("host", "127.0.0.1:8787".to_owned()), ("content-length", body.len().to_string())] {
        if !given(name) {
            sent.push((name.to_owned(), value));
        }
    }
    let request =
        Request { method: method.to_owned(), target: format!("/{target}"), headers: sent, body: body.to_vec() };
    let (answer, answered) = channel();
    jobs.send(Job::Request(request, answer)).ok()?;
    answered.recv().ok()
}

/// A machine's state, on its thread.
struct State {
    gateway: Gateway,
    worker: Worker<NativeHost>,
    /// The keys, as the shells keep them (a closed key's sessions are saved).
    table: SessionTable<()>,
    log: std::fs::File,
}

impl State {
    fn start(dir: &Path, log: PathBuf, args: &ProxyArgs, url: &str) -> Result<State, String> {
        let config = match &args.config {
            Some(file) => config_from_file(file, &std::fs::read_to_string(dir.join(file)).map_err(|e| e.to_string())?)?,
            None => context_workbench::Config::default(),
        };
        let store = dir.join(&args.store);
        std::fs::create_dir_all(&store).map_err(|e| e.to_string())?;
        let real = |path: &Path| path.canonicalize().unwrap().to_str().unwrap().to_owned();
        let location = StoreLocation::new(&real(dir), &real(&store))?;
        let config = location.session_config(config, args.window).map_err(|e| e.to_string())?;
        let gateway = Gateway::new(&config, Upstreams::from_flags(&args.upstream)?, Shell::Native);
        let disk = WorkspaceFs::new(&location.workspace).map_err(|e| e.to_string())?;
        let host = NativeHost::new(StoreFs::Folder(disk), None);
        let worker = Worker::new(host, config.clone(), false, Default::default());
        let recovered = block_on(worker.recover(Shell::Native.proxy()))?;
        let log = std::fs::File::create(log).map_err(|e| e.to_string())?;
        let table = SessionTable::new(config.proxy.max_sessions as usize);
        let mut state = State { gateway, worker, table, log };
        state.line(&state.gateway.start_line(url, &real(&store)));
        if let Some(line) = recovered {
            state.line(&line);
        }
        Ok(state)
    }

    fn line(&mut self, line: &str) {
        writeln!(self.log, "{line}").unwrap();
    }

    fn serve(&mut self, request: Request) -> Answer {
        let head = RequestHead { method: request.method, target: request.target, headers: request.headers };
        let (exchange, effects) = Exchange::begin(&self.gateway, head, false);
        let mut call = Call::new(self, exchange, request.body);
        call.drive(effects);
        if let Some((pieces, end)) = call.reply.take()
            && !call.exchange.is_over()
        {
            call.relay(pieces, end);
        }
        (call.status, call.content_type, String::from_utf8_lossy(&call.given).into_owned())
    }

    fn stop(&mut self) {
        let unsaved = block_on(self.worker.close_all());
        let mut lines = vec![self.gateway.stopping_line()];
        lines.extend(unsaved.iter().map(|failure| self.gateway.unsaved_line(failure)));
        for line in lines {
            self.line(&line);
        }
    }
}

/// The scripted upstream's reply to a request, as the machine relays it.
struct Upstreamed {
    status: u16,
    content_type: String,
    length: Option<u64>,
    pieces: Vec<Vec<u8>>,
    end: End,
}

/// The upstream behind `url` answers, in process; none listens there: it cannot be reached.
fn send_upstream(
    url: &str,
    method: &str,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
) -> Result<Upstreamed, Failure> {
    let received = |path: &str| Received { method: method.to_owned(), path: path.to_owned(), headers, body };
    let reply = super::answer_in_process(url, received).ok_or(Failure::Unreachable(Cause::CannotConnect))?;
    let events = |events: &[(String, serde_json::Value)], cut_after: Option<usize>| {
        let mut pieces: Vec<Vec<u8>> = sse_chunks(events).into_iter().map(String::into_bytes).collect();
        let end = match cut_after {
            Some(n) => {
                pieces.truncate(n);
                End::BrokeOff
            }
            None => End::Done,
        };
        Ok(Upstreamed { status: 200, content_type: "text/event-stream".into(), length: None, pieces, end })
    };
    match reply {
        Reply::Json { status, body } => {
            let length = Some(body.len() as u64);
            let pieces = vec![body.into_bytes()];
            Ok(Upstreamed { status, content_type: "application/json".into(), length, pieces, end: End::Done })
        }
        Reply::Events { events: list, cut_after } => events(&list, cut_after),
        Reply::Slow { events: list, .. } => events(&list, None),
        Reply::Silent => Err(Failure::Timeout),
    }
}

/// One request and what its effects gathered.
struct Call<'a> {
    state: &'a mut State,
    exchange: Exchange,
    body: Vec<u8>,
    client: Option<Box<ClientRequest>>,
    prepared: Option<String>,
    /// The upstream's reply, until it is relayed.
    reply: Option<(Vec<Vec<u8>>, End)>,
    /// Its content type, once the upstream answered.
    upstream_type: String,
    record: Option<context_workbench::proxy::CallRecord>,
    /// What the agent has: the head, and the body given so far.
    status: u16,
    content_type: String,
    given: Vec<u8>,
}

impl<'a> Call<'a> {
    fn new(state: &'a mut State, exchange: Exchange, body: Vec<u8>) -> Call<'a> {
        Call {
            state,
            exchange,
            body,
            client: None,
            prepared: None,
            reply: None,
            upstream_type: String::new(),
            record: None,
            status: 0,
            content_type: String::new(),
            given: Vec::new(),
        }
    }

    /// Carry out `effects` and those of the events they lead to.
    fn drive(&mut self, mut effects: Vec<Effect>) {
        loop {
            let mut then = None;
            for effect in effects {
                then = self.act(effect).or(then);
            }
            let Some(event) = then else { return };
            effects = self.exchange.step(&self.state.gateway, event);
        }
    }

    /// The reply's pieces through the exchange, then its end.
    fn relay(&mut self, pieces: Vec<Vec<u8>>, end: End) {
        for piece in pieces {
            for effect in self.exchange.relay(&self.state.gateway, &piece) {
                if effect == Effect::Give {
                    self.given.extend_from_slice(&piece);
                } else {
                    self.act(effect);
                }
            }
        }
        let effects = self.exchange.step(&self.state.gateway, Event::Ended { end });
        self.drive(effects);
    }

    fn act(&mut self, effect: Effect) -> Option<Event> {
        let state = &mut *self.state;
        match effect {
            Effect::ReadBody { limit, .. } => Some(match self.body.len() <= limit {
                true => Event::BodyRead { bytes: self.body.len() },
                false => Event::BodyRefused,
            }),
            Effect::Read { .. } => {
                let (head, route) = (self.exchange.head(), self.exchange.route());
                let decision = state.gateway.read_as(head, route, &self.body, self.exchange.person());
                let (verdict, client) = decision.into_parts();
                self.client = client;
                Some(Event::Read { verdict })
            }
            Effect::Log { line } => {
                state.line(&line);
                None
            }
            Effect::Answer { status, body, .. } => {
                (self.status, self.content_type, self.given) = (status, "application/json".into(), body.into_bytes());
                None
            }
            Effect::TakeTurn { key } => {
                let (_, evicted) = state.table.touch(&key, || (), |_, _| false);
                let notes = evicted.map(|(key, ())| block_on(state.worker.close(&key.name())));
                Some(Event::TurnTaken { notes: notes.unwrap_or_default() })
            }
            Effect::Prepare { key, notes, opening } => {
                let Some(mut client) = self.client.take() else {
                    return Some(Event::SessionGone { why: "it was not read".into() });
                };
                client.opening = opening;
                let prepared = block_on(state.worker.prepare(&key, &client, notes));
                block_on(state.worker.save_behind());
                self.prepared = prepared.body;
                Some(Event::Prepared { rewritten: self.prepared.is_some() })
            }
            Effect::CountSideCall { agent_session, record } => {
                if let Some((key, ())) = state.table.latest_of(&agent_session) {
                    block_on(state.worker.record_side_call(&key.name(), *record));
                }
                None
            }
            Effect::Send { url, prepared, plain } => {
                let body = match prepared {
                    true => self.prepared.take().unwrap_or_default().into_bytes(),
                    false => self.body.clone(),
                };
                let head = self.exchange.head();
                let crossing = head.headers.iter().filter(|(name, _)| passes_to_upstream(name, plain));
                let headers = crossing.filter(|(name, _)| !name.eq_ignore_ascii_case("content-length")).cloned();
                Some(match send_upstream(&url, &head.method, headers.collect(), body) {
                    Ok(reply) => {
                        let (status, content_length) = (reply.status, reply.length);
                        let content_type = Some(reply.content_type.clone());
                        self.upstream_type = reply.content_type;
                        self.reply = Some((reply.pieces, reply.end));
                        Event::Answered { status, content_type, content_length }
                    }
                    Err(failure) => Event::Failed { failure },
                })
            }
            Effect::ReadReply { limit } => {
                let (pieces, end) = self.reply.take()?;
                let body = pieces.concat();
                Some(match end {
                    End::Done if body.len() <= limit => {
                        Event::ReplyRead { body: String::from_utf8_lossy(&body).into_owned() }
                    }
                    End::Done => Event::Ended { end: End::BrokeOff },
                    end => Event::Ended { end },
                })
            }
            Effect::Respond { status } => {
                (self.status, self.content_type) = (status, self.upstream_type.clone());
                None
            }
            Effect::Give => None,
            Effect::GiveText { text } => {
                self.given.extend_from_slice(text.as_bytes());
                None
            }
            Effect::Finish { status, outcome } => {
                let key = self.exchange.key()?.name();
                self.record = Some(block_on(state.worker.finish(&key, status, *outcome)));
                None
            }
            Effect::AwaitRecord => Some(Event::Recorded { record: self.record.take().map(Box::new) }),
            Effect::EndReply | Effect::Close | Effect::Called | Effect::Done => None,
        }
    }
}
