"""Strategic bombing raids (battlecalc.raids) against tests/references/raid_reference.py, the
analytic anchors of docs/editions.md section 5, Monte Carlo within 4 standard errors, the views, the
command line and bad input.

Classic, AA50 and 1940 2E had no edition file when this was written: they are the small files
of EDITION_FILES below, written on top of a shipped edition with only their raid settings (and
1942 2E gets the radar and LHTR heavy bombers technologies of the contract).  The `rulesets`
fixture uses the shipped edition instead wherever it is shipped with every technology of its
test file, and `test_raid_test_files_match_the_shipped_editions` checks that the shipped files
carry the same raid settings.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import MC_TRIALS, assert_mc_agrees, invoke
from raid_reference import exact_raid
from tiers import sampled

import battlecalc
from battlecalc.errors import BattleInputError
from battlecalc.raids import RaidResult, air_battle_rules, make_raid, raid
from battlecalc.results import LOW_LUCK_LINE
from battlecalc.rules import RulesFileError, list_editions, load_rules, load_rules_file, validate

# The raid settings of each edition (docs/editions.md section 5), as edition files on top of a
# shipped edition.  The `# shipped:` lines are the ones the shipped files carry.
LHTR_TECH = '''
[tech.lhtr_heavy_bombers]
description = "LHTR Heavy Bombers: best of 2 dice on attack and defence; raids: best of 2 + 1"
bomber.attack_dice = 2
bomber.defense_dice = 2
bomber.best_die = true
bomber.raid_dice = 2
bomber.raid_best_die = true
bomber.raid_bonus = 1
'''
EDITION_FILES = {
    "classic": '''
base = "revised"
format = 1
id = "classic"
name = "Classic raids (test file)"

[rules]
raid_aa = "territory_gun"
raid_damage_cap = "none"
air_battle = false

[tech.heavy_bombers]
description = "Heavy Bombers: attacking bombers roll 3 dice; raids: 3 dice added"
bomber = { attack_dice = 3, raid_dice = 3 }
''',
    "aa50": '''
base = "1942-2e"
format = 1
id = "aa50"
name = "AA50 raids (test file)"

[rules]
raid_aa = "territory_gun"
raid_damage_cap = "twice_target_value"
air_battle = false

[units.aa]
can_be_casualty = false
cost = 6

''' + LHTR_TECH + '''
[tech.radar]
description = "Radar: AA guns hit on 2"
aa = { aa_value = 2 }
''',
    "1942-2e": '''
base = "1942-2e"
format = 1
id = "1942-2e-tech"
name = "1942 2E with the AA50 technologies (test file)"

''' + LHTR_TECH + '''
[tech.radar]
description = "Radar: AAA and the built-in AA hit on 2"
aa = { aa_value = 2 }
''',
    "1940-2e": '''
base = "1942-2e"
format = 1
id = "1940-2e"
name = "1940 2E raids (test file)"

[rules]
raid_aa = "built_in"
raid_damage_cap = "facility"
air_battle = true

[units.fighter]
air_attack = 1
air_defense = 1

[units.tactical_bomber]
aliases = ["tac"]
cost = 11
attack = 3
defense = 3
domain = "air"
raid_dice = 1
raid_targets = ["airbase", "navalbase"]
air_attack = 1

[units.bomber]
raid_bonus = 2
air_attack = 1

[facilities.major]
description = "major industrial complex"
max_damage = 20

[facilities.minor]
description = "minor industrial complex"
max_damage = 6

[facilities.airbase]
description = "air base"
max_damage = 6

[facilities.navalbase]
description = "naval base"
max_damage = 6

[tech.heavy_bombers]
description = "Heavy Bombers: best of 2 dice; raids: the best of 2 dice + 2"
bomber = { attack_dice = 2, best_die = true, raid_dice = 2, raid_best_die = true }

[tech.jets]
description = "Jet Fighters: fighter attack 4; air battle 2 on attack and defence"
fighter = { attack = 4, air_attack = 2, air_defense = 2 }

[tech.radar]
description = "Radar: AAA and the built-in AA hit on 2"
aa = { aa_value = 2 }
''',
}


@pytest.fixture(scope="module")
def rulesets(tmp_path_factory):
    """Each edition's Ruleset: the shipped edition where it is shipped with every technology of
    its test file, else the test file; `test_files` the test files, `cli` the command-line
    arguments naming each edition, `paths` the test files' paths."""
    folder = tmp_path_factory.mktemp("raid_editions")
    out = {"revised": load_rules("revised"), "test_files": {}, "cli": {}, "paths": {}}
    for edition, text in EDITION_FILES.items():
        path = folder / f"{edition}.toml"
        path.write_text(text, encoding="utf-8")
        test = out["test_files"][edition] = load_rules_file(path)
        out["paths"][edition] = str(path)
        shipped = load_rules(edition) if edition in list_editions() else None
        if shipped is not None and set(test.techs) <= set(shipped.techs):
            out[edition], out["cli"][edition] = shipped, ["--rules", edition]
        else:
            out[edition], out["cli"][edition] = test, ["--rules-file", str(path)]
    return out


