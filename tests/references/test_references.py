"""The references themselves (no package): new editions, low luck and raids.

Analytic values worked out by hand (each test says how), the references' exact
solvers against their own die-by-die simulations (within 4 standard errors at a
fixed seed), and a few pinned revised / 1942-2e values from before the new
editions were added (those editions must not change).
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import pytest
import raid_reference
import reference
import sea_reference
from bands import assert_mc_agrees
from raid_reference import exact_raid, simulate_raid
from reference import exact_land, simulate_land
from sea_reference import exact_sea, simulate_sea

# ---------------------------------------------------------------------------
# Revised and 1942-2e are unchanged (values from the references before this change)
# ---------------------------------------------------------------------------


def test_revised_and_1942_values_are_unchanged():
    assert exact_land("revised", {"infantry": 2}, {"infantry": 1})["attacker_win"] == F(157, 232)
    assert exact_land("1942-2e", {"infantry": 1, "artillery": 1},
                      {"infantry": 1, "aa": 1})["attacker_win"] == F(5809, 9025)
    assert exact_land("revised", {}, {"infantry": 1, "fighter": 1}, landing={"infantry": 1},
                      bombard={"battleship": 2})["attacker_win"] == F(59, 858)
    assert exact_land("1942-2e", {"fighter": 1}, {"infantry": 2}, landing={"infantry": 1},
                      retreat_after=1)["attacker_win"] == F(62, 459)
    assert exact_sea("revised", {"submarine": 2},
                     {"destroyer": 1, "transport": 1})["attacker_win"] == F(1541, 4004)
    assert exact_sea("1942-2e", {"submarine": 2},
                     {"destroyer": 1, "transport": 1})["attacker_win"] == F(83, 95)


def test_old_switches_and_new_tech_lists_agree():
    att, dfn = {"fighter": 2, "bomber": 1, "infantry": 1}, {"infantry": 2, "aa": 1, "fighter": 1}
    assert exact_land("revised", att, dfn, heavy_bombers=True, jets=True) == exact_land(
        "revised", att, dfn, attacker_tech=["heavy_bombers"], defender_tech=["jets"])
    assert exact_land("1942-2e", att, dfn, heavy_bombers=True, jets=True) == exact_land(
        "1942-2e", att, dfn, attacker_tech=["heavy_bombers", "jets"])
    assert exact_sea("revised", {"submarine": 2}, {"battleship": 1},
                     attacker_super_subs=True) == exact_sea(
        "revised", {"submarine": 2}, {"battleship": 1}, attacker_tech=["super_subs"])


# ---------------------------------------------------------------------------
# New units and support
# ---------------------------------------------------------------------------


def test_tactical_bomber_pairs_with_a_tank_1940():
    # 1 tac (4 when paired) + 1 tank (3) v 1 inf (2); the tank is lost first.
    # Round: the attacker hits with 1 - (2/6)(3/6) = 5/6 and then wins (something is left);
    # it misses 1/6: the infantry hits 1/3 (-> tac alone), else the round repeats.
    # Tac alone (3) v inf (2): win (1/2)(2/3) / (1 - (1/2)(2/3)) = 1/2.
    # P(win) = (5/6 + (1/6)(1/3)(1/2)) / (1 - (1/6)(2/3)) = 31/32.
    paired = exact_land("1940-2e", {"tactical_bomber": 1, "tank": 1}, {"infantry": 1})
    assert paired["attacker_win"] == F(31, 32)
    alone = exact_land("1940-2e", {"tactical_bomber": 1}, {"infantry": 1})
    assert (alone["attacker_win"], alone["draw"], alone["defender_win"]) == (F(1, 2), F(1, 4),
                                                                           F(1, 4))


def test_tactical_bomber_gets_at_most_one_and_pairs_one_to_one():
    # 1 fighter + 1 tank + 1 tac: the tac is at 4, not 5; 2 tacs + 1 fighter: one at 4.
    law = reference._dice_groups("1940-2e", "attack",
                                 reference._to_counts({"tactical_bomber": 1, "fighter": 1,
                                                       "tank": 1}), frozenset())
    assert sorted(law) == [(1, F(3, 6)), (1, F(3, 6)), (1, F(4, 6))]  # fighter, tank, tac
    profile = reference._fire_profile("1940-2e", "attack",
                                      reference._to_counts({"tactical_bomber": 2,
                                                            "fighter": 1}), frozenset())
    tacs = [(n, v) for n, v, _, _ in profile if n and v in (3, 4)]
    assert sorted(tacs) == [(1, 3), (1, 3), (1, 4)]  # the fighter (3), one tac at 4, one at 3
    defence = reference._fire_profile("1940-2e", "defence",
                                      reference._to_counts({"tactical_bomber": 1, "tank": 1}),
                                      frozenset())
    assert (1, 3, 1, False) in defence  # no pairing on defence


def test_artillery_supports_mechanized_infantry_1940():
    # 1 art (2) + 1 mech (2 with support) v 1 inf (2); the mech (4, attack 1) is lost first.
    # Round: hit 1 - (4/6)^2 = 5/9 -> win; else the infantry hits 1/3 -> art alone
    # (win 2/5), else repeat.  P(win) = (5/9 + (4/9)(1/3)(2/5)) / (1 - (4/9)(2/3)) = 83/95.
    result = exact_land("1940-2e", {"artillery": 1, "mech_infantry": 1}, {"infantry": 1})
    assert result["attacker_win"] == F(83, 95)
    assert result["draw"] == F(4, 95)


def test_improved_artillery_supports_two():
    counts = reference._to_counts({"infantry": 2, "mech_infantry": 1, "artillery": 1})
    plain = reference._low_luck_strength("1940-2e", "attack", counts, frozenset())
    improved = reference._low_luck_strength("1940-2e", "attack", counts,
                                            frozenset({"improved_artillery"}))
    assert (plain, improved) == (1 + 1 + 1 + 1 + 2, 2 + 2 + 1 + 2)
    aa50 = reference._low_luck_strength(
        "aa50", "attack", reference._to_counts({"infantry": 3, "artillery": 1}),
        frozenset({"improved_artillery"}))
    assert aa50 == 2 + 2 + 1 + 2


def test_heavy_bombers_in_each_edition():
    def groups(edition, role, techs):
        return reference._dice_groups(edition, role, reference._to_counts({"bomber": 1}),
                                      frozenset(techs))

    assert groups("classic", "attack", ["heavy_bombers"]) == [(3, F(4, 6))]  # 3 dice, each hits
    assert groups("revised", "attack", ["heavy_bombers"]) == [(2, F(4, 6))]
    for edition in ("aa50", "1942-2e", "1940-2e"):
        assert groups(edition, "attack", ["heavy_bombers"]) == [(1, F(8, 9))]  # best of 2
        assert groups(edition, "defence", ["heavy_bombers"]) == [(1, F(1, 6))]
    # TripleA's LHTR form also rolls best-of-2 on defence: 1 - (5/6)^2 = 11/36.
    assert groups("aa50", "defence", ["lhtr_heavy_bombers"]) == [(1, F(11, 36))]
    assert groups("aa50", "attack", ["lhtr_heavy_bombers"]) == [(1, F(8, 9))]


def test_jets_in_each_edition():
    def values(edition):
        techs = frozenset({"jets"})
        return (reference._value(edition, "fighter", "attack", techs),
                reference._value(edition, "fighter", "defence", techs))

    assert values("classic") == values("revised") == (3, 5)
    assert values("aa50") == values("1942-2e") == values("1940-2e") == (4, 4)


def test_units_and_techs_must_exist_in_the_edition():
    with pytest.raises(ValueError, match="mech_infantry"):
        exact_land("revised", {"mech_infantry": 1}, {"infantry": 1})
    with pytest.raises(ValueError, match="radar"):
        exact_land("revised", {"fighter": 1}, {"aa": 1}, defender_tech=["radar"])
    with pytest.raises(ValueError, match="lhtr"):
        exact_land("1940-2e", {"bomber": 1}, {"infantry": 1},
                   attacker_tech=["lhtr_heavy_bombers"])
    with pytest.raises(ValueError, match="damaged_battleship"):
        exact_sea("classic", {"damaged_battleship": 1}, {"carrier": 1})
    with pytest.raises(ValueError, match="damaged_carrier"):
        exact_sea("aa50", {"damaged_carrier": 1}, {"carrier": 1})
    with pytest.raises(ValueError, match="submerg"):
        exact_sea("classic", {"submarine": 1}, {"carrier": 1}, attacker_submerge="first-chance")
    with pytest.raises(ValueError, match="dice"):
        exact_land("revised", {"infantry": 1}, {"infantry": 1}, dice="loaded")


# ---------------------------------------------------------------------------
# AA fire per edition: a defender with only an AA gun (not a unit) ends the battle
# right after the AA fire, so the attacker's survivors are the AA law itself.
# ---------------------------------------------------------------------------


def test_classic_aa_attacker_chooses_one_die_per_plane():
    # 2 dice at 1; the fighter (12) is lost before the bomber (15).
    result = exact_land("classic", {"fighter": 1, "bomber": 1}, {"aa": 1})
    assert result["attacker_survivors"] == {"fighter": 1 - F(11, 36), "bomber": 1 - F(1, 36)}
    assert result["draw"] == F(1, 36) and result["defender_survivors"] == {"aa": 0}


def test_revised_and_aa50_aa_dice_fall_on_their_own_planes_radar_on_2():
    revised = exact_land("revised", {"fighter": 1, "bomber": 1}, {"aa": 1})
    assert revised["attacker_survivors"] == {"fighter": F(5, 6), "bomber": F(5, 6)}
    radar = exact_land("aa50", {"fighter": 1, "bomber": 1}, {"aa": 1}, defender_tech=["radar"])
    assert radar["attacker_survivors"] == {"fighter": F(2, 3), "bomber": F(2, 3)}
    assert radar["draw"] == F(1, 9) and radar["attacker_ipc_loss"] == F(1, 3) * 22


def test_1940_aaa_three_dice_each_attacker_chooses_then_lost_alone():
    # 3 dice at 1 (radar 2); losses fighter (10), tac (11), bomber (12); the AAA alone is lost.
    result = exact_land("1940-2e", {"fighter": 1, "tactical_bomber": 1, "bomber": 1},
                        {"aa": 1})
    assert result["attacker_survivors"]["bomber"] == 1 - F(1, 216)
    assert result["attacker_survivors"]["fighter"] == F(125, 216)
    # all three shot down (1/216): the AAA has won and is not lost
    assert result["attacker_win"] == 1 - F(1, 216)
    assert result["defender_win"] == F(1, 216)
    assert result["defender_ipc_loss"] == 5 * (1 - F(1, 216))
    radar = exact_land("1940-2e", {"bomber": 2}, {"aa": 1}, defender_tech=["radar"])
    assert radar["attacker_survivors"]["bomber"] == 2 * F(2, 3)


def test_low_luck_aa_per_plane_uses_triplea_groups():
    # 7 fighters + 2 bombers at 1: strength 9 -> 1 sure hit + 3/6 for a second.  The sure hit
    # is a full group of 6 fighters; the second falls at random on the 3 leftovers
    # (1 fighter, 2 bombers).
    result = exact_land("revised", {"fighter": 7, "bomber": 2}, {"aa": 1}, dice="low_luck")
    assert result["attacker_survivors"] == {"fighter": 7 - 1 - F(1, 2) * F(1, 3),
                                            "bomber": 2 - F(1, 2) * F(2, 3)}


def test_low_luck_aaa_attacker_chooses():
    # 1 AAA v 5 planes: 3 dice at 1, strength 3 -> 0 or 1 hit, the cheapest plane.
    aa_only = exact_land("1942-2e", {"fighter": 1, "bomber": 4}, {"aa": 1}, dice="low_luck")
    assert aa_only["attacker_survivors"] == {"fighter": F(1, 2), "bomber": 4}


# ---------------------------------------------------------------------------
# Low luck
# ---------------------------------------------------------------------------


def test_low_luck_three_infantry_half_a_hit_six_infantry_exactly_one():
    def law(n):
        counts = reference._to_counts({"infantry": n})
        return reference._low_luck_law(
            reference._low_luck_strength("revised", "attack", counts, frozenset()), 99)

    assert law(3) == {0: F(1, 2), 1: F(1, 2)}
    assert law(6) == {1: F(1)}
    # 6 infantry v 1 infantry: the defender dies in round 1 for sure; it hits back with 2/6.
    result = exact_land("revised", {"infantry": 6}, {"infantry": 1}, dice="low_luck")
    assert result["attacker_win"] == 1 and result["mean_rounds"] == 1
    assert result["attacker_ipc_loss"] == F(1, 3) * 3


def test_low_luck_three_infantry_against_one_by_hand():
    # a infantry (strength a) v 1 infantry (strength 2, a hit with 1/3); states a = 3, 2, 1.
    q = F(1, 3)

    def win(a, memo={}):  # noqa: B006 -- a small cache for this hand computation
        if a == 0:
            return F(0)
        if a not in memo:
            p = F(a, 6)
            # attacker hits: win if it keeps a unit; misses: defender hits (a - 1) or repeat
            stay = (1 - p) * (1 - q)
            memo[a] = (p * (1 - q) + p * q * (a > 1) + (1 - p) * q * win(a - 1)) / (1 - stay)
        return memo[a]

    result = exact_land("revised", {"infantry": 3}, {"infantry": 1}, dice="low_luck")
    assert result["attacker_win"] == win(3)


def test_low_luck_multi_dice_and_best_of_two():
    # TripleA's power: k dice that each hit count k x value, best-of-k counts value + k - 1.
    def strength(edition, techs):
        return reference._low_luck_strength(edition, "attack",
                                            reference._to_counts({"bomber": 1}), frozenset(techs))

    assert strength("classic", ["heavy_bombers"]) == 12
    assert strength("revised", ["heavy_bombers"]) == 8
    assert strength("1940-2e", ["heavy_bombers"]) == 5
    assert strength("aa50", []) == 4


def test_low_luck_bombardment_is_its_own_group_1942():
    # 1 landing infantry + 1 battleship (4) + ... v 1 infantry: general strength 1, bombard 4:
    # two groups (1/6 and 4/6), not one of strength 5.
    result = exact_land("1942-2e", {}, {"infantry": 1}, landing={"infantry": 1},
                        bombard={"battleship": 1}, dice="low_luck")
    standard = exact_land("1942-2e", {}, {"infantry": 1}, landing={"infantry": 1},
                          bombard={"battleship": 1})
    assert result["attacker_win"] == standard["attacker_win"] == F(19, 36)


def test_low_luck_at_sea_groups_by_targets():
    # 1942-2e general fire of 1 sub (1) + 1 destroyer (2): subs roll in a step of their own
    # (TripleA's first-strike units), so the two fire apart (1/6 and 2/6) whether or not the
    # targets include aircraft -- never one group of strength 3.
    setup = sea_reference._make_setup("1942-2e", "never", "never", False, False,
                                      dice="low_luck")
    firing = sea_reference._to_counts("1942-2e", {"submarine": 1, "destroyer": 1})
    with_air = sea_reference._to_counts("1942-2e", {"fighter": 1, "destroyer": 1})
    no_air = sea_reference._to_counts("1942-2e", {"cruiser": 1, "destroyer": 1})
    split = {(0, 0, 0): F(20, 36), (1, 0, 0): F(4, 36), (0, 0, 1): F(10, 36),
             (1, 0, 1): F(2, 36)}
    assert sea_reference._fire_law(setup, 1, firing, with_air, True, 9) == split
    assert sea_reference._fire_law(setup, 1, firing, no_air, True, 9) == split


# ---------------------------------------------------------------------------
# Amphibious assaults in the new editions
# ---------------------------------------------------------------------------


def test_classic_bombardment_fires_back_and_has_no_limit():
    # 1 landing inf + 2 battleships v 1 inf.  Round 1: no hit with (2/6)^2 (5/6) = 5/54; the
    # defender fires back in any case (1/3).  Then 1 inf v 1 inf (win 1/4).
    # P(win) = (49/54)(2/3) + (5/54)(2/3)(1/4) = 67/108.
    classic = exact_land("classic", {}, {"infantry": 1}, landing={"infantry": 1},
                         bombard={"battleship": 2})
    assert classic["attacker_win"] == F(67, 108)
    # AA50 and 1940-2e: one ship per landing unit, as in 1942-2e (19/36).
    for edition in ("aa50", "1940-2e"):
        limited = exact_land(edition, {}, {"infantry": 1}, landing={"infantry": 1},
                             bombard={"battleship": 2})
        assert limited["attacker_win"] == F(19, 36)


def test_classic_has_no_amphibious_retreat_aa50_retreats_air_and_overland():
    att, dfn, landing = {"fighter": 1, "tank": 1}, {"infantry": 3}, {"infantry": 1}
    for edition, partial in (("classic", False), ("aa50", True), ("1940-2e", True)):
        fight = exact_land(edition, att, dfn, landing=landing)
        retreat = exact_land(edition, att, dfn, landing=landing, retreat_after=1)
        assert (fight != retreat) == partial, edition
    # with no landing units, classic retreats as usual
    plain = exact_land("classic", {"infantry": 1}, {"infantry": 1}, retreat_after=1)
    assert plain["retreat"] == F(5, 6) * F(4, 6)


def test_mech_infantry_lands_and_bombardment_hits_it_1940():
    # Mechanized infantry defends at 2 like infantry, and bombardment may hit it: the 1942-2e
    # value 19/36 again, on both sides.
    result = exact_land("1940-2e", {}, {"mech_infantry": 1}, landing={"mech_infantry": 1},
                        bombard={"battleship": 1})
    assert result["attacker_win"] == F(19, 36)
    assert result["takes_territory"] == F(19, 36)


# ---------------------------------------------------------------------------
# Sea battles in the new editions
# ---------------------------------------------------------------------------


def test_classic_sub_sneak_attacks_a_transport():
    # The sub hits 1/3 before the transport fires; else the transport hits back 1/6.
    # P(win) = (1/3) / (1 - (2/3)(5/6)) = 3/4, never a draw.
    result = exact_sea("classic", {"submarine": 1}, {"transport": 1})
    assert (result["attacker_win"], result["defender_win"], result["draw"]) == (F(3, 4),
                                                                                F(1, 4), 0)


def test_classic_defending_subs_have_no_sneak_attack():
    # Attacking sub first (1/3), the surviving defending sub fires with the defenders (1/3):
    # win (1/3) / (1 - 4/9) = 3/5, lose 2/5, no draw.  Revised: both subs fire first,
    # simultaneously: win 2/5, draw 1/5.
    classic = exact_sea("classic", {"submarine": 1}, {"submarine": 1})
    assert (classic["attacker_win"], classic["defender_win"], classic["draw"]) == (
        F(3, 5), F(2, 5), 0)
    revised = exact_sea("revised", {"submarine": 1}, {"submarine": 1})
    assert (revised["attacker_win"], revised["draw"]) == (F(2, 5), F(1, 5))


def test_classic_defending_destroyer_cancels_the_sneak_attack():
    # 1 sub v 1 destroyer: they fire together: win (1/3)(1/2) / (1 - (2/3)(1/2)) = 1/4,
    # draw 1/4, lose 1/2.  1 sub v 1 carrier (3): sneak attack, win 1/2, no draw.
    dd = exact_sea("classic", {"submarine": 1}, {"destroyer": 1})
    assert (dd["attacker_win"], dd["draw"], dd["defender_win"]) == (F(1, 4), F(1, 4), F(1, 2))
    cv = exact_sea("classic", {"submarine": 1}, {"carrier": 1})
    assert (cv["attacker_win"], cv["draw"]) == (F(1, 2), 0)


def test_classic_air_hits_subs_one_hit_battleship_lone_transport_retreats():
    air = exact_sea("classic", {"fighter": 1}, {"submarine": 1})
    assert air["attacker_win"] == 1 and air["mean_rounds"] == 2  # 3/6 per round
    bb = exact_sea("classic", {"bomber": 1}, {"battleship": 1})
    # one hit sinks it: win (4/6)(2/6) / (1 - (2/6)(2/6)) = 1/2, draw 1/2, lose 1/8 x ...
    assert bb["attacker_win"] == F(4, 6) * F(2, 6) / (1 - F(2, 6) * F(2, 6))
    assert "damaged_battleship" not in bb["defender_survivors"]
    lone = exact_sea("classic", {"transport": 1}, {"fighter": 1})
    assert (lone["retreat"], lone["defender_win"], lone["mean_rounds"]) == (F(1, 3), F(2, 3), 1)


def test_two_hit_carrier_1940():
    # 1 bomber (4) v 1 carrier (2, two hits).  Damaged carrier: win (2/3)(2/3) / (7/9) = 4/7,
    # draw 2/7.  Healthy: a hit that is not answered (4/9) leads there: win (4/9)(4/7)/(7/9).
    result = exact_sea("1940-2e", {"bomber": 1}, {"carrier": 1})
    assert (result["attacker_win"], result["draw"]) == (F(16, 49), F(8, 49))
    assert result["defender_survivors"]["damaged_carrier"] == F(18, 49)
    damaged = exact_sea("1940-2e", {"bomber": 1}, {"damaged_carrier": 1})
    assert damaged["attacker_win"] == F(4, 7)
    one_hit = exact_sea("aa50", {"bomber": 1}, {"carrier": 1})
    assert one_hit["attacker_win"] == F(4, 6) * F(4, 6) / (1 - F(2, 6) * F(4, 6))


def test_1940_free_hits_first_carrier_before_battleship():
    setup = sea_reference._make_setup("1940-2e", "never", "never", False, False)
    counts = sea_reference._to_counts("1940-2e", {"battleship": 1, "carrier": 1,
                                                  "destroyer": 1})
    after = sea_reference._take_casualties(setup, 1, counts, (0, 0, 1), False)
    assert after == sea_reference._to_counts("1940-2e", {"battleship": 1,
                                                         "damaged_carrier": 1, "destroyer": 1})
    after3 = sea_reference._take_casualties(setup, 1, counts, (0, 0, 3), False)
    assert after3 == sea_reference._to_counts("1940-2e", {"damaged_battleship": 1,
                                                          "damaged_carrier": 1})
    after4 = sea_reference._take_casualties(setup, 1, counts, (0, 0, 4), False)
    assert after4 == sea_reference._to_counts("1940-2e", {"damaged_battleship": 1})


def test_tactical_bomber_pairs_with_a_fighter_at_sea_1940():
    setup = sea_reference._make_setup("1940-2e", "never", "never", False, False)
    firing = sea_reference._to_counts("1940-2e", {"fighter": 1, "tactical_bomber": 2})
    groups = sea_reference._fire_groups(setup, 0, firing)
    assert sorted(groups) == sorted([(1, 1, F(3, 6)), (1, 1, F(4, 6)), (1, 1, F(3, 6))])


def test_aa50_sea_is_1942_sea():
    att, dfn = {"submarine": 2, "bomber": 1}, {"carrier": 1, "fighter": 1, "destroyer": 1}
    assert exact_sea("aa50", att, dfn) == exact_sea("1942-2e", att, dfn)


# ---------------------------------------------------------------------------
# Raids
# ---------------------------------------------------------------------------


def test_revised_raid_one_bomber_value_two():
    result = exact_raid("revised", {"bomber": 1}, target_value=2, aa=True)
    assert result["expected_damage"] == F(5, 6) * F(11, 6)
    assert result["damage_distribution"] == {0: F(1, 6), 1: F(5, 36), 2: F(25, 36)}
    assert result["attacker_ipc_loss"] == F(15, 6)
    without_gun = exact_raid("revised", {"bomber": 1}, target_value=2)
    assert without_gun["expected_damage"] == F(11, 6)


def test_1940_air_battle_one_escort_one_bomber_one_interceptor():
    # Air battle: 2 dice at 1 v 1 die at 1; the attacker loses its escort first (10 < 12).
    # The bomber always survives it; then the built-in AA (1/6); damage 1d6 + 2 (mean 11/2).
    result = exact_raid("1940-2e", {"fighter": 1, "bomber": 1}, {"fighter": 1},
                        facility="major")
    assert result["defender_ipc_loss"] == 10 * (1 - F(25, 36))
    assert result["attacker_ipc_loss"] == 10 * F(1, 6) + 12 * F(1, 6)
    assert result["expected_damage"] == F(5, 6) * F(11, 2)
    assert result["attacker_survivors"] == {"fighter": F(5, 6), "bomber": F(5, 6)}
    assert result["defender_survivors"] == {"fighter": F(25, 36)}
    # losing the bomber first instead
    bomber_first = exact_raid("1940-2e", {"fighter": 1, "bomber": 1}, {"fighter": 1},
                              facility="major", attacker_ool="bomber")
    assert bomber_first["expected_damage"] == F(5, 6) * F(5, 6) * F(11, 2)
    # jets: escorts and interceptors at 2
    jets = exact_raid("1940-2e", {"fighter": 1, "bomber": 1}, {"fighter": 1},
                      facility="major", defender_tech=["jets"])
    assert jets["attacker_survivors"]["fighter"] == F(2, 3)


def test_raid_caps_per_edition():
    # classic: no cap; aa50 / 1942-2e: total <= 2 x value; 1940-2e: the facility's cap.
    assert exact_raid("classic", {"bomber": 1})["expected_damage"] == F(7, 2)
    assert exact_raid("aa50", {"bomber": 3}, target_value=1)["damage_distribution"] == {2: 1}
    assert exact_raid("1942-2e", {"bomber": 1},
                      target_value=1)["expected_damage"] == F(5, 6) * (1 * F(1, 6) + 2 * F(5, 6))
    minor = exact_raid("1940-2e", {"bomber": 1}, facility="minor")
    # min(d6 + 2, 6): 3, 4, 5, 6, 6, 6 -> 30/6; times 5/6 for the built-in AA
    assert minor["expected_damage"] == F(5, 6) * F(30, 6)
    tac = exact_raid("1940-2e", {"tactical_bomber": 1}, facility="airbase")
    assert tac["expected_damage"] == F(5, 6) * F(7, 2)


def test_raid_heavy_bombers_per_edition():
    classic = exact_raid("classic", {"bomber": 1}, attacker_tech=["heavy_bombers"])
    assert classic["expected_damage"] == F(21, 2)  # 3d6
    revised = exact_raid("revised", {"bomber": 1}, target_value=20,
                         attacker_tech=["heavy_bombers"])
    assert revised["expected_damage"] == 7  # 2d6, not capped at 20
    best = F(161, 36)  # E[max of 2 d6]
    assert exact_raid("aa50", {"bomber": 1}, target_value=10,
                      attacker_tech=["heavy_bombers"])["expected_damage"] == best
    assert exact_raid("aa50", {"bomber": 1}, target_value=10,
                      attacker_tech=["lhtr_heavy_bombers"])["expected_damage"] == best + 1
    assert exact_raid("1940-2e", {"bomber": 1}, facility="major", attacker_tech=["heavy_bombers"],
                      defender_tech=["radar"])["expected_damage"] == F(4, 6) * (best + 2)


def test_raid_low_luck():
    # AA: 2 bombers at 1 -> strength 2, one hit with 1/3; damage 3 or 4 per d6 (1d2 + 2).
    result = exact_raid("classic", {"bomber": 2}, aa=True, dice="low_luck")
    assert result["bombers_over_target"] == 2 - F(1, 3)
    assert result["damage_distribution"] == {3: F(1, 3) * F(1, 2), 4: F(1, 3) * F(1, 2),
                                             6: F(2, 3) / 4, 7: F(2, 3) / 2, 8: F(2, 3) / 4}
    # 6 bombers at 1: exactly one shot down
    six = exact_raid("revised", {"bomber": 6}, target_value=6, aa=True, dice="low_luck")
    assert six["attacker_ipc_loss"] == 15
    # 1940: strategic bomber 1d2 + 2 + 2 = 5 or 6
    strategic = exact_raid("1940-2e", {"bomber": 1}, facility="major", dice="low_luck")
    assert strategic["damage_distribution"] == {0: F(1, 6), 5: F(5, 12), 6: F(5, 12)}


def test_raid_input_errors():
    with pytest.raises(ValueError, match="air battle"):
        exact_raid("revised", {"bomber": 1, "fighter": 1}, target_value=3)
    with pytest.raises(ValueError, match="target_value"):
        exact_raid("aa50", {"bomber": 1})
    with pytest.raises(ValueError, match="bases"):
        exact_raid("1940-2e", {"tactical_bomber": 1}, facility="major")
    with pytest.raises(ValueError, match="facility"):
        exact_raid("1940-2e", {"bomber": 1})
    with pytest.raises(ValueError, match="at least one bomber"):
        exact_raid("1940-2e", {"fighter": 2}, {"fighter": 1}, facility="major")
    with pytest.raises(ValueError, match="radar"):
        exact_raid("revised", {"bomber": 1}, target_value=3, defender_tech=["radar"])


# ---------------------------------------------------------------------------
# Exact against die by die, 4 standard errors at a fixed seed
# ---------------------------------------------------------------------------

PROBABILITIES = ("attacker_win", "defender_win", "draw", "stalemate", "retreat")


def _popoviciu(trials, **spreads) -> dict:
    """Standard errors of means bounded by Popoviciu: a variable within a range of width
    `spread` has sd <= spread / 2."""
    return {key: spread / 2 / math.sqrt(trials) for key, spread in spreads.items()}


LAND = [
    ("classic", {"infantry": 2, "artillery": 1, "tank": 1, "fighter": 1},
     {"infantry": 2, "tank": 1, "aa": 1}, {}),
    ("aa50", {"infantry": 2, "artillery": 1, "fighter": 1, "bomber": 1}, {"infantry": 2, "aa": 1},
     {"attacker_tech": ["heavy_bombers", "improved_artillery"], "defender_tech": ["radar"]}),
    ("1940-2e", {"infantry": 1, "mech_infantry": 1, "artillery": 1, "tank": 1,
                 "tactical_bomber": 1}, {"infantry": 2, "aa": 1, "fighter": 1}, {}),
    ("revised", {"infantry": 3, "artillery": 1, "tank": 1}, {"infantry": 3, "tank": 1},
     {"dice": "low_luck"}),
    ("1940-2e", {"tactical_bomber": 1}, {"infantry": 2, "aa": 1},
     {"landing": {"infantry": 1, "mech_infantry": 1},
      "bombard": {"battleship": 1, "cruiser": 1}, "dice": "low_luck"}),
    ("aa50", {"fighter": 4, "bomber": 2, "infantry": 2}, {"aa": 1, "infantry": 3},
     {"dice": "low_luck", "defender_tech": ["radar"]}),
    ("classic", {"fighter": 1, "tank": 1}, {"infantry": 2},
     {"landing": {"infantry": 2}, "bombard": {"battleship": 2}, "retreat_after": 1}),
]


@pytest.mark.slow
@pytest.mark.parametrize("battle", LAND, ids=[f"{b[0]}-{i}" for i, b in enumerate(LAND)])
def test_land_dice_agree_with_exact(battle):
    edition, att, dfn, options = battle
    trials = 2_500
    exact = exact_land(edition, att, dfn, **options)
    dice = simulate_land(edition, att, dfn, trials=trials, seed=29, **options)
    att_tuv = sum(reference.STATS[edition][u][0] * n
                  for u, n in {**att, **options.get("landing", {})}.items())
    assert_mc_agrees(dice, exact, probabilities=(*PROBABILITIES, "takes_territory"),
                     means=("attacker_ipc_loss",), trials=trials,
                     stderr=_popoviciu(trials, attacker_ipc_loss=att_tuv))


SEA = [
    ("classic", {"submarine": 2, "fighter": 1, "battleship": 1},
     {"submarine": 1, "carrier": 1, "fighter": 1, "transport": 1}, {}),
    ("1940-2e", {"submarine": 1, "fighter": 1, "tactical_bomber": 1, "battleship": 1},
     {"carrier": 1, "fighter": 1, "destroyer": 1}, {}),
    ("aa50", {"submarine": 2, "cruiser": 1, "fighter": 1}, {"submarine": 1, "destroyer": 1,
                                                           "carrier": 1},
     {"dice": "low_luck", "attacker_tech": ["super_subs"]}),
    ("classic", {"submarine": 2, "destroyer": 1, "bomber": 1},
     {"submarine": 2, "destroyer": 1, "transport": 1},
     {"dice": "low_luck", "attacker_tech": ["heavy_bombers"]}),
]


@pytest.mark.slow
@pytest.mark.parametrize("battle", SEA, ids=[f"{b[0]}-{i}" for i, b in enumerate(SEA)])
def test_sea_dice_agree_with_exact(battle):
    edition, att, dfn, options = battle
    trials = 2_500
    exact = exact_sea(edition, att, dfn, **options)
    dice = simulate_sea(edition, att, dfn, trials=trials, seed=31, **options)
    dfn_tuv = sum(sea_reference.STATS[edition][u][0] * n for u, n in dfn.items())
    assert_mc_agrees(dice, exact, probabilities=PROBABILITIES, means=("defender_ipc_loss",),
                     trials=trials, stderr=_popoviciu(trials, defender_ipc_loss=dfn_tuv))


RAIDS = [
    ("1940-2e", {"fighter": 2, "bomber": 2, "tactical_bomber": 1}, {"fighter": 2},
     {"facility": "airbase", "dice": "low_luck"}),
    ("1940-2e", {"fighter": 1, "bomber": 2}, {"fighter": 2},
     {"facility": "major", "attacker_tech": ["heavy_bombers", "jets"]}),
    ("aa50", {"bomber": 3}, None, {"target_value": 4, "aa": True,
                                   "attacker_tech": ["lhtr_heavy_bombers"],
                                   "defender_tech": ["radar"]}),
    ("revised", {"bomber": 2}, None, {"target_value": 4, "aa": True,
                                      "attacker_tech": ["heavy_bombers"]}),
]


@pytest.mark.slow
@pytest.mark.parametrize("raid", RAIDS, ids=[f"{r[0]}-{i}" for i, r in enumerate(RAIDS)])
def test_raid_dice_agree_with_exact(raid):
    edition, att, dfn, options = raid
    trials = 4_000
    exact = exact_raid(edition, att, dfn, **options)
    dice = simulate_raid(edition, att, dfn, trials=trials, seed=37, **options)
    law, drawn = exact["damage_distribution"], dice["damage_distribution"]
    assert_mc_agrees({d: drawn.get(d, 0.0) for d in law}, law, probabilities=law, means=(),
                     trials=trials)
    assert set(drawn) <= set(law)
    cost = sum(raid_reference.COST[edition][u] * n for u, n in att.items())
    assert_mc_agrees(dice, exact, probabilities=(),
                     means=("attacker_ipc_loss", "expected_damage"), trials=trials,
                     stderr=_popoviciu(trials, attacker_ipc_loss=cost,
                                       expected_damage=max(law)))
