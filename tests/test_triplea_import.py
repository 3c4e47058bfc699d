"""TripleA map files as editions: `battlecalc edition import GAME.xml`.

Each of the four shared maps, imported, must give exactly the odds of the shipped edition it
matches (to 1e-12, exact solver) on a battery covering every unit of the edition, land, sea
and amphibious; the unit values the files state are compared with the shipped tables one by
one, so that a difference would be named by unit and field.  Maps are GPL-3 data read from
``shared/fixtures/triplea/maps`` and skipped when absent.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
from helpers import assert_usage_error, invoke
from test_triplea import FIXTURES, GLOBAL, LAND_COMBAT, START
from tiers import sampled

from battlecalc import simulate
from battlecalc.errors import BattleInputError
from battlecalc.rules import load_rules, load_rules_file
from battlecalc.triplea import read_game
from battlecalc.triplea.mapfile import import_edition

MAPS = FIXTURES / "maps"
PAIRS = [("WW2v5_1942_2nd.xml", "1942-2e"), ("ww2global40_2nd_edition.xml", "1940-2e"),
         ("classic.xml", "classic"), ("WW2v3-1941.xml", "aa50")]
# a save's game data carries the unit attachments of its map: the same import
# (the Global 1940 save in the slow tier: its reading costs about a second)
SAVE_PAIRS = [(START, "revised"), pytest.param((GLOBAL, "1940-2e"), marks=pytest.mark.slow(
    reason="reads the Global 1940 save: about a second"))]
pytestmark = pytest.mark.skipif(not MAPS.is_dir(), reason=f"TripleA maps not found at {MAPS}")
KEYS = ("attacker_win", "defender_win", "draw", "stalemate", "takes_territory", "mean_rounds",
        "attacker_ipc_loss", "defender_ipc_loss")


# (every other map in the quick tier, all four in the slow)
@pytest.fixture(scope="module", params=[*sampled([((MAPS / f, e),) for f, e in PAIRS], 2),
                                        *SAVE_PAIRS],
                ids=[p[1] for p in PAIRS] + ["revised-save", "1940-2e-save"])
def imported(request, tmp_path_factory):
    path, edition = request.param
    result = import_edition(path)
    assert result.base == edition and result.warnings == []
    out = tmp_path_factory.mktemp("editions") / f"{edition}.toml"
    out.write_text(result.text)
    assert result.text.count("cost = ") == result.text.count("[units.")  # every cost read
    return load_rules_file(str(out)), load_rules(edition)


# the units the four maps and the two saves name otherwise than battlecalc (read in the XML:
# unitAttachment attachTo="armour", "aaGun"; every other unit is named alike)
TRIPLEA_IDS = {"tank": "armour", "aa": "aaGun"}


def test_unit_values_match_the_shipped_edition(imported):
    mine, shipped = imported
    assert list(mine.units) == [TRIPLEA_IDS.get(n, n) for n in shipped.units]
    for name, unit in shipped.units.items():
        ours = mine.units[TRIPLEA_IDS.get(name, name)]
        for field_name in unit.__dataclass_fields__:
            if field_name not in ("aliases", "name"):
                assert getattr(ours, field_name) == getattr(unit, field_name), (
                    f"{shipped.id}.{name}.{field_name}")
        # the shipped name and every shipped alias type the unit
        assert all(mine.aliases[a] == ours.name for a in (name, *unit.aliases))
    assert mine.supports == tuple(
        replace(s, giver=TRIPLEA_IDS.get(s.giver, s.giver),
                targets=tuple(TRIPLEA_IDS.get(t, t) for t in s.targets))
        for s in shipped.supports)
    assert set(mine.techs) == set(shipped.techs)
    for tech in shipped.techs:  # each technology changes the same units the same way
        assert dict(mine.techs[tech].changes) == {
            TRIPLEA_IDS.get(u, u): c for u, c in shipped.techs[tech].changes.items()}
        assert dict(mine.techs[tech].support_changes) == {
            TRIPLEA_IDS.get(g, g): {k: tuple(TRIPLEA_IDS.get(t, t) for t in v) if k == "targets"
                                    else v for k, v in c.items()}
            for g, c in shipped.techs[tech].support_changes.items()}


def _battery(rules):
    units = rules.units
    land = [u for u, d in units.items() if d.domain == "land" and d.can_attack]
    air = [u for u, d in units.items() if d.domain == "air"]
    sea = [u for u, d in units.items() if d.domain == "sea" and not u.startswith("damaged_")]
    aa = [u for u, d in units.items() if d.aa_value]
    battles = [
        dict(attacker={**dict.fromkeys(land, 1), **dict.fromkeys(air, 1)},
             defender={"infantry": 3, **dict.fromkeys(land, 1), **dict.fromkeys(aa, 1),
                       air[0]: 1}),
        dict(attacker={**dict.fromkeys(sea, 1), **dict.fromkeys(air, 1)},
             defender={**dict.fromkeys(sea, 1), air[0]: 1}, sea=True),
        dict(attacker={"infantry": 1}, landing={"infantry": 2, "tank": 1},
             bombard={"battleship": 1}, defender={"infantry": 2, "artillery": 1}),
    ]
    for unit in land + air:  # each unit on its own
        battles.append(dict(attacker={unit: 2}, defender={"infantry": 2}))
        battles.append(dict(attacker={"infantry": 2}, defender={unit: 2}))
    for unit in sea:
        battles.append(dict(attacker={unit: 1, air[0]: 1}, defender={"submarine": 1,
                                                                    "destroyer": 1}, sea=True))
        battles.append(dict(attacker={"submarine": 2}, defender={unit: 2}, sea=True))
    return battles


def _in_tripleas_names(army: dict) -> dict:
    return {TRIPLEA_IDS.get(u, u): n for u, n in army.items()}


def test_battles_equal_the_shipped_edition(imported):
    """Each battle of the battery, its armies written in battlecalc's names and in TripleA's,
    on the imported edition: the shipped edition's odds to 1e-12; the survivors are the same
    units under the imported ids."""
    mine, shipped = imported
    battery = _battery(shipped)
    covered = set()
    for battle in battery:
        for side in ("attacker", "defender", "landing", "bombard"):
            covered |= set(battle.get(side, {}))
    assert covered >= {u for u in shipped.units if not u.startswith("damaged_")}
    for battle in battery:
        b = simulate(shipped.id, method="exact", **battle)
        tripleas = {k: _in_tripleas_names(v) if isinstance(v, dict) else v
                    for k, v in battle.items()}
        for written in (battle, tripleas):
            a = simulate(mine, method="exact", **written)
            for key in KEYS:
                assert getattr(a, key) == pytest.approx(getattr(b, key), abs=1e-12), (
                    written, key)
            assert a.attacker_survivors == pytest.approx(
                _in_tripleas_names(b.attacker_survivors), abs=1e-12)
            assert a.defender_survivors == pytest.approx(
                _in_tripleas_names(b.defender_survivors), abs=1e-12)


def test_tripleas_names_are_the_ids(tmp_path):
    """TripleA's names are the unit ids (typed in any case), battlecalc's the aliases; run's
    JSON names the units by the ids."""
    path = tmp_path / "e.toml"
    path.write_text(import_edition(MAPS / "WW2v5_1942_2nd.xml").text)
    rules = load_rules_file(str(path))
    assert {"armour", "aaGun"} <= set(rules.units) and not {"tank", "aa"} & set(rules.units)
    b = simulate("1942-2e", "3 tank 2 inf", "3 inf 1 aa", method="exact")
    for attacker, defender in (("3 armour 2 infantry", "3 inf 1 aaGun"),
                               ("3 tank 2 inf", "3 inf 1 aagun"), ("3 arm 2 inf", "3 inf 1 aa")):
        a = simulate(str(path), attacker, defender, method="exact")
        assert a.attacker_win == pytest.approx(b.attacker_win, abs=1e-12)
        assert set(a.attacker_survivors) == {"infantry", "armour"}
    result = invoke("run", "--rules-file", str(path), "-a", "2 tank", "-d", "1 aa 1 inf",
                    "--method", "exact", "--format", "json")
    assert result.exit_code == 0, result.output
    shipped = invoke("run", "--rules", "1942-2e", "-a", "2 tank", "-d", "1 aa 1 inf",
                     "--method", "exact", "--format", "json")
    data, expected = json.loads(result.stdout), json.loads(shipped.stdout)
    for side in ("attacker_survivors", "defender_survivors"):
        assert data[side] == pytest.approx(_in_tripleas_names(expected[side]), abs=1e-12)
    assert "armour" in data["attacker_survivors"]


# What `battlecalc edition import` wrote before TripleA's names became the ids: battlecalc's
# names as ids, TripleA's as aliases (abridged: two units).  Such a file still loads.
OLD_IMPORT = """base = "revised"
format = 1
id = "world-war-ii-revised"
name = "World War II Revised (TripleA map)"

