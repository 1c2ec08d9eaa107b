//! NixOS support against Nix itself (Debian's `nix-bin`, Nix 2.8): our NAR hashes equal
//! `nix-hash --type sha256 --base32` on awkward trees, `nix lock` pins what `fetchFromGitHub`
//! would fetch, `nix expr` parses with `nix-instantiate --parse`, and two `build --offline`
//! runs give identical NAR hashes. Without Nix these tests say so and pass, unless
//! `HERMES_PLUGINS_REQUIRE_NIX=1` (set by CI, which installs `nix-bin`).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::world::*;
use common::{fixture, repo};
use serde_json::Value;

pub(crate) fn nix_tool(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|c| c.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var("HERMES_PLUGINS_REQUIRE_NIX").as_deref() != Ok("1"),
            "{name} is required (HERMES_PLUGINS_REQUIRE_NIX=1) but not on PATH"
        );
        eprintln!("{name} not found: skipping the comparison with Nix");
    }
    found
}

fn nix_hash(tool: &Path, path: &Path) -> String {
    let out = Command::new(tool)
        .args(["--type", "sha256", "--base32"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn ours(args: &[&str]) -> String {
    let out = bin().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn bin() -> assert_cmd::Command {
    common::bin()
}

/// A tree with everything NAR distinguishes.
fn awkward_tree(root: &Path) {
    use std::os::unix::fs::{PermissionsExt, symlink};
    std::fs::create_dir_all(root.join("empty")).unwrap();
    std::fs::create_dir_all(root.join("nested/deeper/empty too")).unwrap();
    std::fs::write(root.join("plain"), "hello\n").unwrap();
    std::fs::write(root.join("empty-file"), "").unwrap();
    std::fs::write(root.join("run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(root.join("odd name ü ✓"), "unicode\n").unwrap();
    std::fs::write(root.join("new\nline"), "newline in the name\n").unwrap();
    std::fs::write(root.join("B-upper"), "sorting\n").unwrap();
    std::fs::write(root.join("_under"), "sorting\n").unwrap();
    std::fs::write(
        root.join("nested/deeper/data.bin"),
        (0u8..=255).collect::<Vec<_>>(),
    )
    .unwrap();
    symlink("plain", root.join("link")).unwrap();
    symlink("../nowhere/at all", root.join("dangling")).unwrap();
    symlink("deeper", root.join("nested/dirlink")).unwrap();
}

#[test]
fn nar_hashes_equal_nix_hash() {
    let Some(tool) = nix_tool("nix-hash") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    awkward_tree(&tree);
    let single = tmp.path().join("single-file");
    std::fs::write(&single, "just a file\n").unwrap();
    for path in [
        tree.clone(),
        tree.join("nested"),
        single,
        fixture("plugins/summarize-kit"),
    ] {
        let expected = nix_hash(&tool, &path);
        let got = ours(&["nix", "hash", "--base32", path.to_str().unwrap()]);
        assert_eq!(got, expected, "{}", path.display());
        // The SRI form is the same digest.
        let sri = ours(&["nix", "hash", path.to_str().unwrap()]);
        let hex = Command::new(&tool)
            .args(["--type", "sha256"])
            .arg(&path)
            .output()
            .unwrap();
        let hex = String::from_utf8_lossy(&hex.stdout).trim().to_string();
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        use base64::Engine as _;
        assert_eq!(
            sri,
            format!(
                "sha256-{}",
                base64::engine::general_purpose::STANDARD.encode(bytes)
            )
        );
    }
}

#[test]
fn lock_expr_and_offline_build() {
    let w = World::new();
    // A "GitHub" repository with the plugin in a subdirectory, served from a local mirror.
    let mirror = w.tmp.path().join("gh");
    let src = mirror.join("acme/tools");
    let rev = git_plugin(
        &src,
        Some("plugins/weather"),
        "weather",
        "1.0.0",
        &["weatherlib==1.0.0"],
    );
    let instead = format!("https://github.com/={}/", file_url(&mirror));
    let run = |args: &[&str]| {
        let out = w
            .cmd(args)
            .env("HERMES_PLUGINS_GIT_INSTEAD_OF", &instead)
            .env("SOURCE_DATE_EPOCH", "1700000000")
            .output()
            .unwrap();
        String::from_utf8_lossy(&common::succeeded(out)).into_owned()
    };
    run(&[
        "install",
        "https://github.com/acme/tools#plugins/weather",
        "--enable",
        "--yes-deps",
    ]);
    let lock_path = w.tmp.path().join("hermes-plugins.lock.json");
    let written: Value = serde_json::from_str(&run(&[
        "--json",
        "nix",
        "lock",
        "--out",
        lock_path.to_str().unwrap(),
    ]))
    .unwrap();
    assert_eq!(
        common::follows_its_schema(&written, None),
        "nix.schema.json"
    );
    assert_eq!(written["plugins"], 1);
    let printed: Value = serde_json::from_str(&run(&["--json", "nix", "lock"])).unwrap();
    common::follows_its_schema(&printed, None);
    let lock: Value = serde_json::from_str(&std::fs::read_to_string(&lock_path).unwrap()).unwrap();
    let pin = &lock["plugins"][0];
    assert_eq!(pin["fetcher"], "github");
    assert_eq!(pin["owner"], "acme");
    assert_eq!(pin["repo"], "tools");
    assert_eq!(pin["rev"], rev);
    assert_eq!(pin["subdir"], "plugins/weather");
    assert_eq!(lock["python"]["packages"].as_array().unwrap().len(), 2);

    // The pinned hash is the NAR hash of the repository tree at rev without .git, as
    // fetchFromGitHub unpacks it: compare with `git archive` + nix-hash when Nix is here.
    if let Some(tool) = nix_tool("nix-hash") {
        let unpacked = w.tmp.path().join("archive");
        std::fs::create_dir_all(&unpacked).unwrap();
        let status = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "git -C '{}' archive --format=tar {rev} | tar -x -C '{}'",
                src.display(),
                unpacked.display()
            ))
            .status()
            .unwrap();
        assert!(status.success());
        let base32 = nix_hash(&tool, &unpacked);
        assert_eq!(
            ours(&["nix", "hash", "--base32", unpacked.to_str().unwrap()]),
            base32
        );
        assert_eq!(
            pin["hash"].as_str().unwrap(),
            ours(&["nix", "hash", unpacked.to_str().unwrap()])
        );
    }

    // Both expression forms parse.
    let inline = run(&["nix", "expr", "--lock", lock_path.to_str().unwrap()]);
    assert!(inline.contains("pkgs.fetchFromGitHub"), "{inline}");
    assert!(inline.contains(&format!("rev = \"{rev}\"")), "{inline}");
    let generic = run(&["nix", "expr", "--from-json", "hermes-plugins.lock.json"]);
    let wrapped: Value = serde_json::from_str(&run(&[
        "--json",
        "nix",
        "expr",
        "--lock",
        lock_path.to_str().unwrap(),
    ]))
    .unwrap();
    common::follows_its_schema(&wrapped, None);
    assert_eq!(wrapped["expression"], inline);
    assert_eq!(printed["lock"]["plugins"], lock["plugins"]);
    if let Some(parse) = nix_tool("nix-instantiate") {
        for (name, text) in [("inline.nix", &inline), ("generic.nix", &generic)] {
            let file = w.tmp.path().join(name);
            std::fs::write(&file, text).unwrap();
            common::succeeded(
                Command::new(&parse)
                    .arg("--parse")
                    .arg(&file)
                    .output()
                    .unwrap(),
            );
        }
    }

    // Both forms evaluate against a stub of what the hermes-agent module takes:
    // `extraPlugins = listOf package`, every element a derivation named after its plugin, its
    // fetcher's arguments equal to the lock's.
    if let Some(instantiate) = nix_tool("nix-instantiate") {
        std::fs::write(w.tmp.path().join("stub-pkgs.nix"), STUB_PKGS).unwrap();
        for name in ["inline.nix", "generic.nix"] {
            let check = w.tmp.path().join(format!("check-{name}"));
            std::fs::write(&check, STUB_CHECK.replace("EXPRESSION", name)).unwrap();
            let out = Command::new(&instantiate)
                .args(["--eval", "--strict", "--json"])
                .arg(&check)
                .output()
                .unwrap();
            let seen: Value = serde_json::from_slice(&common::succeeded(out)).unwrap();
            let plugin = &seen["plugins"][0];
            assert_eq!(plugin["name"], "weather", "{name}: {seen:#}");
            assert_eq!(plugin["pname"], "weather", "{name}: {seen:#}");
            assert_eq!(plugin["builder"], "runCommand", "{name}: {seen:#}");
            assert!(
                plugin["command"]
                    .as_str()
                    .unwrap()
                    .contains("\"$src\"/plugins/weather"),
                "{name}: {seen:#}"
            );
            let fetched = &plugin["src"];
            assert_eq!(fetched["builder"], "fetchFromGitHub", "{name}: {seen:#}");
            assert_eq!(fetched["args"]["owner"], pin["owner"]);
            assert_eq!(fetched["args"]["repo"], pin["repo"]);
            assert_eq!(fetched["args"]["rev"], pin["rev"]);
            assert_eq!(fetched["args"]["hash"], pin["hash"]);
            // The plugin's Python packages: every locked wheel (no core here), fetched by
            // its URL and sha256 and installed for the lock's interpreter.
            let locked = lock["python"]["packages"].as_array().unwrap();
            let python = seen["python"].as_array().unwrap();
            assert_eq!(python.len(), locked.len(), "{name}: {seen:#}");
            let minor = lock["python"]["python"]["version"]
                .as_str()
                .unwrap()
                .split('.')
                .take(2)
                .collect::<Vec<_>>()
                .join(".");
            for (built, package) in python.iter().zip(locked) {
                assert_eq!(built["builder"], "buildPythonPackage", "{name}: {seen:#}");
                assert_eq!(built["python"], minor.as_str(), "{name}: {seen:#}");
                assert_eq!(built["args"]["pname"], package["name"]);
                assert_eq!(built["args"]["version"], package["version"]);
                assert_eq!(built["args"]["format"], "wheel");
                let wheel = &built["src"];
                assert_eq!(wheel["builder"], "fetchurl", "{name}: {seen:#}");
                assert_eq!(wheel["args"]["url"], package["url"]);
                assert_eq!(wheel["args"]["sha256"], package["sha256"]);
                assert_eq!(wheel["args"]["name"], package["file"]);
            }
        }
        refusals(&w, &lock, &instantiate);
    }

    // Offline builds from the fetched tree and a wheel directory: identical twice.
    let wheels = w.index.wheels().to_path_buf();
    let fetched = w.tmp.path().join("fetched");
    let status = Command::new("git")
        .args(["clone", "-q"])
        .arg(&src)
        .arg(&fetched)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::remove_dir_all(fetched.join(".git")).unwrap();
    let mut hashes = Vec::new();
    for out_name in ["out-a", "out-b"] {
        let out_dir = w.tmp.path().join(out_name);
        let printed = run(&[
            "--json",
            "build",
            "--offline",
            "--lock",
            lock_path.to_str().unwrap(),
            "--wheels",
            wheels.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
            "--source",
            &format!("weather={}", fetched.display()),
        ]);
        let doc: Value = serde_json::from_str(&printed).unwrap();
        common::follows_its_schema(&doc, None);
        hashes.push(doc["hash"].as_str().unwrap().to_string());
        // Nothing inside names the build's own paths.
        let tmp_str = w.tmp.path().display().to_string();
        for entry in walk(&out_dir) {
            if let Ok(text) = std::fs::read_to_string(&entry) {
                assert!(
                    !text.contains(&tmp_str),
                    "{} mentions {tmp_str}",
                    entry.display()
                );
            }
        }
        let python = out_dir.join("venv/bin/python");
        let imported = Command::new(&python)
            .args(["-c", "import weatherlib; print(weatherlib.__version__)"])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&imported.stdout).trim(), "1.0.0");
        let generation: Value = common::read_json(&out_dir.join("generation.json"));
        assert_eq!(generation["created"], "2023-11-14T22:13:20Z");
        assert_eq!(generation["plugins"][0]["path"], "plugins/weather");
    }
    assert_eq!(hashes[0], hashes[1]);
    if let Some(tool) = nix_tool("nix-hash") {
        let a = nix_hash(&tool, &w.tmp.path().join("out-a"));
        assert_eq!(
            ours(&[
                "nix",
                "hash",
                "--base32",
                w.tmp.path().join("out-b").to_str().unwrap()
            ]),
            a
        );
    }

    // A source that does not match the lock is refused; nothing is left behind.
    std::fs::write(
        fetched.join("plugins/weather/__init__.py"),
        "tampered = True\n",
    )
    .unwrap();
    let out = w
        .cmd(&[
            "build",
            "--offline",
            "--lock",
            lock_path.to_str().unwrap(),
            "--wheels",
            wheels.to_str().unwrap(),
            "--out",
            w.tmp.path().join("out-c").to_str().unwrap(),
            "--source",
            &format!("weather={}", fetched.display()),
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("NAR hash"));
    assert!(!w.tmp.path().join("out-c").exists());
    assert!(!w.tmp.path().join(".out-c.partial").exists());
    let _ = repo();
}

fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                out.push(e.path());
            }
        }
    }
    out
}

