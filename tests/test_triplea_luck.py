"""The luck of a TripleA game: the dice of a real history, and the luck arithmetic of battles
checked by hand (battlecalc.triplea.luck)."""

from __future__ import annotations

import json
import math

import pytest
from helpers import assert_usage_error, invoke
from test_triplea import (  # noqa: F401  (javaobj: skips with them)
    CASUALTY_SELECTION,
    LAND_COMBAT,
    RAID_AFTER_AA,
    SAVES,
    START,
    javaobj,
    needs,
)

from battlecalc import simulate
from battlecalc.triplea.luck import FoughtBattle, battle_luck, luck_totals, read_luck

pytestmark = pytest.mark.skipif(not SAVES.is_dir(), reason="TripleA fixtures not found")


def test_dice_of_the_west_russia_history():
    """The history holds the Russians' technology roll ('6,6,4,1 ... gets 2 hits') and their
    first volley in West Russia ('6,2,2,6,6,6,4,4,6,1,6': one 1, a hit).  By hand: 5 infantry
    at 1, 1 infantry (with the artillery) and the artillery at 2, 3 tanks and a fighter at 3."""
    luck = read_luck(LAND_COMBAT)
    probabilities = [1 / 6] * 5 + [2 / 6] * 2 + [3 / 6] * 4
    expected = sum(probabilities)
    variance = sum(p * (1 - p) for p in probabilities)
    assert expected == pytest.approx(3.5)
    assert luck.dice["rolls"] == 1 and luck.dice["dice"] == 11 and luck.dice["hits"] == 1
    assert luck.dice["expected_hits"] == pytest.approx(expected, abs=1e-12)
    assert luck.dice["z"] == pytest.approx((1 - expected) / math.sqrt(variance), abs=1e-12)
    assert luck.dice_by_nation == {"Russians": luck.dice}
    assert (luck.other_rolls["rolls"], luck.other_rolls["dice"],
            luck.other_rolls["hits"]) == (1, 4, 2)
    assert luck.battles == []  # West Russia is not over: no battle record yet


def test_luck_of_two_battles_by_hand():
    """1 infantry against 1 infantry (Revised): the attacker hits on 1, the defender on 1-2.
    Per round the battle ends with probability 1 - (5/6)(4/6) = 16/36: the attacker wins
    with 1/4, the defender with 5/8, both die with 1/8.  TUV swing +3, -3 or 0; expected
    3 (1/4 + 1/8) - 3 (5/8 + 1/8) = -9/8."""
    law = simulate("revised", "1 inf", "1 inf", method="exact")
    values, probabilities = law.swing_law
    assert dict(zip(values.tolist(), probabilities.tolist(), strict=True)) == pytest.approx(
        {3: 1 / 4, 0: 1 / 8, -3: 5 / 8}, abs=1e-12)
    assert law.tuv_swing == pytest.approx(-9 / 8, abs=1e-12)
    won = FoughtBattle("Karelia", 1, ["Russians"], ["Germans"], {"infantry": 1},
                       {"infantry": 1}, attacker_lost_tuv=0, defender_lost_tuv=3)
    lost = FoughtBattle("Karelia", 2, ["Germans"], ["Russians"], {"infantry": 1},
                        {"infantry": 1}, attacker_lost_tuv=3, defender_lost_tuv=0)
    first = battle_luck(won, law.swing_law, law.tuv_swing)
    second = battle_luck(lost, law.swing_law, law.tuv_swing)
    assert first["actual_tuv_swing"] == 3 and first["luck"] == pytest.approx(33 / 8)
    assert first["percentile"] == pytest.approx(3 / 4 + 1 / 4 / 2)  # P(<3) + P(=3)/2
    assert second["luck"] == pytest.approx(-3 + 9 / 8)
    assert second["percentile"] == pytest.approx(5 / 8 / 2)
    totals = luck_totals([first, second])
    # the Russians won as attacker (+33/8) and held as defender (+15/8)
    assert totals == pytest.approx({"Russians": 6.0, "Germans": -6.0})


