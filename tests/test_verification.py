"""Statistical verification (issues 4 and 11): the exact solver against the Monte Carlo kernel on
a battery of battles of every dice edition, and proof that the battery catches broken rules.

Every check compares an exact value with a Monte Carlo sample of TRIALS trials at the fixed
seed SEED and accepts a deviation of at most 4 standard errors:

* probabilities (outcomes, takes_territory): the binomial standard error sqrt(p (1 - p) / n)
  of the exact p, so an outcome the exact solver calls impossible (p = 0) must never occur;
* means (IPC losses, TUV swing, rounds): the Monte Carlo sample's own standard error.

A slack of SLACK (float rounding, and the exact solver's pruned mass, asserted below 1e-9) is
added to every band.  With the true rules each battle must stay inside the band; the mutation
tests solve the battery exactly under a deliberately broken ruleset (injected through
``battlecalc.rules._CACHE``; the package is not touched) and require that at least one battle
of the battery then leaves the band of the Monte Carlo sample drawn under the true rules.
"""

from __future__ import annotations

import dataclasses
import functools
from types import MappingProxyType

import pytest
from helpers import MC_TRIALS, mc_outside

import battlecalc
from battlecalc import rules as rules_module
from battlecalc.rules import Ruleset, load_rules

# the quick tier's trials (200,000 at first, then 50,000): every planted error of the mutation
# tests below still leaves the 4-SE band, in several battles, the worst by far
TRIALS = MC_TRIALS
SEED = 20_240_604
BAND = 4.0  # standard errors
SLACK = 1e-9
PROBABILITIES = ("attacker_win", "defender_win", "draw", "stalemate", "retreat",
                 "takes_territory")
MEANS = ("attacker_ipc_loss", "defender_ipc_loss", "tuv_swing", "mean_rounds")


def land(edition, attacker, defender, **options):
    return dict(rules=edition, attacker=attacker, defender=defender, **options)


def amphibious(edition, landing, bombard, defender, attacker=None, **options):
    return dict(rules=edition, attacker=attacker, landing=landing, bombard=bombard,
                defender=defender, **options)


def sea(edition, attacker, defender, **options):
    return dict(rules=edition, attacker=attacker, defender=defender, sea=True, **options)


