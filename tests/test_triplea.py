"""TripleA saves: reading the board, the battles in the edition's names, solving them.

The saves are GPL-3 data of the TripleA projects, read from ``../shared/fixtures/triplea/``
(beside the project); the tests skip when that folder or javaobj-py3 is absent.  Expected
values come from an independent walk of the Java objects written here (not the package's
reader), from the save's own fire step (the units it lists as alive), and for the battle in
progress from a hand mixture: the defender's volley still due, computed from binomials, then
fresh battles from the next round.
"""

from __future__ import annotations

import functools
import gzip
import io
import json
import os
import re
import sys
from collections import Counter
from dataclasses import replace
from math import comb
from pathlib import Path

import pytest
from helpers import assert_mc_agrees, assert_usage_error, invoke
from tiers import sampled

from battlecalc import simulate
from battlecalc.errors import BattleInputError
from battlecalc.results import wilson_interval


def _fixtures() -> Path:
    """``shared/fixtures/triplea`` beside the project (CI: ``../shared``), or beside a folder
    above it (a git worktree of the project lies deeper than its main checkout); the folder
    $TRIPLEA_FIXTURES names instead, laid out alike (saves/, maps/), where it is set."""
    if os.environ.get("TRIPLEA_FIXTURES"):
        return Path(os.environ["TRIPLEA_FIXTURES"])
    root = Path(__file__).resolve().parents[1]
    for folder in root.parents:
        candidate = folder / "shared" / "fixtures" / "triplea"
        if candidate.is_dir():
            return candidate
    return root.parent / "shared" / "fixtures" / "triplea"


FIXTURES = _fixtures()
SAVES = FIXTURES / "saves"
LAND_COMBAT = SAVES / "revised_during_land_to_land_combat.tsvg"
START = SAVES / "revisted_start_of_game.tsvg"
GLOBAL = SAVES / "wwii_global_2nd_edition_during_g1_politics.tsvg"
# Two saves of the same game later on (triplea-game/assets @ 662cb38, test_data/save_games/2.x/,
# as the three above): West Russia fought to the end (its battle record kept), the Germans'
# turn begun.  The tests that read them skip where the fixtures lack them.
CASUALTY_SELECTION = SAVES / "revised_during_casualty_selection.tsvg"
RAID_AFTER_AA = SAVES / "revised_during_bombing_raid_after_aa_roll.tsvg"


def needs(path: Path) -> None:
    """Skip unless the fixtures hold the save `path` (a later addition to them)."""
    if not path.is_file():
        pytest.skip(f"{path.name} not in the TripleA fixtures (from triplea-game/assets @ "
                    "662cb38, test_data/save_games/2.x/)")

pytestmark = pytest.mark.skipif(not SAVES.is_dir(),
                                reason=f"TripleA fixtures not found at {FIXTURES}")
javaobj = pytest.importorskip("javaobj.v2", reason="javaobj-py3 (battlecalc[triplea]) absent")

from battlecalc.triplea import game as game_module  # noqa: E402
from battlecalc.triplea import read_game  # noqa: E402
from battlecalc.triplea import save as save_module  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _each_save_parsed_once():
    """Java object streams take 0.1-0.5 s of CPU to read: within this module, each save (the
    same path and the same bytes) is read by read_save once and its SaveData (frozen) reused.
    The result is the same as a fresh read (read_save is deterministic); a file of other
    bytes, another path or a fifo goes to the reader as before, and so does every read while
    a test hides javaobj."""
    real = save_module.read_save
    read = {}

    def read_save(path, *args, **kwargs):
        target = Path(path)
        if (sys.modules.get("javaobj.v2") is None or not target.is_file()
                or target.is_symlink() or target.stat().st_size > 1 << 20):
            return real(path, *args, **kwargs)
        key = (str(path), target.read_bytes(), args, tuple(sorted(kwargs.items())))
        if key not in read:
            read[key] = real(path, *args, **kwargs)
        return read[key]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(save_module, "read_save", read_save)
        patch.setattr(game_module, "read_save", read_save)
        yield

# ------------------------------------------------------------ an independent walk of a save

def _fields(obj) -> dict:
    return {str(d.name): v for part in obj.field_data.values() for d, v in part.items()}


@functools.cache
def _walk_territories(path) -> dict[str, Counter]:
    """{territory: Counter((nation, TripleA unit, hits))}, straight from the Java objects."""
    with gzip.open(path) as handle:
        objects = javaobj.load(handle)
    game_data = objects[1]
    found = {}
    for territory in _fields(_fields(game_data)["map"])["territories"]:
        t = _fields(territory)
        counts = Counter()
        for unit in _fields(t["unitCollection"])["units"]:
            u = _fields(unit)
            counts[(str(_fields(u["owner"])["name"]), str(_fields(u["type"])["name"]),
                    u["hits"])] += 1
        found[str(t["name"])] = counts
    return found


