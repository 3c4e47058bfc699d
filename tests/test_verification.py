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

import battles
import pytest
from helpers import MC_TRIALS, mc_outside
from tiers import sampled

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


BATTLES = [entry.kwargs for entry in battles.MONTE_CARLO]


IDS = [entry.id for entry in battles.MONTE_CARLO]


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


# (every third battle in the quick tier, all in the slow: tests/tiers.py)
@pytest.mark.parametrize("index", sampled([(i,) for i in range(len(BATTLES))], 3, IDS))
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
