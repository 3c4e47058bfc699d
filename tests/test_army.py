"""Army notation parser: battlecalc.army.parse_army / resolve_unit_name."""

from __future__ import annotations

import pytest

from battlecalc.army import MAX_UNITS_PER_TYPE, format_army, parse_army, resolve_unit_name
from battlecalc.errors import BattleInputError
from battlecalc.rules import load_rules

EDITIONS = ("revised", "1942-2e")

CANONICAL = (
    "infantry", "artillery", "tank", "aa", "fighter", "bomber", "battleship",
    "damaged_battleship", "destroyer", "cruiser", "carrier", "transport", "submarine",
)

ALIASES = {
    "inf": "infantry",
    "art": "artillery",
    "arm": "tank",
    "armor": "tank",
    "armour": "tank",
    "aa": "aa",
    "aaa": "aa",
    "ftr": "fighter",
    "fig": "fighter",
    "bmb": "bomber",
    "bom": "bomber",
    "bb": "battleship",
    "bat": "battleship",
    "dd": "destroyer",
    "des": "destroyer",
    "ca": "cruiser",
    "cru": "cruiser",
    "cv": "carrier",
    "car": "carrier",
    "acc": "carrier",
    "tt": "transport",
    "tra": "transport",
    "trn": "transport",
    "ss": "submarine",
    "sub": "submarine",
    "damaged_battleship": "damaged_battleship",
    "dbb": "damaged_battleship",
    "dbat": "damaged_battleship",
}


def _exists(edition: str, canonical: str) -> bool:
    # Revised has no cruiser; every other canonical unit exists in both editions.
    return not (edition == "revised" and canonical == "cruiser")


ALIAS_CASES = [
    pytest.param(edition, alias, canonical, id=f"{edition}-{alias}")
    for edition in EDITIONS
    for alias, canonical in ALIASES.items()
    if _exists(edition, canonical)
]
CANONICAL_CASES = [
    pytest.param(edition, name, id=f"{edition}-{name}")
    for edition in EDITIONS
    for name in CANONICAL
    if _exists(edition, name)
]


@pytest.fixture(params=EDITIONS)
def ruleset(request):
    return load_rules(request.param)


def test_long_and_short_notation_parse_identically(ruleset):
    long = parse_army("3 infantry, 2 artillery, 1 tank", ruleset)
    short = parse_army("3inf 2art 1arm", ruleset)
    assert long == {"infantry": 3, "artillery": 2, "tank": 1}
    assert short == long


def test_spaces_between_count_and_name_and_commas_are_optional(ruleset):
    expected = {"infantry": 3, "artillery": 2, "tank": 1}
    assert parse_army("3 inf 2 art 1 arm", ruleset) == expected
    assert parse_army("3inf,2art,1arm", ruleset) == expected
    assert parse_army("  3 inf ,  2 art , 1 arm  ", ruleset) == expected


def test_case_insensitive(ruleset):
    expected = {"infantry": 3, "artillery": 2, "tank": 1}
    assert parse_army("3 INFANTRY, 2 Artillery, 1 TaNk", ruleset) == expected
    assert parse_army("3INF 2ART 1ARM", ruleset) == expected
    assert resolve_unit_name("Fighter", ruleset) == "fighter"
    assert resolve_unit_name("BB", ruleset) == "battleship"


@pytest.mark.parametrize(("edition", "alias", "canonical"), ALIAS_CASES)
def test_alias_maps_to_canonical_name(edition, alias, canonical):
    ruleset = load_rules(edition)
    assert resolve_unit_name(alias, ruleset) == canonical
    assert parse_army(f"2 {alias}", ruleset) == {canonical: 2}
    assert parse_army(f"2{alias.upper()}", ruleset) == {canonical: 2}


@pytest.mark.parametrize(("edition", "name"), CANONICAL_CASES)
def test_canonical_name_maps_to_itself(edition, name):
    ruleset = load_rules(edition)
    assert resolve_unit_name(name, ruleset) == name
    assert parse_army(f"4 {name}", ruleset) == {name: 4}


