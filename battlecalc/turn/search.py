"""The candidate forces of each front: every one where their number allows, else a search
guided by the combination's prices (issue 44).

* **Enumerated** (:func:`enumerate_forces`): every force of the front, each type from 0 to
  what can reach it, that has a land unit when min-win asks for a taking (a force with no
  land unit cannot take).  A front whose whole supply cannot take it with min-win's
  probability is dropped first: P(take) never falls when a unit is added (under the fixed
  orders of losses the battles are fought with; battlecalc.planner's coupling argument).
* **The greedy baseline** (:func:`greedy`): fronts by production (highest first), then by
  their defenders' cost (highest first); to each, the units that can reach it, cheapest first
  (the edition's cost; ties in the reach's order), one at a time, until P(take) reaches 0.9
  (or min-win if higher); a front never reaching it is left and its units stay free.  Its
  forces are candidates of every searched front, so the plan is worth at least the baseline.
* **Searched** (:func:`price_and_climb`), the fronts with too many forces: the relaxation of
  the combination (battlecalc.turn.combine) prices each unit type on each front; from the
  best priced candidates of each front, a climb adds or removes one unit at a time, each step
  solving every neighbour (one batch for all the climbs) and moving to the neighbour whose
  value less its units' prices is highest, until none is better; the relaxation is then
  priced again, until no climb finds a better priced force or the time is up.  Every force
  solved on the way is a candidate.  The combination is then optimal among the candidates,
  not proven optimal among every force.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

GREEDY_TAKE = 0.9  # the greedy baseline's P(take)
ENUMERATE_FRONT = 6_000  # a front with at most this many forces is enumerated ...
ENUMERATE_TOTAL = 24_000  # ... while the enumerated fronts' forces add up to at most this
BATCH = 1_000  # leaves solved in one solve_many call (the time budget is checked between)
STARTS = 2  # climbs a searched front starts in each pricing round (its best priced forces)


def enumerate_forces(theatre, front, need_land: bool):
    """Every force of `front` (each type from 0 to its supply), the empty one only where a
    battle is pending there, those with no land unit left out where `need_land`."""
    ranges = [range(s + 1) for s in front.supply]
    for force in itertools.product(*ranges):
        if not any(force) and not front.pending:
            continue
        if need_land and not theatre.has_land(front, force):
            continue
        yield force


def count_forces(theatre, front, need_land: bool) -> int:
    """How many forces enumerate_forces gives, without listing them."""
    total = front.forces()
    if need_land and not any(u.domain == "land" and u.can_be_casualty for u in (
            theatre.ruleset.units[n] for n in front.committed)):
        air = 1
        for s, land in zip(front.supply, theatre.land, strict=True):
            if not land:
                air *= s + 1
        total -= air  # the forces of aircraft only (the empty one among them)
        return total
    return total - (0 if front.pending else 1)


@dataclass
class Greedy:
    """The greedy baseline's plan: {front: force}, the units each class gave, its value."""

    chosen: dict
    value: float
    tried: list  # (front, forces solved) of each front it tried


def greedy(theatre, leaves, leaf_key: Callable, value_of: Callable, threshold: float,
           deadline: float | None = None) -> Greedy:
    """The greedy baseline (module documentation).  leaf_key(front, force): the leaf to solve
    (its counter); value_of(front, leaf): a leaf's value under the objective."""
    left = [s.count for s in theatre.supplies]
    fronts = sorted(theatre.fronts.values(), key=lambda f: (
        -f.production, -sum(theatre.ruleset.units[u].cost * n for u, n in f.defender.items())))
    chosen, value, tried = {}, 0.0, []
    for front in fronts:
        if deadline is not None and time.monotonic() > deadline:
            break
        ladder = []
        for s in sorted((s for s in theatre.supplies if front.name in s.targets),
                        key=lambda s: (theatre.costs[theatre.types.index(s.unit_type)],
                                       s.index)):
            ladder += [s] * left[s.index]
        base = tuple(0 for _ in theatre.types)
        prefixes = [base] if front.pending else []
        force = list(base)
        for s in ladder:
            force[theatre.types.index(s.unit_type)] += 1
            prefixes.append(tuple(force))
        leaves.solve(leaf_key(front.name, f) for f in prefixes)
        tried.append((front.name, len(prefixes)))
        for k, f in enumerate(prefixes):
            leaf = leaves.get(*leaf_key(front.name, f))
            if leaf.p_take >= threshold or (front.pending and k == len(prefixes) - 1):
                used = ladder[:k] if front.pending else ladder[:k + 1]
                for s in used:
                    left[s.index] -= 1
                chosen[front.name] = f
                value += value_of(front, leaf)
                break
    return Greedy(chosen, value, tried)