def test_cli_luck():
    result = invoke("luck", str(LAND_COMBAT), "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"dice", "battles"} <= set(data)
    assert set(data["dice"]) >= {"rolls", "dice", "hits", "expected_hits"}
    table = invoke("luck", str(START))
    assert "no battle fought in the history" in table.stdout
    assert_usage_error(invoke("luck", "/etc/hostname"), "not gzip data")


def test_plot_of_the_battles(tmp_path):
    pytest.importorskip("matplotlib")
    from battlecalc.triplea.luck import Luck, plot_luck

    law = simulate("revised", "1 inf", "1 inf", method="exact")
    won = FoughtBattle("Karelia", 1, ["Russians"], ["Germans"], {"infantry": 1},
                       {"infantry": 1}, attacker_lost_tuv=0, defender_lost_tuv=3)
    battle = battle_luck(won, law.swing_law, law.tuv_swing)
    # the law {-3: 5/8, 0: 1/8, +3: 1/4}: its 10th percentile is -3, its 90th +3
    assert (battle["swing_p10"], battle["swing_p90"]) == (-3, 3)
    luck = Luck("g", "revised", {}, {}, {}, [battle, battle])
    figure = plot_luck(luck)
    (points,) = [line for line in figure.axes[0].lines if line.get_gid() == "actual"]
    assert list(points.get_ydata()) == [3, 3]
    path = tmp_path / "luck.png"
    result = invoke("luck", str(LAND_COMBAT), "--plot", str(path))
    assert result.exit_code == 0, result.output
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert_usage_error(invoke("luck", str(LAND_COMBAT), "--plot", str(tmp_path / "x.gif")),
                       "must end in .png or .svg")


# ------------------------------------------------------------ a battle fought in a real game

def _west_russia_swing_law() -> dict[int, float]:
    """The TUV swing law of West Russia by hand (Revised, no retreat): 6 infantry (one with the
    artillery's support, at 2, the others at 1), 1 artillery at 2, 3 tanks and a fighter at 3
    attack 3 infantry and an artillery at 2 and a tank at 3.  Each side loses its cheapest unit
    first (infantry 3, artillery 4, tank 5, fighter 10 IPC); the battle goes on until a side has
    no unit left, so a state is (units the attacker lost, units the defender lost)."""
    a_costs = [3] * 6 + [4] + [5] * 3 + [10]
    d_costs = [3, 3, 3, 4, 5]

    def poisson_binomial(ps):
        law = [1.0]
        for p in ps:
            law = [a * (1 - p) + b * p for a, b in zip([*law, 0.0], [0.0, *law], strict=True)]
        return law

    def attacker_dice(lost):
        infantry = max(6 - lost, 0)
        artillery = 1 if lost < 7 else 0
        tanks = min(3, max(0, 10 - lost))
        fighter = 1 if lost < 11 else 0
        supported = min(infantry, artillery)
        return ([2 / 6] * supported + [1 / 6] * (infantry - supported) + [2 / 6] * artillery
                + [3 / 6] * (tanks + fighter))

    def defender_dice(lost):
        return [2 / 6] * max(3 - lost, 0) + [2 / 6] * (lost < 4) + [3 / 6] * (lost < 5)

    states = {(0, 0): 1.0}
    law: dict[int, float] = {}
    for total in range(0, len(a_costs) + len(d_costs) + 1):  # states in order of losses
        for (i, j), p in sorted(states.items()):
            if i + j != total:
                continue
            del states[(i, j)]
            if i == len(a_costs) or j == len(d_costs):
                swing = sum(d_costs[:j]) - sum(a_costs[:i])
                law[swing] = law.get(swing, 0.0) + p
                continue
            a_hits = poisson_binomial(attacker_dice(i))
            d_hits = poisson_binomial(defender_dice(j))
            stay = a_hits[0] * d_hits[0]  # nobody hits: the round is fought again
            for ha, pa in enumerate(a_hits):
                for hd, pd in enumerate(d_hits):
                    if ha or hd:
                        key = (min(i + hd, len(a_costs)), min(j + ha, len(d_costs)))
                        states[key] = states.get(key, 0.0) + p * pa * pd / (1 - stay)
    assert not states
    return law


@pytest.mark.parametrize("path", [CASUALTY_SELECTION, RAID_AFTER_AA], ids=lambda p: p.stem)
def test_luck_of_the_west_russia_battle_record(path):
    """Later in the game of the West Russia save: the battle fought to the end.  Its history
    says 'Russians attack with 3 armour, 1 artillery, 1 fighter and 6 infantry', 'Germans
    defend with 1 armour, 1 artillery and 3 infantry', then '1 infantry owned by the Russians
    and 1 infantry owned by the Germans lost', '1 artillery ..., 2 infantry ... and 1 armour
    owned by the Germans lost', 'Russians win', 'Battle score (TUV change) for attacker is 15';
    its battle record: attacker lost 3 TUV, defender 18.  By hand the actual swing is
    (3 * 3 + 4 + 5) - 3 = 15, the expected swing and the percentile of 15 come from the swing
    law above."""
    needs(path)
    luck = read_luck(path)
    (battle,) = luck.battles
    assert (battle["territory"], battle["round"]) == ("West Russia", 1)
    assert battle["nations"] == {"attacker": ["Russians"], "defender": ["Germans"]}
    assert battle["attacker"] == {"infantry": 6, "artillery": 1, "tank": 3, "fighter": 1}
    assert battle["defender"] == {"infantry": 3, "artillery": 1, "tank": 1}
    assert battle["actual_tuv_swing"] == 3 * 3 + 4 + 5 - 3 == 15
    law = _west_russia_swing_law()
    assert sum(law.values()) == pytest.approx(1.0, abs=1e-12)
    expected = sum(v * p for v, p in law.items())
    assert battle["expected_tuv_swing"] == pytest.approx(expected, abs=1e-12)
    percentile = sum(p for v, p in law.items() if v < 15) + law[15] / 2
    assert battle["percentile"] == pytest.approx(percentile, abs=1e-12)
    assert battle["luck"] == pytest.approx(15 - expected, abs=1e-12)
    assert luck.totals == pytest.approx({"Russians": 15 - expected, "Germans": expected - 15},
                                        abs=1e-12)
    # the same expectation from battlecalc run, written as the history states the armies
    run = invoke("run", "--rules", "revised", "-a", "6 inf 1 art 3 armour 1 fighter", "-d",
                 "3 inf 1 art 1 armour", "--method", "exact", "--format", "json")
    assert json.loads(run.stdout)["tuv_swing"] == pytest.approx(expected, abs=1e-12)


def test_dice_of_a_real_history_with_battles():
    """Every combat roll of revised_during_casualty_selection's history, each die with the
    value it hit at (TripleA's rolledAt), written here from the history's texts and the units
    that rolled: West Russia (two rounds, both sides), the British AA gun at the bomber over
    the United Kingdom, the Russians' AA gun and the two German fighters in Caucasus."""
    needs(CASUALTY_SELECTION)
    rolls = [  # (nation, dice, the value each hits at)
        ("Russians", [6, 2, 2, 6, 6, 6, 4, 4, 6, 1, 6], [2, 1, 1, 1, 1, 1, 2, 3, 3, 3, 3]),
        ("Germans", [2, 6, 3, 4, 4], [2, 2, 2, 2, 3]),
        ("Russians", [1, 3, 4, 5, 6, 5, 1, 2, 1, 5], [2, 1, 1, 1, 1, 2, 3, 3, 3, 3]),
        ("Germans", [3, 5, 5, 5], [2, 2, 2, 3]),
        ("British", [4], [1]),
        ("Russians", [3, 1, 6], [1, 1, 1]),
        ("Germans", [3, 6], [3, 3]),
    ]
    luck = read_luck(CASUALTY_SELECTION)
    assert set(luck.dice_by_nation) == {nation for nation, _, _ in rolls}
    for name, tally in [("all", luck.dice), *luck.dice_by_nation.items()]:
        mine = [(dice, at) for nation, dice, at in rolls if name in ("all", nation)]
        hits = sum(d <= a for dice, at in mine for d, a in zip(dice, at, strict=True))
        ps = [a / 6 for _, at in mine for a in at]
        assert (tally["rolls"], tally["dice"], tally["hits"]) == (
            len(mine), len(ps), hits), name
        assert tally["expected_hits"] == pytest.approx(sum(ps), abs=1e-12), name
        z = (hits - sum(ps)) / math.sqrt(sum(p * (1 - p) for p in ps))
        assert tally["z"] == pytest.approx(z, abs=1e-12), name
    assert luck.dice["hits"] == 8 and luck.dice["expected_hits"] == pytest.approx(71 / 6)
    # the technology roll ('Russians roll 6,6,4,1 for Long Range Aircraft and gets 2 hits')
    assert (luck.other_rolls["rolls"], luck.other_rolls["dice"],
            luck.other_rolls["hits"]) == (1, 4, 2)
