"""The decision references (tests/decision_reference.py): hand-computed values, the issue's
numbers, and agreement with the existing references' fixed policies."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction as F

import decision_reference as dr
import pytest
import reference
import sea_reference
from reference import exact_land
from tiers import sampled

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


# (the revised battles, by tuv and by value, in the quick tier; all four in the slow)
@pytest.mark.parametrize(("edition", "attacker", "defender", "options", "objective", "tv"),
                         sampled([
    ("revised", {"infantry": 2}, {"infantry": 2}, {}, "tuv", 0),
    ("1942-2e", {"fighter": 1}, {"infantry": 2}, {"landing": {"infantry": 2}}, "tuv", 0),
    ("revised", {"infantry": 2, "artillery": 1}, {"infantry": 1, "tank": 1}, {}, "value", 5),
    ("aa50", {"tank": 1, "fighter": 1}, {"infantry": 2, "aa": 1}, {}, "takes", 0),
                         ], 2))
def test_optimal_land_is_the_best_of_every_stationary_policy(edition, attacker, defender,
                                                           options, objective, tv):
    # the solver weighs both options at every decision state, so its table lists every
    # state where any stationary policy decides: try them all (2^states), each played by the
    # independent policy player
    best = dr.optimal_land(edition, attacker, defender, objective=objective,
                           territory_value=tv, **options)
    states = sorted(best["policy"])
    assert 2 <= len(states) <= 8
    values = []
    for choice in itertools.product(("retreat", "press on"), repeat=len(states)):
        played = dr.play_land_policy(edition, attacker, defender,
                                     dict(zip(states, choice, strict=True)), **options)
        values.append(dr.land_objective_of(played, objective, tv))
    assert max(values) == best["value"]
    assert min(values) < best["value"]


@pytest.mark.parametrize(("edition", "attacker", "defender", "submerge"), [
    ("1942-2e", {"bomber": 1, "submarine": 1}, {"fighter": 1, "destroyer": 1}, "never"),
    ("revised", {"submarine": 2}, {"destroyer": 1, "carrier": 1}, "never"),
    ("1942-2e", {"submarine": 1, "fighter": 1}, {"fighter": 1}, "optimal"),
    ("revised", {"submarine": 1, "fighter": 1}, {"carrier": 1}, "optimal"),
])
def test_optimal_sea_is_the_best_of_every_stationary_policy(edition, attacker, defender,
                                                          submerge):
    best = dr.optimal_sea(edition, attacker, defender, attacker_submerge=submerge)
    keys = sorted(best["policy"], key=repr)
    assert 2 <= len(keys) <= 9
    words = {"retreat": ("retreat", "press on"), "attacker_submerge": ("submerge", "stay")}
    values = []
    for choice in itertools.product((0, 1), repeat=len(keys)):
        policy = {k: words[k[0]][c] for k, c in zip(keys, choice, strict=True)}
        values.append(dr.play_sea_policy(edition, attacker, defender, policy)["tuv_swing"])
    assert max(values) == best["value"]
    assert min(values) < best["value"]
    # and the table found, played back, is the optimal result itself
    played = dr.play_sea_policy(edition, attacker, defender, best["policy"])
    for key in SEA_KEYS:
        assert played[key] == best[key], key


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


_SOLVED = {}  # each battle of the batteries solved once for both of its tests


def _once(*key, solve):
    key = repr(key)
    if key not in _SOLVED:
        _SOLVED[key] = solve()
    return _SOLVED[key]


def _land_fixed(edition, attacker, defender, options):
    return _once("land fixed", edition, attacker, defender, options, solve=lambda: [
        exact_land(edition, attacker, defender, **options, **policy) for policy in LAND_FIXED])


def _land_optimal(edition, attacker, defender, options, objective="tuv", territory_value=0):
    return _once("land optimal", edition, attacker, defender, options, objective,
                 territory_value, solve=lambda: dr.optimal_land(
                     edition, attacker, defender, objective=objective,
                     territory_value=territory_value, **options))


@pytest.mark.parametrize(("edition", "attacker", "defender", "options"),
                         sampled(LAND_BATTLES, 6, [f"{e}-{i}" for i, (e, *_) in
                                                   enumerate(LAND_BATTLES)]))
def test_optimal_land_is_never_worse_than_a_fixed_policy(edition, attacker, defender, options):
    fixed = _land_fixed(edition, attacker, defender, options)
    for objective, territory_value in OBJECTIVE_CASES:
        best = _land_optimal(edition, attacker, defender, options, objective, territory_value)
        values = [dr.land_objective_of(r, objective, territory_value) for r in fixed]
        assert best["value"] >= max(values), objective
        assert best["never_value"] == values[0], objective
        # the result is a law: outcomes sum to 1, and the objective is the result's
        assert sum(best[k] for k in reference.ALL_OUTCOMES) == 1
        assert dr.land_objective_of(best, objective, territory_value) == best["value"]


@pytest.mark.slow(reason="solves the whole battery (test_decisions' medium battles: quick)")
def test_optimal_land_is_strictly_better_on_some_battles():
    gains = []
    for edition, attacker, defender, options in LAND_BATTLES:
        fixed = [dr.land_objective_of(r) for r in _land_fixed(edition, attacker, defender,
                                                              options)]
        best = _land_optimal(edition, attacker, defender, options)["value"]
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


@pytest.mark.parametrize(("edition", "attacker", "defender", "policies"),
                         sampled(SEA_BATTLES, 2, SEA_IDS))
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
    # (the fixed policies' results solved once for both objectives)
    results = _once("sea fixed", edition, attacker, defender, defender_policy,
                    solve=lambda: _solve_sea_fixed(edition, attacker, defender, defender_policy))
    return [r["attacker_win"] if objective == "win" else r["tuv_swing"] for r in results]


def _sea_optimal(edition, attacker, defender, defender_policy, objective="tuv"):
    return _once("sea optimal", edition, attacker, defender, defender_policy, objective,
                 solve=lambda: dr.optimal_sea(edition, attacker, defender, objective=objective,
                                              attacker_submerge="optimal",
                                              defender_submerge=defender_policy))


def _solve_sea_fixed(edition, attacker, defender, defender_policy):
    results = []
    attacker_policies = ("never",) if edition == "classic" else sea_reference.POLICIES
    for a_policy in attacker_policies:
        for retreat in SEA_FIXED_RETREATS:
            results.append(dr.exact_sea_retreat(edition, attacker, defender,
                                                attacker_submerge=a_policy,
                                                defender_submerge=defender_policy, **retreat))
    return results


@pytest.mark.parametrize(("edition", "attacker", "defender", "policies"),
                         sampled(SEA_BATTLES, 4, SEA_IDS))
def test_optimal_sea_is_never_worse_than_a_fixed_policy(edition, attacker, defender, policies):
    for objective in ("tuv", "win"):
        fixed = _sea_fixed_values(edition, attacker, defender, policies[1], objective)
        best = _sea_optimal(edition, attacker, defender, policies[1], objective)
        assert best["value"] >= max(fixed), objective
        assert sum(best[k] for k in sea_reference.OUTCOMES) == 1
        # the defender choosing too can only lower the attacker's value
        minimax = dr.optimal_sea(edition, attacker, defender, objective=objective,
                                 attacker_submerge="optimal", defender_submerge="optimal")
        assert minimax["value"] <= best["value"], objective


@pytest.mark.slow(reason="solves the whole battery (test_decisions' medium battles: quick)")
def test_optimal_sea_is_strictly_better_on_some_battles():
    gains = []
    for edition, attacker, defender, policies in SEA_BATTLES:
        fixed = _sea_fixed_values(edition, attacker, defender, policies[1], "tuv")
        best = _sea_optimal(edition, attacker, defender, policies[1])
        gains.append(best["value"] - max(fixed))
    assert min(gains) >= 0
    assert sum(1 for g in gains if g > 0) >= 2, gains


# ---------------------------------------------------------------------------
# 1940-2e scramble
# ---------------------------------------------------------------------------


def test_scramble_choices_respect_three_a_base():
    assert dr.scramble_choices({"fighter": 1}) == [{}, {"fighter": 1}]
    choices = dr.scramble_choices({"fighter": 4, "tactical_bomber": 1})
    assert {"fighter": 3} in choices and {"fighter": 2, "tactical_bomber": 1} in choices
    assert all(sum(c.values()) <= 3 for c in choices)
    assert len(choices) == 1 + 2 + 2 + 2  # 0 aircraft; 1: f or t; 2: ff, ft; 3: fff, fft
    # two bases next to the sea zone: up to 3 from each
    two = dr.scramble_choices([{"fighter": 3}, {"tactical_bomber": 3}])
    assert {"fighter": 3, "tactical_bomber": 3} in two and len(two) == 16
    with pytest.raises(ValueError, match="cannot scramble"):
        dr.scramble_choices({"bomber": 1})


def test_scramble_hand_case():
    # 1940-2e 1 destroyer v 1 destroyer (8 each, 2/6 a die): win 2/5, lose 2/5, draw 1/5,
    # TUV 0.  One fighter scrambled (defence 4): from dd v dd+ftr a round repeats with
    # 2/3 * 2/9 = 4/27; else the attacker is sunk untouched (2/3 * 7/9 = 14/27, -8), trades
    # its destroyer (1/3 * 7/9 = 7/27, 0), or sinks the destroyer alone (1/3 * 2/9 = 2/27,
    # then dd v ftr: win 1/7 (+18), lose 4/7 (0), draw 2/7 (+10)): TUV
    # (14 * -8 + 2 * (18 + 20) / 7) / 23 = -708/161, P(attacker wins) 2/23 * 1/7 = 2/161.
    result = dr.decide_sea_1940("1940-2e", {"destroyer": 1}, {"destroyer": 1},
                                scramble_from={"fighter": 1})
    rows = {tuple(row["scrambled"].items()): row for row in result["table"]}
    assert rows[()]["value"] == 0 and rows[()]["result"]["attacker_win"] == F(2, 5)
    one = rows[(("fighter", 1),)]
    assert one["value"] == F(-708, 161) == (14 * -8 + F(2 * (18 + 20), 7)) / 23
    assert one["result"]["attacker_win"] == F(2, 161)
    # the defender loses its destroyer in the trade (7/23) and on the way to dd v ftr (2/23),
    # the fighter there when the attacker wins or draws (3/7)
    assert one["result"]["defender_ipc_loss"] == (F(7, 23) * 8
                                                 + F(2, 23) * (8 + 10 * F(3, 7)))
    assert result["scrambled"] == {"fighter": 1} and result["value"] == F(-708, 161)
    # the table's rows are the plain sea battles with the aircraft added
    plain = sea_reference.exact_sea("1940-2e", {"destroyer": 1}, {"destroyer": 1, "fighter": 1})
    for key in SEA_KEYS:
        assert one["result"][key] == plain[key], key


def test_best_scramble_is_the_lowest_row_and_retreat_only_helps_the_attacker():
    kwargs = dict(scramble_from={"fighter": 2, "tactical_bomber": 2})
    never = dr.decide_sea_1940("1940-2e", {"battleship": 1, "fighter": 1}, {"destroyer": 1},
                               **kwargs)
    assert never["value"] == min(row["value"] for row in never["table"])
    assert never["scrambled"] == {"fighter": 2, "tactical_bomber": 1}
    table = dr.scramble_table("1940-2e", {"battleship": 1, "fighter": 1}, {"destroyer": 1},
                              {"fighter": 2, "tactical_bomber": 2})
    assert [(s, r["tuv_swing"]) for s, r in table] == [
        (row["scrambled"], row["value"]) for row in never["table"]]
    optimal = dr.decide_sea_1940("1940-2e", {"battleship": 1, "fighter": 1}, {"destroyer": 1},
                                 retreat="optimal", **kwargs)
    for a, b in zip(never["table"], optimal["table"], strict=True):
        assert b["value"] >= a["value"]
    assert optimal["value"] > never["value"]
    # win: the defender minimises the attacker's chance instead
    win = dr.decide_sea_1940("1940-2e", {"battleship": 1, "fighter": 1}, {"destroyer": 1},
                             objective="win", **kwargs)
    assert win["value"] == min(row["result"]["attacker_win"] for row in win["table"])


def test_scramble_and_kamikaze_are_1940_only():
    with pytest.raises(ValueError, match="1940-2e"):
        dr.decide_sea_1940("1942-2e", {"destroyer": 1}, {"destroyer": 1},
                           scramble_from={"fighter": 1})


# ---------------------------------------------------------------------------
# 1940-2e kamikaze
# ---------------------------------------------------------------------------


def test_kamikaze_allocations_are_per_unit():
    assert dr.kamikaze_allocations({"cruiser": 1, "destroyer": 1, "transport": 2,
                                    "submarine": 1}, 2) == [
        (("destroyer", 2),), (("cruiser", 1), ("destroyer", 1)), (("cruiser", 2),)]
    # two battleships: 2 tokens on one, or 1 on each
    assert sorted(dr.kamikaze_allocations({"battleship": 2}, 2)) == [
        (("battleship", 1), ("battleship", 1)), (("battleship", 2),)]
    assert dr.kamikaze_allocations({"transport": 1}, 1) == []


def test_kamikaze_hand_case_targets():
    # 1940-2e cruiser (12) + destroyer (8) v a lone transport (7, lost without dice once the
    # attacker can fire), 2 tokens hitting 1/3 each:
    #   2 on the destroyer: sunk 5/9 (TUV 7 - 8), else 7: 23/9;
    #   1 on each: both sunk 1/9 (nothing left: defender wins, -20), cruiser 2/9 (-5),
    #     destroyer 2/9 (-1), neither 4/9 (+7): -4/9, P(attacker wins) 8/9;
    #   2 on the cruiser: sunk 5/9 (7 - 12), else 7: 1/3.
    result = dr.decide_sea_1940("1940-2e", {"cruiser": 1, "destroyer": 1}, {"transport": 1},
                                kamikaze=2)
    values = {row["kamikaze_targets"]: row["value"] for row in result["table"]}
    table = dr.kamikaze_table("1940-2e", {"cruiser": 1, "destroyer": 1}, {"transport": 1}, 2)
    assert {a: r["tuv_swing"] for a, r in table} == values
    assert values == {(("destroyer", 2),): F(23, 9), (("cruiser", 1), ("destroyer", 1)): F(-4, 9),
                      (("cruiser", 2),): F(1, 3)}
    assert F(23, 9) == F(5, 9) * -1 + F(4, 9) * 7
    assert F(-4, 9) == (-20 - 2 * 5 - 2 * 1 + 4 * 7) / F(9)
    assert result["kamikaze_targets"] == (("cruiser", 1), ("destroyer", 1))
    assert result["attacker_win"] == F(8, 9) and result["defender_win"] == F(1, 9)
    assert result["attacker_ipc_loss"] == 12 * F(1, 3) + 8 * F(1, 3)
    assert result["mean_rounds"] == 0  # kamikaze strikes are not a round
    win = dr.decide_sea_1940("1940-2e", {"cruiser": 1, "destroyer": 1}, {"transport": 1},
                             kamikaze=2, objective="win")
    assert win["kamikaze_targets"] == (("cruiser", 1), ("destroyer", 1))
    assert win["value"] == F(8, 9)


def test_kamikaze_then_the_battle_by_hand():
    # a cruiser (attack 3) v a destroyer (defence 2), one token on the cruiser: sunk 1/3
    # (-12, the defender wins without a round); else cruiser v destroyer: win 1/2 (+8),
    # lose 1/4 (-12), draw 1/4 (-4): 0.  TUV -4, P(win) 1/3.
    result = dr.decide_sea_1940("1940-2e", {"cruiser": 1}, {"destroyer": 1}, kamikaze=1)
    assert result["value"] == -4 and result["attacker_win"] == F(1, 3)
    assert result["defender_win"] == F(1, 3) + F(2, 3) * F(1, 4)
    assert result["mean_rounds"] == F(2, 3) * F(3, 2)  # rounds of cruiser v dd: 1 / (2/3)


def test_kamikaze_damages_two_hit_units():
    # two tokens on a battleship: both hit 1/9 (sunk), one 4/9 (damaged), none 4/9.  No
    # defender: the attacker wins at once whatever is left.
    result = dr.decide_sea_1940("1940-2e", {"battleship": 1}, {}, kamikaze=2)
    assert result["attacker_ipc_loss"] == 20 * F(1, 9)
    assert result["attacker_survivors"] == {"battleship": F(4, 9),
                                            "damaged_battleship": F(4, 9)}
    # a damaged battleship has one hit point left: one hit sinks it; a carrier takes two
    damaged = dr.decide_sea_1940("1940-2e", {"damaged_battleship": 1}, {}, kamikaze=1)
    assert damaged["attacker_ipc_loss"] == 20 * F(1, 3)
    carrier = dr.decide_sea_1940("1940-2e", {"carrier": 1}, {}, kamikaze=1)
    assert carrier["attacker_ipc_loss"] == 0
    assert carrier["attacker_survivors"] == {"carrier": F(2, 3), "damaged_carrier": F(1, 3)}


def test_kamikaze_low_luck():
    # low luck (TripleA): the tokens on one unit have power 2 each; 3 tokens = 6: a sure
    # hit; 2 tokens = 4: one die, a hit on 1-4
    three = dr.decide_sea_1940("1940-2e", {"cruiser": 1}, {}, kamikaze=3, dice="low_luck")
    assert three["attacker_ipc_loss"] == 12 and three["defender_win"] == 0
    assert three["draw"] == 1  # nothing left on either side
    two = dr.decide_sea_1940("1940-2e", {"cruiser": 1}, {}, kamikaze=2, dice="low_luck")
    assert two["attacker_ipc_loss"] == 12 * F(4, 6)


def test_given_targets_and_no_decision_is_the_sea_reference():
    given = dr.decide_sea_1940("1940-2e", {"cruiser": 1, "destroyer": 1}, {"transport": 1},
                               kamikaze=2, kamikaze_targets=[("cruiser", 2)])
    assert given["value"] == F(1, 3) and len(given["table"]) == 1
    with pytest.raises(ValueError, match="tokens"):
        dr.decide_sea_1940("1940-2e", {"cruiser": 1}, {}, kamikaze=2,
                           kamikaze_targets=[("cruiser", 1)])
    with pytest.raises(ValueError, match="surface warships"):
        dr.decide_sea_1940("1940-2e", {"transport": 1}, {}, kamikaze=1,
                           kamikaze_targets=[("transport", 1)])
    with pytest.raises(ValueError, match="no surface warship"):
        dr.decide_sea_1940("1940-2e", {"submarine": 1}, {"destroyer": 1}, kamikaze=1)
    plain = dr.decide_sea_1940("1940-2e", {"submarine": 2, "fighter": 1},
                               {"carrier": 1, "fighter": 2})
    expected = sea_reference.exact_sea("1940-2e", {"submarine": 2, "fighter": 1},
                                       {"carrier": 1, "fighter": 2})
    for key in SEA_KEYS:
        assert plain[key] == expected[key], key


def test_scramble_then_kamikaze_is_the_joint_minimum():
    kwargs = dict(scramble_from={"fighter": 1, "tactical_bomber": 1}, kamikaze=1)
    both = dr.decide_sea_1940("1940-2e", {"cruiser": 1, "destroyer": 1}, {"destroyer": 1},
                              **kwargs)
    assert len(both["table"]) == 4 * 2  # (0, f, t, ft) x (cruiser, destroyer)
    assert both["value"] == min(row["value"] for row in both["table"])
    for scrambled in dr.scramble_choices({"fighter": 1, "tactical_bomber": 1}):
        alone = dr.decide_sea_1940("1940-2e", {"cruiser": 1, "destroyer": 1}, {"destroyer": 1},
                                   scramble=scrambled, kamikaze=1)
        rows = [r for r in both["table"] if r["scrambled"] == scrambled]
        assert alone["value"] == min(r["value"] for r in rows)


# ---------------------------------------------------------------------------
# Low luck and technologies pass through to the references' own rules
# ---------------------------------------------------------------------------


def test_low_luck_and_techs_land():
    options = dict(dice="low_luck", attacker_tech=["heavy_bombers"])
    attacker, defender = {"infantry": 2, "bomber": 1}, {"infantry": 3}
    best = dr.optimal_land("1942-2e", attacker, defender, **options)
    fixed = [exact_land("1942-2e", attacker, defender, **options, **policy)
             for policy in LAND_FIXED]
    assert best["never_value"] == fixed[0]["tuv_swing"]
    assert best["value"] >= max(r["tuv_swing"] for r in fixed)


def test_low_luck_sea():
    attacker, defender = {"submarine": 2, "fighter": 1}, {"destroyer": 1, "carrier": 1}
    plain = sea_reference.exact_sea("1940-2e", attacker, defender, dice="low_luck")
    game = dr.exact_sea_retreat("1940-2e", attacker, defender, dice="low_luck")
    for key in SEA_KEYS:
        assert game[key] == plain[key], key
    best = dr.optimal_sea("1940-2e", attacker, defender, dice="low_luck",
                          attacker_submerge="optimal")
    for retreat in SEA_FIXED_RETREATS:
        fixed = dr.exact_sea_retreat("1940-2e", attacker, defender, dice="low_luck", **retreat)
        assert best["value"] >= fixed["tuv_swing"]
