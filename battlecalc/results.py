"""Results of a battle: one core of statistics and views for dice and formula results.

:class:`ResultViews` gives both kinds their JSON, flat-row, CSV and DataFrame views and the
parts of the table they share.  A dice :class:`Result` keeps the law of each side's final force
as numpy arrays (:class:`SideLaw`) and builds its DataFrames (``attacker_distribution``, ...)
only when first asked for: the dict, JSON, CSV-row and table views never import pandas.
"""

from __future__ import annotations

import csv
import io
import json
import math
import time
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any

import numpy as np

from .army import format_army
from .solver.law import FinalLaw, exact_odds, grouped, segment_sums, weighted_sum

# in the order of the outcome codes of battlecalc.kernels.layout (ATTACKER_WIN = 0, ...), the
# order of FinalLaw.outcomes
OUTCOME_KEYS = ("attacker_win", "defender_win", "draw", "stalemate", "retreat")
Z95 = 1.959963984540054
# the text shows a pruned mass from here up: below, it is float rounding (a solve reports the
# mass it played less the mass it passed on, which an ulp of each hit law makes 1e-16 or so)
# as much as states skipped; `pruned` in JSON, CSV and the API keeps every bit of it
PRUNED_SHOWN = 1e-12
PERCENTILES = (10, 50, 90)
LIKELY_OUTCOMES = 5  # end states listed per side
LABEL_WIDTH = 34

LOW_LUCK_LINE = "dice: low luck (sure hits for each full die of strength, one die for the rest)"


def csv_text(row: dict[str, Any], header: bool = True) -> str:
    """One row (and its header line) as CSV text."""
    return rows_csv([row], header=header)


def rows_csv(rows: list[dict[str, Any]], columns: list[str] | None = None,
             header: bool = True) -> str:
    """Rows (dicts with the same keys) and their header line as CSV text; columns: the header
    when there may be no row (default: the first row's keys)."""
    buffer = io.StringIO()
    # a lone CR in a value (a name from a save) is not quoted under lineterminator "\n": the
    # row would end there; such a table quotes every field instead
    cr = any("\r" in value for row in rows for value in row.values() if isinstance(value, str))
    writer = csv.DictWriter(buffer, fieldnames=columns if columns is not None else list(rows[0]),
                            lineterminator="\n",
                            quoting=csv.QUOTE_ALL if cr else csv.QUOTE_MINIMAL)
    if header:
        writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def wilson_interval(successes: float, n: int) -> tuple[float, float]:
    """95% Wilson score interval for a binomial proportion."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1.0 + Z95**2 / n
    centre = (p + Z95**2 / (2 * n)) / denom
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def proportion_statistics(values: dict[str, float], n: int | None) -> tuple[dict, dict]:
    """Standard error and 95% Wilson interval of each proportion in `values` from n trials;
    zero and zero-width for exact results (n None)."""
    stderr = {k: 0.0 if n is None else math.sqrt(max(p * (1 - p), 0.0) / n)
              for k, p in values.items()}
    ci95 = {k: (p, p) if n is None else wilson_interval(p * n, n) for k, p in values.items()}
    return stderr, ci95


def _frame(data: Any):
    import pandas as pd  # only where a DataFrame is built

    return pd.DataFrame(data)


def _plain(value: Any) -> Any:
    """Plain data for JSON: tuples as lists, dicts copied (recursively)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return list(map(_plain, value)) if isinstance(value, tuple) else value


