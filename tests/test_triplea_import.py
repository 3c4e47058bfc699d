"""TripleA map files as editions: `battlecalc edition import GAME.xml`.

Each of the four shared maps, imported, must give exactly the odds of the shipped edition it
matches (to 1e-12, exact solver) on a battery covering every unit of the edition, land, sea
and amphibious; the unit values the files state are compared with the shipped tables one by
one, so that a difference would be named by unit and field.  Maps are GPL-3 data read from
``shared/fixtures/triplea/maps`` and skipped when absent.
"""

from __future__ import annotations

import pytest
from cli_helpers import assert_usage_error, invoke
from test_triplea import FIXTURES, GLOBAL, START

from battlecalc import simulate
from battlecalc.errors import BattleInputError
from battlecalc.rules import load_rules, load_rules_file
from battlecalc.triplea.mapfile import import_edition

MAPS = FIXTURES / "maps"
PAIRS = [("WW2v5_1942_2nd.xml", "1942-2e"), ("ww2global40_2nd_edition.xml", "1940-2e"),
         ("classic.xml", "classic"), ("WW2v3-1941.xml", "aa50")]
# a save's game data carries the unit attachments of its map: the same import
SAVE_PAIRS = [(START, "revised"), (GLOBAL, "1940-2e")]
pytestmark = pytest.mark.skipif(not MAPS.is_dir(), reason=f"TripleA maps not found at {MAPS}")
KEYS = ("attacker_win", "defender_win", "draw", "stalemate", "takes_territory", "mean_rounds",
        "attacker_ipc_loss", "defender_ipc_loss")


@pytest.fixture(scope="module", params=[(MAPS / f, e) for f, e in PAIRS] + SAVE_PAIRS,
                ids=[p[1] for p in PAIRS] + [f"{e}-save" for _, e in SAVE_PAIRS])
def imported(request, tmp_path_factory):
    path, edition = request.param
    result = import_edition(path)
    assert result.base == edition and result.warnings == []
    out = tmp_path_factory.mktemp("editions") / f"{edition}.toml"
    out.write_text(result.text)
    assert result.text.count("cost = ") == result.text.count("[units.")  # every cost read
    return load_rules_file(str(out)), load_rules(edition)


def test_unit_values_match_the_shipped_edition(imported):
    mine, shipped = imported
    assert list(mine.units) == list(shipped.units)
    for name, unit in shipped.units.items():
        for field_name in unit.__dataclass_fields__:
            if field_name != "aliases":
                assert getattr(mine.units[name], field_name) == getattr(unit, field_name), (
                    f"{shipped.id}.{name}.{field_name}")
    assert mine.supports == shipped.supports


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


def test_battles_equal_the_shipped_edition(imported):
    mine, shipped = imported
    battery = _battery(shipped)
    covered = set()
    for battle in battery:
        for side in ("attacker", "defender", "landing", "bombard"):
            covered |= set(battle.get(side, {}))
    assert covered >= {u for u in shipped.units if not u.startswith("damaged_")}
    for battle in battery:
        a = simulate(mine, method="exact", **battle)
        b = simulate(shipped.id, method="exact", **battle)
        for key in KEYS:
            assert getattr(a, key) == pytest.approx(getattr(b, key), abs=1e-12), (battle, key)


def test_tripleas_names_are_aliases(tmp_path):
    path = tmp_path / "e.toml"
    path.write_text(import_edition(MAPS / "WW2v5_1942_2nd.xml").text)
    a = simulate(str(path), "3 armour 2 infantry", "3 inf 1 aagun", method="exact")
    b = simulate("1942-2e", "3 tank 2 inf", "3 inf 1 aa", method="exact")
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
