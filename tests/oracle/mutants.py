#!/usr/bin/env python3
"""Does the corpus catch bugs? Plants one small bug at a time in a scratch copy of core/src and runs the
Rust conformance runner (core/tests/vectors.rs) against tests/vectors/ for each.

    python3 tests/oracle/mutants.py            # every mutant (about 1 minute per 10 on 2 cores)
    python3 tests/oracle/mutants.py strict 0x  # only mutants whose label contains one of the words

A mutant is CAUGHT when the runner fails. MISSED lists what the corpus cannot see; some mutants are
equivalent by design (marked "(equivalent)"), e.g. a wait one nanosecond longer. A mutant whose source
line is no longer in the core is reported SKIP (the core moved on; update the list). The scratch copy
lives in $CARGO_TARGET_DIR (default target/) under vectors-mutants/; core/src is never touched.
Not part of the test suite: a tool for whoever grows the corpus. Standard library only.
"""

import os
import shutil
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# (file in core/src, text to find, replacement, label)
MUTANTS = [
    ("generator.rs", "if clock_tick < last_tick {", "if clock_tick + 1 < last_tick {",
     "strict tolerates one tick back"),
    ("generator.rs", "if last >> seq_bits > limit_tick && first == at_clock && at_clock > next {",
     "if false {", "no random-start retry"),
    ("generator.rs", "let window = (self.max_ahead_ticks as u128 + 1)",
     "let window = (self.max_ahead_ticks as u128)", "batch window one tick short"),
    ("generator.rs", "let wait_ns = ready_at - now_ns;", "let wait_ns = ready_at - now_ns + 1;",
     "wait one ns longer (equivalent)"),
    ("generator.rs", "previous.is_some_and(|p| now <= p)", "previous.is_some_and(|p| now < p)",
     "frozen clock not detected"),
    ("generator.rs", "0x9E37_79B9_7F4A_7C15", "0x9E37_79B9_7F4A_7C17", "random start constant"),
    ("generator.rs", "& self.layout.seq_mask()", "& (self.layout.seq_mask() >> 1)",
     "random start half range"),
    ("generator.rs", "clock_tick.saturating_add(self.max_ahead_ticks)",
     "clock_tick.saturating_add(self.max_ahead_ticks + 1)", "max_ahead one tick more"),
    ("generator.rs", "Some(last) if last <= l.max_position() => last,", "Some(last) => last,",
     "no exhaustion check on positions"),
    ("generator.rs", "Policy::Strict => 0,", "Policy::Strict => 1,", "strict allows one tick ahead"),
    ("generator.rs", "let last_tick = (next - 1) >> seq_bits;", "let last_tick = next >> seq_bits;",
     "strict compares with the next free position's tick"),
    ("layout.rs", "Order::TimestampSequenceNode => (position << self.cfg.node_bits) | node_field,",
     "Order::TimestampSequenceNode => (position << self.cfg.node_bits) ^ node_field,",
     "xor instead of or (equivalent)"),
    ("layout.rs", "u64::MAX - 1\n", "u64::MAX\n", "last 64-bit position usable"),
    ("layout.rs", "if tick > self.max_tick {", "if tick > self.max_tick + 1 {", "lifespan one tick long"),
    ("layout.rs", "if cfg.node_id_offset > node_max {", "if cfg.node_id_offset > node_max + 1 {",
     "node_id_offset validation"),
    ("layout.rs", "let node_bits = 64 - (node_count - 1).leading_zeros();",
     "let node_bits = 63 - (node_count).leading_zeros();", "snowcast rounds down"),
    ("layout.rs", "if end_ms > u64::MAX as u128 {", "if end_ms > u64::MAX as u128 + 1 {",
     "lifespan fit check"),
    ("layout.rs", "if self.cfg.tick_ns < NS_PER_MS {", "if self.cfg.tick_ns <= NS_PER_MS {",
     "clock unit boundary"),
    ("layout.rs", "if x > 9_007_199_254_740_991.0 {", "if x > 9_007_199_254_740_992.0 {",
     "2^53 accepted as a reading"),
    ("layout.rs", "if cfg.tick_ns == 0 {", "if cfg.tick_ns == 1 {", "tick_ns 1 rejected"),
    ("layout.rs", "if !(128..=8192).contains(&node_count) {", "if !(128..=8191).contains(&node_count) {",
     "snowcast 8192 rejected"),
    ("decode.rs", "if total < 64 && id >> total != 0 {", "if total < 63 && id >> total != 0 {",
     "63-bit width check skipped"),
    ("decode.rs", "sub_ms_ns: (since_epoch_ns % 1_000_000) as u32,", "sub_ms_ns: 0,", "sub-ms dropped"),
    ("decode.rs", "if sequence > self.seq_mask() {", "if sequence > self.seq_mask() + 1 {",
     "compose sequence bound"),
    ("encoding.rs", "Encoding::Base58 => BASE58.iter().position(|&a| a == c)? as u8,",
     "Encoding::Base58 => BASE58.iter().position(|&a| a == c.to_ascii_lowercase() || a == c)? as u8,",
     "base58 case-folding"),
    ("encoding.rs", "let position = offset + i;", "let position = i;", "parse position ignores 0x"),
    ("encoding.rs", "b'I' | b'L' => 1,", "b'I' => 1,", "Crockford L alias"),
    ("encoding.rs", "s.starts_with(\"0X\")", "s.starts_with(\"0Z\")", "0X prefix"),
    ("encoding.rs", "return Err(parse_err(ParseErrorKind::Overflow, 0, None));",
     "return Ok(value);", "overflow accepted"),
    ("time.rs", "if y > 9999 {", "if y > 10000 {", "year 10000 expanded form"),
    (None, None, None, "unchanged core (must pass)"),
]


