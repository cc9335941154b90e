//! `workbench`: the command-line face of Context Workbench, a thin shell over the library.

mod cli;
mod compress;
mod connections;
mod count;
mod dump;
mod family;
mod folds;
mod llm_check;
mod lost;
mod prompt;
mod proxy;
mod replay;
mod report;
mod serve;
mod signal;
mod stats;
mod store;
mod sweep;
mod team;
mod team_file;

fn main() -> std::process::ExitCode {
    cli::main()
}
