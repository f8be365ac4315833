#!/usr/bin/env python3
"""Alternated rounds of small-rs's main job and LiteRT, for the README's
network tables on a noisy VM.

One run of each engine says which state the host was in more than which
engine is faster: a shared core's speed moves by 1.3-1.7x for stretches
of seconds to minutes. So this runs ROUNDS rounds, each of them every
small-rs binary given (`mlperf_tiny --models DIR --threads N`) and then
`peers.py` on the MLPerf Tiny networks (`f32` and int8), and prints per
network the median and minimum over the rounds of each engine's median
µs, and LiteRT's median over small-rs's:

    cargo build --release -p small-examples --example mlperf_tiny --features std
    python3 benches/peers/rounds.py --threads 1 --rounds 7
    python3 benches/peers/rounds.py --threads 2 --rounds 5
    # A/B of two builds of small-rs in the same rounds:
    python3 benches/peers/rounds.py --rounds 5 --bin before=/tmp/mlperf_tiny --bin after=target/release/examples/mlperf_tiny

About 25 s per round and binary. It does not build anything.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NETWORKS = ["resnet8", "vww_0.25", "ds-cnn", "ad"]


def small_medians(binary, models, threads):
    """{"resnet8": µs, "resnet8 i8": µs, ...} from one run of the main job."""
    out = subprocess.run([binary, "--models", models, "--threads", str(threads)],
                         capture_output=True, text=True, check=True).stdout
    times = {}
    for line in out.splitlines():
        f = line.split()
        # The results table's rows: `resnet8   f32   MACs  median ...`.
        if not line.startswith(" ") and len(f) > 4 and f[0] in NETWORKS and f[1] in ("f32", "i8"):
            name = f[0] if f[1] == "f32" else f"{f[0]} i8"
            times[name] = float(f[3])
    missing = [n for n in NETWORKS if n not in times or f"{n} i8" not in times]
    if missing:
        sys.exit(f"rounds.py: {binary} printed no time for {missing}:\n{out}")
    return times


def litert_medians(models, threads):
    """{"resnet8": µs, "resnet8 i8": µs, ...}: LiteRT XNNPACK's medians."""
    with tempfile.NamedTemporaryFile(suffix=".json") as j:
        subprocess.run([sys.executable, os.path.join(HERE, "peers.py"), "--models", models,
                        "--threads", str(threads), "--min-time", "0.7",
                        "--cases", ",".join(NETWORKS + ["i8"]), "--json", j.name],
                       capture_output=True, text=True, check=True)
        rows = [json.loads(line) for line in open(j.name)]
    return {r["case"]: r["median_us"] for r in rows if r["peer"] == "litert-xnnpack"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--models", default=os.path.join(ROOT, "..", "shared", "models"))
    ap.add_argument("--bin", action="append", metavar="[LABEL=]PATH",
                    help="a small-rs main job binary (repeatable; default "
                         "target/release/examples/mlperf_tiny)")
    args = ap.parse_args()
    bins = args.bin or [os.path.join(ROOT, "target", "release", "examples", "mlperf_tiny")]
    bins = [b.split("=", 1) if "=" in b else ("small-rs", b) for b in bins]
    runs = {label: [] for label, _ in bins}
    runs["LiteRT"] = []
    for r in range(args.rounds):
        for label, path in bins:
            runs[label].append(small_medians(path, args.models, args.threads))
        runs["LiteRT"].append(litert_medians(args.models, args.threads))
        print(f"# round {r + 1} of {args.rounds} done", file=sys.stderr)

    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "?")
    print(f"# {args.rounds} rounds, {args.threads} thread(s), {cpu}; "
          "µs: median / min over the rounds of each run's median")
    labels = [label for label, _ in bins]
    head = "".join(f" {l:>17}" for l in labels + ["LiteRT"])
    print(f"{'network':<12}{head}" + "".join(f" {'LiteRT/' + l:>15}" for l in labels))
    for name in NETWORKS + [f"{n} i8" for n in NETWORKS]:
        cells, meds = "", {}
        for label in labels + ["LiteRT"]:
            xs = [run[name] for run in runs[label] if name in run]
            meds[label] = statistics.median(xs) if xs else float("nan")
            cells += f" {meds[label]:>8.1f} / {min(xs) if xs else float('nan'):>6.1f}"
        ratios = "".join(f" {meds['LiteRT'] / meds[l]:>14.2f}x" for l in labels)
        print(f"{name:<12}{cells}{ratios}")


if __name__ == "__main__":
    main()
