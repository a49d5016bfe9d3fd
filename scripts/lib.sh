# Shared helpers for the repository's scripts (sourced, not run).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$HOME/.cargo/bin:$PATH"

# The conformance record's folder (scripts/check-conformance.py), when set: created and made absolute, so
# runners that change directory write where the caller meant.
# The CLI's test files (cli/tests/NAME.rs) that run against every store: coord/test.sh runs them with
# the servers up (SNOWMINT_TEST_STORES); the core stage runs every other file of cli/tests/ (cli_core_tests),
# so each file runs once in `make test`, and a new file runs in the core stage unless named here.
CLI_STORE_TESTS="leases hints history range orphan_claim"
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

# --- the stage table (scripts/stages.sh) ------------------------------------------------------------
# stages_load: reads scripts/stages.sh into
# STAGE_ORDER (the names, in order) and, by name, STAGE_IN, STAGE_BESIDE, STAGE_AFTER, STAGE_NEEDS (space-
# separated; "" for none), STAGE_COMMAND, STAGE_POS, and ARTIFACT_BY, ARTIFACT_FILE, ARTIFACT_WHAT.
# Fails, saying what is wrong, on a table that is not consistent: a name twice, an unknown suite, AFTER
# naming no earlier stage that runs beside the others, a need no ARTIFACTS line defines, made by no stage
# or by a stage that comes after the one needing it, a script that does not exist.
stages_load() {
  local file="$ROOT/scripts/stages.sh" name suites beside after needs cmd what n=0 errors=() a s
  local STAGES="" ARTIFACTS=""
  # shellcheck source=stages.sh
  source "$file" || return 1
  declare -gA STAGE_IN=() STAGE_BESIDE=() STAGE_AFTER=() STAGE_NEEDS=() STAGE_COMMAND=() STAGE_POS=()
  declare -gA ARTIFACT_BY=() ARTIFACT_FILE=() ARTIFACT_WHAT=()
  declare -ga STAGE_ORDER=()
  while read -r name suites beside after needs cmd; do
    [ -z "$name" ] || [ "${name:0:1}" = "#" ] && continue
    [ -n "${STAGE_POS[$name]:-}" ] && errors+=("stage $name: defined twice")
    [ -n "$cmd" ] || errors+=("stage $name: no COMMAND (the line needs six columns)")
    case ",$suites," in *,test,*|*,long,*) ;; *) errors+=("stage $name: IN is '$suites', not test, long or test,long") ;; esac
    case "$beside" in yes|-) ;; *) errors+=("stage $name: BESIDE is '$beside', not yes or -") ;; esac
    STAGE_POS[$name]=$n; n=$((n + 1)); STAGE_ORDER+=("$name")
    STAGE_IN[$name]="$suites"; STAGE_BESIDE[$name]="$beside"; STAGE_AFTER[$name]="${after#-}"
    needs="${needs#-}"; STAGE_NEEDS[$name]="${needs//,/ }"; STAGE_COMMAND[$name]="$cmd"
  done <<<"$STAGES"
  while read -r name a cmd what; do
    [ -z "$name" ] || [ "${name:0:1}" = "#" ] && continue
    ARTIFACT_BY[$name]="$a"; ARTIFACT_FILE[$name]="$cmd"; ARTIFACT_WHAT[$name]="$what"
    [ -n "${STAGE_POS[$a]:-}" ] || errors+=("artifact $name: made by stage '$a', which STAGES does not define")
  done <<<"$ARTIFACTS"
  for name in "${STAGE_ORDER[@]}"; do
    read -ra cmd <<<"${STAGE_COMMAND[$name]}"
    [ -z "${cmd[0]:-}" ] || [ -f "${cmd[0]}" ] || [ -f "$ROOT/${cmd[0]}" ] || errors+=("stage $name: no script ${cmd[0]}")
    after="${STAGE_AFTER[$name]}"
    if [ -n "$after" ] && [ "$after" != all ]; then
      if [ -z "${STAGE_POS[$after]:-}" ] || [ "${STAGE_POS[$after]}" -ge "${STAGE_POS[$name]}" ]; then
        errors+=("stage $name: AFTER $after, which is not a stage before it")
      elif [ "${STAGE_BESIDE[$after]}" != yes ]; then
        errors+=("stage $name: AFTER $after, which does not run beside the others (every stage starts after it anyway)")
      fi
    fi
    for a in ${STAGE_NEEDS[$name]}; do
      s="${ARTIFACT_BY[$a]:-}"
      if [ -z "$s" ]; then errors+=("stage $name: needs $a, which no ARTIFACTS line defines"); continue; fi
      [ -n "${STAGE_POS[$s]:-}" ] || continue
      # (in a suite of both: a stage in another suite takes it from an earlier run)
      [ "${STAGE_POS[$s]}" -lt "${STAGE_POS[$name]}" ] || ! stages_share_suite "$s" "$name" \
        || errors+=("stage $name: needs $a, made by stage $s, which comes after it")
    done
  done
  [ ${#errors[@]} -eq 0 ] && return 0
  printf '%s: %s\n' "${file#"$ROOT"/}" "${errors[@]}" >&2
  return 1
}
stages_share_suite() { # stages_share_suite A B: true if A and B run in one suite (test or long)
  local x
  for x in ${STAGE_IN[$1]//,/ }; do case ",${STAGE_IN[$2]}," in *",$x,"*) return 0 ;; esac; done
  return 1
}
# artifact_path NAME: prints the file that shows artifact NAME was made (its FILE, expanded), or nothing.
artifact_path() {
  local p="${ARTIFACT_FILE[$1]//\$TARGET/${CARGO_TARGET_DIR:-$ROOT/target}}"
  case "$p" in /*) ;; *) p="$ROOT/$p" ;; esac
  compgen -G "$p" | head -n1
}
# need_missing STAGE NEED: the first half of the message for a missing need (the caller says why).
need_missing() {
  local f="${ARTIFACT_FILE[$2]//\$TARGET/${CARGO_TARGET_DIR:-target}}"
  echo "stage $1 needs $2 (${ARTIFACT_WHAT[$2]}: ${f#"$ROOT"/}), made by stage ${ARTIFACT_BY[$2]}"
}
# stage_needs STAGE: for a stage script run by itself (not through scripts/test-all.sh, which checks more:
# that a stage of this run made it): fails, saying which stage makes it, if a need of STAGE is missing.
stage_needs() {
  stages_load || return 1
  local a rc=0
  for a in ${STAGE_NEEDS[$1]:-}; do
    [ -n "$(artifact_path "$a")" ] && continue
    echo "$(need_missing "$1" "$a"); there is none: run that stage first (make test-${ARTIFACT_BY[$a]})" >&2
    rc=1
  done
  return "$rc"
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
