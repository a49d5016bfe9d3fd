#!/usr/bin/env python3
"""Builds the one benchmark table of `make bench` from the summaries the runtimes' benches wrote.

Usage: bench_report.py DIR [RUNTIME ...]   (reads DIR/<runtime>.json, writes DIR/report.md, prints it)

Each summary is {"runtime": ..., "rows": [{"name", "kind", "what", "ns_per_id"[, "group"]}, ...]} with
kind snowmint|peer|floor and what single|batch|clock|cas|call. Within a runtime (and group: rows measured
somewhere else, e.g. WASM inside Chromium, carry a "group" and get a table row of their own) the FIRST
snowmint single row, the FIRST snowmint batch row and the FIRST floor row are the headline figures. A
peer's ratio is peer ÷ snowmint of the same `what` (single or batch), so > 1 means snowmint is faster;
the main table lists the single-ID peers.
Every number comes from the summary files, i.e. from the one run that wrote them. Exits non-zero when a
runtime's summary is missing or malformed (its row then says why).
"""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
import sys

RUNTIMES = ["rust", "c", "python", "node", "wasm"]
KINDS = {"snowmint", "peer", "floor"}
WHATS = {"single", "batch", "clock", "cas", "call"}
ROW_KEYS = {"name", "kind", "what", "ns_per_id"}
OPTIONAL_ROW_KEYS = {"group", "statefile"}
STATEFILE_KEYS = ["memory", "file", "threads2", "processes2"]
DASH = "—"


class Malformed(Exception):
    pass


def load(path: str, runtime: str) -> list[dict]:
    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        dup = {k for k in keys if keys.count(k) > 1}
        if dup:
            raise Malformed(f"duplicate key(s) {sorted(dup)}")
        return dict(pairs)

    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f, object_pairs_hook=no_duplicates)
    except FileNotFoundError:
        raise Malformed("no summary written") from None
    except ValueError as e:
        raise Malformed(f"not JSON: {e}") from None
    if not isinstance(doc, dict) or set(doc) != {"runtime", "rows"}:
        raise Malformed('top level must be exactly {"runtime", "rows"}')
    if doc["runtime"] != runtime:
        raise Malformed(f"runtime is {doc['runtime']!r}, expected {runtime!r}")
    rows = doc["rows"]
    if not isinstance(rows, list) or not rows:
        raise Malformed("rows must be a non-empty list")
    names = set()
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or not ROW_KEYS <= set(r) or set(r) - ROW_KEYS - OPTIONAL_ROW_KEYS:
            raise Malformed(f"row {i}: keys must be {sorted(ROW_KEYS)} (+ optional group), got {r!r}")
        if not isinstance(r["name"], str) or not r["name"]:
            raise Malformed(f"row {i}: empty name")
        key = (r.get("group"), r["name"])
        if key in names:
            raise Malformed(f"row {i}: duplicate name {r['name']!r}")
        names.add(key)
        if r["kind"] not in KINDS or r["what"] not in WHATS:
            raise Malformed(f"row {i} ({r['name']}): kind {r['kind']!r} / what {r['what']!r} unknown")
        v = r["ns_per_id"]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise Malformed(f"row {i} ({r['name']}): ns_per_id must be a positive number, got {v!r}")
        if "group" in r and (not isinstance(r["group"], str) or not r["group"]):
            raise Malformed(f"row {i} ({r['name']}): group must be a non-empty string")
        if "statefile" in r and r["statefile"] not in STATEFILE_KEYS:
            raise Malformed(f"row {i} ({r['name']}): statefile must be one of {STATEFILE_KEYS}")
    return rows


def first(rows: list[dict], kind: str, what: str | None = None) -> dict | None:
    return next((r for r in rows if r["kind"] == kind and (what is None or r["what"] == what)), None)


def ns(v: float) -> str:
    return f"{v:.2f}" if v < 100 else f"{v:.1f}"


def headline(rows: list[dict]) -> dict:
    return {
        "single": first(rows, "snowmint", "single"),
        "batch": first(rows, "snowmint", "batch"),
        "floor": first(rows, "floor"),
    }


def peer_cell(rows: list[dict], head: dict) -> str:
    """Single-ID peers with peer ÷ snowmint single (other peer rows are in the detail tables)."""
    base = head["single"]
    parts = []
    for r in rows:
        if r["kind"] == "peer" and r["what"] == "single":
            ratio = f" ({r['ns_per_id'] / base['ns_per_id']:.2f}×)" if base else ""
            parts.append(f"{r['name']} {ns(r['ns_per_id'])}{ratio}")
    return "; ".join(parts) or DASH


