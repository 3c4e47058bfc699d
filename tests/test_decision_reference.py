"""The decision references (tests/decision_reference.py): hand-computed values, the issue's
numbers, and agreement with the existing references' fixed policies."""

from __future__ import annotations

import random
from fractions import Fraction as F

import decision_reference as dr
import pytest
import reference
import sea_reference
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


# ---------------------------------------------------------------------------
# Sea: the game with fixed choices is sea_reference; hand cases; batteries
# ---------------------------------------------------------------------------

SEA_KEYS = ("attacker_win", "defender_win", "draw", "stalemate", "retreat", "attacker_ipc_loss",
            "defender_ipc_loss", "tuv_swing", "mean_rounds", "attacker_survivors",
            "defender_survivors")


def _random_sea_battles(seed=131, per_edition=4):
    rng = random.Random(seed)
    battles = []
    for edition in sea_reference.EDITIONS:
        units = [u for u in sea_reference.STATS[edition] if not u.startswith("damaged")]
        for _ in range(per_edition):
            sides = []
            for _ in range(2):
                side = {}
                for _ in range(rng.randint(1, 3)):
                    u = rng.choice(units + ["submarine"])  # subs twice as likely
                    side[u] = side.get(u, 0) + 1
                sides.append(side)
            if edition == "classic":
                policies = ("never", "never")
            else:
                policies = (rng.choice(sea_reference.POLICIES), rng.choice(sea_reference.POLICIES))
            battles.append((edition, *sides, policies))
    return battles


SEA_BATTLES = _random_sea_battles()
SEA_IDS = [f"{e}-{i}" for i, (e, *_) in enumerate(SEA_BATTLES)]


@pytest.mark.parametrize(("edition", "attacker", "defender", "policies"), SEA_BATTLES,
                         ids=SEA_IDS)
def test_sea_game_without_retreat_is_sea_reference(edition, attacker, defender, policies):
    expected = sea_reference.exact_sea(edition, attacker, defender,
                                       attacker_submerge=policies[0],
                                       defender_submerge=policies[1])
    got = dr.exact_sea_retreat(edition, attacker, defender, attacker_submerge=policies[0],
                               defender_submerge=policies[1])
    for key in SEA_KEYS:
        assert got[key] == expected[key], key


@pytest.mark.parametrize(("policy", "expected"), [
    # Revised 1 sub v 1 destroyer (test_policies.py's analytic case): the sub fires first
    # (1/3), the destroyer fires back even when hit (1/2): win 1/6, draw 1/6, lose 1/3, and
    # both miss 1/3; fighting on from there wins 1/4.
    ({"retreat_after": 1}, (F(1, 6), F(1, 6), F(1, 3), F(1, 3))),
    ({"retreat_below": F(3, 10)}, (F(1, 6), F(1, 6), F(1, 3), F(1, 3))),  # 1/4 < 3/10
    ({"retreat_below": F(1, 5)}, (F(1, 4), F(1, 4), F(1, 2), 0)),  # 1/4 >= 1/5: fight on
    ({"retreat_when_left": 1}, (F(1, 6), F(1, 6), F(1, 3), F(1, 3))),
    ({"strafe": 0}, (F(1, 4), F(1, 4), F(1, 2), 0)),  # never 0 defenders in an undecided battle
])
def test_sea_fixed_retreat_by_hand(policy, expected):
    result = dr.exact_sea_retreat("revised", {"submarine": 1}, {"destroyer": 1}, **policy)
    assert (result["attacker_win"], result["draw"], result["defender_win"],
            result["retreat"]) == expected