BATTLES = [
    # --- land, Revised: artillery, AA gun against several aircraft, techs, AA-only defender
    land("revised", "3 inf 1 art 1 tank", "4 inf 1 tank"),
    land("revised", "4 inf 2 art 2 tank", "6 inf 1 tank"),
    land("revised", "2 ftr 2 bmb 2 inf", "3 inf 1 aa"),
    land("revised", "4 ftr 1 bmb 1 tank", "4 inf 1 aa"),
    land("revised", "6 ftr 2 bmb 2 tank", "6 inf 2 aa"),
    land("revised", "3 bmb 2 inf", "4 inf 1 aa", attacker_tech="heavy_bombers"),
    land("revised", "3 ftr 2 inf 1 tank", "4 inf 2 ftr", defender_tech="jets"),
    land("revised", "2 ftr", "1 aa"),
    # --- land, 1942 2E: artillery, AAA (up to 3 dice each, casualties), techs
    land("1942-2e", "3 inf 3 art", "5 inf"),
    land("1942-2e", "6 inf 2 art 2 tank 2 ftr", "8 inf 1 tank 1 aa"),
    land("1942-2e", "4 inf 4 art", "4 inf 2 art 1 tank"),
    land("1942-2e", "2 ftr 2 bmb 2 tank", "3 inf 2 aa", attacker_tech="heavy_bombers,jets"),
    land("1942-2e", "2 bmb 1 tank", "2 inf 1 aa", attacker_tech="heavy_bombers"),
    land("1942-2e", "5 ftr 1 tank", "3 inf 1 aa 1 ftr"),
    land("1942-2e", "10 inf 5 art 3 tank", "12 inf 2 art 2 tank"),
    # --- land: retreat policies (outcome "retreat") and orders of losses
    land("revised", "5 inf 2 art 2 tank", "6 inf 1 tank", retreat_after=2),
    land("revised", "2 inf 1 tank 2 ftr", "4 inf", retreat_when_only_air=True,
         defender_ool="weakest"),
    land("1942-2e", "6 inf 2 art 2 tank 2 ftr", "8 inf 1 tank 1 aa", retreat_when_left=4),
    land("1942-2e", "3 inf 1 art 1 tank", "4 inf 1 tank", retreat_below=0.3,
         attacker_ool="*^infantry;*^tank;1^infantry"),
    land("1942-2e", "4 inf 2 tank 1 ftr", "5 inf", strafe=1),
    land("1942-2e", "4 inf 2 art 2 ftr 1 bmb", "3 inf 2 aa 1 ftr", aa_last=True, keep_land=1,
         attacker_ool="smart"),
    # --- amphibious assaults: landing units, shore bombardment, overland support
    amphibious("1942-2e", "2 inf 1 art", "1 bb 1 ca", "3 inf 1 aa 1 ftr", attacker="1 tank"),
    amphibious("1942-2e", "3 inf 1 tank", "2 ca", "4 inf 1 art"),
    amphibious("1942-2e", "2 inf", "2 bb", "3 inf 1 aa", attacker="2 ftr", attacker_tech="jets"),
    amphibious("1942-2e", "1 inf 1 art", "1 bb", "2 inf"),
    amphibious("revised", "2 inf 1 tank", "2 bb", "2 inf 1 tank 1 aa", attacker="1 ftr"),
    amphibious("revised", "3 inf 1 art", "1 bb 2 dd", "4 inf 1 ftr",
               attacker_tech="combined_bombardment"),
    amphibious("1942-2e", "2 inf 1 art", "1 bb", "4 inf 1 aa", attacker="2 ftr 1 tank",
               retreat_after=1),
    # --- sea, 1942 2E: subs with and without destroyers, air against subs, two-hit
    # battleships (healthy and damaged), carriers, transports, cruisers, stalemates, submerging
    sea("1942-2e", "2 sub", "1 dd 1 tt"),
    sea("1942-2e", "3 sub", "1 dd 1 cv 1 ftr 2 tt"),
    sea("1942-2e", "2 ftr", "2 sub"),
    sea("1942-2e", "1 dd 2 ftr", "3 sub"),
    sea("1942-2e", "1 bb 1 dd", "1 bb 1 ca"),
    sea("1942-2e", "1 dbb 2 dd", "1 bb 1 sub"),
    sea("1942-2e", "1 cv 2 ftr 1 dd", "2 sub 1 dd 1 tt"),
    sea("1942-2e", "2 sub 1 ca", "1 ca 2 tt"),
    sea("1942-2e", "2 ca 1 ftr", "1 cv 2 ftr 1 tt"),
    sea("1942-2e", "1 sub 1 ftr", "1 sub 1 ftr"),
    sea("1942-2e", "2 sub", "1 ftr 1 dd"),
    sea("1942-2e", "1 dd 1 sub", "2 tt 1 sub"),
    sea("1942-2e", "3 sub", "1 dd 1 sub", attacker_submerge="first-chance"),
    sea("1942-2e", "2 sub 1 bmb", "1 cv 1 ftr", attacker_submerge="when-only-subs-left"),
    sea("1942-2e", "1 dd 1 ftr", "3 sub", defender_submerge="first-chance"),
    sea("1942-2e", "2 sub 1 dd", "2 sub 1 tt", defender_submerge="when-only-subs-left"),
    # --- sea, Revised
    sea("revised", "2 ftr", "2 sub"),
    sea("revised", "2 sub 1 dd", "1 bb 1 tt"),
    sea("revised", "1 bb 1 cv 2 ftr", "1 dbb 2 dd 1 sub"),
    sea("revised", "3 sub", "1 dd 2 tt", attacker_submerge="first-chance"),
    sea("revised", "2 dd 1 ftr", "3 sub", defender_submerge="when-only-subs-left"),
    sea("revised", "2 tt 1 sub", "1 dd 1 sub"),
    sea("revised", "2 sub 1 bmb", "1 cv 2 ftr 1 tt"),
    # --- low-luck dice: land with AA and artillery, sea with subs, air and destroyers
    land("1942-2e", "3 inf 1 art 2 tank 2 ftr", "5 inf 1 tank 1 aa", dice="low_luck"),
    land("revised", "4 inf 3 ftr 2 bmb", "4 inf 1 aa", dice="low_luck"),
    sea("1942-2e", "2 sub 1 dd 2 ftr", "1 dd 1 cv 1 ftr 1 sub", dice="low_luck"),
    sea("revised", "2 sub 1 bb", "1 dd 1 cv 2 sub", dice="low_luck"),
    # --- Classic: artillery, the one-die-per-aircraft AA gun (attacker chooses, several guns
    # still one die per aircraft), heavy bombers' 3 dice, jets on defence, bombardment without
    # a limit whose casualties fire back, no amphibious retreat; at sea the attacker's sneak
    # attack (cancelled by a destroyer), defending subs firing with the others, air on subs,
    # one-hit battleships, lone transports
    land("classic", "3 inf 1 art 1 tank", "4 inf 1 tank"),
    land("classic", "2 ftr 1 bmb 2 inf", "3 inf 1 aa"),
    land("classic", "4 ftr 2 bmb 1 tank", "4 inf 2 aa"),
    land("classic", "3 bmb 1 inf", "4 inf", attacker_tech="heavy_bombers"),
    land("classic", "4 inf 2 tank", "3 inf 2 ftr", defender_tech="jets"),
    land("classic", "5 inf 2 art 2 tank", "6 inf 1 tank", retreat_after=2),
    amphibious("classic", "2 inf 1 art", "2 bb", "3 inf 1 ftr", attacker="1 tank"),
    amphibious("classic", "2 inf", "1 bb", "3 inf", attacker="1 ftr 1 tank", retreat_after=1),
    sea("classic", "2 sub", "1 tt 1 cv"),
    sea("classic", "2 sub 1 bb", "2 sub 1 tt"),
    sea("classic", "1 bb 1 cv 2 ftr", "2 sub 1 dd"),
    sea("classic", "2 sub 1 ftr", "2 sub 1 cv"),
    sea("classic", "2 tt 1 sub", "1 dd 1 sub"),
    sea("classic", "3 sub 1 dd", "1 bb 1 cv 1 ftr", attacker_tech="super_subs"),
    # --- AA50: the Revised AA gun (own aircraft) with radar, improved artillery, both heavy
    # bombers, jets on attack; the 1942 2E amphibious and sea battles with AA50's units
    land("aa50", "3 inf 1 art 1 tank", "4 inf 1 tank"),
    land("aa50", "2 ftr 2 bmb 2 inf", "3 inf 1 aa"),
    land("aa50", "4 ftr 1 bmb 1 tank", "4 inf 1 aa", defender_tech="radar"),
    land("aa50", "4 inf 2 art", "5 inf", attacker_tech="improved_artillery"),
    land("aa50", "2 bmb 2 inf", "3 inf 1 bmb", attacker_tech="lhtr_heavy_bombers",
         defender_tech="lhtr_heavy_bombers"),
    land("aa50", "3 ftr 2 inf 1 tank", "4 inf 1 ftr", attacker_tech="jets"),
    land("aa50", "4 inf 2 art 2 tank", "6 inf 1 aa", strafe=2),
    amphibious("aa50", "2 inf 1 art", "1 bb 1 ca", "3 inf 1 aa 1 ftr", attacker="1 tank"),
    amphibious("aa50", "2 inf", "2 bb", "3 inf", attacker="1 ftr 1 tank", retreat_after=1),
    sea("aa50", "2 sub 1 dd", "1 bb 1 tt"),
    sea("aa50", "1 dd 2 ftr", "3 sub"),
    sea("aa50", "1 bb 1 cv 2 ftr", "1 dbb 2 dd 1 sub"),
    sea("aa50", "3 sub", "1 dd 1 sub", attacker_submerge="first-chance"),
    sea("aa50", "1 dd 1 ftr", "3 sub", defender_submerge="when-only-subs-left"),
    # --- 1940 2E: mechanized infantry supported by artillery, tactical bombers paired with
    # fighters and tanks, AAA, techs, orders of losses and retreats; amphibious assaults with
    # mech infantry; at sea two-hit carriers (healthy and damaged), tactical bombers, submerging
    land("1940-2e", "2 inf 2 mech 2 art 1 tank", "5 inf 1 tank"),
    land("1940-2e", "3 mech 2 art", "4 inf"),
    land("1940-2e", "2 mech 2 art 1 tank", "3 inf 1 art", attacker_tech="improved_artillery"),
    land("1940-2e", "2 tac 1 ftr 1 tank 2 inf", "4 inf 1 aa"),
    land("1940-2e", "3 tac 2 tank", "4 inf 1 tank"),
    land("1940-2e", "2 tac 2 ftr", "3 inf 1 ftr"),
    land("1940-2e", "2 ftr 1 tac 2 bmb", "3 inf 2 aa", attacker_tech="heavy_bombers,jets",
         defender_tech="radar"),
    land("1940-2e", "4 inf 2 mech 2 art 2 tank", "6 inf 1 aa 1 tac", aa_last=True),
    land("1940-2e", "3 inf 1 mech 1 art 1 tac 1 ftr", "5 inf", retreat_when_left=3,
         attacker_ool="smart"),
    land("1940-2e", "2 inf 1 tank 2 tac", "4 inf", retreat_below=0.3),
    amphibious("1940-2e", "2 mech 1 art", "1 bb 1 ca", "3 inf 1 aa", attacker="1 tank 1 tac"),
    amphibious("1940-2e", "2 inf 1 mech", "1 bb", "3 inf 1 tank", attacker="2 ftr",
               retreat_after=1),
    sea("1940-2e", "2 bmb", "1 cv 1 dd"),
    sea("1940-2e", "1 bb 2 dd", "2 cv 1 ftr"),
    sea("1940-2e", "2 tac 2 ftr", "1 cv 2 ftr 1 dd"),
    sea("1940-2e", "1 dcv 2 tac 1 dd", "2 sub 1 ca"),
    sea("1940-2e", "3 sub 1 tac", "1 cv 1 ftr 1 tt", attacker_submerge="when-only-subs-left"),
    sea("1940-2e", "1 dd 2 tac", "3 sub", defender_submerge="first-chance"),
    sea("1940-2e", "2 sub 1 dd 1 ca", "1 dcv 1 dbb 1 sub 1 tt"),
]


