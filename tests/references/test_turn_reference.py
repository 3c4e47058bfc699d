"""The movement module against tests/references/turn_reference.py (issue 41): the same classes
and the same targets with the same movement, key for key, on every shared save, on the shared
saves taken to other players' steps, during a combat move, on the enemy's next turn, and on
boards edited from their object streams (a territory emptied, a unit moved, a territory
conquered this turn, a factory alone, a neutral opened, long range aircraft); the same saves
refused.  The reference reads the save itself and checks every whole route as TripleA's
validators do; the package searches per-step predicates breadth first.

Slow: the reference enumerates routes (Global 1940: about 10 s a player)."""

from __future__ import annotations

import pytest
from hostile_saves import triplea_fixtures
from save_edits import chain, written
from turn_reference import Refused, reach_reference

pytest.importorskip("javaobj.v2", reason="javaobj-py3 (battlecalc[triplea]) absent")

from battlecalc.errors import BattleInputError  # noqa: E402
from battlecalc.turn import reach  # noqa: E402

SAVES = triplea_fixtures() / "saves"
START = SAVES / "revisted_start_of_game.tsvg"
LAND_COMBAT = SAVES / "revised_during_land_to_land_combat.tsvg"
GLOBAL = SAVES / "wwii_global_2nd_edition_during_g1_politics.tsvg"
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not SAVES.is_dir(), reason="TripleA fixtures not found")]


def _types(e, territory):
    return [e.r.name_of(e.r.get(u, "type")) for u in e.units(territory)]


def _keep(kinds):
    def keep(e):
        return lambda unit: e.r.name_of(e.r.get(unit, "type")) in kinds
    return keep


def _started(e):
    return e.primitive(e.states["MoveExtendedDelegateState"], "needToInitialize", False)


def _lra(e):
    return e.primitive(e.r.get(e.player("Russians"), "attachments")["techAttachment"],
                       "longRangeAir", True)


def _turkey_passable(e):
    return e.primitive(e.r.get(e.territory("Turkey"), "attachments")["territoryAttachment"],
                       "isImpassable", False)


EDITS = {  # name: (save, edits) -- each edit takes save_edits.Edit, gives the new stream
    "germans at their technology": (START, [lambda e: e.step("germanTech")]),
    "british at their purchase": (START, [lambda e: e.step("britishPurchase")]),
    "japanese at their combat move": (START, [lambda e: e.step("japaneseCombatMove")]),
    "americans at their technology": (START, [lambda e: e.step("americanTech")]),
    "russians during their combat move": (START, [lambda e: e.step("russianCombatMove"),
                                                  _started]),
    "west russia's attackers committed": (LAND_COMBAT, [lambda e: e.step("russianCombatMove"),
                                                         _started]),
    "the germans' next step in the battle save": (LAND_COMBAT,
                                                  [lambda e: e.step("germanPurchase")]),
    "ukraine emptied": (START, [lambda e: e.move_units("Ukraine S.S.R.", "Germany")]),
    "a fighter moved": (START, [lambda e: e.move_units(
        "Karelia S.S.R.", "Archangel", keep=lambda u: e.r.name_of(e.r.get(u, "type"))
        != "fighter")]),
    "caucasus conquered this turn": (START, [lambda e: e.add_to_set("conquered", "Caucasus")]),
    "caucasus blitzed this turn": (START, [lambda e: e.add_to_set("conquered", "Caucasus"),
                                           lambda e: e.add_to_set("blitzed", "Caucasus")]),
    "a factory alone (WW2V2: no blitz through it)": (START, [
        lambda e: e.move_units("Caucasus", "Russia", keep=_keep(("factory", "aaGun"))(e)),
        lambda e: e.step("germanCombatMove")]),
    "a factory alone, WW2V2 off": (START, [
        lambda e: e.move_units("Caucasus", "Russia", keep=_keep(("factory", "aaGun"))(e)),
        lambda e: e.step("germanCombatMove"),
        lambda e: e.rename_property("WW2V2", "WW2V2 (removed)")]),
    "turkey passable, neutrals dear": (START, [_turkey_passable]),
    "turkey passable and cheap": (START, [_turkey_passable,
                                          lambda e: e.set_property("neutralCharge", 3)]),
    "neutrals passable": (START, [_turkey_passable,
                                  lambda e: e.set_property("neutralCharge", 3),
                                  lambda e: e.set_property("Neutrals Are Impassable", False)]),
    "neutrals passable and blitzable": (START, [
        _turkey_passable, lambda e: e.set_property("neutralCharge", 3),
        lambda e: e.set_property("Neutrals Are Impassable", False),
        lambda e: e.rename_property("Neutrals Are Blitzable", "Neutrals Are Blitzable (x)"),
        lambda e: e.rename_property("Produce fighters on carriers", "Neutrals Are Blitzable")]),
    "long range aircraft": (START, [_lra]),
    "a mechanized infantry's escort": (GLOBAL, [
        lambda e: e.move_units("Greater Southern Germany", "Western Germany",
                               keep=lambda u: e.r.name_of(e.r.get(u, "type")) != "armour"),
        lambda e: e.give_units("France", "Italians"),
        lambda e: e.give_units("Holland Belgium", "Italians"),
        lambda e: e.reference_field(e.territory("Holland Belgium"), "owner",
                                    e.player("French"))]),
    "long range aircraft, the battle save at the combat move": (
        LAND_COMBAT, [lambda e: e.step("russianCombatMove")]),
}


