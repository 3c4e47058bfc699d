"""Shipped edition files: they validate, carry the rules-reference stats, and bad files fail."""

from __future__ import annotations

import copy
import re
import tomllib
from importlib import resources

import pytest

from battlecalc.errors import BattleInputError
from battlecalc.orders import default_loss_order
from battlecalc.rules import (
    RULE_FLAGS,
    RulesFileError,
    list_editions,
    load_rules,
    load_rules_file,
    merged,
    validate,
)


def _raw(edition: str) -> dict:
    text = (resources.files("battlecalc.rules") / f"{edition}.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def _raw_with_base(edition: str) -> dict:
    """The edition file with its base (a shipped edition) merged underneath."""
    raw = _raw(edition)
    return merged(_raw_with_base(raw["base"]), raw) if "base" in raw else raw


def _subsequence(order: list[str], expected: list[str]) -> list[str]:
    """`order` restricted to the names in `expected`, in `order`'s order."""
    return [name for name in order if name in expected]


def test_shipped_editions():
    assert list_editions() == ["1940-2e", "1942-2e", "aa50", "classic", "formula", "revised"]


@pytest.mark.parametrize("edition", list_editions())
def test_every_shipped_file_parses_and_validates(edition):
    raw = _raw_with_base(edition)
    ruleset = validate(raw, f"{edition}.toml")
    assert ruleset.id == edition
    assert ruleset.name == raw["name"]
    assert list(ruleset.units) == list(raw["units"])
    assert set(ruleset.flags) == set(RULE_FLAGS)
    for name, value in raw["rules"].items():
        assert ruleset.flags[name] == value
    assert set(ruleset.techs) == set(raw["tech"])
    loaded = load_rules(edition)
    assert loaded.units == ruleset.units
    assert loaded.flags == ruleset.flags
    for unit in ruleset.units.values():
        assert ruleset.aliases[unit.name] == unit.name
        for alias in unit.aliases:
            assert ruleset.aliases[alias] == unit.name


def test_revised_stats():
    units = load_rules("revised").units
    assert units["tank"].cost == 5
    assert (units["bomber"].cost, units["bomber"].attack, units["bomber"].defense) == (15, 4, 1)
    assert units["transport"].defense == 1
    assert units["battleship"].hp == 2
    assert units["battleship"].cost == 24
    assert units["aa"].can_be_casualty is False
    assert units["aa"].can_attack is False
    assert units["aa"].aa_value == 1
    assert "cruiser" not in units
    assert load_rules("revised").flags["aa_dice"] == "per_aircraft"


def test_1942_2e_stats():
    ruleset = load_rules("1942-2e")
    units = ruleset.units
    assert units["tank"].cost == 6
    assert units["bomber"].cost == 12
    assert units["aa"].cost == 5
    assert units["aa"].aa_shots == 3
    assert units["aa"].can_be_casualty is True
    assert units["transport"].defense == 0
    destroyer, cruiser = units["destroyer"], units["cruiser"]
    assert (destroyer.cost, destroyer.attack, destroyer.defense) == (8, 2, 2)
    assert (cruiser.cost, cruiser.attack, cruiser.defense) == (12, 3, 3)
    assert ruleset.flags["aa_dice"] == "per_gun"


def test_revised_heavy_bombers_roll_two_independent_dice():
    bomber = load_rules("revised").with_techs(["heavy_bombers"]).units["bomber"]
    assert bomber.attack_dice == 2
    assert bomber.best_die is False
    assert bomber.attack == 4
    assert bomber.defense == 1


def test_1942_2e_heavy_bombers_take_the_best_die():
    bomber = load_rules("1942-2e").with_techs(["heavy_bombers"]).units["bomber"]
    assert bomber.attack_dice == 2
    assert bomber.best_die is True


def test_jets():
    revised = load_rules("revised").with_techs(["jets"]).units["fighter"]
    assert (revised.attack, revised.defense) == (3, 5)
    second = load_rules("1942-2e").with_techs(["jets"]).units["fighter"]
    assert (second.attack, second.defense) == (4, 4)


def test_techs_do_not_change_the_base_ruleset():
    ruleset = load_rules("revised")
    ruleset.with_techs(["heavy_bombers", "jets"])
    assert ruleset.units["bomber"].attack_dice == 1
    assert ruleset.units["fighter"].defense == 4


def test_unknown_tech_raises():
    with pytest.raises(BattleInputError, match="unknown technology 'lasers' for revised"):
        load_rules("revised").with_techs(["lasers"])


def test_revised_default_attack_loss_order():
    order = default_loss_order(dict(load_rules("revised").units), "attack")
    assert order == [
        "infantry", "artillery", "tank", "transport", "submarine", "fighter", "destroyer",
        "bomber", "carrier", "battleship", "damaged_battleship",
    ]
    assert "aa" not in order  # never a casualty in Revised


def test_1942_2e_default_defence_loss_order():
    units = load_rules("1942-2e").units
    order = default_loss_order(dict(units), "defense")
    assert sorted(order) == sorted(units)  # every unit can be a casualty in 1942 2E
    assert order[0] == "aa"
    assert order[-1] == "transport"
    expected = [
        "aa", "infantry", "artillery", "submarine", "tank", "destroyer", "fighter", "bomber",
        "cruiser", "carrier", "damaged_battleship", "transport",
    ]
    assert _subsequence(order, expected) == expected
    assert order.index("battleship") < order.index("damaged_battleship")


def _broken_revised() -> dict:
    raw = copy.deepcopy(_raw("revised"))
    raw["units"]["tank"]["speed"] = 2  # unknown unit key
    raw["units"]["bomber"]["defense"] = "two"  # bad type
    raw["rules"]["blitz"] = True  # unknown rule flag
    raw["rules"]["aa_dice"] = "per_battle"  # bad flag value
    raw["tech"]["jets"]["zeppelin"] = {"attack": 1}  # unknown tech unit
    return raw


EXPECTED_ERRORS = [
    "revised.units.tank.speed: unknown key",
    "revised.units.bomber.defense: expected an integer 0..6, got 'two'",
    "revised.rules.blitz: unknown rule flag",
    "revised.rules.aa_dice: expected one of 'per_aircraft', 'per_gun', got 'per_battle'",
    "revised.tech.jets.zeppelin: unknown unit",
]


def test_validate_reports_every_error_at_once():
    with pytest.raises(RulesFileError) as info:
        validate(_broken_revised(), "revised.toml")
    message = str(info.value)
    lines = message.splitlines()
    assert lines[0] == "invalid rules file:"
    errors = [line.strip() for line in lines[1:]]
    for expected in EXPECTED_ERRORS:
        assert expected in errors
    assert isinstance(info.value, BattleInputError)


def test_validate_reports_no_cascading_errors():
    with pytest.raises(RulesFileError) as info:
        validate(_broken_revised(), "revised.toml")
    errors = [line.strip() for line in str(info.value).splitlines()[1:]]
    assert sorted(errors) == sorted(EXPECTED_ERRORS)


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda raw: raw["units"]["tank"].pop("cost"), "revised.units.tank.cost: missing"),
        (lambda raw: raw["units"]["tank"].update(attack=7),
         "revised.units.tank.attack: expected an integer 0..6, got 7"),
        (lambda raw: raw["units"]["tank"].update(attack=True),
         "revised.units.tank.attack: expected an integer 0..6, got True"),
        (lambda raw: raw["units"]["tank"].update(domain="space"),
         "revised.units.tank.domain: expected one of land, air, sea, got 'space'"),
        (lambda raw: raw["rules"].update(bombard_return_fire="yes"),
         "revised.rules.bombard_return_fire: expected one of True, False, got 'yes'"),
        (lambda raw: raw["rules"].update(aa_rounds=True),
         "revised.rules.aa_rounds: expected one of 1, got True"),
        (lambda raw: raw["support"][0].update(targets=["ninja"]),
         "revised.support[0]: unknown unit 'ninja'"),
        (lambda raw: raw["units"]["tank"].update(aliases=["inf"]),
         "revised.units.tank.aliases: 'inf' already names 'infantry'"),
        (lambda raw: raw["tech"]["jets"]["fighter"].update(range=2),
         "revised.tech.jets.fighter.range: unknown key"),
        (lambda raw: raw.update(format=2), "revised.format: expected 1, got 2"),
        (lambda raw: raw.update(colour="red"), "revised.colour: unknown key"),
    ],
)
def test_validate_single_error(mutate, expected):
    raw = copy.deepcopy(_raw("revised"))
    mutate(raw)
    with pytest.raises(RulesFileError) as info:
        validate(raw, "revised.toml")
    assert str(info.value) == f"invalid rules file:\n  {expected}"


