//! `sbom [--generation N]`: the CycloneDX 1.6 bill of materials of a generation for the
//! profile (`crate::sbom`), as JSON on stdout — the document is JSON whether or not `--json`
//! is given.

use clap::Args;

use super::error::CliError;
use super::global::GlobalArgs;
use super::manage;
use crate::exit::{Code, Status};
use crate::generation::doc::GenerationDoc;

/// Arguments of `sbom`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  hermes-plugins sbom > bom.cdx.json\n  hermes-plugins sbom --generation 3 --profile work\n\nThe profile's plugins (source, commit or catalog pin, tree digest, licence) and the Python packages of the generation's environment they and core require (pkg:pypi purls, the sha256 of the file installed, licences from the installed metadata), with who depends on what. Validates as CycloneDX 1.6 (docs/release.md)."
)]
pub struct SbomArgs {
    /// The generation (default: the current one)
    #[arg(long, value_name = "N")]
    pub generation: Option<u64>,
}

/// Runs `sbom`.
pub fn run(args: &SbomArgs, global: &GlobalArgs) -> Result<Status, CliError> {
    let cx = manage::read_context(global)?;
    let number = match args.generation {
        Some(n) => n,
        None => crate::generation::current::current_number(&cx.layout).ok_or_else(|| {
            CliError::coded(
                Code::NoGeneration,
                format!(
                    "no generation is published under {} yet (enable a plugin first)",
                    cx.layout.pm.display()
                ),
            )
        })?,
    };
    let dir = cx.layout.generation(number);
    if !dir.is_dir() {
        let kept = crate::generation::current::numbers(&cx.layout)
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        return Err(CliError::coded(
            Code::NotFound,
            format!("there is no generation {number} (kept: {kept})"),
        ));
    }
    let doc = GenerationDoc::read(&dir).map_err(|e| CliError::environment(e.to_string()))?;
    let bom = crate::sbom::of_generation(&doc, &dir, &global.profile);
    let text = serde_json::to_string_pretty(&bom).unwrap_or_default() + "\n";
    global.printer.rendered(&text, true);
    Ok(Status::Ok)
}
