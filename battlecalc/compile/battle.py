"""A checked battle compiled into both sides' tables and the round rules the exact solver and
the Monte Carlo kernel share (compile.sides builds a side): fire before round 1 (round-1 AA
outcomes as attacker blocks, bombardment), the round-rule vector, the retreat policy as kernel
arrays, and a battle that starts where it stands (battlecalc.starts).

Round-1 AA fire gives the attacker one block per distinct outcome (which aircraft are left),
each with its probability; a partial amphibious retreat continues in a block of the units that
stay.  Fire before round 1 (AA, Revised bombardment) is compiled into each side's distribution
of start states.
"""


from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from .. import starts
from ..dice import hit_distribution
from ..errors import BattleInputError
from ..kernels import layout
from ..kernels.layout import (
    B_OFFSET,
    B_RADIX_N,
    FULL_RETREAT,
    NO_LIMIT,
    NO_THRESHOLD,
    RETREAT_COLS,
    RU_A_POLICY,
    RU_A_STRIKE,
    RU_AIR_ALWAYS,
    RU_BOMBARD,
    RU_D_POLICY,
    RU_D_STRIKE,
    RU_DIE,
    RU_LONE_RETREAT,
    RU_LOW_LUCK,
    RU_SIMPLE,
    RU_STRIKE_RETURN,
    RU_SUBMERGE,
    RULE_COLS,
    S_INFO,
    S_MAY_RETREAT,
    SIMPLE_EXACT,
    STRIKE_ALWAYS,
    STRIKE_NEVER,
    STRIKE_UNLESS_DESTROYER,
    RetreatTables,
)
from ..orders import LossOrder, casualty_steps
from ..reactions import after_strikes
from ..solver.plan import LIMITS
from ..solver.start import with_start
from ..spec import SUBMERGE_POLICIES
from .cache import TABLES
from .sides import (
    MAX_AA_OUTCOMES,
    TOO_LARGE_HINT,
    Side,
    _SideSpec,
    build_side,
    flat_state,
)

# an optimal retreat's threshold on its retreat tables' win_value, which holds the policy found
# (1.0: press on, 0.0: retreat; kernels/round_model.should_retreat retreats below it)
OPTIMAL_MASK = 0.5

@dataclass(frozen=True)
class Bombardment:
    """Shore bombardment of an amphibious assault: pmf[B] law of its hits, fired / unused
    ships (beyond one per landing unit), and whether its casualties fire back (else the hits
    are taken before round 1)."""

    pmf: np.ndarray
    return_fire: bool
    fired: dict[str, int]
    unused: dict[str, int]


NO_BOMBARDMENT = Bombardment(np.ones(1), True, {}, {})


@dataclass(frozen=True)
class CompiledBattle:
    attacker: Side
    defender: Side
    rules: np.ndarray  # int64[RULE_COLS]
    bombardment: Bombardment = NO_BOMBARDMENT
    retreat: RetreatTables | None = None  # the attacker's retreat policy as kernel arrays
    sea: bool = False
    # a battle that starts where it stands (with_start): rounds fought before its start, and
    # the rounds fought from which the attacker takes its retreat decisions
    start_rounds: int = 0
    retreat_from: int = 1
    # the attacker retreats optimally by this objective (spec.Objective; None: its retreat
    # policy, if any, is the fixed one): its retreat tables' win_value becomes the policy the
    # backward induction finds (solver.decide.fill_decisions), read with threshold
    # OPTIMAL_MASK
    objective: object | None = None
    # hit counts less likely than this were cut from the sides' tables (solver.Limits.hit_eps)
    hit_eps: float = LIMITS.hit_eps

    def retreat_tables(self) -> RetreatTables:
        """The retreat policy as the kernels take it ("never" where the battle has none)."""
        return self.retreat or self._never_retreat

    @functools.cached_property
    def _never_retreat(self) -> RetreatTables:
        # built once per battle: no kernel writes these (only fill_win_values writes a
        # win_value, that of a --retreat-below policy)
        return RetreatTables(
            np.zeros(RETREAT_COLS, dtype=np.int64), NO_THRESHOLD, np.zeros((1, 1)),
            np.full(self.attacker.n_states, FULL_RETREAT, dtype=np.int64))

    @property
    def retreat_below(self) -> float | None:
        """--retreat-below's win-probability threshold; None when the policy has none (an
        optimal retreat's threshold reads its policy, not a chance of winning)."""
        if (self.retreat is None or self.retreat.below == NO_THRESHOLD
                or self.objective is not None):
            return None
        return self.retreat.below

    @property
    def retreat_air_loss(self) -> float | None:
        """--retreat-air-loss's threshold on the chance of losing every aircraft; None when
        the policy has none."""
        if self.retreat is None or self.retreat.air_above == NO_THRESHOLD:
            return None
        return self.retreat.air_above

    @property
    def has_partial_retreat(self) -> bool:
        """Some retreat leaves units behind (an amphibious assault's landed units): the
        attacker's tables then hold blocks of the stayers (BLOCK_STAYERS), which no battle
        starts in."""
        return self.attacker.has_stayers


