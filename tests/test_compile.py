"""A checked battle compiled into tables (battlecalc.compile), and what the compiled battle
says of itself.

* compile.build_side with its caches (fire laws, casualty walks, block tables) builds the same
  tables as a plain per-row rebuild: every field of every Side, on a mixed battery (land, AA,
  sea with the subs / aircraft split, submerging, bombardment, partial amphibious retreat,
  low luck, orders of losses, every dice edition), whether the caches are cold or warm, and
  equal to the builder as it was before the caches (tests/references/side_reference.py).
* Battles too large for the tables are refused before any table is built.
* Facts, not choices: the retreat a battle has, and the round model (RU_SIMPLE) a battle may
  be played by (1: a land battle of single walks; SIMPLE_EXACT: a sea battle without
  submarines, two single walks too, which the exact solver may play by its walk path
  (SolvePlan.sea_walk, tests/solver/test_plan.py); 0: the general round), and where
  bombardment needs an aircraft category of the defender's.
"""

from __future__ import annotations

import pytest
from battles import BATTERY, MONTE_CARLO, sea_walk_random
from helpers import MC_TRIALS, SIDE_ARRAYS, assert_same_side, compiled_tables, side_specs
from side_reference import reference_build_side

import battlecalc
from battlecalc import api
from battlecalc.api import make_battle
from battlecalc.compile import TABLES, TableCache, compile_battle
from battlecalc.compile import battle as battle_module
from battlecalc.compile import sides as compile_module
from battlecalc.kernels.layout import RU_SIMPLE, SIMPLE_EXACT
from battlecalc.rules import load_rules

MORE = [
    dict(rules="1942-2e", attacker="3 inf 2 art 2 tank 2 ftr 1 bmb", defender="5 inf 1 aa 2 ftr",
         dice="low_luck"),
    dict(rules="1942-2e", attacker="3 sub 2 dd 1 bb 2 ftr 1 bmb", defender="2 sub 1 cv 2 ftr 1 ca",
         sea=True, attacker_submerge="first-chance", defender_submerge="when-only-subs-left"),
    dict(rules="1942-2e", attacker="2 sub 1 dd 1 bb", defender="2 sub 2 tt 1 ftr", sea=True,
         dice="low_luck", attacker_submerge="when-only-subs-left"),
    dict(rules="1942-2e", attacker="1 ftr 1 tank", landing="3 inf 1 art", bombard="1 bb 1 ca",
         defender="4 inf 1 ftr 1 aa", retreat_when_left=3),
    dict(rules="revised", attacker="2 ftr", landing="2 inf 1 tank", bombard="2 bb",
         defender="3 inf 1 ftr 1 aa", retreat_after=1),
    dict(rules="aa50", attacker="2 ftr 1 bmb 2 tank", landing="2 inf", bombard="1 ca",
         defender="3 inf 2 ftr", retreat_after=2, dice="low_luck"),
    dict(rules="1940-2e", attacker="3 inf 1 art 1 mech 1 tank 1 tac 1 ftr",
         defender="4 inf 1 aa 1 ftr", attacker_ool="smart", retreat_when_only_air=True),
    dict(rules="classic", attacker="4 ftr 2 bmb 3 inf", defender="3 inf 2 aa 1 ftr",
         defender_ool="fighter,infantry", keep_land=1),
    dict(rules="1942-2e", attacker="6 ftr 3 bmb", defender="4 inf 3 aa 2 ftr", aa_last=True,
         attacker_ool="*^fighter;1^bomber"),
    dict(rules="1942-2e", attacker="2 bb 2 cv 2 ftr 1 sub", defender="1 bb 1 sub 2 dd 1 tt",
         sea=True, attacker_tech="super_subs", retreat_after=2),
    # laws longer than compile.SHORT_LAW (tables built from the arrays)
    dict(rules="1942-2e", attacker="30 inf 10 art 6 tank 4 ftr", defender="36 inf 2 art 2 aa"),
    dict(rules="revised", attacker="10 sub 8 dd 6 bb 6 ftr", defender="12 sub 6 dd 4 cv 8 ftr",
         sea=True, defender_submerge="first-chance"),
]


@pytest.fixture(scope="module")
def specs():
    battles = MORE + [e.kwargs for e in MONTE_CARLO] + [b for b in BATTERY
                                                      if b["rules"] != "formula"][::3]
    found = side_specs(battles)
    # the battery spans what the caches are keyed by
    assert any(len(s.blocks) > 1 for s in found)  # AA outcomes or partial retreats
    assert any(b[3] is not None for s in found for b in s.blocks)  # stayers' blocks
    assert any(s.submerge for s in found)
    assert any(all(s.split) for s in found)
    assert any(s.dice_model == "low_luck" for s in found)
    assert len({s.ruleset.id for s in found}) == 5
    return found