def _battle_id(battle: dict) -> str:
    def short(army):
        return "".join((army or "").split())

    kind = "sea" if battle.get("sea") else ("amph" if battle.get("landing") else "land")
    attacker = short(battle["attacker"])
    if battle.get("landing"):
        attacker = "+".join(filter(None, (attacker, short(battle["landing"]))))
        attacker += "@" + short(battle["bombard"])
    extras = [f"{k}={v}" for k, v in battle.items()
              if k not in ("rules", "attacker", "defender", "sea", "landing", "bombard")]
    return (f"{battle['rules']}:{kind}:{attacker}-v-{short(battle['defender'])}"
            + (f"[{','.join(extras)}]" if extras else ""))


IDS = [_battle_id(b) for b in BATTLES]


def _exact(battle: dict):
    return battlecalc.simulate(**battle, method="exact")


@functools.cache
def _true_sample(index: int):
    """Monte Carlo sample of BATTLES[index] under the shipped rules (call it unpatched)."""
    return battlecalc.simulate(**BATTLES[index], method="mc", trials=TRIALS, seed=SEED)


def _outside_band(exact, mc) -> dict[str, float]:
    """{key: deviation in standard errors} for every key where mc leaves exact's 4-SE band."""
    assert mc.trials == TRIALS and mc.seed == SEED
    return mc_outside(mc, exact, k=BAND, probabilities=PROBABILITIES, means=MEANS, slack=SLACK)


