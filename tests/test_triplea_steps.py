"""A battle in progress read from a real save at every step it can stand at (issue 42 item 14;
docs/in-progress.md): the shared saves' object streams with a battle added as TripleA 2.0
writes it (tests/triplea_steps.py), its execution stack at the step.

A raid saved after its AA roll was solved as a fresh raid: its AA steps are anonymous classes
inside the inner class FireAa, which Java gives the field ``this$1`` (and ``val$currentTypeAa``),
and the reader looked for ``this$0`` (TripleA's real save revised_during_bombing_raid_after_aa_
roll.tsvg: expected damage 2.917, bombers over the target 0.833, attacker loss 2.5 where its own
dice give 3.5, 1, 0).  The earlier fix was tested on records typed by hand.  The same check of
every other step reader found the land AA's casualties unread (FireAa keeps them in
``casualties``, not ``killed``: an aircraft shot down at L3 fought on) and an air battle under
way solved as a fresh raid."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
import triplea_steps as steps
from java_stream import save_bytes
from test_triplea import GLOBAL, LAND_COMBAT, RAID_AFTER_AA, SAVES, javaobj, needs  # noqa: F401

from battlecalc.errors import BattleInputError
from battlecalc.triplea import read_game

pytestmark = pytest.mark.skipif(not SAVES.is_dir(), reason="TripleA fixtures not found")


@pytest.fixture(scope="module")
def land():
    return steps.Save(LAND_COMBAT)


@pytest.fixture(scope="module")
def global_save(land):
    return steps.Save(GLOBAL, donor=land)  # (a save of no battle: the land save's classes)


def _battle(save: steps.Save, build, territory: str, tmp_path):
    """The game's battle at `territory` of the save with the battle `build` adds."""
    path = tmp_path / "edited.tsvg"
    path.write_bytes(save_bytes(save.with_battle(build)))
    (battle,) = read_game(path, method="exact", territory=territory).battles
    return battle


def _raid_figures(battle) -> tuple:
    r = battle.result
    return r["expected_damage"], r["bombers_over_target"], r["attacker_ipc_loss"]


def _floats(values) -> tuple:
    return tuple(float(x) for x in values)


# ------------------------------------------------------------------ a raid: R1-R5 (Revised)
# 1 German bomber over the United Kingdom (production 8: no cap on a die), its AA gun one die
# at the bomber (a hit on 1), the bomber 15 IPC: a fresh raid 35/12 damage, 5/6 over, 15/6 lost

FRESH = (Fraction(35, 12), Fraction(5, 6), Fraction(15, 6))
BOMBING = (Fraction(7, 2), 1, 0)


def test_the_issue_s_raid_after_its_aa_roll_bombs_with_its_bomber(land, tmp_path):
    """StrategicBombingRaidBattle$FireAa$3 (this$1 its FireAa, one die rolled: a miss, no
    casualty), $FireAa$4 and $ConductBombing queued: the bombing to come."""
    battle = _battle(land, steps.raid("FireAa$3"), "United Kingdom", tmp_path)
    assert battle.site.production == 8
    assert _raid_figures(battle) == pytest.approx(_floats(BOMBING), abs=1e-12)
    assert battle.in_progress["step"] == "StrategicBombingRaidBattle$FireAa$3"
    assert battle.in_progress["start"] == {"start_step": "bombing", "hits_on_attacker": 0}


RAID = [
    ("FireAa queued", {}, FRESH), ("FireAa$1", {}, FRESH),
    ("FireAa$2", {}, BOMBING), ("FireAa$2", {"aa_hits": 1}, (0, 0, 15)),
    ("FireAa$3", {}, BOMBING), ("FireAa$4", {}, BOMBING),
    ("ConductBombing", {}, BOMBING), ("ConductBombing$1", {}, BOMBING),
]


# 1940 2E (the Global save: the Germans' two bombers over the United Kingdom, the raid on its
# first facility, its air base, as `game` takes it: at most 6 damage; a bomber's d6 + 2:
# min(d6 + 2, 6) is 5 on average, two bombers' 6): one AA hit of two dice, its hit to take
# (the bomber's loss, 12 IPC, counted), or the casualty chosen (out of the raid: the bombing
# counts from the bomber standing; `casualties.killed` read)
RAID_1940 = [
    ("FireAa$2", {"bombers": 2, "aa_hits": 1}, (5, 1, 12)),
    ("FireAa$3", {"bombers": 2, "aa_hits": 1, "killed": 1}, (5, 1, 0)),
    ("FireAa$3", {"bombers": 2}, (6, 2, 0)),
]


@pytest.mark.slow
@pytest.mark.parametrize(("step", "options", "expected"), RAID_1940,
                         ids=[f"{s} {o}" for s, o, _ in RAID_1940])
def test_a_raid_s_casualties_chosen_are_read(global_save, tmp_path, step, options, expected):
    build = steps.raid(step, **options, factory=("factory_major", "British"))
    battle = _battle(global_save, build, "United Kingdom", tmp_path)
    assert _raid_figures(battle) == pytest.approx(_floats(expected), abs=1e-12), step


@pytest.mark.slow
@pytest.mark.parametrize(("step", "options", "expected"), RAID,
                         ids=[f"{s} {o}" for s, o, _ in RAID])
def test_each_raid_step_solves_from_where_it_stands(land, tmp_path, step, options, expected):
    battle = _battle(land, steps.raid(step, **options), "United Kingdom", tmp_path)
    assert _raid_figures(battle) == pytest.approx(_floats(expected), abs=1e-12), step


@pytest.mark.slow
@pytest.mark.parametrize(("step", "words"), [
    ("ConductBombing$2", "a raid whose bombing dice are rolled (TripleA's step "
     "StrategicBombingRaidBattle$ConductBombing$2): its damage is known, nothing is left to "
     "solve"),
    ("$1 (after bombing)", "a raid after its bombing (TripleA's step "
     "StrategicBombingRaidBattle$1): its damage is known, nothing is left to solve")])
