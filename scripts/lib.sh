# Shared helpers for the repository's scripts (sourced, not run).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"

# The conformance record's folder (scripts/check-conformance.py), when set: created and made absolute, so
# runners that change directory write where the caller meant.
conformance_dir_absolute() {
  [ -n "${SNOWMINT_CONFORMANCE_DIR:-}" ] || return 0
  mkdir -p "$SNOWMINT_CONFORMANCE_DIR"
  SNOWMINT_CONFORMANCE_DIR="$(cd "$SNOWMINT_CONFORMANCE_DIR" && pwd)"
  export SNOWMINT_CONFORMANCE_DIR
}

# Installs Debian packages that are missing (apt-get update once per run).
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ -z "${SNOWMINT_APT_UPDATED:-}" ]; then apt-get update -qq; export SNOWMINT_APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Node.js and npm from Debian when missing.
need_node() {
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && return 0
  apt_install nodejs npm
}

# Fails with a clear message when cargo is missing (Rust comes from rustup; scripts/setup.sh says how).
need_cargo() {
  [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
  command -v cargo >/dev/null 2>&1 && return 0
  echo "cargo not found: install Rust with rustup (https://rustup.rs), then run scripts/setup.sh" >&2
  return 1
}

# Adds rustup targets that are missing.
rust_targets() {
  local installed; installed="$(rustup target list --installed)"
  for t in "$@"; do grep -qx "$t" <<<"$installed" || rustup target add "$t"; done
}