/// Stand-ins for the nixpkgs functions the generated expressions call: each returns a
/// derivation-shaped set recording how it was called.
const STUB_PKGS: &str = r#"
let
  drv = builder: name: extra: {
    type = "derivation";
    inherit name builder;
    outPath = "/nix/store/00000000000000000000000000000000-${name}";
  } // extra;
in
{
  fetchFromGitHub = args: drv "fetchFromGitHub" (args.name or "source") { inherit args; };
  fetchgit = args: drv "fetchgit" (args.name or "source") { inherit args; };
  runCommand = name: env: command: drv "runCommand" name { inherit command; src = env.src or null; };
  fetchurl = args: drv "fetchurl" (args.name or "source") { inherit args; };
}
// builtins.listToAttrs (map (minor: {
  name = "python3${toString minor}";
  value.pkgs.buildPythonPackage = args:
    drv "buildPythonPackage" "python3.${toString minor}-${args.pname}-${args.version}" {
      inherit args;
      python = "3.${toString minor}";
      src = args.src;
    };
}) [ 8 9 10 11 12 13 14 ])
"#;

/// The upstream module's view of `extraPlugins` and `extraPythonPackages` (both `listOf
/// package`; plugins linked by `lib.getName`), applied to EXPRESSION: fails unless every
/// element is a derivation; prints each element's name and how it was made.
const STUB_CHECK: &str = r#"
let
  pkgs = import ./stub-pkgs.nix;
  getName = x: let parse = d: (builtins.parseDrvName d).name; in
    if builtins.isString x then parse x else x.pname or (parse x.name);
  isPackage = x: builtins.isAttrs x && (x.type or null) == "derivation";
  cfg = (import ./EXPRESSION { inherit pkgs; }).services.hermes-agent;
  plugins = cfg.extraPlugins;
  python = cfg.extraPythonPackages or [ ];
  show = x: { name = getName x; pname = x.pname or null; inherit (x) builder; }
    // (if x ? command then { inherit (x) command; } else { })
    // (if x ? python then { inherit (x) python; } else { })
    // (if x ? args then { args = removeAttrs x.args [ "src" ]; } else { })
    // (if (x.src or null) != null then { src = show x.src; } else { });
