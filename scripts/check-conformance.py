#!/usr/bin/env python3
"""Checks that every runtime ran and passed EVERY case of EVERY tests/vectors/*.json file.

Each conformance runner, when SNOWMINT_CONFORMANCE_DIR names a directory, appends one line per case it
ran to $SNOWMINT_CONFORMANCE_DIR/<runtime>.txt:

    file.json<TAB>case name<TAB>pass|fail

(runtimes: rust, c, python, node, wasm-node, wasm-browser, postgres: the PostgreSQL extension). A
runtime may run the corpus several times (the C runner runs statically linked, shared, under valgrind
and ASan): records are merged, and a case passes only if it ran at least once and every record of it says pass.

Usage:
    scripts/check-conformance.py [DIR]      DIR defaults to $SNOWMINT_CONFORMANCE_DIR, else target/conformance
        --vectors DIR                       the corpus (default tests/vectors)
        --runtimes a,b,c                    the runtimes required (default all seven)
    scripts/check-conformance.py --self-test [DIR]
        builds a complete result directory from the corpus, checks that it passes, then that each of a
        set of damaged copies (one case removed from one runtime, a case failed, a runtime missing, a
        record for a case the corpus lacks, a malformed line) makes the checker fail; with DIR (the
        results of a passing run), also that a copy of it with one case removed from one runtime's
        file fails, for each runtime in turn.

Prints per runtime `name: N passed, M failed, K missing` and a final `conformance: N passed, N failed`
line counting runtimes; exits 1 if any runtime is missing, skipped a case or failed one (2 on bad usage
or an unreadable corpus).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNTIMES = ("rust", "c", "python", "node", "wasm-node", "wasm-browser", "postgres")
SHOWN = 8  # names listed per problem kind and runtime


class CorpusError(Exception):
    """The corpus itself cannot be read (the runners reject such a corpus too)."""


def load_corpus(vectors: Path) -> dict[str, list[str]]:
    """{file name: [case names]} for every *.json file; refuses duplicates, empty files and bad names."""

    def no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
        d: dict[str, object] = {}
        for k, v in pairs:
            if k in d:
                raise CorpusError(f"duplicate key {k!r}")
            d[k] = v
        return d

    files = sorted(vectors.glob("*.json"))
    if not files:
        raise CorpusError(f"no *.json files in {vectors}")
    corpus: dict[str, list[str]] = {}
    for path in files:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=no_duplicate_keys)
        except (OSError, ValueError, CorpusError) as e:
            raise CorpusError(f"{path.name}: {e}") from None
        cases = doc.get("cases") if isinstance(doc, dict) else None
        if not isinstance(cases, list) or not cases:
            raise CorpusError(f"{path.name}: no cases")
        names: list[str] = []
        for c in cases:
            name = c.get("name") if isinstance(c, dict) else None
            if not isinstance(name, str) or not name:
                raise CorpusError(f"{path.name}: a case without a name")
            if any(ch in name for ch in "\t\r\n"):
                raise CorpusError(f"{path.name}: case name {name!r} holds a tab or line break")
            if name in names:
                raise CorpusError(f"{path.name}: duplicate case name {name!r}")
            names.append(name)
        corpus[path.name] = names
    return corpus


def read_records(path: Path) -> tuple[dict[tuple[str, str], list[str]], list[str]]:
    """{(file, case): [outcome, …]} from one runtime's file, and its malformed lines."""
    records: dict[tuple[str, str], list[str]] = {}
    bad: list[str] = []
    text = path.read_text(encoding="utf-8", errors="replace")
    for n, line in enumerate(text.splitlines(), 1):
        if not line:
            continue
        parts = line.split("\t")
        if len(parts) != 3 or parts[2] not in ("pass", "fail") or not parts[0] or not parts[1]:
            bad.append(f"line {n}: {line[:120]!r}")
            continue
        records.setdefault((parts[0], parts[1]), []).append(parts[2])
    return records, bad


