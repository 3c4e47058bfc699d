"""The result core: what a planner reads (units kept, likely end states, IPC-loss percentiles)
against hand-computed laws, the views of dice and formula results, and pandas only on demand."""

from __future__ import annotations

import dataclasses
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import MC_TRIALS, assert_mc_agrees

import battlecalc
from battlecalc.kernels import layout
from battlecalc.results import OUTCOME_KEYS, FinalLaw, build_result
from battlecalc.spec import make_battle


def _exact(attacker: str, defender: str, rules: str = "revised"):
    return battlecalc.simulate(rules=rules, attacker=attacker, defender=defender, method="exact")


def test_outcome_keys_follow_the_kernel_codes():
    codes = [layout.ATTACKER_WIN, layout.DEFENDER_WIN, layout.DRAW, layout.STALEMATE,
             layout.RETREAT]
    assert codes == list(range(len(OUTCOME_KEYS)))


def test_one_infantry_each():
    # Revised 1 inf v 1 inf: attacker wins 1/4, defender 5/8, draw 1/8
    data = _exact("1 inf", "1 inf").to_dict()
    assert data["attacker_keeps_at_least"] == {1: pytest.approx(1 / 4, abs=1e-12)}
    likely = data["likely_outcomes"]
    assert [o["survivors"] for o in likely["attacker"]] == [{}, {"infantry": 1}]
    assert [o["probability"] for o in likely["attacker"]] == pytest.approx([3 / 4, 1 / 4])
    assert [o["survivors"] for o in likely["defender"]] == [{"infantry": 1}, {}]
    assert [o["probability"] for o in likely["defender"]] == pytest.approx([5 / 8, 3 / 8])
    # attacker loses 3 IPC with 3/4, the defender with 3/8
    assert data["attacker_ipc_loss_percentiles"] == {"p10": 0, "p50": 3, "p90": 3}
    assert data["defender_ipc_loss_percentiles"] == {"p10": 0, "p50": 0, "p90": 3}


def test_two_infantry_against_one_by_hand():
    # Revised 2 inf (attack 1) v 1 inf (defense 2).  From (2, 1) a round ends the battle or
    # moves on with 29/54; it leaves 2 attackers and a win 11/29, 1 attacker and a win 11/58,
    # and (1, 1) 25/58, which ends in a win 1/4, a draw 1/8 and a loss 5/8.
    r = _exact("2 inf", "1 inf")
    keeps = {1: 11 / 29 + 11 / 58 + 25 / 58 / 4, 2: 11 / 29}
    assert r.attacker_win == pytest.approx(keeps[1], abs=1e-12)
    data = r.to_dict()
    assert data["attacker_keeps_at_least"] == pytest.approx(keeps, abs=1e-12)
    attacker = data["likely_outcomes"]["attacker"]
    assert [o["survivors"] for o in attacker] == [{"infantry": 2}, {}, {"infantry": 1}]
    assert [o["probability"] for o in attacker] == pytest.approx(
        [88 / 232, 75 / 232, 69 / 232], abs=1e-12)
    defender = data["likely_outcomes"]["defender"]
    assert [o["probability"] for o in defender] == pytest.approx([339 / 464, 125 / 464])
    # attacker IPC loss: 0 (88/232), 3 (69/232), 6 (75/232); P(loss <= 3) = 157/232 < 0.9
    assert data["attacker_ipc_loss_percentiles"] == {"p10": 0, "p50": 3, "p90": 6}
    assert data["defender_ipc_loss_percentiles"] == {"p10": 0, "p50": 3, "p90": 3}
    table = r.table()
    assert "attacker keeps at least N units  1:67.7%  2:37.9%" in table
    assert "IPC lost percentiles 10/50/90   attacker 0/3/6   defender 0/3/3" in table
    assert " 37.93%  2 infantry" in table and " 73.06%  nothing" in table


def test_likely_outcomes_list_five_and_laws_sum_to_one():
    r = _exact("6 inf 2 art 2 tank 2 ftr", "8 inf 1 tank 1 aa", rules="1942-2e")
    data = r.to_dict()
    for side in ("attacker", "defender"):
        probabilities = [o["probability"] for o in data["likely_outcomes"][side]]
        assert len(probabilities) == 5 and probabilities == sorted(probabilities, reverse=True)
        law = r.attacker_distribution if side == "attacker" else r.defender_distribution
        assert probabilities == pytest.approx(list(law["probability"][:5]), abs=1e-15)
    keeps = data["attacker_keeps_at_least"]
    assert list(keeps) == list(range(1, 13))
    assert keeps[1] == pytest.approx(r.attacker_win, abs=1e-12)  # no retreat: keeps = wins
    assert all(a >= b for a, b in zip(keeps.values(), list(keeps.values())[1:], strict=False))


def test_monte_carlo_laws_within_four_standard_errors_of_exact():
    exact = _exact("2 inf", "1 inf").to_dict()
    n = MC_TRIALS
    mc = battlecalc.simulate(rules="revised", attacker="2 inf", defender="1 inf", method="mc",
                             trials=n, seed=11).to_dict()
    keeps = exact["attacker_keeps_at_least"]
    assert_mc_agrees(mc["attacker_keeps_at_least"], keeps, probabilities=keeps, means=(),
                     slack=0.0, trials=n)
    assert mc["attacker_ipc_loss_percentiles"] == exact["attacker_ipc_loss_percentiles"]
    assert [o["survivors"] for o in mc["likely_outcomes"]["attacker"]] == \
        [o["survivors"] for o in exact["likely_outcomes"]["attacker"]]