def _run(rulesets, edition, attacker, defender=None, **options):
    return raid(rulesets[edition], attacker, defender, **options)


# ---------------------------------------------------------------------------------------------
# Exact against the reference, to 1e-9

CASES = [
    # classic: AA gun only with aa, 1d6 per bomber (3d6 with heavy bombers), no cap
    ("classic", {"bomber": 1}, None, {}),
    ("classic", {"bomber": 3}, None, {"aa": True}),
    ("classic", {"bomber": 2}, None, {"aa": True, "attacker_tech": ["heavy_bombers"]}),
    ("classic", {"bomber": 1}, None, {"target_value": 3}),  # ignored: no cap
    # revised: each bomber's damage at most the target value, heavy bombers 2d6 added
    ("revised", {"bomber": 1}, None, {"target_value": 2, "aa": True}),
    ("revised", {"bomber": 4}, None, {"target_value": 3, "aa": True}),
    ("revised", {"bomber": 2}, None, {"target_value": 0, "aa": True}),
    ("revised", {"bomber": 2}, None, {"target_value": 8, "aa": True,
                                      "attacker_tech": ["heavy_bombers"]}),
    ("revised", {"bomber": 3}, None, {"target_value": 4, "attacker_tech": ["heavy_bombers"]}),
    # aa50: total at most 2 x value; heavy bombers best of 2, LHTR best of 2 + 1; radar
    ("aa50", {"bomber": 3}, None, {"target_value": 3, "aa": True,
                                   "attacker_tech": ["heavy_bombers"]}),
    ("aa50", {"bomber": 2}, None, {"target_value": 4, "aa": True, "defender_tech": ["radar"]}),
    ("aa50", {"bomber": 2}, None, {"target_value": 6, "aa": True,
                                   "attacker_tech": ["lhtr_heavy_bombers"]}),
    ("aa50", {"bomber": 3}, None, {"target_value": 1}),
    # 1942-2e: built-in AA always (aa ignored), total at most 2 x value
    ("1942-2e", {"bomber": 1}, None, {"target_value": 2}),
    ("1942-2e", {"bomber": 4}, None, {"target_value": 5, "attacker_tech": ["heavy_bombers"]}),
    ("1942-2e", {"bomber": 3}, None, {"target_value": 3, "aa": True,
                                      "defender_tech": ["radar"]}),
    ("1942-2e", {"bomber": 2}, None, {"target_value": 10,
                                      "attacker_tech": ["lhtr_heavy_bombers"]}),
    # 1940-2e: air battle, built-in AA, strategic 1d6 + 2, tactical 1d6 on bases, facility caps
    ("1940-2e", {"fighter": 1, "bomber": 1}, {"fighter": 1}, {"facility": "major"}),
    ("1940-2e", {"bomber": 2}, None, {"facility": "major"}),
    ("1940-2e", {"bomber": 3}, None, {"facility": "minor", "attacker_tech": ["heavy_bombers"]}),
    ("1940-2e", {"tactical_bomber": 2}, None, {"facility": "airbase"}),
    ("1940-2e", {"fighter": 2, "tactical_bomber": 1, "bomber": 2}, {"fighter": 2},
     {"facility": "navalbase"}),
    ("1940-2e", {"fighter": 2, "bomber": 3}, {"fighter": 3},
     {"facility": "major", "attacker_tech": ["jets"], "defender_tech": ["jets", "radar"]}),
    ("1940-2e", {"fighter": 1, "bomber": 2}, {"fighter": 2},
     {"facility": "major", "attacker_ool": "bomber,fighter"}),
    ("1940-2e", {"fighter": 2, "tactical_bomber": 2, "bomber": 1}, {"fighter": 2},
     {"facility": "airbase", "attacker_ool": "*^fighter;1^tactical_bomber"}),
    ("1940-2e", {"fighter": 3, "bomber": 4}, {"fighter": 4},
     {"facility": "major", "attacker_tech": ["heavy_bombers"]}),
    ("1940-2e", {"fighter": 1, "bomber": 1}, {"fighter": 3}, {"facility": "minor"}),
    ("1940-2e", {"tactical_bomber": 1, "bomber": 1}, {"fighter": 1},
     {"facility": "airbase", "attacker_ool": "bomber"}),
    ("1940-2e", {"bomber": 2}, {"fighter": 1}, {"facility": "major", "aa": True}),
    # low luck where no air battle is fought: AA and damage
    ("classic", {"bomber": 2}, None, {"aa": True, "dice": "low_luck"}),
    ("revised", {"bomber": 7}, None, {"target_value": 3, "aa": True, "dice": "low_luck"}),
    ("aa50", {"bomber": 4}, None, {"target_value": 5, "aa": True, "dice": "low_luck",
                                   "defender_tech": ["radar"],
                                   "attacker_tech": ["heavy_bombers"]}),
    ("1940-2e", {"bomber": 3, "tactical_bomber": 1}, None,
     {"facility": "airbase", "dice": "low_luck"}),
]
KEYS = ("expected_damage", "attacker_ipc_loss", "defender_ipc_loss", "tuv_swing",
        "bombers_over_target")