@dataclass
class ResultViews:
    """Views shared by dice and formula results.  The fields of a subclass, in order, are its
    to_dict keys (a `policies` dict is spread in place; fields with repr=False are left out);
    a subclass gives _frames (name -> DataFrame or None, for distribution_csv) and table."""

    rules: str
    method: str
    trials: int | None
    seed: int | None
    attacker: str
    defender: str

    def to_dict(self) -> dict[str, Any]:
        """Plain-data view (the JSON object of `--format json`)."""
        data: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "policies":
                data.update(_plain(self.policies))
            elif f.repr:
                data[f.name] = _plain(getattr(self, f.name))
        return data

    def _frames(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_json(self) -> str:
        """JSON text of :meth:`to_dict` (integer keys of distributions become strings)."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def _spread(self, key: str, value: Any, row: dict[str, Any]) -> None:
        """Put one to_dict entry into a flat row: dicts as KEY.SUB columns, lists joined."""
        if isinstance(value, dict):
            for sub, sub_value in value.items():
                row[f"{key}.{sub}"] = sub_value
        elif isinstance(value, list):
            row[key] = ",".join(map(str, value))
        else:
            row[key] = value

    def flat_row(self) -> dict[str, Any]:
        """One flat row: the JSON fields with nested ones spread into columns (`stderr` and
        `ci95` as NAME_stderr, NAME_ci95_low and NAME_ci95_high)."""
        row: dict[str, Any] = {}
        for key, value in self.to_dict().items():
            if key == "stderr":
                row.update({f"{name}_stderr": err for name, err in value.items()})
            elif key == "ci95":
                for name, (lo, hi) in value.items():
                    row[f"{name}_ci95_low"], row[f"{name}_ci95_high"] = lo, hi
            else:
                self._spread(key, value, row)
        return row

    def to_frame(self):
        """A one-row pandas DataFrame of :meth:`flat_row` (concatenate many with pd.concat)."""
        return _frame([self.flat_row()])

    def to_csv(self, header: bool = True) -> str:
        """CSV text: a header line (unless header=False) and one row."""
        return csv_text(self.flat_row(), header)

    def distribution_csv(self, which: str) -> str:
        """CSV of one distribution (see `_frames`); "" where this result has none."""
        frame = self._frames().get(which, lambda: None)()
        return "" if frame is None else frame.to_csv(index=False, lineterminator="\n")

    def _method_line(self) -> str:
        how = ("exact" if self.method == "exact"
               else f"Monte Carlo, {self.trials:,} trials, seed {self.seed}")
        return f"method: {how}   ({self.elapsed_s:.3f} s)"

    def _pm(self, key: str) -> str:
        """" ± half-width of the 95% interval" of a Monte Carlo mean; "" when exact."""
        return "" if self.method == "exact" else f" ± {Z95 * self.stderr[key]:.3f}"

    def _survivor_lines(self, width: int) -> list[str]:
        """Mean survivors per unit, attacker and defender columns ("-": not on that side)."""
        lines = []
        for name in dict.fromkeys([*self.attacker_survivors, *self.defender_survivors]):
            a, d = (side.get(name) for side in (self.attacker_survivors, self.defender_survivors))
            lines.append(f"  {name:<20}" + "".join(
                f"{'-' if v is None else f'{v:.3f}':>{width}}" for v in (a, d)))
        return lines

    def _outcome_lines(self, labels: dict[str, str]) -> list[str]:
        """The outcome block: one line per (key, label) with its probability and interval."""
        exact = self.method == "exact"
        lines = [f"{'outcome':<{LABEL_WIDTH}}{'probability':>12}   {'' if exact else '95% CI'}"]
        for key, label in labels.items():
            ci = "" if exact else "[{:.2%}, {:.2%}]".format(*self.ci95[key])
            lines.append(f"{label:<{LABEL_WIDTH}}{getattr(self, key):>12.2%}   {ci}")
        return [line.rstrip() for line in lines]


# ---------------------------------------------------------------------------------------------
# Dice results


def _law_frame(name: str, values: np.ndarray, probability: np.ndarray):
    keep = probability > 0
    return _frame({name: values[keep], "probability": probability[keep]})


def ipc_percentiles_of(values: np.ndarray, weights: np.ndarray, offsets: np.ndarray) -> list:
    """The IPC-loss percentiles of many laws at once (a batch's battles, or one law): for the
    law weights (of states with IPC losses values) at offsets[i]:offsets[i + 1], the smallest
    loss L with P(loss <= L) >= q (a slack of 1e-12), one array over the laws for each q in
    PERCENTILES."""
    n = len(offsets) - 1
    battle = np.repeat(np.arange(n), np.diff(offsets))
    kept = weights > 0
    values, weights, battle = values[kept], weights[kept], battle[kept]
    order = np.lexsort((values, battle))
    values, weights, battle = values[order], weights[order], battle[order]
    running = np.cumsum(weights)
    starts = np.searchsorted(battle, np.arange(n))
    ends = np.searchsorted(battle, np.arange(n), side="right")
    before = np.where(starts > 0, running[np.maximum(starts - 1, 0)], 0.0)
    cumulative = (running - before[battle]) / (running[ends - 1] - before)[battle]
    index = np.arange(len(values))
    picked = []
    for q in PERCENTILES:
        reached = np.where(cumulative >= q / 100 - 1e-12, index, len(values))
        first = np.minimum.reduceat(reached, starts)
        picked.append(values[first])
    return picked


@dataclass(frozen=True)
class SideLaw:
    """Law of one side's final force: each distinct survivor vector (columns `units`), its IPC
    loss and probability, most likely first."""

    units: tuple[str, ...]
    survivors: np.ndarray  # int64 [K, len(units)]
    ipc_lost: np.ndarray  # [K]
    probability: np.ndarray  # float64 [K]

    @classmethod
    def of(cls, side, final: np.ndarray, units: list[str], n: float = 1.0) -> SideLaw:
        """From per-state tables (`survivors`, `ipc_lost`, `unit_names`) and the final
        probabilities, or counts out of n trials (added up before dividing: exact)."""
        used = np.flatnonzero(final > 0)
        columns = [list(side.unit_names).index(u) for u in units]
        keys, weight = grouped(np.column_stack([side.survivors[used][:, columns],
                                                 side.ipc_lost[used]]), final[used])
        order = np.argsort(-weight, kind="stable")
        return cls(tuple(units), keys[order, :-1].astype(np.int64),
                   keys[order, -1].astype(side.ipc_lost.dtype), weight[order] / n)

    def ipc_percentiles(self) -> dict[str, int | float]:
        """{"p10": L, "p50": L, "p90": L}: the smallest IPC loss L with P(loss <= L) >= q."""
        picked = ipc_percentiles_of(self.ipc_lost, self.probability,
                                    np.array([0, len(self.ipc_lost)]))
        return {f"p{q}": value[0].item() for q, value in zip(PERCENTILES, picked, strict=True)}

    def keeps_at_least(self, size: int) -> dict[int, float]:
        """{N: probability of keeping N or more units} for N = 1..size."""
        by_count = np.bincount(self.survivors.sum(axis=1), weights=self.probability,
                               minlength=size + 1)
        return dict(enumerate(np.cumsum(by_count[::-1])[::-1][1:].tolist(), start=1))

    def likely(self) -> list[dict[str, Any]]:
        """The LIKELY_OUTCOMES most likely end states as {"survivors": {unit: count},
        "probability": p}."""
        return [{"survivors": self.counts(i), "probability": float(self.probability[i])}
                for i in range(min(LIKELY_OUTCOMES, len(self.probability)))]

    def counts(self, i: int) -> dict[str, int]:
        return {u: int(n) for u, n in zip(self.units, self.survivors[i], strict=True) if n}

    @cached_property
    def end_states(self) -> tuple[tuple[dict[str, int], float], ...]:
        """Each end state, most likely first: ({unit: count left}, probability) (built once:
        a sequence of battles reads them; the dicts are shared, never to be changed)."""
        units = self.units
        return tuple(({u: n for u, n in zip(units, row, strict=True) if n}, p)
                     for row, p in zip(self.survivors.tolist(), self.probability.tolist(),
                                       strict=True))

    def frame(self):
        return _frame({**{u: self.survivors[:, j] for j, u in enumerate(self.units)},
                       "ipc_lost": self.ipc_lost, "probability": self.probability})


DICE_LABELS = {"attacker_win": "attacker wins", "defender_win": "defender wins",
               "draw": "draw (no unit left on either side)", "stalemate": "stalemate",
               "retreat": "retreat", "takes_territory": "takes territory"}


@dataclass
class Result(ResultViews):
    """Odds of one battle.  Probabilities sum to 1 over the five outcomes.

    For Monte Carlo results `stderr` holds the standard error of each reported mean and `ci95`
    95% intervals; for exact results both are zero-width and `pruned` is the probability mass
    skipped for speed.  `attacker_distribution` / `defender_distribution` (law of survivors and
    IPC loss), `rounds_distribution` and `swing_distribution` are DataFrames built on first
    use (None where the method gives no such law).
    """

    sea: bool
    attacker_tech: tuple[str, ...]
    defender_tech: tuple[str, ...]
    policies: dict[str, Any]  # landing, bombard, orders of losses, retreat policy, ...
    attacker_win: float
    defender_win: float
    draw: float
    stalemate: float
    retreat: float
    takes_territory: float
    mean_rounds: float
    attacker_ipc_loss: float
    defender_ipc_loss: float
    tuv_swing: float
    attacker_survivors: dict[str, float]
    defender_survivors: dict[str, float]
    stderr: dict[str, float]
    ci95: dict[str, tuple[float, float]]
    pruned: float | None
    elapsed_s: float
    all_units: tuple[str, ...] = field(repr=False)
    attacker_law: SideLaw | None = field(repr=False)
    defender_law: SideLaw | None = field(repr=False)
    attacker_size: int = field(repr=False)  # units the attacker starts with
    rounds_law: tuple[np.ndarray, np.ndarray] | None = field(repr=False)
    swing_law: tuple[np.ndarray, np.ndarray] | None = field(repr=False)
    # where the battle starts, if anywhere but its very start (spec.Start: simulate's start
    # keywords, round and step); to_dict gives it as "start" then
    start: dict | None = field(default=None, repr=False)
    start_text: str = field(default="", repr=False)

    def __getattr__(self, name: str) -> Any:
        # only reached for an attribute not set yet: a field build_result left to _Pending
        pending = self.__dict__.get("_pending")
        if pending is None or name not in _LAZY:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        if type(pending) is tuple:  # (ExactResults, a solve's outputs): ExactResults.of's
            pending = self.__dict__["_pending"] = pending[0].pending(pending[1])
        pending.fill(self.__dict__, name)
        return self.__dict__[name]

    def __getstate__(self) -> dict[str, Any]:
        # pickled with every field built (the tables _Pending holds stay behind)
        for name in _LAZY_FIELDS:
            getattr(self, name)
        return {k: v for k, v in self.__dict__.items() if k != "_pending"}

    # the DataFrames, built on first use (see the class docstring)
    attacker_distribution = cached_property(lambda self: self.attacker_law.frame())
    defender_distribution = cached_property(lambda self: self.defender_law.frame())
    rounds_distribution = cached_property(
        lambda self: self.rounds_law and _law_frame("rounds", *self.rounds_law))
    swing_distribution = cached_property(
        lambda self: self.swing_law and _law_frame("tuv_swing", *self.swing_law))

    def to_dict(self) -> dict[str, Any]:
        """Plain-data view (the JSON object of `--format json`)."""
        data = {
            **super().to_dict(),
            "attacker_keeps_at_least": self.attacker_law.keeps_at_least(self.attacker_size),
            "likely_outcomes": {"attacker": self.attacker_law.likely(),
                                "defender": self.defender_law.likely()},
            "attacker_ipc_loss_percentiles": self.attacker_law.ipc_percentiles(),
            "defender_ipc_loss_percentiles": self.defender_law.ipc_percentiles(),
        }
        if self.start:
            data["start"] = dict(self.start)
        return data

    def _spread(self, key: str, value: Any, row: dict[str, Any]) -> None:
        """Survivor columns cover every unit of the edition (0 where absent), so rows of
        different battles of one edition share a header; armies (landing, bombard) are army
        notation; the two laws whose size depends on the battle are left to the JSON."""
        if key in ("attacker_survivors", "defender_survivors"):
            for unit in self.all_units or value:
                row[f"{key}.{unit}"] = value.get(unit, 0.0)
        elif key in ("attacker_keeps_at_least", "likely_outcomes"):
            return
        elif isinstance(value, dict) and not key.endswith("_percentiles"):
            row[key] = format_army(value) if value else ""
        else:
            super()._spread(key, value, row)

    def _frames(self) -> dict[str, Any]:
        return {"survivors": self._survivor_long_frame, "ipc": self._ipc_frame,
                "rounds": lambda: self.rounds_distribution,
                "swing": lambda: self.swing_distribution}

    def plot(self):
        """A matplotlib Figure of this result (needs battlecalc[plot]; see battlecalc.plot)."""
        from .plot import plot_result

        return plot_result(self)

    def _sides(self):
        return (("attacker", self.attacker_law), ("defender", self.defender_law))

    def _survivor_long_frame(self):
        sides = self._sides()
        return _frame({
            "side": [side for side, law in sides for _ in law.probability],
            "survivors": [format_army(law.counts(i)) for _, law in sides
                          for i in range(len(law.probability))],
            "ipc_lost": np.concatenate([law.ipc_lost for _, law in sides]),
            "probability": np.concatenate([law.probability for _, law in sides]),
        })

    def _ipc_frame(self):
        laws = [(side, *grouped(law.ipc_lost, law.probability)) for side, law in self._sides()]
        return _frame({"side": [side for side, values, _ in laws for _ in values],
                       "ipc_lost": np.concatenate([values for _, values, _ in laws]),
                       "probability": np.concatenate([p for _, _, p in laws])})

    def _policy_lines(self) -> list[str]:
        p = self.policies
        lines = [f"starts: {self.start_text} (losses count from there)"] if self.start else []
        lines += [f"{label}: {format_army(p[key])}" for key, label in (
            ("landing", "landing from transports"), ("bombard", "bombarding"),
            ("bombard_unused", "cannot bombard (one ship per landing unit)")) if p.get(key)]
        lines += [f"{side} submerge: {p[f'{side}_submerge']}" for side in ("attacker", "defender")
                  if p.get(f"{side}_submerge", "never") != "never"]
        lines += [f"{side} order of losses: {p[f'{side}_ool']}" for side in ("attacker", "defender")
                  if p.get(f"{side}_ool", "cheapest") != "cheapest"]
        if p.get("keep_land"):
            lines.append(f"attacker keeps its last {p['keep_land']} land unit(s) until its "
                         "aircraft are lost")
        if p.get("aa_last"):
            lines.append("defender loses its AAA last")
        if p.get("dice", "standard") != "standard":
            lines.append(LOW_LUCK_LINE)
        if p.get("die_law"):
            lines.append(f"biased die: faces 1, 2, ... come up with chances "
                         f"{p['die_law'].replace(',', ', ')}")
        retreat = [f"{label} {p[key]}" for key, label in (
            ("retreat_after", "after round"), ("retreat_when_left", "with units left <="),
            ("retreat_below", "when its chance of winning <"),
            ("retreat_air_loss", "when its chance of losing every aircraft >"),
            ("strafe", "when defender units left <=")) if p.get(key) is not None]
        retreat += ["when only aircraft are left"] if p.get("retreat_when_only_air") else []
        return lines + (["attacker retreats " + "; ".join(retreat)] if retreat else [])

    def _law_lines(self) -> list[str]:
        """Beyond the means: units the attacker keeps, likely end states, IPC-loss
        percentiles."""
        keeps = self.attacker_law.keeps_at_least(self.attacker_size)
        shown = [f"{n}:{p:.1%}" for n, p in keeps.items() if p >= 0.0005]
        shown += [f"{len(shown) + 1}+:0.0%"] if len(shown) < len(keeps) else []
        lines = ["", "attacker keeps at least N units"]
        for entry in shown:  # one row, wrapped at about 100 characters
            if len(lines[-1]) + len(entry) > 98:
                lines.append(" " * 31)
            lines[-1] += "  " + entry
        columns = [[f"{p:>7.2%}  {format_army(law.counts(i))}"
                    for i, p in enumerate(law.probability[:LIKELY_OUTCOMES])]
                   for _, law in self._sides()]
        width = max(len("attacker"), *map(len, columns[0])) + 3
        lines += ["", "most likely end states", f"  {'attacker':<{width}}defender"]
        for i in range(max(map(len, columns))):
            a_text, d_text = (c[i] if i < len(c) else "" for c in columns)
            lines.append(f"  {a_text:<{width}}{d_text}".rstrip())
        a, d = ("/".join(f"{v:g}" for v in law.ipc_percentiles().values())
                for _, law in self._sides())
        return [*lines, "", f"IPC lost percentiles 10/50/90   attacker {a}   defender {d}"]

    def table(self) -> str:
        """The human-readable report of `--format table`."""
        head = f"{self.rules}: {self.attacker}  attacking  {self.defender}"
        if self.attacker_tech or self.defender_tech:
            head += (f"   (tech: attacker {','.join(self.attacker_tech) or '-'}, "
                     f"defender {','.join(self.defender_tech) or '-'})")
        lines = [head, *self._policy_lines(), self._method_line(), ""]
        exact = self.method == "exact"
        labels = {k: v for k, v in DICE_LABELS.items()
                  if not (k == "retreat" and self.retreat == 0)
                  and not (k == "takes_territory" and self.sea)}
        lines += self._outcome_lines(labels)
        if not self.sea and self.draw > 0:
            lines.append("  (after a draw the territory stays the defender's)")
        lines.append("")
        lines.append(f"{'survivors (mean)':<22}{'attacker':>10}{'defender':>10}")
        lines += [*self._survivor_lines(10), ""]
        lines.append(f"IPC lost   attacker {self.attacker_ipc_loss:.3f}"
                     f"{self._pm('attacker_ipc_loss')}   defender "
                     f"{self.defender_ipc_loss:.3f}{self._pm('defender_ipc_loss')}")
        lines.append(f"TUV swing  {self.tuv_swing:+.3f}{self._pm('tuv_swing')}"
                     "   (defender's loss minus attacker's; positive favours the attacker)")
        lines.append(f"rounds     {self.mean_rounds:.3f} on average")
        if exact and self.pruned >= PRUNED_SHOWN:
            lines.append(f"pruned probability mass: {self.pruned:.2e}")
        lines += self._law_lines()
        return "\n".join(lines)


MAX_POLICY_ROWS = 20_000  # rows of the policy table in JSON (CSV: --distribution policy)


@dataclass
class DecisionResult(Result):
    """Odds of one battle whose decisions were solved (issue 31): a :class:`Result` under
    the optimal policy, and `decisions`: what it was taken for (``objective``,
    ``territory_value``), the objective's value under the policy (``value``), never
    retreating (``never_value``) and the ``gain``; ``rule``, the policy in words where one
    fits, and ``policy``, one row a decision state (the units each side has, the choice, the
    objective's value of pressing on and of retreating there; None past MAX_POLICY_ROWS
    rows: the CSV distribution ``policy`` has them all)."""

    decisions: dict[str, Any] = field(default_factory=dict)
    policy_rows: list[dict[str, Any]] | None = field(default=None, repr=False)
    reaction_rows: list[dict[str, Any]] | None = field(default=None, repr=False)

    def _spread(self, key: str, value: Any, row: dict[str, Any]) -> None:
        if key == "decisions":  # its scalars as columns; the table is the CSV distribution
            for sub, sub_value in value.items():
                if not isinstance(sub_value, (list, dict)) and sub_value is not None:
                    row[f"decisions.{sub}"] = sub_value
        else:
            super()._spread(key, value, row)

    def _frames(self) -> dict[str, Any]:
        return {**super()._frames(),
                "policy": lambda: _frame(self.policy_rows) if self.policy_rows else None,
                "reactions": lambda: (_frame(self.reaction_rows) if self.reaction_rows
                                      else None)}

    def _policy_lines(self) -> list[str]:
        """The battle's policies, then the decisions solved: the optimal retreat in words and
        its gain, each side's optimal submerging, the scramble and kamikaze taken."""
        d = self.decisions
        lines = super()._policy_lines()
        pm = "" if self.method == "exact" else " (Monte Carlo)"
        if d.get("retreat_policy") == "optimal":
            lines.append(f"optimal retreat, for the {d['objective_text']}: {d['rule']}")
            lines.append(f"  {d['objective']} {d['value']:+.4f} with it{pm}, "
                         f"{d['never_value']:+.4f} never retreating: gain {d['gain']:+.4f}")
        for side in ("attacker", "defender"):
            if d.get(f"{side}_submerge"):
                lines.append(f"{side} subs submerge optimally: {d[f'{side}_submerge']}")
        if d.get("retreat_policy") != "optimal" and (
                d.get("attacker_submerge") or d.get("defender_submerge")):
            lines.append(f"  for the {d['objective_text']}: {d['value']:+.4f}{pm}")
        if d.get("scramble_from"):
            bases = "air bases" if ";" in d["scramble_from"] else "air base"
            lines.append(f"scrambled from the {bases} ({d['scramble_from']}): {d['scrambled']}"
                         f" ({d['reactions_chosen']})")
        if d.get("kamikaze"):
            lines.append(f"kamikaze: {d['kamikaze']} token(s) on {d['kamikaze_targets']} "
                         f"({d['reactions_chosen']})")
        return lines

    def table(self) -> str:
        text = super().table()
        extra = []
        if self.reaction_rows:
            extra += ["", *self._reaction_lines()]
        if self.policy_rows:
            extra += ["", f"policy table: {len(self.policy_rows)} decisions (--format json, "
                      "or --format csv --distribution policy)"]
        return text + "\n" + "\n".join(extra) if extra else text

    def _reaction_lines(self) -> list[str]:
        """The defender's reactions: a line a choice weighed, the one taken marked."""
        d = self.decisions
        head = ["the defender's choices weighed (* taken)"]
        rows = self.reaction_rows
        scramble = any(r["scrambled"] != "nothing" for r in rows) or d.get("scramble_from")
        kamikaze = bool(d.get("kamikaze"))
        width = max([9] + [len(r["scrambled"]) for r in rows]) + 2
        k_width = max([16] + [len(r["kamikaze_targets"]) for r in rows]) + 2
        title = ((f"{'scrambled':<{width}}" if scramble else "")
                 + (f"{'kamikaze targets':<{k_width}}" if kamikaze else "")
                 + f"{'att wins':>9}{'def wins':>9}{'TUV swing':>11}{d['objective']:>11}")
        lines = [*head, "  " + title]
        for r in rows:
            taken = (r["scrambled"] == (d.get("scrambled") or "nothing")
                     and r["kamikaze_targets"] == (d.get("kamikaze_targets") or "none"))
            lines.append(("* " if taken else "  ")
                         + (f"{r['scrambled']:<{width}}" if scramble else "")
                         + (f"{r['kamikaze_targets']:<{k_width}}" if kamikaze else "")
                         + f"{r['attacker_win']:>9.2%}{r['defender_win']:>9.2%}"
                         + f"{r['tuv_swing']:>+11.3f}{r['value']:>+11.4f}")
        return lines


def with_decisions(result: Result, objective, policy, never: Result | None,
                   retreat_policy: str | None = "optimal", table: bool = True
                   ) -> DecisionResult:
    """`result` (its fields, lazy ones still pending) as a DecisionResult: the optimal
    policy `policy` (solver.decide.Policy, or None) taken for `objective` (spec.Objective),
    and `never`, the same battle never retreating; table False: without the policy's rows
    (a result only its value is read of)."""
    rows = policy.table if policy is not None and table else []
    submerging = policy.submerging() if policy is not None else {}
    value = objective.of(result)
    never_value = objective.of(never) if never is not None else None
    result.__class__ = DecisionResult
    result.decisions = {
        "retreat_policy": retreat_policy,
        "objective": objective.name, "territory_value": objective.territory_value,
        "objective_text": objective.describe(),
        "value": value, "never_value": never_value,
        "gain": None if never_value is None else value - never_value,
        "rule": (None if retreat_policy is None
                 else policy.rule() if policy is not None
                 else "no retreat decision arises: the battle is fought to the end"),
        "attacker_submerge": submerging.get("attacker"),
        "defender_submerge": submerging.get("defender"),
        "policy": rows if len(rows) <= MAX_POLICY_ROWS else None,
    }
    result.policy_rows = rows if rows else None
    result.reaction_rows = None
    return result


def _present_units(army: dict[str, int], rules) -> list[str]:
    """Units that can be survivors: the army's casualties (not e.g. the Revised AA gun) and
    the damaged forms of its two-hit units."""
    present = {name for name in army if rules.units[name].can_be_casualty}
    present |= {rules.units[name].damaged_form for name in present}
    return [name for name in rules.units if name in present]


def _mean_stderr(counts: np.ndarray, per_state: np.ndarray, n: float) -> float:
    """Standard error of a Monte Carlo mean of per_state[s] over counts[s] of n trials."""
    mean = weighted_sum(counts, per_state) / n
    second = weighted_sum(counts, per_state.astype(np.float64) ** 2) / n
    return math.sqrt(max(second - mean * mean, 0.0) / n)


# A Result builds the fields below on first use (Result.__getattr__, from a _Pending): a caller
# reading the odds pays for no law, no dict and no text it never reads.  Only for battles of
# up to LAZY_STATES states (both sides together) and LAZY_PAIRS state pairs (the exact joint
# law the swing comes from): what a _Pending holds stays small, and a larger battle's solve
# dwarfs building them at once.
_LAZY_FIELDS = ("attacker", "defender", "policies", "attacker_ipc_loss", "defender_ipc_loss",
                "tuv_swing", "attacker_survivors", "defender_survivors", "stderr", "ci95",
                "all_units", "attacker_law", "defender_law", "attacker_size", "rounds_law",
                "swing_law")
_LAZY = frozenset(_LAZY_FIELDS)
_IPC_FIELDS = ("attacker_ipc_loss", "defender_ipc_loss", "tuv_swing")
LAZY_STATES = 1024
LAZY_PAIRS = 16_384


class _Pending:
    """What build_result leaves for later: the battle, its tables and the solver's FinalLaw,
    from which :meth:`fill` builds a Result's lazy fields, each exactly as when built at once.
    The law may itself come later: make(outputs) builds it from an exact solve's outputs
    (ExactResults.pending)."""

    __slots__ = ("battle", "tables", "_law", "exact", "_make", "_outputs", "_present")

    def __init__(self, battle, tables, law: FinalLaw | None, exact: bool, make=None,
                 outputs=None):
        self.battle, self.tables, self._law, self.exact = battle, tables, law, exact
        self._make, self._outputs = make, outputs
        self._present = None

    @property
    def law(self) -> FinalLaw:
        law = self._law
        if law is None:  # built now from the solve's outputs (ExactResults.pending)
            law = self._law = self._make(self._outputs)
        return law

    def present(self) -> tuple[list[str], list[str]]:
        """Each side's units that can be survivors (_present_units)."""
        if self._present is None:
            battle = self.battle
            self._present = (_present_units(battle.attacker, battle.attacker_rules),
                             _present_units(battle.defender, battle.defender_rules))
        return self._present

    def fill(self, into: dict[str, Any], name: str) -> None:
        """Put field `name` (and any built with it) into a Result's __dict__ `into`, which
        holds the odds already (build_result)."""
        battle = self.battle
        if name in ("attacker", "defender"):
            into[name] = format_army(getattr(battle, name))
        elif name == "policies":
            into[name] = _policies(battle, self.tables)
        elif name == "all_units":
            into[name] = tuple(battle.rules.units)
        elif name == "attacker_size":
            into[name] = sum(battle.attacker.values())
        elif name in ("stderr", "ci95"):
            # of the outcome probabilities (and for Monte Carlo the means' standard errors)
            values = {k: into[k] for k in (*OUTCOME_KEYS, "takes_territory")}
            into["stderr"], into["ci95"] = _statistics(
                values, self.tables, None if self.exact else self.law, self.exact)
        else:
            self._fill_law(into, name, self.law)

    def _fill_law(self, into: dict[str, Any], name: str, law: FinalLaw) -> None:
        """The fields built from the law."""
        tables, n = self.tables, law.total
        if name in _IPC_FIELDS:
            # an exact law is in probabilities already (n = 1.0: x / n is x)
            a_final, d_final = ((law.a_final, law.d_final) if self.exact and n == 1.0
                                else (law.a_final / n, law.d_final / n))
            a_ipc = float(weighted_sum(a_final, tables.attacker.ipc_lost))
            d_ipc = float(weighted_sum(d_final, tables.defender.ipc_lost))
            into.update(attacker_ipc_loss=a_ipc, defender_ipc_loss=d_ipc, tuv_swing=d_ipc - a_ipc)
        elif name in ("attacker_survivors", "defender_survivors"):
            attacker = name == "attacker_survivors"
            side = tables.attacker if attacker else tables.defender
            final = (law.a_final if attacker else law.d_final) / n
            names = list(tables.attacker.unit_names)
            into[name] = {u: float(weighted_sum(final, side.survivors[:, names.index(u)]))
                          for u in self.present()[0 if attacker else 1]}
        elif name in ("attacker_law", "defender_law"):
            attacker = name == "attacker_law"
            into[name] = SideLaw.of(tables.attacker if attacker else tables.defender,
                                    law.a_final if attacker else law.d_final,
                                    self.present()[0 if attacker else 1], n)
        elif name == "rounds_law":
            hist = law.rounds_hist
            into[name] = None if hist is None else (np.arange(len(hist)), hist / n)
        elif name == "swing_law":
            into[name] = None if law.swing is None else (law.swing[0], law.swing[1] / n)


def _statistics(values: dict[str, float], tables, law: FinalLaw | None, exact: bool):
    """A Result's stderr and ci95: of the outcome probabilities `values`, and the standard
    errors of the means (zero when exact: the law is not read, and may be None)."""
    n = None if exact else law.total
    stderr, ci95 = proportion_statistics(values, None if exact else int(n))
    if exact:
        stderr.update(dict.fromkeys(
            ("attacker_ipc_loss", "defender_ipc_loss", "tuv_swing", "mean_rounds"), 0.0))
    else:
        stderr["attacker_ipc_loss"] = _mean_stderr(law.a_final, tables.attacker.ipc_lost, n)
        stderr["defender_ipc_loss"] = _mean_stderr(law.d_final, tables.defender.ipc_lost, n)
        swing_mean = law.swing_sum / n
        # (x * x, not x**2: a float's ** is libm's pow, whose last bit differs with FMA or not)
        stderr["tuv_swing"] = math.sqrt(max(law.swing_sq_sum / n - swing_mean * swing_mean, 0.0)
                                        / n)
        hist = law.rounds_hist
        rounds = np.arange(len(hist), dtype=np.float64)
        stderr["mean_rounds"] = math.sqrt(
            max(float(weighted_sum(hist, rounds * rounds)) / n
                - law.mean_rounds * law.mean_rounds, 0.0) / n)
    return stderr, ci95


def _policies(battle, tables) -> dict[str, Any]:
    """The policies of a battle: the same keys for every battle, so CSV rows of one edition
    share a header (but retreat_air_loss and die_law, there where they are given)."""
    bombardment, retreat = getattr(tables, "bombardment", None), battle.retreat
    return {
        "landing": dict(battle.landing),
        "bombard": dict(bombardment.fired) if bombardment else {},
        "bombard_unused": dict(bombardment.unused) if bombardment else {},
        "attacker_submerge": battle.attacker_submerge,
        "defender_submerge": battle.defender_submerge,
        "attacker_ool": battle.attacker_order.text, "defender_ool": battle.defender_order.text,
        "keep_land": battle.attacker_order.keep_land, "aa_last": battle.defender_order.aa_last,
        "retreat_after": retreat.after, "retreat_when_left": retreat.when_left,
        "retreat_when_only_air": retreat.only_air, "retreat_below": retreat.below,
        "strafe": retreat.strafe, "dice": battle.dice,
        # (where given only: the answers of every battle without it stay as they were)
        **({"retreat_air_loss": retreat.air_loss} if retreat.air_loss is not None else {}),
        # (a biased die, where given: its faces' chances in lowest terms, "1/3,1/6,...")
        **({"die_law": battle.rules.die_law.text()} if battle.rules.die_law is not None
           else {}),
        # (the table's options no check reads, as given: spec.Battle.extras)
        **dict(getattr(battle, "extras", ())),
    }


def build_result(battle, tables, method: str, trials, seed, law: FinalLaw,
                 started: float) -> Result:
    """Turn a solver's FinalLaw (probabilities, or counts out of `trials`) into a Result: the
    odds at once, the rest on first use (_LAZY_FIELDS; at once for a larger battle)."""
    exact = method == "exact"
    n = law.total
    # an exact law is in probabilities already (n = 1.0: x / n is x)
    outcomes = law.outcomes if exact and n == 1.0 else law.outcomes / n
    result = Result.__new__(Result)
    odds = result.__dict__
    odds.update(zip(OUTCOME_KEYS, outcomes.tolist(), strict=True))
    odds.update(
        rules=battle.rules.id, method=method, trials=trials, seed=seed, sea=battle.sea,
        attacker_tech=battle.attacker_tech, defender_tech=battle.defender_tech,
        takes_territory=float(law.takes / n), mean_rounds=law.mean_rounds,
        pruned=law.pruned if exact else None, _pending=_Pending(battle, tables, law, exact))
    if battle.start:
        odds["start"], odds["start_text"] = battle.start.keywords(), battle.start.text()
    if not _lazy(tables):
        _build_all(result)
    result.elapsed_s = time.perf_counter() - started
    return result


class ExactResults:
    """The Results of one battle's exact solves, each made from the solve's outputs
    (solver.ExactSolve.again, read by solver.law.exact_odds) rather than its FinalLaw, which
    law_of(outputs) builds only when a field needs it (ExactSolve.law_of): the Result of
    build_result, with the fields every solve of the battle shares built once (the per-call
    floor of a small battle, issue 19)."""

    __slots__ = ("battle", "tables", "law_of", "shared", "n_a", "n_d", "start_rounds")

    def __init__(self, battle, tables, law_of):
        self.battle, self.tables, self.law_of = battle, tables, law_of
        self.shared = dict(rules=battle.rules.id, method="exact", trials=None, seed=None,
                           sea=battle.sea, attacker_tech=battle.attacker_tech,
                           defender_tech=battle.defender_tech)
        if battle.start:
            self.shared.update(start=battle.start.keywords(), start_text=battle.start.text())
        self.n_a, self.n_d = len(tables.attacker.ipc_lost), len(tables.defender.ipc_lost)
        self.start_rounds = tables.start_rounds

    def of(self, outputs, started: float) -> Result:
        """The Result of a solve's outputs (`started`: as for build_result)."""
        outcomes, takes, mean_rounds, pruned = exact_odds(outputs, self.start_rounds)
        result = Result.__new__(Result)
        odds = result.__dict__
        odds.update(self.shared)
        # (one by one: cheaper than zip with OUTCOME_KEYS, on the per-call floor)
        odds["attacker_win"], odds["defender_win"], odds["draw"], odds["stalemate"], \
            odds["retreat"] = outcomes
        odds["takes_territory"] = takes
        odds["mean_rounds"] = mean_rounds
        odds["pruned"] = pruned
        odds["_pending"] = (self, outputs)  # made a _Pending when first needed
        n_a, n_d = self.n_a, self.n_d
        if n_a + n_d > LAZY_STATES or n_a * n_d > LAZY_PAIRS:  # as _lazy(self.tables) says
            _build_all(result)
        result.elapsed_s = time.perf_counter() - started
        return result

    def pending(self, outputs) -> _Pending:
        """The _Pending of the Result of `outputs`."""
        return _Pending(self.battle, self.tables, None, True, self.law_of, outputs)


def _lazy(tables) -> bool:
    """Whether a Result of the battle of these tables builds its _LAZY_FIELDS on first use
    (at most LAZY_STATES states and LAZY_PAIRS state pairs)."""
    n_a, n_d = len(tables.attacker.ipc_lost), len(tables.defender.ipc_lost)
    return n_a + n_d <= LAZY_STATES and n_a * n_d <= LAZY_PAIRS


def _build_all(result: Result) -> None:
    """Build a Result's lazy fields now."""
    for name in _LAZY_FIELDS:
        getattr(result, name)
    del result.__dict__["_pending"]


# ---------------------------------------------------------------------------------------------
# Rows of many exact battles at once (solve_many, sweep)

VALUES = (*OUTCOME_KEYS, "takes_territory")
MEANS = ("attacker_ipc_loss", "defender_ipc_loss", "tuv_swing", "mean_rounds")


def rows(battles: list, tables: list, law, elapsed: float, compiled: bool = True
         ) -> list[tuple[np.ndarray, dict[str, Any]]]:
    """The flat rows (Result.flat_row's columns, in its order, with its values to the last
    bit) of n battles solved exactly together: their checked battles, compiled tables and
    law (solver.batch.BatchLaw), elapsed_s each; compiled: the kernels that add the sums
    (solver.law.segment_sums).  A part per edition and kind of start (their columns): (the
    members' indices, {column: values}), the descriptive columns as lists, the numbers as
    numpy arrays."""
    a_off = _offsets(np.diff(law.a_out)[:, 0])
    d_off = _offsets(np.diff(law.d_out)[:, 0])
    everyone = np.arange(len(battles))
    a_rows = _state_rows(everyone, law.a_states, law.a_out)
    d_rows = _state_rows(everyone, law.d_states, law.d_out)
    att, dfn = law.attackers, law.defenders
    a_ipc_lost = np.concatenate([s.ipc_lost for s in att.unique])[a_rows[0]]
    d_ipc_lost = np.concatenate([s.ipc_lost for s in dfn.unique])[d_rows[0]]
    a_ipc = segment_sums((law.a_final * a_ipc_lost)[:, None], a_off, compiled)[:, 0]
    d_ipc = segment_sums((law.d_final * d_ipc_lost)[:, None], d_off, compiled)[:, 0]
    numbers = {key: law.outcomes[:, i] for i, key in enumerate(OUTCOME_KEYS)}
    numbers["takes_territory"] = law.takes
    numbers.update(mean_rounds=law.mean_rounds, attacker_ipc_loss=a_ipc,
                   defender_ipc_loss=d_ipc, tuv_swing=d_ipc - a_ipc)
    for side, ipc_lost, final, offs in (("attacker", a_ipc_lost, law.a_final, a_off),
                                        ("defender", d_ipc_lost, law.d_final, d_off)):
        for q, values in zip(PERCENTILES, ipc_percentiles_of(ipc_lost, final, offs),
                             strict=True):
            numbers[f"{side}_ipc_loss_percentiles.p{q}"] = values
    numbers["pruned"] = law.pruned

    # the battles of each edition, kind of start and set of the table's unread options
    kinds: dict[tuple, list[int]] = {}
    for i, battle in enumerate(battles):
        kinds.setdefault((id(battle.rules), bool(battle.start), battle.extras),
                         []).append(i)
    parts = []
    # (by the dict's identity: the caller holds every battle, and so its armies' dicts, while
    # the rows are built, and a lane's battles share the dicts of their armies)
    army_text = _memo(format_army, id)
    for members in map(np.asarray, kinds.values()):
        units = tuple(battles[members[0]].rules.units)
        columns: dict[str, Any] = _described([battles[i] for i in members],
                                             [tables[i] for i in members], army_text)
        for name in (*VALUES, *MEANS[3:], *MEANS[:3]):
            columns[name] = numbers[name][members]
        for side, sides, final, states, outs in (
                ("attacker", att, law.a_final, law.a_states, law.a_out),
                ("defender", dfn, law.d_final, law.d_states, law.d_out)):
            means = _survivor_means(members, sides, states, outs, final, compiled)
            ruleset = "attacker_rules" if side == "attacker" else "defender_rules"
            means *= _present_masks([getattr(battles[i], side) for i in members],
                                    [getattr(battles[i], ruleset) for i in members], units)
            for j, unit in enumerate(units):
                columns[f"{side}_survivors.{unit}"] = means[:, j]
        zero = np.zeros(len(members))
        for name in (*VALUES, *MEANS):
            columns[f"{name}_stderr"] = zero
        for name in VALUES:
            columns[f"{name}_ci95_low"] = columns[name]
            columns[f"{name}_ci95_high"] = columns[name]
        columns["pruned"] = numbers["pruned"][members]
        columns["elapsed_s"] = np.full(len(members), elapsed)
        for side in ("attacker", "defender"):
            for q in PERCENTILES:
                name = f"{side}_ipc_loss_percentiles.p{q}"
                columns[name] = numbers[name][members]
        if battles[members[0]].start:  # (as flat_row spreads to_dict's "start")
            columns["start"] = [format_army(battles[i].start.keywords()) for i in members]
        parts.append((members, columns))
    return parts


def _offsets(lengths) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(np.fromiter(lengths, dtype=np.int64))])


