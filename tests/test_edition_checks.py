"""Editions the engine cannot model are refused at load, naming the file and the key; a
Ruleset given directly is checked as its file would be; no traceback on a huge order-of-losses
count or --plot with waves (issue 16 points 8, 12 and 14)."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest
from helpers import assert_usage_error, invoke

import battlecalc
from battlecalc.errors import BattleInputError
from battlecalc.rules import RulesFileError, load_rules, load_rules_file


def _edition(tmp_path, body: str, base: str = "1942-2e", name: str = "custom"):
    path = tmp_path / f"{name}.toml"
    path.write_text(f'format = 1\nid = "{name}"\nname = "{name}"\nbase = "{base}"\n{body}',
                    encoding="utf-8")
    return path


def _refused(path, *fragments):
    with pytest.raises(RulesFileError) as info:
        load_rules_file(path)
    message = str(info.value)
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message, message
    return message


# --- point 8 and 14: damaged forms the engine cannot model ------------------------------------

def test_three_hits_with_a_damaged_form_is_refused(tmp_path):
    path = _edition(tmp_path, "[units.battleship]\nhp = 3\n")
    _refused(path, "custom.units.battleship.hp: 3 with a damaged_form is not modelled")


def test_three_hits_without_a_damaged_form_fight_as_one_unit(tmp_path):
    # a wall that never fires and takes 3 hits, attacked by a tank hitting with 1/2: the
    # rounds until the third hit are negative-binomial, 3 / (1/2) = 6 on average
    path = _edition(tmp_path, '[units.wall]\ncost = 1\nattack = 0\ndefense = 0\n'
                    'domain = "land"\nhp = 3\n')
    r = battlecalc.simulate(rules=path, attacker="1 tank", defender="1 wall", method="exact")
    assert r.attacker_win == pytest.approx(1.0, abs=1e-9)
    assert r.mean_rounds == pytest.approx(6.0, abs=1e-6)
    assert r.defender_survivors == {"wall": pytest.approx(0.0, abs=1e-9)}
    assert (r.defender_distribution.drop(columns="probability") >= 0).all().all()


@pytest.mark.parametrize(("body", "fragment"), [
    ('[units.battleship]\ndamaged_form = "battleship"\n',
     "units.battleship.damaged_form: names the unit itself"),
    ("[units.damaged_battleship]\nhp = 2\n",
     "units.damaged_battleship.hp: 2, but damaged_battleship is the damaged form of battleship"),
    ('[units.battleship]\ndamaged_form = "submarine"\n',
     "units.battleship.damaged_form: 'submarine' is not the same kind of unit"),
    ('[units.battleship]\ndamaged_form = "nothing"\n',
     "units.battleship.damaged_form: unknown unit 'nothing'"),
])
def test_damaged_forms_the_engine_cannot_model_are_refused(tmp_path, body, fragment):
    path = _edition(tmp_path, body)
    _refused(path, fragment)
    result = invoke("run", "--rules-file", str(path), "--sea", "-a", "1 bb", "-d", "2 dd")
    assert_usage_error(result, fragment)


@pytest.mark.parametrize(("body", "fragment"), [
    ('[tech.armour]\nbattleship = { damaged_form = "nothing" }\n',
     "custom.tech.armour: with it, units.battleship.damaged_form: unknown unit 'nothing'"),
    ("[tech.armour]\nbattleship = { hp = 3 }\n",
     "custom.tech.armour: with it, units.battleship.hp: 3 with a damaged_form"),
    ('[tech.armour]\ncruiser = { hp = 2, damaged_form = "cruiser" }\n',
     "units.cruiser.damaged_form: names the unit itself"),
])
def test_technologies_are_checked_as_the_units_they_make(tmp_path, body, fragment):
    path = _edition(tmp_path, body)
    _refused(path, fragment)
    result = invoke("run", "--rules-file", str(path), "--sea", "-a", "1 bb", "-d", "2 dd",
                    "--attacker-tech", "armour")
    assert_usage_error(result, fragment)


def test_technologies_that_clash_only_together_are_refused_together(tmp_path):
    path = _edition(tmp_path, '[tech.thick]\ncruiser = { hp = 3 }\n'
                    '[tech.wreck]\ncruiser = { damaged_form = "damaged_battleship" }\n')
    for tech in ("thick", "wreck"):  # each alone is a unit the engine models
        battlecalc.simulate(rules=path, attacker="1 ca", defender="1 dd", sea=True,
                            attacker_tech=tech, method="exact")
    with pytest.raises(BattleInputError, match="thick, wreck .* cannot be used together"):
        battlecalc.simulate(rules=path, attacker="1 ca", defender="1 dd", sea=True,
                            attacker_tech="thick,wreck", method="exact")


# --- point 12: names, techs, Ruleset objects ---------------------------------------------------

@pytest.mark.parametrize("name", ["big gun", "gun2", "big-gun", "_gun"])
def test_unit_names_that_cannot_be_typed_are_refused(tmp_path, name):
    path = _edition(tmp_path, f'[units."{name}"]\ncost = 3\nattack = 1\ndefense = 1\n'
                    'domain = "land"\n')
    _refused(path, f"custom.units.{name}: unit name {name!r} cannot be typed in an army")


@pytest.mark.parametrize("alias", ["big gun", "gun2", "big-gun"])
def test_aliases_that_cannot_be_typed_are_refused(tmp_path, alias):
    path = _edition(tmp_path, f'[units.tank]\naliases = ["{alias}"]\n')
    _refused(path, f"custom.units.tank.aliases: alias {alias!r} cannot be typed")


def test_a_mixed_case_unit_name_is_typed_in_any_case(tmp_path):
    """TripleA's names (aaGun) as unit ids: army notation reads names case-insensitively; two
    names that differ only in case are one name."""
    path = _edition(tmp_path, '[units.Big_gun]\ncost = 9\nattack = 3\ndefense = 3\n'
                    'domain = "land"\n')
    rules = load_rules_file(path)
    assert "Big_gun" in rules.units and rules.aliases["big_gun"] == "Big_gun"
    r = battlecalc.simulate(rules=path, attacker="1 Big_gun", defender="1 BIG_GUN",
                            method="exact")
    assert (r.attacker_win, r.draw) == pytest.approx((1 / 3, 1 / 3), abs=1e-12)
    assert set(r.attacker_survivors) == {"Big_gun"}
    clash = _edition(tmp_path, '[units.Tank]\ncost = 9\nattack = 3\ndefense = 3\n'
                     'domain = "land"\n', name="clash")
    _refused(clash, "clash.units.Tank.aliases: 'tank' already names 'tank'")


def test_typeable_names_in_any_script_are_accepted(tmp_path):
    path = _edition(tmp_path, '[units.schwerer_panzer]\naliases = ["königstiger", "虎式"]\n'
                    'cost = 9\nattack = 3\ndefense = 3\ndomain = "land"\n')
    r = battlecalc.simulate(rules=path, attacker="1 königstiger", defender="1 虎式",
                            method="exact")
    # two units hitting on 3 (1/2 each round): a draw when both hit, else whoever hits first
    assert (r.attacker_win, r.draw) == pytest.approx((1 / 3, 1 / 3), abs=1e-12)


def test_a_tech_support_aimed_at_an_unknown_unit_is_refused(tmp_path):
    path = _edition(tmp_path, '[tech.drill]\nsupport.artillery = { targets = ["ninja"] }\n')
    _refused(path, "custom.tech.drill.support.artillery.targets: unknown unit 'ninja'")


def test_a_tech_support_aimed_at_known_units_applies(tmp_path):
    # a technology may aim a support at other known units
    path = _edition(tmp_path, '[tech.drill]\nsupport.artillery = { targets = ["tank"] }\n')
    ruleset = load_rules_file(path).with_techs(("drill",))
    assert [s.targets for s in ruleset.supports if s.giver == "artillery"] == [("tank",)]


def test_a_tech_naming_an_unknown_raid_facility_is_refused_at_load(tmp_path):
    path = _edition(tmp_path, '[tech.long_range]\nbomber = { raid_targets = ["nowhere"] }\n',
                    base="1940-2e")
    _refused(path, "custom.tech.long_range: with it, units.bomber.raid_targets: unknown "
             "facility 'nowhere'")


def test_a_ruleset_given_directly_is_checked():
    base = load_rules("1942-2e")
    for broken, fragment in (
            (dataclasses.replace(base, die_size=0), "die_size: expected an integer 2..100"),
            (dataclasses.replace(base, units=MappingProxyType({
                **base.units, "tank": dataclasses.replace(base.units["tank"], attack=9)})),
             "units.tank.attack: expected an integer 0..6"),
            (dataclasses.replace(base, flags=MappingProxyType({**base.flags,
                                                               "aa_dice": "loaded"})),
             "rules.aa_dice: expected one of"),
            (dataclasses.replace(base, aliases=MappingProxyType({})), "aliases")):
        with pytest.raises(BattleInputError, match="invalid Ruleset '1942-2e'") as info:
            battlecalc.simulate(rules=broken, attacker="1 inf", defender="1 inf")
        assert fragment in str(info.value)


def test_a_valid_ruleset_given_directly_runs_unchanged():
    base = load_rules("revised")
    strong = dataclasses.replace(base, units=MappingProxyType({
        **base.units, "tank": dataclasses.replace(base.units["tank"], attack=4)}))
    assert load_rules(strong) is strong
    r = battlecalc.simulate(rules=strong, attacker="1 tank", defender="1 inf", method="exact")
    # the tank hits on 4 (4/6), the infantry on 2 (2/6); nothing changes w.p. 8/36
    assert (r.attacker_win, r.draw, r.defender_win) == pytest.approx((4 / 7, 2 / 7, 1 / 7),
                                                                    abs=1e-12)
    formula = load_rules("formula")
    assert load_rules(dataclasses.replace(formula, name="copy")).formula == formula.formula


# --- point 14: tracebacks ----------------------------------------------------------------------

def test_a_huge_order_of_losses_count_means_every_unit():
    huge = "1" * 5000
    args = ["run", "--rules", "revised", "-a", "3 inf 1 tank", "-d", "3 inf", "-m", "exact",
            "--format", "json"]
    result = invoke(*args, "--attacker-ool", f"{huge}^inf;*^tank")
    assert result.exit_code == 0, result.output
    same = invoke(*args, "--attacker-ool", "*^inf;*^tank")
    key = '"attacker_win": '
    assert result.stdout.split(key)[1][:20] == same.stdout.split(key)[1][:20]
    assert_usage_error(invoke(*args, "--attacker-ool", f"-{huge}^inf"), "must be at least 1")


def test_plot_with_waves_is_refused_before_computing(tmp_path):
    result = invoke("run", "--rules", "1942-2e", "-a", "3 inf 1 tank", "-d", "3 inf",
                    "--wave", "2 inf", "--plot", str(tmp_path / "x.png"))
    assert_usage_error(result, "--plot draws one battle")
    assert not (tmp_path / "x.png").exists()