def _case_id(case):
    edition, attacker, defender, options = case
    armies = "+".join(f"{n}{u[:3]}" for u, n in attacker.items())
    if defender:
        armies += "-v-" + "+".join(f"{n}{u[:3]}" for u, n in defender.items())
    return f"{edition}:{armies}:" + ",".join(f"{k}={v}" for k, v in options.items())


def _assert_matches(result: RaidResult, expected: dict, tol: float = 1e-9) -> None:
    for key in KEYS:
        assert getattr(result, key) == pytest.approx(float(expected[key]), abs=tol), key
    law = dict(zip(result.damage_law[0].tolist(), result.damage_law[1].tolist(), strict=True))
    assert set(law) == set(expected["damage_distribution"])
    for damage, p in expected["damage_distribution"].items():
        assert law[damage] == pytest.approx(float(p), abs=tol), damage
    for side in ("attacker_survivors", "defender_survivors"):
        got = getattr(result, side)
        assert set(got) == set(expected[side]), side
        for unit, mean in expected[side].items():
            assert got[unit] == pytest.approx(float(mean), abs=tol), (side, unit)


# (every other case in the quick tier, all in the slow: tests/tiers.py)
@pytest.mark.parametrize("case", sampled([(c,) for c in CASES], 2, [_case_id(c) for c in CASES]))
def test_exact_matches_the_reference(rulesets, case):
    edition, attacker, defender, options = case
    expected = exact_raid(edition, attacker, defender, **options)
    result = _run(rulesets, edition, attacker, defender, method="exact", **options)
    assert result.method == "exact"
    _assert_matches(result, expected)


def test_auto_solves_exactly(rulesets):
    result = _run(rulesets, "1940-2e", {"fighter": 1, "bomber": 2}, {"fighter": 1},
                  facility="major")
    assert result.method == "exact" and result.trials is None and result.seed is None


# ---------------------------------------------------------------------------------------------
# Analytic anchors (docs/editions.md section 5)


def test_revised_one_bomber_value_two_with_an_aa_gun():
    # AA hits 1/6; the bomber deals min(d6, 2): 1 with 1/6, 2 with 5/6, E = 11/6
    result = raid("revised", "1 bomber", target_value=2, aa=True, method="exact")
    assert result.expected_damage == pytest.approx(5 / 6 * 11 / 6, abs=1e-12)
    assert result.to_dict()["damage_distribution"] == pytest.approx(
        {0: 1 / 6, 1: 5 / 36, 2: 25 / 36}, abs=1e-12)
    assert result.attacker_ipc_loss == pytest.approx(15 / 6, abs=1e-12)
    assert result.defender_ipc_loss == 0 and result.defender_survivors == {}


def test_1940_one_round_air_battle_one_escort_one_bomber_one_interceptor(rulesets):
    # Air battle, one round: the escort and the bomber roll at 1, the interceptor at 1.  The
    # interceptor dies with 1 - (5/6)^2 = 11/36; its one possible hit takes the escort (10
    # before 12), so the bomber always reaches the AA: shot down with 1/6, else 1d6 + 2 (11/2).
    result = _run(rulesets, "1940-2e", "1 fighter, 1 bomber", "1 fighter", facility="major",
                  method="exact")
    assert result.defender_survivors["fighter"] == pytest.approx(25 / 36, abs=1e-12)
    assert result.defender_ipc_loss == pytest.approx(10 * 11 / 36, abs=1e-12)
    assert result.attacker_survivors == pytest.approx({"fighter": 5 / 6, "bomber": 5 / 6},
                                                      abs=1e-12)
    assert result.attacker_ipc_loss == pytest.approx(10 / 6 + 12 / 6, abs=1e-12)
    assert result.expected_damage == pytest.approx(5 / 6 * 11 / 2, abs=1e-12)
    assert result.tuv_swing == pytest.approx(55 / 18 - 11 / 3, abs=1e-12)


def test_1940_air_battle_is_one_round(rulesets):
    # 1 bomber v 3 interceptors: one round only, so the bomber survives the air battle with
    # (5/6)^3 even though the interceptors would win a longer battle
    result = _run(rulesets, "1940-2e", "1 bomber", "3 fighter", facility="major",
                  method="exact")
    assert result.bombers_over_target == pytest.approx((5 / 6) ** 3 * 5 / 6, abs=1e-12)
    assert result.defender_survivors["fighter"] == pytest.approx(3 - 1 / 6, abs=1e-12)