def test_draw_label_says_the_territory_stays_the_defenders():
    # Revised 1 fighter v 1 AA gun: the gun hits 1/6; otherwise the fighter cannot hit the
    # gun either, and a fighter cannot take territory
    r = _exact("1 ftr", "1 aa")
    assert r.draw == pytest.approx(1 / 6, abs=1e-12)
    table = r.table()
    assert "draw (no unit left on either side)      16.67%" in table
    assert "(after a draw the territory stays the defender's)" in table
    assert "draw (both die)" not in table


def test_monte_carlo_swing_law_from_a_histogram():
    # build_result's Monte Carlo input, with a TUV-swing histogram: 1 inf v 1 inf out of 8
    # trials: attacker wins 2 (swing +3), defender wins 5 (-3), draw 1 (0)
    battle = make_battle("revised", "1 inf", "1 inf")
    side = SimpleNamespace(survivors=np.array([[1], [0]], dtype=np.int64),
                           ipc_lost=np.array([0, 3], dtype=np.int64), unit_names=("infantry",))
    tables = SimpleNamespace(attacker=side, defender=side)
    law = FinalLaw(total=8.0, trials=8, outcomes=np.array([2, 5, 1, 0, 0]), takes=2,
                   a_final=np.array([2, 6]), d_final=np.array([5, 3]), mean_rounds=16 / 8,
                   rounds_hist=np.array([0, 4, 2, 2]),
                   swing=(np.array([-3, -2, -1, 0, 1, 2, 3]), np.array([5, 0, 0, 1, 0, 0, 2])),
                   swing_sum=-9.0, swing_sq_sum=63.0, pruned=0.0)
    r = build_result(battle, tables, "mc", 8, 1, law, 0.0)
    swing = r.swing_distribution
    assert list(swing["tuv_swing"]) == [-3, 0, 3]
    assert list(swing["probability"]) == [5 / 8, 1 / 8, 2 / 8]
    assert list(r.rounds_distribution["rounds"]) == [1, 2, 3]
    assert r.tuv_swing == pytest.approx(-9 / 8) and r.mean_rounds == 2.0
    assert r.stderr["tuv_swing"] == pytest.approx(math.sqrt((63 / 8 - (9 / 8) ** 2) / 8))
    assert r.to_dict()["attacker_keeps_at_least"] == {1: 0.25}
    assert "tuv_swing,probability\n-3,0.625\n0,0.125\n3,0.25\n" == r.distribution_csv("swing")
    assert build_result(battle, tables, "mc", 8, 1, dataclasses.replace(law, swing=None), 0.0
                        ).swing_distribution is None


def test_csv_keeps_its_columns_and_adds_the_percentiles():
    rows = [_exact(a, d, rules="1942-2e").to_csv().splitlines() for a, d in
            (("1 inf", "1 inf"), ("3 inf 1 ftr", "2 inf 1 aa"))]
    assert rows[0][0] == rows[1][0]  # one header for every battle of an edition
    header = rows[0][0].split(",")
    assert header[-6:] == [f"{side}_ipc_loss_percentiles.p{q}" for side in ("attacker", "defender")
                           for q in (10, 50, 90)]
    assert header.index("elapsed_s") == len(header) - 7
    assert not any("keeps" in c or "likely" in c for c in header)


def test_json_of_the_new_fields():
    data = json.loads(_exact("1 inf", "1 inf").to_json())
    assert data["attacker_keeps_at_least"] == {"1": pytest.approx(0.25)}
    assert data["likely_outcomes"]["defender"][0] == {"survivors": {"infantry": 1},
                                                      "probability": pytest.approx(0.625)}


def test_formula_result_shares_the_core():
    r = battlecalc.simulate(rules="formula", attacker="3 army", defender="2 army", exchanges=1)
    row = r.flat_row()
    assert row["attacker_win_ci95_low"] == row["attacker_win"] == pytest.approx(22 / 36)
    assert row["attacker_loss_points_distribution.0"] == r.attacker_loss_points_distribution[0]
    assert r.to_frame()["undecided"].iloc[0] == r.undecided
    assert r.distribution_csv("survivors") == ""
    assert r.distribution_csv("rounds") == "exchanges,probability\n1,1.0\n"


@pytest.mark.fresh("views_load_pandas_on_demand")
def test_views_without_pandas_and_frames_on_demand(fresh):
    # (a fresh interpreter, tests/fresh_checks.py: a dice and a formula result's views, then
    # a law as a DataFrame)
    assert fresh == [False, True, ["infantry", "ipc_lost", "probability"], [2, 0, 1]]


def test_text_shows_a_pruned_mass_only_above_float_rounding():
    # an exact result's `pruned` is the mass it played less the mass it passed on: ~1e-16 of
    # rounding in a battle where nothing is skipped, which the text leaves out (JSON keeps it)
    r = _exact("6 inf 2 art 2 tank 2 ftr", "8 inf 1 tank 1 aa", rules="1942-2e")
    for pruned, shown in ((0.0, False), (3.8e-16, False), (0.99e-12, False), (1e-12, True),
                          (5e-11, True)):
        changed = dataclasses.replace(r, pruned=pruned)
        assert ("pruned probability mass" in changed.table()) is shown, pruned
        assert changed.to_dict()["pruned"] == pruned