def _army_text(army: dict[str, int]) -> str:
    return format_army(army) if army else ""


def _memo(function, key_of):
    """function with its answers kept by key_of(*args) (for one call: armies recur)."""
    kept: dict = {}

    def memo(*args):
        key = key_of(*args)
        if key not in kept:
            kept[key] = function(*args)
        return kept[key]

    return memo


def _described(battles: list, tables: list, army_text) -> dict[str, list]:
    """The leading columns of exact battles' rows (flat_row's: the battle and its policies,
    _policies' keys in order), army_text: format_army."""
    n = len(battles)
    columns = {
        "rules": [b.rules.id for b in battles], "method": ["exact"] * n, "trials": [None] * n,
        "seed": [None] * n, "attacker": [army_text(b.attacker) for b in battles],
        "defender": [army_text(b.defender) for b in battles], "sea": [b.sea for b in battles],
        "attacker_tech": [",".join(b.attacker_tech) for b in battles],
        "defender_tech": [",".join(b.defender_tech) for b in battles]}
    # (each distinct set of policies once: a lane's battles share them, by identity, while
    # the caller holds the battles)
    policies_of = _memo(_policies, lambda b, t: (
        id(b.landing), id(t.bombardment), b.attacker_submerge, b.defender_submerge,
        id(b.attacker_order), id(b.defender_order), id(b.retreat), b.dice, b.extras))
    policies = [policies_of(b, t) for b, t in zip(battles, tables, strict=True)]
    for key in policies[0]:
        values = [p[key] for p in policies]
        if isinstance(values[0], dict):  # (armies: notation, as flat_row writes them)
            values = [_army_text(v) for v in values]
        columns[key] = values
    return columns


