"""TripleA saves against the parsing budget (`battlecalc.triplea.save.ParseBudget`).

Run:  python benchmarks/bench_save_budget.py [SAVE.tsvg ...]

Default saves: those of ``shared/fixtures/triplea/saves`` beside the project (or beside a
folder above it).  Each save is read in a process of its own (so that its peak memory is its
own): the compressed and inflated sizes, each figure of the stream (items read, objects built,
contents at the top, deepest nesting, longest string and array, seconds of the parse) and the
process's peak resident memory after the read, beside the budget's limit for each figure.
Prints, never asserts.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

from bench_game import default_saves

from battlecalc.triplea.save import SAVE_BUDGET

PROBE = """
import gzip, json, resource, sys
from dataclasses import asdict
from battlecalc.triplea.save import stream_figures
path = sys.argv[1]
figures = asdict(stream_figures(path))
figures["inflated"] = len(gzip.decompress(open(path, "rb").read()))
figures["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(figures))
"""
COLUMNS = ("items", "objects", "top_level", "depth", "string_bytes", "array_length", "seconds")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("saves", nargs="*", type=Path)
    args = parser.parse_args()
    saves = args.saves or default_saves()
    if not saves:
        raise SystemExit("no saves given and shared/fixtures/triplea/saves not found")
    print(f"{'save':44} {'kB':>5} {'inflated':>9} " + " ".join(f"{c:>12}" for c in COLUMNS)
          + f" {'peak MB':>8}")
    for path in saves:
        done = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True,
                              text=True)
        if done.returncode:
            print(f"{path.name[:44]:44} {done.stderr.strip().splitlines()[-1]}")
            continue
        f = json.loads(done.stdout)
        print(f"{path.name[:44]:44} {path.stat().st_size / 1000:5.0f} {f['inflated']:9,} "
              + " ".join(f"{f[c]:12.2f}" if c == "seconds" else f"{f[c]:12,}" for c in COLUMNS)
              + f" {f['peak_mb']:8.0f}")
    budget = asdict(SAVE_BUDGET)
    print(f"{'budget':44} {'':5} {'':9} " + " ".join(
        f"{budget[c]:12.2f}" if c == "seconds" else f"{budget[c]:12,}" for c in COLUMNS))


if __name__ == "__main__":
    main()