# ---------------------------------------------------------------------------------------------
# Fire before round 1


def aa_blocks(attacker: dict[str, int], defender: dict[str, int], a_rules, d_units, flags,
              attacker_order: LossOrder, dice_model: str = "standard",
              die_size=6) -> list[tuple[float, dict[str, int]]]:
    """The attacker's possible forces after round-1 AA fire, with their probabilities.

    Dice: one per attacking aircraft (`aa_dice = per_aircraft`) or min(aa_shots x guns,
    aircraft) (`per_gun`); each hits on the gun's aa_value (low luck: one group of that
    strength; die_size: the fair die's faces, or a biased die's law, Ruleset.die).  Losses: the
    attacker's order of losses restricted to aircraft (`aa_casualties = attacker_chooses`), or
    each die at its own aircraft, i.e. a uniformly random set of the aircraft shot at
    (`own_aircraft`; low luck: TripleA's rule, a sure hit on every full group of die / value
    aircraft of one type, the rest at random among the aircraft left over).
    """
    a_units = a_rules.units
    guns = {n: c for n, c in defender.items() if c and d_units[n].is_aa}
    aircraft = {n: c for n, c in attacker.items() if c and a_units[n].is_air}
    if not guns or not aircraft:
        return [(1.0, dict(attacker))]
    n_aircraft = sum(aircraft.values())
    outcomes_bound = (n_aircraft + 1 if flags["aa_casualties"] == "attacker_chooses"
                      else math.prod(c + 1 for c in aircraft.values()))
    if outcomes_bound > MAX_AA_OUTCOMES:
        raise BattleInputError(
            f"battle too large: {n_aircraft} aircraft against AA fire have up to "
            f"{outcomes_bound:,} outcomes (limit {MAX_AA_OUTCOMES:,}); " + TOO_LARGE_HINT)
    hit_value = max(d_units[n].aa_value for n in guns)
    if flags["aa_dice"] == "per_aircraft":
        n_dice = n_aircraft
    else:
        n_dice = min(n_aircraft, sum(c * d_units[n].aa_shots for n, c in guns.items()))
    hit_chances = hit_distribution({(hit_value, 1): n_dice}, die_size, dice_model)
    outcomes: dict[tuple, float] = {}
    air_order = [n for n, kind in casualty_steps(attacker, a_units, attacker_order,
                                                 a_rules.supports)
                 if kind == "kill" and n in aircraft]
    names = list(aircraft)
    for hits, p_hits in enumerate(hit_chances):
        if p_hits == 0.0:
            continue
        if flags["aa_casualties"] == "attacker_chooses":
            lost: dict[str, int] = {}
            for name in air_order[:hits]:
                lost[name] = lost.get(name, 0) + 1
            key = tuple(sorted(lost.items()))
            outcomes[key] = outcomes.get(key, 0.0) + p_hits
            continue
        sure = dict.fromkeys(names, 0)
        pool = dict(aircraft)
        if dice_model == "low_luck" and die_size % hit_value == 0:
            group = die_size // hit_value
            sure = {n: c // group for n, c in aircraft.items()}
            pool = {n: c % group for n, c in aircraft.items()}
        # the other hits fall on a uniformly random subset of the pool (multivariate
        # hypergeometric over types)
        rest = min(hits - sum(sure.values()), sum(pool.values()))
        total = math.comb(sum(pool.values()), rest)
        for lost_counts in _compositions(rest, [pool[n] for n in names]):
            pairs = [(n, sure[n] + k) for n, k in zip(names, lost_counts, strict=True)]
            ways = math.prod(math.comb(pool[n], k) for n, k in zip(names, lost_counts,
                                                                   strict=True))
            key = tuple(sorted(pairs))
            outcomes[key] = outcomes.get(key, 0.0) + p_hits * ways / total
    return [(prob, {n: c - dict(key).get(n, 0) for n, c in attacker.items()})
            for key, prob in outcomes.items()]


@TABLES.memo(4096)
def _aa_outcomes(attacker: tuple, guns: tuple, a_rules, d_rules, ruleset, attacker_order,
                 dice_model: str, die_size) -> tuple:
    """aa_blocks of a battle, kept for the next battle with the same aircraft and guns
    (battles in bulk: battlecalc.batch): the attacker and the defender's AA guns as (unit,
    count) items in the edition's order, the outcomes as (probability, force items)."""
    return tuple((prob, tuple(force.items())) for prob, force in aa_blocks(
        dict(attacker), dict(guns), a_rules, d_rules.units, ruleset.flags, attacker_order,
        dice_model, die_size))


def _compositions(total: int, caps: list[int]):
    """All ways to write `total` as a sum of len(caps) parts with 0 <= part_i <= caps[i]."""
    if not caps:
        if total == 0:
            yield ()
        return
    for first in range(min(total, caps[0]) + 1):
        for rest in _compositions(total - first, caps[1:]):
            yield (first, *rest)


def bombardment(bombard: dict[str, int], landing_units: int, a_units, flags,
                dice_model: str = "standard", die_size=6) -> Bombardment:
    """Which ships fire (strongest first where one ship per landing unit is the limit) and the
    law of their hits (one fire step: low luck sums their strength)."""
    ships = sorted(((a_units[n].bombard, n) for n, c in bombard.items() for _ in range(c)),
                   reverse=True)
    limit = landing_units if flags["bombard_per_landing_unit"] else len(ships)
    fired: dict[str, int] = {}
    unused: dict[str, int] = {}
    dice: dict[tuple[int, int], int] = {}
    for i, (value, name) in enumerate(ships):
        if i < limit:
            fired[name] = fired.get(name, 0) + 1
            dice[(value, 1)] = dice.get((value, 1), 0) + 1
        else:
            unused[name] = unused.get(name, 0) + 1
    return Bombardment(np.array(hit_distribution(dice, die_size, dice_model)),
                       bool(flags["bombard_return_fire"]), fired, unused)


# ---------------------------------------------------------------------------------------------
# The battle


def round_rules(flags, sea: bool, attacker_submerge: str, defender_submerge: str,
                bombard_in_round: bool, simple: int, dice_model: str = "standard",
                die_size: int = 6) -> np.ndarray:
    """The round-rule vector of the kernels (kernels/layout.py) from an edition's flags."""
    strike = {"never": STRIKE_NEVER, "always": STRIKE_ALWAYS,
              "unless_enemy_destroyer": STRIKE_UNLESS_DESTROYER}
    rules = np.zeros(RULE_COLS, dtype=np.int64)
    if sea:
        rules[RU_A_STRIKE] = strike[flags["attacker_sub_first_strike"]]
        rules[RU_D_STRIKE] = strike[flags["defender_sub_first_strike"]]
    rules[RU_STRIKE_RETURN] = flags["strike_casualties_fire_back"] == "with_own_destroyer"
    rules[RU_AIR_ALWAYS] = flags["air_hits_subs"] == "always"
    rules[RU_SUBMERGE] = {"end_of_round": 0, "before_fire": 1, "never": 2}[
        flags["submerge_timing"] if sea else "never"]
    rules[RU_LONE_RETREAT] = flags["lone_attacking_transports"] == "one_volley_then_retreat"
    rules[RU_A_POLICY] = SUBMERGE_POLICIES.index(attacker_submerge)
    rules[RU_D_POLICY] = SUBMERGE_POLICIES.index(defender_submerge)
    rules[RU_BOMBARD] = bombard_in_round
    rules[RU_SIMPLE] = simple  # (compile._simple)
    rules[RU_LOW_LUCK] = dice_model == "low_luck"
    rules[RU_DIE] = die_size
    return rules


def _simple(battle, split: bool, a_transports: bool) -> int:
    """RU_SIMPLE of a battle: 1 a land battle whose sides are single walks (split: a side has
    a category, subs or aircraft hit apart); SIMPLE_EXACT a sea battle without submarines
    (two single casualty walks as well: every hit may land on any unit, rules.assign takes
    the next step of the side's one walk; the exact solver may play them by its walk path,
    solver.plan.SolvePlan.sea_walk), unless the attacker has transports an edition makes
    retreat when left alone (RU_LONE_RETREAT: only the general round plays that); else 0."""
    if split:
        return 0
    if not battle.sea:
        return 1
    lone = battle.rules.flags["lone_attacking_transports"] == "one_volley_then_retreat"
    return SIMPLE_EXACT if not (lone and a_transports) else 0


def _transports(force: dict[str, int], units) -> bool:
    return any(count and units[n].transport for n, count in force.items())


def _force_key(force: dict[str, int]) -> tuple:
    return tuple(sorted((n, c) for n, c in force.items() if c))


class SideCache:
    """What compile_battle works out of each army of a run of battles of one form (the battles
    of a solve_many lane: spec.BattleForm), kept for the run's next battle: whether the army
    has submarines, AA guns, transports, and its side's tables against each kind of enemy,
    found by the army's dict before its items are hashed (a form's battles share the dicts of
    their armies), of tables cut at hit_eps.  The armies' dicts must not change while the
    cache lives."""

    __slots__ = ("kept", "hit_eps")

    def __init__(self, hit_eps: float = LIMITS.hit_eps):
        self.kept: dict = {}
        self.hit_eps = hit_eps


def compile_battle(battle, sides: SideCache | None = None,
                   hit_eps: float = LIMITS.hit_eps) -> CompiledBattle:
    """Both sides' tables for a validated battle (spec.Battle), each side built once
    (build_side: kept in compile.cache.TABLES), hit counts less likely than hit_eps cut
    (solver.Limits.hit_eps; recorded on the compiled battle).  sides: the SideCache of a run
    of battles of one form (its hit_eps), for those from their start without an amphibious
    assault or kamikaze strikes (each army's sides found by its dict: _compile_kept)."""
    if sides is not None:
        hit_eps = sides.hit_eps
        if not (battle.landing or battle.bombard or battle.start or battle.kamikaze_struck):
            return _compile_kept(battle, sides.kept, hit_eps)
    start = battle.start
    if start:  # (the units chosen as casualties back in, lost first: starts.start_view)
        battle = starts.start_view(battle)
    a_rules, d_rules = battle.attacker_rules, battle.defender_rules
    a_units, d_units = a_rules.units, d_rules.units
    flags = battle.rules.flags
    a_subs = any(a_units[n].submarine for n in battle.attacker)
    d_subs = any(d_units[n].submarine for n in battle.defender)
    # (every chance to hit from the battle's die, a biased one's law: Ruleset.die; the round
    # rules take the number of faces, which only low luck reads)
    dice_model, die_size, die = battle.dice, battle.rules.die_size, battle.rules.die
    bombard = NO_BOMBARDMENT
    if battle.bombard:
        bombard = bombardment(battle.bombard, sum(battle.landing.values()), a_units, flags,
                              dice_model, die)
        if start:  # its hits to come, rolled (a law of one count), or none left
            bombard = starts.bombardment_left(start, bombard) or NO_BOMBARDMENT
    bombarding = bombard is not NO_BOMBARDMENT
    # aircraft are a category of their own where enemy subs make hits on them special (and a
    # defender's where bombardment might reach them: below)
    a_split = (a_subs, d_subs)
    d_split = (d_subs, a_subs)
    guns = () if battle.sea or not starts.aa_to_come(start) else _guns(battle.defender, d_units)
    a_spec = _attacker_spec(battle, a_split, guns, hit_eps)
    d_spec = _defender_spec(battle, d_split, hit_eps)
    attacker, defender = build_side(a_spec), build_side(d_spec)
    if bombarding and not d_split[1] and not _ground_first(defender, d_units,
                                                           len(bombard.pmf) - 1):
        d_split = (d_subs, True)
        d_spec = replace(d_spec, split=d_split)
        defender = build_side(d_spec)
    if bombarding and not bombard.return_fire:
        defender = _bombarded_start(defender, bombard)
    simple = _simple(battle, any(a_split) or any(d_split), _transports(battle.attacker, a_units))
    rules = round_rules(flags, battle.sea, battle.attacker_submerge, battle.defender_submerge,
                        bombarding and bombard.return_fire, simple, dice_model, die_size)
    compiled = CompiledBattle(attacker, defender, rules, bombard, None, battle.sea,
                              hit_eps=hit_eps)
    if battle.retreat:
        compiled = with_retreat(battle, compiled, a_spec)
    if _decides(battle):
        compiled = replace(compiled, objective=battle.objective)
    if start:
        compiled = with_start(battle, compiled)
    return compiled


def _compile_kept(battle, kept: dict, hit_eps: float) -> CompiledBattle:
    """compile_battle of a battle from its start without an amphibious assault or kamikaze
    strikes, with what it computes of one side kept in `kept` (a SideCache's) for the next
    battle of the form.  A side's tables depend on its own units, whether the enemy has
    submarines and (a land battle's attacker) the enemy's AA guns, the attacker's retreat
    tables on its tables and the retreat policy: each distinct side is specified and built
    once (an army found by its dict's identity first, _kept_army)."""
    d_army, a_army = battle.defender, battle.attacker
    enemy = _kept_army(kept, "defender", d_army)
    if enemy is None:
        d_units = battle.defender_rules.units
        enemy = _keep_army(kept, "defender", d_army, (
            any(d_units[n].submarine for n in d_army),
            () if battle.sea else _guns(d_army, d_units), {}))
    d_subs, guns, defenses = enemy
    mine = _kept_army(kept, "attacker", a_army)
    if mine is None:
        a_units = battle.attacker_rules.units
        mine = _keep_army(kept, "attacker", a_army, (
            any(a_units[n].submarine for n in a_army), _transports(a_army, a_units), {}))
    a_subs, a_transports, attacks = mine
    found = attacks.get((d_subs, guns))
    if found is None:
        a_spec = _attacker_spec(battle, (a_subs, d_subs), guns, hit_eps)
        found = attacks[(d_subs, guns)] = (build_side(a_spec), a_spec)
    attacker, a_spec = found
    defender = defenses.get(a_subs)
    if defender is None:
        defender = defenses[a_subs] = build_side(_defender_spec(battle, (d_subs, a_subs),
                                                                hit_eps))
    simple = _simple(battle, a_subs or d_subs, a_transports)
    rules = kept.get(("rules", simple, battle.sea))
    if rules is None:
        rules = kept[("rules", simple, battle.sea)] = round_rules(
            battle.rules.flags, battle.sea, battle.attacker_submerge, battle.defender_submerge,
            False, simple, battle.dice, battle.rules.die_size)
    objective = battle.objective if _decides(battle) else None
    if not battle.retreat:
        # (CompiledBattle(attacker, defender, rules, sea=battle.sea, objective=objective,
        # hit_eps=hit_eps) without the frozen dataclass's __init__: a lane's every battle)
        compiled = object.__new__(CompiledBattle)
        vars(compiled).update(_COMPILED_DEFAULTS, attacker=attacker, defender=defender,
                              rules=rules, sea=battle.sea, objective=objective,
                              hit_eps=hit_eps)
        return compiled
    key = ("retreat", id(attacker), battle.retreat)  # (the attacker is kept: its id stays)
    retreating = kept.get(key)
    if retreating is None:  # (with_retreat reads the defender of no battle)
        compiled = with_retreat(battle, CompiledBattle(attacker, defender, rules,
                                                       NO_BOMBARDMENT, None, battle.sea), a_spec)
        retreating = kept[key] = (compiled.attacker, compiled.retreat)
    return CompiledBattle(retreating[0], defender, rules, NO_BOMBARDMENT, retreating[1],
                          battle.sea, objective=objective, hit_eps=hit_eps)


_COMPILED_DEFAULTS = {f.name: f.default for f in dataclasses.fields(CompiledBattle)
                      if f.default is not dataclasses.MISSING}


def _decides(battle) -> bool:
    """Whether the battle's decisions are solved (its compiled battle carries the objective):
    an optimal retreat or optimal submerging."""
    return battle.retreat.optimal or "optimal" in (battle.attacker_submerge,
                                                   battle.defender_submerge)


def _kept_army(kept: dict, side: str, army: dict) -> tuple | None:
    """_compile_kept's entry of an army (what it keeps of the side), by the dict's identity
    (a dict lookup, where its items would be hashed), else by its items (an equal army given
    in another dict: the entry is shared, and kept by this dict's identity too); None where
    the army is new.  An army's dict must not change while `kept` lives (a lane's are
    BattleForm.army's, which nothing changes)."""
    found = kept.get((side, id(army)))
    if found is not None and found[0] is army:  # (the dict is kept with it: its id stays)
        return found[1]
    entry = kept.get((side, tuple(army.items())))
    if entry is not None:
        kept[(side, id(army))] = (army, entry)
    return entry


def _keep_army(kept: dict, side: str, army: dict, entry: tuple) -> tuple:
    kept[(side, tuple(army.items()))] = entry
    kept[(side, id(army))] = (army, entry)
    return entry


def _guns(defender: dict[str, int], d_units) -> tuple:
    """A land defender's AA guns as (unit, count) items."""
    return tuple((n, c) for n, c in defender.items() if d_units[n].is_aa)


def _submerges(battle, policy: str) -> bool:
    """Whether a side's submarines may submerge (its policy, in a sea battle of an edition
    where they may)."""
    return (battle.sea and battle.rules.flags["submerge_timing"] != "never"
            and policy != "never")


def _attacker_spec(battle, split: tuple[bool, bool], guns: tuple, hit_eps: float) -> _SideSpec:
    """The attacker's _SideSpec: its blocks are its forces after round-1 AA fire (land) from
    the defender's guns (unit, count items)."""
    a_rules = battle.attacker_rules
    a_units = a_rules.units
    blocks = [(1.0, battle.attacker)]
    if battle.kamikaze_struck:  # the law of its force after kamikaze strikes (reactions)
        blocks = after_strikes(a_rules, battle.attacker, battle.kamikaze_struck,
                               battle.dice == "low_luck")
    if not battle.sea:
        blocks = [(prob, dict(force)) for prob, force in _aa_outcomes(
            tuple(battle.attacker.items()), guns, a_rules, battle.defender_rules, battle.rules,
            battle.attacker_order, battle.dice, battle.rules.die)]
        if battle.start.step == "aa_casualties":  # its hits rolled: the forces they leave
            blocks = starts.aa_hits_taken(battle, blocks)
    cost = sum(n * a_units[name].cost for name, n in battle.attacker.items())
    a_blocks = tuple(
        (prob, _force_key(force), cost - sum(n * a_units[name].cost for name, n in force.items()),
         None)
        for prob, force in blocks)
    return _SideSpec(a_rules, "attack", battle.attacker_order, split,
                     _submerges(battle, battle.attacker_submerge), a_blocks, battle.dice,
                     hit_eps)


def _defender_spec(battle, split: tuple[bool, bool], hit_eps: float) -> _SideSpec:
    return _SideSpec(battle.defender_rules, "defense", battle.defender_order, split,
                     _submerges(battle, battle.defender_submerge),
                     ((1.0, _force_key(battle.defender), 0, None),), battle.dice, hit_eps)


def _ground_first(side: Side, units, hits: int) -> bool:
    """Whether the first `hits` casualty steps of a side without categories take no aircraft:
    then bombardment hits (never on aircraft) land where the walk puts them, and the side
    needs no aircraft category (the fast path stays open)."""
    air = np.array([units[name].is_air for name in side.unit_names])
    steps = side.survivors[:hits + 1]  # one block: state k has taken k steps
    return not ((steps[:-1] - steps[1:])[:, air] > 0).any()


def _bombarded_start(defender: Side, bombard: Bombardment) -> Side:
    """Bombardment before round 1 (no return fire): the defender starts with the hits taken
    by its land units (category n), in its order of losses."""
    start = np.zeros(defender.n_states)
    last = int(defender.blocks[0, B_RADIX_N]) - 1
    for hits, p in enumerate(bombard.pmf):
        if p > 0.0:
            start[flat_state(defender, 0, 0, 0, min(hits, last))] += p
    return Side(defender.blocks, defender.states, defender.rows, defender.pmf, defender.cdf,
                start, defender.survivors, defender.ipc_lost, defender.unit_names,
                defender.split, defender.builder)


# ---------------------------------------------------------------------------------------------
# Retreats


def _may_withdraw(battle, side: Side) -> np.ndarray:
    """Units of each type that may withdraw at each attacker state [F, U].

    All of them, except in an amphibious assault: landed units never retreat (a type's
    casualties are counted against its landed units first), and with amphibious_retreat =
    "air_only" (Revised) only aircraft do.
    """
    survivors = side.survivors
    if not battle.landing:
        return survivors.copy()
    flag = battle.rules.flags["amphibious_retreat"]
    allowed = np.zeros_like(survivors)
    for i, name in enumerate(side.unit_names):
        unit = battle.attacker_rules.units[name]
        if unit.is_air and flag != "none":
            allowed[:, i] = survivors[:, i]
        elif flag == "air_and_overland":
            allowed[:, i] = np.minimum(survivors[:, i], battle.overland.get(name, 0))
    return allowed


def retreat_vector(policy) -> tuple[np.ndarray, float]:
    """The retreat vector and win-probability threshold of kernels.round_model.should_retreat, from
    a spec.Retreat."""
    vector = np.array([
        1 if policy else 0,
        policy.after or 0,
        NO_LIMIT if policy.when_left is None else policy.when_left,
        1 if policy.only_air else 0,
        NO_LIMIT if policy.strafe is None else policy.strafe,
    ], dtype=np.int64)
    below = NO_THRESHOLD if policy.below is None else float(policy.below)
    if policy.optimal:  # the policy found: win_value 1.0 where it presses on, 0.0 retreats
        below = OPTIMAL_MASK
    return vector, below


def _has_air(battle, att: Side, n_main: int) -> np.ndarray:
    """int64[Fa]: 1 where the attacker's state has an aircraft in the battle (its first
    n_main states, those of the blocks a battle starts in; the stayers' blocks of a partial
    retreat, where no retreat is decided, 0)."""
    units = battle.attacker_rules.units
    air = np.array([units[name].is_air for name in att.unit_names], dtype=bool)
    has_air = np.zeros(att.n_states, dtype=np.int64)
    has_air[:n_main] = (att.survivors[:n_main][:, air] > 0).any(axis=1)
    return has_air


def with_retreat(battle, compiled: CompiledBattle, a_spec: _SideSpec) -> CompiledBattle:
    """The battle with its retreat policy as kernel arrays.  A retreat at a state where some
    but not all units may withdraw (an amphibious assault) goes on in a block of its own: the
    units that stay, with the withdrawn ones as survivors and the IPC lost carried along."""
    att = compiled.attacker
    leaving = np.minimum(_may_withdraw(battle, att), att.survivors)
    staying = att.survivors - leaving
    n_main = att.n_states
    remainder = np.full(n_main, FULL_RETREAT, dtype=np.int64)
    may = (att.states[:, S_INFO] & layout.I_IN_BATTLE) != 0
    extra = []
    names = att.unit_names
    for f in np.flatnonzero(may & staying.any(axis=1)):
        if not leaving[f].any():
            may[f] = False  # nothing may withdraw
            continue
        force = {names[i]: int(c) for i, c in enumerate(staying[f]) if c}
        extra.append((f, (0.0, _force_key(force), int(att.ipc_lost[f]),
                          tuple(int(c) for c in leaving[f]))))
    if extra:
        spec = _SideSpec(a_spec.ruleset, a_spec.role, a_spec.order, a_spec.split,
                         a_spec.submerge, a_spec.blocks + tuple(b for _, b in extra),
                         a_spec.dice_model, a_spec.hit_eps)
        att = build_side(spec)
        for k, (f, _) in enumerate(extra):
            remainder[f] = att.blocks[len(a_spec.blocks) + k, B_OFFSET]
    remainder = np.concatenate([remainder, np.full(att.n_states - n_main, FULL_RETREAT,
                                                   dtype=np.int64)])
    may = np.concatenate([may, np.zeros(att.n_states - n_main, dtype=bool)])
    states = att.states.copy()
    states[:, S_MAY_RETREAT] = may
    att = Side(att.blocks, states, att.rows, att.pmf, att.cdf, att.start, att.survivors,
               att.ipc_lost, att.unit_names, att.split, att.builder)
    vector, below = retreat_vector(battle.retreat)
    retreat = RetreatTables(vector, below, np.zeros((1, 1)), remainder)
    if battle.retreat.air_loss is not None:
        retreat = retreat._replace(air_above=float(battle.retreat.air_loss),
                                   has_air=_has_air(battle, att, n_main))
    return CompiledBattle(att, compiled.defender, compiled.rules, compiled.bombardment, retreat,
                          compiled.sea, hit_eps=compiled.hit_eps)