[units.tank]
aliases = ["arm", "armor", "armour", "tanks", "tnk"]
attack = 3
defense = 3
cost = 5

[units.aa]
aliases = ["aa_gun", "aaa", "aagun"]
attack = 0
defense = 0
cost = 5
"""


def test_an_edition_imported_the_old_way_still_loads(tmp_path):
    path = tmp_path / "old.toml"
    path.write_text(OLD_IMPORT)
    rules = load_rules_file(str(path))
    assert list(rules.units) == list(load_rules("revised").units)
    a = simulate(str(path), "3 armour 2 inf", "3 inf 1 aagun", method="exact")
    b = simulate("revised", "3 tank 2 inf", "3 inf 1 aa", method="exact")
    assert a.attacker_win == pytest.approx(b.attacker_win, abs=1e-12)
    game = read_game(LAND_COMBAT, rules=rules, method="exact")
    (battle,) = game.battles
    assert battle.attacker == {"infantry": 6, "artillery": 1, "tank": 3, "fighter": 1}


@pytest.mark.slow
def test_game_on_an_imported_edition_names_tripleas_units(tmp_path):
    """`game` on the edition imported from the Revised save: the battles' armies in TripleA's
    names (the imported ids), the odds of the shipped edition."""
    path = tmp_path / "revised.toml"
    path.write_text(import_edition(START).text)
    mine = read_game(LAND_COMBAT, rules=load_rules_file(str(path)), method="exact")
    shipped = read_game(LAND_COMBAT, method="exact")
    (a,), (b,) = mine.battles, shipped.battles
    assert b.attacker == {"infantry": 6, "artillery": 1, "tank": 3, "fighter": 1}
    assert a.attacker == _in_tripleas_names(b.attacker)
    assert a.defender == _in_tripleas_names(b.defender)
    for key in KEYS:
        assert a.result[key] == pytest.approx(b.result[key], abs=1e-12), key
    assert a.ipc_loss == pytest.approx(b.ipc_loss, abs=1e-12)
    result = invoke("game", str(LAND_COMBAT), "--rules-file", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["battles"][0]["attacker"] == a.attacker


@pytest.mark.parametrize("text, fragment", [
    ('base = "revised"\n[units.armour]\nbase_unit = "tonk"\n', "the base has no unit 'tonk'"),
    ('base = "revised"\n[units.armour]\nbase_unit = "tank"\n[units.panzer]\n'
     'base_unit = "tank"\n', "'tank' is already the base unit of 'armour'"),
    ('base = "revised"\n[units.infantry]\nbase_unit = "tank"\n',
     "the base already has a unit 'infantry'"),
    ('base = "revised"\n[units.armour]\nbase_unit = 3\n', "expected the name of a unit"),
    ('[units.armour]\nbase_unit = "tank"\ncost = 5\nattack = 3\ndefense = 3\n'
     'domain = "land"\n', "base_unit: only in a file with `base =`"),
])
def test_base_unit_refusals(tmp_path, text, fragment):
    path = tmp_path / "e.toml"
    path.write_text('format = 1\nid = "e"\nname = "E"\n' + text)
    with pytest.raises(BattleInputError, match=re.escape(fragment)):
        load_rules_file(str(path))


def test_base_unit_renames_every_reference(tmp_path):
    """A renamed unit keeps its place, its support (given and taken), its technologies and
    a damaged form's name; the old name types it."""
    path = tmp_path / "e.toml"
    path.write_text('base = "1940-2e"\nformat = 1\nid = "e"\nname = "E"\n'
                    '[units.arty]\nbase_unit = "artillery"\n'
                    '[units.tac]\nbase_unit = "tactical_bomber"\naliases = []\n'
                    '[units.flattop]\nbase_unit = "damaged_carrier"\n')
    mine, shipped = load_rules_file(str(path)), load_rules("1940-2e")
    renames = {"artillery": "arty", "tactical_bomber": "tac", "damaged_carrier": "flattop"}
    assert list(mine.units) == [renames.get(u, u) for u in shipped.units]
    assert mine.units["carrier"].damaged_form == "flattop"
    assert ("arty", ("infantry", "mech_infantry")) in [(s.giver, s.targets)
                                                       for s in mine.supports]
    assert ("fighter", ("tac",)) in [(s.giver, s.targets) for s in mine.supports]
    assert set(mine.techs["improved_artillery"].support_changes) == {"arty"}
    assert mine.aliases["tactical_bomber"] == "tac"  # the old name, whatever aliases say
    a = simulate(mine, "2 inf 1 artillery 1 tactical_bomber 1 fighter", "4 inf",
                 attacker_tech="improved_artillery", method="exact")
    b = simulate("1940-2e", "2 inf 1 art 1 tac 1 fighter", "4 inf",
                 attacker_tech="improved_artillery", method="exact")
    assert a.attacker_win == pytest.approx(b.attacker_win, abs=1e-12)


