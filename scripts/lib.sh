# Shared helpers for the repository's scripts (sourced, not run).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"

# The conformance record's folder (scripts/check-conformance.py), when set: created and made absolute, so
# runners that change directory write where the caller meant.
# The CLI's test files (cli/tests/NAME.rs) that run against every store: coord/test.sh runs them with
# the servers up (SNOWMINT_TEST_STORES); the core stage runs every other file of cli/tests/ (cli_core_tests),
# so each file runs once in `make test`, and a new file runs in the core stage unless named here.
CLI_STORE_TESTS="leases hints history range"
cli_core_tests() {   # prints `--test NAME` for each file of cli/tests/ not in CLI_STORE_TESTS
  local f n
  for f in "$ROOT"/cli/tests/*.rs; do
    n="$(basename "$f" .rs)"
    case " $CLI_STORE_TESTS " in *" $n "*) ;; *) printf -- '--test %s ' "$n" ;; esac
  done
}
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

# Builds beside each other (`make demo`: libsnowmint, the wheel and the Node addon at once). Cargo builds
# one thing at a time in a target folder (its lock), so each build beside another needs a folder of its
# own; a copy of target/release is one, which cargo finds current, so each build compiles only its own
# crates on the shared dependency graph. No build may read a folder another build is writing: the copies
# are taken by `beside_prepare`, before any of the builds starts (a copy taken by a build once started
# read target/release while the C build wrote into it: "cp: cannot stat …rcgu.o", `make demo` failed).
#   beside_prepare NAME…   copies target/release into target/beside/NAME for each NAME (nothing may be
#                          building in target/release meanwhile) and sets SNOWMINT_BUILD_BESIDE=1
#   cargo_dir_beside NAME  the folder a release build uses: the prepared target/beside/NAME when
#                          SNOWMINT_BUILD_BESIDE=1 (fails if it was not prepared: never copies by
#                          itself), otherwise the target folder itself
#   cargo_dir_done DIR     removes DIR if it is a prepared copy (a few hundred megabytes each)
#   beside_done            unsets SNOWMINT_BUILD_BESIDE and removes what is left of the copies
beside_prepare() {
  local target="${CARGO_TARGET_DIR:-$ROOT/target}" name
  [ -d "$target/release" ] || mkdir -p "$target/release"
  for name in "$@"; do
    rm -rf "$target/beside/$name" && mkdir -p "$target/beside/$name" &&
      cp -a "$target/release" "$target/beside/$name/release" || return 1
  done
  export SNOWMINT_BUILD_BESIDE=1
}
cargo_dir_beside() {
  local target="${CARGO_TARGET_DIR:-$ROOT/target}"
  if [ "${SNOWMINT_BUILD_BESIDE:-}" = 1 ]; then
    [ -d "$target/beside/$1/release" ] || {
      echo "cargo_dir_beside: $target/beside/$1 was not prepared (beside_prepare $1, before any build starts)" >&2
      return 1
    }
    echo "$target/beside/$1"
  else
    echo "$target"
  fi
}
cargo_dir_done() {
  case "$1" in "${CARGO_TARGET_DIR:-$ROOT/target}/beside/"*) rm -rf "$1" ;; esac
}
beside_done() {
  unset SNOWMINT_BUILD_BESIDE
  rm -rf "${CARGO_TARGET_DIR:-$ROOT/target}/beside"
}

# Adds rustup targets that are missing.
rust_targets() {
  local installed; installed="$(rustup target list --installed)"
  for t in "$@"; do grep -qx "$t" <<<"$installed" || rustup target add "$t"; done
}

# Downloads Debian packages of another CPU architecture (`foreign_debs DIR libcjson1:arm64 …`) into DIR
# without installing them, skipping those already there. dpkg knows the foreign architectures only for
# the download: they are removed again at once (with them, `apt-get update` exits non-zero on mirrors
# that lack some of their index files, which would break every later apt_install).
foreign_debs() {
  local dir="$1"; shift
  local missing=() spec name arch
  for spec in "$@"; do
    name="${spec%%:*}"; arch="${spec#*:}"
    compgen -G "$dir/${name}_*_$arch.deb" >/dev/null || compgen -G "$dir/${name}_*_all.deb" >/dev/null || missing+=("$spec")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  mkdir -p "$dir" && chmod 777 "$dir"
  local added=() a
  for spec in "${missing[@]}"; do
    a="${spec#*:}"
    [ "$a" = "$spec" ] || [ "$a" = all ] && continue
    dpkg --print-foreign-architectures | grep -qx "$a" || { dpkg --add-architecture "$a"; added+=("$a"); }
  done
  apt-get update -qq >/dev/null 2>&1 || true
  local rc=0
  (cd "$dir" && apt-get download -qq "${missing[@]}") || rc=$?
  for a in "${added[@]}"; do dpkg --remove-architecture "$a"; done
  [ ${#added[@]} -eq 0 ] || apt-get update -qq >/dev/null 2>&1 || true
  return "$rc"
}

# Unpacks every .deb in DIR into ROOT (once): a foreign system root for `qemu-ARCH -L ROOT`.
unpack_debs() {
  local dir="$1" root="$2" d
  [ -f "$root/.unpacked" ] && return 0
  mkdir -p "$root"
  for d in "$dir"/*.deb; do dpkg -x "$d" "$root"; done
  touch "$root/.unpacked"
}

# The PostgreSQL server's development files (PGXS and the server headers; pg/, the extension): Debian's
# postgresql-server-dev-15, at the installed server's version when the archive still has it (so that
# nothing else is upgraded), else the newest.
need_pg_dev() {
  dpkg -s postgresql-server-dev-15 >/dev/null 2>&1 && return 0
  local v; v="$(dpkg-query -W -f='${Version}' postgresql-15 2>/dev/null || true)"
  if [ -n "$v" ] && apt_install "postgresql-server-dev-15=$v"; then return 0; fi
  apt_install postgresql-server-dev-15
}