def test_cached_build_equals_the_plain_rebuild(specs):
    api.forget_compiled()
    cold = [compile_module._python_side(s) for s in specs]  # caches filling
    warm = [compile_module._python_side(s) for s in specs]  # every block kept
    widths = []
    for spec, first, again in zip(specs, cold, warm, strict=True):
        reference = reference_build_side(spec)
        widths.append(reference.pmf.shape[1])
        assert_same_side(first, reference)
        assert_same_side(again, reference)
        api.forget_compiled()
        assert_same_side(compile_module._python_side(spec), reference)  # never seen
    # both ways of building the hit tables (from Python floats, from the arrays) were used
    assert min(widths) <= compile_module.SHORT_LAW < max(widths)


@pytest.mark.parametrize("blocks", ["one", "several"])
def test_built_tables_are_not_the_kept_ones(specs, blocks):
    """A Side owns its arrays, writable (the kernels are compiled for writable arrays):
    writing one leaves the kept block tables, and so the next build, as they were."""
    spec = next(s for s in specs if (len(s.blocks) > 1) == (blocks == "several"))
    api.forget_compiled()
    side = compile_module._python_side(spec)
    for name in SIDE_ARRAYS:
        getattr(side, name)[...] = 0
    assert_same_side(compile_module._python_side(spec), reference_build_side(spec))


def test_forget_compiled_drops_every_table_cache(specs):
    for spec in specs[:20]:
        compile_module.build_side(spec)
        compile_module._python_side(spec)
    assert len(TABLES) and compile_module._kept_walks.cache_info().currsize
    api.forget_compiled()
    assert len(TABLES) == 0 and TABLES.nbytes == 0
    for cache in (compile_module._kept_walks, compile_module._fire_law,
                  compile_module._block_size, battle_module._aa_outcomes):
        assert cache.cache_info().currsize == 0


def test_the_table_cache_stays_within_its_bytes(specs, monkeypatch):
    """Sides and blocks share one byte budget, the least recently used dropped first; an
    entry larger than entry_bytes is built each time, not kept."""
    small = TableCache(max_bytes=20_000, entry_bytes=8_000)
    monkeypatch.setattr(compile_module, "TABLES", small)
    for spec in specs:
        compile_module._python_side(spec)
        compile_module.build_side(spec)
        assert small.nbytes <= 20_000
        assert small.nbytes == sum(size for _, size in small._tables.values())
        assert all(size <= 8_000 for _, size in small._tables.values())
    assert len(small)
    side = compile_module.build_side(specs[0])
    assert compile_module.build_side(specs[0]) is side or side.nbytes > 8_000


# --- too large --------------------------------------------------------------------------------


@pytest.mark.parametrize(("battle", "fragment"), [
    (dict(rules="revised", attacker="600 ftr 600 bmb", defender="1 inf 1 aa"),
     "aircraft against AA fire have up to 361,201 outcomes"),
    (dict(rules="1942-2e", attacker="1000 inf 1000 art 1000 tank 1000 ftr 1000 bmb",
          defender="1000 inf 1000 art 1000 tank 1000 ftr 1000 bmb 1000 aa"),
     "tables would hold"),
    (dict(rules="1942-2e", sea=True, attacker="1000 sub 1000 dd 1000 ftr 1000 bb",
          defender="1000 sub 1000 cv 1000 ftr 1000 tt"), "tables would hold"),
])
def test_too_large_battles_are_refused_before_any_table_is_built(battle, fragment):
    with pytest.raises(battlecalc.BattleInputError, match=fragment):
        battlecalc.simulate(**battle, trials=1000, seed=1)


# --- what the compiled battle says of itself ---------------------------------------------------


def test_the_compiled_battle_says_what_the_api_asks():
    plain = compile_battle(make_battle("1942-2e", "3 inf 2 tank", "4 inf"))
    assert plain.retreat_below is None and not plain.has_partial_retreat
    below = compile_battle(make_battle("1942-2e", "3 inf 2 tank", "4 inf", retreat={"below": 0.4}))
    assert below.retreat_below == 0.4 and not below.has_partial_retreat
    # a land retreat takes every unit along
    full = compile_battle(make_battle("1942-2e", "3 inf 2 tank", "4 inf", retreat={"after": 1}))
    assert full.retreat_below is None and not full.has_partial_retreat
    # an amphibious assault: the fighter may withdraw, the landed infantry stay
    partial = compile_battle(make_battle("1942-2e", "1 ftr", "2 inf", landing="2 inf",
                                         retreat={"after": 1}))
    assert partial.has_partial_retreat


