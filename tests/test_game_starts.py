"""A save's battle in progress solved from where it stands (triplea/game.py start_of, one solve
from battlecalc.starts): each TripleA step a save can stand at (docs/in-progress.md) maps to
its position, and the game's odds equal the independent reference's at that position
(tests/references/start_reference.py); steps battlecalc does not solve from are refused,
naming them."""

from __future__ import annotations

import os
from fractions import Fraction

import pytest
from start_reference import Position as P
from start_reference import exact_land_from, exact_sea_from

from battlecalc.errors import BattleInputError
from battlecalc.triplea.game import game_of_save
from battlecalc.triplea.save import (
    BattleRecord,
    FireState,
    SaveData,
    TerritoryRecord,
    UnitRecord,
)

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "fixtures", "triplea",
                      "saves")


def _units(owner: str, army: dict[str, int], hits: int = 0) -> tuple[UnitRecord, ...]:
    return tuple(UnitRecord(name, owner, hits) for name, n in army.items() for _ in range(n))


def _save(edition_game: str, record: BattleRecord, water: bool = False) -> SaveData:
    place = TerritoryRecord(record.territory, "Germans", water, record.defending, 3)
    return SaveData(edition_game, "2.0.0", record.round, "battle", None, "Russians", (place,),
                    (record,))


def _record(attacker, defender, fire=None, round_=1, a_wait=None, d_wait=None, killed=()):
    return BattleRecord(
        territory="Zone", battle_type="NORMAL", attacker="Russians", defender="Germans",
        attacking=_units("Russians", attacker), defending=_units("Germans", defender),
        round=round_, started=True, killed=killed,
        attacking_waiting_to_die=_units("Russians", a_wait or {}),
        defending_waiting_to_die=_units("Germans", d_wait or {}), fire=fire)


def _fire(kind, defending, phase, hits=0, killed=None, owner="Germans"):
    return FireState(defending, None, hits, max(hits, 1), "", kind=kind, phase=phase,
                     killed=_units(owner, killed or {}), step=f"{kind}-{phase}")


GAMES = {"revised": "World War II Revised", "1942-2e": "World War II v5 1942 Second Edition"}

# (edition, attacker, defender, the save's step, the position it stands for)
LAND = [
    ("1942-2e", {"fighter": 3}, {"infantry": 2, "aaGun": 1}, 2, None, None, None,
     P(round=2, step="start")),
    ("1942-2e", {"fighter": 2, "infantry": 1}, {"infantry": 2, "aaGun": 1}, 1, None, None,
     _fire("aa", True, "select", hits=1), P(step="aa_casualties", hits_on_attacker=1)),
    ("1942-2e", {"fighter": 3}, {"infantry": 2, "aaGun": 1}, 1, None, None,
     _fire("general", False, "select", hits=0), P(step="defender_fire")),
    ("revised", {"infantry": 3, "armour": 1}, {"infantry": 3}, 1, None, None,
     _fire("general", False, "select", hits=2), P(step="defender_fire", hits_on_defender=2)),
    ("revised", {"infantry": 3, "armour": 1}, {"infantry": 3}, 2, None, None,
     _fire("general", False, "mark", killed={"infantry": 1}),
     P(round=2, step="defender_fire", defender_waiting={"infantry": 1})),
    ("revised", {"infantry": 3, "armour": 1}, {"infantry": 2}, 1, None, {"infantry": 1},
     _fire("general", True, "roll"), P(step="defender_fire", defender_waiting={"infantry": 1})),
    ("revised", {"infantry": 3, "armour": 1}, {"infantry": 2}, 1, None, {"infantry": 1},
     _fire("general", True, "select", hits=1),
     P(step="general_casualties", hits_on_attacker=1, defender_waiting={"infantry": 1})),
    ("1942-2e", {"infantry": 3, "armour": 1}, {"infantry": 2}, 3, None, None,
     _fire("general", True, "mark", killed={"infantry": 1}, owner="Russians"),
     P(round=3, step="end_of_round", attacker_waiting={"infantry": 1})),
]