def test_air_battle_rules_use_the_air_values(rulesets):
    air = air_battle_rules(rulesets["1940-2e"]).with_techs(["jets"])
    fighter, bomber = air.units["fighter"], air.units["bomber"]
    assert (fighter.attack, fighter.defense) == (2, 2)
    assert (bomber.attack, bomber.defense, bomber.attack_dice) == (1, 0, 1)
    heavy = air_battle_rules(rulesets["1940-2e"]).with_techs(["heavy_bombers"]).units["bomber"]
    assert (heavy.attack, heavy.attack_dice, heavy.best_die) == (1, 1, False)
    assert air.supports == ()


# ---------------------------------------------------------------------------------------------
# Monte Carlo within 4 standard errors of the reference's exact values

MC_CASES = [
    ("revised", {"bomber": 3}, None, {"target_value": 4, "aa": True,
                                      "attacker_tech": ["heavy_bombers"]}),
    ("classic", {"bomber": 2}, None, {"aa": True}),
    ("aa50", {"bomber": 3}, None, {"target_value": 3, "aa": True,
                                   "attacker_tech": ["lhtr_heavy_bombers"]}),
    ("1942-2e", {"bomber": 3}, None, {"target_value": 4, "defender_tech": ["radar"]}),
    ("1940-2e", {"fighter": 2, "tactical_bomber": 1, "bomber": 2}, {"fighter": 2},
     {"facility": "airbase"}),
    ("1940-2e", {"fighter": 2, "bomber": 3}, {"fighter": 3},
     {"facility": "major", "attacker_tech": ["jets", "heavy_bombers"],
      "defender_tech": ["radar"]}),
    ("revised", {"bomber": 7}, None, {"target_value": 3, "aa": True, "dice": "low_luck"}),
]


@pytest.mark.parametrize("case", MC_CASES, ids=_case_id)
def test_monte_carlo_within_four_standard_errors(rulesets, case):
    edition, attacker, defender, options = case
    expected = exact_raid(edition, attacker, defender, **options)
    trials = MC_TRIALS
    result = _run(rulesets, edition, attacker, defender, method="mc", trials=trials, seed=11,
                  **options)
    assert result.method == "mc" and result.trials == trials and result.seed == 11
    assert_mc_agrees(result, expected, probabilities=(), means=KEYS)
    for key in KEYS:
        value, se = getattr(result, key), result.stderr[key]
        assert result.ci95[key] == pytest.approx((value - 1.959963984540054 * se,
                                                  value + 1.959963984540054 * se))
    law = dict(zip(result.damage_law[0].tolist(), result.damage_law[1].tolist(), strict=True))
    damages = expected["damage_distribution"]
    assert_mc_agrees({d: law.get(d, 0.0) for d in damages}, damages, probabilities=damages,
                     means=(), trials=trials)
    assert set(law) <= set(expected["damage_distribution"])
    for side in ("attacker_survivors", "defender_survivors"):
        assert set(getattr(result, side)) == set(expected[side])


def test_monte_carlo_standard_errors_are_positive_where_there_is_noise(rulesets):
    result = _run(rulesets, "1940-2e", "2 fighter 2 bomber", "2 fighter", facility="major",
                  method="mc", trials=50_000, seed=3)
    assert all(result.stderr[key] > 0 for key in KEYS)


def test_monte_carlo_is_reproducible(rulesets):
    def run(seed):
        r = _run(rulesets, "1940-2e", "2 fighter 2 bomber", "2 fighter", facility="major",
                 method="mc", trials=30_000, seed=seed)
        return {k: v for k, v in r.to_dict().items() if k != "elapsed_s"}

    assert run(5) == run(5)
    assert run(5) != run(6)
    no_air_battle = [raid("revised", "3 bomber", target_value=3, aa=True, method="mc",
                          trials=30_000, seed=9).to_dict()["damage_distribution"]
                     for _ in range(2)]
    assert no_air_battle[0] == no_air_battle[1]


def test_monte_carlo_does_not_depend_on_the_thread_count(rulesets):
    before = battlecalc.thread_count()
    results = []
    try:
        for threads in (1, 3):
            battlecalc.set_threads(threads)
            r = _run(rulesets, "1940-2e", "3 fighter 2 bomber", "3 fighter",
                     facility="major", method="mc", trials=40_000, seed=21)
            results.append({k: v for k, v in r.to_dict().items() if k != "elapsed_s"})
    finally:
        battlecalc.set_threads(before)
    assert results[0] == results[1]


def test_a_random_seed_is_reported():
    result = raid("revised", "2 bomber", target_value=3, method="mc", trials=1000)
    assert isinstance(result.seed, int)
    again = raid("revised", "2 bomber", target_value=3, method="mc", trials=1000,
                 seed=result.seed)
    assert again.to_dict()["damage_distribution"] == result.to_dict()["damage_distribution"]


def test_monte_carlo_reports_progress(rulesets):
    calls = []
    _run(rulesets, "1940-2e", "1 fighter 1 bomber", "1 fighter", facility="major", method="mc",
         trials=300_000, seed=1, progress=lambda *args: calls.append(args))
    assert calls[-1] == (300_000, 300_000, "AA fire and damage")


