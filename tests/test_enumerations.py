"""Every enumeration a request can start is counted or estimated before it is built, refused
past its cap at once, and cancellable (issue 42 items 1, 4, 5 and its "must show").

* kamikaze placings (reactions.allocations): counted by their partitions before any is listed
  (the partitions of 100 tokens over 100 battleships are 190,569,292: `run` never answered);
* scramble forces (reactions.scramble_choices): each base's forces of at most its cap, the
  bases' totals grown until past the cap (a base of 1,000 fighters and 1,000 tactical bombers
  was 1,002,001 dicts before the 10 of at most 3 were kept);
* the choices' decision tables (reactions.check_tables), and only the results that may be the
  defender's kept (reactions.Best: all 392 choices' tables were kept);
* the waves' battles (waves._estimate, MAX_WAVES) and the planner's forces
  (planner.count_within).

The counts are checked against decision_reference's enumerations (independent: it imports
nothing of the package) and the partition numbers p(n) (OEIS A000041).  The hostile inputs at
full size run in child processes under limits (slow tier); so do the largest inputs the
checks let through, each bounded in time and memory, and each stopped by a cancel.
"""

from __future__ import annotations

import random
import re
import threading
import time

import decision_reference as dr
import pytest

import battlecalc
from battlecalc import reactions
from battlecalc.errors import BattleInputError

TARGETS = ("carrier", "battleship", "cruiser", "destroyer")
# p(n), the partitions of n (OEIS A000041)
PARTITIONS = {0: 1, 1: 1, 5: 7, 10: 42, 18: 385, 19: 490, 20: 627, 50: 204_226,
              100: 190_569_292}


def test_kamikaze_placings_are_counted_as_the_reference_lists_them():
    rng = random.Random(42)
    for _ in range(100):
        attacker = {u: rng.randint(0, 4) for u in dr.KAMIKAZE_TARGETS}
        tokens = rng.randint(0, 6)
        listed = dr.kamikaze_allocations(attacker, tokens)
        assert reactions.count_allocations(attacker, tokens, dr.KAMIKAZE_TARGETS) \
            == len(listed), (attacker, tokens)
    for n, p in PARTITIONS.items():  # n tokens on n battleships: every partition of n
        assert reactions.count_allocations({"battleship": n}, n, ("battleship",)) == p


def test_scramble_forces_are_those_the_reference_lists():
    rng = random.Random(7)
    for _ in range(150):
        bases = [{u: rng.randint(0, 4) for u in dr.SCRAMBLERS} for _ in range(rng.randint(1, 4))]
        bases = tuple({u: n for u, n in b.items() if n} for b in bases)
        listed = dr.scramble_choices(list(bases))
        found = reactions.scramble_choices(bases, 3, dr.SCRAMBLERS)
        assert sorted(map(sorted, map(dict.items, found))) == \
            sorted(map(sorted, map(dict.items, listed))), bases
        # a cap below the count: refused, and the count is never built past it
        if len(listed) > 1:
            with pytest.raises(reactions.TooManyChoices):
                reactions.scramble_choices(bases, 3, dr.SCRAMBLERS, limit=len(listed) - 1)
        assert reactions.scramble_choices(bases, 3, dr.SCRAMBLERS, limit=len(listed)) == found
        # a force given is checked by a flow, never by listing the forces
        for f in range(7):
            for t in range(7):
                force = {u: n for u, n in zip(dr.SCRAMBLERS, (f, t), strict=True) if n}
                assert reactions.can_be_sent(force, bases, 3) == (force in listed), \
                    (force, bases)


def test_a_base_s_forces_are_counted_before_they_are_listed():
    big = {"fighter": 1000, "tactical_bomber": 1000}
    assert reactions.count_base_forces(big, 3) == 10  # (0..3 aircraft of two types)
    assert reactions.count_base_forces({"a": 300, "b": 300, "c": 300}, 3) == 20


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(attacker="100 battleship", defender="1 destroyer", kamikaze=100),
     "190,569,292 scramble and kamikaze choices to weigh (at most 500)"),
    (dict(attacker="1 destroyer", defender="1 sub",
          scramble_from="; ".join(["1000 ftr 1000 tac"] * 20)),
     "more than 500 scramble and kamikaze choices to weigh (at most 500)"),
    # (the placings of 20 tokens on 20 battleships and a destroyer, as the reference lists
    # them: 2,714, each with each of 4 forces)
    (dict(attacker="20 battleship 1 destroyer", defender="1 destroyer", kamikaze=20,
          scramble_from="3 ftr"),
     f"{len(dr.kamikaze_allocations({'battleship': 20, 'destroyer': 1}, 20)):,} scramble and "
     "kamikaze choices to weigh (at most 500)"),
], ids=["100 tokens on 100 battleships", "20 bases of 2,000 aircraft", "tokens x forces"])
def test_the_issue_s_choices_are_refused_at_once(kwargs, message):
    started = time.process_time()  # (CPU: a loaded machine's wait is not work)
    with pytest.raises(BattleInputError, match=re.escape(message)):
        battlecalc.simulate(rules="1940-2e", sea=True, **kwargs)
    assert time.process_time() - started < 1.0