def test_a_raid_past_its_bombing_dice_is_refused_naming_the_step(land, tmp_path, step, words):
    """R5 and after: the damage known (TripleA's dice), nothing to solve; they were solved as
    a fresh raid (R5) or as the bombing to come (after it)."""
    with pytest.raises(BattleInputError, match=f"^United Kingdom: {re.escape(words)}$"):
        _battle(land, steps.raid(step), "United Kingdom", tmp_path)


def test_the_real_raid_save_bombs_with_its_bomber():
    """TripleA's own save of the issue (triplea-game/assets, where the fixtures hold it)."""
    needs(RAID_AFTER_AA)
    (battle,) = read_game(RAID_AFTER_AA, method="exact", territory="United Kingdom").battles
    assert _raid_figures(battle) == pytest.approx((3.5, 1.0, 0.0), abs=1e-12)


# ------------------------------------------------------------------ an air battle: R6-R12


@pytest.mark.slow
@pytest.mark.parametrize("step", steps.AIR_STEPS[1:])
def test_each_air_battle_step_is_the_raid_from_its_start_or_refused(global_save, tmp_path,
                                                                    step):
    """1940 2E, a German bomber and fighter over the United Kingdom, a British fighter
    intercepting.  Before its attackers fire (InterceptorsLaunch: the interceptors standing
    taken as given; AttackersFire queued or at $1, no dice): the raid from its start, as the
    battle not begun.  Once any die of it is rolled: refused, naming TripleA's step (they
    were solved as a fresh raid)."""
    fresh = _battle(global_save, steps.air_battle("not begun"), "United Kingdom", tmp_path)
    if steps.AIR_STEPS.index(step) <= steps.AIR_STEPS.index("AttackersFire$1"):
        battle = _battle(global_save, steps.air_battle(step), "United Kingdom", tmp_path)
        assert _raid_figures(battle) == _raid_figures(fresh)
        assert battle.result["expected_damage"] > 0
    else:
        short = "AirBattle" + ("" if step.startswith("$") else "$") + step.split()[0]
        with pytest.raises(BattleInputError, match=re.escape(
                f"United Kingdom: a raid's air battle under way (TripleA's step {short}) is "
                "not solved from where it stands")):
            _battle(global_save, steps.air_battle(step), "United Kingdom", tmp_path)


# ------------------------------------------------------------------ land steps: L1-L15

# (step, options, the start the battle is solved from): docs/in-progress.md's land table,
# 3 Russian infantry and a fighter against 2 German infantry (and an AA gun) in round 1
LAND = [
    ("Fire$1", {}, {"start_step": "attacker_fire"}),
    ("Fire$2", {}, {"start_step": "defender_fire", "hits_on_defender": 1}),
    ("Fire$3", {}, {"start_step": "defender_fire", "defender_waiting": {"infantry": 1}}),
    ("Fire$1", {"defending": True}, {"start_step": "defender_fire"}),
    ("Fire$2", {"defending": True}, {"start_step": "general_casualties",
                                     "hits_on_attacker": 1}),
    ("Fire$3", {"defending": True}, {"start_step": "end_of_round",
                                     "attacker_waiting": {"infantry": 1}}),
    ("FireAa$1", {}, {"start_step": "start"}),
    ("FireAa$2", {}, {"start_step": "aa_casualties", "hits_on_attacker": 1}),
    ("FireAa$3", {}, {"start_step": "bombard_fire", "attacker_waiting": {"fighter": 1}}),
    ("RollDiceStep", {}, {"start_step": "attacker_fire"}),
    ("SelectCasualties", {}, {"start_step": "defender_fire", "hits_on_defender": 1}),
    ("MarkCasualties", {}, {"start_step": "defender_fire",
                            "defender_waiting": {"infantry": 1}}),
    ("RollDiceStep", {"defending": True}, {"start_step": "defender_fire"}),
    ("SelectCasualties", {"defending": True}, {"start_step": "general_casualties",
                                               "hits_on_attacker": 1}),
    ("MarkCasualties", {"defending": True}, {"start_step": "end_of_round",
                                             "attacker_waiting": {"infantry": 1}}),
    ("RollDiceStep", {"aa": True}, {"start_step": "start"}),
    ("SelectCasualties", {"aa": True}, {"start_step": "aa_casualties",
                                        "hits_on_attacker": 1}),
    ("MarkCasualties", {"aa": True}, {"start_step": "bombard_fire",
                                      "attacker_waiting": {"fighter": 1}}),
]


def test_the_land_aa_s_casualties_are_read_from_its_casualty_details(land, tmp_path):
    """TripleA 2.0-2.4's FireAa$3 (notify: this$0 its FireAa, whose casualties are a
    CasualtyDetails): the fighter shot down waits to die, out of the battle (it fought on)."""
    battle = _battle(land, steps.land_battle("FireAa$3"), "Germany", tmp_path)
    assert battle.result["start"] == {"start_round": 1, "start_step": "bombard_fire",
                                      "attacker_waiting": {"fighter": 1}}
    assert battle.attacker == {"infantry": 3}


@pytest.mark.slow
@pytest.mark.parametrize(("step", "options", "start"), LAND,
                         ids=[f"{s}{'-defending' if o.get('defending') else ''}"
                              f"{'-aa' if o.get('aa') else ''}" for s, o, _ in LAND])
def test_each_land_step_reads_as_its_position(land, tmp_path, step, options, start):
    battle = _battle(land, steps.land_battle(step, **options), "Germany", tmp_path)
    assert battle.result["start"] == {"start_round": 1, **start}