def statefile_row(rt: str, rows: list[dict]) -> str | None:
    """The state-file table's row for a runtime (SPEC §4a), or None when its bench measured none."""
    got = {r["statefile"]: r for r in rows if "statefile" in r}
    if not got:
        return None
    cell = lambda k: f"{ns(got[k]['ns_per_id'])} ({got[k]['name']})" if k in got else DASH  # noqa: E731
    ratio = lambda a, b: f"{got[a]['ns_per_id'] / got[b]['ns_per_id']:.2f}×" if a in got and b in got else DASH  # noqa: E731
    return (
        f"| {rt} | {cell('memory')} | {cell('file')} | {ratio('file', 'memory')} | {cell('threads2')} "
        f"| {cell('processes2')} | {ratio('processes2', 'threads2')} |"
    )


README_LABELS = {"rust": "rust", "c": "c", "python": "python", "node (napi)": "node", "wasm in node": "wasm"}
WORSE_BY = 0.15


def readme_ratios(path: str) -> dict[str, dict[str, float]]:
    """The README speed table's ratios, per runtime: "floor" (single ÷ floor) and each peer's first word
    (peer ÷ snowmint). Missing or unparsable cells are left out."""
    import re

    out: dict[str, dict[str, float]] = {}
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return out
    try:
        start = lines.index("| runtime | snowmint single ID | batch, per ID | floor | single ÷ floor | peers (peer ÷ snowmint) |")
    except ValueError:
        return out
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rt = README_LABELS.get(cells[0].lower())
        if rt is None or len(cells) < 6:
            continue
        got: dict[str, float] = {}
        m = re.fullmatch(r"([0-9.]+)×", cells[4])
        if m:
            got["floor"] = float(m.group(1))
        for part in cells[5].split("), "):
            m = re.match(r"\s*(.+?) [0-9.]+ \(([0-9.]+)×", part)
            if m:
                got[m.group(1).split()[0].lower()] = float(m.group(2))
        out[rt] = got
    return out


def compare_with_readme(rt: str, rows: list[dict], head: dict, readme: dict[str, dict[str, float]]) -> list[str]:
    """This run's ratios beside the README's: a ratio more than 15 % worse is FLAGGED."""
    ref = readme.get(rt)
    s, fl = head["single"], head["floor"]
    if not ref or not s:
        return []
    out = []

    def line(what: str, now: float, then: float, higher_is_worse: bool) -> None:
        worse = now > then * (1 + WORSE_BY) if higher_is_worse else now < then / (1 + WORSE_BY)
        flag = "FLAGGED: more than 15 % worse than the README" if worse else "ok"
        out.append(f"| {rt} | {what} | {now:.2f}× | {then:.2f}× | {flag} |")

    if fl and "floor" in ref:
        line("single ÷ floor", s["ns_per_id"] / fl["ns_per_id"], ref["floor"], True)
    for r in rows:
        if r["kind"] == "peer" and r["what"] == "single":
            name = r["name"].lower()
            key = next((k for k in ref if k != "floor" and name.startswith(k)), None)
            if key:
                line(f"{r['name']} ÷ snowmint", r["ns_per_id"] / s["ns_per_id"], ref[key], False)
    return out


def machine_costs(rows: list[dict]) -> str | None:
    """The machine's CAS, TSC and SystemTime costs from the Rust bench's floor rows."""
    want = {
        "AtomicU64 load + compare_exchange": "one CAS",
        "TSC read (rdtsc)": "TSC read",
        "FastClock same-millisecond read": "TSC-gated clock",
        "SystemTime read": "SystemTime read",
    }
    got = [f"{label} {ns(r['ns_per_id'])} ns" for n, label in want.items() for r in rows if r["name"] == n]
    return "Machine (Rust bench, this run): " + ", ".join(got) + "." if got else None


