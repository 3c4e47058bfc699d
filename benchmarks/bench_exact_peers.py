"""battlecalc's exact solver against aacalc2's, side by side in one run (issue 19, Must show 1).

Run:  AACALC2_DIR=/work/peers/aacalc2 python benchmarks/bench_exact_peers.py [--quick]
      [--repeats 3] [--seed 2026] [--json PATH] [--no-battery] [--fresh-tables]

aacalc2 (github:mshih01/aacalc2, the TypeScript exact solver, MIT) is not part of this project
and none of its code is here.  Build it outside the project (this script was written and run
against commit d3e4fcaa5d2e351dc4f84e52130a6b737e59f2c8, version 2.0.25, on Node 20):

    git clone https://github.com/mshih01/aacalc2 /work/peers/aacalc2   # or git archive a mirror
    cd /work/peers/aacalc2 && git checkout d3e4fcaa5d2e351dc4f84e52130a6b737e59f2c8
    npm ci && npx tsc          # Node 20; writes dist/ (dist/external.js has multiwaveExternal)

and point ``AACALC2_DIR`` (or ``--aacalc2``) at that checkout.
``benchmarks/aacalc2_driver.mjs`` (ours) runs in one Node process for the whole run: it reads
one battle a line as JSON, calls
``multiwaveExternal`` with prune and report thresholds 1e-12 (rounds 100, no retreat, no
submerging, standard dice), warm (one untimed solve first), best of ``--repeats``, timed by
``performance.now()`` inside Node (start-up never counts), and answers win / draw / lose /
stalemate from aacalc2's joint list of final states.  battlecalc is timed end to end through
``battlecalc.simulate(..., method="exact")`` in this process, warm (one untimed call first),
best of the repeats, right after aacalc2 solved the same battle (so both see the same load on a
shared machine: only the ratios carry over between days).

Battles (1942 2E): the six rows of issue 19's table, then a random battery (``--seed``) of 100
land and 100 sea battles of 1 to 40 units a side, units both tools model (land: infantry,
artillery, tank, fighter, bomber, and up to 3 AAA for the defender; sea: submarine, destroyer,
cruiser, carrier, battleship, fighter, bomber, and transports for the defender).  ``--quick``:
the table's fast rows and 5 + 5 battery battles (and the edge rows).

Both tools are given the same battle: battlecalc its default order of losses (``cheapest``:
healthy battleships absorb hits first, AAA next, then cheapest first, ties by the lower combat
value in the side's role, transports last; docs/rules.md), aacalc2 that order written out as
its ``ool`` list (:func:`aacalc2_order`), which must name every unit present (aacalc2 drops a
unit its ool leaves out).  Per row: battlecalc ms, aacalc2 ms, ratio aacalc2/battlecalc, and
the largest absolute difference of attacker win, defender win, draw (and stalemate) between
the two; ``<3x`` flags a ratio under 3.  A row more than 1e-9 apart is solved again by aacalc2
with nothing pruned (untimed): ``DIFF`` if that answer too is more than 1e-9 apart, else the
note "aacalc2 pruned ...".  Summary: the smallest ratio on land and at sea, how many rows are
under 3x, how many differ (and how many only by aacalc2's pruning).

Then 14 small edge battles on the rules where calculators part ways (lone transports and AAA,
subs v air and destroyers, stalemates, battleship hits), for their answers only (their ratios
are printed but left out of the summary).  ``--fresh-tables`` empties battlecalc's side-table
cache before each timed call (a battle not seen before; aacalc2 keeps nothing between calls).

Answers: every row of the table and of the battery agrees to 1e-9 once aacalc2's own pruning is
taken out (its outcomes sum to 1 minus the mass it pruned at 1e-12: up to ~1e-7 on big sea
battles; re-solved with prune 0 they agree to ~1e-13).  Known modelling differences
(docs/editions.md section 9):

* ``aaa-only``: a defender of AAA only.  battlecalc lets the AAA fire, then removes them without
  dice (docs/rules.md, 1942 2E AAA), so ``1 ftr v 1 aa`` is a defender win 1/6; aacalc2 removes
  them before they fire (attacker win 1).  The rules reference (section 7.2: "A territory
  defended only by AAA loses them automatically"; section 11 item 7: "lost without dice")
  does not say whether they fire first.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import battlecalc
from battlecalc.army import parse_army
from battlecalc.kernels import jit
from battlecalc.orders import default_loss_order

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "aacalc2_driver.mjs"
RULES = "1942-2e"
TOLERANCE = 1e-9
GOAL = 3.0

# battlecalc unit -> aacalc2 unit id (aacalc2's UnitIdentifier)
AACALC2_ID = {
    "infantry": "inf", "artillery": "art", "tank": "arm", "fighter": "fig", "bomber": "bom",
    "aa": "aa", "submarine": "sub", "destroyer": "des", "cruiser": "cru", "carrier": "acc",
    "battleship": "bat", "transport": "tra",
}
# the units each kind of battle may hold; their order of losses is battlecalc's own default
# (``cheapest``: healthy battleships absorb hits first, AAA first on defence, transports last),
# read from battlecalc at run time so both tools are always given the same order
DOMAIN_UNITS = {
    "land": {"infantry", "artillery", "tank", "fighter", "bomber", "aa"},
    "sea": {"submarine", "destroyer", "cruiser", "carrier", "battleship", "transport",
            "fighter", "bomber"},
}

TABLE = [
    ("big land", "30 inf 10 art 10 tank 8 ftr 4 bmb", "40 inf 5 art 5 tank 6 ftr", False),
    ("huge land", "100 inf 40 art 10 ftr", "100 inf 40 art 6 ftr 3 aa", False),
    ("mid sea, no tt", "4 sub 2 dd 1 ca 2 ftr 1 bmb 1 bb", "1 bb 2 dd 1 ca 1 cv 2 ftr 2 sub", True),
    ("air v aa", "9 bmb 8 inf 2 art 4 ftr", "3 aa 11 ftr", False),
    ("sea: bb v bmb", "4 dd 5 sub 15 bb 1 ftr", "15 bmb 2 ftr 7 tt", True),
    ("sea: ca v sub", "6 ca 8 bmb", "15 sub 1 tt 4 cv 1 bmb", True),
]
QUICK_TABLE = ("big land", "mid sea, no tt", "air v aa", "sea: ca v sub")
# small battles on the rules where calculators part ways (1942 2E: AAA as casualties, lone AAA
# and transports, subs v air and destroyers, stalemates, battleship hits); KNOWN: the rows of a
# known modelling difference, with its name
EDGE = [
    ("tt dd v sub", "2 tt 1 dd", "1 sub", True),
    ("tt v sub", "2 tt", "2 sub", True),
    ("sub v tt", "1 sub", "3 tt", True),
    ("ftr sub v sub tt", "2 ftr 1 sub", "2 sub 1 tt", True),
    ("ftr dd v sub", "2 ftr 1 dd", "4 sub", True),
    ("sub v ftr dd", "4 sub", "2 ftr 1 dd", True),
    ("sub dd v cv ftr", "3 sub 1 dd", "1 cv 2 ftr", True),
    ("bmb v bb", "3 bmb", "2 bb", True),
    ("inf v aa", "2 inf", "2 aa", False),
    ("tank v aa inf", "1 tank", "1 aa 1 inf", False),
    ("ftr v aa inf", "3 ftr", "2 aa 1 inf", False),
    ("ftr v aa", "1 ftr", "1 aa", False),
    ("bmb tank v aa", "3 bmb 1 tank", "3 aa", False),
    ("bmb v aa", "3 bmb", "3 aa", False),
]
KNOWN = {"ftr v aa": "aaa-only", "bmb v aa": "aaa-only"}
LAND_ATTACK = ["infantry", "artillery", "tank", "fighter", "bomber"]
LAND_DEFENSE = ["infantry", "artillery", "tank", "fighter", "bomber"]
SEA_ATTACK = ["submarine", "destroyer", "cruiser", "carrier", "battleship", "fighter", "bomber"]
SEA_DEFENSE = SEA_ATTACK + ["transport"]
OUTCOMES = ("attacker_win", "defender_win", "draw", "stalemate")


def random_army(rng: random.Random, units: list[str], size: int) -> dict[str, int]:
    """`size` units drawn from a few of `units` with random weights (so armies are lopsided
    like real ones, not uniform mixes)."""
    kinds = rng.sample(units, rng.randint(1, min(4, len(units))))
    weights = [rng.random() + 0.05 for _ in kinds]
    counts: dict[str, int] = {}
    for unit in rng.choices(kinds, weights, k=size):
        counts[unit] = counts.get(unit, 0) + 1
    return counts


def battery(seed: int, n_land: int, n_sea: int) -> list[tuple[str, dict, dict, bool]]:
    """(name, attacker, defender, sea) battles of 1 to 40 units a side, fixed by `seed`."""
    rng = random.Random(seed)
    battles = []
    for i in range(n_land):
        attacker = random_army(rng, LAND_ATTACK, rng.randint(1, 40))
        defender = random_army(rng, LAND_DEFENSE, rng.randint(1, 40))
        aa = rng.choice([0, 0, 1, 2, 3])
        if aa:
            defender["aa"] = aa
        battles.append((f"land {i}", attacker, defender, False))
    for i in range(n_sea):
        attacker = random_army(rng, SEA_ATTACK, rng.randint(1, 40))
        defender = random_army(rng, SEA_DEFENSE, rng.randint(1, 40))
        battles.append((f"sea {i}", attacker, defender, True))
    return battles


def aacalc2_order(counts: dict[str, int], sea: bool, role: str) -> list[str]:
    """battlecalc's default order of losses for this army as an aacalc2 ool list."""
    domain = DOMAIN_UNITS["sea" if sea else "land"]
    order = [unit for unit in default_loss_order(battlecalc.load_rules(RULES).units, role)
             if unit in domain]
    missing = set(counts) - set(order)
    if missing:
        raise ValueError(f"no aacalc2 order for {sorted(missing)}")
    return [AACALC2_ID[unit] for unit in order]