def _as_counter(territory: dict) -> Counter:
    return Counter({(u["nation"], u["unit"], u["hits"]): u["count"] for u in territory["units"]})


# (the start of the game in the quick tier; the battle in progress and Global 1940 in the slow)
@pytest.mark.parametrize("path", [*sampled([(START,), (LAND_COMBAT,)], 2),
                                  pytest.param(GLOBAL, marks=pytest.mark.slow)],
                         ids=lambda p: p.stem)
def test_every_territory_units_per_nation(path):
    game = read_game(path, solve=False)
    walked = _walk_territories(path)
    assert [t["name"] for t in game.territories] == list(walked)
    for territory in game.territories:
        assert _as_counter(territory) == walked[territory["name"]], territory["name"]


def test_start_of_revised_game():
    game = read_game(START)
    assert (game.game, game.edition, game.round, game.player) == (
        "World War II Revised", "revised", 1, "Russians")
    assert game.step == "russianTech"
    assert game.battles == []
    assert not game.low_luck
    # the Revised map: 143 places, its sea zones named "N Sea Zone"
    assert len(game.territories) == 143
    seas = {t["name"] for t in game.territories if t["water"]}
    assert seas == {n for n in _walk_territories(START) if n.endswith("Sea Zone")}


# ------------------------------------------------------------ the battle in progress

WEST_RUSSIA_ATTACKER = {"infantry": 6, "artillery": 1, "tank": 3, "fighter": 1}
WEST_RUSSIA_DEFENDER = {"infantry": 3, "artillery": 1, "tank": 1}


@functools.cache
def _fire_step_units():
    """The units the save's current Fire step holds as alive on each side."""
    with gzip.open(LAND_COMBAT) as handle:
        objects = javaobj.load(handle)
    state = next(o for o in objects if hasattr(o, "classdesc")
                 and o.classdesc.name.endswith("BattleExtendedDelegateState"))
    pending = _fields(_fields(state)["battleTracker"])["pendingBattles"]
    battle = next(a for part in pending.annotations.values() for a in part
                  if hasattr(a, "field_data"))
    fire = _fields(_fields(_fields(_fields(battle)["stack"])["currentStep"])["this$0"])
    names = {"armour": "tank"}

    def count(units):
        c = Counter(str(_fields(_fields(u)["type"])["name"]) for u in units)
        return {names.get(k, k): v for k, v in c.items()}

    return count(fire["allFriendlyUnitsAliveOrWaitingToDie"]), count(
        fire["allEnemyUnitsAliveOrWaitingToDie"])


def test_west_russia_battle_in_progress_armies():
    game = read_game(LAND_COMBAT, solve=False)
    assert (game.edition, game.round, game.step, game.player) == (
        "revised", 1, "russianBattle", "Russians")
    (battle,) = game.battles
    assert (battle.territory, battle.kind) == ("West Russia", "land")
    assert (battle.attacker_nations, battle.defender_nations) == (["Russians"], ["Germans"])
    assert battle.attacker == WEST_RUSSIA_ATTACKER
    assert battle.defender == WEST_RUSSIA_DEFENDER
    friendly, enemy = _fire_step_units()
    assert friendly == WEST_RUSSIA_ATTACKER and enemy == WEST_RUSSIA_DEFENDER
    assert battle.in_progress["round"] == 1
    assert battle.in_progress["fired"] == {"defending": False, "nation": "Russians",
                                           "dice": 11, "hits": 1}
    assert "Germans select casualties" in battle.in_progress["stands"]