def check(results: Path, vectors: Path, runtimes: tuple[str, ...], out=sys.stdout) -> int:
    """Prints the report; returns the exit status."""
    try:
        corpus = load_corpus(vectors)
    except CorpusError as e:
        print(f"check-conformance: cannot read the corpus: {e}", file=out)
        print(f"conformance: 0 passed, {len(runtimes)} failed", file=out)
        return 2
    expected = [(f, name) for f, names in corpus.items() for name in names]
    total = len(expected)
    ok_runtimes = bad_runtimes = 0
    print(f"check-conformance: {total} cases in {len(corpus)} files of {vectors}; results in {results}", file=out)
    for rt in runtimes:
        path = results / f"{rt}.txt"
        if not path.is_file():
            print(f"{rt}: 0 passed, 0 failed, {total} missing (no {path.name}: the runtime did not record)", file=out)
            bad_runtimes += 1
            continue
        records, malformed = read_records(path)
        passed = [k for k in expected if k in records and all(o == "pass" for o in records[k])]
        failed = [k for k in expected if k in records and any(o == "fail" for o in records[k])]
        missing = [k for k in expected if k not in records]
        unknown = sorted(k for k in records if k[0] not in corpus or k[1] not in corpus[k[0]])
        runs = {len(v) for v in records.values()}
        extra = ""
        if runs and max(runs) > 1:
            extra = f" ({max(runs)} runs per case)" if len(runs) == 1 else f" ({min(runs)} to {max(runs)} runs per case)"
        print(f"{rt}: {len(passed)} passed, {len(failed)} failed, {len(missing)} missing{extra}", file=out)
        for label, items in (("failed", failed), ("missing", missing), ("not in the corpus", unknown)):
            for f, name in items[:SHOWN]:
                print(f"    {label}: {f}: {name}", file=out)
            if len(items) > SHOWN:
                print(f"    … and {len(items) - SHOWN} more {label}", file=out)
        for line in malformed[:SHOWN]:
            print(f"    malformed {line}", file=out)
        if failed or missing or unknown or malformed or len(passed) != total:
            bad_runtimes += 1
        else:
            ok_runtimes += 1
    others = sorted(p.stem for p in results.glob("*.txt") if p.stem not in runtimes) if results.is_dir() else []
    if others:
        print(f"check-conformance: note: results of runtimes not checked: {', '.join(others)}", file=out)
    print(f"conformance: {ok_runtimes} passed, {bad_runtimes} failed", file=out)
    return 0 if bad_runtimes == 0 else 1


# ---- self-test ---------------------------------------------------------------------------------------


