"""Result of a battle: dict / JSON / CSV / pandas / table views of one set of numbers."""

from __future__ import annotations

import csv
import io
import json
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .army import format_army
from .kernels.common import ATTACKER_WIN, DEFENDER_WIN, DRAW, RETREAT, STALEMATE

OUTCOME_KEYS = ("attacker_win", "defender_win", "draw", "stalemate", "retreat")
_OUTCOME_INDEX = {
    "attacker_win": ATTACKER_WIN,
    "defender_win": DEFENDER_WIN,
    "draw": DRAW,
    "stalemate": STALEMATE,
    "retreat": RETREAT,
}
Z95 = 1.959963984540054


def wilson_interval(successes: float, n: int) -> tuple[float, float]:
    """95% Wilson score interval for a binomial proportion."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1.0 + Z95**2 / n
    centre = (p + Z95**2 / (2 * n)) / denom
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def spread_statistics(key: str, value: Any, row: dict[str, Any]) -> bool:
    """Put `stderr` / `ci95` entries into `row` as NAME_stderr, NAME_ci95_low/high columns;
    False for any other key."""
    if key == "stderr":
        for name, err in value.items():
            row[f"{name}_stderr"] = err
        return True
    if key == "ci95":
        for name, (lo, hi) in value.items():
            row[f"{name}_ci95_low"] = lo
            row[f"{name}_ci95_high"] = hi
        return True
    return False


def csv_text(row: dict[str, Any], header: bool = True) -> str:
    """One row (and its header line) as CSV text."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(row), lineterminator="\n")
    if header:
        writer.writeheader()
    writer.writerow(row)
    return buffer.getvalue()