MAP_WITH_PROBLEMS = """<?xml version="1.0"?>
<game>
  <info name="Made Up War" version="1"/>
  <property name="WW2V3" value="true" editable="false"/>
  <production>
    <productionRule name="buyInfantry">
      <cost resource="PUs" quantity="3"/><result resourceOrUnit="infantry" quantity="1"/>
    </productionRule>
  </production>
  <attachmentList>
    <attachment name="unitAttachment" attachTo="infantry"
                javaClass="games.strategy.triplea.attachments.UnitAttachment" type="unitType">
      <option name="attack" value="1"/><option name="defense" value="2"/>
    </attachment>
    <attachment name="unitAttachment" attachTo="zeppelin"
                javaClass="games.strategy.triplea.attachments.UnitAttachment" type="unitType">
      <option name="attack" value="2"/><option name="isAir" value="true"/>
    </attachment>
    <attachment name="unitAttachment" attachTo="fighter"
                javaClass="games.strategy.triplea.attachments.UnitAttachment" type="unitType">
      <option name="attack" value="3"/><option name="defense" value="4"/>
      <option name="isAir" value="true"/><option name="isKamikaze" value="true"/>
    </attachment>
  </attachmentList>
</game>
"""


def test_refusal_lists_what_cannot_be_modelled(tmp_path):
    path = tmp_path / "made_up.xml"
    path.write_text(MAP_WITH_PROBLEMS)
    with pytest.raises(BattleInputError) as info:
        import_edition(path)
    message = str(info.value)
    assert "2 features battlecalc cannot model" in message
    assert "unit zeppelin: no such unit in 1942-2e" in message
    assert "unit fighter: kamikaze units (isKamikaze)" in message
    lenient = import_edition(path, lenient=True)
    assert lenient.warnings == ["left out: unit zeppelin: no such unit in 1942-2e",
                                "left out: unit fighter: kamikaze units (isKamikaze)"]
    out = tmp_path / "made_up.toml"
    result = invoke("edition", "import", str(path), "--lenient", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "Warning: left out: unit zeppelin" in result.stderr
    rules = load_rules_file(str(out))
    assert rules.units["infantry"].cost == 3 and "zeppelin" not in rules.units


@pytest.mark.parametrize("text, fragment", [
    ("not xml at all", "XML error"),
    ("<html><body/></html>", "no <game> with <info>"),
    ('<!DOCTYPE g [<!ENTITY a "aaaa">]><game><info name="x"/></game>', "entity"),
])
def test_cli_refuses_other_files(tmp_path, text, fragment):
    path = tmp_path / "bad.xml"
    path.write_text(text)
    assert_usage_error(invoke("edition", "import", str(path)), fragment)
    refused = invoke("edition", "import", str(tmp_path / "bad.xml"), "-o",
                     str(tmp_path / "bad.toml"))
    assert refused.exit_code == 2 and not (tmp_path / "bad.toml").exists()


# ------------------------------------------------ hostile maps (issue 29 items 3 and 12)
# Built from the shared 1942 2nd Edition map by editing its XML as a fuzzer would; each is
# imported by `battlecalc edition import -o` in a child process under memory limits
# (tests/limited.py), the written edition read back here.

V5 = MAPS / "WW2v5_1942_2nd.xml"
V5_NAME = '<info name="World War II v5 1942 Second Edition" version="1.9"/>'
INFANTRY_ATTACK = ('attachTo="infantry" javaClass="games.strategy.triplea.attachments.'
                   'UnitAttachment" type="unitType">\n      <option name="movement" value="1"/>\n'
                   '      <option name="attack" value="1"/>')


def _edited(tmp_path, *edits: tuple[str, str], name="edited.xml"):
    """The 1942 2nd Edition map with each (old, new) replaced (old must be in it once)."""
    text = V5.read_text()
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text)
    return path


