# Shared helpers for the repository's scripts (sourced, not run).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"

# Installs Debian packages that are missing (apt-get update once per run).
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ -z "${SNOWMINT_APT_UPDATED:-}" ]; then apt-get update -qq; export SNOWMINT_APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Adds rustup targets that are missing.
rust_targets() {
  local installed; installed="$(rustup target list --installed)"
  for t in "$@"; do grep -qx "$t" <<<"$installed" || rustup target add "$t"; done
}
