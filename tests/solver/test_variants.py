"""Every variant of the exact solver against the general path, each selected by plan
(solver.choose's keywords and solver.Limits, through the `plan_of` fixture), never by a module
switch: the same answer to 1e-12 (or bit for bit where the two paths sum the same terms in the
same order), or, for pruning, within the mass the solve reports as pruned.  The battles are the
catalogue's path battles (tests/battles.py), the golden's path cases.

* Merged blocks (SolvePlan.merge_blocks): round-1 AA fire starts the attacker in one block per
  outcome (its aircraft shot down); a block often reaches a state of block 0 (the same units)
  after a few casualties, or at once when its first casualties are aircraft, and from there on
  the two walks are one: the solver plays each such state once, its probability from every
  block summed (solver.tables.merged_walks, kernels.exact.sweep).  Against the block-by-block
  solve, on editions with either AA casualty rule, low luck, the rounds law, keep_land,
  orders of losses and retreats.
* The row sweep (row_sweep): the land fast path's closed sweep plays a whole row of state pairs
  (one attacker state) at once; against the sweep a pair at a time, with and without AA,
  merged or not, with retreats.
* Two phases (two_phase): where a side's subs strike, the closed sweep moves each pair's mass
  first into a table of the pairs after the strikes, and plays general fire once from each
  pair of that table, not once per strike outcome of every pair; against the one-phase round
  on random sea battles of five editions with subs on either side or both, destroyers
  (strikes cancelled, and Revised's strike casualties firing back: pairs played in one phase
  among two-phase ones), transports, submerging, retreats and low luck; and small battles
  against the independent Fraction reference (tests/references/sea_reference.py).
* The sea walk (sea_walk): a sea battle without submarines is two single casualty walks
  (every hit may land on any unit), played by the land fast path's walk; against the general
  round on random sea battles of every edition (two-hit battleships and carriers, transports,
  damaged units, low luck, retreats, the rounds law).
* The compact mass table (Limits.compact_pairs, table_start): a state gets its row or column
  of the table when it first gets probability; bit for bit the dense table's answers on random
  sea battles of every edition, where it starts tiny and grows and where it starts at its
  shipped size.
* Pruning within a budget (Limits.prune_*; choose(pruning=False) solves unpruned): pruning
  only ever drops probability (a state not played on, the tails of a hit law), so each
  probability of a pruned answer lies between the unpruned one less the mass the pruned solve
  reports as pruned, and the unpruned one: checked on battles small enough for both, with
  the pruning switched on at their size and its thresholds raised so that it really drops
  something.
"""

from __future__ import annotations

import json

import battles
import golden
import numpy as np
import pytest
from helpers import answers, assert_same, battle_id
from sea_reference import exact_sea
from tiers import sampled

import battlecalc
from battlecalc.kernels import jit

# --- merged blocks and the row sweep ----------------------------------------------------------


@pytest.mark.parametrize("name", list(battles.LAND_MERGED))
def test_merged_solve_equals_the_block_by_block_one(name, plan_of):
    battle = dict(battles.LAND_MERGED[name], method="exact")
    merged, one_by_one = plan_of(battle), plan_of(battle, merge_blocks=False)
    assert merged.plan.merge_blocks and not one_by_one.plan.merge_blocks  # two paths
    assert_same(answers(merged.result()), answers(one_by_one.result()))


@pytest.mark.parametrize("merge", [True, False])
@pytest.mark.parametrize("name", list(battles.LAND_SWEPT))
def test_row_sweep_equals_the_pair_sweep(name, merge, plan_of):
    jit.compiled()  # (the compiled kernels, as battles of some size run; plain: plain ones)
    battle = dict(battles.LAND_SWEPT[name], method="exact")
    rows = plan_of(battle, merge_blocks=merge)
    pairs = plan_of(battle, merge_blocks=merge, row_sweep=False)
    assert rows.plan.row_sweep and not pairs.plan.row_sweep
    assert rows.plan.merge_blocks == pairs.plan.merge_blocks
    assert_same(answers(rows.result()), answers(pairs.result()))


def test_merged_answers_do_not_depend_on_threads(plan_of):
    battle = dict(battles.LAND_MERGED["land units first"], method="exact")
    by_threads = []
    try:
        for n in (1, 2):
            battlecalc.set_threads(n)
            planned = plan_of(battle)
            assert planned.plan.merge_blocks and planned.plan.threads == n
            by_threads.append(answers(planned.result()))
    finally:
        battlecalc.set_threads(None)
    assert by_threads[0] == by_threads[1]


# --- two phases -------------------------------------------------------------------------------


def _two_phase_against_one(battle: dict, plan_of) -> None:
    jit.compiled()
    battle = dict(battle, method="exact")
    two, one = plan_of(battle), plan_of(battle, two_phase=False)
    assert two.plan.two_phase and not one.plan.two_phase
    assert_same(answers(two.result()), answers(one.result()))


