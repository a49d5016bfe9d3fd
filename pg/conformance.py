#!/usr/bin/env python3
"""The PostgreSQL extension's conformance runner (SPEC §7): every case of every tests/vectors/*.json file
through the extension's SQL functions, on a running server that preloads snowmint.

    pg/conformance.py PSQL_ARGS...     e.g. -h SOCKET_DIR -p PORT -U postgres -d DB

It connects with psql (one session per file; the database must have `CREATE EXTENSION snowmint`),
turns the test-only functions on (SET snowmint.test_functions, superuser only), runs each case as SQL
and compares the answers. With SNOWMINT_CONFORMANCE_DIR set it records one line per case in
$SNOWMINT_CONFORMANCE_DIR/postgres.txt (file, case, pass|fail), as every runtime's runner does.
Prints `FILE: N cases ran, N passed, N failed` per file; exits 1 if any case failed.

IDs are u64; SQL's bigint holds them as their two's complement (an ID at or above 2^63, from a layout
with the sign bit, is a negative bigint), so the runner converts both ways.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VECTORS = Path(os.environ.get("SNOWMINT_VECTORS_DIR", ROOT / "tests" / "vectors"))
SEP_FIELD = "\x1f"
CODES = {
    "INVALID_LAYOUT": 1, "NODE_ID_OUT_OF_RANGE": 2, "CLOCK_MOVED_BACKWARDS": 3, "CLOCK_BEFORE_EPOCH": 4,
    "TOO_FAR_AHEAD": 5, "LAYOUT_EXHAUSTED": 6, "PARSE": 7, "LEASE_LOST": 8, "INVALID_CLOCK": 9,
    "INVALID_ID": 10, "INVALID_ARGUMENT": 11, "FORKED": 12, "NODE_IDS_EXHAUSTED": 13,
    "SEQUENCER_CONFLICT": 14, "SEQUENCER_DESTROYED": 15, "STORE_UNAVAILABLE": 16,
    "STATE_FILE_MISMATCH": 17, "RANGE_EXHAUSTED": 18, "SERVICE_UNAVAILABLE": 19,
    "SEQUENCER_NOT_FOUND": 20, "STORE_NOT_FOUND": 21,
}
KEYS = {
    "layouts.json": {"name", "layout", "expect", "error", "field"},
    "generate.json": {"name", "layout", "node_id", "policy", "max_ahead_ms", "random_seed", "steps", "error"},
    "clock_readings.json": {"name", "layout", "reading", "error", "ns"},
    "decode.json": {"name", "layout", "id", "expect", "error"},
    "compose.json": {"name", "layout", "op", "timestamp_ticks", "node", "sequence", "unix_ms", "id", "error"},
    "encodings.json": {"name", "op", "id", "dec", "hex", "base32", "base58", "encoding", "input", "error",
                       "position", "readings"},
    "opaque.json": {"name", "layout", "key", "bits", "ids", "tokens", "op", "input", "error"},
    "node_sources.json": {"name", "layout", "source", "env", "node_id", "error"},
}


def lit(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def i64(u: str | int) -> str:
    v = int(u)
    return str(v - (1 << 64) if v >= 1 << 63 else v)


def u64(s: str) -> str:
    v = int(s)
    return str(v + (1 << 64) if v < 0 else v)


def layout(c: dict) -> str:
    return lit(json.dumps(c["layout"]))


class Result:
    def __init__(self, raw: str):
        parts = raw.split(SEP_FIELD)
        self.ok = parts[0] == "OK"
        self.value = parts[1] if self.ok else None
        self.sqlstate = parts[1] if not self.ok else None
        self.message = parts[2] if not self.ok else ""
        self.detail = parts[3] if not self.ok else ""

    @property
    def code(self) -> str | None:
        if self.ok:
            return None
        name = self.message.split(":", 1)[0]
        # The documented SQLSTATE of each project code: SM + its number.
        if name in CODES and self.sqlstate == f"SM{CODES[name]:03d}":
            return name
        return f"{self.sqlstate} {self.message}"


class Session:
    """Collects queries, runs them in one psql session, then hands back each answer in order."""

    def __init__(self, psql: list[str]):
        self.psql = psql
        self.queries: list[str] = []

    def add(self, query: str, pre: str | None = None) -> int:
        self.queries.append(f"SELECT pg_temp.try({lit(query)}, {lit(pre) if pre else 'NULL'});")
        return len(self.queries) - 1

    def run(self) -> list[Result]:
        script = "\n".join(
            [
                "SET snowmint.test_functions = on;",
                "SET client_min_messages = warning;",
                """CREATE FUNCTION pg_temp.try(q text, pre text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE r text; st text; m text; d text;
BEGIN
  IF pre IS NOT NULL THEN EXECUTE pre; END IF;
  EXECUTE q INTO r;
  RETURN 'OK' || chr(31) || coalesce(r, '');
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL;
  RETURN 'ERR' || chr(31) || st || chr(31) || replace(m, chr(10), ' ') || chr(31) || coalesce(d, '');
END $f$;""",
            ]
            + self.queries
        )
        out = subprocess.run(
            self.psql + ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-f", "-"],
            input=script, capture_output=True, text=True, timeout=300, check=False,
        )
        if out.returncode != 0:
            raise SystemExit(f"conformance.py: psql failed ({out.returncode}): {out.stderr.strip()}")
        # One line per answer: the answers hold no line break (try() replaces those of messages).
        rows = out.stdout.split("\n")[:-1]
        if len(rows) != len(self.queries):
            raise SystemExit(f"conformance.py: {len(rows)} answers for {len(self.queries)} queries")
        return [Result(r) for r in rows]


def ids_of(value: str) -> list[str]:
    inner = value.strip("{}")
    return [u64(x) for x in inner.split(",")] if inner else []


def value_or_error(c: dict, a: Result, key: str, conv=lambda v: v):
    """The common check: the case's error code, or its expected value under `key` (after `conv`)."""
    if "error" in c:
        return None if a.code == c["error"] else f"expected {c['error']}, got {a.code or a.value}"
    return None if a.ok and conv(a.value) == c[key] else f"expected {c[key]}, got {a.value or a.code}"


# Each checker adds its queries and returns a function that, given the answers, gives a failure or None.
def layouts_case(s: Session, c: dict):
    q = s.add(f"SELECT snowmint.layout_info({layout(c)})::text")

    def check(r: list[Result]):
        a = r[q]
        if "error" in c:
            if a.code != c["error"]:
                return f"expected {c['error']}, got {a.code or a.value}"
            if c.get("field") and c["field"] not in a.message:
                return f"message {a.message!r} does not name {c['field']!r}"
            return None
        if not a.ok:
            return f"error {a.code}"
        info = json.loads(a.value)
        for k, v in c["expect"].items():
            got = info.get(k)
            if str(got) != str(v):
                return f"{k}: expected {v}, got {got}"
        return None

    return check


def generate_case(s: Session, c: dict):
    seed = c.get("random_seed")
    q0 = s.add(
        f"SELECT snowmint.test_generator({layout(c)}, {c['node_id']}, {lit(c.get('policy', 'wait'))}, "
        f"{c.get('max_ahead_ms', 'NULL')}, {seed if seed is not None else 'NULL'})::text"
    )
    steps = []
    for st in c.get("steps", []):
        op = st["op"]
        if op in ("next", "batch"):
            pre = f"SELECT snowmint.test_clock(ARRAY[{','.join(st['clock'])}]::numeric[])"
            fn = "test_next" if op == "next" else "test_batch"
            steps.append((st, s.add(f"SELECT snowmint.{fn}({int(st['count'])})::text", pre)))
        elif op == "state":
            steps.append((st, s.add("SELECT snowmint.test_state()::text")))
        elif op == "restore":
            steps.append((st, s.add(f"SELECT snowmint.test_restore({st['state']})::text")))
        else:
            steps.append((st, None))

    def check(r: list[Result]):
        a = r[q0]
        if "error" in c:
            return None if a.code == c["error"] else f"expected {c['error']}, got {a.code or 'a generator'}"
        if not a.ok:
            return f"generator: {a.code}"
        last = -1
        for i, (st, q) in enumerate(steps):
            if q is None:
                return f"step {i}: unknown op {st['op']}"
            a = r[q]
            if "error" in st:
                if a.code != st["error"]:
                    return f"step {i}: expected {st['error']}, got {a.code or a.value}"
                continue
            if not a.ok:
                return f"step {i}: {a.code}"
            if st["op"] == "state":
                if a.value != st["state"]:
                    return f"step {i}: state {a.value}, expected {st['state']}"
                continue
            if st["op"] == "restore":
                continue  # its effect is checked by the state step the oracle puts after it
            got = ids_of(a.value)
            if len(got) != st["count"]:
                return f"step {i}: {len(got)} IDs, expected {st['count']}"
            if "ids" in st and got != st["ids"]:
                return f"step {i}: IDs {got[:4]}…, expected {st['ids'][:4]}…"
            if "first" in st and (got[0] != st["first"] or got[-1] != st["last"]):
                return f"step {i}: first/last {got[0]}/{got[-1]}, expected {st['first']}/{st['last']}"
            for g in got:
                if int(g) <= last:
                    return f"step {i}: IDs do not strictly increase"
                last = int(g)
        return None

    return check


def clock_readings_case(s: Session, c: dict):
    reading = c["reading"]
    text = reading if isinstance(reading, str) else json.dumps(reading)
    q = s.add(f"SELECT snowmint.test_clock_reading({layout(c)}, {lit(text)}::float8)::text")

    return lambda r: value_or_error(c, r[q], "ns")


def decode_case(s: Session, c: dict):
    q = s.add(f"SELECT to_jsonb(d)::text FROM snowmint.decode({i64(c['id'])}, {layout(c)}) d")

    def check(r: list[Result]):
        a = r[q]
        if "error" in c:
            return None if a.code == c["error"] else f"expected {c['error']}, got {a.code or a.value}"
        if not a.ok:
            return f"error {a.code}"
        d = json.loads(a.value)
        for k, v in c["expect"].items():
            got = d.get(k)
            if k in ("timestamp_ticks", "unix_ms", "node", "sequence"):
                got = u64(str(got))
            if str(got) != str(v):
                return f"{k}: expected {v}, got {got}"
        return None

    return check


def compose_case(s: Session, c: dict):
    if c["op"] == "compose":
        q = s.add(
            f"SELECT snowmint.compose({c['timestamp_ticks']}, {c['node']}, {c['sequence']}, {layout(c)})::text"
        )
    else:
        q = s.add(f"SELECT snowmint.min_id_at_ms({c['unix_ms']}, {layout(c)})::text")

    return lambda r: value_or_error(c, r[q], "id", u64)


def encodings_case(s: Session, c: dict):
    qs = []
    if c["op"] == "encode":
        for form in ("dec", "hex", "base32", "base58"):
            qs.append((form, s.add(f"SELECT snowmint.encode({i64(c['id'])}, {lit(form)})"),
                       s.add(f"SELECT snowmint.parse({lit(c[form])}, {lit(form)})::text")))
    else:
        q = s.add(f"SELECT snowmint.parse({lit(c['input'])}, {lit(c['encoding'])})::text")

    def check(r: list[Result]):
        if c["op"] == "encode":
            for form, qe, qp in qs:
                if not r[qe].ok or r[qe].value != c[form]:
                    return f"{form}: expected {c[form]!r}, got {r[qe].value or r[qe].code}"
                if not r[qp].ok or u64(r[qp].value) != c["id"]:
                    return f"{form}: parse gave {r[qp].value or r[qp].code}"
            return None
        a = r[q]
        if "error" in c:
            if a.code != c["error"]:
                return f"expected {c['error']}, got {a.code or a.value}"
            if "position" in c and a.detail != f"position {c['position']}":
                return f"position: expected {c['position']}, got {a.detail!r}"
            for form, value in c.get("readings", {}).items():
                if f"{form} {value}" not in a.message:
                    return f"message {a.message!r} does not name the reading {form} {value}"
            return None
        return None if a.ok and u64(a.value) == c["id"] else f"expected {c['id']}, got {a.value or a.code}"

    return check


def opaque_case(s: Session, c: dict):
    key = f"'\\x{c['key']}'::bytea"
    qs = []
    if "ids" in c:
        for i, t in zip(c["ids"], c["tokens"]):
            qs.append((i, t, s.add(f"SELECT snowmint.opaque_encode({i64(i)}, {key}, {layout(c)})::text"),
                       s.add(f"SELECT snowmint.opaque_decode({i64(t)}, {key}, {layout(c)})::text")))
    elif "op" in c:
        fn = "opaque_encode" if c["op"] == "encode" else "opaque_decode"
        q = s.add(f"SELECT snowmint.{fn}({i64(c['input'])}, {key}, {layout(c)})::text")
    else:
        q = s.add(f"SELECT snowmint.opaque_encode(0, {key}, {layout(c)})::text")

    def check(r: list[Result]):
        if "ids" in c:
            for i, t, qe, qd in qs:
                if not r[qe].ok or u64(r[qe].value) != t:
                    return f"encode {i}: expected {t}, got {r[qe].value or r[qe].code}"
                if not r[qd].ok or u64(r[qd].value) != i:
                    return f"decode {t}: expected {i}, got {r[qd].value or r[qd].code}"
            return None
        a = r[q]
        return None if a.code == c["error"] else f"expected {c['error']}, got {a.code or a.value}"

    return check


def node_sources_case(s: Session, c: dict):
    env = lit(json.dumps(c["env"])) + "::jsonb" if "env" in c else "NULL"
    q = s.add(f"SELECT snowmint.test_node_source({lit(c['source'])}, {layout(c)}, {env})::text")

    return lambda r: value_or_error(c, r[q], "node_id")


RUNNERS = {
    "layouts.json": layouts_case, "generate.json": generate_case, "clock_readings.json": clock_readings_case,
    "decode.json": decode_case, "compose.json": compose_case, "encodings.json": encodings_case,
    "opaque.json": opaque_case, "node_sources.json": node_sources_case,
}


def main() -> int:
    psql = ["psql"] + sys.argv[1:]
    record_dir = os.environ.get("SNOWMINT_CONFORMANCE_DIR")
    records: list[str] = []
    failed_total = 0
    files = sorted(VECTORS.glob("*.json"))
    if not files:
        print(f"conformance.py: no vectors in {VECTORS}", file=sys.stderr)
        return 2
    for path in files:
        if path.name not in RUNNERS:
            print(f"conformance.py: unknown vectors file {path.name}", file=sys.stderr)
            return 2
        cases = json.loads(path.read_text(encoding="utf-8"))["cases"]
        if not cases:
            print(f"conformance.py: {path.name} holds no case", file=sys.stderr)
            return 2
        names = set()
        session = Session(psql)
        checks = []
        for c in cases:
            unknown = set(c) - KEYS[path.name]
            if unknown or c["name"] in names:
                print(f"conformance.py: {path.name}: {c['name']}: unknown fields {sorted(unknown)} or a duplicate name")
                return 2
            names.add(c["name"])
            checks.append((c["name"], RUNNERS[path.name](session, c)))
        answers = session.run()
        passed = failed = 0
        for name, check in checks:
            problem = check(answers)
            if problem is None:
                passed += 1
            else:
                failed += 1
                print(f"  FAIL {path.name} {name}: {problem}")
            records.append(f"{path.name}\t{name}\t{'pass' if problem is None else 'fail'}")
        failed_total += failed
        print(f"{path.name}: {len(cases)} cases ran, {passed} passed, {failed} failed")
    if record_dir:
        with open(Path(record_dir) / "postgres.txt", "a", encoding="utf-8") as f:
            f.write("\n".join(records) + "\n")
    return 1 if failed_total else 0


if __name__ == "__main__":
    sys.exit(main())
