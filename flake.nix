{
  # panectl as a Nix flake: `nix build` (or `nix profile install`) builds the binary from this
  # repository with the locked dependencies, and installs the tmux plugin, the manual and the
  # completions beside it, as the Debian package does. `nix run . -- daemon` runs the daemon.
  description = "Tracks CLI coding agents in tmux panes through tmux control mode";

  # Rust 1.89 or newer is needed (Cargo.toml's rust-version): the unstable channel has it.
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixpkgs-unstable";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" "x86_64-darwin" "aarch64-darwin" ];
      forEach = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
    in
    {
      packages = forEach (pkgs: rec {
        panectl = pkgs.rustPlatform.buildRustPackage {
          pname = "panectl";
          version = "0.1.0";
          src = self;
          cargoLock.lockFile = ./Cargo.lock;
          nativeBuildInputs = [ pkgs.installShellFiles ];
          # The test suite starts tmux servers and real agent CLIs: run it with `.ci/run`.
          doCheck = false;
          postInstall = ''
            # The plugin next to the binary: it runs $out/bin/panectl ("packaged with the plugin").
            install -D -m 0755 panectl.tmux $out/share/tmux-plugins/panectl/panectl.tmux
            for script in plugin/*.sh; do
              install -D -m 0755 "$script" "$out/share/tmux-plugins/panectl/$script"
            done
            mkdir -p $out/share/man/man1
            $out/bin/panectl man --dir $out/share/man/man1
            installShellCompletion --cmd panectl \
              --bash <($out/bin/panectl completions bash --command panectl) \
              --zsh <($out/bin/panectl completions zsh --command panectl) \
              --fish <($out/bin/panectl completions fish --command panectl)
          '';
          meta = {
            description = "Tracks CLI coding agents in tmux panes through tmux control mode";
            license = with pkgs.lib.licenses; [ mit asl20 ];
            mainProgram = "panectl";
          };
        };
        default = panectl;
      });
      apps = forEach (pkgs: {
        default = {
          type = "app";
          program = "${self.packages.${pkgs.stdenv.hostPlatform.system}.panectl}/bin/panectl";
        };
      });
    };
}