def _state_rows(members: np.ndarray, tables: np.ndarray, outputs: np.ndarray):
    """(rows of the members' tables, rows of their outputs), state by state: member i's
    states at tables[i] (rows of the distinct sides end to end) and outputs[i]."""
    size = tables[members, 1] - tables[members, 0]
    local = np.arange(size.sum()) - np.repeat(_offsets(size)[:-1], size)
    return (np.repeat(tables[members, 0], size) + local,
            np.repeat(outputs[members, 0], size) + local)


def _present_masks(armies: list[dict[str, int]], rules: list, units: tuple[str, ...]):
    """[len(armies), U]: 1.0 for the units whose survivors Result reports for each army
    (_present_units: its casualties and their damaged forms), else 0.0; each distinct army
    (its units) worked out once."""
    index: dict = {}
    masks = []
    which = np.empty(len(armies), dtype=np.int64)
    for i, (army, ruleset) in enumerate(zip(armies, rules, strict=True)):
        key = (tuple(army), id(ruleset))
        found = index.get(key)
        if found is None:
            found = index[key] = len(masks)
            present = set(_present_units(army, ruleset))
            masks.append([1.0 if unit in present else 0.0 for unit in units])
        which[i] = found
    return np.array(masks)[which]


def _survivor_means(members: np.ndarray, sides, tables: np.ndarray, outputs: np.ndarray,
                    final: np.ndarray, compiled: bool) -> np.ndarray:
    """Mean survivors of each unit type [len(members), U] of the members (battles of one
    edition, U units), each added as Result adds it (segment_sums)."""
    used = np.unique(sides.index[members])
    survivors = np.concatenate([sides.unique[u].survivors for u in used])
    starts = _offsets(sides.unique[u].n_states for u in used)
    local = np.zeros(len(sides.unique), dtype=np.int64)
    local[used] = starts[:-1]
    # the members' tables as rows of `survivors`: their side's start there, not in the batch
    spans = tables.copy()
    spans[members, 0] = local[sides.index[members]]
    spans[members, 1] = spans[members, 0] + tables[members, 1] - tables[members, 0]
    table_rows, out_rows = _state_rows(members, spans, outputs)
    size = tables[members, 1] - tables[members, 0]
    # (only the unit types some side has: the others' means are 0)
    held = np.flatnonzero(survivors.any(axis=0))
    means = np.zeros((len(members), survivors.shape[1]))
    means[:, held] = segment_sums(final[out_rows][:, None] * survivors[table_rows][:, held],
                                  _offsets(size), compiled)
    return means