def _import_limited(path, out):
    from limited import cli_limited

    return cli_limited("edition", "import", str(path), "-o", str(out), memory_mb=768)


# A game name and a Low Luck value (&#10; is a newline once the XML is read) that broke out of
# the edition's strings and comments: the edition gained `die_size = 12` (3 inf v 2 inf:
# 0.5207 instead of 0.5167)
INJECTED_NAME = "Made Up War&#10;die_size = 12&#10;x = ''' #\\&quot;\x7f\u2028"
INJECTED_LOW_LUCK = "false&#10;die_size = 12&#10;name = '''"


def test_an_imported_edition_loads_back_as_written(tmp_path):
    import tomllib

    path = _edited(tmp_path, (V5_NAME, f'<info name="{INJECTED_NAME}" version="1.9"/>'),
                   ('<property name="Low Luck" value="false"',
                    f'<property name="Low Luck" value="{INJECTED_LOW_LUCK}"'))
    out = tmp_path / "made_up.toml"
    done = _import_limited(path, out)
    assert done.exit_code == 0, done.stderr
    game = "Made Up War\ndie_size = 12\nx = ''' #\\\"\x7f\u2028"
    written = tomllib.loads(out.read_text())
    assert written["name"] == game + " (TripleA map)" and "die_size" not in written
    assert set(written) == {"base", "format", "id", "name", "description", "rules", "units"}
    assert written["rules"] == {"aa_dice": "per_gun", "aa_casualties": "attacker_chooses"}
    assert written["base"] == "1942-2e" and written["id"] == "made-up-war-die-size-12-x"
    assert all(line.startswith("#") for line in out.read_text().splitlines()[:6])
    rules = load_rules_file(str(out))
    assert rules.die_size == 6 and rules.name == game + " (TripleA map)"
    mine = simulate(rules, "3 inf", "2 inf", method="exact")
    shipped = simulate("1942-2e", "3 inf", "2 inf", method="exact")
    assert mine.attacker_win == pytest.approx(shipped.attacker_win, abs=1e-12)
    assert round(mine.attacker_win, 4) == 0.5167


