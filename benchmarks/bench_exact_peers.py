"""battlecalc's exact solver against aacalc2's and AlliesCalc's, side by side in one run (issue
19, Must show 1; issue 28, Must show 2).

Run:  AACALC2_DIR=/work/peers/aacalc2 ALLIESCALC_DIR=/work/peers/alliescalc \\
      python benchmarks/bench_exact_peers.py [--fresh] [--quick] [--repeats 3] [--seed 2026]
      [--json PATH] [--no-battery]
Build AlliesCalc once (see below):
      python benchmarks/bench_exact_peers.py --build-alliescalc SOURCE --alliescalc DIR

Either peer may be left out (no ``AACALC2_DIR`` / ``ALLIESCALC_DIR``, or ``--aacalc2 ''``), not
both.  Nothing of either peer is in this project.

aacalc2 (github:mshih01/aacalc2, the TypeScript exact solver, MIT).  Build it outside the project
(this script was written and run against commit d3e4fcaa5d2e351dc4f84e52130a6b737e59f2c8,
version 2.0.25, on Node 20):

    git clone https://github.com/mshih01/aacalc2 /work/peers/aacalc2   # or git archive a mirror
    cd /work/peers/aacalc2 && git checkout d3e4fcaa5d2e351dc4f84e52130a6b737e59f2c8
    npm ci && npx tsc          # Node 20; writes dist/ (dist/external.js has multiwaveExternal)

``benchmarks/aacalc2_driver.mjs`` (ours) runs in one Node process for the whole run: it reads
one battle a line as JSON, calls ``multiwaveExternal`` with prune and report thresholds 1e-12
(rounds 100, no retreat, no submerging, standard dice), warm (one untimed solve first), best of
``--repeats``, timed by ``performance.now()`` inside Node (start-up never counts), and answers
win / draw / lose / stalemate from aacalc2's joint list of final states.  aacalc2 keeps nothing
between calls.

AlliesCalc (github:ociaw/AlliesCalc, Rust, exact, 1942 2E only, the engine of its web page;
written and run against commit 18694e8b94696e9398c76c6390c028f5c96370f5).  Built natively with
cargo, outside the project, by ``--build-alliescalc SOURCE --alliescalc DIR``
(:func:`build_alliescalc`), where SOURCE is a checkout of it or its git directory (a bare
mirror: the pinned commit is taken with ``git archive``).  There is no crates registry here, so:

* ``fnv`` comes from Debian (``apt-get install librust-fnv-dev``): cargo reads
  ``/usr/share/cargo/registry`` as a directory source in place of crates.io
  (``DIR/driver/.cargo/config.toml``, offline);
* ``statrs`` is replaced (``[patch.crates-io]``) by a stand-in crate, ``DIR/statrs``
  (:data:`STATRS_STANDIN`), with the one function AlliesCalc uses, ``Binomial::pmf``, computed
  as statrs 0.13 computes it (bit for bit up to 170 dice of one kind);
* its sea fix, one line of ``calc/src/roller.rs``: the published ``combine_hit_dists`` passes
  one map iterator down its recursion, so the first branch exhausts it and every later branch
  sees no further kinds of hit (a volley with two kinds of hit, e.g. subs' and planes', loses
  most of its combinations: sea battles come out wrong).  Each recursion branch gets its own
  copy: ``combine_hit_dists(hit_dists, ...)`` becomes
  ``combine_hit_dists(&mut hit_dists.clone(), ...)`` (:data:`ALLIESCALC_FIX`);
* the web-assembly crate and serde are not built: a driver crate of ours (``DIR/driver``,
  :data:`DRIVER_MAIN`) depends on ``calc`` and ``aa1942_2e`` (default features off), release
  profile ``opt-level 3``, fat LTO, one codegen unit, ``-C target-cpu=native`` (numba compiles
  battlecalc's kernels for the host CPU too).

The driver runs in one process for the whole run, reads one battle a line, and solves it as
AlliesCalc's page does (``create_round_manager`` with the prune threshold 1e-10 of the page,
rounds advanced to the end, each summarized), with battlecalc's default order of losses as
AlliesCalc's ``removal_order`` (healthy battleships first, then battlecalc's ``cheapest``
order) and nothing ``reserved`` (AlliesCalc's default keeps the attacker's last tank).  Every
solve builds a new ``CombatManager``, so its cache of rolls starts empty: each is a battle never
seen.  Each solve is timed in process (``Instant``; start-up never counts), best of
``--repeats`` (fewer when they pass 2 s), the answer from the first.  AlliesCalc models no
transports, and rolls min(3, aircraft) AA dice per AAA where 1942 2E rolls min(3 x AAA,
aircraft) in all: it is given only the rows where the two agree (no transports; at most one
AAA, or no aircraft, or at least 3 per AAA); the others show ``-``.

Battlecalc is timed end to end through ``battlecalc.simulate(..., method="exact")`` in this
process, best of the repeats, right after the peers solved the same battle (so all see the same
load on a shared machine: only the ratios carry over between days).  Warm by default: kernels
compiled, the battle seen once (its checked plan and side tables kept).  ``--fresh``
(``--fresh-tables`` is the old name) times as well, alternating with the warm calls, calls
after ``battlecalc.api.forget_compiled()``: each checks, compiles its side tables and solves as
for a battle never seen (kernels stay compiled: the process is warm, the battle new); the
ratios are then against the fresh time, and the summary gives the warm ones of the same run.

Battles (1942 2E): the rows of issue 19's and issue 28's tables, then a random battery
(``--seed``) of 100 land and 100 sea battles of 1 to 40 units a side, units both tools model
(land: infantry, artillery, tank, fighter, bomber, and up to 3 AAA for the defender; sea:
submarine, destroyer, cruiser, carrier, battleship, fighter, bomber, and transports for the
defender).  ``--quick``: a few of the table's rows and 5 + 5 battery battles (and the edge rows).

Agreement.  Each peer is given the same battle: aacalc2 battlecalc's default order of losses
(``cheapest``: healthy battleships absorb hits first, AAA next, then cheapest first, ties by the
lower combat value in the side's role, transports last; docs/rules.md) written out as its
``ool`` list (:func:`aacalc2_order`), AlliesCalc as its removal order (:func:`alliescalc_order`).
Per row the largest absolute difference of attacker win, defender win, draw and stalemate of
each peer against battlecalc.  A peer more than 1e-9 away is solved again with nothing pruned
(untimed; for AlliesCalc only when its pruned solve took under a second, else, or when
unpruned it does not end, its answer is held to the bound its own pruned mass gives: each
outcome at most that mass below ours): ``DIFF`` if that answer too is more than 1e-9
apart.  The check runs on every row before its timings are printed, and the disagreements are
listed again after the table.  Then 14 small edge battles on the rules where calculators part
ways (lone transports and AAA, subs v air and destroyers, stalemates, battleship hits), for their
answers only (their ratios are printed but left out of the summary).

Known modelling differences (docs/editions.md section 9):

* ``aaa-only``: a defender of AAA only.  battlecalc lets the AAA fire, then removes them without
  dice (docs/rules.md, 1942 2E AAA), so ``1 ftr v 1 aa`` is a defender win 1/6; aacalc2 removes
  them before they fire (attacker win 1).  The rules reference (section 7.2: "A territory
  defended only by AAA loses them automatically"; section 11 item 7: "lost without dice")
  does not say whether they fire first.

AlliesCalc ends a battle as a stalemate when the total probability of the battles still going
is exactly the same four rounds (fire phases) running.  That total is a sum over hash maps, and
Rust seeds its hash maps at random (each map, each process), so the sum can alternate in its
last bit: on a battle that can end in a stalemate (submarines against aircraft, even with a
stalemate of 1e-8) AlliesCalc may play thousands of rounds before it sees the stalemate, or
never, and which happens changes from solve to solve.  The driver stops a battle after 20,000
rounds (unfinished); the answer is the first finished solve's and the time the best of the
finished solves (a row says when some did not finish); a row none of whose solves finished is
listed as ``unfinished`` with the disagreements and left out of the ratios.  The same test
also fires too early: a total that does not change means only that no battle ended (the total
counts the battles still going and those that ended in the round), so a battle in which nothing
can end for four fire phases running (a cruiser against bombers beside submarines that cannot
hit them) is called a stalemate there, though it goes on; such rows are DIFF rows, with that
cause named.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import cpu_model

import battlecalc
from battlecalc.army import parse_army
from battlecalc.kernels import jit
from battlecalc.orders import default_loss_order

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DRIVER = HERE / "aacalc2_driver.mjs"
RULES = "1942-2e"
TOLERANCE = 1e-9
GOAL = 3.0
ALLIESCALC_PRUNE = 1e-10  # AlliesCalc's web page (wasm/src/lib.rs, Battle::new)
ALLIESCALC_BUDGET_MS = 2000.0  # stop a row's timed solves once they add up to this
ALLIESCALC_UNPRUNED_MAX_MS = 1000.0  # re-solve unpruned only below this (pruned) time
ALLIESCALC_COMMIT = "18694e8b94696e9398c76c6390c028f5c96370f5"
PEER_TIMEOUT_S = 900.0

# battlecalc unit -> aacalc2 unit id (aacalc2's UnitIdentifier)
AACALC2_ID = {
    "infantry": "inf", "artillery": "art", "tank": "arm", "fighter": "fig", "bomber": "bom",
    "aa": "aa", "submarine": "sub", "destroyer": "des", "cruiser": "cru", "carrier": "acc",
    "battleship": "bat", "transport": "tra",
}
# battlecalc unit -> AlliesCalc's aa1942_2e::Unit (no transports there)
ALLIESCALC_ID = {
    "infantry": "Infantry", "artillery": "Artillery", "tank": "Tank", "aa": "AntiAir",
    "fighter": "Fighter", "bomber": "Bomber", "submarine": "Submarine",
    "destroyer": "Destroyer", "cruiser": "Cruiser", "carrier": "Carrier",
    "battleship": "Battleship", "damaged_battleship": "BattleshipDamaged",
}
AIR = {"fighter", "bomber"}
# the units each kind of battle may hold; their order of losses is battlecalc's own default
# (``cheapest``: healthy battleships absorb hits first, AAA first on defence, transports last),
# read from battlecalc at run time so every tool is always given the same order
DOMAIN_UNITS = {
    "land": {"infantry", "artillery", "tank", "fighter", "bomber", "aa"},
    "sea": {"submarine", "destroyer", "cruiser", "carrier", "battleship", "transport",
            "fighter", "bomber"},
}

TABLE = [
    ("small land", "3 inf 1 art", "3 inf", False),
    ("subs v air", "10 sub", "6 ftr 2 bmb 2 dd", True),
    ("big land", "30 inf 10 art 10 tank 8 ftr 4 bmb", "40 inf 5 art 5 tank 6 ftr", False),
    ("huge land", "100 inf 40 art 10 ftr", "100 inf 40 art 6 ftr 3 aa", False),
    ("mid sea, no tt", "4 sub 2 dd 1 ca 2 ftr 1 bmb 1 bb", "1 bb 2 dd 1 ca 1 cv 2 ftr 2 sub", True),
    ("air v aa", "9 bmb 8 inf 2 art 4 ftr", "3 aa 11 ftr", False),
    ("sea: bb v bmb", "4 dd 5 sub 15 bb 1 ftr", "15 bmb 2 ftr 7 tt", True),
    ("sea: ca v sub", "6 ca 8 bmb", "15 sub 1 tt 4 cv 1 bmb", True),
]
QUICK_TABLE = ("small land", "subs v air", "big land", "mid sea, no tt", "air v aa",
               "sea: ca v sub")
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
# known modelling differences, per peer
KNOWN = {"aacalc2": {"ftr v aa": "aaa-only", "bmb v aa": "aaa-only"}, "alliescalc": {}}
LAND_ATTACK = ["infantry", "artillery", "tank", "fighter", "bomber"]
LAND_DEFENSE = ["infantry", "artillery", "tank", "fighter", "bomber"]
SEA_ATTACK = ["submarine", "destroyer", "cruiser", "carrier", "battleship", "fighter", "bomber"]
SEA_DEFENSE = SEA_ATTACK + ["transport"]
OUTCOMES = ("attacker_win", "defender_win", "draw", "stalemate")
PEERS = ("aacalc2", "alliescalc")
PEER_LABEL = {"aacalc2": "aacalc2", "alliescalc": "AlliesCalc"}


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


def alliescalc_unfit(attacker: dict[str, int], defender: dict[str, int]) -> str | None:
    """Why AlliesCalc cannot be given this battle as 1942 2E plays it (None: it can)."""
    if set(attacker) - set(ALLIESCALC_ID) or set(defender) - set(ALLIESCALC_ID):
        return "transports"
    aa = defender.get("aa", 0)
    air = sum(attacker.get(unit, 0) for unit in AIR)
    # AlliesCalc: aa * min(3, air) dice; 1942 2E: min(3 * aa, air)
    if aa * min(3, air) != min(3 * aa, air):
        return "AA dice"
    return None


def alliescalc_order(role: str) -> list[str]:
    """battlecalc's default order of losses as AlliesCalc's removal order: healthy battleships
    first (a hit turns one into a damaged battleship), then battlecalc's order."""
    order = ["Battleship"]
    for unit in default_loss_order(battlecalc.load_rules(RULES).units, role):
        if unit in ALLIESCALC_ID and unit != "battleship":
            order.append(ALLIESCALC_ID[unit])
    return order


