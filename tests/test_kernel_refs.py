"""Kernels compiled without reference counting (jit.kernel refs=False: the exact solver's
per-pair kernels and its sweeps).  numba then neither takes nor drops a reference on the arrays
they are handed, which is sound only while they make no array and return none: a kernel that
returned an array to a counting caller would have it dropped once too often (freed early, or
twice), one that kept a view past its caller would read freed memory.  The check: numba's own
allocation counts (NUMBA_NRT_STATS) balance after many solves through every exact path, in a
process of its own (the counts are switched on before numba starts)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from battlecalc.kernels import exact, jit

# a battle through each of the exact solver's paths (and the Monte Carlo kernel, counted too)
BATTLES = {
    "sea, two-phase round": dict(attacker="8 sub 2 carrier",
                                 defender="6 transport 3 cruiser 2 carrier 2 fighter", sea=True),
    "sea, strikes both ways": dict(attacker="3 sub 2 destroyer 1 fighter",
                                   defender="2 sub 1 cruiser 1 carrier", sea=True),
    "sea, lone transports (revised)": dict(rules="revised", attacker="2 transport 1 destroyer",
                                           defender="1 sub 1 destroyer", sea=True),
    "sea walk": dict(attacker="3 battleship 2 cruiser", defender="4 destroyer 1 carrier",
                     sea=True),
    "land walk": dict(attacker="10 inf 5 tank 3 fighter", defender="12 inf 2 art 2 fighter"),
    "land, merged AA blocks": dict(attacker="6 fighter 2 bomber 4 inf", defender="5 inf 2 aa"),
    "land, rounds law": dict(attacker="6 inf 2 art", defender="5 inf", rounds_law=True),
    "land, retreat below": dict(attacker="6 inf 2 tank", defender="7 inf",
                                retreat_below=0.4),
    "amphibious, bombard, partial retreat": dict(attacker="1 fighter 1 tank", landing="2 inf",
                                                 bombard="1 battleship", defender="3 inf",
                                                 retreat_after=1),
    "sea, compact table": dict(attacker="6 sub 4 fighter 2 destroyer",
                               defender="5 sub 3 fighter 2 carrier 1 destroyer", sea=True,
                               compact=True),
}

PROBE = textwrap.dedent("""
    import gc, json, sys
    import battlecalc
    from battlecalc.kernels import exact, jit
    from numba.core.runtime import rtsys
    jit.compiled()
    dense_from = exact.COMPACT_PAIRS
    battles = json.loads(sys.argv[1])
    out = {}
    for name, battle in battles.items():
        battle = {"rules": "1942-2e", **battle}
        rounds = battle.pop("rounds_law", False)
        # (a small battle in a compact mass table, as a big sea battle is solved)
        exact.COMPACT_PAIRS = 0 if battle.pop("compact", False) else dense_from
        for method in ("exact", "mc"):
            call = dict(battle, method=method, trials=2000, seed=5)
            first = battlecalc.simulate(**call)
            if rounds:
                first.rounds_distribution
            gc.collect()
            before = rtsys.get_allocation_stats()
            for _ in range(20):
                again = battlecalc.simulate(**call)
                assert again.attacker_win == first.attacker_win
            del again
            gc.collect()
            after = rtsys.get_allocation_stats()
            out[f"{name}, {method}"] = [after[i] - before[i] for i in range(4)]
    print(json.dumps(out))
""")


def test_refs_false_compiles_without_reference_counting_and_only_when_asked():
    def f(x):
        return x

    assert getattr(jit.kernel(f), jit._MARK) == {"inline": "never", "nogil": False}
    assert getattr(jit.kernel(refs=False)(f), jit._MARK)["_nrt"] is False
    # the per-pair kernels are marked so; the kernels that make arrays (_scratch, the block
    # drivers) or return them (_out) are not
    def options(name):
        function = getattr(exact, name)
        return getattr(getattr(function, "py_func", function), jit._MARK)

    for name in ("_enter", "_fire", "_play_phased", "_play", "_transition", "_sweep_round",
                 "_sweep_walks", "_fight_on"):
        assert options(name)["_nrt"] is False, name
    for name in ("_scratch", "_solve_block", "_solve_tables", "_solve_compact", "_out",
                 "_solve_blocks"):
        assert "_nrt" not in options(name), name


@pytest.mark.slow
def test_solves_leave_numba_allocations_balanced():
    env = {**os.environ, "NUMBA_NRT_STATS": "1"}
    env.pop(jit.PLAIN_ENV, None)
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(BATTLES)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout.splitlines()[-1])
    assert len(counts) == 2 * len(BATTLES)
    for where, (alloc, free, mi_alloc, mi_free) in counts.items():
        # every solve makes arrays (its outputs, the mass tables): counted, and all freed
        assert alloc > 0 and alloc == free and mi_alloc == mi_free, (where, counts[where])
