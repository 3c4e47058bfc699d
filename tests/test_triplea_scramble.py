"""A save's air bases: which aircraft may scramble into a sea battle (issue 31 item 2).

The shared Global 1940 2E save (German turn 1, politics) holds the map, the units and the
relationships; it has no pending battle, so a sea battle is added to what was read (a
BattleRecord, as the BattleTracker would hold one) in 109 Sea Zone, between the United
Kingdom (an airfield, 2 British and 1 French fighter) and Scotland (an airfield, 1 British
fighter).  What the save says is checked against the game's map file (its connections and
unit attachments, read here with ElementTree); the battle against the decision reference
(tests/references/decision_reference.py: every force the two bases may send, enumerated).
"""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import decision_reference as dr
import pytest
from test_triplea import FIXTURES, GLOBAL, SAVES, javaobj  # noqa: F401  (skips with them)

from battlecalc import format_army
from battlecalc.army import parse_army
from battlecalc.rules import load_rules
from battlecalc.triplea.game import game_of_save
from battlecalc.triplea.save import BattleRecord, UnitRecord, read_save

pytestmark = pytest.mark.skipif(not SAVES.is_dir(), reason="TripleA fixtures not found")
MAP = FIXTURES / "maps" / "ww2global40_2nd_edition.xml"
ZONE = "109 Sea Zone"
TOL = 1e-12


@pytest.fixture(scope="module")
def save():
    return read_save(GLOBAL)


@pytest.fixture(scope="module")
def map_file():
    return ET.parse(MAP).getroot()


def with_battle(data, attacking, zone=ZONE, **changes):
    """The save with one sea battle of the Germans' in `zone` (`attacking`: {type: count}),
    its defenders the zone's units, not begun."""
    places = {t.name: t for t in data.territories}
    units = tuple(UnitRecord(t, "Germans") for t, n in attacking.items() for _ in range(n))
    record = BattleRecord(territory=zone, battle_type="NORMAL", attacker="Germans",
                          defender="British", attacking=units, defending=places[zone].units)
    return dataclasses.replace(data, battles=(record,), **changes)


def with_units(data, territory, change):
    """The save with `change(unit)` applied to every unit of `territory`."""
    territories = tuple(dataclasses.replace(t, units=tuple(change(u) for u in t.units))
                        if t.name == territory else t for t in data.territories)
    return dataclasses.replace(data, territories=territories)


def test_the_map_read_from_the_save_is_the_map_file(save, map_file):
    expected: dict[str, set] = {}
    for c in map_file.iter("connection"):
        expected.setdefault(c.get("t1"), set()).add(c.get("t2"))
        expected.setdefault(c.get("t2"), set()).add(c.get("t1"))
    got = {t: set(n) for t, n in save.neighbors.items() if n}
    assert got == expected
    assert save.neighbors[ZONE] == ("104 Sea Zone", "108 Sea Zone", "110 Sea Zone",
                                    "118 Sea Zone", "119 Sea Zone", "Eire", "Scotland",
                                    "United Kingdom")


def test_the_unit_attachments_are_the_map_files(save, map_file):
    options = {}
    for a in map_file.iter("attachment"):
        if a.get("name") == "unitAttachment":
            options[a.get("attachTo")] = {o.get("name"): o.get("value")
                                          for o in a.iter("option")}
    for name, kind in save.unit_types.items():
        o = options.get(name, {})
        assert kind.air_base == (o.get("isAirBase") == "true"), name
        assert kind.can_scramble == (o.get("canScramble") == "true"), name
        if "maxScrambleDistance" in o:
            assert kind.scramble_distance == int(o["maxScrambleDistance"]), name
        assert kind.max_operational_damage == int(o.get("maxOperationalDamage", -1)), name
    assert {n for n, k in save.unit_types.items() if k.can_scramble} == {"fighter",
                                                                          "tactical_bomber"}


def test_who_is_at_war_in_german_turn_one(save):
    war = save.at_war
    assert frozenset(("Germans", "British")) in war
    assert frozenset(("Germans", "French")) in war
    assert frozenset(("Japanese", "Chinese")) in war
    # 1940: the Americans and the Soviets are neutral until attacked or the US enters
    assert frozenset(("Germans", "Americans")) not in war
    assert frozenset(("Germans", "Russians")) not in war
    assert save.scramble_pending  # the battle phase has not scrambled this turn