def alliescalc_line(attacker: dict[str, int], defender: dict[str, int], repeats: int,
                    prune: float = ALLIESCALC_PRUNE) -> str:
    """The AlliesCalc driver's input line for one battle."""
    def army(counts: dict[str, int]) -> str:
        return ",".join(f"{ALLIESCALC_ID[u]}:{n}" for u, n in counts.items() if n) or "-"
    return " ".join([str(repeats), repr(prune), repr(ALLIESCALC_BUDGET_MS), army(attacker),
                     army(defender), ",".join(alliescalc_order("attack")),
                     ",".join(alliescalc_order("defense"))])


def army_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {unit}" for unit, n in counts.items() if n)


def time_battlecalc(attacker: dict[str, int], defender: dict[str, int], sea: bool,
                    repeats: int, fresh: bool = False) -> tuple[float, float | None, dict]:
    """(best warm ms end to end through simulate, best fresh ms or None, the answers).  Warm:
    kernels compiled, the battle's plan and side tables kept (one untimed call first); fresh
    (only if `fresh`): battlecalc.api.forget_compiled() before each call, so that each checks,
    builds its tables and solves as for a battle never seen."""
    battle = dict(rules=RULES, attacker=army_text(attacker), defender=army_text(defender),
                  sea=sea, method="exact")
    result = battlecalc.simulate(**battle)  # warm: compile or load kernels and tables
    warm, cold = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        result = battlecalc.simulate(**battle)
        warm.append(time.perf_counter() - started)
        if fresh:
            battlecalc.api.forget_compiled()  # a battle never seen: check, tables, solve
            started = time.perf_counter()
            result = battlecalc.simulate(**battle)
            cold.append(time.perf_counter() - started)
    answers = {key: getattr(result, key) for key in OUTCOMES}
    answers["retreat"] = result.retreat
    answers["pruned"] = result.pruned
    return 1000 * min(warm), (1000 * min(cold) if fresh else None), answers


