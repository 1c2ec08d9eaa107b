{
  description = "hermes-plugins: package manager and catalog toolchain for Hermes Agent plugins";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs =
    { self, nixpkgs }:
    let
      systems = [
        "x86_64-linux"
        "aarch64-linux"
        "x86_64-darwin"
        "aarch64-darwin"
      ];
      forEachSystem = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
    in
    {
      # `nix build`, `nix run . -- validate ./my-plugin`
      packages = forEachSystem (pkgs: rec {
        hermes-plugins = pkgs.callPackage ./nix/package.nix { };
        default = hermes-plugins;
      });

      # `nixpkgs.overlays = [ hermes-plugins.overlays.default ];` puts `pkgs.hermes-plugins` in
      # a NixOS configuration (for `environment.systemPackages`, or a derivation that runs
      # `hermes-plugins build --offline`).
      overlays.default = final: _prev: {
        hermes-plugins = final.callPackage ./nix/package.nix { };
      };
    };
}
