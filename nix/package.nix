# The hermes-plugins binary, built from this repository with Cargo.lock pinning every crate.
# Used by flake.nix (`packages.default`, `overlays.default`); also callable on its own:
#   pkgs.callPackage ./nix/package.nix { }
{
  lib,
  rustPlatform,
  pkg-config,
  perl,
  cmake,
}:

let
  manifest = (builtins.fromTOML (builtins.readFile ../Cargo.toml)).package;
  # Everything cargo reads (sources, benches and tests are declared targets, fixtures feed
  # the tests), and nothing a local build leaves behind.
  unwanted = [
    ".git"
    "target"
    "result"
    ".ci"
  ];
in
rustPlatform.buildRustPackage {
  pname = manifest.name;
  inherit (manifest) version;

  src = lib.cleanSourceWith {
    name = "${manifest.name}-source";
    src = ../.;
    filter = path: _type: !(builtins.elem (baseNameOf path) unwanted);
  };

  cargoLock.lockFile = ../Cargo.lock;

  # git2's vendored OpenSSL needs perl; aws-lc-sys (through uv's TLS stack) may need cmake;
  # the -sys crates find system libraries through pkg-config.
  nativeBuildInputs = [
    pkg-config
    perl
    cmake
  ];

  # The test suite needs a Hermes Agent virtualenv, a loopback package index it builds, git
  # and Nix itself: run it with `.ci/run`, not inside the sandbox.
  doCheck = false;

  meta = {
    inherit (manifest) description;
    license = with lib.licenses; [
      mit
      asl20
    ];
    mainProgram = "hermes-plugins";
    platforms = lib.platforms.unix;
  };
}
