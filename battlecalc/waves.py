"""Multi-wave attacks and the counter-attack, chained through the exact law of the survivors.

    >>> import battlecalc
    >>> r = battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf",
    ...                         waves=["1 inf"], method="exact")
    >>> round(r.takes_territory, 12)  # 1/4 + 1/8 + 5/8 * 1/4 = 17/32
    0.53125

``simulate(..., waves=[...], counterattack=...)`` plays a sequence of battles on one
territory (or sea zone):

* **Waves.** The first wave is the ordinary battle (``attacker``, with ``landing`` and
  ``bombard`` if given). Each further wave attacks what the defender has left, using the law of
  those survivors, not their mean: for every surviving defender force, with its probability,
  the next wave is solved from it, and the results are combined. A wave is sent only while the
  territory is still the defender's; once it is taken the later waves stay home. A wave that
  meets no defender (an earlier battle ended in a draw, or was won by aircraft alone) takes the
  territory without a fight if it has a land unit. An attacker that retreats (or is stuck in a
  stalemate) leaves; the next wave fights the defender alone. The defender's units that are
  never casualties (the Revised AA gun) stay through every wave.
* **Counter-attack.** When the territory is taken, ``counterattack`` (the defender side's
  army) attacks what the attacker has in it: the land units of the wave that took it (the
  survivors, or the whole wave if it walked in) and, where the rules never let AA be a casualty
  (Revised), the defender's AA guns, captured with the territory; aircraft have left. In the
  1942 2E rules AAA are ordinary casualties and are all destroyed when the territory falls, so
  there is nothing to capture. ``holds`` is the probability that the attacker still owns the
  territory afterwards (it was taken, and the counter-attack does not retake it: a
  counter-attack that destroys the occupiers with aircraft alone does not retake). In the
  counter-attack the defender side's technologies are the attacker's (``defender_tech``), the
  occupiers keep ``attacker_tech``; orders of losses are the defaults and nobody retreats.

Every other option (rules, techs, orders of losses, ``keep_land`` up to the wave's land units,
retreat policies, ``method``) applies to every wave. IPC losses are summed over the whole
sequence: each side's expected loss over all waves and the counter-attack.

**Methods.** Exact: each wave and the counter-attack are solved exactly from each distinct
start state (identical start states are merged first). Monte Carlo (``method="mc"``): every
trial is continued: the next wave runs from each distinct surviving force with as many trials
as ended there, with a seed derived from ``seed``, the wave and the force, so the whole
sequence is reproducible; the reported probabilities are fractions of the ``trials``
sequences. With ``auto`` each battle picks its method, and a battle run by Monte Carlo gets
``trials`` trials.

Sea battles chain the same way (the counter-attack is refused: it retakes a territory).
Submarines that submerged are still in the zone for the next wave.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .army import format_army, parse_army
from .errors import BattleInputError
from .options import BY_NAME, FORMULA_OPTIONS
from .results import Z95, csv_text
from .rules import load_rules

WAVE_KEYS = ("attacker_win", "defender_win", "draw", "stalemate", "retreat", "takes_territory",
             "attacker_ipc_loss", "defender_ipc_loss")
WEIGHT_EPS = 1e-15  # start states less likely than this are not played on (mass reported)


Force = tuple[tuple[str, int], ...]


def _key(counts: Mapping[str, int], order: list[str]) -> Force:
    return tuple((name, int(counts[name])) for name in order if counts.get(name))


def _child_seed(seed: int, stage: int, index: int) -> int:
    """A seed for the `index`-th start state of `stage`, derived reproducibly from `seed`."""
    state = np.random.SeedSequence(seed, spawn_key=(stage, index)).generate_state(
        1, dtype=np.uint64)
    return int(state[0] >> np.uint64(1))


@dataclass
class WavesResult:
    """Odds of a sequence of waves on one territory, and of holding it against a counter-attack.

    `waves` holds one dict per wave (wave 1 is the ``attacker``): ``attacker``, ``sent``
    (probability the wave goes: the territory was not yet taken and a defender or a walk-in
    awaited it), ``fights``, ``walks_in`` (took the territory without a fight), the outcome
    probabilities of its battle (unconditional: they sum to ``fights``), ``attacker_ipc_loss`` /
    ``defender_ipc_loss`` (expected, unconditional) and ``taken_after`` (probability the
    territory is taken once this wave is done). `counterattack` likewise, with ``fights`` (the
    territory was taken) and ``retakes``; `holds` is None without a counter-attack.
    Probabilities of Monte Carlo runs have standard errors in `stderr`.
    """

    rules: str
    method: str
    trials: int | None
    seed: int | None
    sea: bool
    attacker: str
    defender: str
    waves: list[dict[str, Any]]
    counterattack: dict[str, Any] | None
    takes_territory: float
    defender_eliminated: float
    holds: float | None
    attacker_ipc_loss: float
    defender_ipc_loss: float
    tuv_swing: float
    stderr: dict[str, float]
    solves: int
    pruned: float
    elapsed_s: float
    all_units: tuple[str, ...] = field(default=(), repr=False)

    def to_dict(self) -> dict[str, Any]:
        """Plain-data view (the JSON object of ``run --wave ... --format json``)."""
        return {
            "rules": self.rules,
            "method": self.method,
            "trials": self.trials,
            "seed": self.seed,
            "sea": self.sea,
            "attacker": self.attacker,
            "defender": self.defender,
            "takes_territory": self.takes_territory,
            "defender_eliminated": self.defender_eliminated,
            "holds": self.holds,
            "attacker_ipc_loss": self.attacker_ipc_loss,
            "defender_ipc_loss": self.defender_ipc_loss,
            "tuv_swing": self.tuv_swing,
            "waves": [dict(w) for w in self.waves],
            "counterattack": dict(self.counterattack) if self.counterattack else None,
            "stderr": dict(self.stderr),
            "solves": self.solves,
            "pruned": self.pruned,
            "elapsed_s": self.elapsed_s,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def flat_row(self) -> dict[str, Any]:
        """One flat row: overall fields, then ``wave1.sent``, ..., ``counterattack.holds``."""
        data = self.to_dict()
        row: dict[str, Any] = {}
        for key, value in data.items():
            if key == "waves":
                for i, wave in enumerate(value, 1):
                    for k, v in wave.items():
                        row[f"wave{i}.{k}"] = v
            elif key == "counterattack":
                for k, v in (value or {}).items():
                    row[f"counterattack.{k}"] = v
            elif key == "stderr":
                for k, v in value.items():
                    row[f"{k}_stderr"] = v
            else:
                row[key] = value
        return row

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([self.flat_row()])

    def to_csv(self, header: bool = True) -> str:
        return csv_text(self.flat_row(), header)

    def table(self) -> str:
        """The human-readable report of ``--format table``."""
        n = len(self.waves)
        head = f"{self.rules}: {n} wave{'s' if n > 1 else ''} on {self.defender}"
        if self.counterattack:
            head += f", then a counter-attack by {self.counterattack['attacker']}"
        how = ("exact" if self.method == "exact"
               else f"Monte Carlo, {self.trials:,} trials, seed {self.seed}"
               if self.method == "mc" else f"exact and Monte Carlo ({self.trials:,} trials, "
               f"seed {self.seed})")
        lines = [head, f"method: {how}   ({self.elapsed_s:.3f} s, {self.solves} battles solved)",
                 ""]
        cols = [("sent", "sent"), ("attacker_win", "att wins"), ("defender_win", "def wins"),
                ("draw", "draw")]
        if any(w["retreat"] for w in self.waves):
            cols.append(("retreat", "retreat"))
        if any(w["stalemate"] for w in self.waves):
            cols.append(("stalemate", "stalemate"))
        if not self.sea:
            cols += [("walks_in", "walks in"), ("taken_after", "taken after")]
        width = max(8, *(len(w["attacker"]) for w in self.waves))
        lines.append(f"{'wave':<6}{'attacker':<{width + 2}}"
                     + "".join(f"{label:>12}" for _, label in cols)
                     + f"{'IPC lost att / def':>22}")
        for i, w in enumerate(self.waves, 1):
            lines.append(f"{i:<6}{w['attacker']:<{width + 2}}"
                         + "".join(f"{w[key]:>12.2%}" for key, _ in cols)
                         + f"{w['attacker_ipc_loss']:>13.3f} / {w['defender_ipc_loss']:.3f}")
        lines.append("")
        c = self.counterattack
        if c:
            lines.append(f"counter-attack by {c['attacker']} on the territory taken "
                         f"({c['fights']:.2%}): retakes {c['retakes']:.2%}, IPC lost "
                         f"{c['attacker_ipc_loss']:.3f} (counter-attacker) / "
                         f"{c['defender_ipc_loss']:.3f} (occupiers)")
            lines.append("")
        exact = self.method == "exact"

        def line(label: str, key: str, value: float) -> str:
            text = f"{label:<22}{value:>10.2%}"
            if not exact and key in self.stderr:
                text += f"   ± {Z95 * self.stderr[key]:.2%}"
            return text

        if self.sea:
            lines.append(line("defender eliminated", "defender_eliminated",
                              self.defender_eliminated))
        else:
            lines.append(line("takes territory", "takes_territory", self.takes_territory))
            if self.holds is not None:
                lines.append(line("holds", "holds", self.holds))
        lines.append(f"IPC lost   attacker {self.attacker_ipc_loss:.3f}   defender "
                     f"{self.defender_ipc_loss:.3f}   (every wave"
                     + (" and the counter-attack)" if c else ")"))
        lines.append(f"TUV swing  {self.tuv_swing:+.3f}   (defender's loss minus attacker's; "
                     "positive favours the attacker)")
        if self.pruned:
            lines.append(f"pruned probability mass: {self.pruned:.2e}")
        return "\n".join(lines)


def _army(value, ruleset, label: str) -> dict[str, int]:
    if isinstance(value, Mapping):
        if any(isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0
               for n in value.values()):
            raise BattleInputError(f"{label}: counts must be whole numbers >= 0")
        value = " ".join(f"{int(n)} {name}" for name, n in value.items() if n)
    if not isinstance(value, str):
        raise BattleInputError(f"{label} must be army notation or a mapping, got {value!r}")
    army = parse_army(value, ruleset)
    if not army:
        raise BattleInputError(f"{label} has no units")
    return army


def simulate_waves(waves: Iterable | str | None, counterattack, **options):
    """:func:`battlecalc.simulate` with ``waves`` and/or ``counterattack`` (module docstring);
    `options` are simulate's other arguments. Returns a :class:`WavesResult`."""
    from .api import simulate

    started = time.perf_counter()
    rules = options["rules"]
    ruleset = load_rules(rules)
    if ruleset.model != "dice":
        raise BattleInputError(
            f"waves and counter-attacks apply to dice editions, not to {ruleset.id}")
    formula = [k for k in FORMULA_OPTIONS if options.pop(k, None) is not None]
    if formula:
        raise BattleInputError(f"{', '.join(formula)} apply to formula-combat editions only")
    if options.get("rounds_distribution"):
        raise BattleInputError("the law of rounds is not available with waves or a "
                               "counter-attack")
    sea = bool(options.get("sea"))
    if isinstance(waves, (str, Mapping)):
        waves = [waves]
    wave_armies = [_army(w, ruleset, f"wave {i}") for i, w in enumerate(waves or (), 2)]
    counter = None
    if counterattack is not None:
        if sea:
            raise BattleInputError("a counter-attack retakes a territory: land battles only, "
                                   "not sea battles")
        counter = _army(counterattack, ruleset, "counter-attack")
    method = options.get("method", "auto")
    counts_mode = method == "mc"
    trials = options.get("trials")
    if counts_mode or method == "auto":
        if options.get("seed") is None:
            options["seed"] = int(np.random.SeedSequence().entropy % (2**63))
    seed = options.get("seed")
    order = list(ruleset.units)
    units = ruleset.units
    # options of every later wave: no landing or bombardment, no progress bar
    later = {k: v for k, v in options.items() if k not in BY_NAME or BY_NAME[k].carried}
    keep_land = later.pop("keep_land", 0) or 0
    solves = 0
    methods: set[str] = set()
    pruned = 0.0
    tol = 1e-9

    def solve(label: str, stage: int, index: int, weight: float, **battle):
        nonlocal solves
        n = trials
        child_seed = seed
        if stage > 1 and seed is not None:
            child_seed = _child_seed(seed, stage, index)
        if counts_mode and stage > 1:
            n = int(round(weight * trials))
            if n == 0:
                return None
        solves += 1
        try:
            r = simulate(trials=n, seed=child_seed, **battle)
        except BattleInputError as exc:
            raise BattleInputError(f"{label}: {exc}") from None
        methods.add(r.method)
        return r

    def rows(frame: pd.DataFrame):
        names = [c for c in frame.columns if c not in ("ipc_lost", "probability")]
        for values in frame[[*names, "probability"]].itertuples(index=False):
            yield {n: int(v) for n, v in zip(names, values[:-1], strict=True) if v}, \
                float(values[-1])

    first = {k: v for k, v in options.items() if k not in ("trials", "seed")}
    first_defender = _army(options.get("defender"), ruleset, "defender") \
        if options.get("defender") is not None else None
    if first_defender is None:
        raise BattleInputError("the defender has no units")
    permanent = {n: k for n, k in first_defender.items() if not units[n].can_be_casualty}

    def is_land(name: str) -> bool:
        return units[name].domain == "land"

    open_states: dict[Force, float] = {}
    taken: dict[Force, float] = {}  # the attacker's force in the territory -> probability
    taken_total = 0.0
    wave_stats = []
    attacker_loss = defender_loss = 0.0
    for stage, army in enumerate([None, *wave_armies], 1):
        stats = dict.fromkeys(("sent", "fights", "walks_in", *WAVE_KEYS), 0.0)
        next_states: dict[Force, float] = {}
        starts = [((), 1.0)] if stage == 1 else sorted(open_states.items())
        for index, (force, weight) in enumerate(starts):
            if stage > 1 and weight <= WEIGHT_EPS:
                pruned += weight
                continue
            defender = dict(force)
            if stage > 1 and not defender:
                land = {n: k for n, k in army.items() if is_land(n)}
                if land and not sea:
                    stats["sent"] += weight
                    stats["walks_in"] += weight
                    stats["takes_territory"] += weight
                    key = _key({**land, **permanent}, order)
                    taken[key] = taken.get(key, 0.0) + weight
                    taken_total += weight
                else:
                    next_states[force] = next_states.get(force, 0.0) + weight
                continue
            if stage == 1:
                r = solve("wave 1", 1, 0, 1.0, **first)
            else:
                lands = sum(k for n, k in army.items() if is_land(n))
                r = solve(f"wave {stage}", stage, index, weight, attacker=army,
                          defender=defender, keep_land=min(keep_land, lands), **later)
                if r is None:
                    continue
            if stage == 1:
                attacker_text = r.attacker
            stats["sent"] += weight
            stats["fights"] += weight
            for key in WAVE_KEYS:
                stats[key] += weight * getattr(r, key)
            takes = float(r.takes_territory)
            taken_total += weight * takes
            # the defender's survivors, the taken mass set apart
            for survivors, p in rows(r.defender_distribution):
                if not survivors:
                    p -= takes
                    if p <= tol:
                        continue
                key = _key({**survivors, **permanent}, order)
                next_states[key] = next_states.get(key, 0.0) + weight * p
            if takes > 0:
                land_rows = [({n: k for n, k in s.items() if is_land(n)}, p)
                             for s, p in rows(r.attacker_distribution)]
                land_rows = [(s, p) for s, p in land_rows if s]
                if counter is not None and abs(sum(p for _, p in land_rows) - takes) > 1e-9:
                    raise BattleInputError(
                        f"wave {stage}: with this retreat policy the attacker's surviving land "
                        "units are not all in the territory, and the result does not tell "
                        "which; a counter-attack cannot follow it")
                for s, p in land_rows:
                    key = _key({**s, **permanent}, order)
                    taken[key] = taken.get(key, 0.0) + weight * p
        attacker_loss += stats["attacker_ipc_loss"]
        defender_loss += stats["defender_ipc_loss"]
        stats["taken_after"] = taken_total
        wave_stats.append({"attacker": attacker_text if stage == 1 else format_army(army),
                           **stats})
        open_states = next_states

    holds = None
    counter_stats = None
    if counter is not None:
        counter_stats = dict.fromkeys(("fights", "retakes", "attacker_win", "defender_win",
                                       "draw", "attacker_ipc_loss", "defender_ipc_loss"), 0.0)
        stage = len(wave_armies) + 2
        for index, (force, weight) in enumerate(sorted(taken.items())):
            if weight <= WEIGHT_EPS:
                pruned += weight
                continue
            r = solve("counter-attack", stage, index, weight, rules=rules, attacker=counter,
                      defender=dict(force), sea=False, method=method,
                      attacker_tech=options.get("defender_tech"),
                      defender_tech=options.get("attacker_tech"))
            if r is None:
                continue
            counter_stats["fights"] += weight
            counter_stats["retakes"] += weight * r.takes_territory
            for key in ("attacker_win", "defender_win", "draw", "attacker_ipc_loss",
                        "defender_ipc_loss"):
                counter_stats[key] += weight * getattr(r, key)
        holds = taken_total - counter_stats["retakes"]
        attacker_loss += counter_stats["defender_ipc_loss"]
        defender_loss += counter_stats["attacker_ipc_loss"]
        counter_stats = {"attacker": format_army(counter), **counter_stats, "holds": holds}

    eliminated = taken_total + sum(
        w for force, w in open_states.items()
        if not any(units[n].can_be_casualty for n, _ in force))
    method_used = methods.pop() if len(methods) == 1 else "mixed"
    stderr: dict[str, float] = {}
    if method_used == "mc" and trials:
        for key, p in (("takes_territory", taken_total), ("defender_eliminated", eliminated),
                       ("holds", holds)):
            if p is not None:
                p = min(max(p, 0.0), 1.0)
                stderr[key] = math.sqrt(p * (1 - p) / trials)
    elif method_used == "exact":
        stderr = {"takes_territory": 0.0, "defender_eliminated": 0.0}
        if holds is not None:
            stderr["holds"] = 0.0
    return WavesResult(
        rules=ruleset.id, method=method_used,
        trials=trials if method_used != "exact" else None,
        seed=seed if method_used != "exact" else None, sea=sea,
        attacker=wave_stats[0]["attacker"], defender=format_army(first_defender),
        waves=wave_stats, counterattack=counter_stats,
        takes_territory=0.0 if sea else taken_total, defender_eliminated=eliminated,
        holds=holds, attacker_ipc_loss=attacker_loss, defender_ipc_loss=defender_loss,
        tuv_swing=defender_loss - attacker_loss, stderr=stderr, solves=solves, pruned=pruned,
        elapsed_s=time.perf_counter() - started, all_units=tuple(order),
    )