# ---------------------------------------------------------------------------------------------
# Low luck in the air battle


def test_low_luck_air_battle_matches_the_reference(rulesets):
    for attacker, defender in (({"fighter": 2, "bomber": 3}, {"fighter": 2}),
                               ({"fighter": 6, "bomber": 1}, {"fighter": 4})):
        expected = exact_raid("1940-2e", attacker, defender, facility="major",
                              dice="low_luck")
        _assert_matches(_run(rulesets, "1940-2e", attacker, defender, facility="major",
                             dice="low_luck", method="exact"), expected)


# ---------------------------------------------------------------------------------------------
# Views


def test_views(rulesets):
    result = _run(rulesets, "1940-2e", "1 fighter 1 bomber", "1 fighter", facility="major",
                  method="exact")
    data = result.to_dict()
    assert list(data)[:6] == ["rules", "method", "trials", "seed", "attacker", "defender"]
    for key in ("expected_damage", "attacker_ipc_loss", "defender_ipc_loss", "tuv_swing",
                "attacker_survivors", "defender_survivors", "stderr", "ci95",
                "damage_distribution", "damage_percentiles", "bombers_over_target"):
        assert key in data
    assert data["facility"] == "major" and data["aa_fires"] is True
    assert data["damage_percentiles"] == {"p10": 0, "p50": 5, "p90": 8}
    assert json.loads(result.to_json())["damage_distribution"]["0"] == pytest.approx(1 / 6)
    frame = result.damage_distribution
    assert list(frame.columns) == ["damage", "probability"]
    assert frame.probability.sum() == pytest.approx(1.0)
    assert frame.damage.tolist() == [0, 3, 4, 5, 6, 7, 8]
    row = result.flat_row()
    # survivor columns: every unit of the edition that may be on that side of a raid
    assert [k for k in row if k.startswith("attacker_survivors.")] == [
        f"attacker_survivors.{u}" for u in rulesets["1940-2e"].units
        if u in ("fighter", "tactical_bomber", "bomber")]
    assert row["attacker_survivors.tactical_bomber"] == 0.0
    assert [k for k in row if k.startswith("defender_survivors.")] == [
        "defender_survivors.fighter"]
    assert not any(k.startswith("damage_distribution") for k in row)
    assert result.to_frame().shape == (1, len(row))
    assert result.to_csv().splitlines()[0] == ",".join(row)
    law = result.distribution_csv("damage").splitlines()
    assert law[0] == "damage,probability" and len(law) == 8
    assert law[1].split(",")[0] == "0"
    assert float(law[1].split(",")[1]) == pytest.approx(1 / 6, abs=1e-12)
    table = result.table()
    assert table.splitlines()[0] == ("1940-2e: 1 fighter, 1 bomber  raiding  a major "
                                     "industrial complex, intercepted by 1 fighter")
    assert "damage cap  20 in all" in table
    assert "AA fire     built-in AA, hits on 1" in table
    assert "damage     4.583 IPC on average" in table


def test_table_of_a_revised_raid():
    result = raid("revised", "2 bomber", target_value=3, aa=True, method="exact")
    lines = result.table().splitlines()
    assert lines[0] == "revised: 2 bomber  raiding  a territory of production value 3"
    assert lines[1] == "damage cap  3 per bomber (the production value)"
    assert lines[2] == "AA fire     the territory's AA gun, hits on 1"
    assert "intercepted" not in result.table()
    no_gun = raid("revised", "2 bomber", target_value=3, method="exact")
    assert "AA fire     none" in no_gun.table()


def test_table_of_a_low_luck_raid_says_so():
    # low-luck damage dice roll 3 or 4, capped at the value 2: every bomber that survives the
    # AA gun (strength 1: hit with probability 1/6) deals exactly 2
    result = raid("revised", "1 bomber", target_value=2, aa=True, dice="low_luck",
                  method="exact")
    assert result.expected_damage == pytest.approx(5 / 6 * 2, abs=1e-12)
    assert LOW_LUCK_LINE in result.table().splitlines()
    standard = raid("revised", "1 bomber", target_value=2, aa=True, method="exact")
    assert LOW_LUCK_LINE not in standard.table()


def test_csv_rows_of_one_edition_share_a_header():
    a = raid("revised", "1 bomber", target_value=1, method="exact").to_csv().splitlines()[0]
    b = raid("revised", "5 bomber", target_value=9, aa=True, method="mc", trials=1000,
             seed=1).to_csv().splitlines()[0]
    assert a == b


def test_public_names():
    assert battlecalc.raid is raid
    assert battlecalc.RaidResult is RaidResult
    assert "raid" in battlecalc.__all__