def _army_names(army: dict[str, int]) -> dict[str, int]:
    names = {"armour": "tank", "aaGun": "aa"}
    return {names.get(k, k): v for k, v in army.items()}


@pytest.mark.parametrize("edition, attacker, defender, round_, a_wait, d_wait, fire, position",
                         LAND)
def test_a_land_step_solves_from_its_position(edition, attacker, defender, round_, a_wait,
                                              d_wait, fire, position):
    if fire is not None and fire.phase == "mark":  # chosen, still among the standing units
        chosen = {u.type: 0 for u in fire.killed}
        for u in fire.killed:
            chosen[u.type] += 1
        side = attacker if fire.defending else defender
        for name, n in chosen.items():
            side[name] = side.get(name, 0) + n
    record = _record(attacker, defender, fire, round_, a_wait, d_wait)
    game = game_of_save(_save(GAMES[edition], record), method="exact")
    [battle] = game.battles
    result = battle.result
    a_stand, d_stand = _army_names(attacker), _army_names(defender)
    if fire is not None and fire.phase == "mark":
        for u in fire.killed:
            stand = a_stand if fire.defending else d_stand
            stand[u.type] -= 1
    want = exact_land_from(edition, {k: v for k, v in a_stand.items() if v},
                           {k: v for k, v in d_stand.items() if v}, position=position)
    for key in ("attacker_win", "defender_win", "draw", "takes_territory", "mean_rounds"):
        assert result[key] == pytest.approx(float(want[key]), abs=1e-12), key
    for key in ("attacker_ipc_loss", "defender_ipc_loss"):
        assert result[key] == pytest.approx(float(want[key]), abs=1e-10), key
    assert result["start"]["start_round"] == position.round


def test_a_sea_step_solves_from_its_position():
    record = BattleRecord(
        territory="Zone", battle_type="NORMAL", attacker="Russians", defender="Germans",
        attacking=_units("Russians", {"destroyer": 2, "fighter": 1}),
        defending=_units("Germans", {"cruiser": 1, "transport": 1}), round=2, started=True,
        fire=_fire("general", False, "select", hits=1))
    game = game_of_save(_save(GAMES["1942-2e"], record, water=True), method="exact")
    result = game.battles[0].result
    want = exact_sea_from("1942-2e", {"destroyer": 2, "fighter": 1},
                          {"cruiser": 1, "transport": 1},
                          position=P(round=2, step="defender_fire", hits_on_defender=1))
    assert result["attacker_win"] == pytest.approx(float(want["attacker_win"]), abs=1e-12)
    assert result["mean_rounds"] == pytest.approx(float(want["mean_rounds"]), abs=1e-12)


def test_a_strike_under_way_is_refused_naming_the_step():
    record = BattleRecord(
        territory="Zone", battle_type="NORMAL", attacker="Russians", defender="Germans",
        attacking=_units("Russians", {"submarine": 2}), defending=_units("Germans",
                                                                        {"destroyer": 1}),
        round=1, started=True, fire=_fire("strike", True, "select", hits=1))
    with pytest.raises(BattleInputError, match="Zone .*in progress.*strike_casualties"):
        game_of_save(_save(GAMES["1942-2e"], record, water=True), method="exact")


def test_a_raid_after_its_aa_roll_bombs_with_every_bomber():
    """The issue's Revised raid: saved after its AA roll (one die, a miss, no casualty): not
    a fresh raid (2.917 damage, 0.833 bombers over target, 2.5 IPC lost) but the bombing to
    come: 3.5, 1.0, 0."""
    record = BattleRecord(
        territory="Zone", battle_type="BOMBING_RAID", attacker="Russians", defender="Germans",
        attacking=_units("Russians", {"bomber": 1}), defending=_units("Germans",
                                                                      {"aaGun": 1}),
        round=1, started=True,
        fire=FireState(False, None, 0, 1, "", kind="raid_aa", phase="select",
                       step="StrategicBombingRaidBattle$FireAa$2"))
    place = TerritoryRecord("Zone", "Germans", False,
                            _units("Germans", {"aaGun": 1, "factory": 1}), 10)
    data = SaveData(GAMES["revised"], "2.0.0", 1, "battle", None, "Russians", (place,),
                    (record,))
    result = game_of_save(data, method="exact").battles[0].result
    assert result["expected_damage"] == pytest.approx(3.5, abs=1e-12)
    assert result["bombers_over_target"] == pytest.approx(1.0, abs=1e-12)
    assert result["attacker_ipc_loss"] == 0
    fresh = game_of_save(SaveData(GAMES["revised"], "2.0.0", 1, "battle", None, "Russians",
                                  (place,), (BattleRecord(
                                      territory="Zone", battle_type="BOMBING_RAID",
                                      attacker="Russians", defender="Germans",
                                      attacking=record.attacking,
                                      defending=record.defending),)), method="exact")
    assert fresh.battles[0].result["expected_damage"] == pytest.approx(
        float(Fraction(35, 12)), abs=1e-12)


