"""Independent, slow, obviously-correct references for the turn planner (issue 44): the
exhaustive optimum of the plan's combination, and the greedy baseline.

It imports nothing of the ``battlecalc`` package.  What it is given, and what it does itself:

* **given** (the tests compute them): the classes of units that may attack, each its place,
  TripleA unit type, count and the territories it may attack (the tests take them from
  ``turn_reference.reach_reference``, part 1's independent reference); and the candidate
  battles' answers, ``answer(front, force) -> (p_take, value)`` for a force ``{type: n}``
  (the tests solve them with the package: these references check the combination, not the
  battles);
* **its own**: which combinations of forces the classes can supply (Hall's condition, unit
  type by unit type: for every set of fronts, what they ask of a type is at most what the
  classes that reach any of them hold -- the condition for a transport problem to be
  feasible), every combination enumerated (:func:`exhaustive_optimum`), and the greedy
  baseline written from its definition (:func:`greedy_baseline`).

``exhaustive_optimum`` enumerates, front after front, every force of each front (none, or any
with each type from 0 to what can reach it, taken with probability at least min-win) and keeps
the best total of the feasible combinations.  Two short cuts, each of which can only skip
combinations that cannot be better: a partial combination the classes cannot supply is not
extended (adding forces never makes one feasible), and one whose total plus the best each
later front could add does not beat the best found is not extended.

``greedy_baseline`` (issue 44's definition): fronts by production, highest first, then by their
defenders' cost, highest first; to each, the units that can reach it, cheapest first (ties:
the place's map order, then the type's name, then the classes in the order given), one at a
time, until P(take) reaches the threshold (0.9); a front that never reaches it is left, its
units kept for the others; the plan's value is the sum of its battles' values.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable


def classes_of(mapping: dict, water: set) -> list[dict]:
    """Classes from turn_reference's mapping {"PLACE / TYPE xN ...": {target: movement}}: their
    place, type, count and the land territories they may attack."""
    found = []
    for key, targets in mapping.items():
        m = re.match(r"^(.*) / (\S+) x(\d+)", key)
        land = sorted(t for t in targets if t not in water)
        if land:
            found.append({"key": key, "place": m.group(1), "type": m.group(2),
                          "count": int(m.group(3)), "targets": land})
    return found


def supply(classes: list[dict], front: str) -> dict:
    """{type: units} of the classes that may attack `front`."""
    out: dict = {}
    for c in classes:
        if front in c["targets"]:
            out[c["type"]] = out.get(c["type"], 0) + c["count"]
    return out


def forces_of(classes: list[dict], front: str):
    """Every non-empty force of `front`: {type: n}, each type from 0 to its supply."""
    have = supply(classes, front)
    kinds = sorted(have)
    for counts in itertools.product(*(range(have[k] + 1) for k in kinds)):
        if any(counts):
            yield {k: n for k, n in zip(kinds, counts, strict=True) if n}


def feasible(classes: list[dict], chosen: dict) -> bool:
    """Whether the classes can supply every force of `chosen` {front: {type: n}} at once:
    Hall's condition for each unit type (for every set S of fronts asking for it, the units
    asked by S are at most those of the classes reaching a front of S)."""
    kinds = {k for force in chosen.values() for k in force}
    for kind in kinds:
        asking = [t for t, force in chosen.items() if force.get(kind)]
        for size in range(1, len(asking) + 1):
            for group in itertools.combinations(asking, size):
                wanted = sum(chosen[t][kind] for t in group)
                held = sum(c["count"] for c in classes if c["type"] == kind
                           and any(t in c["targets"] for t in group))
                if wanted > held:
                    return False
    return True


def exhaustive_optimum(classes: list[dict], fronts: list[str], answer: Callable,
                       min_win: float) -> tuple[float, dict]:
    """(best total, {front: force}) over every feasible combination (module documentation)."""
    options = {}
    for t in fronts:
        found = []
        for force in forces_of(classes, t):
            p_take, value = answer(t, force)
            if p_take >= min_win and value > 0:
                found.append((value, force))
        found.sort(key=lambda item: -item[0])
        options[t] = found
    order = [t for t in fronts if options[t]]
    best_after = [0.0] * (len(order) + 1)
    for i in range(len(order) - 1, -1, -1):
        best_after[i] = best_after[i + 1] + options[order[i]][0][0]
    best = [0.0, {}]

    def extend(i: int, total: float, chosen: dict) -> None:
        if total > best[0]:
            best[0], best[1] = total, dict(chosen)
        if i == len(order) or total + best_after[i] <= best[0]:
            return
        t = order[i]
        for value, force in options[t]:
            chosen[t] = force
            if feasible(classes, chosen):
                extend(i + 1, total + value, chosen)
            del chosen[t]
        extend(i + 1, total, chosen)  # (nothing sent to t)

    extend(0, 0.0, {})
    return best[0], best[1]


def greedy_baseline(classes: list[dict], fronts: list[dict], costs: dict, order: list[str],
                    answer: Callable, threshold: float = 0.9) -> tuple[float, dict]:
    """(value, {front: force}) of the greedy baseline (module documentation).  fronts: [{"name",
    "production", "defenders_cost"}]; costs: {type: the edition's cost}; order: the map's
    territories in order."""
    left = {c["key"]: c["count"] for c in classes}
    place = {name: i for i, name in enumerate(order)}
    total, plan = 0.0, {}
    for front in sorted(fronts, key=lambda f: (-f["production"], -f["defenders_cost"])):
        name = front["name"]
        ladder = []
        reaching = [c for c in classes if name in c["targets"]]
        for c in sorted(reaching, key=lambda c: (costs[c["type"]], place[c["place"]],
                                                 c["type"])):
            ladder += [c] * left[c["key"]]
        force: dict = {}
        for k, c in enumerate(ladder):
            force[c["type"]] = force.get(c["type"], 0) + 1
            p_take, value = answer(name, dict(force))
            if p_take >= threshold:
                for used in ladder[:k + 1]:
                    left[used["key"]] -= 1
                plan[name] = dict(force)
                total += value
                break
    return total, plan