@pytest.mark.parametrize("name", list(battles.SEA_TWO_PHASE))
def test_two_phase_round_equals_the_one_phase_round(name, plan_of):
    _two_phase_against_one(battles.SEA_TWO_PHASE[name], plan_of)


# (the random batteries below: every other battle in the quick tier, all in the slow)
@pytest.mark.parametrize("i", sampled([(i,) for i in range(60)], 2))
def test_two_phase_round_on_random_sea_battles(i, plan_of):
    _two_phase_against_one(battles.sea_two_phase_random()[i], plan_of)


@pytest.mark.parametrize("edition, attacker, defender", [
    ("1942-2e", {"submarine": 2, "cruiser": 1}, {"submarine": 2, "fighter": 1}),
    ("1942-2e", {"battleship": 1, "bomber": 1}, {"submarine": 3}),
    ("revised", {"submarine": 2, "destroyer": 1}, {"submarine": 2, "transport": 1}),
    ("classic", {"battleship": 1, "submarine": 1}, {"submarine": 2, "carrier": 1}),
])
def test_two_phase_round_matches_the_reference(edition, attacker, defender, plan_of):
    expected = exact_sea(edition, attacker, defender)
    planned = plan_of(dict(rules=edition, attacker=attacker, defender=defender, sea=True,
                           method="exact"))
    assert planned.plan.two_phase
    result = planned.result()
    for key in ("attacker_win", "defender_win", "draw", "stalemate", "mean_rounds"):
        assert getattr(result, key) == pytest.approx(float(expected[key]), abs=1e-12), key


# --- the sea walk -----------------------------------------------------------------------------


@pytest.mark.parametrize("battle", sampled([(b,) for b in battles.sea_walk_random()], 2,
                                           [battle_id(b) for b in battles.sea_walk_random()]))
def test_walk_path_equals_the_general_round(battle, plan_of):
    jit.compiled()
    walk, general = plan_of(battle), plan_of(battle, sea_walk=False)
    assert walk.plan.sea_walk and not general.plan.sea_walk
    assert_same(answers(walk.result()), answers(general.result()))


# --- the compact mass table -------------------------------------------------------------------


@pytest.mark.parametrize("battle", sampled([(b,) for b in battles.compact_random()], 2,
                                           [battle_id(b) for b in battles.compact_random()]))
def test_compact_table_gives_the_dense_tables_answers(battle, plan_of):
    jit.compiled()
    dense = plan_of(battle, compact_pairs=10**18)
    tiny = plan_of(battle, compact_pairs=0, table_start=4)  # a tiny table, grown
    shipped = plan_of(battle, compact_pairs=0)  # the shipped first size
    assert dense.plan.table == (0, 0) and tiny.plan.table[0] == min(
        4, tiny.compiled.attacker.n_states)
    assert shipped.plan.table[0] > 0
    expected = answers(dense.result())
    assert answers(tiny.result()) == expected
    assert answers(shipped.result()) == expected


def test_pruned_battles_keep_their_answers_in_a_compact_table(plan_of):
    """A battle pruned within the budget (Limits.prune_pairs state pairs or more) is pruned
    alike in a compact table and a dense one."""
    jit.compiled()
    battle = dict(rules="1942-2e", sea=True, method="exact",
                  attacker="4 sub 5 dd 5 ca 4 bb 2 cv 7 ftr 3 bmb",
                  defender="4 sub 6 dd 5 ca 5 bb 3 cv 7 ftr")
    dense = plan_of(battle, compact_pairs=10**18)
    compiled = dense.compiled
    assert compiled.attacker.n_states * compiled.defender.n_states >= dense.limits.prune_pairs
    assert dense.plan.pruned_within_budget
    dense_answers = answers(dense.result())
    assert dense_answers[".pruned"] > 0
    compact = answers(plan_of(battle, compact_pairs=0, table_start=64).result())
    assert compact == dense_answers
    # and they agree with the unpruned answer to the mass they report pruned
    unpruned = answers(plan_of(battle, compact_pairs=10**18, pruning=False).result())
    assert unpruned[".pruned"] < compact[".pruned"] / 10
    for key in (".attacker_win", ".defender_win", ".draw"):
        difference = abs(compact[key] - unpruned[key])
        assert difference <= compact[".pruned"] + unpruned[".pruned"], key


# --- pruning within a budget ------------------------------------------------------------------

# pruning on at every size, with thresholds far above the shipped ones
PRUNED_HARD = dict(prune_pairs=0, prune_budget=1e-5, prune_state_eps=1e-7, prune_tail_eps=1e-8)


def _law(law) -> dict:
    """A side's final law as {(survivor counts, IPC lost): probability}."""
    return {(tuple(row), ipc): p for row, ipc, p in
            zip(law.survivors.tolist(), law.ipc_lost.tolist(), law.probability, strict=True)}