def test_caucasus_in_progress_after_aa_fire():
    """The Germans attacked Caucasus with 3 fighters (history: 'Germans attack with 3
    fighters'); the Russians' AA shot one down ('3,1,6'), the two left rolled 1 hit ('3,6') and
    the Russians are to choose their casualty, then fire with all five units.  TripleA keeps the
    downed fighter in the battle's killed list only: 2 fighters stand, as in the territory."""
    needs(CASUALTY_SELECTION)
    game = read_game(CASUALTY_SELECTION, method="exact")
    assert (game.round, game.step, game.player) == (1, "germanBattle", "Germans")
    (battle,) = [b for b in game.battles if b.territory == "Caucasus"]
    walked = _walk_territories(CASUALTY_SELECTION)["Caucasus"]
    assert walked[("Germans", "fighter", 0)] == 2
    assert battle.attacker == {"fighter": 2}
    assert battle.defender == {"infantry": 3, "artillery": 1, "tank": 1}
    assert battle.in_progress["killed"] == 1
    assert battle.in_progress["fired"] == {"defending": False, "nation": "Germans", "dice": 2,
                                           "hits": 1}
    # by hand: the Russians' volley (3 infantry and the artillery at 2, the tank at 3) at the
    # 2 fighters, then round 2 on against the Russians less one infantry (their cheapest)
    volley = _convolve([(4, 2 / 6), (1, 3 / 6)])
    left = {"infantry": 2, "artillery": 1, "tank": 1}
    win = sum(p * simulate("revised", {"fighter": 2 - k}, left, method="exact").attacker_win
              for k, p in volley.items() if k < 2)
    assert battle.result["attacker_win"] == pytest.approx(win, abs=1e-12)


def _convolve(groups):
    law = {0: 1.0}
    for n, p in groups:
        one = {k: comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)}
        new: dict[int, float] = {}
        for a, pa in law.items():
            for b, pb in one.items():
                new[a + b] = new.get(a + b, 0.0) + pa * pb
        law = new
    return law


def _hand_mixture(volley: dict[int, float], dice: str) -> dict[str, float]:
    """The odds of West Russia by hand: the Germans lose their 1 infantry hit, fire back with
    all 5 units (k hits: the Russians lose k infantry, their cheapest), then round 2 on."""
    totals = Counter()
    defender = {"infantry": 2, "artillery": 1, "tank": 1}
    for k, p in volley.items():
        attacker = dict(WEST_RUSSIA_ATTACKER, infantry=6 - k)
        r = simulate("revised", attacker, defender, method="exact", dice=dice)
        for key in ("attacker_win", "defender_win", "draw", "takes_territory"):
            totals[key] += p * getattr(r, key)
        totals["attacker_ipc_loss"] += p * (3 * k + r.attacker_ipc_loss)
        totals["defender_ipc_loss"] += p * (3 + r.defender_ipc_loss)
        totals["mean_rounds"] += p * (1 + r.mean_rounds)
    return totals


def test_west_russia_solved_from_where_it_stands():
    (battle,) = read_game(LAND_COMBAT, method="exact").battles
    # the German volley: 3 infantry and 1 artillery defend at 2, 1 tank at 3
    volley = _convolve([(4, 2 / 6), (1, 3 / 6)])
    expected = _hand_mixture(volley, "standard")
    for key, value in expected.items():
        assert battle.result[key] == pytest.approx(value, abs=1e-12), key
    assert battle.result["from_round"] == 1
    # each nation's IPC loss: one nation a side, so the side's loss
    assert battle.ipc_loss["Russians"] == pytest.approx(expected["attacker_ipc_loss"], abs=1e-9)
    assert battle.ipc_loss["Germans"] == pytest.approx(expected["defender_ipc_loss"], abs=1e-9)
    # not the odds of the battle started afresh
    fresh = simulate("revised", WEST_RUSSIA_ATTACKER, WEST_RUSSIA_DEFENDER, method="exact")
    assert abs(fresh.attacker_win - battle.result["attacker_win"]) > 1e-4


# ------------------------------------------------------------ the result: run's whole object