def test_sea_optimal_retreat_by_hand():
    # 1942-2e 1 bomber (12, attack 4) v 1 fighter (10, defence 4): a round wins 2/3 * 1/3 =
    # 2/9 (+10), loses 1/3 * 2/3 = 2/9 (-12), draws 4/9 (-2), repeats 1/9.  Fighting to the
    # end: (2/9 * 10 - 2/9 * 12 - 4/9 * 2) / (8/9) = -3/2; retreating after round 1:
    # 20/9 - 24/9 - 8/9 = -4/3, better.
    result = dr.optimal_sea("1942-2e", {"bomber": 1}, {"fighter": 1})
    assert result["value"] == F(-4, 3)
    assert result["never_value"] == F(-3, 2)
    assert result["retreat"] == F(1, 9)
    assert result["policy"] == {
        ("retreat", (("bomber", 1),), (("fighter", 1),), 0, 0, False): "retreat"}
    assert result["mean_rounds"] == 1


@pytest.mark.parametrize(("objective", "value", "choice", "attacker_win"), [
    # 1942-2e 1 cruiser (12) v 1 sub (6): the defender may submerge at the start of each
    # round (no enemy destroyer).  Staying: the sub strikes first (1/6: the cruiser is lost
    # before it fires, -12), else the cruiser hits (5/6 * 1/2, +6), else again: TUV
    # (1/6 * -12 + 5/12 * 6) / (7/12) = 6/7, P(attacker wins) 5/7.  Submerging: the attacker
    # wins at once with TUV 0.  The defender minimises the attacker's objective: TUV 0 < 6/7
    # (submerge), but P(win) 5/7 < 1 (stay).
    ("tuv", 0, "submerge", 1),
    ("win", F(5, 7), "stay", F(5, 7)),
])
def test_sea_defender_submerge_by_hand(objective, value, choice, attacker_win):
    result = dr.optimal_sea("1942-2e", {"cruiser": 1}, {"submarine": 1}, objective=objective,
                            defender_submerge="optimal")
    assert result["value"] == value
    assert result["attacker_win"] == attacker_win
    first = ("defender_submerge", (("cruiser", 1),), (("submarine", 1),), 0, 0, True)
    assert result["policy"][first] == choice


SEA_FIXED_RETREATS = ({}, {"retreat_after": 1}, {"retreat_after": 2}, {"retreat_when_left": 1},
                      {"strafe": 1}, {"retreat_below": F(1, 3)}, {"retreat_below": F(1, 2)})


def _sea_fixed_values(edition, attacker, defender, defender_policy, objective):
    values = []
    attacker_policies = ("never",) if edition == "classic" else sea_reference.POLICIES
    for a_policy in attacker_policies:
        for retreat in SEA_FIXED_RETREATS:
            result = dr.exact_sea_retreat(edition, attacker, defender, attacker_submerge=a_policy,
                                          defender_submerge=defender_policy, **retreat)
            values.append(result["attacker_win"] if objective == "win" else result["tuv_swing"])
    return values


@pytest.mark.parametrize(("edition", "attacker", "defender", "policies"), SEA_BATTLES,
                         ids=SEA_IDS)
def test_optimal_sea_is_never_worse_than_a_fixed_policy(edition, attacker, defender, policies):
    for objective in ("tuv", "win"):
        fixed = _sea_fixed_values(edition, attacker, defender, policies[1], objective)
        best = dr.optimal_sea(edition, attacker, defender, objective=objective,
                              attacker_submerge="optimal", defender_submerge=policies[1])
        assert best["value"] >= max(fixed), objective
        assert sum(best[k] for k in sea_reference.OUTCOMES) == 1
        # the defender choosing too can only lower the attacker's value
        minimax = dr.optimal_sea(edition, attacker, defender, objective=objective,
                                 attacker_submerge="optimal", defender_submerge="optimal")
        assert minimax["value"] <= best["value"], objective


def test_optimal_sea_is_strictly_better_on_some_battles():
    gains = []
    for edition, attacker, defender, policies in SEA_BATTLES:
        fixed = _sea_fixed_values(edition, attacker, defender, policies[1], "tuv")
        best = dr.optimal_sea(edition, attacker, defender, attacker_submerge="optimal",
                              defender_submerge=policies[1])
        gains.append(best["value"] - max(fixed))
    assert min(gains) >= 0
    assert sum(1 for g in gains if g > 0) >= 2, gains