@pytest.mark.skipif(not os.path.isdir(SHARED), reason="the shared TripleA fixtures are absent")
def test_the_shared_west_russia_save_keeps_its_odds():
    """West Russia, the Russians' volley rolled (1 hit), the Germans to choose: the odds
    game gave before (they were right), equal to the reference at L11."""
    from battlecalc.triplea.game import read_game

    game = read_game(os.path.join(SHARED, "revised_during_land_to_land_combat.tsvg"),
                     method="exact")
    result = game.battles[0].result
    assert result["start"] == {"start_round": 1, "start_step": "defender_fire",
                               "hits_on_defender": 1}
    want = exact_land_from("revised", {"infantry": 6, "artillery": 1, "tank": 3, "fighter": 1},
                           {"infantry": 3, "artillery": 1, "tank": 1},
                           position=P(step="defender_fire", hits_on_defender=1))
    for key in ("attacker_win", "defender_win", "draw", "takes_territory", "mean_rounds"):
        assert result[key] == pytest.approx(float(want[key]), abs=1e-12), key
    assert [round(result[k], 6) for k in ("attacker_win", "defender_win", "draw")] == [
        0.99894, 0.000781, 0.000279]


def test_a_huge_battle_in_progress_goes_through_runs_limits():
    """Issue 29 item 6: a save's battle in progress of 1,000 v 1,000 infantry took 110 s and
    2.3 GB (a mixture of fresh battles, each solved apart); now it is one solve with run's
    estimate and limits, the answer run gives for the same start (a child process under a
    memory cap)."""
    from limited import python_limited

    code = """
import json, time
import battlecalc
from battlecalc.triplea.game import game_of_save
from battlecalc.triplea.save import (BattleRecord, FireState, SaveData, TerritoryRecord,
                                     UnitRecord)
units = lambda owner, n: tuple(UnitRecord("infantry", owner, 0) for _ in range(n))
record = BattleRecord("Zone", "NORMAL", "Russians", "Germans", units("Russians", 1000),
                      units("Germans", 1000), round=2, started=True,
                      fire=FireState(False, None, 3, 1000, "", kind="general", phase="select"))
place = TerritoryRecord("Zone", "Germans", False, record.defending, 3)
data = SaveData("World War II Revised", "2.0.0", 2, "battle", None, "Russians", (place,),
                (record,))
t = time.perf_counter()
result = game_of_save(data).battles[0].result
seconds = time.perf_counter() - t
run = battlecalc.simulate(rules="revised", attacker="1000 inf", defender="1000 inf",
                          **result["start"])
print(json.dumps({"s": seconds, "method": result["method"], "start": result["start"],
                  "same": [result[k] == getattr(run, k) for k in
                           ("attacker_win", "defender_win", "mean_rounds",
                            "defender_ipc_loss")]}))
"""
    done = python_limited(code, memory_mb=3072, timeout=120)
    assert done.exit_code == 0, done.stderr[-2000:]
    out = done.json()
    assert out["start"] == {"start_round": 2, "start_step": "defender_fire",
                            "hits_on_defender": 3}
    assert out["method"] == "exact" and all(out["same"]), out
    assert out["s"] < 30 and done.peak_mb < 1500, (out, done.peak_mb)
