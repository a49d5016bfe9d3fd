#!/usr/bin/env bash
# Every ```rust block of the repository's Markdown files compiles in a crate made by today's `cargo new`
# (its default edition: 2024, where `gen` is a reserved word), with the workspace crates as path
# dependencies as the install table adds them (`cargo add --path $SNOWMINT/core --features serde`,
# `cargo add --path $SNOWMINT/coord`) and serde_json. Each block becomes one binary of that crate
# (src/bin/): a block with its own `fn main` as written; otherwise its leading `use` lines at the top and
# the rest as the body of a function returning a Result, as rustdoc wraps a doctest (`# ` lines are
# rustdoc's hidden lines: kept without the mark; a body ending in `Ok::<…>(())` returns that). Compiled
# by `cargo check` (every error the compiler gives before code generation: names, types, traits, borrows,
# the edition's keywords), not linked or run: the blocks name stores and servers of their own.
# The crate is made afresh in a temporary directory outside the repository (inside it, `cargo new` would
# join the workspace and inherit its edition); it checks into the workspace's target/ (its dependencies'
# metadata is what `cargo clippy --workspace` made just before in the core stage, so only the path crates
# and the snippets are checked: about 15 s, where a build into a folder of its own took a minute cold).
# Offline: the workspace's lockfile pins every crate.
#   scripts/test-readme-rust.sh [FILE.md…]   (default: every tracked *.md with a rust block)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_cargo
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
CRATE="$T/my-app"
export CARGO_TARGET_DIR="$TARGET" CARGO_NET_OFFLINE=true

if [ $# -eq 0 ]; then
  mapfile -t files < <(cd "$ROOT" && git ls-files '*.md' | xargs grep -l '^```rust' | grep -v '^CHANGELOG.md$')
  set -- "${files[@]}"
fi

# The crate, as a user makes it: `cargo new`, then the install table's `cargo add` lines.
cargo new --quiet --vcs none "$CRATE"
cp "$ROOT/Cargo.lock" "$CRATE/Cargo.lock"   # the workspace's versions: no new download, no drift
(cd "$CRATE" && cargo add --quiet --path "$ROOT/core" --features serde \
   && cargo add --quiet --path "$ROOT/coord" && cargo add --quiet serde_json)
edition=$(sed -n 's/^edition = "\(.*\)"/\1/p' "$CRATE/Cargo.toml")
[ -n "$edition" ] || { echo "test-readme-rust: no edition in the new crate's Cargo.toml" >&2; exit 1; }
echo "== a crate made by cargo new (edition $edition), path dependencies on core and coord"
mkdir -p "$CRATE/src/bin"

n=0
for md in "$@"; do
  # One file per block: NAME.rs, named after the Markdown file and the block's first line number.
  python3 - "$ROOT/$md" "$md" "$CRATE/src/bin" <<'PY'
import re, sys
path, shown, out = sys.argv[1:]
lines = open(path, encoding="utf-8").read().split("\n")
block, start = None, 0
for i, line in enumerate(lines, 1):
    if block is None and re.fullmatch(r"```rust\b.*", line) and "ignore" not in line:
        block, start = [], i
    elif block is not None and line == "```":
        code = [l[2:] if l.startswith("# ") else ("" if l == "#" else l) for l in block]
        name = re.sub(r"[^a-z0-9]+", "_", shown.lower()).strip("_") + f"_line{start}"
        head = f"// {shown}, the ```rust block at line {start}\n#![allow(unused)]\n"
        text = "\n".join(code)
        if re.search(r"^\s*(pub\s+)?fn\s+main\s*\(", text, re.M):
            src = head + text + "\n"
        else:
            uses = []
            while code and (code[0].startswith("use ") or not code[0].strip() or code[0].startswith("//")):
                uses.append(code.pop(0))
            body = "\n".join("        " + l if l else "" for l in code)
            last = next((l.strip() for l in reversed(code) if l.strip()), "")
            if last.startswith("Ok::<"):
                run = f"    let _run = || {{\n{body}\n    }};\n"
            else:
                run = ("    let _run = || -> Result<(), Box<dyn std::error::Error>> {\n"
                       f"{body}\n        Ok(())\n    }};\n")
            src = head + "\n".join(uses) + "\n\nfn main() {\n" + run + "}\n"
        open(f"{out}/{name}.rs", "w", encoding="utf-8").write(src)
        print(f"   {shown}:{start} -> src/bin/{name}.rs")
        block = None
    elif block is not None:
        block.append(line)
PY
done
n=$(find "$CRATE/src/bin" -name '*.rs' | wc -l)
[ "$n" -ge 4 ] || { echo "test-readme-rust: expected the READMEs' rust blocks, found $n" >&2; exit 1; }
# A failing block shows its file and line (the first line of each generated file) in cargo's error.
(cd "$CRATE" && cargo check --quiet --bins 2>&1) || {
  echo "test-readme-rust: a README's Rust block does not compile in a new crate (edition $edition; above)" >&2
  exit 1
}
echo "test-readme-rust: $n blocks compiled in a new crate (edition $edition)"