@pytest.mark.parametrize("edits, fragment", [
    ([(INFANTRY_ATTACK, INFANTRY_ATTACK.replace('"attack" value="1"', '"attack" value="999999"'))],
     "units.infantry.attack: expected an integer 0..6, got 999999"),
    ([(INFANTRY_ATTACK, INFANTRY_ATTACK + '\n      <option name="hitPoints" value="0"/>')],
     "units.infantry.hp: expected an integer 1..3, got 0"),
    ([('<productionRule name="buyInfantry">\n      <cost resource="PUs" quantity="3"/>',
       '<productionRule name="buyInfantry">\n      <cost resource="PUs" quantity="-3"/>')],
     "units.infantry.cost: expected an integer 0..1000, got -3"),
], ids=["attack 999999", "hitPoints 0", "a negative cost"])
def test_import_refuses_what_the_loader_refuses(tmp_path, edits, fragment):
    """Before: exit 0 and an edition file that `--rules-file` then refused.  Now the import
    is refused with the loader's own message, and nothing is written."""
    path = _edited(tmp_path, *edits)
    with pytest.raises(BattleInputError, match=re.escape(fragment)):
        import_edition(path)
    out = tmp_path / "refused.toml"
    done = _import_limited(path, out)
    assert done.exit_code == 2 and done.stdout == "" and len(done.stderr.splitlines()) == 1
    assert fragment in done.stderr and "(the loader refuses it)" in done.stderr
    assert not out.exists()


