//! `sbom`: the CycloneDX 1.6 document of the demo generation names the demo plugin and
//! `pkg:pypi/hermes-demo-forecast@1.0.0` with the sha256 of the wheel installed, and
//! validates with cyclonedx-python-lib's strict validator (the real party: CI installs it
//! from PyPI and sets `HERMES_PLUGINS_CYCLONEDX_PYTHON`).

use crate::common;

use common::world::*;
use serde_json::Value;

/// The strict validator's verdict on `path` (`None` when it is valid), or why it could not
/// run; skipped (returns `Some("skipped")`) without the validator unless CI requires it.
fn strictly_valid(path: &std::path::Path) -> Result<(), String> {
    let python = match std::env::var("HERMES_PLUGINS_CYCLONEDX_PYTHON") {
        Ok(p) if !p.is_empty() => p,
        _ => {
            assert!(
                std::env::var("HERMES_PLUGINS_REQUIRE_CYCLONEDX").as_deref() != Ok("1"),
                "cyclonedx-python-lib is required (HERMES_PLUGINS_REQUIRE_CYCLONEDX=1) but HERMES_PLUGINS_CYCLONEDX_PYTHON is unset"
            );
            eprintln!(
                "sbom: no cyclonedx-python-lib (HERMES_PLUGINS_CYCLONEDX_PYTHON): not validated"
            );
            return Ok(());
        }
    };
    let out = std::process::Command::new(python)
        .arg("-c")
        .arg(
            "import sys\n\
             from cyclonedx.schema import SchemaVersion\n\
             from cyclonedx.validation.json import JsonStrictValidator\n\
             error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(open(sys.argv[1]).read())\n\
             if error is not None:\n\
             \x20   data = getattr(error, 'data', None)\n\
             \x20   print(getattr(data, 'message', None) or str(error)[:2000], list(getattr(data, 'absolute_path', [])))\n\
             \x20   sys.exit(1)\n",
        )
        .arg(path)
        .output()
        .unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

#[test]
fn the_demo_generation_as_cyclonedx() {
    let w = World::new();
    w.ok(&[
        "install",
        "fixtures/demo/weather-demo",
        "--enable",
        "--yes-deps",
        "--no-index",
        "--find-links",
        "fixtures/demo/wheels",
    ]);
    let text = w.ok(&["sbom"]);
    let bom: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(bom["bomFormat"], "CycloneDX");
    assert_eq!(bom["specVersion"], "1.6");
    // `--json` prints the same document; two runs agree (the serial number included).
    assert_eq!(w.ok(&["--json", "sbom"]), text);
    assert_eq!(w.ok(&["sbom", "--generation", "1"]), text);

    let components = bom["components"].as_array().unwrap();
    let plugin = components
        .iter()
        .find(|c| c["name"] == "weather-demo")
        .unwrap_or_else(|| panic!("{bom:#}"));
    assert_eq!(plugin["version"], "1.0.0");
    assert_eq!(plugin["hashes"][0]["alg"], "SHA-256");
    let wheel =
        common::repo().join("fixtures/demo/wheels/hermes_demo_forecast-1.0.0-py3-none-any.whl");
    let sha256 = hermes_plugins::hash::sha256_hex(&std::fs::read(&wheel).unwrap());
    let package = components
        .iter()
        .find(|c| c["purl"] == "pkg:pypi/hermes-demo-forecast@1.0.0")
        .unwrap_or_else(|| panic!("{bom:#}"));
    assert_eq!(
        package["hashes"][0]["content"],
        sha256.as_str(),
        "{package:#}"
    );
    // Who brought it: the plugin depends on the package.
    let depends = bom["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["ref"] == plugin["bom-ref"])
        .unwrap();
    assert_eq!(
        depends["dependsOn"],
        serde_json::json!(["pkg:pypi/hermes-demo-forecast@1.0.0"])
    );

    let file = w.tmp.path().join("bom.cdx.json");
    std::fs::write(&file, &text).unwrap();
    if let Err(why) = strictly_valid(&file) {
        panic!("not valid CycloneDX 1.6: {why}\n{text}");
    }

    // Nothing published, or a generation that is not kept: said so, exit 2/1.
    let (code, _, err) = w.run(&["sbom", "--generation", "9"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("there is no generation 9"), "{err}");
    let empty = World::new();
    let (code, _, err) = empty.run(&["sbom"]);
    assert_ne!(code, Some(0), "{err}");
    assert!(err.contains("no generation is published"), "{err}");
}

/// A distribution from the package index is one `pkg:pypi` component (the plugin), with its
/// wheel's sha256 and its dependencies; the document stays valid.
#[test]
fn a_distribution_from_the_index_is_one_pypi_component() {
    let w = crate::pypi::pypi_world();
    w.ok(&[
        "install",
        "pypi:hermes-sky==1.0.0",
        "--enable",
        "--yes-deps",
    ]);
    let text = w.ok(&["sbom"]);
    let bom: Value = serde_json::from_str(&text).unwrap();
    let components = bom["components"].as_array().unwrap();
    let sky: Vec<&Value> = components
        .iter()
        .filter(|c| c["purl"] == "pkg:pypi/hermes-sky@1.0.0")
        .collect();
    assert_eq!(sky.len(), 1, "{bom:#}");
    assert_eq!(sky[0]["name"], "sky");
    assert_eq!(
        sky[0]["hashes"][0]["content"],
        common::index::sha256_hex(&crate::pypi::sky_wheel("1.0.0").build()).as_str()
    );
    let depends = bom["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["ref"] == "pkg:pypi/hermes-sky@1.0.0")
        .unwrap();
    assert_eq!(
        depends["dependsOn"],
        serde_json::json!(["pkg:pypi/skylib@1.0.0"])
    );
    let file = w.tmp.path().join("bom.cdx.json");
    std::fs::write(&file, &text).unwrap();
    if let Err(why) = strictly_valid(&file) {
        panic!("not valid CycloneDX 1.6: {why}\n{text}");
    }
}
