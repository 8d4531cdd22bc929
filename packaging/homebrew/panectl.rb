# Homebrew formula for panectl, built from the crate published on crates.io (the source
# tarball `cargo package` makes). `scripts/release-formula.sh` writes the version and the
# sha256 of that tarball here at a release; `scripts/check-packaging.sh` checks the rest.
class Panectl < Formula
  desc "Tracks CLI coding agents in tmux panes through tmux control mode"
  homepage "https://crates.io/crates/panectl"
  url "https://static.crates.io/crates/panectl/panectl-0.1.0.crate"
  sha256 "0000000000000000000000000000000000000000000000000000000000000000"
  license any_of: ["MIT", "Apache-2.0"]

  depends_on "rust" => :build
  depends_on "tmux"

  def install
    system "cargo", "install", *std_cargo_args
    # The tmux plugin, next to the binary: it runs PREFIX/bin/panectl ("packaged with the
    # plugin"). In ~/.tmux.conf: run-shell "$(brew --prefix)/share/tmux-plugins/panectl/panectl.tmux"
    (share/"tmux-plugins/panectl").install "panectl.tmux"
    (share/"tmux-plugins/panectl/plugin").install Dir["plugin/*.sh"]
    system bin/"panectl", "man", "--dir", man1
    # The scripts run `panectl` from PATH at each TAB.
    generate_completions_from_executable(bin/"panectl", "completions", "--command", "panectl",
                                         shells: [:bash, :zsh, :fish])
  end

  test do
    assert_match version.to_s, shell_output("#{bin}/panectl --version")
    assert_path_exists share/"tmux-plugins/panectl/panectl.tmux"
  end
end