in
  assert builtins.isList plugins;
  assert builtins.all isPackage plugins;
  assert builtins.isList python;
  assert builtins.all isPackage python;
  { plugins = map show plugins; python = map show python; }
"#;

/// What the module cannot take is refused, naming it: by `nix expr --lock` (exit 1) and, in
/// the `--from-json` form, by a throw when evaluated; `--plugins-only` leaves Python out.
fn refusals(w: &World, lock: &Value, instantiate: &Path) {
    /// A case: its name, how it edits the lock, what the refusal says.
    type Case = (&'static str, fn(&mut Value), &'static str);
    let cases: [Case; 3] = [
        (
            "sdist",
            |l: &mut Value| l["python"]["packages"][0]["kind"] = "sdist".into(),
            "source distribution",
        ),
        (
            "platform",
            |l: &mut Value| {
                l["python"]["packages"][0]["file"] =
                    "colorlib-1.0.0-cp312-cp312-manylinux_2_17_x86_64.whl".into()
            },
            "platform-specific wheel",
        ),
        (
            "portable",
            |l: &mut Value| l["plugins"][0]["format"] = "portable".into(),
            "portable (plugin.json) package",
        ),
    ];
    for (case, edit, expected) in cases {
        let mut edited = lock.clone();
        edit(&mut edited);
        let path = w.tmp.path().join(format!("{case}.lock.json"));
        std::fs::write(&path, serde_json::to_string_pretty(&edited).unwrap()).unwrap();
        let out = w
            .cmd(&["nix", "expr", "--lock", path.to_str().unwrap()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{case}: {stderr}");
        assert!(stderr.contains(expected), "{case}: {stderr}");
        assert!(out.stdout.is_empty(), "{case}: printed an expression");
        let named = if case == "portable" {
            "`weather`"
        } else {
            "`colorlib`"
        };
        assert!(stderr.contains(named), "{case}: {stderr}");
        // The generic form throws the same refusal when evaluated.
        let generic = w.tmp.path().join(format!("{case}.nix"));
        let text = w
            .cmd(&["nix", "expr", "--from-json", &format!("{case}.lock.json")])
            .output()
            .unwrap();
        std::fs::write(&generic, common::succeeded(text)).unwrap();
        let check = w.tmp.path().join(format!("check-{case}.nix"));
        std::fs::write(
            &check,
            STUB_CHECK.replace("EXPRESSION", &format!("{case}.nix")),
        )
        .unwrap();
        let out = Command::new(instantiate)
            .args(["--eval", "--strict", "--json"])
            .arg(&check)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{case}: evaluated");
        assert!(stderr.contains(named), "{case}: {stderr}");
        // --plugins-only: the Python refusals go away with extraPythonPackages.
        if case != "portable" {
            let out = w
                .cmd(&[
                    "nix",
                    "expr",
                    "--plugins-only",
                    "--lock",
                    path.to_str().unwrap(),
                ])
                .output()
                .unwrap();
            let text = String::from_utf8(common::succeeded(out)).unwrap();
            assert!(!text.contains("extraPythonPackages"), "{text}");
            assert!(text.contains("extraPlugins"), "{text}");
        }
    }
}

/// A `pkgs` for real builds with Debian's Nix and no nixpkgs: derivations whose builder is the
/// host's `/bin/sh` (Debian's Nix builds without a sandbox). `fetchurl` is Nix's own
/// `<nix/fetchurl.nix>` (a fixed-output derivation checked against the sha256);
/// `fetchFromGitHub` checks out `MIRROR/<owner>/<repo>` at `rev` as a fixed-output derivation
/// whose output Nix checks against the pinned `hash`; `buildPythonPackage` unpacks the wheel
/// into `lib/site-packages`.
const REAL_PKGS: &str = r#"
let
  run = name: attrs: command: derivation ({
    inherit name;
    system = builtins.currentSystem;
    builder = "/bin/sh";
    args = [ "-c" command ];
    PATH = "HOST_PATH";
  } // attrs);
  python = {
    pkgs.buildPythonPackage = args:
      run "python-${args.pname}-${args.version}" { inherit (args) src; }
        "mkdir -p $out/lib/site-packages && python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' $src $out/lib/site-packages";
  };
in
{
  runCommand = run;
  fetchurl = { url, sha256, name }: import <nix/fetchurl.nix> { inherit url sha256 name; };
  fetchFromGitHub = { owner, repo, rev, hash, name ? "source" }:
    run name {
      outputHashMode = "recursive";
      outputHash = hash;
      GIT_CONFIG_NOSYSTEM = "1";
      HOME = "/homeless-shelter";
    } "git clone -q MIRROR/${owner}/${repo} $out && git -C $out checkout -q ${rev} && rm -rf $out/.git";
}
// builtins.listToAttrs (map (minor: { name = "python3${toString minor}"; value = python; })
  [ 8 9 10 11 12 13 14 ])
"#;

/// Every package of the generated module fragment, plugins first.
const REAL_PACKAGES: &str = r#"
let
  cfg = (import ./plugins.nix { pkgs = import ./real-pkgs.nix; }).services.hermes-agent;
in
  cfg.extraPlugins ++ cfg.extraPythonPackages
"#;

/// A generation built by `hermes-plugins build --offline` inside a derivation: the lock and
/// the plugin packages from the expression above, the wheels fetched by Nix from the lock's
/// URLs and sha256.
const REAL_GENERATION: &str = r#"
let
  pkgs = import ./real-pkgs.nix;
  cfg = (import ./plugins.nix { inherit pkgs; }).services.hermes-agent;
  lock = builtins.fromJSON (builtins.readFile ./lock.json);
  wheels = pkgs.runCommand "wheels" { } ("mkdir $out\n" + builtins.concatStringsSep "\n"
    (map (p: "ln -s ${pkgs.fetchurl { inherit (p) url sha256; name = p.file; }} $out/${p.file}")
      lock.python.packages));
  # Distributions (`fetcher = "wheel"`) are Python packages, not extraPlugins: their wheel
  # is among the wheels.
  linked = builtins.filter (p: p.fetcher != "wheel") lock.plugins;
  sources = builtins.concatStringsSep " " (builtins.genList
    (i: "--source ${(builtins.elemAt linked i).key}=${builtins.elemAt cfg.extraPlugins i}")
    (builtins.length linked));
in
pkgs.runCommand "hermes-plugins-generation" {
  lockFile = builtins.path { path = ./lock.json; name = "hermes-plugins.lock.json"; };
  SOURCE_DATE_EPOCH = "1700000000";
} "export HOME=$TMPDIR; exec BINARY build --offline --lock $lockFile --wheels ${wheels} --out $out ${sources}"
"#;

/// Runs `nix-build` offline (no substituters, no sandbox — as Debian's Nix builds — and no
/// build users) and returns
/// the output paths it printed.
fn nix_build(tool: &Path, dir: &Path, file: &str, extra: &[&str]) -> Vec<String> {
    let out = Command::new(tool)
        .current_dir(dir)
        .args(["--no-out-link", "--option", "sandbox", "false"])
        // Build as the calling user (the test's temporary files and the binary are its own).
        .args(["--option", "build-users-group", ""])
        .args(["--option", "substituters", ""])
        .args(extra)
        .arg(file)
        .env("no_proxy", "127.0.0.1,localhost")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env_remove("http_proxy")
        .env_remove("HTTP_PROXY")
        .env_remove("https_proxy")
        .env_remove("HTTPS_PROXY")
        .env_remove("all_proxy")
        .env_remove("ALL_PROXY")
        .output()
        .unwrap();
    let text = common::succeeded(out);
    String::from_utf8(text)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn real_offline_nix_builds_of_the_expression_and_a_generation() {
    let (Some(nix_build_tool), Some(nix_store)) = (nix_tool("nix-build"), nix_tool("nix-store"))
    else {
        return;
    };
    let w = World::new();
    // A GitHub plugin in a subdirectory (served from a local mirror) with a Python
    // dependency, and a plugin installed from a local directory.
    let mirror = w.tmp.path().join("gh");
    let rev = git_plugin(
        &mirror.join("acme/tools"),
        Some("plugins/weather"),
        "weather",
        "1.0.0",
        &["weatherlib==1.0.0"],
    );
    let notes = w.tmp.path().join("notes");
    for (path, text) in plugin_files("notes", "0.1.0", &[]) {
        std::fs::create_dir_all(&notes).unwrap();
        std::fs::write(notes.join(path), text).unwrap();
    }
    let instead = format!("https://github.com/={}/", file_url(&mirror));
    let run = |args: &[&str]| {
        let out = w
            .cmd(args)
            .env("HERMES_PLUGINS_GIT_INSTEAD_OF", &instead)
            .output()
            .unwrap();
        String::from_utf8_lossy(&common::succeeded(out)).into_owned()
    };
    run(&[
        "install",
        "https://github.com/acme/tools#plugins/weather",
        "--enable",
        "--yes-deps",
    ]);
    run(&["install", notes.to_str().unwrap(), "--enable", "--yes-deps"]);
    let dir = w.tmp.path().join("nix");
    std::fs::create_dir_all(&dir).unwrap();
    run(&[
        "nix",
        "lock",
        "--out",
        dir.join("lock.json").to_str().unwrap(),
    ]);
    let lock: Value = common::read_json(&dir.join("lock.json"));
    assert_eq!(lock["plugins"][0]["key"], "notes");
    assert_eq!(lock["plugins"][0]["fetcher"], "path");
    assert_eq!(lock["plugins"][1]["rev"], rev);
    let expression = run(&[
        "nix",
        "expr",
        "--lock",
        dir.join("lock.json").to_str().unwrap(),
    ]);
    std::fs::write(dir.join("plugins.nix"), expression).unwrap();
    let host_path = std::env::var("PATH").unwrap();
    std::fs::write(
        dir.join("real-pkgs.nix"),
        REAL_PKGS
            .replace("HOST_PATH", &host_path)
            .replace("MIRROR", &file_url(&mirror)),
    )
    .unwrap();
    std::fs::write(dir.join("packages.nix"), REAL_PACKAGES).unwrap();
    #[allow(deprecated)]
    let binary = assert_cmd::cargo::cargo_bin("hermes-plugins");
    std::fs::write(
        dir.join("generation.nix"),
        REAL_GENERATION.replace("BINARY", binary.to_str().unwrap()),
    )
    .unwrap();

    // The module fragment, built for real: each plugin package has plugin.yaml and
    // __init__.py at its root (the module's activation check) and its key as name; the
    // GitHub source's pinned hash is checked by Nix itself; the Python package is the
    // locked wheel, fetched by URL and sha256, and imports at the locked version.
    let built = nix_build(&nix_build_tool, &dir, "packages.nix", &[]);
    assert_eq!(built.len(), 4, "{built:?}");
    for (path, key) in built.iter().zip(["notes", "weather"]) {
        assert!(path.ends_with(&format!("-{key}")), "{path}");
        assert!(Path::new(path).join("plugin.yaml").is_file(), "{path}");
        assert!(Path::new(path).join("__init__.py").is_file(), "{path}");
    }
    let site = |i: usize| format!("{}/lib/site-packages", built[i]);
    let imported = Command::new("python3")
        .args([
            "-c",
            "import colorlib, weatherlib; print(weatherlib.__version__)",
        ])
        .env("PYTHONPATH", format!("{}:{}", site(2), site(3)))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&common::succeeded(imported)).trim(),
        "1.0.0"
    );

    // A generation built offline inside a derivation by the binary; rebuilt with `--check`,
    // Nix finds the output bit-for-bit identical, and a second build gives the same path.
    let first = nix_build(&nix_build_tool, &dir, "generation.nix", &[]);
    let checked = nix_build(&nix_build_tool, &dir, "generation.nix", &["--check"]);
    let again = nix_build(&nix_build_tool, &dir, "generation.nix", &[]);
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(first, checked);
    assert_eq!(first, again);
    let generation = Path::new(&first[0]);
    let doc: Value = common::read_json(&generation.join("generation.json"));
    assert_eq!(doc["created"], "2023-11-14T22:13:20Z");
    let keys: Vec<&str> = doc["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["notes", "weather"]);
    let imported = Command::new(generation.join("venv/bin/python"))
        .args(["-c", "import weatherlib; print(weatherlib.__version__)"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&common::succeeded(imported)).trim(),
        "1.0.0"
    );

    // Leave the store as it was: these outputs have no roots.
    let _ = Command::new(nix_store)
        .arg("--delete")
        .args(&first)
        .args(&built)
        .output();
}

/// The NAR hash (SRI) of what `fetchgit` without submodules produces: a clone checked out at
/// `rev`, without `.git`.
fn fetchgit_tree_hash(w: &World, repo_dir: &Path, rev: &str, name: &str) -> String {
    let dest = w.tmp.path().join(format!("fetchgit-{name}"));
    let status = Command::new("git")
        .args(["-c", "protocol.file.allow=always", "clone", "-q"])
        .arg(repo_dir)
        .arg(&dest)
        .status()
        .unwrap();
    assert!(status.success());
    let status = Command::new("git")
        .arg("-C")
        .arg(&dest)
        .args(["checkout", "-q", rev])
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::remove_dir_all(dest.join(".git")).unwrap();
    ours(&["nix", "hash", dest.to_str().unwrap()])
}

/// The NAR hash (SRI) of `git archive` at `rev` unpacked: what GitHub's tarball, and so
/// `fetchFromGitHub`, gives.
fn archive_tree_hash(w: &World, repo_dir: &Path, rev: &str, name: &str) -> String {
    let dest = w.tmp.path().join(format!("archive-{name}"));
    std::fs::create_dir_all(&dest).unwrap();
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "git -C '{}' archive --format=tar {rev} | tar -x -C '{}'",
            repo_dir.display(),
            dest.display()
        ))
        .status()
        .unwrap();
    assert!(status.success());
    ours(&["nix", "hash", dest.to_str().unwrap()])
}