NEW_EDITIONS = ("classic", "aa50", "1940-2e")


def test_battery_covers_the_issue():
    assert len(BATTLES) >= 40
    assert len([b for b in BATTLES if b["rules"] in NEW_EDITIONS]) >= 40  # issue 11
    assert len(set(IDS)) == len(IDS)
    for edition in ("revised", "1942-2e", *NEW_EDITIONS):
        mine = [b for b in BATTLES if b["rules"] == edition]
        assert any(b.get("sea") for b in mine)
        assert any(b.get("landing") for b in mine)
        assert any(not b.get("sea") and not b.get("landing") for b in mine)
        if edition == "classic":  # no submerging in Classic
            continue
        for policy in ("when-only-subs-left", "first-chance"):
            assert any(policy in (b.get("attacker_submerge"), b.get("defender_submerge"))
                       for b in mine)


@pytest.mark.parametrize("index", range(len(BATTLES)), ids=IDS)
def test_monte_carlo_within_four_standard_errors_of_exact(index):
    exact = _exact(BATTLES[index])
    assert exact.method == "exact" and exact.pruned < 1e-9
    total = sum(getattr(exact, k) for k in PROBABILITIES if k != "takes_territory")
    assert total == pytest.approx(1.0, abs=1e-9)
    mc = _true_sample(index)
    assert mc.method == "mc"
    assert _outside_band(exact, mc) == {}