def aacalc2_battle(attacker: dict[str, int], defender: dict[str, int], sea: bool,
                   repeats: int) -> dict:
    """The driver's input line for one battle."""
    return {
        "attack": {AACALC2_ID[u]: n for u, n in attacker.items() if n},
        "defense": {AACALC2_ID[u]: n for u, n in defender.items() if n},
        "att_ool": aacalc2_order(attacker, sea, "attack"),
        "def_ool": aacalc2_order(defender, sea, "defense"),
        "is_naval": sea,
        "repeats": repeats,
    }


def army_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {unit}" for unit, n in counts.items() if n)


def forget_tables() -> None:
    """Empty battlecalc's kept plans (checked, compiled battles) and side tables, so the next
    call checks and builds everything as for a battle it has not seen (aacalc2 keeps nothing
    between calls)."""
    battlecalc.api.forget_compiled()


def time_battlecalc(attacker: dict[str, int], defender: dict[str, int], sea: bool,
                    repeats: int, fresh_tables: bool = False) -> tuple[float, dict]:
    """(best ms end to end through simulate, the answers), warm (kernels compiled; tables
    cached too unless fresh_tables)."""
    battle = dict(rules=RULES, attacker=army_text(attacker), defender=army_text(defender),
                  sea=sea, method="exact")
    result = battlecalc.simulate(**battle)  # warm: compile or load kernels and tables
    times = []
    for _ in range(repeats):
        if fresh_tables:
            forget_tables()
        started = time.perf_counter()
        result = battlecalc.simulate(**battle)
        times.append(time.perf_counter() - started)
    answers = {key: getattr(result, key) for key in OUTCOMES}
    answers["retreat"] = result.retreat
    answers["pruned"] = result.pruned
    return 1000 * min(times), answers