def self_test(vectors: Path, real: Path | None = None) -> int:
    """The checker must pass a complete result set and fail each damaged copy of it; with `real` (a
    results directory of a passing run), also copies of the real results with one case removed."""
    import io

    corpus = load_corpus(vectors)
    first_file = next(iter(corpus))
    last_file = list(corpus)[-1]
    victim = (last_file, corpus[last_file][len(corpus[last_file]) // 2])

    def complete(d: Path) -> None:
        d.mkdir(parents=True)
        for rt in RUNTIMES:
            lines = [f"{f}\t{n}\tpass\n" for f, names in corpus.items() for n in names]
            if rt == "c":  # several runs, as the C runner does: dedupe
                lines = lines * 3
            (d / f"{rt}.txt").write_text("".join(lines), encoding="utf-8")

    def drop_case(d: Path, rt: str, key: tuple[str, str]) -> None:
        p = d / f"{rt}.txt"
        keep = [l for l in p.read_text().splitlines(True) if l.split("\t")[:2] != list(key)]
        p.write_text("".join(keep))

    def fail_case(d: Path, rt: str, key: tuple[str, str]) -> None:
        with open(d / f"{rt}.txt", "a") as f:
            f.write(f"{key[0]}\t{key[1]}\tfail\n")

    def append(d: Path, rt: str, line: str) -> None:
        with open(d / f"{rt}.txt", "a") as f:
            f.write(line)

    damages = {
        "one case removed from python": lambda d: drop_case(d, "python", victim),
        "one case removed from wasm-browser": lambda d: drop_case(d, "wasm-browser", (first_file, corpus[first_file][0])),
        "one case removed from every C run": lambda d: drop_case(d, "c", victim),
        "a case failed in one of the C runs": lambda d: fail_case(d, "c", victim),
        "a case failed in rust": lambda d: fail_case(d, "rust", (first_file, corpus[first_file][-1])),
        "node results missing": lambda d: (d / "node.txt").unlink(),
        "wasm-node results empty": lambda d: (d / "wasm-node.txt").write_text(""),
        "a whole file not run by python": lambda d: (d / "python.txt").write_text(
            "".join(l for l in (d / "python.txt").read_text().splitlines(True) if not l.startswith(first_file + "\t"))),
        "a record of a case the corpus lacks": lambda d: append(d, "node", f"{first_file}\tno such case\tpass\n"),
        "a record of a file the corpus lacks": lambda d: append(d, "rust", "extra.json\tx\tpass\n"),
        "a malformed line": lambda d: append(d, "wasm-node", f"{first_file}\t{corpus[first_file][0]}\tok\n"),
        "an unknown outcome word": lambda d: append(d, "c", f"{victim[0]}\t{victim[1]}\tskipped\n"),
    }
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="snowmint-conformance-selftest-") as tmp:
        base = Path(tmp) / "complete"
        complete(base)
        buf = io.StringIO()
        rc = check(base, vectors, RUNTIMES, out=buf)
        if rc == 0 and f"conformance: {len(RUNTIMES)} passed, 0 failed" in buf.getvalue():
            passed += 1
            print("ok   complete results pass")
        else:
            failed += 1
            print(f"FAIL complete results do not pass (exit {rc}):\n{buf.getvalue()}")
        for i, (what, damage) in enumerate(damages.items()):
            d = Path(tmp) / f"damaged-{i}"
            shutil.copytree(base, d)
            damage(d)
            buf = io.StringIO()
            rc = check(d, vectors, RUNTIMES, out=buf)
            if rc == 1 and f"conformance: {len(RUNTIMES) - 1} passed, 1 failed" in buf.getvalue():
                passed += 1
                print(f"ok   fails on: {what}")
            else:
                failed += 1
                print(f"FAIL accepted (exit {rc}): {what}\n{buf.getvalue()}")
        # The real thing: one case removed from one runtime, through the command line.
        d = Path(tmp) / "cli"
        shutil.copytree(base, d)
        drop_case(d, "rust", victim)
        import subprocess

        r = subprocess.run([sys.executable, __file__, str(d), "--vectors", str(vectors)], capture_output=True, text=True)
        if r.returncode == 1 and "rust: " in r.stdout and " 1 missing" in r.stdout:
            passed += 1
            print("ok   command line exits 1 with one case removed from rust")
        else:
            failed += 1
            print(f"FAIL command line exit {r.returncode}:\n{r.stdout}{r.stderr}")
        # Copies of real results (a passing run of the runners): one case removed from each runtime's
        # file in turn must make the check fail.
        if real is not None:
            buf = io.StringIO()
            if check(real, vectors, RUNTIMES, out=buf) != 0:
                failed += 1
                print(f"FAIL the real results in {real} do not pass, so they cannot be damaged:\n{buf.getvalue()}")
            else:
                for rt in RUNTIMES:
                    d = Path(tmp) / f"real-{rt}"
                    shutil.copytree(real, d)
                    records, _ = read_records(d / f"{rt}.txt")
                    key = sorted(records)[len(records) // 2]
                    drop_case(d, rt, key)
                    buf = io.StringIO()
                    rc = check(d, vectors, RUNTIMES, out=buf)
                    if rc == 1 and f"{rt}: {len(records) - 1} passed, 0 failed, 1 missing" in buf.getvalue():
                        passed += 1
                        print(f"ok   fails on the real results with one case removed from {rt} ({key[0]}: {key[1]})")
                    else:
                        failed += 1
                        print(f"FAIL accepted the real results with {key} removed from {rt} (exit {rc}):\n{buf.getvalue()}")
    print(f"check-conformance self-test: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", nargs="?", help="the results directory")
    ap.add_argument("--vectors", default=str(ROOT / "tests" / "vectors"))
    ap.add_argument("--runtimes", default=",".join(RUNTIMES))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    vectors = Path(a.vectors)
    if a.self_test:
        return self_test(vectors, Path(a.dir) if a.dir else None)
    runtimes = tuple(r for r in a.runtimes.split(",") if r)
    if not runtimes:
        ap.error("--runtimes is empty")
    results = Path(a.dir or os.environ.get("SNOWMINT_CONFORMANCE_DIR") or ROOT / "target" / "conformance")
    if not results.is_dir():
        print(f"check-conformance: {results} is not a directory (set SNOWMINT_CONFORMANCE_DIR and run the tests)")
        print(f"conformance: 0 passed, {len(runtimes)} failed")
        return 1
    return check(results, vectors, runtimes)


if __name__ == "__main__":
    sys.exit(main())