#[test]
fn github_repositories_whose_archive_differs_are_pinned_for_fetchgit() {
    let w = World::new();
    let mirror = w.tmp.path().join("gh");
    // export-ignore: the tarball leaves tests/ out.
    let ignoring = mirror.join("acme/ignoring");
    git_plugin(&ignoring, None, "ignoring", "1.0.0", &[]);
    let ignoring_rev = commit(
        &ignoring,
        &[
            (".gitattributes".into(), "tests/ export-ignore\n".into()),
            ("tests/test_it.py".into(), "def test(): pass\n".into()),
        ],
        "attributes",
    );
    // export-subst: the tarball expands $Format:…$.
    let subst = mirror.join("acme/subst");
    git_plugin(&subst, None, "subst", "1.0.0", &[]);
    let subst_rev = commit(
        &subst,
        &[
            (".gitattributes".into(), "version.txt export-subst\n".into()),
            ("version.txt".into(), "$Format:%H$\n".into()),
        ],
        "attributes",
    );
    // A submodule: archives hold no content for it; fetchgit must not fetch it either.
    let library = mirror.join("acme/library");
    git_plugin(&library, None, "library", "1.0.0", &[]);
    let with_module = mirror.join("acme/withmodule");
    git_plugin(&with_module, None, "withmodule", "1.0.0", &[]);
    for args in [
        vec![
            "-c".to_string(),
            "protocol.file.allow=always".into(),
            "submodule".into(),
            "add".into(),
            "-q".into(),
            file_url(&library),
            "vendor/library".into(),
        ],
        vec![
            "-c".into(),
            "user.name=Test".into(),
            "-c".into(),
            "user.email=t@example.org".into(),
            "commit".into(),
            "-q".into(),
            "-m".into(),
            "submodule".into(),
        ],
    ] {
        let status = Command::new("git")
            .arg("-C")
            .arg(&with_module)
            .args(&args)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }
    let module_rev = String::from_utf8(
        Command::new("git")
            .arg("-C")
            .arg(&with_module)
            .args(["rev-parse", "HEAD"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_string();

    let instead = format!("https://github.com/={}/", file_url(&mirror));
    let run = |args: &[&str]| {
        let out = w
            .cmd(args)
            .env("HERMES_PLUGINS_GIT_INSTEAD_OF", &instead)
            .output()
            .unwrap();
        String::from_utf8_lossy(&common::succeeded(out)).into_owned()
    };
    for name in ["ignoring", "subst", "withmodule"] {
        run(&["install", &format!("https://github.com/acme/{name}")]);
    }
    let lock: Value = serde_json::from_str(&run(&["nix", "lock"])).unwrap();
    let pins = lock["plugins"].as_array().unwrap();
    for (name, dir, rev, archive_differs) in [
        ("ignoring", &ignoring, &ignoring_rev, true),
        ("subst", &subst, &subst_rev, true),
        ("withmodule", &with_module, &module_rev, false),
    ] {
        let pin = pins.iter().find(|p| p["key"] == name).unwrap();
        assert_eq!(pin["fetcher"], "git", "{pin:#}");
        assert_eq!(
            pin["url"],
            format!("https://github.com/acme/{name}.git"),
            "{pin:#}"
        );
        assert_eq!(&pin["rev"], rev.as_str());
        // The pinned hash is fetchgit's (a checkout without submodules)…
        assert_eq!(
            pin["hash"].as_str().unwrap(),
            fetchgit_tree_hash(&w, dir, rev, name),
            "{name}"
        );
        // …which fetchFromGitHub's tarball would not have matched.
        if archive_differs {
            assert_ne!(
                pin["hash"].as_str().unwrap(),
                archive_tree_hash(&w, dir, rev, name),
                "{name}"
            );
        }
    }
    // The expression fetches them with fetchgit, submodules off (fetchgit's default is on).
    let expression = run(&["nix", "expr"]);
    assert_eq!(
        expression.matches("pkgs.fetchgit {").count(),
        3,
        "{expression}"
    );
    assert_eq!(
        expression.matches("fetchSubmodules = false;").count(),
        3,
        "{expression}"
    );
    assert!(!expression.contains("fetchFromGitHub"), "{expression}");
    // Both forms, evaluated against the stub, call fetchgit with the lock's arguments.
    let Some(instantiate) = nix_tool("nix-instantiate") else {
        return;
    };
    let dir = w.tmp.path();
    std::fs::write(dir.join("lock.json"), lock.to_string()).unwrap();
    std::fs::write(dir.join("inline.nix"), &expression).unwrap();
    std::fs::write(
        dir.join("generic.nix"),
        run(&["nix", "expr", "--from-json", "lock.json"]),
    )
    .unwrap();
    std::fs::write(dir.join("stub-pkgs.nix"), STUB_PKGS).unwrap();
    for name in ["inline.nix", "generic.nix"] {
        let check = dir.join(format!("check-{name}"));
        std::fs::write(&check, STUB_CHECK.replace("EXPRESSION", name)).unwrap();
        let out = Command::new(&instantiate)
            .args(["--eval", "--strict", "--json"])
            .arg(&check)
            .output()
            .unwrap();
        let seen: Value = serde_json::from_slice(&common::succeeded(out)).unwrap();
        for (plugin, pin) in seen["plugins"].as_array().unwrap().iter().zip(pins) {
            assert_eq!(plugin["name"], pin["key"], "{name}: {seen:#}");
            assert_eq!(plugin["builder"], "fetchgit", "{name}: {seen:#}");
            for field in ["url", "rev", "hash"] {
                assert_eq!(plugin["args"][field], pin[field], "{name}: {seen:#}");
            }
            assert_eq!(plugin["args"]["fetchSubmodules"], false, "{name}: {seen:#}");
        }
    }
}

/// A stand-in for nixpkgs as the flake uses it: `lib` (genAttrs, cleanSourceWith, licenses,
/// platforms), `legacyPackages.<system>` with `callPackage` (which passes only the
/// arguments the function declares, as nixpkgs does) and a `rustPlatform.buildRustPackage`
/// that records its arguments. The filter of `cleanSourceWith` is applied to sample paths.
const STUB_NIXPKGS: &str = r#"
let
  lib = {
    genAttrs = names: f: builtins.listToAttrs (map (n: { name = n; value = f n; }) names);
    cleanSourceWith = { src, filter, name ? "source" }: {
      inherit name;
      root = toString src;
      keeps = builtins.listToAttrs (map (p: { name = p; value = filter (toString src + "/" + p) "directory"; })
        [ "src" "Cargo.toml" "benches" "tests" "fixtures" "target" ".git" "result" ]);
    };
    licenses = { mit = "MIT"; asl20 = "Apache-2.0"; };
    platforms.unix = [ "unix" ];
  };
  pkgsFor = system: let
    pkgs = {
      inherit lib system;
      pkg-config = "pkg-config"; perl = "perl"; cmake = "cmake";
      rustPlatform.buildRustPackage = args: {
        type = "derivation";
        name = "${args.pname}-${args.version}";
        inherit args;
      };
      callPackage = fn: overrides: let f = import fn; in
        f (builtins.intersectAttrs (builtins.functionArgs f) pkgs // overrides);
    };
  in pkgs;
in
{
  inherit lib;
  legacyPackages = lib.genAttrs [ "x86_64-linux" "aarch64-linux" "x86_64-darwin" "aarch64-darwin" ] pkgsFor;
}
"#;

/// The flake's outputs evaluated against the stub: the package for every system, the overlay.
const FLAKE_CHECK: &str = r#"
let
  nixpkgs = import ./stub-nixpkgs.nix;
  flake = import REPO/flake.nix;
  outputs = flake.outputs { self = outputs; inherit nixpkgs; };
  pkg = outputs.packages.x86_64-linux.default;
  overlaid = outputs.overlays.default (nixpkgs.legacyPackages.x86_64-linux) { };
  isPackage = x: builtins.isAttrs x && (x.type or null) == "derivation";
in
  assert builtins.all (s: isPackage outputs.packages.${s}.default)
    (builtins.attrNames outputs.packages);
  assert isPackage overlaid.hermes-plugins;
  {
    systems = builtins.attrNames outputs.packages;
    inherit (pkg) name;
    inherit (pkg.args) pname version doCheck;
    lockFile = toString pkg.args.cargoLock.lockFile;
    src = pkg.args.src;
    meta = pkg.args.meta;
    nativeBuildInputs = pkg.args.nativeBuildInputs;
    overlayName = overlaid.hermes-plugins.name;
    description = flake.description;
  }
"#;

#[test]
fn the_flake_packages_the_tool_from_its_cargo_lock() {
    let Some(instantiate) = nix_tool("nix-instantiate") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("stub-nixpkgs.nix"), STUB_NIXPKGS).unwrap();
    let root = repo();
    let check = tmp.path().join("check.nix");
    std::fs::write(&check, FLAKE_CHECK.replace("REPO", root.to_str().unwrap())).unwrap();
    let out = Command::new(&instantiate)
        .args(["--eval", "--strict", "--json"])
        .arg(&check)
        .output()
        .unwrap();
    let seen: Value = serde_json::from_slice(&common::succeeded(out)).unwrap();
    let manifest: toml::Table = std::fs::read_to_string(root.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let version = manifest["package"]["version"].as_str().unwrap();
    assert_eq!(seen["pname"], "hermes-plugins");
    assert_eq!(seen["version"], version);
    assert_eq!(seen["name"], format!("hermes-plugins-{version}"));
    assert_eq!(seen["overlayName"], seen["name"]);
    assert_eq!(
        seen["systems"],
        serde_json::json!([
            "aarch64-darwin",
            "aarch64-linux",
            "x86_64-darwin",
            "x86_64-linux"
        ])
    );
    assert_eq!(
        seen["lockFile"],
        root.join("Cargo.lock").to_str().unwrap(),
        "{seen:#}"
    );
    assert_eq!(seen["meta"]["mainProgram"], "hermes-plugins");
    assert_eq!(seen["src"]["root"], root.to_str().unwrap(), "{seen:#}");
    for kept in ["src", "Cargo.toml", "benches", "tests", "fixtures"] {
        assert_eq!(seen["src"]["keeps"][kept], true, "{kept}: {seen:#}");
    }
    for left in ["target", ".git", "result"] {
        assert_eq!(seen["src"]["keeps"][left], false, "{left}: {seen:#}");
    }
    assert_eq!(seen["doCheck"], false);
}

/// A plugin that is a distribution from the package index is pinned by its wheel (URL and
/// sha256): the expression installs it as a Python package (Hermes finds its entry point
/// there), never as a plugin directory; `--plugins-only` refuses it by name; an offline build
/// takes its wheel from the wheel directory; and Nix itself builds both.
#[test]
fn a_distribution_from_the_index_is_pinned_by_its_wheel() {
    let w = crate::pypi::pypi_world();
    w.ok(&[
        "install",
        "pypi:hermes-sky==1.0.0",
        "--enable",
        "--yes-deps",
    ]);
    let dir = w.tmp.path().join("nix");
    std::fs::create_dir_all(&dir).unwrap();
    let lock_path = dir.join("lock.json");
    w.ok(&["nix", "lock", "--out", lock_path.to_str().unwrap()]);
    let lock: Value = common::read_json(&lock_path);
    let pin = &lock["plugins"][0];
    let wheel = crate::pypi::sky_wheel("1.0.0");
    assert_eq!(pin["fetcher"], "wheel", "{lock:#}");
    assert_eq!(pin["key"], "sky");
    assert_eq!(pin["distribution"], "hermes-sky");
    assert_eq!(pin["version"], "1.0.0");
    assert_eq!(pin["filename"], wheel.filename().as_str());
    assert!(
        pin["url"].as_str().unwrap().ends_with(&wheel.filename()),
        "{pin:#}"
    );
    // The file's own sha256, as `nix hash file --sri` gives it.
    let digest = common::index::sha256_hex(&wheel.build());
    let locked = lock["python"]["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "hermes-sky")
        .unwrap();
    assert_eq!(locked["sha256"], digest.as_str());
    if let Some(tool) = nix_tool("nix") {
        let file = w.index.wheels().join(wheel.filename());
        let out = Command::new(tool)
            .args(["--extra-experimental-features", "nix-command"])
            .args(["hash", "file", "--sri"])
            .arg(&file)
            .output()
            .unwrap();
        let sri = String::from_utf8(common::succeeded(out)).unwrap();
        assert_eq!(pin["hash"].as_str(), Some(sri.trim()));
    }

    // The expression: no plugin directory for it; its wheel among the Python packages.
    let expression = w.ok(&["nix", "expr", "--lock", lock_path.to_str().unwrap()]);
    let plugins = expression
        .split("extraPlugins = [")
        .nth(1)
        .and_then(|rest| rest.split("];").next())
        .unwrap();
    assert!(plugins.trim().is_empty(), "{expression}");
    assert!(
        expression.contains(&format!("\"{}\"", wheel.filename())),
        "{expression}"
    );
    let (code, out, err) = w.run(&[
        "nix",
        "expr",
        "--plugins-only",
        "--lock",
        lock_path.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        err.contains("`sky`") && err.contains("--plugins-only"),
        "{err}"
    );
    assert!(out.is_empty(), "{out}");

    // An offline build takes the wheel from the wheel directory: the generation records
    // the distribution, and its venv has it.
    let out_dir = w.tmp.path().join("out");
    w.ok(&[
        "build",
        "--offline",
        "--lock",
        lock_path.to_str().unwrap(),
        "--wheels",
        w.index.wheels().to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let doc: Value = common::read_json(&out_dir.join("generation.json"));
    assert_eq!(doc["plugins"][0]["key"], "sky", "{doc:#}");
    assert_eq!(
        doc["plugins"][0]["source"]["package"]["sha256"],
        digest.as_str()
    );
    let imported = Command::new(out_dir.join("venv/bin/python"))
        .args([
            "-c",
            "import hermes_sky.plugin, skylib; print(skylib.__version__)",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&common::succeeded(imported)).trim(),
        "1.0.0"
    );
    // A wheel directory with another file under that name: refused, nothing built.
    let forged = w.tmp.path().join("forged");
    std::fs::create_dir_all(&forged).unwrap();
    for entry in std::fs::read_dir(w.index.wheels()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), forged.join(entry.file_name())).unwrap();
    }
    std::fs::write(forged.join(wheel.filename()), b"not the wheel").unwrap();
    let refused_out = w.tmp.path().join("out-forged");
    let (code, _, err) = w.run(&[
        "build",
        "--offline",
        "--lock",
        lock_path.to_str().unwrap(),
        "--wheels",
        forged.to_str().unwrap(),
        "--out",
        refused_out.to_str().unwrap(),
    ]);
    assert_ne!(code, Some(0), "{err}");
    assert!(
        err.contains("hermes_sky-1.0.0") && err.contains("sha256"),
        "{err}"
    );
    assert!(!refused_out.exists());

    // Nix builds the fragment and a generation from it.
    let (Some(nix_build_tool), Some(nix_store)) = (nix_tool("nix-build"), nix_tool("nix-store"))
    else {
        return;
    };
    std::fs::write(dir.join("plugins.nix"), &expression).unwrap();
    std::fs::write(
        dir.join("real-pkgs.nix"),
        REAL_PKGS
            .replace("HOST_PATH", &std::env::var("PATH").unwrap())
            .replace("MIRROR", "file:///nonexistent"),
    )
    .unwrap();
    std::fs::write(dir.join("packages.nix"), REAL_PACKAGES).unwrap();
    #[allow(deprecated)]
    let binary = assert_cmd::cargo::cargo_bin("hermes-plugins");
    std::fs::write(
        dir.join("generation.nix"),
        REAL_GENERATION.replace("BINARY", binary.to_str().unwrap()),
    )
    .unwrap();
    // The generic form (`--from-json`) says the same: the wheel among the Python packages,
    // no plugin directory; with `--plugins-only`, a refusal naming it when evaluated.
    if let Some(instantiate) = nix_tool("nix-instantiate") {
        for (options, expected) in [(&[][..], Ok(())), (&["--plugins-only"][..], Err("`sky`"))] {
            let mut args = vec!["nix", "expr", "--from-json", "lock.json"];
            args.extend_from_slice(options);
            let out = w.cmd(&args).current_dir(&dir).output().unwrap();
            std::fs::write(dir.join("generic.nix"), common::succeeded(out)).unwrap();
            std::fs::write(
                dir.join("names.nix"),
                "let cfg = (import ./generic.nix { pkgs = import ./real-pkgs.nix; }).services.hermes-agent; in { plugins = map (p: p.name) cfg.extraPlugins; python = map (p: p.name) cfg.extraPythonPackages; }",
            )
            .unwrap();
            let out = Command::new(&instantiate)
                .args(["--eval", "--strict", "--json"])
                .arg(dir.join("names.nix"))
                .output()
                .unwrap();
            match expected {
                Ok(()) => {
                    let seen: Value = serde_json::from_slice(&common::succeeded(out)).unwrap();
                    assert_eq!(seen["plugins"], serde_json::json!([]), "{seen:#}");
                    let python = seen["python"].to_string();
                    assert!(python.contains("python-hermes-sky-1.0.0"), "{seen:#}");
                }
                Err(named) => {
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    assert!(!out.status.success(), "evaluated: {stderr}");
                    assert!(stderr.contains(named), "{stderr}");
                }
            }
        }
    }
    let built = nix_build(&nix_build_tool, &dir, "packages.nix", &[]);
    assert_eq!(built.len(), 2, "{built:?}");
    let site = |i: usize| format!("{}/lib/site-packages", built[i]);
    let imported = Command::new("python3")
        .args(["-c", "import hermes_sky.plugin, skylib; print('ok')"])
        .env("PYTHONPATH", format!("{}:{}", site(0), site(1)))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&common::succeeded(imported)).trim(),
        "ok"
    );
    let generation = nix_build(&nix_build_tool, &dir, "generation.nix", &[]);
    assert_eq!(generation.len(), 1, "{generation:?}");
    let doc: Value = common::read_json(&Path::new(&generation[0]).join("generation.json"));
    assert_eq!(doc["plugins"][0]["key"], "sky", "{doc:#}");
    let _ = Command::new(nix_store)
        .arg("--delete")
        .args(&generation)
        .args(&built)
        .output();
}
