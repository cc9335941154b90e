//! `workbench replay`: recorded trajectories replayed through the context strategies, on every
//! core, measured and summed up in a table (and, on request, an HTML report and the workbench's
//! prompts as JSON lines). Output is deterministic: results are kept in input order.

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use context_workbench::Config;
use context_workbench::error::Error;
use context_workbench::import::{Trajectory, import};
use context_workbench::replay::{
    StrategyRun, Totals, aggregate, family_configs, format_table, prompt_json_line, replay_with, strategies_with,
};

use crate::count::files_under;
use crate::family;
use crate::folds;
use crate::lost;
use crate::report;
use crate::store::store_session;
use crate::sweep::{self, SweepPoint};

pub struct Args {
    pub paths: Vec<PathBuf>,
    pub strategy: String,
    pub window: Option<u32>,
    pub emit_prompts: Option<PathBuf>,
    pub report: Option<PathBuf>,
    pub store: Option<PathBuf>,
    pub verbose: bool,
    pub sweep: bool,
    pub folds: Option<usize>,
}

/// One trajectory replayed through every strategy.
pub struct Replayed {
    pub file: String,
    pub name: String,
    /// The agent family its format is written by ([`Format::family`](context_workbench::import::Format::family)).
    pub family: &'static str,
    pub calls: usize,
    pub runs: Vec<StrategyRun>,
}

/// An error message for stderr and the exit code that goes with it.
struct Failure(String, u8);

pub fn run(config: &Config, args: Args) -> ExitCode {
    match replay(config, args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message, code)) => {
            eprintln!("workbench: {message}");
            ExitCode::from(code)
        }
    }
}