def _run_json_keys(*args) -> set[str]:
    result = invoke("run", "--rules", "revised", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return set(json.loads(result.stdout))


def _percentiles(law: dict[float, float]) -> dict[str, float]:
    """Smallest IPC loss L with P(loss <= L) >= q, from {loss: probability}."""
    out, total = {}, sum(law.values())
    for q in (10, 50, 90):
        cumulative = 0.0
        for loss in sorted(law):
            cumulative += law[loss] / total
            if cumulative >= q / 100 - 1e-12:
                out[f"p{q}"] = loss
                break
    return out


def test_every_key_of_run_json_in_each_battle_result(monkeypatch):
    keys = _run_json_keys("-a", "3 inf", "-d", "2 inf", "--method", "exact")
    in_progress = invoke("game", str(LAND_COMBAT), "--format", "json", "--method", "exact")
    assert in_progress.exit_code == 0, in_progress.output
    (battle,) = json.loads(in_progress.stdout)["battles"]
    assert battle["in_progress"] is not None
    assert keys <= set(battle["result"]), keys - set(battle["result"])
    record = save_module.BattleRecord(
        territory="Karelia S.S.R.", battle_type="NORMAL", attacker="Russians",
        defender="Germans", attacking=_units("Russians", ("infantry", 0), ("armour", 0)),
        defending=_units("Germans", ("infantry", 0)))
    _with_battles(monkeypatch, record)
    pending = invoke("game", str(START), "--format", "json", "--method", "exact")
    (battle,) = json.loads(pending.stdout)["battles"]
    assert battle["in_progress"] is None
    assert keys <= set(battle["result"]), keys - set(battle["result"])


def test_west_russia_result_is_the_hand_mixture_of_its_continuations():
    """stderr, ci95, survivors, units kept, likely end states and IPC percentiles of the
    mixture against the component runs mixed here by hand (laws from their DataFrames)."""
    (battle,) = read_game(LAND_COMBAT, method="exact").battles
    r = battle.result
    volley = _convolve([(4, 2 / 6), (1, 3 / 6)])
    defender = {"infantry": 2, "artillery": 1, "tank": 1}
    a_loss, d_loss, end_states = Counter(), Counter(), Counter()
    keeps, a_surv, d_surv = Counter(), Counter(), Counter()
    pruned = 0.0
    for k, p in volley.items():
        part = simulate("revised", dict(WEST_RUSSIA_ATTACKER, infantry=6 - k), defender,
                        method="exact")
        pruned += p * part.pruned
        for u, n in part.attacker_survivors.items():
            a_surv[u] += p * n
        for u, n in part.defender_survivors.items():
            d_surv[u] += p * n
        for row in part.attacker_distribution.itertuples(index=False):
            row = row._asdict()
            q = p * row.pop("probability")
            a_loss[3 * k + row.pop("ipc_lost")] += q
            end_states[tuple(sorted((u, n) for u, n in row.items() if n))] += q
            keeps[sum(row.values())] += q
        for row in part.defender_distribution.itertuples(index=False):
            d_loss[3 + row.ipc_lost] += p * row.probability
    assert r["stderr"] == dict.fromkeys(r["stderr"], 0.0)
    plain = simulate("revised", "3 inf", "2 inf", method="exact").to_dict()
    assert set(r["stderr"]) == set(plain["stderr"]) and set(r["ci95"]) == set(plain["ci95"])
    for key, (low, high) in r["ci95"].items():
        assert low == high == r[key], key
    assert r["pruned"] == pytest.approx(pruned, abs=1e-12)
    assert r["attacker_ipc_loss_percentiles"] == _percentiles(a_loss)
    assert r["defender_ipc_loss_percentiles"] == _percentiles(d_loss)
    for mine, hand in ((r["attacker_survivors"], a_surv), (r["defender_survivors"], d_surv)):
        assert set(mine) == set(hand)
        for u in hand:
            assert mine[u] == pytest.approx(hand[u], abs=1e-12), u
    size = sum(WEST_RUSSIA_ATTACKER.values())
    for n in range(1, size + 1):
        expected = sum(q for kept, q in keeps.items() if kept >= n)
        assert r["attacker_keeps_at_least"][n] == pytest.approx(expected, abs=1e-12), n
    likely = sorted(end_states.items(), key=lambda i: -i[1])[:5]
    assert [dict(s) for s, _ in likely] == [o["survivors"] for o in r["likely_outcomes"][
        "attacker"]]
    for (_, q), outcome in zip(likely, r["likely_outcomes"]["attacker"], strict=True):
        assert outcome["probability"] == pytest.approx(q, abs=1e-12)
    assert r["tuv_swing"] == pytest.approx(r["defender_ipc_loss"] - r["attacker_ipc_loss"],
                                           abs=1e-12)


def test_monte_carlo_mixture_standard_errors():
    """One continuation (weight 1): its standard errors and percentiles are the mixture's;
    West Russia by Monte Carlo lies within 4 of its standard errors of the exact mixture."""
    record = _karelia_after_the_german_volley()
    real = save_module.read_save
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("battlecalc.triplea.game.read_save",
                      lambda path: replace(real(path), battles=(record,)))
        (battle,) = read_game(START, method="mc", trials=20_000, seed=11).battles
    fresh = simulate("revised", "2 inf 2 tank", "2 inf 1 art", method="mc", trials=20_000,
                     seed=11)
    for key, err in fresh.stderr.items():
        assert battle.result["stderr"][key] == pytest.approx(err, abs=1e-12), key
    assert battle.result["attacker_ipc_loss_percentiles"] == {
        k: 6 + v for k, v in fresh.attacker_law.ipc_percentiles().items()}
    low, high = battle.result["ci95"]["attacker_win"]
    assert low < battle.result["attacker_win"] < high
    exact = read_game(LAND_COMBAT, method="exact").battles[0].result
    mc = read_game(LAND_COMBAT, method="mc", trials=20_000, seed=5).battles[0].result
    keys = ("attacker_win", "attacker_ipc_loss", "defender_ipc_loss", "mean_rounds")
    assert all(mc["stderr"][key] > 0 for key in keys)
    assert_mc_agrees(mc, exact, probabilities=(), means=keys, slack=0.0, trials=20_000,
                     stderr=mc["stderr"])


def test_low_luck_of_the_save_is_applied(monkeypatch):
    real = save_module.read_save

    def low_luck_save(path):
        data = real(path)
        return replace(data, properties={**data.properties, "Low Luck": True})

    monkeypatch.setattr("battlecalc.triplea.game.read_save", low_luck_save)
    game = read_game(LAND_COMBAT, method="exact")
    assert game.low_luck
    (battle,) = game.battles
    assert battle.result["dice"] == "low_luck"
    # low luck: strength 3*2 + 2 + 3 = 11 -> one sure hit, a die hits on 5 or less for a second
    expected = _hand_mixture({1: 1 / 6, 2: 5 / 6}, "low_luck")
    for key, value in expected.items():
        assert battle.result[key] == pytest.approx(value, abs=1e-12), key


def test_techs_of_the_save_are_applied(monkeypatch):
    real = save_module.read_save

    def german_jets(path):
        data = real(path)
        return replace(data, techs={**data.techs, "Germans": ("jets",)})

    attack = "5 inf 2 tank 1 fighter"
    plain = read_game(START, territory="Germany", attack=attack, method="exact").battles[0]
    monkeypatch.setattr("battlecalc.triplea.game.read_save", german_jets)
    (battle,) = read_game(START, territory="Germany", attack=attack, method="exact").battles
    assert battle.defender == {"infantry": 3, "tank": 2, "aa": 1, "fighter": 1, "bomber": 1}
    assert battle.result["defender_tech"] == ["jets"]
    with_jets = simulate("revised", attack, battle.defender, defender_tech="jets",
                         method="exact")
    assert battle.result["attacker_win"] == pytest.approx(with_jets.attacker_win, abs=1e-12)
    # the German fighter defends at 5 with jets instead of 4: the attacker's odds drop
    assert plain.result["attacker_win"] - battle.result["attacker_win"] > 0.05


# ------------------------------------------------------------ allied stacks (Global 1940)

@pytest.mark.slow(reason="reads the Global 1940 save: about a second")
def test_mixed_british_and_french_stacks():
    game = read_game(GLOBAL, solve=False)
    assert (game.game, game.edition, game.step, game.player) == (
        "World War II Global 1940 2nd Edition", "1940-2e", "germansPolitics", "Germans")
    walked = _walk_territories(GLOBAL)
    mixed = [name for name, c in walked.items()
             if {"British", "French"} <= {nation for nation, _, _ in c}]
    assert "United Kingdom" in mixed
    uk = next(t for t in game.territories if t["name"] == "United Kingdom")
    assert uk["owner"] == "British"
    assert _as_counter(uk) == walked["United Kingdom"]


@pytest.mark.slow(reason="reads the Global 1940 save: about a second")
def test_attack_on_a_mixed_stack_one_side_ipc_per_nation():
    attack = "8 inf 4 tank 4 fighter 2 bomber"
    game = read_game(GLOBAL, territory="United Kingdom", attack=attack, method="mc",
                     trials=20_000, seed=3)
    (battle,) = game.battles
    assert battle.defender_nations == ["British", "French"]
    walked = _walk_territories(GLOBAL)["United Kingdom"]
    names = {"aaGun": "aa"}
    expected = Counter()
    for (_, unit, _), n in walked.items():
        if unit not in ("airfield", "harbour", "factory_major"):
            expected[names.get(unit, unit)] += n
    assert battle.defender == dict(expected)
    per_nation = Counter()
    for row in battle.defender_units:
        per_nation[row["nation"]] += row["count"]
    assert per_nation["French"] == sum(n for (nation, unit, _), n in walked.items()
                                       if nation == "French")
    r = battle.result
    same = simulate("1940-2e", attack, battle.defender, method="mc", trials=20_000, seed=3)
    assert r["attacker_win"] == same.attacker_win
    # the nations' IPC losses add up to the side's
    defender_loss = battle.ipc_loss["British"] + battle.ipc_loss["French"]
    assert defender_loss == pytest.approx(r["defender_ipc_loss"], abs=1e-9)


# ------------------------------------------------------------ the command line

def test_cli_json_keys():
    result = invoke("game", str(LAND_COMBAT), "--format", "json", "--method", "exact")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"game", "edition", "round", "step", "player", "territories", "battles"} <= set(data)
    territory = data["territories"][0]
    assert set(territory) == {"name", "owner", "water", "units"}
    assert set(territory["units"][0]) == {"nation", "unit", "count", "hits"}
    (battle,) = data["battles"]
    assert {"territory", "kind", "attacker_nations", "defender_nations", "attacker",
            "defender", "bombard", "landing", "result"} <= set(battle)
    assert battle["attacker"] == WEST_RUSSIA_ATTACKER