# ---------------------------------------------------------------------------------------------
# Mutation checks: the battery demonstrably catches a broken rule


def _with_flags(ruleset: Ruleset, **flags) -> Ruleset:
    for name in flags:
        assert name in ruleset.flags, name
    return dataclasses.replace(ruleset, flags=MappingProxyType({**ruleset.flags, **flags}))


def _with_unit(ruleset: Ruleset, unit: str, **fields) -> Ruleset:
    units = dict(ruleset.units)
    units[unit] = dataclasses.replace(units[unit], **fields)
    return dataclasses.replace(ruleset, units=MappingProxyType(units))


def caught_by(monkeypatch, edition: str, broken: Ruleset) -> dict[str, dict[str, float]]:
    """Battles of `edition` whose exact answer under `broken` leaves the 4-SE band of the
    Monte Carlo sample under the true rules: {battle id: {key: deviation in SE}}."""
    indices = [i for i, b in enumerate(BATTLES) if b["rules"] == edition]
    assert broken != load_rules(edition), "the mutation changes nothing"
    samples = {i: _true_sample(i) for i in indices}  # drawn under the true rules
    monkeypatch.setitem(rules_module._CACHE, edition, broken)
    assert load_rules(edition) is broken
    caught = {}
    for i in indices:
        outside = _outside_band(_exact(BATTLES[i]), samples[i])
        if outside:
            caught[IDS[i]] = outside
    return caught


def _assert_caught(monkeypatch, edition, broken):
    caught = caught_by(monkeypatch, edition, broken)
    assert len(caught) >= 1, "the battery does not detect this broken rule"


def test_mutation_1942_subs_always_strike_first(monkeypatch):
    true = load_rules("1942-2e")
    _assert_caught(monkeypatch, "1942-2e", _with_flags(true, attacker_sub_first_strike="always",
                                                       defender_sub_first_strike="always"))


def test_mutation_1942_air_always_hits_subs(monkeypatch):
    true = load_rules("1942-2e")
    _assert_caught(monkeypatch, "1942-2e", _with_flags(true, air_hits_subs="always"))


def test_mutation_revised_aa_casualties_attacker_chooses(monkeypatch):
    true = load_rules("revised")
    _assert_caught(monkeypatch, "revised", _with_flags(true, aa_casualties="attacker_chooses"))