# ---------------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize("edition, kwargs, message", [
    ("revised", {"attacker": "1 bomber 1 fighter", "target_value": 2},
     "no air battle in revised: fighter cannot escort a raid"),
    ("1942-2e", {"attacker": "1 bomber", "defender": "1 fighter", "target_value": 2},
     "no air battle in 1942-2e: fighter cannot intercept a raid"),
    ("revised", {"attacker": "1 fighter", "target_value": 2}, "no air battle in revised"),
    ("revised", {"attacker": "2 infantry 1 bomber", "target_value": 2},
     "infantry cannot take part in a raid in revised"),
    ("revised", {"attacker": "1 bomber", "defender": "1 aa", "target_value": 2},
     "aa does not defend against raids in revised: say so with aa=True (--aa) instead"),
    ("1942-2e", {"attacker": "1 bomber", "defender": "1 aa", "target_value": 2},
     "the target's built-in AA fires instead"),
    ("revised", {"attacker": "1 bomber"}, "a raid in revised needs the target's production "
     "value"),
    ("revised", {"attacker": "1 bomber", "target_value": -1}, "target value must be between 0"),
    ("revised", {"attacker": "1 bomber", "target_value": 2.5}, "target value must be a whole"),
    ("revised", {"attacker": "1 bomber", "target_value": 2, "facility": "major"},
     "revised has no facilities to choose from"),
    ("revised", {"attacker": "1 bomber", "target_value": 2, "aa": "yes"}, "aa must be true or"),
    ("revised", {"attacker": "1 bomber", "target_value": 2, "dice": "loaded"},
     "dice must be one of standard, low_luck"),
    ("revised", {"attacker": "1 bomber", "target_value": 2, "attacker_tech": "radar"},
     "unknown technology 'radar' for revised"),
    ("revised", {"attacker": "1 bomber", "target_value": 2, "attacker_ool": "bomber,tnak"},
     "unknown unit 'tnak' in revised; did you mean 'tank'"),
    ("revised", {"attacker": "1 bomber", "target_value": 2, "method": "guess"},
     "method must be one of"),
    ("revised", {"attacker": "", "target_value": 2}, "a raid needs at least one bomber"),
    ("formula", {"attacker": "1 army"}, "formula has no strategic bombing raids"),
])
def test_bad_input(edition, kwargs, message):
    with pytest.raises(BattleInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        raid(edition, **kwargs)


def test_bad_input_1940(rulesets):
    cases = [
        ({"attacker": "1 bomber"}, "a raid in 1940-2e needs a facility to bomb"),
        ({"attacker": "1 bomber", "facility": "factory"}, "unknown facility 'factory' in "
         "1940-2e; known: major, minor, airbase, navalbase"),
        ({"attacker": "1 tac", "facility": "major"},
         "tactical_bomber raids only airbase, navalbase in 1940-2e, not major"),
        ({"attacker": "2 fighter"}, "a raid needs at least one bomber"),
        ({"attacker": "1 bomber", "defender": "1 bomber", "facility": "major"},
         "bomber cannot intercept a raid in 1940-2e (interceptors: fighter)"),
        ({"attacker": "1 bomber 1 tank", "facility": "major"},
         "tank cannot take part in a raid in 1940-2e (bombers: "),
    ]
    for kwargs, message in cases:
        with pytest.raises(BattleInputError) as info:
            raid(rulesets["1940-2e"], **kwargs)
        assert message in str(info.value)


def test_ignored_inputs_are_noted(rulesets):
    assert raid("1942-2e", "1 bomber", target_value=2, aa=True).notes == (
        "aa is ignored in 1942-2e: the target's built-in AA fires at every raid",)
    classic = raid(rulesets["classic"], "1 bomber", target_value=4, method="exact")
    assert classic.notes == ("the target value is ignored in classic: no damage cap depends "
                             "on it",)
    assert classic.target_value is None
    assert raid("revised", "1 bomber", target_value=2).notes == ()


def test_make_raid_sequence_follows_the_order_of_losses(rulesets):
    spec = make_raid(rulesets["1940-2e"], "2 fighter 1 tac 2 bomber", "1 fighter",
                     facility="airbase", attacker_ool="bomber")
    assert spec.sequence == ("bomber", "bomber", "fighter", "fighter", "tactical_bomber")
    assert spec.bombers == ("bomber", "bomber", "tactical_bomber")


# ---------------------------------------------------------------------------------------------
# The schema


def _minimal(**extra):
    raw = {"format": 1, "id": "x", "name": "X",
           "units": {"bomber": {"cost": 12, "attack": 4, "defense": 1, "domain": "air",
                                "raid_dice": 1}}}
    raw.update(extra)
    return raw


def test_schema_defaults_and_facilities():
    ruleset = validate(_minimal(facilities={"major": {"max_damage": 20}}), "x.toml")
    bomber = ruleset.units["bomber"]
    assert (bomber.raid_dice, bomber.raid_best_die, bomber.raid_bonus, bomber.raid_targets,
            bomber.air_attack, bomber.air_defense) == (1, False, 0, (), 0, 0)
    assert ruleset.facilities["major"].max_damage == 20
    assert ruleset.flags["raid_aa"] == "none"
    assert ruleset.flags["raid_damage_cap"] == "none"
    assert ruleset.flags["air_battle"] is False


def test_schema_errors():
    raw = _minimal(rules={"raid_aa": "built_in", "raid_damage_cap": "facility",
                          "air_battle": "yes"},
                   facilities={"major": {"max_damage": -1, "colour": "red"}})
    raw["units"]["bomber"]["raid_dice"] = 4
    raw["units"]["tactical_bomber"] = {"cost": 11, "attack": 3, "defense": 3, "domain": "air",
                                       "raid_dice": 1, "raid_targets": ["factory"]}
    with pytest.raises(RulesFileError) as info:
        validate(raw, "x.toml")
    message = str(info.value)
    for fragment in ("x.rules.air_battle: expected one of True, False, got 'yes'",
                     "x.facilities.major.max_damage: expected an integer 0..1000, got -1",
                     "x.facilities.major.colour: unknown key",
                     "x.units.bomber.raid_dice: expected an integer 0..3, got 4",
                     "x.units.tactical_bomber.raid_targets: unknown facility 'factory'",
                     "x.rules.raid_aa: 'built_in' needs a unit with aa_value"):
        assert fragment in message, fragment
    no_facilities = _minimal(rules={"raid_damage_cap": "facility"})
    with pytest.raises(RulesFileError, match='raid_damage_cap: "facility" needs'):
        validate(no_facilities, "x.toml")


def test_facilities_merge_onto_a_base(tmp_path, rulesets):
    path = tmp_path / "child.toml"
    base = rulesets["paths"]["1940-2e"]
    path.write_text(f'base = "{base}"\nformat = 1\nid = "child"\nname = "Child"\n'
                    '[facilities.minor]\nmax_damage = 8\n', encoding="utf-8")
    child = load_rules_file(path)
    assert child.facilities["minor"].max_damage == 8
    assert child.facilities["minor"].description == "minor industrial complex"
    assert child.facilities["major"].max_damage == 20


def test_shipped_raid_settings():
    revised, second = load_rules("revised"), load_rules("1942-2e")
    assert (revised.flags["raid_aa"], revised.flags["raid_damage_cap"]) == (
        "territory_gun", "target_value_per_bomber")
    assert (second.flags["raid_aa"], second.flags["raid_damage_cap"]) == (
        "built_in", "twice_target_value")
    assert revised.with_techs(["heavy_bombers"]).units["bomber"].raid_dice == 2
    heavy = second.with_techs(["heavy_bombers"]).units["bomber"]
    assert (heavy.raid_dice, heavy.raid_best_die) == (2, True)


@pytest.mark.parametrize("edition", ["classic", "aa50", "1940-2e"])
def test_raid_test_files_match_the_shipped_editions(rulesets, edition):
    """Once the edition is shipped, its raid settings must be those of the test file."""
    if edition not in list_editions():
        pytest.skip(f"{edition}.toml is not shipped on this branch")
    shipped, test = load_rules(edition), rulesets["test_files"][edition]
    for flag in ("raid_aa", "raid_damage_cap", "air_battle"):
        assert shipped.flags[flag] == test.flags[flag], flag
    assert dict(shipped.facilities) == dict(test.facilities)
    fields = ("cost", "raid_dice", "raid_best_die", "raid_bonus", "raid_targets", "air_attack",
              "air_defense")
    for name in ("fighter", "tactical_bomber", "bomber"):
        if name in test.units and (test.units[name].raid_dice or test.units[name].air_attack):
            for f in fields:
                assert getattr(shipped.units[name], f) == getattr(test.units[name], f), (name, f)
    for tech in ("heavy_bombers", "lhtr_heavy_bombers", "jets", "radar"):
        if tech in test.techs and tech in shipped.techs:  # (a test file may have more)
            for unit in ("fighter", "bomber", "aa"):
                a = shipped.with_techs([tech]).units[unit]
                b = test.with_techs([tech]).units[unit]
                for f in (*fields[1:], "aa_value"):  # raid fields, not the test file's costs
                    assert getattr(a, f) == getattr(b, f), (tech, unit, f)


# ---------------------------------------------------------------------------------------------
# Command line


def _invoke(*args):
    return invoke(*args)


def test_cli_table_json_csv(rulesets):
    result = _invoke("raid", *rulesets["cli"]["1940-2e"], "-a", "1 fighter 1 bomber", "-d",
                     "1 fighter", "--facility", "major")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert "damage     4.583 IPC on average" in result.stdout
    data = json.loads(_invoke("raid", "--rules", "revised", "-a", "1 bmb", "--target-value",
                              "2", "--aa", "--format", "json").stdout)
    assert data["expected_damage"] == pytest.approx(55 / 36)
    assert data["method"] == "exact"
    law = _invoke("raid", "--rules", "revised", "-a", "1 bmb", "--target-value", "2", "--aa",
                  "--format", "csv", "--distribution", "damage").stdout.splitlines()
    assert law[0] == "damage,probability"
    assert [line.split(",")[0] for line in law[1:]] == ["0", "1", "2"]
    assert float(law[3].split(",")[1]) == pytest.approx(25 / 36)
    row = _invoke("raid", "--rules", "1942-2e", "-a", "2 bmb", "--target-value", "3",
                  "--method", "mc", "--trials", "1e4", "--seed", "4", "--format", "csv")
    assert row.exit_code == 0 and row.stderr == ""
    header, values = row.stdout.splitlines()
    assert dict(zip(header.split(","), values.split(","), strict=True))["seed"] == "4"


def test_cli_output_file_and_tech(tmp_path, rulesets):
    out = tmp_path / "raid.json"
    result = _invoke("raid", *rulesets["cli"]["1940-2e"], "-a",
                     "1 fighter 1 bomber", "-d", "1 fighter", "--facility", "major",
                     "--defender-tech", "jets", "--format", "json", "-o", str(out))
    assert result.exit_code == 0 and result.stdout == ""
    data = json.loads(out.read_text())
    assert data["attacker_survivors"]["fighter"] == pytest.approx(2 / 3)
    assert data["defender_tech"] == ["jets"]


def test_cli_warnings(rulesets):
    result = _invoke("raid", "--rules", "1942-2e", "-a", "1 bmb", "--target-value", "2",
                     "--aa", "--seed", "3")
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        "Warning: --seed is ignored with --method exact (no dice are rolled)",
        "Warning: aa is ignored in 1942-2e: the target's built-in AA fires at every raid"]


