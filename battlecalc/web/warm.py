"""The web server's warm-up battles, and numba's cache filled with their kernels by a process of
its own.

`battlecalc serve` starts ``python -m battlecalc.web.warm`` (the battles as JSON on its stdin)
beside itself: the child compiles every kernel the battles reach into numba's cache on disk
while the server answers, small battles in plain Python (solver.plan.kernels_for) and Monte
Carlo with the kernel it compiles for itself; then the server loads them all from the cache
(Engine.warm_up), in a second or two.  Compiling in the server itself instead held its requests
up: numba compiles one function at a time, and its compiling holds the interpreter's lock
most of the time.  One child at a time builds a given cache (a lock file): the servers of
``serve --workers N`` share the first one's work.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
import time

# Small battles of every kind the page offers, in the order players reach them (the page's
# example is a small land battle: plain Python answers it at once), run once in the background
# from start-up so that every kernel is compiled (or loaded from numba's cache) early; the
# page answers meanwhile (Engine.warm_up).  "kind": "raid" or "plan" is solved by
# battlecalc.raid or battlecalc.plan, the rest by battlecalc.simulate (waves too).  Each names
# its method (tests read the kinds covered).
WARM_UP = [
    # Monte Carlo first (build runs these alone, before every kernel is compiled): a big
    # battle's request waits for its kernel (server.Engine._await_child); a land battle
    # without a retreat policy first (its walk compiles 4 kernels, about 2 s; a retreat
    # policy's walk 8)
    dict(rules="1942-2e", attacker="2 inf 1 tank 1 ftr", defender="2 inf 1 aa", method="mc",
         trials=1000, seed=1),
    dict(rules="1942-2e", sea=True, attacker="1 sub 1 dd 1 ftr", defender="1 dd 1 cv 1 ftr",
         method="mc", trials=1000, seed=1),
    dict(rules="1942-2e", attacker="1 ftr", landing="2 inf", bombard="1 bb", defender="2 inf",
         method="mc", trials=1000, seed=1),
    dict(rules="revised", attacker="1 inf 1 art 1 ftr", defender="2 inf 1 aa", method="mc",
         trials=1000, seed=1, retreat_after=2),
    # then the exact solver as the page reaches it: a land battle with its charts' laws, its
    # optimal retreat, a sea battle, optimal submerging, an amphibious assault
    dict(rules="1942-2e", attacker="2 inf 1 tank 1 ftr", defender="2 inf 1 aa", method="exact",
         rounds_distribution=True),
    dict(rules="1942-2e", attacker="3 inf 1 art 1 tank", defender="4 inf 1 tank",
         method="exact", retreat_policy="optimal"),
    dict(rules="1942-2e", sea=True, attacker="1 sub 1 dd 1 ftr", defender="1 dd 1 cv 1 ftr",
         method="exact"),
    dict(rules="1942-2e", sea=True, attacker="1 ca", defender="1 sub",
         defender_submerge="optimal", method="exact"),
    dict(rules="1942-2e", attacker="1 ftr", landing="2 inf", bombard="1 bb", defender="2 inf",
         method="exact"),
    dict(rules="revised", attacker="1 inf 1 art 1 ftr", defender="2 inf 1 aa", method="exact"),
    # the other kinds of the page: a bombing raid (with escorts and interceptors), the
    # planner, waves with a counter-attack, 1940 2E's scramble and kamikaze, the retreat
    # policies, low luck, a formula battle
    dict(kind="raid", rules="1940-2e", attacker="2 bomber 1 fighter", defender="1 fighter",
         facility="major", method="auto", seed=1),
    dict(kind="raid", rules="1942-2e", attacker="2 bomber", target_value=5, method="auto",
         seed=1),
    dict(kind="plan", rules="1942-2e", defender="2 inf", pool="3 inf 1 art 1 tank",
         method="auto", seed=1),
    dict(rules="1942-2e", attacker="3 inf 1 tank", defender="4 inf", waves=["2 inf 1 tank"],
         counterattack="2 inf", method="auto", seed=1),
    dict(rules="1940-2e", sea=True, attacker="2 dd 1 ca 1 tac", defender="1 dd 1 sub",
         scramble_from="2 ftr", kamikaze=1, method="exact"),
    dict(rules="1942-2e", attacker="2 inf 1 tank", defender="3 inf", method="exact",
         retreat_below=0.5),
    dict(rules="1942-2e", sea=True, attacker="2 sub", defender="1 sub 1 tt", method="exact",
         retreat_below=0.5),
    dict(rules="revised", attacker="3 inf 2 art 1 bmb", defender="4 inf 1 aa",
         dice="low_luck", method="exact"),
    dict(rules="formula", attacker="2 army", defender="2 army", method="exact"),
    dict(rules="formula", attacker="2 army", defender="2 army", method="mc", trials=1000,
         seed=1),
]

# CPU seconds numba took to compile the warm-up's kernels from an empty cache, by the entry
# kernel that pulls them in (measured on the 2-core AMD EPYC of the development machine,
# 2026-12-07, each after those above it): the start line's estimate counts those not in the
# cache (estimate_seconds)
COLD_SECONDS = (
    (("battlecalc.kernels.montecarlo", "_simulate_walk_chunks"), 2.0),
    (("battlecalc.kernels.montecarlo", "_simulate_chunks"), 5.5),
    (("battlecalc.kernels.exact.sweep", "_solve_walk_blocks"), 23.0),
    (("battlecalc.kernels.exact.sweep", "_decide_values"), 21.0),
    (("battlecalc.kernels.exact.sweep", "_solve_blocks"), 20.0),
    (("battlecalc.kernels.exact.sweep", "_win_values"), 2.0),
    (("battlecalc.kernels.formula", "row_counts"), 1.0),
)
START_SECONDS = 5.0  # the child's and the server's imports, the kernels loaded from the cache


def estimate_seconds() -> float:
    """About how many seconds of CPU the warm-up takes now: START_SECONDS plus COLD_SECONDS of
    each entry kernel not in numba's cache (compiling is one core's work: about its wall time
    on a quiet machine)."""
    from ..kernels import jit

    if jit.plain_kernels():
        return 0.0
    cold = 0.0
    for (module, name), seconds in COLD_SECONDS:
        try:
            if not jit.on_disk(module, name):
                cold += seconds
        except (AttributeError, ImportError):  # (a kernel renamed: counted as cold)
            cold += seconds
    return START_SECONDS + cold


def solve(battle: dict, progress=None):
    """One warm-up battle: battlecalc.raid, battlecalc.plan or battlecalc.simulate (waves
    too) by its "kind"."""
    from .. import api
    from ..planner import plan
    from ..raids import raid
    from ..waves import simulate

    battle = dict(battle)
    kind = battle.pop("kind", "run")
    solver = {"raid": raid, "plan": plan}.get(kind)
    if solver is None:
        solver = simulate if "waves" in battle or "counterattack" in battle else api.simulate
    return solver(**battle, progress=progress)


COMPILING = "compiling kernels (first run only)"  # battlecalc.kernels.jit.COMPILING
SAY_SECONDS = 0.5  # a warm-up battle that took longer compiled kernels: its line is printed
EVERY_SECONDS = 5.0  # the kernel being compiled, said at most this often


@contextlib.contextmanager
def _one_build_at_a_time():
    """Hold a lock file for this install and this cache (numba's cache folder as the
    environment names it) while the block runs: a second build waits, then finds the kernels on
    disk.  (No lock where the platform has no fcntl.)"""
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield
        return
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # (this install)
    key = hashlib.sha256((package + "\0" + os.environ.get("NUMBA_CACHE_DIR", "")).encode()
                         ).hexdigest()[:16]
    path = os.path.join(tempfile.gettempdir(), f"battlecalc-build-{os.getuid()}-{key}.lock")
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def build(battles: list[dict], out=sys.stderr) -> None:
    """Solve each battle with compiled kernels (numba compiles them, or loads them from its
    cache), saying how far it is on `out`.  A battle the library refuses is said, not fatal."""
    from .. import api
    from ..errors import BattleInputError

    said = [0.0]

    def say(done, total, what="trials", **_):
        """The kernel numba compiles now (jit.compiling), at most every EVERY_SECONDS."""
        now = time.perf_counter()
        if what.startswith(f"{COMPILING}:") and now - said[0] >= EVERY_SECONDS:
            said[0] = now
            print(f"battlecalc: {what}, {now - started:.0f} s", file=out, flush=True)

    # Monte Carlo's kernels first (a few seconds each), alone: a server's Monte Carlo request
    # meanwhile waits for its kernel to reach the cache (server.Engine._await_child), the
    # exact solver's small battles run in plain Python until theirs are there.  Before
    # api.compile_kernels, a Monte Carlo run compiles its own kernel only (its sides by the
    # Python builder: compile.build_side); then every battle, each kernel compiled or loaded
    first = [b for b in battles if b.get("method") == "mc"]
    with _one_build_at_a_time():
        started = time.perf_counter()
        for battle in first:
            try:
                solve(battle, say)
            except BattleInputError:
                pass  # (said below)
        api.compile_kernels()
        for i, battle in enumerate(battles, 1):
            before = time.perf_counter()
            try:
                solve(battle, say)
            except BattleInputError as exc:
                print(f"battlecalc: warm-up battle refused: {battle}: {exc}", file=out,
                      flush=True)
            now = time.perf_counter()
            if now - before > SAY_SECONDS:  # (compiled, not loaded from the cache)
                print(f"battlecalc: compiling kernels (first run only): {i} of "
                      f"{len(battles)} warm-up battles, {now - started:.0f} s", file=out,
                      flush=True)


if __name__ == "__main__":
    # Ctrl-C in the server's terminal reaches this child too; the server kills it as it stops
    # (Engine.close), so it takes no SIGINT of its own: raised inside numba's compiler (an
    # llvmlite callback) the KeyboardInterrupt printed a traceback ("Exception ignored on
    # calling ctypes callback function", then numba's error), 1 run in 4 of test_serve_stop
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    build(json.load(sys.stdin))