def price_and_climb(theatre, leaves, combination, columns: dict, searched: list,
                    leaf_key: Callable, value_of: Callable, feasible: Callable,
                    deadline: float, progress: Callable[[str], None] | None = None) -> int:
    """Add candidates of the `searched` fronts to `columns` ({front: {force: value}}) by
    priced climbs (module documentation) until none improves or `deadline` (time.monotonic)
    passes; returns the number of pricing rounds."""
    rounds = 0
    while time.monotonic() < deadline:
        rounds += 1
        relaxation = combination.relax({t: list(forces.items()) for t, forces in
                                        columns.items()})
        starts = []
        for t in searched:
            ranked = sorted(columns.get(t, {}).items(), key=lambda item: -relaxation.reduced(
                t, item[0], item[1]))
            starts += [(t, force) for force, _ in ranked[:STARTS]]
        found = _climb(theatre, leaves, columns, starts, relaxation, leaf_key, value_of,
                       feasible, deadline)
        if progress is not None:
            progress(f"search round {rounds}: {sum(len(c) for c in columns.values()):,} "
                     "candidate forces")
        if not found:
            break
    return rounds


def _climb(theatre, leaves, columns, starts, relaxation, leaf_key, value_of, feasible,
           deadline) -> bool:
    """Climb from each start by one unit at a time (module documentation); True where a
    force better priced than every start of its front was found."""
    best_before = {}
    for t, force in starts:
        score = relaxation.reduced(t, force, columns[t][force])
        best_before[t] = max(best_before.get(t, -np.inf), score)
    climbs = list(dict.fromkeys(starts))  # (lists and dicts: the same order every run)
    improved = False
    visited = set(climbs)
    while climbs and time.monotonic() < deadline:
        wanted = {}
        for t, force in climbs:
            front = theatre.fronts[t]
            for u, top in enumerate(front.supply):
                for step in (1, -1):
                    n = force[u] + step
                    if 0 <= n <= top:
                        near = force[:u] + (n,) + force[u + 1:]
                        if any(near) or front.pending:
                            wanted.setdefault((t, force), []).append(near)
        todo = [leaf_key(t, near) for (t, _), nears in wanted.items() for near in nears]
        leaves.solve(todo[:BATCH * 4])
        following = {}
        for (t, force), nears in wanted.items():
            front = theatre.fronts[t]
            here = relaxation.reduced(t, force, columns[t][force])
            best, best_force = here, None
            for near in nears:
                key = leaf_key(t, near)
                if not leaves.known(*key):
                    continue
                leaf = leaves.get(*key)
                if not feasible(front, near, leaf):
                    continue
                value = value_of(front, leaf)
                columns[t][near] = value
                score = relaxation.reduced(t, near, value)
                if score > best + 1e-9:
                    best, best_force = score, near
            if best_force is not None and (t, best_force) not in visited:
                visited.add((t, best_force))
                following[(t, best_force)] = None
                if best > best_before[t] + 1e-9:
                    improved = True
        climbs = list(following)
    return improved


def dominated(forces: list, values: list) -> set:
    """Indices of forces some other force beats with no more of any unit type (another force
    of at least the value and at most the units of each type, not the same force): such a
    force never makes a combination better, every combination taking it being as good with
    the other one."""
    if len(forces) < 2:
        return set()
    f = np.asarray(forces, dtype=np.int32)
    v = np.asarray(values, dtype=float)
    out = set()
    chunk = max(1, 4_000_000 // max(len(forces) * f.shape[1], 1))
    for start in range(0, len(forces), chunk):
        rows = np.arange(start, min(start + chunk, len(forces)))
        # beats[i, j]: force j has at most force i's units, at least its value, and differs
        fewer = (f[None, :, :] <= f[rows, None, :]).all(axis=2)
        better = v[None, :] >= v[rows, None]
        differs = (f[None, :, :] != f[rows, None, :]).any(axis=2)
        beats = fewer & better & differs
        for k in np.nonzero(beats.any(axis=1))[0]:
            out.add(int(rows[k]))
    return out
