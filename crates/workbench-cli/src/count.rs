//! `workbench count`: exact token counts of files.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use context_workbench::tokens::{Encoding, TokenCounter};

/// Count every file under `paths`, printing `<tokens>\t<path>` lines and a total. Files that
/// cannot be read or are not UTF-8 are reported on stderr and make the exit code 1.
pub fn run(paths: &[PathBuf], encoding: Encoding) -> ExitCode {
    let counter = TokenCounter::new(encoding);
    let mut failed = false;
    let mut total = 0usize;
    let mut out = std::io::stdout().lock();
    for path in paths {
        let mut files = Vec::new();
        files_under(path, &mut files, &mut failed);
        for file in files {
            let bytes = if file == Path::new("-") { read_stdin() } else { std::fs::read(&file) };
            let text = match bytes.map(String::from_utf8) {
                Ok(Ok(text)) => text,
                Ok(Err(e)) => {
                    let at = e.utf8_error().valid_up_to();
                    eprintln!("workbench: {}: not valid UTF-8 (byte {at}); skipped", file.display());
                    failed = true;
                    continue;
                }
                Err(e) => {
                    eprintln!("workbench: {}: {e}", file.display());
                    failed = true;
                    continue;
                }
            };
            let n = counter.count(&text);
            total += n;
            if writeln!(out, "{n}\t{}", file.display()).is_err() {
                return ExitCode::FAILURE;
            }
        }
    }
    if writeln!(out, "{total}\ttotal").is_err() || failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}

fn read_stdin() -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::stdin().read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The files at `path`: itself, or everything below it in sorted order. Links to directories
/// are not followed: a walk must end, and stay where it was pointed.
pub fn files_under(path: &Path, out: &mut Vec<PathBuf>, failed: &mut bool) {
    if path == Path::new("-") || !path.is_dir() {
        out.push(path.to_path_buf());
        return;
    }
    let mut entries: Vec<PathBuf> = match std::fs::read_dir(path) {
        Ok(dir) => dir.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(e) => {
            eprintln!("workbench: {}: {e}", path.display());
            *failed = true;
            return;
        }
    };
    entries.sort();
    for entry in entries {
        if entry.is_symlink() && entry.is_dir() {
            eprintln!("workbench: {}: link to a directory, not followed", entry.display());
        } else {
            files_under(&entry, out, failed);
        }
    }
}