def _lone_retreat(battle: dict) -> bool:
    rules = load_rules(battle["rules"])
    return (rules.flags["lone_attacking_transports"] == "one_volley_then_retreat"
            and any(rules.units[n].transport for n in battle["attacker"]))


@pytest.mark.parametrize("battle", sea_walk_random()[::5])
def test_sea_battles_without_subs_may_take_the_walk_path(battle):
    expected = 0 if _lone_retreat(battle) else SIMPLE_EXACT
    assert compiled_tables(battle).rules[RU_SIMPLE] == expected


def test_the_edition_battles_of_the_walk_path():
    # (the sampled battles hold both kinds of revised / classic attacker)
    assert any(_lone_retreat(b) for b in sea_walk_random())
    assert any(not _lone_retreat(b) and b["rules"] == "revised" for b in sea_walk_random())
    lone = dict(rules="revised", attacker={"battleship": 1, "transport": 2},
                defender={"destroyer": 2}, sea=True)
    assert compiled_tables(lone).rules[RU_SIMPLE] == 0
    destroyed = dict(lone, rules="1942-2e")  # (1942 2E: lone transports are destroyed)
    assert compiled_tables(destroyed).rules[RU_SIMPLE] == SIMPLE_EXACT


@pytest.mark.parametrize("subs", ["attacker", "defender"])
def test_submarines_keep_the_general_round(subs):
    battle = dict(rules="1942-2e", attacker={"cruiser": 2}, defender={"destroyer": 2},
                  sea=True)
    battle[subs] = {**battle[subs], "submarine": 1}
    assert compiled_tables(battle).rules[RU_SIMPLE] == 0
    assert compiled_tables(dict(battle, sea=False, attacker={"infantry": 2},
                                defender={"infantry": 1})).rules[RU_SIMPLE] == 1


AMPHIBIOUS_WITH_DEFENDING_AIR = dict(
    rules="1942-2e", attacker="2 inf 1 tank", landing="3 inf 1 art", bombard="1 bb 1 ca",
    defender="5 inf 1 tank 1 aa 2 ftr")


def test_bombardment_needs_no_aircraft_category_when_ground_units_are_lost_first(
        monkeypatch, plan_of):
    # the defender loses AAA and infantry before its fighters, so the two bombardment hits
    # never reach them: the fast path (no aircraft category) must give the categorised answer
    battle = dict(AMPHIBIOUS_WITH_DEFENDING_AIR, method="exact")
    fast = plan_of(battle)
    assert fast.compiled.rules[RU_SIMPLE] == 1
    plain = fast.result()
    # (compiled again with the aircraft a category of their own, as if bombardment might
    # reach them)
    monkeypatch.setattr(battle_module, "_ground_first", lambda *args: False)
    split = plan_of(battle)
    assert split.compiled.rules[RU_SIMPLE] == 0
    categorised = split.result()
    for key in ("attacker_win", "defender_win", "draw", "takes_territory", "attacker_ipc_loss",
                "defender_ipc_loss", "mean_rounds"):
        assert getattr(plain, key) == pytest.approx(getattr(categorised, key), abs=1e-12), key
    assert plain.defender_survivors == pytest.approx(categorised.defender_survivors, abs=1e-12)


def test_bombardment_within_reach_of_aircraft_keeps_them_apart(assert_mc_agrees):
    # fighters first in the defender's order: bombardment (2 hits) may not take them, so the
    # aircraft are a category of their own; Monte Carlo agrees with exact
    battle = dict(AMPHIBIOUS_WITH_DEFENDING_AIR, defender_ool="fighter")
    compiled = compile_battle(api.make_battle(**battle))
    assert compiled.rules[RU_SIMPLE] == 0
    exact_result = battlecalc.simulate(**battle, method="exact")
    mc = battlecalc.simulate(**battle, method="mc", trials=MC_TRIALS, seed=5)
    assert_mc_agrees(mc, exact_result, probabilities=("attacker_win", "defender_win",
                                                      "takes_territory"), means=())
    # the fighters left are 0..2: their standard deviation is at most 1 (4 standard errors)
    fighters = exact_result.defender_survivors["fighter"]
    assert abs(mc.defender_survivors["fighter"] - fighters) <= 4 / MC_TRIALS ** 0.5