def max_difference(ours: dict, theirs: dict) -> float:
    return max(abs(ours[key] - theirs[key]) for key in OUTCOMES)


class Aacalc2:
    """One Node process running the driver for the whole run."""

    def __init__(self, directory: str):
        if not (Path(directory) / "dist" / "external.js").exists():
            sys.exit(f"AACALC2_DIR={directory}: no dist/external.js there (build aacalc2 with "
                     "`npm ci && npx tsc`, see this script's docstring)")
        env = dict(os.environ, AACALC2_DIR=directory)
        self.process = subprocess.Popen(["node", str(DRIVER)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, env=env)

    def solve(self, battle: dict) -> dict:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps(battle) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            sys.exit("the aacalc2 driver stopped (see its error above)")
        answer = json.loads(line)
        if "error" in answer:
            sys.exit(f"aacalc2 failed on {battle}:\n{answer['error']}")
        return answer

    def close(self) -> None:
        assert self.process.stdin
        self.process.stdin.close()
        self.process.wait(timeout=30)


def differs(row: dict) -> bool:
    """Answers more than TOLERANCE apart, aacalc2's own pruning aside: a row over TOLERANCE
    is re-solved by aacalc2 with nothing pruned, and that answer decides."""
    unpruned = row["max_diff_unpruned"]
    return (row["max_diff"] > TOLERANCE and (unpruned is None or unpruned > TOLERANCE)
            and not row["known_difference"])


def row_text(row: dict) -> str:
    flags = "  <3x" if row["ratio"] < GOAL and not row["edge"] else ""
    if differs(row):
        flags += "  DIFF"
    elif row["known_difference"] and row["max_diff"] > TOLERANCE:
        flags += f"  (known difference: {row['known_difference']})"
    elif row["max_diff"] > TOLERANCE:
        flags += (f"  (aacalc2 pruned {row['aacalc2_lost']:.1e}; unpruned diff "
                  f"{row['max_diff_unpruned']:.1e})")
    return (f"{row['name']:<16} {row['battlecalc_ms']:9.2f} {row['aacalc2_ms']:9.2f} "
            f"{row['ratio']:7.2f}x {row['max_diff']:9.1e}{flags}")


def write_json(path: str, payload: dict) -> None:
    """Atomically: a temporary file beside PATH, then renamed over it."""
    target = Path(path)
    handle, temporary = tempfile.mkstemp(dir=target.parent or ".", prefix=target.name + ".")
    with os.fdopen(handle, "w") as stream:
        json.dump(payload, stream, indent=1)
    os.replace(temporary, target)


def summary(rows: list[dict]) -> dict:
    """Ratios over the table and the battery (the edge rows check answers only)."""
    timed = [r for r in rows if not r["edge"]]
    land = [r["ratio"] for r in timed if not r["sea"]]
    sea = [r["ratio"] for r in timed if r["sea"]]
    return {
        "rows": len(timed),
        "edge_rows": len(rows) - len(timed),
        "min_ratio_land": min(land) if land else None,
        "min_ratio_sea": min(sea) if sea else None,
        "under_3x": sum(r["ratio"] < GOAL for r in timed),
        "answers_differ": sum(differs(r) for r in rows),
        "differ_by_aacalc2_pruning": sum(r["max_diff"] > TOLERANCE and not differs(r)
                                         and not r["known_difference"] for r in rows),
        "known_differences": sum(bool(r["known_difference"]) and r["max_diff"] > TOLERANCE
                                 for r in rows),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few battles only")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=2026, help="the random battery's seed")
    parser.add_argument("--json", metavar="PATH", help="write the rows and summary as JSON")
    parser.add_argument("--no-battery", action="store_true", help="the table's rows only")
    parser.add_argument("--fresh-tables", action="store_true",
                        help="time battlecalc with its side-table cache emptied before each "
                        "call (a battle not seen before), not only warm")
    parser.add_argument("--aacalc2", default=os.environ.get("AACALC2_DIR"),
                        help="aacalc2 checkout with dist/ built (default: $AACALC2_DIR)")
    args = parser.parse_args()
    if not args.aacalc2:
        parser.error("set AACALC2_DIR (or --aacalc2) to an aacalc2 checkout built with "
                     "`npm ci && npx tsc`")
    ruleset = battlecalc.load_rules(RULES)
    battles = [(name, parse_army(a, ruleset), parse_army(d, ruleset), sea)
               for name, a, d, sea in TABLE if not args.quick or name in QUICK_TABLE]
    edge = [(name, parse_army(a, ruleset), parse_army(d, ruleset), sea)
            for name, a, d, sea in EDGE]
    if not args.no_battery:
        n = 5 if args.quick else 100
        battles += battery(args.seed, n, n)

    # warm: every kernel compiled (or loaded from numba's cache) before anything is timed;
    # left alone, battlecalc runs small battles' kernels as plain Python until about 0.5 s of
    # such work has added up (kernels.exact._kernels), which would time the interpreter
    jit.compiled()
    peer = Aacalc2(args.aacalc2)
    rows = []
    print(f"{'battle':<16} {'ours ms':>9} {'aacalc2':>9} {'ratio':>8} {'max diff':>9}")
    try:
        for name, attacker, defender, sea in battles + edge:
            theirs = peer.solve(aacalc2_battle(attacker, defender, sea, args.repeats))
            ours_ms, ours = time_battlecalc(attacker, defender, sea, args.repeats,
                                            args.fresh_tables)
            row = {
                "name": name, "sea": sea, "attacker": army_text(attacker),
                "defender": army_text(defender), "battlecalc_ms": ours_ms,
                "aacalc2_ms": theirs["ms"], "ratio": theirs["ms"] / ours_ms,
                "max_diff": max_difference(ours, theirs),
                "aacalc2_lost": 1.0 - sum(theirs[key] for key in OUTCOMES),
                "max_diff_unpruned": None, "known_difference": KNOWN.get(name),
                "edge": any(name == e[0] for e in EDGE),
                "battlecalc": ours,
                "aacalc2": {key: theirs[key] for key in OUTCOMES},
            }
            if row["max_diff"] > TOLERANCE:
                # is it aacalc2's pruning?  its answer with nothing pruned (untimed)
                unpruned = peer.solve(dict(aacalc2_battle(attacker, defender, sea, 0),
                                           prune=0))
                row["max_diff_unpruned"] = max_difference(ours, unpruned)
            rows.append(row)
            print(row_text(row), flush=True)
    finally:
        peer.close()
    totals = summary(rows)
    print(f"\n{totals['rows']} battles (and {totals['edge_rows']} edge rows, answers only): "
          f"min ratio land {totals['min_ratio_land']:.2f}x, "
          f"min ratio sea {totals['min_ratio_sea']:.2f}x, under {GOAL:g}x: "
          f"{totals['under_3x']}, answers more than {TOLERANCE:g} apart: "
          f"{totals['answers_differ']} (and {totals['differ_by_aacalc2_pruning']} by "
          f"aacalc2's pruning only, {totals['known_differences']} known differences)")
    if args.json:
        write_json(args.json, {"summary": totals, "rows": rows})


if __name__ == "__main__":
    main()