# ------------------------------------------------ TripleA's AA options (issue 29 item 16)
# The 1942 2nd Edition map's AA gun made TripleA's old `isAA` gun, as triplea-maps'
# world_war_ii_v4 WW2v4.xml (A&A 1942 first edition) and big_world's 1942 v3 rules have it:
# one die per aircraft, never a casualty; "Choose AA Casualties" false there.

V5_AA = ('<option name="isAAforCombatOnly" value="true"/>\n'
         '      <option name="maxAAattacks" value="3"/>')
OLD_AA = '<option name="isAA" value="true"/>'
CHOOSE = '<property name="Choose AA Casualties" value="true"'


@pytest.mark.parametrize("choose, edition", [("false", "aa50"), ("true", "classic")])
def test_an_old_isaa_gun_plays_as_the_files_rules(tmp_path, choose, edition):
    """Before: imported on 1942-2e's AAA (a casualty, 3 dice each, attacker chooses): 3
    fighters against 1 infantry and 1 aaGun 0.866145.  Now the gun rolls one die per aircraft
    and is never a casualty, the aircraft hit taken at random (AA50's and Revised's gun:
    0.941972) or, where the file lets the attacker choose, by its order of losses (Classic's
    gun: an AA50 battle with Classic's flag)."""
    path = _edited(tmp_path, (V5_AA, OLD_AA),
                   (CHOOSE, f'<property name="Choose AA Casualties" value="{choose}"'))
    out = tmp_path / "v4.toml"
    done = _import_limited(path, out)
    assert done.exit_code == 0, done.stderr
    rules = load_rules_file(str(out))
    gun = rules.units["aaGun"]
    assert (gun.aa_value, gun.can_be_casualty, gun.defenceless, gun.loss_rank) == (1, False,
                                                                                   False, 0)
    assert rules.flags["aa_dice"] == "per_aircraft"
    assert rules.flags["aa_casualties"] == {"aa50": "own_aircraft",
                                            "classic": "attacker_chooses"}[edition]
    battles = [("3 fighter", "1 inf 1 aa"), ("2 fighter 1 bomber 2 tank", "2 inf 2 aa"),
               ("1 fighter 1 bomber", "1 inf 1 aa")]
    expected = replace(load_rules("aa50"), flags={**load_rules("aa50").flags,
                                                  "aa_casualties": rules.flags["aa_casualties"]})
    for attacker, defender in battles:
        mine = simulate(rules, attacker, defender, method="exact", attacker_ool="bomber")
        theirs = simulate(expected, attacker, defender, method="exact", attacker_ool="bomber")
        assert mine.attacker_win == pytest.approx(theirs.attacker_win, abs=1e-12)
    if edition == "aa50":
        three = simulate(rules, "3 fighter", "1 infantry 1 aaGun", method="exact")
        assert round(three.attacker_win, 6) == 0.941972


@pytest.mark.parametrize("option, fragment", [
    ('<option name="maxRoundsAA" value="2"/>', "fires in rounds after the first (maxRoundsAA)"),
    ('<option name="mayOverStackAA" value="true"/>',
     "may roll more dice than there are aircraft (mayOverStackAA)"),
    ('<option name="targetsAA" value="armour"/>', "fires at chosen unit types (targetsAA)"),
    ('<option name="offensiveAttackAA" value="1"/>', "fires when attacking (offensiveAttackAA)"),
])
def test_aa_battlecalc_cannot_model_is_refused_naming_the_gun(tmp_path, option, fragment):
    path = _edited(tmp_path, (V5_AA, V5_AA + "\n      " + option))
    out = tmp_path / "refused.toml"
    done = _import_limited(path, out)
    assert done.exit_code == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert f"unit aaGun: its AA {fragment}" in done.stderr
    assert not out.exists()
