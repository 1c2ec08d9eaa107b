//! `hermes-plugins man`: manual pages (roff) generated from the command-line definition, so
//! they never disagree with `--help`.

use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory};

use super::Cli;
use super::error::CliError;
use super::global::GlobalArgs;
use crate::exit::Status;

/// Arguments of `man`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hermes-plugins man catalog review | man -l -\n  hermes-plugins man --out ~/.local/share/man/man1"
)]
pub struct ManArgs {
    /// The command whose page to print (e.g. `catalog review`; default: the tool itself)
    pub command: Vec<String>,
    /// Write every page (`hermes-plugins.1`, `hermes-plugins-<command>.1`, …) into DIR instead
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub out: Option<PathBuf>,
}

/// Prints one page on stdout, or writes them all into `--out`.
pub fn run(args: &ManArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let mut root = Cli::command().name("hermes-plugins");
    root.build();
    if let Some(dir) = &args.out {
        let written = write_all(&root, dir)?;
        global.printer.note(&format!(
            "wrote {written} manual pages to {}",
            dir.display()
        ));
        return Ok(Status::Ok);
    }
    let mut command = root;
    let mut name = String::from("hermes-plugins");
    for word in &args.command {
        let found = command
            .get_subcommands()
            .find(|c| c.get_name() == word)
            .cloned();
        command = found.ok_or_else(|| {
            CliError::usage(format!(
                "`{name} {}` is not a command",
                crate::text::escape(word)
            ))
        })?;
        name = format!("{name}-{word}");
    }
    let mut page = Vec::new();
    render(command, &name, &mut page)?;
    // Our own text, from the command-line definition: nothing untrusted to escape.
    global
        .printer
        .rendered(&String::from_utf8_lossy(&page), true);
    Ok(Status::Ok)
}

/// Renders `command` as the page `name`(1).
fn render(command: clap::Command, name: &str, out: &mut Vec<u8>) -> Result<(), CliError> {
    let command = command.name(name.to_string());
    let mut roff = Vec::new();
    clap_mangen::Man::new(command)
        .title(name.to_uppercase())
        .section("1")
        .source(format!("hermes-plugins {}", env!("CARGO_PKG_VERSION")))
        .manual("hermes-plugins manual")
        .render(&mut roff)
        .map_err(|e| CliError::environment(format!("cannot render the page {name}(1): {e}")))?;
    out.extend_from_slice(ascii_roff(&String::from_utf8_lossy(&roff)).as_bytes());
    Ok(())
}

/// `text` with every non-ASCII character as a roff `\[uXXXX]` escape: troff without a
/// preprocessor reads bytes, not UTF-8 (an em dash in a help text became three warnings).
fn ascii_roff(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.push_str(&format!("\\[u{:04X}]", u32::from(c)));
        }
    }
    out
}

/// Writes the page of `command` and of every subcommand below it into `dir`; returns how many.
fn write_all(command: &clap::Command, dir: &Path) -> Result<usize, CliError> {
    std::fs::create_dir_all(dir).map_err(|e| {
        CliError::coded(
            crate::exit::Code::Io,
            format!("cannot create {}: {e}", dir.display()),
        )
    })?;
    let mut pages = vec![(command.get_name().to_string(), command.clone())];
    let mut written = 0;
    while let Some((name, command)) = pages.pop() {
        for sub in command.get_subcommands().filter(|c| c.get_name() != "help") {
            pages.push((format!("{name}-{}", sub.get_name()), sub.clone()));
        }
        let mut page = Vec::new();
        render(command, &name, &mut page)?;
        let path = dir.join(format!("{name}.1"));
        crate::files::write_atomically(&path, &page).map_err(|e| {
            CliError::coded(
                crate::exit::Code::Io,
                format!("cannot write {}: {e}", path.display()),
            )
        })?;
        written += 1;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_ascii_becomes_roff_escapes() {
        assert_eq!(ascii_roff("a — b é"), "a \\[u2014] b \\[u00E9]");
    }
}