@dataclass
class Result:
    """Odds of one battle.  Probabilities sum to 1 over the five outcomes.

    For Monte Carlo results `stderr` holds the standard error of each reported mean and `ci95`
    95% intervals; for exact results both are zero-width and `pruned` is the probability mass
    skipped for speed.  The `*_distribution` frames give the law of survivors, IPC loss,
    TUV swing and rounds.
    """

    rules: str
    method: str
    trials: int | None
    seed: int | None
    attacker: str
    defender: str
    sea: bool
    attacker_tech: tuple[str, ...]
    defender_tech: tuple[str, ...]
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
    elapsed_s: float
    pruned: float | None = None
    attacker_distribution: pd.DataFrame = field(default=None, repr=False)
    defender_distribution: pd.DataFrame = field(default=None, repr=False)
    rounds_distribution: pd.DataFrame = field(default=None, repr=False)
    swing_distribution: pd.DataFrame | None = field(default=None, repr=False)
    all_units: tuple[str, ...] = field(default=(), repr=False)
    policies: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain-data view (the JSON object of `--format json`)."""
        return {
            "rules": self.rules,
            "method": self.method,
            "trials": self.trials,
            "seed": self.seed,
            "attacker": self.attacker,
            "defender": self.defender,
            "sea": self.sea,
            "attacker_tech": list(self.attacker_tech),
            "defender_tech": list(self.defender_tech),
            **self.policies,
            **{key: getattr(self, key) for key in OUTCOME_KEYS},
            "takes_territory": self.takes_territory,
            "mean_rounds": self.mean_rounds,
            "attacker_ipc_loss": self.attacker_ipc_loss,
            "defender_ipc_loss": self.defender_ipc_loss,
            "tuv_swing": self.tuv_swing,
            "attacker_survivors": dict(self.attacker_survivors),
            "defender_survivors": dict(self.defender_survivors),
            "stderr": dict(self.stderr),
            "ci95": {k: list(v) for k, v in self.ci95.items()},
            "pruned": self.pruned,
            "elapsed_s": self.elapsed_s,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def plot(self):
        """A matplotlib Figure of this result (needs battlecalc[plot]; see battlecalc.plot)."""
        from .plot import plot_result

        return plot_result(self)

    def flat_row(self) -> dict[str, Any]:
        """One flat row: the JSON fields with nested ones spread into columns.

        Survivor columns cover every unit of the edition (0 where absent), so rows of
        different battles of one edition share a header.
        """
        data = self.to_dict()
        row: dict[str, Any] = {}
        for key, value in data.items():
            if key in ("attacker_survivors", "defender_survivors"):
                for unit in self.all_units or value:
                    row[f"{key}.{unit}"] = value.get(unit, 0.0)
            elif spread_statistics(key, value, row):
                continue
            elif isinstance(value, list):
                row[key] = ",".join(value)
            elif isinstance(value, dict):
                row[key] = format_army(value) if value else ""
            else:
                row[key] = value
        return row

    def to_frame(self) -> pd.DataFrame:
        """A one-row DataFrame of :meth:`flat_row` (concatenate many with ``pd.concat``)."""
        return pd.DataFrame([self.flat_row()])

    def to_csv(self, header: bool = True) -> str:
        return csv_text(self.flat_row(), header)

    def distribution_csv(self, which: str) -> str:
        frame = {
            "survivors": self._survivor_long_frame,
            "ipc": self._ipc_frame,
            "rounds": lambda: self.rounds_distribution,
            "swing": lambda: self.swing_distribution,
        }[which]()
        if frame is None:
            return ""
        return frame.to_csv(index=False, lineterminator="\n")

    def _survivor_long_frame(self) -> pd.DataFrame:
        parts = []
        for side, frame in (("attacker", self.attacker_distribution),
                            ("defender", self.defender_distribution)):
            units = [c for c in frame.columns if c not in ("probability", "ipc_lost")]
            part = frame.copy()
            part.insert(0, "side", side)
            labels = [format_army({u: int(row[u]) for u in units})
                      for _, row in part[units].iterrows()]
            part.insert(1, "survivors", labels)
            parts.append(part[["side", "survivors", "ipc_lost", "probability"]])
        return pd.concat(parts, ignore_index=True)

    def _ipc_frame(self) -> pd.DataFrame:
        parts = []
        for side, frame in (("attacker", self.attacker_distribution),
                            ("defender", self.defender_distribution)):
            grouped = frame.groupby("ipc_lost", as_index=False)["probability"].sum()
            grouped.insert(0, "side", side)
            parts.append(grouped)
        return pd.concat(parts, ignore_index=True)

    def table(self) -> str:
        """The human-readable report of `--format table`."""
        lines = []
        head = f"{self.rules}: {self.attacker}  attacking  {self.defender}"
        if self.attacker_tech or self.defender_tech:
            head += (f"   (tech: attacker {','.join(self.attacker_tech) or '-'}, "
                     f"defender {','.join(self.defender_tech) or '-'})")
        lines.append(head)
        for key, label in (("landing", "landing from transports"), ("bombard", "bombarding"),
                           ("bombard_unused", "cannot bombard (one ship per landing unit)")):
            if self.policies.get(key):
                lines.append(f"{label}: {format_army(self.policies[key])}")
        for key in ("attacker_submerge", "defender_submerge"):
            if self.policies.get(key, "never") != "never":
                lines.append(f"{key.replace('_', ' ')}: {self.policies[key]}")
        for key, label in (("attacker_ool", "attacker order of losses"),
                           ("defender_ool", "defender order of losses")):
            if self.policies.get(key, "cheapest") != "cheapest":
                lines.append(f"{label}: {self.policies[key]}")
        if self.policies.get("keep_land"):
            lines.append(f"attacker keeps its last {self.policies['keep_land']} land unit(s) "
                         "until its aircraft are lost")
        if self.policies.get("aa_last"):
            lines.append("defender loses its AAA last")
        retreat = [f"{label} {self.policies[key]}" for key, label in (
            ("retreat_after", "after round"), ("retreat_when_left", "with units left <="),
            ("retreat_below", "when its chance of winning <"),
            ("strafe", "when defender units left <=")) if self.policies.get(key) is not None]
        if self.policies.get("retreat_when_only_air"):
            retreat.append("when only aircraft are left")
        if retreat:
            lines.append("attacker retreats " + "; ".join(retreat))
        how = ("exact" if self.method == "exact"
               else f"Monte Carlo, {self.trials:,} trials, seed {self.seed}")
        lines.append(f"method: {how}   ({self.elapsed_s:.3f} s)")
        lines.append("")
        exact = self.method == "exact"
        lines.append(f"{'outcome':<18}{'probability':>12}   {'95% CI' if not exact else ''}")
        labels = {
            "attacker_win": "attacker wins",
            "defender_win": "defender wins",
            "draw": "draw (both die)",
            "stalemate": "stalemate",
            "retreat": "retreat",
            "takes_territory": "takes territory",
        }
        for key, label in labels.items():
            if key == "retreat" and self.retreat == 0:
                continue
            if key == "takes_territory" and self.sea:
                continue
            value = getattr(self, key)
            ci = "" if exact else "[{:.2%}, {:.2%}]".format(*self.ci95[key])
            lines.append(f"{label:<18}{value:>12.2%}   {ci}")
        lines.append("")
        lines.append(f"{'survivors (mean)':<22}{'attacker':>10}{'defender':>10}")
        names = list(dict.fromkeys([*self.attacker_survivors, *self.defender_survivors]))
        for name in names:
            a = self.attacker_survivors.get(name)
            d = self.defender_survivors.get(name)
            a_text = f"{a:.3f}" if a is not None else "-"
            d_text = f"{d:.3f}" if d is not None else "-"
            lines.append(f"  {name:<20}{a_text:>10}{d_text:>10}")
        lines.append("")
        pm = "" if exact else " ± {:.3f}"
        lines.append(f"IPC lost   attacker {self.attacker_ipc_loss:.3f}"
                     + (pm.format(Z95 * self.stderr['attacker_ipc_loss']) if pm else "")
                     + f"   defender {self.defender_ipc_loss:.3f}"
                     + (pm.format(Z95 * self.stderr['defender_ipc_loss']) if pm else ""))
        lines.append(f"TUV swing  {self.tuv_swing:+.3f}"
                     + (pm.format(Z95 * self.stderr['tuv_swing']) if pm else "")
                     + "   (defender's loss minus attacker's; positive favours the attacker)")
        lines.append(f"rounds     {self.mean_rounds:.3f} on average")
        if exact and self.pruned:
            lines.append(f"pruned probability mass: {self.pruned:.2e}")
        return "\n".join(lines)


def _distribution_frame(tables_side, final: np.ndarray, present: list[str]) -> pd.DataFrame:
    """Law of a side's final force: one row per distinct survivor vector."""
    names = list(tables_side.unit_names)
    idx = [names.index(n) for n in present]
    used = np.flatnonzero(final > 0)
    frame = pd.DataFrame(tables_side.survivors[used][:, idx], columns=present)
    frame["ipc_lost"] = tables_side.ipc_lost[used]
    frame["probability"] = final[used]
    frame = frame.groupby([*present, "ipc_lost"], as_index=False)["probability"].sum()
    return frame.sort_values("probability", ascending=False, ignore_index=True)


