"""The start laws of a battle that starts where it stands (spec.Start; battlecalc.starts says
what a position is): the sides' laws at the start of the round the kernels play from, and the
rounds fought before it.  A position at the start of a round is the sides' own start laws (the
units chosen as casualties lost first); a position inside a round plays the rest of that round
here, from the known pair of forces, by the kernels' own fire laws (kernels/exact/fire._fire)
and casualty rule (kernels/round_model.assign), into a law of the pairs at the round's end.
compile.battle.compile_battle calls with_start on the compiled battle."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import BattleInputError
from ..kernels import round_model
from ..kernels.exact import fire
from ..kernels.layout import (
    B_OFFSET,
    B_RADIX_A,
    B_RADIX_N,
    I_DESTROYER,
    NO_STATE,
    RU_STRIKE_RETURN,
    S_INFO,
)

# the steps of a round start (the kernels play the round) and of the rest of a round played
# here, by kind
ROUND_STARTS = {"land": ("start", "aa_fire", "aa_casualties", "bombard_fire",
                         "bombard_casualties", "attacker_fire"),
                "sea": ("start", "attacker_strike")}
REFUSED = {"sea": ("defender_strike", "strike_casualties")}



def _state(side, waiting: tuple, split: tuple[bool, bool], units) -> int:
    """The flat state of block 0 after the side's waiting units are lost (they lead its order
    of losses: the first steps of their categories)."""
    steps = [0, 0, 0]  # subs, aircraft, others (compile's categories)
    for name, count in waiting:
        unit = units[name]
        cat = 0 if split[0] and unit.submarine else 1 if split[1] and unit.is_air else 2
        steps[cat] += count
    b = side.blocks[0]
    return int(b[B_OFFSET] + (steps[0] * b[B_RADIX_A] + steps[1]) * b[B_RADIX_N] + steps[2])


def _point(n: int, state: int) -> np.ndarray:
    law = np.zeros(n)
    law[state] = 1.0
    return law


def _fired_at(xs, x, subs_fire: bool, extra: np.ndarray, ys, y, rules) -> np.ndarray:
    """The law of side y's state (from state y) after side x fires from state x once: its
    other units, and its subs where subs_fire, plus extra hits (bombardment) at non-air units;
    the kernels' own fire law (kernels/exact/fire._fire)."""
    n = ys.n_states
    where = np.full(n, NO_STATE, dtype=np.int64)
    states = np.empty(n, dtype=np.int64)
    probs = np.empty(n)
    count = fire._fire(xs.states, xs.rows, xs.pmf, x, subs_fire, True,
                       round_model.air_on_subs(xs.states, x, rules), extra, ys.states, ys.rows,
                       y, rules, where, states, probs)
    law = np.zeros(n)
    np.add.at(law, states[:count], probs[:count])
    return law


def _hit(ys, y, hits: int, rules) -> int:
    """Side y's state after `hits` general hits (they may land on any of its units)."""
    return int(round_model.assign(ys.states, ys.rows, y, 0, 0, hits, False)) if hits else y