def read_status(out_dir: str, rt: str) -> tuple[str, str]:
    """bench-all.sh's record of a bench: (status, seconds), empty when absent."""
    try:
        with open(os.path.join(out_dir, f"{rt}.status"), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return "", ""
    return (lines + ["", ""])[0], (lines + ["", ""])[1]


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    runtimes = sys.argv[2:] or RUNTIMES
    bad = 0
    table = [
        "| runtime | snowmint single ID (ns) | batch (ns/ID) | floor (ns) | single ÷ floor | peers, single ID: ns (peer ÷ snowmint) |",
        "|---|---:|---:|---:|---:|---|",
    ]
    details = []
    readme = readme_ratios(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md"))
    against = [
        "| runtime | ratio | this run | README | verdict |",
        "|---|---|---:|---:|---|",
    ]
    machine = None
    statefile = [
        "| runtime | single ID, in-process shared generator (ns) | single ID, on a state file (ns) | file ÷ memory "
        "| 2 threads, one generator (ns/ID) | 2 processes, one state file (ns/ID) | processes ÷ threads |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for rt in runtimes:
        try:
            rows = load(os.path.join(out_dir, f"{rt}.json"), rt)
        except Malformed as e:
            bad += 1
            status = read_status(out_dir, rt)[0]
            why = f"{status}: {e}" if status and status != "ok" else str(e)
            table.append(f"| {rt} | {why} (see target/bench/{rt}.log) | | | | |")
            continue
        if rt == "rust":
            machine = machine_costs(rows)
        sf = statefile_row(rt, rows)
        if sf:
            statefile.append(sf)
        groups = []
        for r in rows:
            if r.get("group") not in groups:
                groups.append(r.get("group"))
        for g in groups:
            grows = [r for r in rows if r.get("group") == g]
            head = headline(grows)
            s, b, fl = head["single"], head["batch"], head["floor"]
            ratio = f"{s['ns_per_id'] / fl['ns_per_id']:.2f}×" if s and fl else DASH
            floor = f"{ns(fl['ns_per_id'])} ({fl['name']})" if fl else DASH
            single = f"{ns(s['ns_per_id'])} ({s['name']})" if s else DASH
            batch = f"{ns(b['ns_per_id'])} ({b['name']})" if b else DASH
            label = rt if g is None else f"{rt} ({g})"
            table.append(f"| {label} | {single} | {batch} | {floor} | {ratio} | {peer_cell(grows, head)} |")
            if g is None:
                against.extend(compare_with_readme(rt, grows, head, readme))
            details.append(f"\n### {label}\n")
            details.append("| measurement | kind | what | ns/ID | ratio |")
            details.append("|---|---|---|---:|---|")
            for r in grows:
                base = head.get(r["what"]) if r["kind"] != "floor" else None
                if r is s or r is b or r is fl:
                    rel = "headline"
                elif base is not None:
                    rel = f"{r['ns_per_id'] / base['ns_per_id']:.2f}× snowmint {r['what']}"
                elif fl is not None and r["kind"] != "floor":
                    rel = f"{r['ns_per_id'] / fl['ns_per_id']:.2f}× floor"
                else:
                    rel = ""
                details.append(f"| {r['name']} | {r['kind']} | {r['what']} | {ns(r['ns_per_id'])} | {rel} |")
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    report = "\n".join(
        [
            "# snowmint benchmark report",
            "",
            f"`make bench`, {when}, {platform.machine()}, {os.cpu_count()} CPUs, Linux {platform.release()}. "
            "Every figure is from this one run; each runtime's bench measured its snowmint figures, its floor and "
            "its peers side by side in one process (one script for Rust/C), twitter layout. "
            "Single ID: the first snowmint single-ID figure of that bench; batch: its first batch figure, per ID "
            "(Python: next_ids_array, a new array('Q') per call, like nextIds' BigUint64Array in Node/WASM); "
            "floor: Rust = one exact clock check (the cheaper of the TSC-gated test and a SystemTime read), C = clock_gettime(CLOCK_REALTIME), Python = a no-op call, "
            f"WASM = a Date.now() call, Node = none ({DASH}). Peer ratios are peer ÷ snowmint single ID (in the detail tables, "
            "batch rows ÷ snowmint batch): above 1 means snowmint is faster. Each bench has its own protocol "
            "(see its script), so compare ratios within a row rather than figures across rows. Full output: target/bench/<runtime>.log; all rows below.",
            "",
            *table,
            "",
            *([machine, ""] if machine else []),
            "## Against the README",
            "",
            "Each ratio of this run beside the README's speed table (single ÷ floor: lower is better; "
            "peer ÷ snowmint: higher is better). A ratio more than 15 % worse is flagged.",
            "",
            *against,
            "",
            "Bench times (s, builds included): "
            + ", ".join(f"{rt} {read_status(out_dir, rt)[1] or '?'}" for rt in runtimes)
            + ".",
            "",
            "## State file (SPEC §4a)",
            "",
            "One node ID shared by processes through a memory-mapped state word, measured in the same run as "
            "the in-process shared generator (target: file ÷ memory ≤ 1.10×). The 2-thread and 2-process "
            "figures are wall time per ID with both minting at once from one shared word (each runtime's "
            "bench says what its threads are).",
            "",
            *statefile,
            "",
            "## All rows",
            *details,
            "",
        ]
    )
    with open(os.path.join(out_dir, "report.md"), "w", encoding="utf-8") as f:
        f.write(report)
    print(report)
    print(f"(written to {os.path.join(out_dir, 'report.md')})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