def max_difference(ours: dict, theirs: dict) -> float:
    return max(abs(ours[key] - theirs[key]) for key in OUTCOMES)


def read_line(process: subprocess.Popen, what: str) -> str:
    """One line from a peer's driver, or exit when it stops or hangs."""
    assert process.stdout
    ready, _, _ = select.select([process.stdout], [], [], PEER_TIMEOUT_S)
    if not ready:
        process.kill()
        sys.exit(f"the {what} driver gave no answer in {PEER_TIMEOUT_S:g} s")
    line = process.stdout.readline()
    if not line:
        sys.exit(f"the {what} driver stopped (see its error above)")
    return line


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
        assert self.process.stdin
        self.process.stdin.write(json.dumps(battle) + "\n")
        self.process.stdin.flush()
        answer = json.loads(read_line(self.process, "aacalc2"))
        if "error" in answer:
            sys.exit(f"aacalc2 failed on {battle}:\n{answer['error']}")
        return answer

    def close(self) -> None:
        assert self.process.stdin
        self.process.stdin.close()
        self.process.wait(timeout=30)


def alliescalc_binary(directory: str) -> Path:
    return Path(directory) / "driver" / "target" / "release" / "alliescalc-driver"


class AlliesCalc:
    """One process of our driver over AlliesCalc's crates (see build_alliescalc) for the run."""

    def __init__(self, directory: str):
        binary = alliescalc_binary(directory)
        if not binary.exists():
            sys.exit(f"ALLIESCALC_DIR={directory}: no {binary} (build it with "
                     "--build-alliescalc SOURCE --alliescalc DIR, see this script's docstring)")
        self.process = subprocess.Popen([str(binary)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)

    def solve(self, line: str) -> dict:
        assert self.process.stdin
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        words = read_line(self.process, "AlliesCalc").split()
        if words[0] != "ok":
            sys.exit(f"AlliesCalc failed on {line}:\n{' '.join(words)}")
        best, *values = words[1:10]
        answer = dict(zip(OUTCOMES + ("pruned",), map(float, values[:5]), strict=True))
        answer.update(ms=None if best == "-" else float(best), rounds=int(values[5]),
                      finished=values[6] == "finished", finished_solves=values[7],
                      times_ms=[float(t) for t in words[10:]])
        return answer

    def close(self) -> None:
        assert self.process.stdin
        self.process.stdin.close()
        self.process.wait(timeout=30)


def peer_cell(peer: str, row: dict) -> dict:
    """A peer's answer on a row against ours: difference, and what explains it."""
    return row["peers"].get(peer) or {}


def differs(cell: dict) -> bool:
    """A disagreement: answers more than TOLERANCE apart beyond the peer's own pruning (an
    answer over TOLERANCE is re-solved by the peer with nothing pruned, and that answer decides;
    where that is too slow, it is held to the bound of its pruned mass), known differences
    aside; or a battle the peer did not finish."""
    return bool(cell) and cell["verdict"] in ("DIFF", "unfinished")


def cell_note(peer: str, cell: dict) -> str:
    label = PEER_LABEL[peer]
    verdict = cell["verdict"] if cell else "agree"
    if verdict == "agree":
        return ""
    if verdict == "unfinished":
        return (f"  UNFINISHED {label} (no end after {cell['rounds']} rounds: its stalemate "
                "test never fired)")
    if verdict == "DIFF":
        unpruned = cell["max_diff_unpruned"]
        extra = f", unpruned {unpruned:.1e}" if unpruned is not None else ""
        cause = f" ({cell['cause']})" if cell.get("cause") else ""
        return f"  DIFF {label} {cell['max_diff']:.1e}{extra}{cause}"
    if verdict == "known":
        return f"  ({label}: known difference {cell['known_difference']})"
    if cell["max_diff_unpruned"] is not None:
        return (f"  ({label} pruned {cell['lost']:.1e}; unpruned diff "
                f"{cell['max_diff_unpruned']:.1e})")
    why = ("unpruned it did not end" if cell.get("unpruned_unfinished")
           else "too slow to re-solve unpruned")
    return f"  ({label} pruned {cell['lost']:.1e}, within it; {why})"


def row_text(row: dict, peers: list[str]) -> str:
    text = f"{row['name']:<16} {row['battlecalc_ms']:9.2f}"
    if row["battlecalc_fresh_ms"] is not None:
        text += f" {row['battlecalc_warm_ms']:8.2f}"
    flags = ""
    for peer in peers:
        cell = peer_cell(peer, row)
        if not cell:
            text += f" {'-':>10} {'-':>8} {'-':>9}"
            continue
        text += f" {cell['ms']:10.2f} {cell['ratio']:7.2f}x {cell['max_diff']:9.1e}"
        if cell["ratio"] < GOAL and not row["edge"] and cell["verdict"] != "unfinished":
            flags += f"  <3x {PEER_LABEL[peer]}"
        flags += cell_note(peer, cell)
        done, _, solves = cell.get("finished_solves", "1/1").partition("/")
        if done != solves and cell["verdict"] != "unfinished":
            flags += f"  ({PEER_LABEL[peer]} ended {done} of {solves} solves; time of those)"
    return text + flags


def header(peers: list[str], fresh: bool) -> str:
    text = f"{'battle':<16} {'fresh ms' if fresh else 'ours ms':>9}"
    if fresh:
        text += f" {'warm ms':>8}"
    for peer in peers:
        label = PEER_LABEL[peer]
        text += f" {label + ' ms':>10} {'ratio':>8} {'diff':>9}"
    return text


def write_json(path: str, payload: dict) -> None:
    """Atomically: a temporary file beside PATH, then renamed over it."""
    target = Path(path)
    handle, temporary = tempfile.mkstemp(dir=target.parent or ".", prefix=target.name + ".")
    with os.fdopen(handle, "w") as stream:
        json.dump(payload, stream, indent=1)
    os.replace(temporary, target)


def summary(rows: list[dict], peers: list[str]) -> dict:
    """Per peer: ratios over the table and the battery (the edge rows check answers only),
    rows under GOAL, disagreements."""
    timed = [r for r in rows if not r["edge"]]
    out: dict = {"rows": len(timed), "edge_rows": len(rows) - len(timed)}
    for peer in peers:
        cells = [(r, peer_cell(peer, r)) for r in timed
                 if peer_cell(peer, r) and peer_cell(peer, r)["verdict"] != "unfinished"]
        land = [c["ratio"] for r, c in cells if not r["sea"]]
        sea = [c["ratio"] for r, c in cells if r["sea"]]
        every = [(r, peer_cell(peer, r)) for r in rows if peer_cell(peer, r)]
        out[peer] = {
            "rows": len(cells),
            "min_ratio_land": min(land) if land else None,
            "min_ratio_sea": min(sea) if sea else None,
            "min_ratio_warm_land": min((c["ratio_warm"] for r, c in cells if not r["sea"]),
                                       default=None),
            "min_ratio_warm_sea": min((c["ratio_warm"] for r, c in cells if r["sea"]),
                                      default=None),
            "under_3x": sum(c["ratio"] < GOAL for _, c in cells),
            "answers_differ": sum(c["verdict"] == "DIFF" for _, c in every),
            "differ_by_pruning": sum(c["verdict"] == "pruning" for _, c in every),
            "known_differences": sum(c["verdict"] == "known" for _, c in every),
            "unfinished": sum(c["verdict"] == "unfinished" for _, c in every),
        }
    return out


def solve_peers(name: str, attacker: dict, defender: dict, sea: bool, repeats: int,
                peers: dict) -> dict:
    """Each peer's timed answer on one battle, with its difference to ours filled in later."""
    cells: dict = {}
    if "aacalc2" in peers:
        theirs = peers["aacalc2"].solve(aacalc2_battle(attacker, defender, sea, repeats))
        cells["aacalc2"] = {"ms": theirs["ms"], "answer": {k: theirs[k] for k in OUTCOMES},
                            "lost": 1.0 - sum(theirs[key] for key in OUTCOMES)}
    if "alliescalc" in peers:
        unfit = alliescalc_unfit(attacker, defender)
        if unfit is None:
            theirs = peers["alliescalc"].solve(alliescalc_line(attacker, defender, repeats))
            cells["alliescalc"] = {"ms": theirs["ms"], "answer": {k: theirs[k] for k in OUTCOMES},
                                   "lost": theirs["pruned"], "rounds": theirs["rounds"],
                                   "finished": theirs["finished"],
                                   "finished_solves": theirs["finished_solves"],
                                   "times_ms": theirs["times_ms"]}
    return cells


def within_pruned(ours: dict, cell: dict) -> bool:
    """Pruning only removes mass: each outcome at most the pruned mass below ours."""
    return all(-TOLERANCE <= ours[key] - cell["answer"][key] <= cell["lost"] + TOLERANCE
               for key in OUTCOMES)


def check_peer(peer: str, cell: dict, name: str, attacker: dict, defender: dict, sea: bool,
               ours: dict, peers: dict) -> None:
    """Fill in the cell's difference to ours and its verdict: agree, pruning (apart by the
    peer's own pruning only: re-solved with nothing pruned, or held to its pruned mass), known
    (a known modelling difference), unfinished (the peer never ended the battle) or DIFF."""
    cell["max_diff"] = max_difference(ours, cell["answer"])
    cell["known_difference"] = KNOWN[peer].get(name)
    cell["max_diff_unpruned"] = None
    if not cell.get("finished", True):
        cell["verdict"] = "unfinished"
    elif cell["max_diff"] <= TOLERANCE:
        cell["verdict"] = "agree"
    elif cell["known_difference"]:
        cell["verdict"] = "known"
    elif peer == "aacalc2" or cell["ms"] <= ALLIESCALC_UNPRUNED_MAX_MS:
        if peer == "aacalc2":
            unpruned = peers[peer].solve(dict(aacalc2_battle(attacker, defender, sea, 0),
                                              prune=0))
        else:
            unpruned = peers[peer].solve(alliescalc_line(attacker, defender, 0, prune=0.0))
        if unpruned.get("finished", True):
            cell["max_diff_unpruned"] = max_difference(ours, unpruned)
            cell["verdict"] = "pruning" if cell["max_diff_unpruned"] <= TOLERANCE else "DIFF"
        else:  # unpruned, AlliesCalc did not end: the bound of its pruned mass decides
            cell["unpruned_unfinished"] = True
            cell["verdict"] = "pruning" if within_pruned(ours, cell) else "DIFF"
    else:
        cell["verdict"] = "pruning" if within_pruned(ours, cell) else "DIFF"
    if (cell["verdict"] == "DIFF" and peer == "alliescalc"
            and cell["answer"]["stalemate"] > ours["stalemate"] + TOLERANCE):
        cell["cause"] = ("early stalemate: AlliesCalc calls one when no battle has ended for "
                         "4 fire phases")


def build_alliescalc(source: str, directory: str) -> Path:
    """Build AlliesCalc's crates with our driver into `directory` (outside this repository) from
    `source` (a checkout, or its git directory: the pinned commit is archived); returns the
    driver binary.  The recipe of the docstring: its source in DIR/src with the one-line sea fix,
    the statrs stand-in in DIR/statrs, our driver in DIR/driver, fnv from Debian's registry."""
    target = Path(directory).resolve()
    if target == ROOT or ROOT in target.parents:
        sys.exit(f"{target}: build AlliesCalc outside this repository")
    fnv = sorted(Path("/usr/share/cargo/registry").glob("fnv-1.*"))
    if not fnv:
        sys.exit("no fnv in /usr/share/cargo/registry: apt-get install librust-fnv-dev")
    if shutil.which("cargo") is None:
        sys.exit("cargo not found")
    src = Path(source).resolve()
    tree = target / "src"
    if tree.exists():
        shutil.rmtree(tree)
    tree.mkdir(parents=True)
    if (src / "calc" / "src" / "roller.rs").exists():  # a checkout
        shutil.copytree(src, tree, dirs_exist_ok=True, ignore=shutil.ignore_patterns(
            ".git", "target", "angular-app", "node_modules"))
    else:  # a git directory (bare or .git): the pinned commit
        archive = subprocess.run(["git", "--git-dir", str(src), "archive", ALLIESCALC_COMMIT],
                                 capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    roller = tree / "calc" / "src" / "roller.rs"
    text = roller.read_text()
    old, new = ALLIESCALC_FIX
    if text.count(old) != 1:
        sys.exit(f"{roller}: the line to fix ({old.strip()!r}) is not there once")
    roller.write_text(text.replace(old, new))
    files = {
        "statrs/Cargo.toml": STATRS_CARGO,
        "statrs/src/lib.rs": STATRS_STANDIN,
        "driver/Cargo.toml": DRIVER_CARGO,
        "driver/.cargo/config.toml": DRIVER_CARGO_CONFIG,
        "driver/src/main.rs": DRIVER_MAIN,
    }
    for name, content in files.items():
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content.lstrip("\n"))
    env = dict(os.environ, RUSTFLAGS="-C target-cpu=native")
    print(f"building AlliesCalc in {target} (fnv from {fnv[-1]})", flush=True)
    subprocess.run(["cargo", "build", "--release", "--offline"], cwd=target / "driver",
                   env=env, check=True)
    binary = alliescalc_binary(str(target))
    check = subprocess.run([str(binary)], input="0 0 2000 Submarine:1 Cruiser:1 "
                           "Battleship,Submarine,Cruiser Battleship,Submarine,Cruiser\n",
                           capture_output=True, text=True, check=True)
    print(f"built {binary}\n1 sub v 1 cruiser, unpruned: {check.stdout.strip()}")
    return binary


# the one line of calc/src/roller.rs (combine_hit_dists) that gets AlliesCalc's sea battles
# wrong, and its fix: each recursion branch walks its own copy of the map iterator
ALLIESCALC_FIX = (
    "combine_hit_dists(hit_dists, hit_stack, next_p, results);",
    "combine_hit_dists(&mut hit_dists.clone(), hit_stack, next_p, results);",
)

STATRS_CARGO = """
[package]
name = "statrs"
version = "0.13.0"
edition = "2018"
description = "stand-in for statrs 0.13: the one function AlliesCalc uses, Binomial::pmf"
"""

STATRS_STANDIN = r"""
//! Stand-in for statrs 0.13 with the one function AlliesCalc's calc crate uses:
//! `distribution::Binomial::new(p, n)` and `Discrete::pmf(k)`, computed as statrs 0.13 does
//! (exp of ln C(n, k) + k ln p + (n - k) ln(1 - p); exact 0 / 1 at p = 0 and p = 1; ln k! as
//! the logarithm of a table of k! built by products up to 170!).  Past 170, where statrs takes
//! ln_gamma, ln k! is 170! times a sum of logarithms (the last bits may differ there).
pub mod distribution {
    use std::sync::OnceLock;

    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct StatsError;

    pub trait Discrete<K, T> {
        fn pmf(&self, x: K) -> T;
    }

    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Binomial {
        p: f64,
        n: u64,
    }

    impl Binomial {
        pub fn new(p: f64, n: u64) -> Result<Binomial, StatsError> {
            if p.is_nan() || !(0.0..=1.0).contains(&p) {
                Err(StatsError)
            } else {
                Ok(Binomial { p, n })
            }
        }
    }

    const TABLE: usize = 4096;

    fn ln_factorial(k: u64) -> f64 {
        static LN_FACT: OnceLock<Vec<f64>> = OnceLock::new();
        let table = LN_FACT.get_or_init(|| {
            let mut out = Vec::with_capacity(TABLE);
            let mut fact = 1.0f64;
            out.push(0.0);
            for i in 1..TABLE {
                if i <= 170 {
                    fact *= i as f64;
                    out.push(fact.ln());
                } else {
                    let last = out[i - 1];
                    out.push(last + (i as f64).ln());
                }
            }
            out
        });
        let k = k as usize;
        if k < TABLE {
            table[k]
        } else {
            table[TABLE - 1] + (TABLE..=k).map(|i| (i as f64).ln()).sum::<f64>()
        }
    }

    impl Discrete<u64, f64> for Binomial {
        fn pmf(&self, x: u64) -> f64 {
            if x > self.n {
                return 0.0;
            }
            if self.p == 0.0 {
                return if x == 0 { 1.0 } else { 0.0 };
            }
            if self.p == 1.0 {
                return if x == self.n { 1.0 } else { 0.0 };
            }
            let ln_choose = ln_factorial(self.n) - ln_factorial(x) - ln_factorial(self.n - x);
            (ln_choose + x as f64 * self.p.ln() + (self.n - x) as f64 * (1.0 - self.p).ln()).exp()
        }
    }
}
"""

DRIVER_CARGO = """
[package]
name = "alliescalc-driver"
version = "0.1.0"
edition = "2018"

[workspace]

[dependencies]
calc = { path = "../src/calc" }
aa1942_2e = { path = "../src/aa1942_2e", default-features = false }

[patch.crates-io]
statrs = { path = "../statrs" }

[profile.release]
opt-level = 3
lto = "fat"
codegen-units = 1
"""

DRIVER_CARGO_CONFIG = """
[source.crates-io]
replace-with = "debian"

[source.debian]
directory = "/usr/share/cargo/registry"

[net]
offline = true
"""

DRIVER_MAIN = r"""
//! Times AlliesCalc's exact solver in process for battlecalc's benchmarks/bench_exact_peers.py.
//! One battle a line on stdin, fields separated by spaces:
//!   REPEATS PRUNE BUDGET_MS ATTACKERS DEFENDERS ATTACKER_ORDER DEFENDER_ORDER
//! ATTACKERS / DEFENDERS: `Unit:count,...` (or `-`); the orders `Unit,...`, units lost first
//! first (AlliesCalc's names: Infantry, Artillery, Tank, AntiAir, Fighter, Bomber, Submarine,
//! Destroyer, Cruiser, Carrier, Battleship, BattleshipDamaged).  Every solve builds a new
//! CombatManager (its roll cache starts empty: a battle never seen), runs the rounds to the end
//! with the prune threshold PRUNE, summarizing each as AlliesCalc's page does.  REPEATS = 0:
//! one untimed solve; else REPEATS timed solves (fewer once they add up to BUDGET_MS).  A
//! battle still going after MAX_ROUNDS rounds is stopped: unfinished.  Answers one line:
//!   ok BEST_MS ATTACKER_WIN DEFENDER_WIN DRAW STALEMATE PRUNED ROUNDS finished|unfinished
//!      FINISHED/SOLVES TIMES_MS...
//! with the answer of the first solve that finished (else of the first), BEST_MS the best time
//! of the solves that finished (else of all; `-` when REPEATS is 0), or `error MESSAGE`.
//! (AlliesCalc's hash maps are seeded at random, and its stalemate test needs a sum over them
//! to repeat exactly: whether and when a stalemate is seen can change from solve to solve.)
use aa1942_2e::{BattlePhase, RollSelector, SurvivorSelector, Unit};
use calc::stats::Summarizer;
use calc::{CombatManager, Force, Probability, Quant, RoundManager};
use std::convert::TryInto;
use std::io::{BufRead, Write};
use std::time::Instant;

const MAX_ROUNDS: usize = 20_000;

fn unit(name: &str) -> Result<Unit, String> {
    Ok(match name {
        "Infantry" => Unit::Infantry,
        "Artillery" => Unit::Artillery,
        "Tank" => Unit::Tank,
        "AntiAir" => Unit::AntiAir,
        "Fighter" => Unit::Fighter,
        "Bomber" => Unit::Bomber,
        "Submarine" => Unit::Submarine,
        "Destroyer" => Unit::Destroyer,
        "Cruiser" => Unit::Cruiser,
        "Carrier" => Unit::Carrier,
        "Battleship" => Unit::Battleship,
        "BattleshipDamaged" => Unit::BattleshipDamaged,
        other => return Err(format!("unknown unit {}", other)),
    })
}

fn army(text: &str) -> Result<Vec<(Unit, u32)>, String> {
    if text == "-" {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|item| {
            let (name, count) = item.split_once(':').ok_or(format!("bad item {}", item))?;
            Ok((unit(name)?, count.parse::<u32>().map_err(|e| e.to_string())?))
        })
        .collect()
}

fn order(text: &str) -> Result<Vec<Unit>, String> {
    text.split(',').map(unit).collect()
}

struct Answer {
    attacker_win: f64,
    defender_win: f64,
    draw: f64,
    stalemate: f64,
    pruned: f64,
    rounds: usize,
    finished: bool,
}

fn force(units: &[(Unit, u32)]) -> Force<Unit> {
    Force::new(units.iter().map(|&(u, n)| Quant::new(u, n)).collect::<Vec<_>>().into())
}

fn solve(
    attackers: &[(Unit, u32)],
    defenders: &[(Unit, u32)],
    attacker_order: &[Unit],
    defender_order: &[Unit],
    prune: f64,
) -> Answer {
    let attackers = force(attackers);
    let defenders = force(defenders);
    let sequence = BattlePhase::create_sequence(&attackers, &defenders);
    let combat_manager = CombatManager::new(
        SurvivorSelector { removal_order: attacker_order.to_vec(), reserved: None },
        SurvivorSelector { removal_order: defender_order.to_vec(), reserved: None },
        RollSelector {},
    );
    let mut round_manager = RoundManager::new(combat_manager, sequence, attackers, defenders);
    let threshold: Probability = prune.try_into().unwrap();
    round_manager.set_prune_threshold(threshold);
    let mut summarizer = Summarizer::new(round_manager.last_round());
    while !round_manager.is_complete() && round_manager.round_index() < MAX_ROUNDS {
        summarizer.add_round(round_manager.advance_round());
    }
    let last = round_manager.last_round();
    let finished = last.is_complete();
    let stalemate = if last.stalemate { f64::from(last.total_probability()) } else { 0.0 };
    let rounds = round_manager.round_index();
    let summary = summarizer.summarize();
    Answer {
        attacker_win: summary.attacker.win_p.into(),
        defender_win: summary.defender.win_p.into(),
        draw: summary.draw_p.into(),
        stalemate,
        pruned: summary.pruned_p.into(),
        rounds,
        finished,
    }
}

fn handle(line: &str) -> Result<String, String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() != 7 {
        return Err(format!("expected 7 fields, got {}", fields.len()));
    }
    let repeats: usize = fields[0].parse().map_err(|_| "bad REPEATS".to_string())?;
    let prune: f64 = fields[1].parse().map_err(|_| "bad PRUNE".to_string())?;
    let budget_ms: f64 = fields[2].parse().map_err(|_| "bad BUDGET_MS".to_string())?;
    let (attackers, defenders) = (army(fields[3])?, army(fields[4])?);
    let (attacker_order, defender_order) = (order(fields[5])?, order(fields[6])?);
    let mut answer: Option<Answer> = None;
    let mut times: Vec<f64> = Vec::new();
    let mut finished_times: Vec<f64> = Vec::new();
    if repeats == 0 {
        answer = Some(solve(&attackers, &defenders, &attacker_order, &defender_order, prune));
    }
    while times.len() < repeats && times.iter().sum::<f64>() < budget_ms {
        let started = Instant::now();
        let solved = solve(&attackers, &defenders, &attacker_order, &defender_order, prune);
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        times.push(ms);
        if solved.finished {
            finished_times.push(ms);
        }
        // the answer of the first solve that finished (else of the first)
        if answer.as_ref().map_or(true, |a| !a.finished && solved.finished) {
            answer = Some(solved);
        }
    }
    let answer = answer.unwrap();
    // the best of the solves that finished (else of all)
    let counted = if finished_times.is_empty() { &times } else { &finished_times };
    let best = if counted.is_empty() {
        "-".to_string()
    } else {
        format!("{:e}", counted.iter().cloned().fold(f64::INFINITY, f64::min))
    };
    let solves = times.len().max(1);
    let finished = if repeats == 0 { answer.finished as usize } else { finished_times.len() };
    let times: Vec<String> = times.iter().map(|t| format!("{:e}", t)).collect();
    Ok(format!(
        "ok {} {:e} {:e} {:e} {:e} {:e} {} {} {}/{} {}",
        best,
        answer.attacker_win,
        answer.defender_win,
        answer.draw,
        answer.stalemate,
        answer.pruned,
        answer.rounds,
        if answer.finished { "finished" } else { "unfinished" },
        finished,
        solves,
        times.join(" ")
    ))
}

fn main() {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout();
    for line in stdin.lock().lines() {
        let line = line.expect("stdin");
        if line.trim().is_empty() {
            continue;
        }
        let out = match handle(&line) {
            Ok(text) => text,
            Err(message) => format!("error {}", message),
        };
        writeln!(stdout, "{}", out.trim_end()).unwrap();
        stdout.flush().unwrap();
    }
}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few battles only")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=2026, help="the random battery's seed")
    parser.add_argument("--json", metavar="PATH", help="write the rows and summary as JSON")
    parser.add_argument("--no-battery", action="store_true", help="the table's rows only")
    parser.add_argument("--fresh", "--fresh-tables", dest="fresh", action="store_true",
                        help="battlecalc solves each battle as never seen "
                        "(battlecalc.api.forget_compiled() before each timed call)")
    parser.add_argument("--aacalc2", default=os.environ.get("AACALC2_DIR"),
                        help="aacalc2 checkout with dist/ built (default: $AACALC2_DIR)")
    parser.add_argument("--alliescalc", default=os.environ.get("ALLIESCALC_DIR"),
                        help="AlliesCalc build directory (default: $ALLIESCALC_DIR)")
    parser.add_argument("--build-alliescalc", metavar="SOURCE",
                        help="build AlliesCalc from SOURCE (checkout or git directory) into "
                        "--alliescalc DIR, then exit")
    args = parser.parse_args()
    if args.build_alliescalc:
        if not args.alliescalc:
            parser.error("--build-alliescalc needs --alliescalc DIR (outside the repository)")
        build_alliescalc(args.build_alliescalc, args.alliescalc)
        return
    if not args.aacalc2 and not args.alliescalc:
        parser.error("set AACALC2_DIR (or --aacalc2) and/or ALLIESCALC_DIR (or --alliescalc)")
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
    peers: dict = {}
    if args.aacalc2:
        peers["aacalc2"] = Aacalc2(args.aacalc2)
    if args.alliescalc:
        peers["alliescalc"] = AlliesCalc(args.alliescalc)
    names = [peer for peer in PEERS if peer in peers]
    cpu = cpu_model()
    mode = ("fresh (forget_compiled before each call; the ratios are against it) and warm, "
            "alternating" if args.fresh else "warm")
    print(f"battlecalc {mode}"
          f", best of {args.repeats}; CPU {cpu}, {os.cpu_count()} cores; ratio = peer ms / ours;"
          f" diff = largest |peer - ours| of {', '.join(OUTCOMES)}; AlliesCalc at prune "
          f"{ALLIESCALC_PRUNE:g}, aacalc2 at 1e-12; '-': not given to that peer")
    print(header(names, args.fresh))
    rows = []
    try:
        for name, attacker, defender, sea in battles + edge:
            cells = solve_peers(name, attacker, defender, sea, args.repeats, peers)
            warm_ms, fresh_ms, ours = time_battlecalc(attacker, defender, sea, args.repeats,
                                                      args.fresh)
            ours_ms = fresh_ms if args.fresh else warm_ms
            for peer, cell in cells.items():
                check_peer(peer, cell, name, attacker, defender, sea, ours, peers)
                cell["ratio"] = cell["ms"] / ours_ms
                cell["ratio_warm"] = cell["ms"] / warm_ms
            row = {
                "name": name, "sea": sea, "attacker": army_text(attacker),
                "defender": army_text(defender), "battlecalc_ms": ours_ms,
                "battlecalc_warm_ms": warm_ms, "battlecalc_fresh_ms": fresh_ms,
                "edge": any(name == e[0] for e in EDGE), "battlecalc": ours, "peers": cells,
                "alliescalc_unfit": alliescalc_unfit(attacker, defender),
            }
            rows.append(row)
            print(row_text(row, names), flush=True)
    finally:
        for peer in peers.values():
            peer.close()
    totals = summary(rows, names)
    print(f"\n{totals['rows']} battles (and {totals['edge_rows']} edge rows, answers only)")
    for peer in names:
        t = totals[peer]
        land = "-" if t["min_ratio_land"] is None else f"{t['min_ratio_land']:.2f}x"
        sea = "-" if t["min_ratio_sea"] is None else f"{t['min_ratio_sea']:.2f}x"
        print(f"{PEER_LABEL[peer]}: {t['rows']} battles, min ratio land {land}, sea {sea}, "
              f"under {GOAL:g}x: {t['under_3x']}; answers more than {TOLERANCE:g} apart: "
              f"{t['answers_differ']} (and {t['differ_by_pruning']} by its pruning only, "
              f"{t['known_differences']} known differences, {t['unfinished']} unfinished)")
        if args.fresh:
            print(f"  against battlecalc warm (same run): min ratio land "
                  f"{t['min_ratio_warm_land'] or 0:.2f}x, sea {t['min_ratio_warm_sea'] or 0:.2f}x")
    print("\ndisagreements (beyond the peer's own pruning, known differences aside; unfinished:"
          " the peer never ended the battle):")
    found = False
    for row in rows:
        for peer in names:
            cell = peer_cell(peer, row)
            if differs(cell):
                found = True
                print(f"  {row['name']} ({row['attacker']} v {row['defender']}"
                      f"{', sea' if row['sea'] else ''}): {PEER_LABEL[peer]} {cell['verdict']}: "
                      + ", ".join(f"{k} {cell['answer'][k]:.12f} v ours {row['battlecalc'][k]:.12f}"
                                  for k in OUTCOMES)
                      + (f"; {cell['cause']}" if cell.get("cause") else ""))
    if not found:
        print("  none")
    if args.json:
        write_json(args.json, {"summary": totals, "rows": rows, "fresh": args.fresh,
                               "repeats": args.repeats, "cpu": cpu})


if __name__ == "__main__":
    main()