@pytest.mark.parametrize("args, message", [
    (["--rules", "revised", "-a", "1 bmb 1 ftr", "--target-value", "2"],
     "Error: no air battle in revised: fighter cannot escort a raid"),
    (["--rules", "revised", "-a", "1 bmb"], "Error: a raid in revised needs the target's"),
    (["--rules", "revised", "-a", "1 bmb", "--target-value", "2", "--facility", "major"],
     "Error: revised has no facilities"),
    (["--rules", "revised", "-a", "1 bmb", "--target-value", "x"], "Error: Invalid value for "
     "'--target-value'"),
    (["--rules", "revised", "-a", "1 bmb", "--target-value", "2", "--distribution", "damage"],
     "Error: --distribution needs --format csv"),
    (["--rules", "revised", "--target-value", "2"], "Error: Missing option '--attacker'"),
    (["-a", "1 bmb", "--target-value", "2"], "Error: Missing option '--rules'"),
])
def test_cli_bad_input(args, message):
    result = _invoke("raid", *args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), lines


def test_cli_bad_1940_input(rulesets):
    result = _invoke("raid", *rulesets["cli"]["1940-2e"], "-a", "1 tac",
                     "--facility", "major")
    assert result.exit_code == 2
    assert result.stderr == ("Error: tactical_bomber raids only airbase, navalbase in 1940-2e, "
                             "not major\n")