@pytest.fixture(scope="module")
def edited(tmp_path_factory):
    folder = tmp_path_factory.mktemp("edited")
    return {name: written(folder, chain(save, *edits), f"{i}.tsvg")
            for i, (name, (save, edits)) in enumerate(EDITS.items())}


def _both(path, player=None, **options):
    """(reference, package) answers, each (mapping, refused keys) or ("refused", message)."""
    try:
        ref = reach_reference(path, player, **options)
    except Refused as exc:
        ref = ("refused", str(exc))
    try:
        found = reach(path, player, **options)
        unsupported = sorted({k for k, _ in found.unsupported() if k not in found.mapping()})
        mine = (found.mapping(), unsupported)
    except BattleInputError as exc:
        mine = ("refused", str(exc))
    return ref, (mine[0], sorted(mine[1])) if mine[0] != "refused" else mine


def _assert_equal(ref, mine):
    if ref[0] == "refused" or mine[0] == "refused":
        assert ref[0] == mine[0] == "refused", (ref, mine)
        return
    assert sorted(ref[1]) == mine[1]
    assert ref[0].keys() == mine[0].keys()
    for key in ref[0]:
        assert ref[0][key] == mine[0][key], key


@pytest.mark.parametrize("save", [START, GLOBAL, LAND_COMBAT], ids=lambda p: p.stem)
def test_every_shared_save(save):
    ref, mine = _both(save)
    _assert_equal(ref, mine)
    if save == LAND_COMBAT:
        assert "russianBattle" in ref[1] and "russianBattle" in mine[1]
    else:
        assert sum(len(t) for t in mine[0].values()) > 30  # a real answer, not an empty one


@pytest.mark.parametrize("name", list(EDITS))
def test_edited_boards(edited, name):
    ref, mine = _both(edited[name])
    _assert_equal(ref, mine)
    assert ref[0] != "refused"


def test_the_edits_change_the_answer(edited):
    """Each board edited from the opening answers otherwise than the opening (the edit does
    something), but Turkey made passable while "Neutrals Are Impassable" stays on."""
    plain = reach(START).mapping()
    for name in ("ukraine emptied", "a fighter moved", "caucasus conquered this turn",
                 "caucasus blitzed this turn", "neutrals passable",
                 "neutrals passable and blitzable", "long range aircraft"):
        assert reach(edited[name]).mapping() != plain, name
    for name in ("turkey passable, neutrals dear", "turkey passable and cheap"):
        assert reach(edited[name]).mapping() == plain, name  # "Neutrals Are Impassable"
    for name in ("a factory alone (WW2V2: no blitz through it)", "a factory alone, WW2V2 off"):
        assert reach(edited[name]).player == "Germans"
    walled = reach(edited["a factory alone (WW2V2: no blitz through it)"]).mapping()
    open_ = reach(edited["a factory alone, WW2V2 off"]).mapping()
    assert "Kazakh S.S.R." not in walled["Ukraine S.S.R. / armour x1"]
    assert open_["Ukraine S.S.R. / armour x1"]["Kazakh S.S.R."] == 2


@pytest.mark.parametrize(("save", "player", "owners"), [
    (START, "Germans", None), (START, "British", None), (START, "Japanese", None),
    (START, "Germans", {"Belorussia": "Russians", "Ukraine S.S.R.": "Russians"}),
    (GLOBAL, "Italians", None), (GLOBAL, "British", {"France": "Germans"}),
])
def test_the_next_turn(save, player, owners):
    ref, mine = _both(save, player, as_next_turn=True, owners=owners)
    _assert_equal(ref, mine)