def with_start(battle, compiled):
    """The compiled battle starting where battle.start stands (battle as compiled: with its
    waiting units, start_view): the sides' start laws, the rounds fought before the start and
    the first round of the attacker's retreat decisions."""
    start = battle.start
    kind = "sea" if battle.sea else "land"
    step = start.step
    if step in REFUSED.get(kind, ()):
        raise BattleInputError(
            f"start_step {step}: a battle with a submarine strike under way is not solved "
            "from where it stands yet; solve it from the start of the round")
    if kind == "land" and step == "attacker_fire" and start.round > 1 and (
            start.attacker_waiting or start.defender_waiting):
        raise BattleInputError(
            f"start_step attacker_fire of round {start.round}: a round starts with no units "
            "chosen as casualties")
    if step == "attacker_strike" and (battle.attacker_submerge != "never"
                                      or battle.defender_submerge != "never"):
        raise BattleInputError(
            "start_step attacker_strike: this round's submerge decisions are taken already; "
            "with a submerge policy, solve from start_step start")
    att, dfn = compiled.attacker, compiled.defender
    units = battle.rules.units
    a_split, d_split = att.split, dfn.split
    a_stand = _state(att, start.attacker_waiting, a_split, units) if start.attacker_waiting \
        else 0
    d_stand = _state(dfn, start.defender_waiting, d_split, units) if start.defender_waiting \
        else 0
    # (round 1's bombardment casualties chosen fire back where the edition says so: that
    # round is played here, from the known pair)
    round_start = step in ROUND_STARTS[kind] and not (
        kind == "land" and step == "attacker_fire" and start.defender_waiting
        and battle.rules.flags["bombard_return_fire"])
    if round_start:
        a_law = (att.start if len(att.blocks) > 1 or not start.attacker_waiting
                 else _point(att.n_states, a_stand))
        d_law = dfn.start if not start.defender_waiting else _point(dfn.n_states, d_stand)
        rounds_before = start.round - 1
    else:
        if round_model.lone_transports(att.states, 0, compiled.rules):
            raise BattleInputError(
                f"start_step {step}: the attacker's transports alone take one volley and "
                "retreat (lone attacking transports); solve from the start of the round")
        a_law, d_law = _rest_of_round(battle, compiled, a_stand, d_stand)
        rounds_before = start.round
    return dataclasses.replace(
        compiled, attacker=dataclasses.replace(att, start=a_law),
        defender=dataclasses.replace(dfn, start=d_law), start_rounds=rounds_before,
        retreat_from=start.round)


def _rest_of_round(battle, compiled, a_stand: int, d_stand: int):
    """The sides' laws at the end of the round of a position inside it (from the known pair:
    the firing states standing + waiting where the waiting fire, targets standing)."""
    start, rules = battle.start, compiled.rules
    att, dfn = compiled.attacker, compiled.defender
    step = start.step
    one = np.ones(1)
    if step in ("general_casualties", "end_of_round"):
        a = _hit(att, a_stand, start.hits_on_attacker, rules)
        d = _hit(dfn, d_stand, start.hits_on_defender, rules)
        return _point(att.n_states, a), _point(dfn.n_states, d)
    # the subs that struck this round fire no more (read from the units of the round's start:
    # standing and waiting, as the reference does)
    a_strike, d_strike = round_model.strikes(att.states, 0, dfn.states, 0, rules) \
        if battle.sea else (False, False)
    if step == "defender_fire":  # the attacker's fire is over: its hits land now
        if start.bombard_hits:  # (with the round's general hits, as the defender chooses)
            d = int(round_model.assign(dfn.states, dfn.rows, d_stand, start.bombard_hits, 0,
                                       start.hits_on_defender, False))
        else:
            d = _hit(dfn, d_stand, start.hits_on_defender, rules)
        # the defender fires with its waiting casualties
        a_law = _fired_at(dfn, 0, not d_strike, one, att, a_stand, rules)
        return a_law, _point(dfn.n_states, d)
    # attacker_fire: both general fires to come, from the known pair
    a_fire = a_stand
    d_fire = 0
    if battle.sea:
        # strike casualties chosen: removed now, but in revised a side with a destroyer
        # keeps them firing in the general fire
        fire_back = rules[RU_STRIKE_RETURN] == 1
        a_fire = 0 if fire_back and att.states[0, S_INFO] & I_DESTROYER else a_stand
        d_fire = 0 if fire_back and dfn.states[0, S_INFO] & I_DESTROYER else d_stand
    d_law = _fired_at(att, a_fire, not a_strike, compiled.bombardment.pmf, dfn, d_stand, rules)
    a_law = _fired_at(dfn, d_fire, not d_strike, one, att, a_stand, rules)
    return a_law, d_law
