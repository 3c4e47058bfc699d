"""The server's warm-up (battlecalc.web.warm; issue 43, friction 2): it reaches every kernel
the page's kinds of battle run, in the order players reach them, and the start line says how
long it takes from what numba's cache holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from battlecalc.web import warm

# What players ask the page for, each kind once (the README's examples where it has one): the
# warm-up must have compiled what these run, or a "warm" server compiles it inside the
# request (17 s for the first optimal retreat, 5.7 s for optimal submerging)
PAGE_BATTLES = [
    dict(rules="1942-2e", attacker="6 inf 2 art 2 tank", defender="8 inf 2 tank",
         retreat_policy="optimal"),
    dict(rules="1942-2e", sea=True, attacker="1 ca", defender="1 sub",
         defender_submerge="optimal"),
    dict(rules="1942-2e", sea=True, attacker="2 sub 1 dd 1 ftr", defender="1 cv 2 ftr 1 dd 1 tt",
         attacker_submerge="optimal"),
    dict(rules="1940-2e", sea=True, attacker="2 dd 1 ca 1 tac", defender="1 dd 1 sub",
         scramble_from="2 ftr", kamikaze=1),
    dict(kind="raid", rules="1940-2e", attacker="2 bomber 1 fighter", defender="1 fighter",
         facility="major", seed=1),
    dict(kind="plan", rules="1942-2e", defender="3 inf", pool="6 inf 2 art 2 tank", seed=1),
    dict(rules="1942-2e", attacker="3 inf 1 tank", defender="4 inf", waves=["2 inf 1 tank"],
         counterattack="2 inf", seed=1),
    dict(rules="1942-2e", attacker="3 inf 1 art 2 tank 1 ftr", defender="5 inf 1 tank 1 aa",
         rounds_distribution=True),
    dict(rules="revised", attacker="3 inf 2 art 1 bmb", defender="4 inf 1 aa", dice="low_luck"),
]

# in a process whose kernels stay plain Python: the kernel functions each list of battles
# calls, by name
CALLED = """
import json, sys
import battlecalc
from battlecalc.kernels import jit
from battlecalc.web import warm

def solve(battle):
    battle = dict(battle)
    how = {"raid": battlecalc.raid, "plan": battlecalc.plan}.get(battle.pop("kind", None),
                                                                   battlecalc.simulate)
    how(**battle)

def called(battles):
    names = set()
    def profile(frame, event, arg):
        if event == "call" and jit.in_kernels(frame.f_code.co_filename):
            names.add(frame.f_code.co_name)
    for battle in battles:
        sys.setprofile(profile)
        try:
            solve(battle)
        finally:
            sys.setprofile(None)
    return sorted(names)

page = json.loads(sys.argv[1])
print(json.dumps({"warm": called(warm.WARM_UP), "page": called(page)}))
"""


@pytest.mark.slow
def test_the_warm_up_runs_every_kernel_the_pages_battles_run():
    env = {**os.environ, "BATTLECALC_PLAIN_KERNELS": "1"}
    done = subprocess.run([sys.executable, "-c", CALLED, json.dumps(PAGE_BATTLES)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    called = json.loads(done.stdout)
    assert set(called["page"]) - set(called["warm"]) == set()
    assert {"_decide_values", "_decide_first"} <= set(called["warm"])


def test_the_warm_up_covers_every_kind_of_the_page_in_players_order():
    kinds = [b.get("kind", "run") for b in warm.WARM_UP]
    assert {"raid", "plan"} <= set(kinds)
    decisions = [i for i, b in enumerate(warm.WARM_UP) if b.get("retreat_policy") == "optimal"
                 or "optimal" in (b.get("attacker_submerge"), b.get("defender_submerge"))]
    reactions = [i for i, b in enumerate(warm.WARM_UP) if b.get("scramble_from")]
    waves = [i for i, b in enumerate(warm.WARM_UP) if b.get("waves")]
    assert decisions and reactions and waves
    # Monte Carlo first (a big battle's request waits for its kernel), then a land battle and
    # its optimal retreat, before the kinds players reach later
    first_exact = next(i for i, b in enumerate(warm.WARM_UP) if b["method"] != "mc")
    assert all(b["method"] == "mc" for b in warm.WARM_UP[:first_exact])
    assert decisions[0] <= first_exact + 1 < reactions[0]


def test_the_start_line_says_how_long_the_warm_up_takes(monkeypatch):
    """Compiling from an empty cache: about the seconds measured for every kernel (about 80 s
    of one core, 78 s measured on the 2-core machine); a cache holding them all: a few
    seconds; a cache holding some: the rest."""
    pytest.importorskip("starlette")
    from battlecalc.kernels import jit
    from battlecalc.web.server import warm_up_words

    monkeypatch.setattr(jit, "plain_kernels", lambda: False)
    everything = warm.START_SECONDS + sum(s for _, s in warm.COLD_SECONDS)
    monkeypatch.setattr(jit, "on_disk", lambda module, name: False)
    assert warm.estimate_seconds() == everything
    assert "first run only (about 80 s on one core)" in warm_up_words()
    monkeypatch.setattr(jit, "on_disk", lambda module, name: True)
    assert warm.estimate_seconds() == warm.START_SECONDS
    assert warm_up_words() == "loading the kernels in the background (a few seconds)"
    decide = ("battlecalc.kernels.exact.sweep", "_decide_values")
    monkeypatch.setattr(jit, "on_disk", lambda module, name: (module, name) != decide)
    assert warm.estimate_seconds() == warm.START_SECONDS + dict(warm.COLD_SECONDS)[decide]
    # every entry named is a kernel of the package
    import importlib

    for (module, name), _ in warm.COLD_SECONDS:
        assert hasattr(importlib.import_module(module), name), name
