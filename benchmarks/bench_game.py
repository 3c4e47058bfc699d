"""TripleA saves: reading a save and solving every battle in it (`battlecalc.read_game`).

Run:  python benchmarks/bench_game.py [--repeats N] [SAVE.tsvg ...]

Default saves: those of ``shared/fixtures/triplea/saves`` beside the project (or beside a
folder above it).  For each: a warm-up (JIT compile / cache load), then the best of N calls of
the read alone (``solve=False``) and of the read with every battle solved (default options:
exact where feasible).  Goals (issue 17): under 1 s for a Revised save, under 2 s for a
Global 1940 save.  Prints, never asserts.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from timing import best_of

from battlecalc.triplea import read_game

GOALS = {"revised": 1.0, "1940-2e": 2.0}


def default_saves() -> list[Path]:
    root = Path(__file__).resolve().parents[1]
    for folder in root.parents:
        saves = folder / "shared" / "fixtures" / "triplea" / "saves"
        if saves.is_dir():
            return sorted(saves.glob("*.tsvg"))
    return []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("saves", nargs="*", type=Path)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    saves = args.saves or default_saves()
    if not saves:
        raise SystemExit("no saves given and shared/fixtures/triplea/saves not found")
    print(f"{'save':48} {'edition':8} {'battles':>7} {'read s':>8} {'read+solve s':>13} goal")
    for path in saves:
        read_game(path)  # warm-up: numba cache, javaobj import
        read_s, _ = best_of(args.repeats, lambda p=path: read_game(p, solve=False))
        total_s, game = best_of(args.repeats, lambda p=path: read_game(p))
        goal = GOALS.get(game.edition)
        verdict = "" if goal is None else f"< {goal:g} s: {'yes' if total_s < goal else 'NO'}"
        print(f"{path.name[:48]:48} {game.edition:8} {len(game.battles):7d} {read_s:8.3f} "
              f"{total_s:13.3f} {verdict}")


if __name__ == "__main__":
    main()