def test_cli_table_and_csv():
    table = invoke("game", str(LAND_COMBAT), "--method", "exact")
    assert table.exit_code == 0, table.output
    assert "West Russia: land battle, Russians attack Germans" in table.stdout
    assert "in progress: round 1" in table.stdout
    # the percentiles of the mixed law, as run's table states them
    (battle,) = read_game(LAND_COMBAT, method="exact").battles
    a, d = ("/".join(str(v) for v in battle.result[f"{side}_ipc_loss_percentiles"].values())
            for side in ("attacker", "defender"))
    assert f"  IPC lost percentiles 10/50/90   attacker {a}   defender {d}\n" in table.stdout
    rows = invoke("game", str(LAND_COMBAT), "--method", "exact", "--format", "csv")
    lines = rows.stdout.splitlines()
    assert len(lines) == 2 and lines[1].startswith("West Russia,land,Russians,Germans,")
    everything = invoke("game", str(START), "--all", "--format", "csv")
    walked = _walk_territories(START)
    assert len(everything.stdout.splitlines()) == 1 + sum(len(c) for c in walked.values())


@pytest.mark.parametrize("args, fragment", [
    (["/etc/hostname"], "not gzip data"),
    (["missing.tsvg"], "cannot read missing.tsvg"),
    ([str(START), "--territory", "Atlantis"], "no territory 'Atlantis'"),
    ([str(START), "--attack", "3 inf"], "needs the territory"),
    ([str(START), "--territory", "germany"], "did you mean 'Germany'"),
])
def test_cli_refusals(args, fragment):
    assert_usage_error(invoke("game", *args), fragment)


