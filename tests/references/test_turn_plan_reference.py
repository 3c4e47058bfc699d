"""The turn planner (issue 44) against tests/references/turn_plan_reference.py: on boards whose
candidates can all be enumerated, the plan's value equals the exhaustive optimum of the same
model to 1e-6 (the Revised opening, the Russians, --counter none --min-win 0.8: 25.022232, the
figure of issue 44), and the greedy baseline the planner reports equals the reference's
(the Revised opening: 5.046267, issue 44's 5.05), the plan worth at least as much.

The reference takes the classes from part 1's independent reference (reach_reference: its own
reading of the save and its own routes) and the candidate battles' answers from the package
(battlecalc.turn.leaves): it checks the combination, not the battles (those are simulate's,
checked elsewhere; three of them against `battlecalc run` in tests/test_turn_plan.py).

Slow: each board solves every candidate battle (hundreds to thousands) and the reference
enumerates every combination in Python."""

from __future__ import annotations

import pytest
from hostile_saves import triplea_fixtures
from save_edits import chain, written
from turn_plan_reference import (
    classes_of,
    exhaustive_optimum,
    forces_of,
    greedy_baseline,
    supply,
)
from turn_reference import reach_reference, read

pytest.importorskip("javaobj.v2", reason="javaobj-py3 (battlecalc[triplea]) absent")
pytest.importorskip("scipy", reason="scipy (battlecalc[turn]) absent")

from battlecalc.turn import load, plan_turn  # noqa: E402
from battlecalc.turn.leaves import Leaves  # noqa: E402
from battlecalc.turn.theatre import theatre_of  # noqa: E402

SAVES = triplea_fixtures() / "saves"
START = SAVES / "revisted_start_of_game.tsvg"
LAND_COMBAT = SAVES / "revised_during_land_to_land_combat.tsvg"
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not SAVES.is_dir(), reason="TripleA fixtures not found")]

BOARDS = {  # name: (save, edits)
    "the russians' opening": (START, []),
    "the germans' first turn": (START, [lambda e: e.step("germanCombatMove")]),
    "the japanese' first turn": (START, [lambda e: e.step("japaneseCombatMove")]),
    "ukraine emptied (a walk-in)": (START, [lambda e: e.move_units("Ukraine S.S.R.",
                                                                    "Germany")]),
    "the germans in the battle save": (LAND_COMBAT, [lambda e: e.step("germanPurchase")]),
}


@pytest.fixture(scope="module")
def boards(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plan_boards")
    return {name: written(folder, chain(save, *edits), f"{i}.tsvg") if edits else save
            for i, (name, (save, edits)) in enumerate(BOARDS.items())}


def _reference_inputs(path, objective="value", counter="none"):
    """(classes, fronts, answer, theatre) of a board: the classes from part 1's reference,
    every force of every front solved by the package, answer(front, {type: n}) -> (p_take,
    value) under the objective."""
    game = read(path)
    mapping, _ = reach_reference(path, game=game)
    water = {name for name, t in game["territories"].items() if t["water"]}
    classes = classes_of(mapping, water)
    fronts = sorted({t for c in classes for t in c["targets"]})
    theatre = theatre_of(load(path))
    counters = None
    if counter != "none":
        from battlecalc.turn.counter import CounterForces

        counters = CounterForces(theatre)
    leaves = Leaves(theatre)

    def key(front, force):
        counts = tuple(force.get(t, 0) for t in theatre.types)
        assert sum(counts) == sum(force.values()), (force, theatre.types)
        army = None if counters is None else tuple(counters.force(front).items())
        return front, counts, army

    leaves.solve(key(t, force) for t in fronts for force in forces_of(classes, t))

    def answer(front, force):
        leaf = leaves.get(*key(front, force))
        value = theatre.fronts[front].value
        if objective == "hold":
            return leaf.p_take, leaf.swing_all + value * leaf.p_hold
        return leaf.p_take, leaf.swing + value * leaf.p_take

    return classes, fronts, answer, theatre


@pytest.mark.parametrize("name", list(BOARDS))
def test_the_plan_is_the_exhaustive_optimum(boards, name):
    path = boards[name]
    classes, fronts, answer, theatre = _reference_inputs(path)
    assert {t: supply(classes, t) for t in fronts} == {
        t: {k: n for k, n in zip(theatre.types, f.supply, strict=True) if n}
        for t, f in theatre.fronts.items()}
    best, chosen = exhaustive_optimum(classes, fronts, answer, 0.8)
    plan = plan_turn(path, counter="none", min_win=0.8)
    assert plan.proven_optimal
    assert plan.value == pytest.approx(best, abs=1e-6)
    assert plan.value > 0
    if name == "the russians' opening":
        assert best == pytest.approx(25.022232, abs=1e-6)  # issue 44's figure
        assert set(chosen) == {"West Russia", "Ukraine S.S.R."}


@pytest.mark.parametrize("name", list(BOARDS))
def test_the_greedy_baseline(boards, name):
    path = boards[name]
    classes, fronts, answer, theatre = _reference_inputs(path)
    game = read(path)
    costs = {t: theatre.costs[i] for i, t in enumerate(theatre.types)}
    rows = [{"name": t, "production": theatre.fronts[t].production,
             "defenders_cost": sum(theatre.ruleset.units[u].cost * n
                                   for u, n in theatre.fronts[t].defender.items())}
            for t in fronts]
    value, _ = greedy_baseline(classes, rows, costs, game["order"], answer)
    plan = plan_turn(path, counter="none", min_win=0.8)
    assert plan.greedy == pytest.approx(value, abs=1e-9)
    assert plan.value >= value - 1e-9
    if name == "the russians' opening":
        assert value == pytest.approx(5.046267, abs=1e-6)  # issue 44's 5.05


def test_hold_with_the_counter_attack_is_the_exhaustive_optimum():
    """Under --objective hold --counter max the Russians send everything that can reach West
    Russia there (issue 44: the counter-attack changes the answer), and the plan is the
    reference's optimum of the values with the counter-attack."""
    classes, fronts, answer, _ = _reference_inputs(START, "hold", "max")
    best, chosen = exhaustive_optimum(classes, fronts, answer, 0.8)
    plan = plan_turn(START, objective="hold", counter="max")
    assert plan.proven_optimal
    assert plan.value == pytest.approx(best, abs=1e-6)
    assert list(chosen) == ["West Russia"] == [b.target for b in plan.battles]
    assert chosen["West Russia"] == supply(classes, "West Russia")