def test_the_defender_s_choice_is_the_one_every_result_kept_gave():
    """Best keeps only the results within TIE of the lowest so far: the choice and its
    result are those best_row takes over every row with every result kept (as before)."""
    from battlecalc import api
    from battlecalc.api import _DEFAULTS
    from battlecalc.spec import simulate_spec

    kwargs = dict(rules="1940-2e", sea=True, attacker="1 battleship 1 cruiser 1 destroyer",
                  defender="1 destroyer 1 sub", scramble_from="1 ftr 1 tac", kamikaze=2,
                  method="exact")
    battle, run = simulate_spec({**_DEFAULTS, **kwargs, "formula_options": {}})
    pairs = reactions.combinations(battle)
    results = [api.solve(reactions.reacted(battle, s, a), run) for s, a in pairs]
    rows = [reactions.row(s, a, r, battle.objective.of(r))
            for (s, a), r in zip(pairs, results, strict=True)]
    chosen = reactions.best_row(battle.reactions, pairs, rows)
    answer = battlecalc.simulate(**kwargs)
    assert answer.reaction_rows == rows
    assert answer.attacker_win == results[chosen].attacker_win
    assert answer.decisions["scrambled"] == rows[chosen]["scrambled"]
    # ties: rows within TIE of the lowest, the first of them taken, however they come
    best = reactions.Best(battle.reactions, [({}, ())] * 4)
    for value, result in ((1.0, "a"), (0.5 + 1e-10, "b"), (0.5, "c"), (0.7, "d")):
        best.add({"value": value}, result)
    assert best.chosen() == (1, "b") and set(best.kept) == {1, 2}


def test_the_choices_decision_tables_are_estimated_before_any_is_solved(monkeypatch):
    """392 choices (28 forces x 14 placings) of a battle of 145 x 203 states, each with its
    optimal retreat: 11,538,520 state pairs, refused before the first solve (this took
    minutes and gigabytes)."""
    from battlecalc import api

    def solve(*args, **kwargs):
        raise AssertionError("a choice was solved before the estimate refused")

    started = time.process_time()  # (CPU: a loaded machine's wait is not work)
    monkeypatch.setattr(api, "solve", solve)
    with pytest.raises(BattleInputError, match=r"^392 scramble and kamikaze choices, each "
                       r"solving its decisions over up to 29,435 state pairs: 11,538,520 in "
                       r"all \(at most 10,000,000\)"):
        api._reactions(*_checked(attacker="6 battleship 6 cruiser 6 destroyer 2 carrier "
                                          "4 fighter",
                                 defender="8 destroyer 6 cruiser 6 sub 2 battleship 2 carrier",
                                 scramble_from="3 ftr 3 tac; 3 ftr 3 tac", kamikaze=2,
                                 retreat_policy="optimal", method="exact"),
                         started, api.solver.LIMITS)
    assert time.process_time() - started < 1.0


def _checked(**kwargs):
    from battlecalc.api import _DEFAULTS
    from battlecalc.spec import simulate_spec

    return simulate_spec({**_DEFAULTS, "rules": "1940-2e", "sea": True, **kwargs,
                          "formula_options": {}})


def test_every_choice_is_a_cancel_point():
    """A progress callback that raises stops the choices between two solves (a server's
    cancel): the first report comes before the first choice is solved."""
    seen = []

    class Stop(Exception):
        pass

    def progress(done, total, what):
        seen.append((done, total, what))
        if what == "scramble and kamikaze choices" and done == 3:
            raise Stop

    with pytest.raises(Stop):
        battlecalc.simulate(rules="1940-2e", sea=True, attacker="2 battleship 1 destroyer",
                            defender="1 destroyer", scramble_from="3 ftr 3 tac",
                            method="exact", progress=progress)
    choices = [s for s in seen if s[2] == "scramble and kamikaze choices"]
    assert choices == [(i, 10, "scramble and kamikaze choices") for i in range(4)]


# ------------------------------------------------------------------ waves and plans


