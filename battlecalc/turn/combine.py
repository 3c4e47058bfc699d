"""The best combination of forces: a small mixed-integer program solved by HiGHS
(``scipy.optimize.milp``), and its linear relaxation (``scipy.optimize.linprog``) whose dual
prices guide the search for more candidate forces (battlecalc.turn.search).

The program (:class:`Combination`), for candidate forces ``f`` of each front ``t`` with values
``v(t, f)``:

* one binary ``x(t, f)`` per candidate: at most one force a front (exactly one where the
  player's land battle is pending there: its committed units fight whatever is added);
* one whole number ``y(c, t)`` per class ``c`` of units and front ``t`` it may attack: how
  many of its units go there;
* every front gets the units of each type its force counts: ``sum_f f_u x(t, f) = sum_c
  y(c, t)`` over the classes ``c`` of type ``u``;
* no class gives more units than it has: ``sum_t y(c, t) <= count(c)``;
* a unit that blitzes only with an escort (receivesAbilityWhenWith: the mechanized infantry
  with an armour) goes where as many of its givers go from the same territory with the
  movement the route takes (part 1's check_moves rule);
* maximise ``sum v(t, f) x(t, f)``.

``top`` plans: each next one the best that differs from those found in the forces chosen (a
no-good cut).  HiGHS proves a plan optimal among the candidates, or stops at the time limit
with the best found and the gap to its bound.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from ..errors import BattleInputError

SCIPY_HINT = "pip install 'battlecalc[turn]' (or pip install scipy)"


def scipy_optimize():
    """scipy.optimize, or one clear line where scipy is not installed."""
    try:
        from scipy import optimize, sparse
    except ImportError:
        raise BattleInputError(f"the turn planner needs scipy (its HiGHS solver picks the best "
                               f"combination of battles): {SCIPY_HINT}") from None
    return optimize, sparse


@dataclass
class Solution:
    """A combination: the force chosen for each front attacked, the units of each class sent
    to each front, its value; `optimal`: HiGHS proved it best among the candidates; `gap`:
    its bound minus its value otherwise (None when unknown)."""

    value: float
    chosen: dict  # front -> force (tuple), for each front attacked (pending ones included)
    flows: dict  # (supply index, front) -> units
    optimal: bool
    gap: float | None = None
    status: str = ""


@dataclass
class Relaxation:
    """The linear relaxation's value and dual prices: `front_price[t]` (what one force on t
    costs) and `unit_price[(t, type index)]` (what one unit of that type on t costs); a new
    candidate (t, f) can improve the relaxation when v - front_price[t] - sum_u f_u
    unit_price[(t, u)] > 0."""

    value: float
    front_price: dict = field(default_factory=dict)
    unit_price: dict = field(default_factory=dict)

    def reduced(self, front: str, force: tuple, value: float) -> float:
        return value - self.front_price.get(front, 0.0) - sum(
            n * self.unit_price.get((front, u), 0.0) for u, n in enumerate(force) if n)


class Combination:
    """The program over a theatre's classes and fronts (module documentation); candidates
    are given per call: {front: [(force, value), ...]}."""

    def __init__(self, theatre):
        self.theatre = theatre
        self.fronts = list(theatre.fronts)
        self.flows = [(s.index, t) for s in theatre.supplies for t in s.targets
                      if t in theatre.fronts]
        self.type_index = {kind: i for i, kind in enumerate(theatre.types)}

    # ------------------------------------------------------------ the rows
    def _rows(self, columns: dict):
        """(cost vector, A, lower, upper, row kinds, column list, integrality): the program
        with the candidate columns given."""
        _, sparse = scipy_optimize()
        theatre = self.theatre
        listed = [(t, force, value) for t in self.fronts for force, value in columns.get(t, ())]
        nx, ny = len(listed), len(self.flows)
        rows, cols, vals, lower, upper, kinds = [], [], [], [], [], []

        def row(entries, lo, hi, kind):
            r = len(lower)
            for c, v in entries:
                rows.append(r)
                cols.append(c)
                vals.append(v)
            lower.append(lo)
            upper.append(hi)
            kinds.append(kind)

        by_front = defaultdict(list)
        for j, (t, _, _) in enumerate(listed):
            by_front[t].append(j)
        flow_at = {key: nx + k for k, key in enumerate(self.flows)}
        for t in self.fronts:
            pending = theatre.fronts[t].pending
            row([(j, 1.0) for j in by_front[t]], 1.0 if pending else 0.0, 1.0, ("front", t))
            for u, kind in enumerate(theatre.types):
                entries = [(j, float(listed[j][1][u])) for j in by_front[t] if listed[j][1][u]]
                supply = [(flow_at[(s.index, t)], -1.0) for s in theatre.supplies
                          if s.unit_type == kind and t in s.targets]
                if entries or supply:
                    row(entries + supply, 0.0, 0.0, ("units", t, u))
        for s in theatre.supplies:
            row([(flow_at[(s.index, t)], 1.0) for t in s.targets if t in theatre.fronts],
                0.0, float(s.count), ("class", s.index))
        for (origin, t, escort, steps), escorted in self._escorts().items():
            givers = [s for s in theatre.supplies if s.territory == origin
                      and s.unit_type in escort and t in s.targets and s.movement_left >= steps]
            row([(flow_at[(s.index, t)], 1.0) for s in escorted]
                + [(flow_at[(g.index, t)], -1.0) for g in givers], -np.inf, 0.0,
                ("escort", origin, t))
        cost = np.concatenate([-np.array([v for _, _, v in listed], dtype=float),
                               np.zeros(ny)])
        a = sparse.csr_array((vals, (rows, cols)), shape=(len(lower), nx + ny))
        return cost, a, np.array(lower), np.array(upper), kinds, listed

    def _escorts(self) -> dict:
        """{(origin, front, escort types, steps): [supplies needing that escort]}."""
        found = defaultdict(list)
        for s in self.theatre.supplies:
            for t, target in s.targets.items():
                if target.escort and t in self.theatre.fronts:
                    found[(s.territory, t, target.escort)].append((s, target.movement))
        out = {}
        for (origin, t, escort), items in found.items():
            steps = max(m for _, m in items)
            out[(origin, t, escort, steps)] = [s for s, _ in items]
        return out

    def bounds(self, listed):
        upper = [1.0] * len(listed) + [float(self.theatre.supplies[i].count)
                                       for i, _ in self.flows]
        return np.zeros(len(upper)), np.array(upper)

    # ------------------------------------------------------------ solving
    def best(self, columns: dict, *, top: int = 1, time_limit: float = 30.0) -> list[Solution]:
        """The `top` best combinations (fewer where there are not as many), best first."""
        import time

        optimize, sparse = scipy_optimize()
        cost, a, lower, upper, _, listed = self._rows(columns)
        if not listed:  # no candidate: the one plan attacks nothing
            return [Solution(0.0, {}, {}, True, 0.0, "no candidate")]
        lo, hi = self.bounds(listed)
        nx = len(listed)
        integrality = np.ones(len(cost))
        cuts: list[np.ndarray] = []
        found: list[Solution] = []
        deadline = time.monotonic() + time_limit
        while len(found) < top:
            left = deadline - time.monotonic()
            if found and left <= 0:
                break
            constraints = [optimize.LinearConstraint(a, lower, upper)]
            if cuts:
                constraints.append(optimize.LinearConstraint(
                    sparse.csr_array(np.array(cuts)), -np.inf,
                    np.array([c[:nx].clip(0).sum() - 1 for c in cuts])))
            # (no presolve: HiGHS's took 11-15 s on a program of 2,452 candidates of Global
            # 1940's Germans that it then solves in 0.1 s, at its root)
            result = optimize.milp(
                cost, constraints=constraints, integrality=integrality,
                bounds=optimize.Bounds(lo, hi),
                options={"time_limit": max(left, 0.5), "mip_rel_gap": 1e-9,
                         "presolve": False})
            if result.x is None:
                break  # infeasible (no other combination), or nothing found in time
            x = np.round(result.x).astype(int)
            chosen = {}
            value = 0.0
            for j in range(nx):
                if x[j]:
                    t, force, v = listed[j]
                    chosen[t] = force
                    value += v
            flows = {self.flows[k]: int(x[nx + k]) for k in range(len(self.flows))
                     if x[nx + k]}
            optimal = result.status == 0
            gap = None
            if not optimal and getattr(result, "mip_dual_bound", None) is not None \
                    and np.isfinite(result.mip_dual_bound):
                gap = max(-result.mip_dual_bound - value, 0.0)
            found.append(Solution(value, chosen, flows, optimal, 0.0 if optimal else gap,
                                  result.message))
            cut = np.zeros(nx + len(self.flows))
            cut[:nx] = np.where(x[:nx] > 0, 1.0, -1.0)
            cuts.append(cut)
        return found

    def relax(self, columns: dict) -> Relaxation:
        """The linear relaxation (every x between 0 and 1, every y a real number) and its dual
        prices.  Every row is an equality or an upper bound (their lower bounds, 0 or none,
        follow from x, y >= 0)."""
        optimize, _ = scipy_optimize()
        cost, a, lower, upper, kinds, listed = self._rows(columns)
        if not listed:
            return Relaxation(0.0)
        lo, hi = self.bounds(listed)
        a = a.tocsr()
        eq = np.nonzero(lower == upper)[0]
        ub = np.nonzero(lower != upper)[0]
        result = optimize.linprog(
            cost, A_ub=a[ub] if len(ub) else None, b_ub=upper[ub] if len(ub) else None,
            A_eq=a[eq] if len(eq) else None, b_eq=upper[eq] if len(eq) else None,
            bounds=np.column_stack([lo, hi]), method="highs")
        if result.status != 0:
            return Relaxation(0.0)
        relaxation = Relaxation(-result.fun)
        # a new column (t, f) of value v has the reduced cost -v - sum(marginal * its entries)
        # (scipy's marginals: d fun / d b of the minimisation), so the prices are -marginal
        marginals = [(ub, result.ineqlin.marginals if len(ub) else ()),
                     (eq, result.eqlin.marginals if len(eq) else ())]
        for rows, values in marginals:
            for r, m in zip(rows, values, strict=True):
                kind = kinds[r]
                if kind[0] == "front":
                    relaxation.front_price[kind[1]] = -float(m)
                elif kind[0] == "units":
                    relaxation.unit_price[(kind[1], kind[2])] = -float(m)
        return relaxation