def test_a_sea_battle_between_two_air_bases(save):
    attack = {"submarine": 2, "destroyer": 1}
    game = game_of_save(with_battle(save, attack))
    battle = game.battles[0]
    bases = {b.territory: b.aircraft for b in battle.scramble_from}
    assert bases == {"Scotland": {"fighter": 1}, "United Kingdom": {"fighter": 3}}
    uk = next(b for b in battle.scramble_from if b.territory == "United Kingdom")
    assert uk.units == [{"nation": "British", "unit": "fighter", "count": 2},
                        {"nation": "French", "unit": "fighter", "count": 1}]
    expected = dr.decide_sea_1940("1940-2e", attack, {"destroyer": 1, "transport": 1},
                                  scramble_from=[{"fighter": 1}, {"fighter": 3}])
    r = battle.result
    for key in ("attacker_win", "defender_win", "draw", "tuv_swing"):
        assert r[key] == pytest.approx(float(expected[key]), abs=TOL, rel=0), key
    assert r["decisions"]["scrambled"] == format_army(expected["scrambled"])
    assert r["decisions"]["scramble_from"] == "1 fighter; 3 fighter"
    # the scrambled aircraft's losses are their nations': the French fighter is one of them
    assert "French" in battle.defender_nations and battle.ipc_loss["French"] > 0
    assert sum(battle.ipc_loss[n] for n in battle.defender_nations) == pytest.approx(
        r["defender_ipc_loss"], abs=1e-9)
    text = game.table()
    assert "scramble  from United Kingdom: British: 2 fighter; French: 1 fighter" in text
    assert battle.to_dict()["scramble_from"][0] == {
        "territory": "Scotland", "aircraft": {"fighter": 1},
        "units": [{"nation": "British", "unit": "fighter", "count": 1}]}


def test_an_air_base_out_of_use_scrambles_nothing(save):
    # the UK airfield bombed to 3 (operative to 2): only Scotland's fighter may come
    damaged = with_units(save, "United Kingdom", lambda u: dataclasses.replace(
        u, damage=3) if u.type == "airfield" else u)
    battle = game_of_save(with_battle(damaged, {"submarine": 2}), solve=False).battles[0]
    assert [(b.territory, b.aircraft) for b in battle.scramble_from] == [
        ("Scotland", {"fighter": 1})]
    assert "air base in United Kingdom is out of use (damage 3, operative to 2)" in battle.note
    # at 2 it still works
    at_two = with_units(save, "United Kingdom", lambda u: dataclasses.replace(
        u, damage=2) if u.type == "airfield" else u)
    battle = game_of_save(with_battle(at_two, {"submarine": 2}), solve=False).battles[0]
    assert len(battle.scramble_from) == 2


def test_aircraft_that_may_not_scramble(save):
    # scrambled already this turn, or disabled: they stay
    done = with_units(save, "United Kingdom", lambda u: dataclasses.replace(
        u, scrambled=u.owner == "French") if u.type == "fighter" else u)
    battle = game_of_save(with_battle(done, {"submarine": 2}), solve=False).battles[0]
    assert {b.territory: b.aircraft for b in battle.scramble_from} == {
        "Scotland": {"fighter": 1}, "United Kingdom": {"fighter": 2}}
    # a zone whose neighbours hold no air base: Malta's fighter has no airfield
    battle = game_of_save(with_battle(save, {"submarine": 2}, zone="96 Sea Zone"),
                          solve=False).battles[0]
    assert battle.scramble_from is None


@pytest.mark.parametrize("change", [
    {"scramble_pending": False},  # the phase scrambled already: the aircraft are in the zone
    {"properties_off": "Scramble Rules In Effect"},
    {"properties_on": "Scramble From Island Only"},  # the UK and Scotland are no islands
])
def test_no_scramble_where_the_save_says_none(save, change):
    data = save
    if "scramble_pending" in change:
        data = dataclasses.replace(data, scramble_pending=False)
    if "properties_off" in change:
        data = dataclasses.replace(data, properties={**data.properties,
                                                     change["properties_off"]: False})
    if "properties_on" in change:
        data = dataclasses.replace(data, properties={**data.properties,
                                                     change["properties_on"]: True})
    game = game_of_save(with_battle(data, {"submarine": 2, "destroyer": 1}))
    battle = game.battles[0]
    assert battle.scramble_from is None
    assert battle.result.get("decisions") is None or not battle.result["decisions"].get(
        "scrambled")