fn replay(config: &Config, args: Args) -> Result<(), Failure> {
    let started = Instant::now();
    let window = args.window.unwrap_or(config.window) as usize;
    let names = strategies_with(&args.strategy, config, window)
        .map_err(|e| Failure(format!("--strategy: {}", plain(e)), 2))?
        .iter()
        .map(|s| s.name().to_owned())
        .collect::<Vec<_>>()
        .join(",");
    if args.emit_prompts.is_some() && !names.split(',').any(|n| n == "workbench") {
        return Err(Failure(
            "--emit-prompts writes the workbench strategy's prompts: add workbench to --strategy".into(),
            2,
        ));
    }
    if args.folds.is_some() && !names.split(',').any(|n| n == "raw") {
        return Err(Failure("--folds weighs costs against raw's: add raw to --strategy".into(), 2));
    }
    if let Some(missing) = args.paths.iter().find(|p| p.symlink_metadata().is_err()) {
        return Err(Failure(format!("{}: no such file or directory", missing.display()), 2));
    }

    let (loaded, files, skipped) = load(&args.paths, config);
    if loaded.is_empty() {
        let paths: Vec<String> = args.paths.iter().map(|p| p.display().to_string()).collect();
        return Err(Failure(format!("no trajectory found in {} ({skipped} files skipped)", paths.join(", ")), 1));
    }
    let emitter = match &args.emit_prompts {
        Some(path) if loaded.len() != 1 => {
            let n = loaded.len();
            return Err(Failure(
                format!("--emit-prompts {}: needs exactly one trajectory, found {n}", path.display()),
                2,
            ));
        }
        Some(path) => Some(Mutex::new(Emitter::create(path)?)),
        None => None,
    };

    if let Some(root) = &args.store {
        store_all(&loaded, root, window)?;
    }
    let sweep = if args.sweep || args.folds.is_some() { sweep_all(&loaded, window)? } else { Vec::new() };
    let replayed = replay_all(loaded, &names, window, config, emitter.as_ref())?;
    if let Some(emitter) = emitter {
        let path = args.emit_prompts.as_deref().unwrap_or(Path::new("-"));
        emitter.into_inner().unwrap_or_else(|e| e.into_inner()).finish(path)?;
    }

    let runs = replayed.iter().flat_map(|r| &r.runs);
    let totals = aggregate(runs);
    let mut out = format_table(&totals);
    if let Some(raw) = sweep.first().and(totals.iter().find(|(n, _)| n == "raw")) {
        out.push_str(&sweep::table(&sweep, config, window, &raw.1));
    }
    if let Some(k) = args.folds {
        let (folds, all) = folds::cross_validate(k, &replayed, &sweep);
        out.push_str(&folds::table(&folds, all));
    }
    out.push_str(&lost::table(&lost::by_cause(replayed.iter().flat_map(|r| &r.runs))));
    out.push_str(&family::sections(&replayed));
    if args.verbose {
        for r in &replayed {
            out.push_str(&format!("\n{} ({}, {} calls)\n", r.name, r.file, r.calls));
            out.push_str(&format_table(&aggregate(&r.runs)));
            out.push_str(&notes(&r.runs));
            out.push_str(&lost::listing(&r.runs));
            out.push_str(&family::lost_edits(&[r]));
        }
    }
    std::io::stdout().lock().write_all(out.as_bytes()).map_err(|e| Failure(format!("standard output: {e}"), 1))?;

    if let Some(dir) = &args.report {
        let threshold = config.compact_threshold;
        let html = report::html(&replayed, window, threshold, &sweep);
        let index = dir.join("index.html");
        std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&index, html))
            .map_err(|e| Failure(format!("--report {}: {e}", index.display()), 1))?;
        eprintln!("workbench: report written to {}", index.display());
    }
    let calls: usize = replayed.iter().map(|r| r.calls).sum();
    let n = replayed.len();
    eprintln!(
        "workbench: {n} {}, {calls} calls, from {files} {} ({skipped} skipped); strategies {names}, window {window}; \
         {:.1} s",
        if n == 1 { "trajectory" } else { "trajectories" },
        if files == 1 { "file" } else { "files" },
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The runs' notes, each once, after the strategies it concerns (none when it concerns all).
fn notes(runs: &[StrategyRun]) -> String {
    let mut notes: Vec<(&str, Vec<&str>)> = Vec::new();
    for run in runs {
        for note in &run.notes {
            match notes.iter_mut().find(|(n, _)| n == note) {
                Some((_, strategies)) => strategies.push(&run.strategy),
                None => notes.push((note, vec![&run.strategy])),
            }
        }
    }
    let mut out = String::new();
    for (note, strategies) in notes {
        if strategies.len() == runs.len() {
            out.push_str(&format!("  note: {note}\n"));
        } else {
            out.push_str(&format!("  note ({}): {note}\n", strategies.join(", ")));
        }
    }
    out
}

/// A trajectory, the file it came from, and the configuration the workbench replays it with
/// (told the lengths of the other runs of its family).
struct Loaded {
    file: String,
    trajectory: Trajectory,
    config: Config,
}

/// Every trajectory under `paths`, in walk order, with the number of files that held one and
/// the number skipped (each named on stderr with the reason).
fn load(paths: &[PathBuf], config: &Config) -> (Vec<Loaded>, usize, usize) {
    let mut files = Vec::new();
    let mut failed = false;
    for path in paths {
        files_under(path, &mut files, &mut failed);
    }
    let imported = parallel_map(&files, |_| 0, |file| read_trajectories(file), |_| {});
    let (mut loaded, mut held, mut skipped) = (Vec::new(), 0, 0);
    for (file, result) in files.iter().zip(imported) {
        match result {
            Ok(trajectories) => {
                held += 1;
                let file = file.display().to_string();
                loaded.extend(trajectories.into_iter().map(|trajectory| (file.clone(), trajectory)));
            }
            Err(reason) => {
                eprintln!("workbench: skipped {}: {reason}", file.display());
                skipped += 1;
            }
        }
    }
    let configs = family_configs(config, &loaded.iter().map(|(_, t)| t).collect::<Vec<_>>());
    let loaded =
        loaded.into_iter().zip(configs).map(|((file, trajectory), config)| Loaded { file, trajectory, config });
    (loaded.collect(), held, skipped)
}

/// The trajectories of one file, or why it is not a trajectory file.
fn read_trajectories(file: &Path) -> Result<Vec<Trajectory>, String> {
    let bytes = std::fs::read(file).map_err(|e| e.to_string())?;
    let text =
        String::from_utf8(bytes).map_err(|e| format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()))?;
    let name = file.display().to_string();
    match import(&name, &text) {
        Ok(trajectories) if trajectories.is_empty() => Err("no agent context in it".into()),
        Ok(trajectories) => Ok(trajectories),
        // The importer's message starts with the file name, which the note already gives.
        Err(Error::Trajectory { line, message, .. }) => Err(format!("line {line}: {message}")),
        Err(e) => Err(e.to_string()),
    }
}

/// Save the workbench session of every trajectory under `root` (created when missing), in
/// parallel; one that cannot be stored is named on stderr with the reason.
fn store_all(loaded: &[Loaded], root: &Path, window: usize) -> Result<(), Failure> {
    std::fs::create_dir_all(root).map_err(|e| Failure(format!("--store {}: {e}", root.display()), 1))?;
    let weight = |l: &Loaded| l.trajectory.messages.len() * l.trajectory.calls.len();
    let stored = parallel_map(loaded, weight, |l| store_session(&l.trajectory, root, &l.config, window), |_| {});
    let mut saved = 0;
    for (l, result) in loaded.iter().zip(stored) {
        match result {
            Ok(_) => saved += 1,
            Err(reason) => eprintln!("workbench: not stored {} ({}): {reason}", l.trajectory.name, l.file),
        }
    }
    eprintln!("workbench: {saved} sessions stored under {}", root.display());
    Ok(())
}