def _present_units(battle, side: str) -> list[str]:
    army = battle.attacker if side == "attacker" else battle.defender
    rules = battle.attacker_rules if side == "attacker" else battle.defender_rules
    present = []
    for name in army:
        unit = rules.units[name]
        if not unit.can_be_casualty:
            continue  # e.g. the Revised AA gun: never a casualty, never a survivor
        present.append(name)
        if unit.damaged_form and unit.damaged_form not in present:
            present.append(unit.damaged_form)
    return [n for n in rules.units if n in present]


def build_result(battle, tables, method: str, trials, seed, raw: dict, started: float) -> Result:
    """Turn solver aggregates (probabilities or counts) into a Result."""
    att, dfn = tables.attacker, tables.defender
    names = list(att.unit_names)
    if method == "exact":
        n = 1.0
        outcome_p = raw["outcomes"]
        takes = float(raw["takes"])
        a_final = raw["a_final"]
        d_final = raw["d_final"]
        mean_rounds = float(raw["mean_rounds"])
    else:
        n = float(trials)
        outcome_p = raw["outcomes"] / n
        takes = raw["takes"] / n
        a_final = raw["a_final"] / n
        d_final = raw["d_final"] / n
        mean_rounds = raw["rounds_sum"] / n

    a_present = _present_units(battle, "attacker")
    d_present = _present_units(battle, "defender")
    a_surv = {u: float(a_final @ att.survivors[:, names.index(u)]) for u in a_present}
    d_surv = {u: float(d_final @ dfn.survivors[:, names.index(u)]) for u in d_present}
    a_ipc = float(a_final @ att.ipc_lost)
    d_ipc = float(d_final @ dfn.ipc_lost)

    values = {key: float(outcome_p[_OUTCOME_INDEX[key]]) for key in OUTCOME_KEYS}
    values["takes_territory"] = float(takes)

    stderr: dict[str, float] = {}
    ci95: dict[str, tuple[float, float]] = {}
    if method == "exact":
        for key in (*OUTCOME_KEYS, "takes_territory", "attacker_ipc_loss", "defender_ipc_loss",
                    "tuv_swing", "mean_rounds"):
            stderr[key] = 0.0
        for key in (*OUTCOME_KEYS, "takes_territory"):
            ci95[key] = (values[key], values[key])
        rounds_frame = None
        if raw.get("rounds_hist") is not None:
            hist = raw["rounds_hist"]
            rounds_frame = pd.DataFrame({"rounds": np.arange(len(hist)), "probability": hist})
            rounds_frame = rounds_frame[rounds_frame["probability"] > 0].reset_index(drop=True)
        swing_frame = None
        if raw.get("joint") is not None:
            joint = raw["joint"]
            swing = dfn.ipc_lost[None, :] - att.ipc_lost[:, None]
            mask = joint > 0
            swing_frame = (
                pd.DataFrame({"tuv_swing": swing[mask], "probability": joint[mask]})
                .groupby("tuv_swing", as_index=False)["probability"].sum()
            )
    else:
        for key in (*OUTCOME_KEYS, "takes_territory"):
            p = values[key]
            stderr[key] = math.sqrt(max(p * (1 - p), 0.0) / n)
            ci95[key] = wilson_interval(p * n, int(n))

        def mean_se(final_counts: np.ndarray, per_state: np.ndarray) -> float:
            mean = (final_counts @ per_state) / n
            second = (final_counts @ (per_state.astype(np.float64) ** 2)) / n
            return math.sqrt(max(second - mean * mean, 0.0) / n)

        stderr["attacker_ipc_loss"] = mean_se(raw["a_final"], att.ipc_lost)
        stderr["defender_ipc_loss"] = mean_se(raw["d_final"], dfn.ipc_lost)
        swing_mean = raw["swing_sum"] / n
        swing_var = raw["swing_sq_sum"] / n - swing_mean**2
        stderr["tuv_swing"] = math.sqrt(max(swing_var, 0.0) / n)
        rounds_hist = raw["rounds_hist"]
        r = np.arange(len(rounds_hist), dtype=np.float64)
        rounds_second = float(rounds_hist @ (r * r)) / n
        stderr["mean_rounds"] = math.sqrt(max(rounds_second - mean_rounds**2, 0.0) / n)
        rounds_frame = pd.DataFrame({"rounds": np.arange(len(rounds_hist)),
                                     "probability": rounds_hist / n})
        rounds_frame = rounds_frame[rounds_frame["probability"] > 0].reset_index(drop=True)
        swing_frame = None

    # the same keys for every battle, so CSV rows of one edition share a header
    bombardment = getattr(tables, "bombardment", None)
    policies: dict[str, Any] = {
        "landing": dict(battle.landing),
        "bombard": dict(bombardment.fired) if bombardment else {},
        "bombard_unused": dict(bombardment.unused) if bombardment else {},
        "attacker_submerge": battle.attacker_submerge,
        "defender_submerge": battle.defender_submerge,
        "attacker_ool": battle.attacker_order.text,
        "defender_ool": battle.defender_order.text,
        "keep_land": battle.attacker_order.keep_land,
        "aa_last": battle.defender_order.aa_last,
        "retreat_after": battle.retreat.get("after"),
        "retreat_when_left": battle.retreat.get("when_left"),
        "retreat_when_only_air": bool(battle.retreat.get("only_air")),
        "retreat_below": battle.retreat.get("below"),
        "strafe": battle.retreat.get("strafe"),
    }

    return Result(
        policies=policies,
        rules=battle.rules.id,
        method=method,
        trials=trials,
        seed=seed,
        attacker=format_army(battle.attacker),
        defender=format_army(battle.defender),
        sea=battle.sea,
        attacker_tech=battle.attacker_tech,
        defender_tech=battle.defender_tech,
        **values,
        mean_rounds=mean_rounds,
        attacker_ipc_loss=a_ipc,
        defender_ipc_loss=d_ipc,
        tuv_swing=d_ipc - a_ipc,
        attacker_survivors=a_surv,
        defender_survivors=d_surv,
        stderr=stderr,
        ci95=ci95,
        elapsed_s=time.perf_counter() - started,
        pruned=raw.get("pruned") if method == "exact" else None,
        attacker_distribution=_distribution_frame(att, a_final, a_present),
        defender_distribution=_distribution_frame(dfn, d_final, d_present),
        rounds_distribution=rounds_frame,
        swing_distribution=swing_frame,
        all_units=tuple(battle.rules.units),
    )