def test_load_rules_file_validates_an_edition_file_at_a_path(tmp_path):
    from battlecalc.rules import load_rules_file

    text = (resources.files("battlecalc.rules") / "revised.toml").read_text(encoding="utf-8")
    good = tmp_path / "house.toml"
    good.write_text(text.replace('id = "revised"', 'id = "house"'), encoding="utf-8")
    assert load_rules_file(str(good)).units["bomber"].cost == 15
    bad = tmp_path / "broken.toml"
    bad.write_text(text.replace("cost = 15", 'cost = "fifteen"'), encoding="utf-8")
    with pytest.raises(RulesFileError, match=r"revised\.units\.bomber\.cost: expected an integer"):
        load_rules_file(str(bad))


# --- edition files that build on a shipped edition (issue 9: data-only editions) -------------


def _write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_an_edition_file_on_a_base_runs_with_one_value_changed(tmp_path):
    path = _write(tmp_path, "strong-tanks.toml", """
base = "revised"
format = 1
id = "strong-tanks"
name = "Revised with tanks attacking at 4"

[units.tank]
attack = 4
""")
    import battlecalc

    r = battlecalc.simulate(rules=path, attacker="1 tank", defender="1 inf", method="exact")
    # a round: the tank hits on 4 (4/6), the infantry on 2 (2/6); nothing changes w.p. 8/36
    assert (r.attacker_win, r.draw, r.defender_win) == pytest.approx((4 / 7, 2 / 7, 1 / 7),
                                                                    abs=1e-12)
    ruleset = load_rules_file(path)
    base = load_rules("revised")
    assert ruleset.units["tank"].cost == base.units["tank"].cost  # the rest is the base's
    assert ruleset.flags == base.flags and ruleset.supports == base.supports
    assert set(ruleset.techs) == set(base.techs)
    # unchanged units give the base's answers
    same = battlecalc.simulate(rules=path, attacker="3 inf 1 art", defender="3 inf",
                               method="exact")
    want = battlecalc.simulate(rules="revised", attacker="3 inf 1 art", defender="3 inf",
                               method="exact")
    assert same.attacker_win == want.attacker_win


