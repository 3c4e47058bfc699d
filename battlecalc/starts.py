"""Battles that start where they stand (spec.Start): a save in progress as compiled tables.

A battle's start is a law over the state pairs at the start of a round, plus the rounds fought
before it; the kernels play on from there (tables.ExactBattle.start_rounds, retreat_from; the
sides' start laws).  So a position is either

* the start of a round (``start``, the land steps before the general fire, ``attacker_strike``
  at sea): the round is the kernels' to play, with round 1's fire (AA, bombardment) only
  where it is still to come: its hits rolled (``aa_casualties``, ``bombard_casualties``,
  ``bombard_hits``) are a law of one count;
* or inside a round from a known pair of units (the general fire under way or over,
  ``attacker_fire`` at sea or with chosen casualties that fire back, ``defender_fire``,
  ``general_casualties``, ``end_of_round``): the rest of the round is played by
  battlecalc.solver.start, from the kernels' own fire laws and casualty rule, into a law of
  the pairs at the end of the round.  Both sides fire from a known pair, so the law is a
  product of one law a side: the sides' start laws.

This module holds what a start changes of the battle before it is compiled (start_view: the
waiting units back in; bombardment_left; aa_hits_taken); solver.start the start laws.

Units chosen as casualties and not yet removed (waiting) are compiled back into their side's
force and lost first (its order of losses begins with them, LossOrder.chosen): the side's
force at the position is its first state, the units standing the state after those losses.
So losses count from the position, standing + waiting, as the reference does
(tests/references/start_reference.py).  Positions the kernels cannot start from (a submarine strike
under way, a submerge decision already taken at a round's start) are refused, naming the
step.  The TripleA steps each position stands for: docs/in-progress.md.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .errors import BattleInputError


def aa_to_come(start) -> bool:
    """Whether round 1's AA fire is still to roll, or rolled with its hits to take."""
    return start.round == 1 and start.step in ("start", "aa_fire", "aa_casualties")


def bombardment_to_come(start) -> bool:
    return start.round == 1 and start.step in ("start", "aa_fire", "aa_casualties",
                                               "bombard_fire")


def start_view(battle):
    """The battle with each side's waiting units back in its force and lost first: what is
    compiled (an attacker's in an amphibious assault among its landed units, which never
    retreat: its losses count against landed units first)."""
    start = battle.start
    a_wait, d_wait = dict(start.attacker_waiting), dict(start.defender_waiting)
    if not a_wait and not d_wait:
        return battle
    units = battle.rules.units
    for side, waiting in (("attacker", a_wait), ("defender", d_wait)):
        for name in waiting:
            if units[name].hp > 1 and units[name].damaged_form:
                raise BattleInputError(
                    f"{side}_waiting: {name}, a healthy two-hit unit, is damaged before it is "
                    f"lost; give it as {units[name].damaged_form}")

    def plus(army, extra):
        return {n: army.get(n, 0) + extra.get(n, 0) for n in units
                if army.get(n, 0) + extra.get(n, 0)}

    landing = plus(battle.landing, a_wait) if battle.landing else battle.landing
    overland = battle.overland if battle.landing else plus(battle.overland, a_wait)
    return dataclasses.replace(
        battle, attacker=plus(battle.attacker, a_wait), defender=plus(battle.defender, d_wait),
        landing=landing, overland=overland,
        attacker_order=dataclasses.replace(battle.attacker_order,
                                           chosen=start.attacker_waiting),
        defender_order=dataclasses.replace(battle.defender_order,
                                           chosen=start.defender_waiting))


def bombardment_left(start, bombard):
    """The bombardment of a battle starting where it stands: as it is while still to come; a
    law of its rolled hits (bombard_casualties: its hits; attacker_fire / defender_fire of
    round 1: bombard_hits carried into the attacker's fire, where its casualties fire back);
    None after that."""
    if bombardment_to_come(start):
        return bombard
    hits = None
    if start.round == 1 and start.step == "bombard_casualties":
        hits = start.hits_on_defender
    elif start.bombard_hits:
        hits = start.bombard_hits
    if hits is None:
        return None
    if hits >= len(bombard.pmf) or bombard.pmf[hits] == 0.0:
        raise BattleInputError(
            f"{hits} bombardment hits: the bombarding ships cannot roll them "
            f"(at most {len(bombard.pmf) - 1})")
    pmf = np.zeros(hits + 1)
    pmf[hits] = 1.0
    return dataclasses.replace(bombard, pmf=pmf)


def aa_hits_taken(battle, blocks: list) -> list:
    """The attacker's forces after AA fire of start.hits_on_attacker hits, with their
    probabilities given those hits: the AA outcomes (compile._aa_outcomes) that lose that many
    aircraft (the attacker's choice, or in revised and aa50 a uniformly random set of them:
    the law of one die at each aircraft given the hits)."""
    hits = battle.start.hits_on_attacker
    size = sum(battle.attacker.values())
    kept = [(p, force) for p, force in blocks if size - sum(force.values()) == hits]
    total = sum(p for p, _ in kept)
    if not kept or total == 0.0:
        raise BattleInputError(
            f"start_step aa_casualties: the AA cannot score {hits} hits on this attacker")
    return [(p / total, force) for p, force in kept]