def test_more_waves_than_the_cap_are_refused_at_once():
    from battlecalc.waves import MAX_WAVES

    started = time.process_time()  # (CPU: a loaded machine's wait is not work)
    with pytest.raises(BattleInputError, match=f"^{MAX_WAVES + 1} waves after the first "
                                               f"\\(at most {MAX_WAVES}\\)$"):
        battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf",
                            waves=["1 inf"] * (MAX_WAVES + 1))
    assert time.process_time() - started < 1.0


def test_the_waves_battles_are_estimated_before_any_is_solved(monkeypatch):
    """Each later wave fights from each force the defender may hold with: 100 waves on 300
    infantry are some 30,000 battles, refused before the first."""
    from battlecalc import api

    def solve(*args, **kwargs):
        raise AssertionError("a battle was solved before the estimate refused")

    monkeypatch.setattr(api, "solve", solve)
    started = time.process_time()  # (CPU: a loaded machine's wait is not work)
    with pytest.raises(BattleInputError, match=r"^the waves may solve some 30,101 battles "
                       r"\(each later wave one for each of the 301 forces"):
        battlecalc.simulate(rules="revised", attacker="1 inf", defender="300 inf",
                            waves=["1 inf"] * 100)
    assert time.process_time() - started < 1.0


def test_every_wave_battle_is_a_cancel_point():
    """Later waves had no progress (progress is the first wave's only): a server could
    neither cancel nor time them out.  Now every battle reports before it is solved."""
    seen = []

    class Stop(Exception):
        pass

    def progress(done, total, what):
        seen.append((done, total, what))
        if what == "battles of the waves" and done == 5:
            raise Stop

    with pytest.raises(Stop):
        battlecalc.simulate(rules="revised", attacker="3 inf 1 tank", defender="8 inf",
                            waves=["3 inf 1 tank"] * 3, method="exact", progress=progress)
    assert [s[0] for s in seen if s[2] == "battles of the waves"] == list(range(6))


def test_plan_forces_are_counted_before_they_are_listed():
    """--minimize loss over a pool of 823,543 forces: the forces were listed (and sorted)
    before the cap refused them; counted now, refused in well under a second."""
    from battlecalc.planner import count_within

    assert count_within([6] * 7, [3] * 7, float("inf"), 10**9) == 7**7
    assert count_within([6] * 7, [3] * 7, 9.0, 10**9) == 120  # (3 units of 7 types)
    started = time.process_time()  # (CPU: a loaded machine's wait is not work)
    with pytest.raises(BattleInputError, match="more than 20,000 forces within the cost limit"):
        battlecalc.plan(rules="1940-2e", defender="10 inf",
                        pool="6 inf 6 art 6 mech 6 tank 6 ftr 6 tac 6 bomber",
                        goal="takes_territory>=0.5", objective="loss")
    assert time.process_time() - started < 1.0


# ------------------------------------------------------------------ the slow tier: full size


@pytest.mark.slow
@pytest.mark.parametrize(("args", "message"), [
    (["-a", "100 battleship", "-d", "1 destroyer", "--kamikaze", "100"],
     "Error: 190,569,292 scramble and kamikaze choices to weigh (at most 500); give "
     "scramble or --kamikaze-targets"),
    (["-a", "1 destroyer", "-d", "1 sub", "--scramble-from",
      "; ".join(["1000 ftr 1000 tac"] * 20)],
     "Error: more than 500 scramble and kamikaze choices to weigh (at most 500); give "
     "scramble or --kamikaze-targets"),
], ids=["item 1: kamikaze 100", "item 5: 20 bases of 2,000 aircraft"])
def test_the_issue_s_commands_are_refused_at_once(args, message):
    """Before: the first never answered (its placings listed one by one), the second listed
    20 million forces for 10-27 s before it was refused."""
    from limited import assert_refused, cli_limited

    done = cli_limited("run", "--rules", "1940-2e", "--sea", *args, memory_mb=1536, timeout=20)
    assert assert_refused(done) == message
    assert done.seconds < 8 and done.peak_mb < 300, (done.seconds, done.peak_mb)


PEAK_PROBE = """
import json
import battlecalc

def peak_mb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024

common = dict(rules="1940-2e", sea=True, retreat_policy="optimal", method="exact",
              attacker="3 battleship 2 cruiser 2 destroyer 1 carrier 2 fighter",
              defender="2 destroyer 1 cruiser 2 sub")
# the same kind of battle first (its kernels loaded or compiled: their memory is not the table's)
battlecalc.simulate(**common, scramble_from="1 ftr 1 tac", kamikaze=1)
before = peak_mb()
r = battlecalc.simulate(**common, scramble_from="3 ftr 3 tac; 3 ftr", kamikaze=2)
rows = r.decisions["reactions"]
chosen = min(range(len(rows)), key=lambda i: (rows[i]["value"], i))
print(json.dumps({"rows": len(rows), "grown": peak_mb() - before,
                  "same": r.attacker_win == rows[chosen]["attacker_win"]}))
"""