def main():
    only = sys.argv[1:]
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    scratch = os.path.join(target, "vectors-mutants")
    ws = os.path.join(scratch, "ws")
    shutil.rmtree(ws, ignore_errors=True)
    os.makedirs(os.path.join(ws, "core", "tests"))
    shutil.copy(os.path.join(ROOT, "Cargo.lock"), ws)
    shutil.copy(os.path.join(ROOT, "core", "tests", "vectors.rs"), os.path.join(ws, "core", "tests"))
    with open(os.path.join(ws, "Cargo.toml"), "w") as f:
        f.write('[workspace]\nresolver = "2"\nmembers = ["core"]\n')
    with open(os.path.join(ws, "core", "Cargo.toml"), "w") as f:
        f.write('[package]\nname = "snowmint"\nversion = "0.1.0"\nedition = "2021"\n'
                '[features]\ndefault = ["std"]\nstd = []\n[dev-dependencies]\nserde_json = "1"\n'
                '[lints.rust]\nunexpected_cfgs = { level = "allow" }\n')
    src = os.path.join(ROOT, "core", "src")
    env = dict(os.environ, SNOWMINT_VECTORS_DIR=os.path.join(ROOT, "tests", "vectors"),
               CARGO_TARGET_DIR=os.path.join(scratch, "target"))
    results = {"CAUGHT": 0, "MISSED": 0, "SKIP": 0}
    for fname, old, new, label in MUTANTS:
        if only and not any(w in label for w in only):
            continue
        dst = os.path.join(ws, "core", "src")
        shutil.rmtree(dst, ignore_errors=True)
        # copyfile, not copy2: fresh modification times, so cargo always rebuilds.
        shutil.copytree(src, dst, copy_function=shutil.copyfile)
        if fname:
            path = os.path.join(dst, fname)
            with open(path) as f:
                text = f.read()
            if old not in text:
                print("SKIP    %s (source line not found)" % label)
                results["SKIP"] += 1
                continue
            with open(path, "w") as f:
                f.write(text.replace(old, new, 1))
        r = subprocess.run(["cargo", "test", "--test", "vectors"], cwd=ws, env=env,
                           capture_output=True, text=True, timeout=900)
        out = r.stdout + r.stderr
        if "could not compile" in out:
            print("SKIP    %s (does not compile)" % label)
            results["SKIP"] += 1
            continue
        summary = ([l.strip() for l in out.splitlines() if "conformance failures" in l]
                   or [l.strip() for l in out.splitlines() if "panicked" in l])
        verdict = "CAUGHT" if r.returncode != 0 else "MISSED"
        results[verdict] += 1
        print("%-7s %s%s" % (verdict, label, ("  (" + summary[0][:80] + ")") if summary else ""))
    print("caught %(CAUGHT)d, missed %(MISSED)d, skipped %(SKIP)d" % results)


if __name__ == "__main__":
    main()