def test_mutation_revised_aa_dice_per_gun(monkeypatch):
    # 1942-style dice: min(3 x guns, aircraft); the Revised gun gets the 1942 AAA's 3 shots
    # (with its own aa_shots = 0 it would not fire at all, a cruder break)
    true = _with_unit(load_rules("revised"), "aa", aa_shots=3)
    _assert_caught(monkeypatch, "revised", _with_flags(true, aa_dice="per_gun"))


def test_mutation_revised_aa_fully_1942_style(monkeypatch):
    true = _with_unit(load_rules("revised"), "aa", aa_shots=3)
    broken = _with_flags(true, aa_dice="per_gun", aa_casualties="attacker_chooses")
    _assert_caught(monkeypatch, "revised", broken)


def test_mutation_1942_bombardment_casualties_do_not_fire_back(monkeypatch):
    true = load_rules("1942-2e")
    _assert_caught(monkeypatch, "1942-2e", _with_flags(true, bombard_return_fire=False))


def test_mutation_1942_artillery_supports_nobody(monkeypatch):
    true = load_rules("1942-2e")
    # improved_artillery changes the artillery's support: without supports it has none to change
    # (a Ruleset is checked as its edition file would be)
    techs = {name: dataclasses.replace(tech, support_changes=MappingProxyType({}))
             for name, tech in true.techs.items()}
    _assert_caught(monkeypatch, "1942-2e", dataclasses.replace(
        true, supports=(), techs=MappingProxyType(techs)))


def test_mutation_1942_transports_defend_at_one(monkeypatch):
    true = load_rules("1942-2e")
    _assert_caught(monkeypatch, "1942-2e", _with_unit(true, "transport", defense=1))


def test_mutation_low_luck_replaced_by_standard_dice(monkeypatch):
    # the broken engine rolls every die where low luck is asked: the exact answers of the
    # low-luck battles, solved with standard dice, leave the band of the true samples
    indices = [i for i, b in enumerate(BATTLES) if b.get("dice") == "low_luck"]
    samples = {i: _true_sample(i) for i in indices}
    caught = [IDS[i] for i in indices if _outside_band(
        _exact({**BATTLES[i], "dice": "standard"}), samples[i])]
    assert caught, "the battery does not detect low luck replaced by standard dice"


def test_mutation_1940_tactical_bombers_unpaired(monkeypatch):
    true = load_rules("1940-2e")
    broken = dataclasses.replace(true, supports=tuple(s for s in true.supports
                                                      if s.giver == "artillery"))
    _assert_caught(monkeypatch, "1940-2e", broken)


def test_mutation_1940_artillery_does_not_support_mechanized_infantry(monkeypatch):
    true = load_rules("1940-2e")
    broken = dataclasses.replace(true, supports=tuple(
        dataclasses.replace(s, targets=("infantry",)) if s.giver == "artillery" else s
        for s in true.supports))
    _assert_caught(monkeypatch, "1940-2e", broken)


def test_mutation_1940_one_hit_carriers(monkeypatch):
    true = load_rules("1940-2e")
    _assert_caught(monkeypatch, "1940-2e", _with_unit(true, "carrier", hp=1, damaged_form=""))


def test_mutation_classic_defending_subs_sneak_attack(monkeypatch):
    true = load_rules("classic")
    _assert_caught(monkeypatch, "classic",
                   _with_flags(true, defender_sub_first_strike="unless_enemy_destroyer"))


def test_mutation_is_undone_after_the_test():
    # monkeypatch restores _CACHE: the shipped rules are back (whatever ran before)
    assert load_rules("1942-2e").flags["attacker_sub_first_strike"] == "unless_enemy_destroyer"
    assert [s.giver for s in load_rules("1942-2e").supports] == ["artillery"]
    assert load_rules("revised").flags["aa_dice"] == "per_aircraft"
    assert len(load_rules("1940-2e").supports) == 3
    assert load_rules("1940-2e").units["carrier"].hp == 2
    assert load_rules("classic").flags["defender_sub_first_strike"] == "never"