def test_raid_damage_law_sums_to_one_for_a_large_raid():
    # 40 Revised heavy bombers with the gun: a wide law (2d6 each, the cap never reached)
    result = raid(load_rules("revised"), "40 bomber", target_value=1000, aa=True,
                  attacker_tech="heavy_bombers", method="exact")
    assert result.damage_law[1].sum() == pytest.approx(1.0, abs=1e-12)
    assert result.expected_damage == pytest.approx(40 * 5 / 6 * 7, rel=1e-12)
    assert np.all(np.diff(result.damage_law[0]) > 0)


def test_cli_units_and_rules_list_the_raid_data(rulesets):
    edition = rulesets["cli"]["1940-2e"]
    rows = {r["name"]: r for r in json.loads(
        _invoke("units", *edition, "--format", "json").stdout)}
    assert rows["bomber"]["abilities"].endswith("raids: 1 die +2; air battle 1/0")
    assert rows["tactical_bomber"]["abilities"].endswith(
        "raids: 1 die (airbase, navalbase only); air battle 1/0")
    assert rows["fighter"]["abilities"].endswith("air battle 1/1")
    revised = {r["name"]: r for r in json.loads(
        _invoke("units", "--rules", "revised", "--format", "json").stdout)}
    assert revised["bomber"]["abilities"] == "raids: 1 die"
    listed = json.loads(_invoke("rules", *edition, "--format", "json").stdout)
    facilities = {r["name"]: r["value"] for r in listed if r["kind"] == "facility"}
    assert facilities == {"major": "20", "minor": "6", "airbase": "6", "navalbase": "6"}
    flags = {r["name"]: r["value"] for r in listed if r["kind"] == "flag"}
    assert (flags["raid_aa"], flags["raid_damage_cap"], flags["air_battle"]) == (
        "built_in", "facility", "True")


@pytest.mark.fresh("raid_without_air_battle_loads_no_numba")
def test_a_raid_without_air_battle_does_not_load_the_engine(fresh):
    # (a fresh interpreter, tests/fresh_checks.py: Monte Carlo, no numba)
    assert fresh == ["mc", False]
