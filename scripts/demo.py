#!/usr/bin/env python3
"""Runs every runtime's replay of one scripted case and shows that they agree (see scripts/demo.sh)."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASE = os.path.join(ROOT, "scripts", "demo-case.json")
RUNTIMES = [
    ("rust", [os.path.join(ROOT, "target/release/snowmint-replay")]),
    ("c", ["bash", os.path.join(ROOT, "bindings-c/demo.sh")]),
    ("python", ["bash", os.path.join(ROOT, "bindings-python/demo.sh")]),
    ("node", ["bash", os.path.join(ROOT, "bindings-node/demo.sh")]),
    ("wasm", ["bash", os.path.join(ROOT, "bindings-wasm/demo.sh")]),
]
CLI = os.path.join(ROOT, "target/release/snowmint")


def run(cmd, *args):
    out = subprocess.run(cmd + list(args), cwd=ROOT, check=True, capture_output=True, text=True)
    return [line.strip() for line in out.stdout.splitlines() if line.strip()]


def inspect(id_text):
    """Decodes with the CLI: returns (iso, node, sequence)."""
    fields = {}
    for line in run([CLI, "inspect", id_text, "--layout", "twitter"])[1:]:
        key, _, value = line.strip().partition(" ")
        fields[key] = value.strip().split("  ")[0]
    return fields


def main():
    case = json.load(open(CASE))
    print(f"Scripted case: {case['name']}")
    for i, step in enumerate(case["steps"], 1):
        print(f"  step {i}: clock reads {', '.join(step['clock'])} ms, {step['op']} x {step['count']}")
    results = {}
    for name, cmd in RUNTIMES:
        print(f"  minting in {name} …", flush=True)
        results[name] = run(cmd, CASE)
    reference = results["rust"]
    names = [n for n, _ in RUNTIMES]
    # Rows to show: every ID of the small steps, the first and last two of the burst.
    rows, index = [], 0
    for number, step in enumerate(case["steps"], 1):
        n = step["count"]
        shown = range(n) if n <= 4 else [0, 1, n - 2, n - 1]
        rows += [(index + k, number) for k in shown]
        index += n
    print()
    print(f"{'step':>4} {'#':>5}  " + "  ".join(f"{n:<20}" for n in names) + "  decoded (twitter)")
    for r, number in rows:
        ids = [results[n][r] if r < len(results[n]) else "-" for n in names]
        d = inspect(reference[r])
        mark = "" if len(set(ids)) == 1 else "   <-- DIFFERENT"
        decoded = f"{d['time']} node {d['node']} seq {d['sequence']}"
        print(f"{number:>4} {r:>5}  " + "  ".join(f"{i:<20}" for i in ids) + f"  {decoded}{mark}")
    differ = [n for n in names if results[n] != reference]
    total = len(reference)
    print()
    if differ:
        for n in differ:
            first = next((k for k, (a, b) in enumerate(zip(results[n], reference)) if a != b), min(len(results[n]), total))
            print(f"MISMATCH: {n} differs from rust at ID #{first} ({len(results[n])} IDs vs {total})")
        sys.exit(1)
    ordered = all(int(a) < int(b) for a, b in zip(reference, reference[1:]))
    print(f"All {len(names)} runtimes minted the same {total} IDs (strictly increasing: {ordered}).")
    if not ordered:
        sys.exit(1)
    print()
    print("Live IDs from each runtime's own clock (twitter layout, node 7):")
    for name, cmd in RUNTIMES:
        for id_text in run(cmd, "--live", "2"):
            d = inspect(id_text)
            print(f"  {name:<7} {id_text:<20} {d['time']}  node {d['node']}  base58 {d['base58']}")


if __name__ == "__main__":
    main()