@pytest.mark.slow
def test_choices_with_the_optimal_retreat_keep_one_table():
    """286 choices (22 forces x 13 placings of 2 tokens), each with its optimal retreat
    (3,033 decisions a table): every choice's result and table were kept (a process peaked at
    512 MB, some 330 MB of them the tables); now only the results that may be the defender's
    choice are, and the answer is the chosen row's.  The growth of the peak is measured past
    a battle of the same kind (its kernels loaded, or compiled where numba's cache is empty)."""
    from limited import python_limited

    done = python_limited(PEAK_PROBE, memory_mb=3072, timeout=300)
    assert done.exit_code == 0, done.stderr[-2000:]
    out = done.json()
    assert out["rows"] == 286 and out["same"], out
    assert out["grown"] < 150, out


# the largest input each check lets through, and the smallest past it (refused at once):
# (endpoint, arguments, one past the check: arguments or None where the count is exact)
LARGEST = {
    "kamikaze: 490 placings (p(19))": ("run", dict(
        rules="1940-2e", sea=True, attacker="19 battleship", defender="1 destroyer",
        kamikaze=19), dict(kamikaze=20)),
    "scramble: 496 forces of 10 bases": ("run", dict(
        rules="1940-2e", sea=True, attacker="1 destroyer", defender="1 sub",
        scramble_from="; ".join(["3 ftr 3 tac"] * 10)),
        dict(scramble_from="; ".join(["3 ftr 3 tac"] * 10 + ["1 ftr"]))),
    "choices x optimal tables: 7,105,000 state pairs": ("run", dict(
        rules="1940-2e", sea=True,
        attacker="6 battleship 6 cruiser 6 destroyer 2 carrier 4 fighter",
        defender="6 destroyer 4 cruiser 4 sub 2 battleship 2 carrier",
        scramble_from="3 ftr 3 tac; 3 ftr 3 tac", kamikaze=2, retreat_policy="optimal"),
        dict(defender="8 destroyer 6 cruiser 6 sub 2 battleship 2 carrier")),
    "waves: 19,901 battles": ("run", dict(
        rules="revised", attacker="1 inf", defender="198 inf", waves=["1 inf"] * 100),
        dict(defender="200 inf")),
    "plan: 1,594,323 forces": ("plan", dict(
        rules="1940-2e", defender="10 inf", goal="takes_territory>=0.5",
        pool="8 inf 8 art 8 mech 8 tank 8 ftr 8 tac 2 bomber"),
        dict(pool="8 inf 8 art 8 mech 8 tank 8 ftr 8 tac 3 bomber")),
    "optimal retreat table: 641,601 state pairs": ("run", dict(
        rules="revised", attacker="400 inf 400 art", defender="400 inf 400 art",
        retreat_policy="optimal"),
        dict(attacker="450 inf 450 art", defender="450 inf 450 art")),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(LARGEST))
def test_the_largest_input_each_check_lets_through_stops_at_the_limit_and_on_cancel(case):
    """On the server's engine (a time limit of 2 s): answered or stopped at the limit, never
    past it by more than a step; a cancel (the client gone) stops it within a second; one
    step past the check is refused at once."""
    from battlecalc.web.server import Engine, TooMuchWork
    from battlecalc.web.work import Cancelled

    what, kwargs, past = LARGEST[case]
    engine = Engine(workers=1, time_limit=2.0, warm_up_battles=[])
    try:
        started = time.perf_counter()
        try:
            engine.compute(kwargs, False, what)
        except TooMuchWork as exc:
            assert "stopped at the server's time limit of 2 s" in str(exc)
        assert time.perf_counter() - started < 6.0  # (2 s and a step, on a loaded machine)
        cancel = threading.Event()
        threading.Timer(0.05, cancel.set).start()
        started = time.perf_counter()
        engine.cache.clear()
        try:
            engine.compute(kwargs, False, what, cancel)
        except (Cancelled, TooMuchWork):
            pass
        else:  # answered: only a run that ends within a second may end before it looks at the
            # cancel (the work reports its progress, where it stops, a few times a second; the
            # scramble case's second run, its sides kept, takes 0.12 s here)
            assert time.perf_counter() - started < 1.0
        assert time.perf_counter() - started < 3.0
        started = time.process_time()
        with pytest.raises(BattleInputError):
            engine.compute({**kwargs, **past}, False, what)
        assert time.process_time() - started < 1.0
    finally:
        engine.close()
