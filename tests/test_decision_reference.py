"""The decision references (tests/decision_reference.py): hand-computed values, the issue's
numbers, and agreement with the existing references' fixed policies."""

from __future__ import annotations

from fractions import Fraction as F

import decision_reference as dr
import pytest
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