def test_missing_javaobj_says_how_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "javaobj", None)
    monkeypatch.setitem(sys.modules, "javaobj.v2", None)
    with pytest.raises(BattleInputError, match=r"pip install 'battlecalc\[triplea\]'"):
        read_game(START)


def test_truncated_and_foreign_streams(tmp_path):
    raw = LAND_COMBAT.read_bytes()
    cut = tmp_path / "cut.tsvg"
    cut.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(BattleInputError, match="truncated"):
        read_game(cut)
    stream = gzip.decompress(raw)
    short = tmp_path / "short.tsvg"
    short.write_bytes(gzip.compress(stream[: len(stream) // 3]))
    with pytest.raises(BattleInputError, match="damaged or truncated"):
        read_game(short)
    text = tmp_path / "text.tsvg"
    text.write_bytes(gzip.compress(b"hello"))
    with pytest.raises(BattleInputError, match="no Java object stream"):
        read_game(text)
    # a Java stream without GameData: another program's serialized object
    other = io.BytesIO()
    other.write(stream[:4] + b"\x74\x00\x05hello")  # TC_STRING "hello"
    foreign = tmp_path / "foreign.tsvg"
    foreign.write_bytes(gzip.compress(other.getvalue()))
    with pytest.raises(BattleInputError, match="no GameData"):
        read_game(foreign)


# ------------------------------------------------------------ battles of other kinds

def _with_battles(monkeypatch, *battles):
    """The start-of-game save with the given BattleTracker records added."""
    real = save_module.read_save

    def patched(path):
        return replace(real(path), battles=tuple(battles))

    monkeypatch.setattr("battlecalc.triplea.game.read_save", patched)


def _karelia_after_the_german_volley():
    """Round 2 of Karelia: the Russians' volley took 1 German infantry (waiting to die: out of
    defendingUnits, as TripleA's markCasualties leaves it), the Germans' rolled 2 hits on 4
    dice, the Russians still to choose their casualties."""
    attacking = _units("Russians", *[("infantry", 0)] * 4, ("armour", 0), ("armour", 0))
    defending = _units("Germans", *[("infantry", 0)] * 2, ("artillery", 0))
    fire = save_module.FireState(defending=True, firing_nation="Germans", hits=2, dice=4,
                                 next_step="Russians select casualties")
    return save_module.BattleRecord(
        territory="Karelia S.S.R.", battle_type="NORMAL", attacker="Russians",
        defender="Germans", attacking=attacking, defending=defending, round=2, started=True,
        defending_waiting_to_die=_units("Germans", ("infantry", 0)), fire=fire)


def _units(owner, *types_and_hits):
    return tuple(save_module.UnitRecord(t, owner, h) for t, h in types_and_hits)


def test_sea_battle_with_a_damaged_battleship(monkeypatch):
    record = save_module.BattleRecord(
        territory="5 Sea Zone", battle_type="NORMAL", attacker="British", defender="Germans",
        attacking=_units("British", ("battleship", 1), ("destroyer", 0), ("fighter", 0)),
        defending=_units("Germans", ("transport", 0), ("submarine", 0), ("submarine", 0),
                         ("destroyer", 0)))
    _with_battles(monkeypatch, record)
    (battle,) = read_game(START, method="exact").battles
    assert battle.kind == "sea"
    assert battle.attacker == {"fighter": 1, "damaged_battleship": 1, "destroyer": 1}
    assert battle.defender == {"destroyer": 1, "transport": 1, "submarine": 2}
    same = simulate("revised", battle.attacker, battle.defender, sea=True, method="exact")
    assert battle.result["attacker_win"] == pytest.approx(same.attacker_win, abs=1e-12)
    assert battle.in_progress is None


def test_amphibious_assault_with_bombardment(monkeypatch):
    landing = _units("British", ("infantry", 0), ("infantry", 0), ("armour", 0))
    record = save_module.BattleRecord(
        territory="Karelia S.S.R.", battle_type="NORMAL", attacker="British",
        defender="Germans", attacking=landing + _units("British", ("fighter", 0)),
        defending=_units("Germans", ("infantry", 0), ("infantry", 0), ("factory", 0)),
        bombarding=_units("British", ("battleship", 0)), landing=landing, amphibious=True)
    _with_battles(monkeypatch, record)
    (battle,) = read_game(START, method="exact").battles
    assert battle.kind == "amphibious"
    assert (battle.attacker, battle.landing, battle.bombard) == (
        {"fighter": 1}, {"infantry": 2, "tank": 1}, {"battleship": 1})
    assert battle.defender == {"infantry": 2}  # the factory is the site, not a unit
    same = simulate("revised", "1 fighter", "2 inf", landing="2 inf 1 tank",
                    bombard="1 battleship", method="exact")
    assert battle.result["takes_territory"] == pytest.approx(same.takes_territory, abs=1e-12)


def test_bombing_raid_on_a_factory(monkeypatch):
    from battlecalc import raid

    record = save_module.BattleRecord(
        territory="Germany", battle_type="BOMBING_RAID", attacker="Americans",
        defender="Germans", attacking=_units("Americans", ("bomber", 0), ("bomber", 0)),
        defending=_units("Germans", ("factory", 0), ("aaGun", 0)))
    _with_battles(monkeypatch, record)
    (battle,) = read_game(START, method="exact").battles
    assert battle.kind == "raid" and battle.attacker == {"bomber": 2}
    # Germany's production value is 10: each bomber's damage is capped by it
    same = raid(rules="revised", attacker="2 bomber", target_value=10, aa=True, method="exact")
    assert battle.result == same.to_dict() | {"elapsed_s": battle.result["elapsed_s"]}


def test_units_the_edition_lacks_are_refused(monkeypatch):
    record = save_module.BattleRecord(
        territory="Germany", battle_type="NORMAL", attacker="Russians", defender="Germans",
        attacking=_units("Russians", ("zeppelin", 0)), defending=_units("Germans",
                                                                         ("infantry", 0)))
    _with_battles(monkeypatch, record)
    with pytest.raises(BattleInputError, match="unit 'zeppelin' of the save cannot be "
                       "modelled in revised"):
        read_game(START)


def test_battle_where_the_defender_has_fired(monkeypatch):
    """Round 2, the Germans' volley rolled (2 hits) after the Russians' (1 German infantry
    waiting to die): the Russians lose 2 infantry, and a fresh battle starts in round 3."""
    record = _karelia_after_the_german_volley()
    _with_battles(monkeypatch, record)
    (battle,) = read_game(START, method="exact").battles
    assert battle.defender == {"infantry": 2, "artillery": 1}
    assert battle.in_progress["round"] == 2
    fresh = simulate("revised", "2 inf 2 tank", "2 inf 1 art", method="exact")
    assert battle.result["attacker_win"] == pytest.approx(fresh.attacker_win, abs=1e-12)
    assert battle.result["mean_rounds"] == pytest.approx(2 + fresh.mean_rounds, abs=1e-12)
    assert battle.result["attacker_ipc_loss"] == pytest.approx(
        2 * 3 + fresh.attacker_ipc_loss, abs=1e-12)


def test_battle_over_once_the_volley_is_taken(monkeypatch):
    """The Germans' volley (2 hits) kills both Russian infantry: no battle is left to run,
    and the result still has every key of run's, with the sure outcome."""
    fire = save_module.FireState(defending=True, firing_nation="Germans", hits=2, dice=1,
                                 next_step="Russians select casualties")
    record = save_module.BattleRecord(
        territory="Karelia S.S.R.", battle_type="NORMAL", attacker="Russians",
        defender="Germans", attacking=_units("Russians", ("infantry", 0), ("infantry", 0)),
        defending=_units("Germans", ("infantry", 0)), round=2, started=True, fire=fire)
    _with_battles(monkeypatch, record)
    (battle,) = read_game(START, method="mc", trials=1000, seed=1).battles
    r = battle.result
    assert set(simulate("revised", "1 inf", "1 inf", method="exact").to_dict()) <= set(r)
    assert (r["defender_win"], r["attacker_ipc_loss"], r["defender_ipc_loss"]) == (1.0, 6, 0)
    assert r["attacker_ipc_loss_percentiles"] == {"p10": 6, "p50": 6, "p90": 6}
    # (one Monte Carlo run from where the battle stands: every trial a defender's win, its
    # interval the Wilson interval of 1000 in 1000)
    assert r["ci95"]["defender_win"] == list(wilson_interval(1000, 1000))
    assert r["stderr"]["defender_win"] == 0.0
    assert r["likely_outcomes"]["defender"] == [{"survivors": {"infantry": 1},
                                                 "probability": 1.0}]


# ------------------------------------------------------------ issue 29 items 13 and 15


@pytest.mark.parametrize("arguments, fragment", [
    (dict(territory=5), "territory: expected text, got 5"),
    (dict(attack=["3 inf"]), "attack: expected text, got ['3 inf']"),
    (dict(rules=5), "rules must be an edition id, a Ruleset or the path of an edition file, "
                    "got 5"),
    (dict(max_inflated=-1), "max_inflated: expected a number of bytes 1..67108864"),
    (dict(max_inflated=True), "max_inflated: expected a number of bytes"),
    (dict(max_inflated=1 << 40), "max_inflated: expected a number of bytes"),
    (dict(solve="no"), "solve: expected True or False, got 'no'"),
], ids=lambda v: str(v))
def test_read_game_refuses_arguments_of_the_wrong_type(monkeypatch, arguments, fragment):
    """Before: Python errors (AttributeError, TypeError), or with solve="no" the battles
    solved anyway.  Refused before the save is read."""
    monkeypatch.setattr("battlecalc.triplea.game.read_save", lambda *a: pytest.fail("read"))
    with pytest.raises(BattleInputError, match=re.escape(fragment)):
        read_game(LAND_COMBAT, **arguments)


def test_read_game_refuses_a_path_that_is_not_one():
    with pytest.raises(BattleInputError, match="path: expected the path of a TripleA save"):
        read_game(5)


def test_a_raid_prints_its_result_in_the_table(monkeypatch):
    """Before: the table looked for `mean_damage`, a raid's result has `expected_damage`: no
    result line.  Every kind of battle prints one."""
    from battlecalc import raid

    record = save_module.BattleRecord(
        territory="Germany", battle_type="BOMBING_RAID", attacker="Americans",
        defender="Germans", attacking=_units("Americans", ("bomber", 0), ("bomber", 0)),
        defending=_units("Germans", ("factory", 0), ("aaGun", 0)))
    _with_battles(monkeypatch, record)
    same = raid(rules="revised", attacker="2 bomber", target_value=10, aa=True, method="exact")
    table = invoke("game", str(START), "--method", "exact")
    assert table.exit_code == 0, table.output
    assert (f"  raid: expected damage {same.expected_damage:.3f}  damage percentiles 10/50/90 "
            f"{'/'.join(str(v) for v in same.damage_percentiles.values())}  bombers over the "
            f"target {same.bombers_over_target:.3f}  (exact)\n") in table.stdout


def test_the_raid_of_a_real_save_prints_its_result():
    needs(RAID_AFTER_AA)
    table = invoke("game", str(RAID_AFTER_AA), "--method", "exact")
    assert table.exit_code == 0, table.output
    united_kingdom = table.stdout.split("United Kingdom: raid battle")[1]
    assert "  raid: expected damage " in united_kingdom
