"""The decision references (tests/decision_reference.py): hand-computed values, the issue's
numbers, and agreement with the existing references' fixed policies."""

from __future__ import annotations

import random
from fractions import Fraction as F

import decision_reference as dr
import pytest
import reference
from reference import exact_land

INF1 = {"infantry": 1}
BOTH_1V1 = ((("infantry", 1),), (("infantry", 1),))

# ---------------------------------------------------------------------------
# Land: the issue's hand cases
# ---------------------------------------------------------------------------


def test_issue_hand_case_one_infantry_each_revised_tuv():
    # One round of 1 inf (attack 1) v 1 inf (defence 2): the attacker alone hits 1/6 * 2/3 =
    # 2/18 (+3), the defender alone 5/6 * 1/3 = 5/18 (-3), both 1/18 (0), neither 10/18: back
    # at 1 v 1, where fighting on to the end is worth 3 * (2/8 - 5/8) = -9/8 < 0, so retreat.
    result = dr.optimal_land("revised", INF1, INF1)
    assert result["value"] == F(-1, 2) == 3 * F(2, 18) - 3 * F(5, 18)
    assert result["never_value"] == F(-9, 8)
    assert result["gain"] == F(5, 8)
    assert result["policy"] == {BOTH_1V1: "retreat"}
    assert (result["attacker_win"], result["defender_win"], result["draw"], result["retreat"]) \
        == (F(2, 18), F(5, 18), F(1, 18), F(10, 18))
    assert result["mean_rounds"] == 1
    assert result["tuv_swing"] == F(-1, 2)
    # the same as the land reference's fixed "retreat after round 1"
    fixed = exact_land("revised", INF1, INF1, retreat_after=1)
    for key in ("attacker_win", "defender_win", "draw", "retreat", "tuv_swing", "mean_rounds"):
        assert result[key] == fixed[key], key


@pytest.mark.parametrize(("territory_value", "expected", "choice"), [
    # pressing on from 1 v 1 adds -9/8 + V * 2/8 (wins 2/8, always with the infantry left):
    # worth it iff V > 9/2.  V = 5: fight to the end, -9/8 + 5/4 = 1/8.
    (5, F(-9, 8) + 5 * F(2, 8), "press on"),
    # V = 4: retreat after round 1: -1/2 + 4 * P(take in round 1) = -1/2 + 4 * 2/18 = -1/18
    (4, F(-1, 2) + 4 * F(2, 18), "retreat"),
])
def test_territory_value_hand_case(territory_value, expected, choice):
    result = dr.optimal_land("revised", INF1, INF1, objective="value",
                             territory_value=territory_value)
    assert result["value"] == expected
    assert result["policy"] == {BOTH_1V1: choice}
    assert result["never_value"] == F(-9, 8) + territory_value * F(2, 8)


def test_a_found_policy_played_back_gives_the_same_result():
    # the table optimal_land returns, followed by an independent player of tables, gives
    # the optimal result exactly (with a partial amphibious retreat in it)
    kwargs = dict(landing={"infantry": 2}, bombard={"battleship": 1})
    result = dr.optimal_land("1942-2e", {"fighter": 1, "tank": 1}, {"infantry": 3},
                             objective="value", territory_value=4, **kwargs)
    played = dr.play_land_policy("1942-2e", {"fighter": 1, "tank": 1}, {"infantry": 3},
                                 result["policy"], **kwargs)
    for key, value in played.items():
        assert result[key] == value, key
    assert "retreat" in result["policy"].values() and "press on" in result["policy"].values()


# ---------------------------------------------------------------------------
# Land: the optimal policy against every fixed policy of the land reference
# ---------------------------------------------------------------------------

LAND_FIXED = ({}, {"retreat_after": 1}, {"retreat_after": 2}, {"retreat_when_left": 1},
              {"retreat_when_left": 2}, {"strafe": 0}, {"strafe": 1},
              {"retreat_below": F(1, 3)}, {"retreat_below": F(1, 2)},
              {"retreat_when_only_air": True})
OBJECTIVE_CASES = (("tuv", 0), ("win", 0), ("takes", 0), ("value", 6))


def _random_land_battles(seed=31, per_edition=5):
    rng = random.Random(seed)
    battles = []
    for edition in reference.EDITIONS:
        units = [u for u in reference.STATS[edition] if u != "aa"]
        for i in range(per_edition):
            def army(n, pool):
                side = {}
                for _ in range(n):
                    u = rng.choice(pool)
                    side[u] = side.get(u, 0) + 1
                return side
            attacker = army(rng.randint(1, 3), units)
            defender = army(rng.randint(1, 3), units + ["aa"])
            options = {}
            if i == per_edition - 1:  # an amphibious assault with something that may withdraw
                options["landing"] = army(rng.randint(1, 2), ["infantry", "tank"])
                attacker = {"fighter": 1, **({"infantry": 1} if rng.random() < 0.5 else {})}
                if rng.random() < 0.5:
                    options["bombard"] = {"battleship": 1}
            battles.append((edition, attacker, defender, options))
    return battles


LAND_BATTLES = _random_land_battles()


@pytest.mark.parametrize(("edition", "attacker", "defender", "options"), LAND_BATTLES,
                         ids=[f"{e}-{i}" for i, (e, *_) in enumerate(LAND_BATTLES)])
def test_optimal_land_is_never_worse_than_a_fixed_policy(edition, attacker, defender, options):
    fixed = [exact_land(edition, attacker, defender, **options, **policy)
             for policy in LAND_FIXED]
    for objective, territory_value in OBJECTIVE_CASES:
        best = dr.optimal_land(edition, attacker, defender, objective=objective,
                               territory_value=territory_value, **options)
        values = [dr.land_objective_of(r, objective, territory_value) for r in fixed]
        assert best["value"] >= max(values), objective
        assert best["never_value"] == values[0], objective
        # the result is a law: outcomes sum to 1, and the objective is the result's
        assert sum(best[k] for k in reference.ALL_OUTCOMES) == 1
        assert dr.land_objective_of(best, objective, territory_value) == best["value"]


def test_optimal_land_is_strictly_better_on_some_battles():
    gains = []
    for edition, attacker, defender, options in LAND_BATTLES:
        fixed = [dr.land_objective_of(exact_land(edition, attacker, defender, **options,
                                                 **policy))
                 for policy in LAND_FIXED]
        best = dr.optimal_land(edition, attacker, defender, **options)["value"]
        gains.append(best - max(fixed))
    assert min(gains) >= 0
    assert sum(1 for g in gains if g > 0) >= 3, gains