def test_kamikaze_tokens_and_zones_are_the_map_files(save, map_file):
    # the zones: the game file's trigger sets kamikazeZone on them after the game's start
    # ("territoryProperty kamikazeZone", its "territories")
    trigger = next(a for a in map_file.iter("attachment")
                   if a.get("name") == "triggerAttachment_Japanese_Recruit_Kamikaze_Pilots_alpha")
    options = {o.get("name"): o.get("value") for o in trigger.iter("option")}
    assert options["territoryProperty"] == "kamikazeZone"
    assert set(save.kamikaze_zones) == set(options["territories"].split(":"))
    assert set(save.kamikaze_zones.values()) == {"Japanese"}
    # Japan's tokens: the game file gives it 6 SuicideAttackTokens, a strength-2 resource
    given = [r for r in map_file.iter("resourceGiven") if r.get("resource") ==
             "SuicideAttackTokens"]
    assert save.kamikaze_tokens == {"Japanese": int(given[0].get("quantity"))} == {
        "Japanese": 6}
    assert save.kamikaze_pending


def test_a_battle_in_a_kamikaze_zone_says_who_may_strike(save):
    # the Americans attack 6 Sea Zone, Japan's home waters, once at war with Japan: the
    # Japanese may strike with their 6 tokens (solved without them), and Japan's air base
    # scrambles its 2 fighters and 2 tactical bombers, at most 3 of them
    at_war = save.at_war | {frozenset(("Americans", "Japanese"))}
    data = dataclasses.replace(save, at_war=at_war)
    places = {t.name: t for t in data.territories}
    zone = "6 Sea Zone"
    record = BattleRecord(territory=zone, battle_type="NORMAL", attacker="Americans",
                          defender="Japanese",
                          attacking=(UnitRecord("battleship", "Americans"),),
                          defending=places[zone].units)
    battle = game_of_save(dataclasses.replace(data, battles=(record,))).battles[0]
    assert battle.kamikaze == {"nation": "Japanese", "tokens": 6}
    assert "up to 6 kamikaze token(s)" in battle.note
    assert battle.result["decisions"].get("kamikaze") is None  # solved without strikes
    assert [(b.territory, b.aircraft) for b in battle.scramble_from] == [
        ("Japan", {"fighter": 2, "tactical_bomber": 2})]
    # the zone's own aircraft and the scrambled ones are one row a nation and unit
    rows = {(r["nation"], r["unit"]): r["count"] for r in battle.defender_units}
    assert len(rows) == len(battle.defender_units)
    sent = parse_army(battle.result["decisions"]["scrambled"], load_rules("1940-2e"))
    zone_fighters = sum(1 for u in places[zone].units if u.type == "fighter")
    assert rows[("Japanese", "fighter")] == zone_fighters + sent.get("fighter", 0)
    # not at war: no strike and no scramble; the phase past its strikes: none either
    plain = game_of_save(dataclasses.replace(save, battles=(record,)), solve=False).battles[0]
    assert plain.kamikaze is None and plain.scramble_from is None
    done = dataclasses.replace(data, battles=(record,), kamikaze_pending=False)
    assert game_of_save(done, solve=False).battles[0].kamikaze is None


def test_the_board_loads_the_scramble_into_the_form_and_solves_as_game_does(save):
    import urllib.parse

    from battlecalc import simulate
    from battlecalc.triplea import board as boards
    from battlecalc.web.spec import parse_params

    data = with_battle(save, {"submarine": 2, "destroyer": 1})
    (unsolved,) = game_of_save(data, solve=False).battles
    entry = boards.battle_entry(unsolved, data, load_rules("1940-2e"), False)
    query = dict(urllib.parse.parse_qsl(entry["query"]))
    assert query["scramble_from"] == "1 fighter; 3 fighter" and query["kind"] == "sea"
    assert [b["territory"] for b in entry["scramble_from"]] == ["Scotland", "United Kingdom"]
    kwargs, _ = parse_params(boards.solve_params(entry["query"]))
    page = simulate(**kwargs)
    (game,) = game_of_save(data).battles
    for key in ("attacker_win", "defender_win", "draw", "tuv_swing", "defender_ipc_loss"):
        assert getattr(page, key) == pytest.approx(game.result[key], abs=1e-9), key