def test_shipped_editions_have_exactly_the_expected_units():
    assert list(load_rules("1942-2e").units) == [
        "infantry", "artillery", "tank", "aa", "fighter", "bomber", "battleship",
        "damaged_battleship", "cruiser", "destroyer", "carrier", "transport", "submarine",
    ]
    assert set(load_rules("revised").units) == set(CANONICAL) - {"cruiser"}


@pytest.mark.parametrize("name", ["cruiser", "ca", "cru"])
def test_revised_has_no_cruiser(name):
    with pytest.raises(BattleInputError, match=r"unknown unit .* in revised"):
        parse_army(f"1 {name}", load_rules("revised"))


def test_bare_name_counts_one(ruleset):
    assert parse_army("tank", ruleset) == {"tank": 1}
    assert parse_army("inf, 2 art, arm", ruleset) == {"infantry": 1, "artillery": 2, "tank": 1}


def test_repeated_names_add_up(ruleset):
    assert parse_army("2 inf, 3 infantry, inf", ruleset) == {"infantry": 6}
    assert parse_army("1 arm 1 tank 1 armour 1 armor", ruleset) == {"tank": 4}


def test_result_is_in_edition_unit_order(ruleset):
    army = parse_army("1 bomber, 2 tank, 3 inf", ruleset)
    assert list(army) == ["infantry", "tank", "bomber"]
    assert format_army(army) == "3 infantry, 2 tank, 1 bomber"


def test_empty_text_is_an_empty_army(ruleset):
    assert parse_army("", ruleset) == {}
    assert parse_army("   ", ruleset) == {}


def test_maximum_count_per_type_is_accepted(ruleset):
    assert parse_army(f"{MAX_UNITS_PER_TYPE} inf", ruleset) == {"infantry": MAX_UNITS_PER_TYPE}


@pytest.mark.parametrize(
    ("typo", "suggestion"),
    [("infanty", "infantry"), ("artilery", "artillery"), ("fightr", "fighter"),
     ("bommber", "bomber")],
)
def test_unknown_name_suggests_closest(ruleset, typo, suggestion):
    with pytest.raises(BattleInputError) as info:
        parse_army(f"3 {typo}, 1 tank", ruleset)
    message = str(info.value)
    assert f"unknown unit {typo!r}" in message
    assert f"did you mean {suggestion!r}?" in message


def test_unknown_name_without_close_match_lists_units(ruleset):
    with pytest.raises(BattleInputError) as info:
        parse_army("2 zeppelin", ruleset)
    message = str(info.value)
    assert "unknown unit 'zeppelin'" in message
    assert "did you mean" not in message
    assert "infantry, artillery, tank" in message


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("0 inf", "count for infantry must be at least 1, got 0"),
        ("1 tank, 0 inf", "count for infantry must be at least 1, got 0"),
        ("-1 inf", "count for infantry must be at least 1, got -1"),
        ("-3 tank", "count for tank must be at least 1, got -3"),
        ("1.5 inf", "cannot read army '1.5 inf'"),
        ("2 inf, 0.5 tank", "cannot read army"),
        ("3 inf 2", "cannot read army '3 inf 2' near '2'"),
        ("3 inf, 2", "cannot read army '3 inf, 2' near '2'"),
        ("inf3", "cannot read army 'inf3' near '3'"),
        ("2 3 inf", "cannot read army '2 3 inf'"),
        ("3 inf; 1 tank", "near '; 1 tank'"),
        (f"{MAX_UNITS_PER_TYPE + 1} inf",
         f"{MAX_UNITS_PER_TYPE + 1} infantry is more than the {MAX_UNITS_PER_TYPE} per unit type"),
        ("600 inf, 500 infantry", "1100 infantry is more than the 1000 per unit type"),
        ("999999999999 tank", "999999999999 tank is more than the 1000 per unit type"),
    ],
)
def test_bad_counts_and_syntax_raise(ruleset, text, fragment):
    with pytest.raises(BattleInputError) as info:
        parse_army(text, ruleset)
    assert fragment in str(info.value)


def test_battle_input_error_is_a_value_error():
    assert issubclass(BattleInputError, ValueError)


def test_hyphenated_names_parse_like_underscored_ones():
    rules = load_rules("revised")
    assert parse_army("2 damaged-battleship", rules) == {"damaged_battleship": 2}