def _probabilities(result, keys=None) -> np.ndarray:
    """Every probability of an exact result: its outcomes, then both sides' final laws at the
    end states `keys` (default: its own; missing ones 0)."""
    laws = [_law(result.attacker_law), _law(result.defender_law)]
    keys = keys or [sorted(law) for law in laws]
    return np.concatenate([
        [result.attacker_win, result.defender_win, result.draw, result.stalemate,
         result.retreat, result.takes_territory],
        *([law.get(k, 0.0) for k in side_keys] for law, side_keys in zip(laws, keys,
                                                                         strict=True))])


def _gap(full, pruned) -> np.ndarray:
    """full's probabilities less pruned's, end states keyed as in full."""
    keys = [sorted(_law(full.attacker_law)), sorted(_law(full.defender_law))]
    # pruning only removes probability: no end state of its own
    assert set(_law(pruned.attacker_law)) <= set(keys[0])
    assert set(_law(pruned.defender_law)) <= set(keys[1])
    return _probabilities(full, keys) - _probabilities(pruned, keys)


@pytest.mark.parametrize("name", list(battles.PRUNE_SMALL))
def test_pruned_answers_lie_within_the_reported_pruned_mass(name, plan_of):
    battle = dict(battles.PRUNE_SMALL[name], method="exact")
    hard = plan_of(battle, **PRUNED_HARD)
    assert hard.plan.pruned_within_budget
    pruned = hard.result()
    full = plan_of(battle, pruning=False, **PRUNED_HARD).result()
    assert 1e-9 < pruned.pruned <= 1e-5  # it dropped something, within the budget
    assert full.pruned < 1e-12
    gap = _gap(full, pruned)
    assert gap.min() >= -1e-14
    assert gap.max() <= pruned.pruned - full.pruned + 1e-14


@pytest.mark.parametrize("name", [name for name in battles.PRUNE_SMALL
                                  if name.startswith("sea")])
def test_a_spent_budget_plays_every_pair_after_it(name, plan_of):
    # a budget this small is spent early in the sweep: the pairs under the threshold after
    # that are played (two-phase where the pair allows), and the answer stays within it
    battle = dict(battles.PRUNE_SMALL[name], method="exact")
    pruned = plan_of(battle, **{**PRUNED_HARD, "prune_budget": 1e-9}).result()
    full = plan_of(battle, pruning=False).result()
    assert 0.0 < pruned.pruned <= 1e-9 + 1e-12  # (and what STATE_EPS drops: far less)
    gap = _gap(full, pruned)
    assert gap.min() >= -1e-14
    assert gap.max() <= pruned.pruned - full.pruned + 1e-14


def test_small_battles_are_not_pruned_within_the_budget(plan_of):
    # below Limits.prune_pairs nothing changes: the same numbers with pruning forbidden
    battle = dict(battles.PRUNE_SMALL["land, AA blocks"], method="exact")
    allowed = plan_of(battle)
    assert not allowed.plan.pruned_within_budget
    on, off = allowed.result(), plan_of(battle, pruning=False).result()
    assert np.array_equal(_probabilities(on), _probabilities(off)) and on.pruned == off.pruned


@pytest.mark.slow
def test_big_land_battle_is_solved_exactly_by_auto_within_the_budget(plan_of):
    auto = plan_of(battles.PRUNE_BIG_LAND)
    assert auto.plan.method == "exact" and auto.plan.pruned_within_budget
    result = auto.result()
    assert result.method == "exact"
    assert 0.0 <= result.pruned <= auto.limits.prune_budget <= 1e-9
    full = plan_of(dict(battles.PRUNE_BIG_LAND, method="exact"), pruning=False).result()
    gap = _gap(full, result)
    assert gap.min() >= -1e-13
    assert gap.max() <= result.pruned - full.pruned + 1e-13


def test_pruned_answers_do_not_depend_on_the_thread_count(plan_of):
    battle = dict(battles.PRUNE_SMALL["land, AA blocks"], method="exact")
    try:
        battlecalc.set_threads(1)
        one = plan_of(battle, **PRUNED_HARD).result()
        battlecalc.set_threads(2)
        two = plan_of(battle, **PRUNED_HARD).result()
    finally:
        battlecalc.set_threads(None)
    assert np.array_equal(_probabilities(one), _probabilities(two))
    assert one.pruned == two.pruned


# --- the catalogue ----------------------------------------------------------------------------


def test_the_path_battles_are_the_goldens():
    """The catalogue's path battles are the battles the golden (tests/golden.py) froze the
    answers of, each variant's, before the solver's variants became plans."""
    with open(golden.FIXTURE) as f:
        frozen = [{k: c[k] for k in ("kind", "group", "variant", "args")}
                  for c in json.load(f)["cases"] if c["group"] in (
                      "land sweep", "sea memo", "sea walk", "compact table", "prune")]
    built = [{k: c[k] for k in ("kind", "group", "variant", "args")}
             for c in golden._path_cases()]
    assert json.loads(json.dumps(built)) == frozen