def test_a_technology_may_change_a_support(tmp_path):
    path = _write(tmp_path, "improved.toml", """
base = "1942-2e"
format = 1
id = "improved"
name = "1942 2E with improved artillery"

[tech.improved_artillery]
description = "each artillery supports two infantry"
support.artillery = { count = 2 }
""")
    import battlecalc

    improved = battlecalc.simulate(rules=path, attacker="2 inf 1 art", defender="1 inf",
                                   attacker_tech="improved_artillery", method="exact")
    plain = battlecalc.simulate(rules=path, attacker="2 inf 1 art", defender="1 inf",
                                method="exact")
    # with both infantry supported the attacker scores three dice at 2: more wins
    assert improved.attacker_win > plain.attacker_win
    ruleset = load_rules_file(path).with_techs(("improved_artillery",))
    assert [(s.giver, s.count) for s in ruleset.supports] == [("artillery", 2)]


@pytest.mark.parametrize(("text", "fragment"), [
    ('base = "nowhere"\n', "'nowhere' is neither a shipped edition"),
    ('base = "cycle.toml"\n', "is a cycle"),
    ('base = "revised"\n[tech.x]\nsupport.tank = { count = 2 }\n', "no support of that giver"),
    ('base = "revised"\n[[support]]\ngiver = "tank"\ntargets = ["ninja"]\n',
     "support[0]: unknown unit 'ninja'"),
    ('base = "revised"\ndie_size = 1\n', "die_size: expected an integer 2..100"),
])
def test_edition_file_base_errors_name_the_file(tmp_path, text, fragment):
    path = _write(tmp_path, "cycle.toml", 'format = 1\nid = "x"\nname = "x"\n' + text)
    with pytest.raises(RulesFileError, match=re.escape(fragment)) as caught:
        load_rules_file(path)
    assert str(path) in str(caught.value)