/// The workbench over every trajectory at each scale of [`sweep::SCALES`], in parallel.
fn sweep_all(loaded: &[Loaded], window: usize) -> Result<Vec<SweepPoint>, Failure> {
    let mut points = Vec::new();
    for scale in sweep::SCALES {
        let weight = |l: &Loaded| l.trajectory.messages.len() * l.trajectory.calls.len();
        let one = |l: &Loaded| {
            let config = sweep::scaled(&l.config, scale);
            let mut strategies = strategies_with("workbench", &config, window).map_err(plain)?;
            replay_with(&l.trajectory, &mut strategies, &config.prices, window, &mut |_, _, _| {}).map_err(plain)
        };
        let mut totals = Totals::default();
        let mut runs = Vec::with_capacity(loaded.len());
        for result in parallel_map(loaded, weight, one, |_| {}) {
            let run = result.map_err(|e| Failure(format!("--sweep: {e}"), 1))?.remove(0).totals;
            totals.add(&run);
            runs.push(run);
        }
        points.push(SweepPoint { scale, totals, runs });
    }
    Ok(points)
}

/// Replay every trajectory through the strategies `names`, in parallel, with a progress line
/// on a terminal. A trajectory the replay rejects is skipped with a note.
fn replay_all(
    loaded: Vec<Loaded>,
    names: &str,
    window: usize,
    config: &Config,
    emitter: Option<&Mutex<Emitter>>,
) -> Result<Vec<Replayed>, Failure> {
    let strategies = names.split(',').count();
    let total_calls: usize = loaded.iter().map(|l| l.trajectory.calls.len()).sum();
    let prompts = AtomicUsize::new(0);
    let terminal = std::io::stderr().is_terminal();
    let replay_one = |l: &Loaded| {
        let mut on_prompt = |strategy: &str, call: usize, prompt: &_| {
            prompts.fetch_add(1, Ordering::Relaxed);
            if let Some(emitter) = emitter.filter(|_| strategy == "workbench") {
                emitter.lock().unwrap_or_else(|e| e.into_inner()).line(&prompt_json_line(call, prompt));
            }
        };
        let mut strategies = strategies_with(names, &l.config, window).map_err(plain)?;
        replay_with(&l.trajectory, &mut strategies, &config.prices, window, &mut on_prompt).map_err(plain)
    };
    let progress = |done: usize| {
        if terminal {
            let calls = prompts.load(Ordering::Relaxed) / strategies;
            eprint!("\rreplaying: {done}/{} trajectories, {calls}/{total_calls} calls", loaded.len());
        }
    };
    let results =
        parallel_map(&loaded, |l| l.trajectory.messages.len() * l.trajectory.calls.len(), replay_one, progress);
    if terminal {
        eprint!("\r{:79}\r", "");
    }
    let mut replayed = Vec::with_capacity(loaded.len());
    for (l, result) in loaded.into_iter().zip(results) {
        match result {
            Ok(runs) => {
                let (family, calls) = (l.trajectory.format.family(), l.trajectory.calls.len());
                replayed.push(Replayed { file: l.file, name: l.trajectory.name, family, calls, runs })
            }
            Err(reason) => eprintln!("workbench: skipped {} ({}): {reason}", l.trajectory.name, l.file),
        }
    }
    if replayed.is_empty() {
        return Err(Failure("every trajectory was skipped".into(), 1));
    }
    Ok(replayed)
}

/// `f` over `items` on every core, heaviest first (by `weight`), results in input order.
/// `tick(done)` runs on the calling thread after each item and every 200 ms.
fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    weight: impl Fn(&T) -> usize,
    f: impl Fn(&T) -> R + Sync,
    mut tick: impl FnMut(usize),
) -> Vec<R> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(items.len()).max(1);
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(weight(&items[i])));
    let order = &order;
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let (tx, next, f) = (tx.clone(), &next, &f);
            scope.spawn(move || {
                while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if tx.send((i, f(&items[i]))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut out: Vec<Option<R>> = items.iter().map(|_| None).collect();
        let mut done = 0;
        loop {
            match rx.recv_timeout(Duration::from_millis(200)) {
                Ok((i, r)) => {
                    out[i] = Some(r);
                    done += 1;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            tick(done);
        }
        // A worker that panicked leaves a hole; the scope re-raises its panic on return.
        out.into_iter().flatten().collect()
    })
}

/// The JSON lines of `--emit-prompts`, with the first write error kept for the end.
struct Emitter {
    out: BufWriter<File>,
    error: Option<std::io::Error>,
}

impl Emitter {
    fn create(path: &Path) -> Result<Self, Failure> {
        let file = File::create(path).map_err(|e| Failure(format!("--emit-prompts {}: {e}", path.display()), 1))?;
        Ok(Emitter { out: BufWriter::new(file), error: None })
    }

    fn line(&mut self, line: &str) {
        if self.error.is_none()
            && let Err(e) = writeln!(self.out, "{line}")
        {
            self.error = Some(e);
        }
    }

    fn finish(mut self, path: &Path) -> Result<(), Failure> {
        match self.error.take().map_or_else(|| self.out.flush(), Err) {
            Ok(()) => Ok(()),
            Err(e) => Err(Failure(format!("--emit-prompts {}: {e}", path.display()), 1)),
        }
    }
}

/// An error's message without the `invalid input: ` prefix, for a note after a flag or path.
fn plain(e: Error) -> String {
    match e {
        Error::InvalidInput(message) => message,
        other => other.to_string(),
    }
}
