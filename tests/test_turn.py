"""The turn, part 1 (issue 41): a save's movement read, and every legal attack of a player in
its combat move (`battlecalc turn SAVE --reach`, battlecalc.turn_reach, /api/turn/reach).

The expected values are worked out by hand from the save's map (its connections, owners and
units, asserted in the test so that the reason stands beside the number) and TripleA's rules
(docs/turn.md); tests/references/test_turn_reference.py holds the package to an independent
reference on every shared save and on boards edited from them.  Boards are edited from the
real saves' object streams (tests/save_edits.py), or, for a map feature no shared save has,
from the real save's reading (dataclasses.replace).
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from save_edits import chain, written
from test_triplea import GLOBAL, LAND_COMBAT, SAVES, START, javaobj  # noqa: F401

import battlecalc
from battlecalc.errors import BattleInputError
from battlecalc.turn import check_moves, load, reach, turn_reach

pytestmark = pytest.mark.skipif(not SAVES.is_dir(), reason="TripleA fixtures not found")


@pytest.fixture(scope="module")
def opening():
    """The Revised start, read once (Russians to move, at their technology step)."""
    return load(START)


@pytest.fixture(scope="module")
def opening_reach(opening):
    return reach(opening)


@pytest.fixture(scope="module")
def germans():
    """Global 1940, the Germans at their politics, read once."""
    return load(GLOBAL)


def _class(r, key):
    (found,) = [c for c in r.classes if c.unit_class.key == key]
    return found


# ------------------------------------------------------------------ the Revised opening


def test_revised_opening_by_hand(opening, opening_reach):
    """Russians, round 1, before their combat move (russianTech)."""
    board = opening_reach.board
    n = opening.movement.neighbors
    assert board.moment == "before combat move" and board.player == "Russians"
    # Russia's fighter (movement 4) attacks Ukraine with 3: out 2 (Russia, Caucasus, Ukraine:
    # Ukraine is no neighbour of Russia) and back 1 to Caucasus, Russian since the start
    assert "Ukraine S.S.R." not in n["Russia"] and "Caucasus" in n["Russia"]
    assert "Ukraine S.S.R." in n["Caucasus"] and board.owner("Caucasus") == "Russians"
    fighter = _class(opening_reach, "Russia / fighter x1")
    ukraine = fighter.targets["Ukraine S.S.R."]
    assert (ukraine.movement, ukraine.route, ukraine.landing, ukraine.back) == (
        3, ("Russia", "Caucasus", "Ukraine S.S.R."), "Caucasus", 1)
    # West Russia (German, beside Russia): out 1, back 1
    assert board.owner("West Russia") == "Germans" and fighter.targets["West Russia"].movement \
        == 2
    # the infantry in Russia (movement 1) reaches West Russia only: Ukraine is two away
    assert opening_reach.mapping()["Russia / infantry x3"] == {"West Russia": 1}
    # Turkey is impassable (its attachment): no class may enter it, though Caucasus's armour
    # stands beside it and it is owned by the null player, at war with everyone
    assert "Turkey" in n["Caucasus"] and board.impassable("Turkey")
    assert board.at_war(board.owner("Turkey"))
    assert all("Turkey" not in targets for targets in opening_reach.mapping().values())
    # the AA guns never move in combat (canNotMoveDuringCombatMove); factories cannot move
    for key in ("Russia / aaGun x1", "Caucasus / aaGun x1", "Russia / factory x1"):
        assert opening_reach.mapping()[key] == {}
    # the armour in Caucasus (movement 2) may not blitz through Ukraine (German units there)
    assert opening_reach.mapping()["Caucasus / armour x1"] == {"Ukraine S.S.R.": 1,
                                                               "West Russia": 1}
    # the submarine is a sea unit: named, not modelled
    assert dict(opening_reach.unsupported())["4 Sea Zone / submarine x1"] == \
        "sea units are not modelled in this version"


@pytest.mark.slow
def test_an_emptied_territory_is_blitzed_through(tmp_path):
    """Ukraine's German units moved to Germany: Caucasus's armour blitzes through the empty
    Ukraine (2 steps) to Balkans, Belorussia and Eastern Europe; its infantry (no blitz) still
    stops at Ukraine.  Before the edit they stopped at Ukraine (the test above)."""
    path = written(tmp_path, chain(START, lambda e: e.move_units("Ukraine S.S.R.", "Germany")))
    r = turn_reach(path)
    assert r.mapping()["Caucasus / armour x1"] == {
        "Balkans": 2, "Belorussia": 2, "Eastern Europe": 2, "Ukraine S.S.R.": 1,
        "West Russia": 1}
    assert r.mapping()["Caucasus / infantry x3"] == {"Ukraine S.S.R.": 1, "West Russia": 1}


@pytest.mark.slow
def test_a_territory_conquered_this_turn_is_no_landing(tmp_path):
    """Caucasus in this turn's conquered list (BattleTracker.conquered): aircraft may not land
    there (whoever held it at the start of the turn: the save does not say; TripleA's rule is
    the list), so Russia's fighter flies back from Ukraine over Caucasus to Russia, or over
    West Russia to Archangel: 2 out + 2 back, where it was 2 + 1."""
    path = written(tmp_path, chain(START, lambda e: e.add_to_set("conquered", "Caucasus")))
    fighter = _class(turn_reach(path), "Russia / fighter x1")
    ukraine = fighter.targets["Ukraine S.S.R."]
    assert (ukraine.movement, ukraine.back) == (4, 2)
    assert ukraine.landing in ("Russia", "Archangel")


@pytest.mark.slow
def test_long_range_aircraft(tmp_path):
    """The Russians given Long Range Aircraft (TechAttachment.longRangeAir): the advance's
    techAbilityAttachment adds 2 to fighters (4 + 2 = 6).  Russia's fighter then reaches
    Germany: out 4 (Russia, Archangel, Karelia S.S.R., 5 Sea Zone, Germany: the shortest way,
    Germany's neighbours being 5 Sea Zone and German land), back 2 to Karelia S.S.R. over 5 Sea
    Zone; with its 4 it could not."""
    def lra(e):
        tech = e.r.get(e.player("Russians"), "attachments")["techAttachment"]
        return e.primitive(tech, "longRangeAir", True)

    r = turn_reach(written(tmp_path, chain(START, lra)))
    fighter = _class(r, "Russia / fighter x1")
    assert fighter.unit_class.movement_left == 6
    germany = fighter.targets["Germany"]
    assert (germany.movement, germany.route, germany.landing, germany.back) == (
        6, ("Russia", "Archangel", "Karelia S.S.R.", "5 Sea Zone", "Germany"),
        "Karelia S.S.R.", 2)
    assert "Germany" not in _class(turn_reach(START), "Russia / fighter x1").targets


@pytest.mark.slow
def test_a_neutral_opened(tmp_path):
    """Turkey (the null player's, at war with everyone) made passable (its isImpassable off):
    still no one may enter it while "Neutrals Are Impassable" is on ("Cannot violate
    neutrality", TripleA 2.x), nor while the neutral charge (9,999,999 PUs in the save) is more
    than the Russians' 24; with the switch off and a charge of 3, Caucasus's units attack it
    (1 step)."""
    def passable(e):
        return e.primitive(e.r.get(e.territory("Turkey"), "attachments")["territoryAttachment"],
                           "isImpassable", False)

    def cheap(e):
        return e.set_property("neutralCharge", 3)

    def allowed(e):
        return e.set_property("Neutrals Are Impassable", False)

    for i, edits in enumerate([(passable,), (passable, cheap), (passable, allowed)]):
        r = turn_reach(written(tmp_path, chain(START, *edits), f"{i}.tsvg"))
        assert all("Turkey" not in t for t in r.mapping().values()), i
    r = turn_reach(written(tmp_path, chain(START, passable, cheap, allowed), "open.tsvg"))
    assert r.mapping()["Caucasus / infantry x3"]["Turkey"] == 1
    assert r.mapping()["Caucasus / armour x1"]["Turkey"] == 1


# ------------------------------------------------------------------ moments of the turn


def test_the_save_in_battle_is_refused_naming_the_step(invoke):
    result = invoke("turn", str(LAND_COMBAT), "--reach")
    assert result.exit_code == 2 and result.stdout == ""
    assert "the save is at step russianBattle (battle of the Russians)" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_another_players_step_before_its_combat_move_is_refused(opening):
    """At russianTech the Germans' combat move comes after the Russians' own."""
    with pytest.raises(BattleInputError, match="step russianCombatMove .* comes before the "
                       "combat move of the Germans"):
        reach(opening, "Germans")


@pytest.mark.slow
def test_a_combat_move_under_way_keeps_its_committed_attackers(tmp_path):
    """The West Russia save taken back to the Russians' combat move, its move delegate started
    (needToInitialize off): the units that moved into West Russia's battle stay committed to it
    (no target); the others keep the movement they have left (the fighter of Karelia: 4 + 2 of
    the Russians' long range aircraft)."""
    def combat(e):
        return e.step("russianCombatMove")

    def started(e):
        return e.primitive(e.states["MoveExtendedDelegateState"], "needToInitialize", False)

    r = turn_reach(written(tmp_path, chain(LAND_COMBAT, combat, started)))
    assert r.board.moment == "combat move"
    west = [c for c in r.classes if c.unit_class.territory == "West Russia"]
    assert {c.unit_class.unit_type for c in west} == {"armour", "artillery", "fighter",
                                                      "infantry"}
    assert all(c.unit_class.committed and not c.targets for c in west)
    assert _class(r, "Karelia S.S.R. / fighter x1").unit_class.movement_left == 6


def test_a_player_not_in_the_game(invoke):
    result = invoke("turn", str(START), "--reach", "--player", "Martians")
    assert result.exit_code == 2
    assert result.stderr.strip() == ("Error: player 'Martians' is not in this game (players: "
                                     "Russians, Germans, British, Japanese, Americans)")


# ------------------------------------------------------------------ features not modelled


def _with_type(save, name, **changes):
    movement = save.movement
    types = {**movement.unit_types,
             name: dataclasses.replace(movement.unit_types[name], **changes)}
    return dataclasses.replace(movement, unit_types=types)


def test_fuel_is_refused(opening):
    """The real opening with "Use Fuel Cost" on and fighters costing fuel (the Civil War's
    rule): one line, not a guess."""
    movement = _with_type(opening, "fighter", fuel_cost={"Fuel": 1})
    movement = dataclasses.replace(movement, properties={**movement.properties,
                                                         "Use Fuel Cost": True})
    with pytest.raises(BattleInputError, match=r"charges fuel for movement \(Use Fuel Cost; "
                       r"fighter: 1 Fuel\): not modelled"):
        reach(movement)
    # without the switch the fuel cost is not charged (MoveValidator.validateFuel)
    assert reach(_with_type(opening, "fighter", fuel_cost={"Fuel": 1})).mapping() == \
        reach(opening).mapping()


def test_territory_effects_on_movement_are_refused(opening):
    movement = opening.movement
    places = dict(movement.territories)
    places["Ukraine S.S.R."] = dataclasses.replace(places["Ukraine S.S.R."], effects=("river",))
    movement = dataclasses.replace(movement, territories=places,
                                   territory_effects={"river": ("movementCostModifier",)})
    with pytest.raises(BattleInputError, match="territory effect 'river' .*movementCostModifier"
                       ".*: territory effects on movement are not modelled"):
        reach(movement)


def test_stacking_limits_are_refused(opening):
    with pytest.raises(BattleInputError, match="stacking limits on movement .*armour"):
        reach(_with_type(opening, "armour", attacking_limit=3))
    # an AA gun's limit (Revised's: Integer.MAX_VALUE) is no limit; and it never moves in combat
    assert opening.movement.unit_types["aaGun"].movement_limit == 2**31 - 1


def test_a_malformed_movement_field_is_refused_with_its_path(tmp_path, invoke):
    """A unit's alreadyMoved (a BigDecimal) made a text in the stream: one line, the path."""
    def broken(e):
        unit = e.units("Russia")[3]
        start, end = e.stream.field_bytes(unit, "alreadyMoved")
        assert e.stream.data[start] == 0x71  # a reference to the shared zero
        from java_stream import string

        return e.stream.edit(start, end, string("two"), 1)

    path = written(tmp_path, chain(START, broken))
    result = invoke("turn", str(path), "--reach")
    assert result.exit_code == 2
    assert "('Russia').unitCollection.units[3].alreadyMoved: expected a BigDecimal, found the " \
           "text 'two'" in result.stderr


def test_the_read_budget_holds(tmp_path):
    """The issue-29 save (Global 1940 and 20,000,000 empty strings after it) is refused by
    turn --reach as by game: one line, quickly, in bounded memory."""
    import gzip

    from limited import assert_refused, cli_limited

    path = tmp_path / "hostile.tsvg"
    path.write_bytes(gzip.compress(gzip.decompress(GLOBAL.read_bytes())
                                   + b"\x74\x00\x00" * 20_000_000))
    done = cli_limited("turn", str(path), "--reach")
    assert_refused(done, "more than 1,000 contents at the top of its object stream")
    assert done.seconds < 10 and done.peak_mb < 300, (done.seconds, done.peak_mb)


# ------------------------------------------------------------------ Global 1940, the Germans


@pytest.mark.slow
def test_global_germans_land_and_air_attacks(germans):
    """At germansPolitics, planned as the combat move will start: the airfield of Western
    Germany gives its aircraft 1 (giveBonusMovement), so its fighters (4) have 5 and reach the
    United Kingdom: out 3 (112 and 110 Sea Zones) and back 2 to Holland Belgium; the fighter of
    Holland Belgium, 4 with no airfield, also reaches it (out 2, back 2) and the one of Norway
    does not.  France, Normandy Bordeaux and Southern France are French (at war): the
    infantry of Holland Belgium reaches France and Normandy Bordeaux (beside it), the armour of
    Greater Southern Germany reaches France and Southern France through Northern Italy
    (Italian: an ally's, friendly)."""
    r = reach(germans)
    board, m = r.board, r.mapping()
    assert board.player == "Germans" and board.moment == "before combat move"
    assert board.owner("Northern Italy") == "Italians" and board.allied("Italians")
    uk = _class(r, "Western Germany / fighter x2").targets["United Kingdom"]
    assert _class(r, "Western Germany / fighter x2").unit_class.movement_left == 5
    assert (uk.movement, uk.route, uk.landing, uk.back) == (
        5, ("Western Germany", "112 Sea Zone", "110 Sea Zone", "United Kingdom"),
        "Holland Belgium", 2)
    assert m["Holland Belgium / fighter x1"]["United Kingdom"] == 4
    assert "United Kingdom" not in m["Norway / fighter x1"]
    assert m["Holland Belgium / infantry x4"] == {"France": 1, "Normandy Bordeaux": 1}
    assert m["Greater Southern Germany / armour x3"]["France"] == 2
    assert m["Greater Southern Germany / armour x3"]["Southern France"] == 2
    assert _class(r, "Greater Southern Germany / armour x3").targets["France"].route == (
        "Greater Southern Germany", "Northern Italy", "France")
    # Poland's infantry: no neighbour at war with the Germans (the Russians are not, yet)
    assert m["Poland / infantry x3"] == {} and not board.at_war("Russians")


@pytest.mark.slow
def test_every_german_class_is_reached_has_no_target_or_is_named(germans):
    r = reach(germans)
    mine = [u for t in r.board.territories.values() for u in t.units if u.owner == "Germans"]
    assert sum(c.unit_class.count for c in r.classes) == len(mine)
    keys = {c.unit_class.key for c in r.classes}
    assert set(r.mapping()) | {k for k, _ in r.unsupported()} == keys
    for c in r.classes:
        if c.unsupported:
            assert c.unit_class.kind == "sea" and "not modelled" in c.unsupported
        else:
            assert c.unit_class.kind in ("land", "air")
    text = r.table()
    for c in r.classes:
        if not c.targets and not c.unsupported:
            line = next(x for x in text.splitlines() if x.strip().startswith(c.unit_class.key))
            assert line.endswith(("no target", "no movement left", "committed to its battle"))


# ------------------------------------------------------------------ the command, API, web


def test_the_json_is_the_api_s_mapping_and_the_notes_go_to_stderr(invoke, opening_reach):
    result = invoke("turn", str(START), "--reach", "--format", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == opening_reach.mapping()
    assert "Note: unsupported: 4 Sea Zone / submarine x1: sea units are not modelled" in \
        result.stderr
    text = invoke("turn", str(START), "--reach")
    assert text.exit_code == 0
    assert "  Russia / fighter x1 (4 left): 5 Sea Zone 4, Belorussia 3, Eastern Europe 4, " \
           "Norway 4, Ukraine S.S.R. 3, West Russia 2" in text.stdout


def test_the_api_is_exported():
    assert battlecalc.turn_reach is turn_reach and "turn_reach" in battlecalc.__all__
    with pytest.raises(BattleInputError, match="player: expected a player's name"):
        turn_reach(START, player=3)


# ------------------------------------------------------------------ moves checked


def test_moves_are_checked_together(opening_reach):
    r = opening_reach
    legal = [{"unit": "armour", "count": 2, "from": "Russia", "to": "Ukraine S.S.R."},
             {"unit": "fighter", "count": 1, "from": "Russia", "to": "Ukraine S.S.R."},
             {"unit": "infantry", "count": 3, "from": "Russia", "to": "West Russia"}]
    assert check_moves(r, legal).legal
    # three armour where two stand; infantry to Ukraine (two away); an AA gun; a sea unit
    problems = check_moves(r, [
        {"unit": "armour", "count": 3, "from": "Russia", "to": "West Russia"},
        {"unit": "infantry", "count": 1, "from": "Russia", "to": "Ukraine S.S.R."},
        {"unit": "aaGun", "count": 1, "from": "Russia", "to": "West Russia"},
        {"unit": "submarine", "count": 1, "from": "4 Sea Zone", "to": "5 Sea Zone"},
    ]).problems
    assert problems[0].startswith("moves[0] (3 armour Russia -> West Russia): 1 more than "
                                  "the 2 armour there")
    assert problems[1].startswith("moves[1] (1 infantry Russia -> Ukraine S.S.R.): not a "
                                  "territory the infantry there may attack")
    assert problems[2].startswith("moves[2] (1 aaGun Russia -> West Russia): not a territory")
    assert problems[3] == ("moves[3] (1 submarine 4 Sea Zone -> 5 Sea Zone): unsupported: sea "
                           "units are not modelled in this version")
    # the same units twice: two armour to Ukraine and one to West Russia
    twice = check_moves(r, [
        {"unit": "armour", "count": 2, "from": "Russia", "to": "Ukraine S.S.R."},
        {"unit": "armour", "count": 1, "from": "Russia", "to": "West Russia"}])
    assert not twice.legal and "1 more than the 2 armour" in twice.problems[0]
    with pytest.raises(BattleInputError, match=r"moves\[0\]\.count: expected a whole number"):
        check_moves(r, [{"unit": "armour", "count": 0, "from": "Russia", "to": "Germany"}])
    with pytest.raises(BattleInputError, match=r"moves\[0\]: expected an object with the keys"):
        check_moves(r, [{"unit": "armour", "count": 1, "from": "Russia"}])


def test_a_move_is_served_by_the_class_that_reaches_it(opening_reach):
    """Karelia's fighter reaches Germany with 4 (out 2 over 5 Sea Zone, back 2 to Karelia);
    Russia's, two farther, does not: the same move from Russia is illegal."""
    r = opening_reach
    target = _class(r, "Karelia S.S.R. / fighter x1").targets["Germany"]
    assert (target.movement, target.route) == (4, ("Karelia S.S.R.", "5 Sea Zone", "Germany"))
    check = check_moves(r, [{"unit": "fighter", "count": 1, "from": "Karelia S.S.R.",
                             "to": "Germany"}])
    assert check.legal and check.supplied == ({"Karelia S.S.R. / fighter x1": 1},)
    assert not check_moves(r, [{"unit": "fighter", "count": 1, "from": "Russia",
                                "to": "Germany"}]).legal


def _escort_board():
    """Global 1940 edited: Greater Southern Germany's armour moved to Western Germany (beside
    its mechanized infantry), the units of France and Holland Belgium given to the Italians
    (the Germans' ally) and Holland Belgium to the French: both are then enemy land with no
    enemy unit in it, which a blitz may cross, and Normandy Bordeaux is two steps from Western
    Germany through one of them only."""
    return chain(GLOBAL,
                 lambda e: e.move_units("Greater Southern Germany", "Western Germany",
                                        keep=lambda u: e.r.name_of(e.r.get(u, "type"))
                                        != "armour"),
                 lambda e: e.give_units("France", "Italians"),
                 lambda e: e.give_units("Holland Belgium", "Italians"),
                 lambda e: e.reference_field(e.territory("Holland Belgium"), "owner",
                                             e.player("French")))


@pytest.mark.slow
def test_a_mechanized_infantry_blitzes_with_an_armour_each(tmp_path):
    """The mechanized infantry receives canBlitz when with an armour (receivesAbilityWhenWith
    canBlitz:armour): it reaches Normandy Bordeaux (2, through France) only with one armour
    each moving along the same route; Southern France it reaches by itself (through Northern
    Italy, the Italians')."""
    r = turn_reach(written(tmp_path, _escort_board()))
    mech = _class(r, "Western Germany / mech_infantry x4")
    assert mech.targets["Normandy Bordeaux"].escort == ("armour",)
    assert mech.targets["Normandy Bordeaux"].route == ("Western Germany", "France",
                                                       "Normandy Bordeaux")
    assert mech.targets["Southern France"].escort == ()
    move = {"unit": "mech_infantry", "count": 2, "from": "Western Germany",
            "to": "Normandy Bordeaux"}
    armour = {"unit": "armour", "count": 1, "from": "Western Germany",
              "to": "Normandy Bordeaux"}
    assert check_moves(r, [move]).problems == (
        "moves[0] (2 mech_infantry Western Germany -> Normandy Bordeaux): 2 of the units moving "
        "there blitz only with one armour each moving along (receivesAbilityWhenWith), and 0 "
        "do",)
    assert not check_moves(r, [move, armour]).legal
    assert check_moves(r, [move, {**armour, "count": 2}]).legal


# ------------------------------------------------------------------ the enemy's next turn


def test_the_next_turn_of_another_player(opening):
    """The Germans' reach as at the start of their next turn on the board of the save: the
    same as planning from the save taken to the Germans' technology step (nothing conquered in
    either, every German unit at full movement)."""
    nxt = reach(opening, "Germans", as_next_turn=True)
    assert nxt.board.moment == "next turn"
    assert "Ukraine S.S.R. / armour x1" in nxt.mapping()
    # a territory the plan takes becomes the enemy's target: Belorussia (German, beside
    # Eastern Europe) given to the Russians is attacked from Eastern Europe: its armour and
    # infantry 1 step, its fighter out 1 and back 1; the German infantry standing in it, now
    # in enemy territory, cannot blitz out of it (validateCombat's contested start)
    given = reach(opening, "Germans", as_next_turn=True, owners={"Belorussia": "Russians"})
    before, after = nxt.mapping(), given.mapping()
    assert "Belorussia" not in before["Eastern Europe / armour x1"]
    assert after["Eastern Europe / armour x1"]["Belorussia"] == 1
    assert after["Eastern Europe / infantry x2"]["Belorussia"] == 1
    assert after["Eastern Europe / fighter x1"]["Belorussia"] == 2
    assert before["Belorussia / infantry x3"] == {"Karelia S.S.R.": 1}
    assert after["Belorussia / infantry x3"] == {}
    with pytest.raises(BattleInputError, match="owners: no territory 'Atlantis'"):
        reach(opening, "Germans", as_next_turn=True, owners={"Atlantis": "Germans"})


@pytest.mark.slow
def test_the_next_turn_equals_planning_from_that_turn(tmp_path, opening):
    path = written(tmp_path, chain(START, lambda e: e.step("germanTech")))
    assert reach(opening, "Germans", as_next_turn=True).mapping() == turn_reach(path).mapping()


# ------------------------------------------------------------------ /api/turn/reach


def test_the_web_api_answers_for_an_uploaded_save():
    pytest.importorskip("uvicorn")
    from webserver import request, running_server

    with running_server() as base:
        status, _, body = request(base, "POST", "/api/turn/reach", START.read_bytes())
        assert status == 200
        answer = json.loads(body)
        assert answer["reach"] == turn_reach(START).mapping()
        assert answer["player"] == "Russians" and answer["step"] == "russianTech"
        fighter = next(c for c in answer["classes"] if c["key"] == "Russia / fighter x1")
        assert fighter["targets"]["Ukraine S.S.R."] == {
            "movement": 3, "route": ["Russia", "Caucasus", "Ukraine S.S.R."],
            "landing": "Caucasus", "back": 1, "escort": []}
        status, _, body = request(base, "POST", "/api/turn/reach", LAND_COMBAT.read_bytes())
        assert status == 400 and "step russianBattle" in json.loads(body)["error"]
        status, _, body = request(base, "POST", "/api/turn/reach?player=Germans&x=1",
                                  START.read_bytes())
        assert status == 400 and "takes no parameter x" in json.loads(body)["error"]
        status, _, body = request(base, "GET", "/api/turn/reach")
        assert status == 404 and "watches no folder" in json.loads(body)["error"]
        status, _, _ = request(base, "POST", "/api/turn/reach", START.read_bytes(),
                               client=False)
        assert status == 403  # a page of another origin may not ask


def test_the_web_api_answers_for_the_watched_save(tmp_path):
    pytest.importorskip("uvicorn")
    import shutil
    import time

    from webserver import get_json, request, running_server

    with running_server(watch=tmp_path, watch_interval=0.05) as base:
        status, _, body = request(base, "GET", "/api/turn/reach")
        assert status == 409 and "no save of the watched folder" in json.loads(body)["error"]
        shutil.copy(START, tmp_path / "autosave.tsvg")
        deadline = time.monotonic() + 20
        while not (get_json(base, "/api/board")[1].get("board") or {}).get("summary"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        status, _, body = request(base, "GET", "/api/turn/reach?player=Russians")
        assert status == 200 and json.loads(body)["reach"] == turn_reach(START).mapping()
