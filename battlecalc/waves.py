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

import dataclasses
import inspect
import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import api
from .army import format_army, parse_army
from .die_law import read_die_law
from .errors import BattleInputError
from .options import FORMULA_OPTIONS, OPTIONS
from .results import PRUNED_SHOWN, Z95, Result, SideLaw, _frame, csv_text, proportion_statistics
from .rules import Ruleset, load_rules
from .spec import DICE_ONLY, Battle, RunSpec, check_waves, fresh_seed, simulate_spec

MAX_WAVES = 100  # waves after the first (a real attack: a few)
# battles a sequence may solve, estimated before any is: each later wave fights from each
# force the defender may hold with (at most the first battle's defender states), the
# counter-attack from each force the waves may take the territory with
MAX_WAVE_BATTLES = 20_000
WAVE_KEYS = ("attacker_win", "defender_win", "draw", "stalemate", "retreat", "takes_territory",
             "attacker_ipc_loss", "defender_ipc_loss")
WEIGHT_EPS = 1e-15  # start states less likely than this are not played on (mass reported)
TOL = 1e-9  # a survivor law's "nobody left" mass this close to the taken mass is all taken

# the options only the first wave takes (landing, bombardment, progress...), with the values
# every later battle has; the armies, trials and seed each battle gets of its own
_FIRST_WAVE_ONLY = {o.name: o.default for o in OPTIONS
                    if not o.carried and o.name not in ("attacker", "defender", "trials", "seed")}
# a counter-attack is fought by the defender's side with default orders and no retreat: every
# dice option back to its default but the dice themselves (a low-luck game stays low luck, a
# biased die stays biased)
_COUNTER_DEFAULTS = {k: v for k, v in DICE_ONLY.items() if k not in ("dice", "die_law")}
COUNTER_KEYS = ("attacker_win", "defender_win", "draw", "attacker_ipc_loss", "defender_ipc_loss")


Force = tuple[tuple[str, int], ...]


def _key(counts: Mapping[str, int], order: Iterable[str]) -> Force:
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
    # the laws the sequence chains on: the attacker's forces in the territory once its waves
    # are done (what a counter-attack fights) and the defender's forces still holding it,
    # each {((unit, count), ...): probability} (occupiers, defenders_left read them)
    taken_law: dict = field(default_factory=dict, repr=False)
    holding_law: dict = field(default_factory=dict, repr=False)
    die_law: str | None = field(default=None, repr=False)  # a biased die (DieLaw.text)

    @property
    def occupiers(self) -> list[tuple[dict[str, int], float]]:
        """The law of the attacker's land forces in the territory after its waves (the
        survivors a counter-attack fights, with the captured AA guns where the rules keep
        them): [({unit: count}, probability)], most likely first; they sum to
        takes_territory."""
        return _law_list(self.taken_law)

    @property
    def defenders_left(self) -> list[tuple[dict[str, int], float]]:
        """The law of the defender's forces still holding the territory after the waves:
        [({unit: count}, probability)], most likely first."""
        return _law_list(self.holding_law)

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
            # (where given only: the answers of every sequence without it stay as they were)
            **({"die_law": self.die_law} if self.die_law else {}),
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

    def to_frame(self):
        """A one-row pandas DataFrame of :meth:`flat_row`."""
        return _frame([self.flat_row()])

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
        if self.die_law:
            lines.insert(1, "biased die: faces 1, 2, ... come up with chances "
                         + self.die_law.replace(",", ", "))
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
        if self.pruned >= PRUNED_SHOWN:
            lines.append(f"pruned probability mass: {self.pruned:.2e}")
        return "\n".join(lines)


def _law_list(law: dict) -> list[tuple[dict[str, int], float]]:
    return [(dict(force), p) for force, p in sorted(law.items(), key=lambda kv: -kv[1])]


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


def _check(waves, counterattack, options: dict[str, Any]):
    """The edition, the armies of waves 2, 3, ... and the counter-attack's (None without one);
    refuses what a sequence of battles cannot take.  Pops the formula options from `options`."""
    ruleset = load_rules(options["rules"])
    if ruleset.model != "dice":
        raise BattleInputError(
            f"waves and counter-attacks apply to dice editions, not to {ruleset.id}")
    formula = [k for k in FORMULA_OPTIONS if options.pop(k, None) is not None]
    if formula:
        raise BattleInputError(f"{', '.join(formula)} apply to formula-combat editions only")
    if options.get("rounds_distribution"):
        raise BattleInputError("the law of rounds is not available with waves or a "
                               "counter-attack")
    if isinstance(waves, (str, Mapping)):
        waves = [waves]
    if len(waves or ()) > MAX_WAVES:
        raise BattleInputError(f"{len(waves):,} waves after the first (at most {MAX_WAVES})")
    wave_armies = [_army(w, ruleset, f"wave {i}") for i, w in enumerate(waves or (), 2)]
    counter = None
    if counterattack is not None:
        if options.get("sea"):
            raise BattleInputError("a counter-attack retakes a territory: land battles only, "
                                   "not sea battles")
        counter = _army(counterattack, ruleset, "counter-attack")
    return ruleset, wave_armies, counter


def _end_states(law: SideLaw) -> Iterable[tuple[dict[str, int], float]]:
    """Each end state of one side's law, most likely first: {unit: count left}, probability."""
    return law.end_states


def _add(states: dict[Force, float], force: Force, weight: float) -> None:
    states[force] = states.get(force, 0.0) + weight


@dataclass(frozen=True)
class Request:
    """A battle a sequence needs: the `index`-th of `stage` (1: wave 1), reached with
    probability `weight`, `attacker` against `defender` with the stage's `arguments` (the same
    dict for every battle of the stage), its Monte Carlo trials and seed; `label` names it in
    an error ("wave 2", "counter-attack")."""

    label: str
    stage: int
    index: int
    weight: float
    arguments: dict
    attacker: Any
    defender: Any
    trials: int
    seed: int | None


@dataclass
class _Solver:
    """The battles of one sequence: derives each one's seed and trials (request) and counts
    the battles and the methods used (used).  The sequence (_sequence) yields the battles each
    stage needs together, and is sent their Results (or the error each raised): `resolve`
    solves them one by one (simulate's) through `check` (spec.simulate_spec's battle and run
    spec) and `solve` (api.solve); battlecalc.batch resolves the stages of many sequences
    together."""

    solve: Callable[[Battle, RunSpec], Result]
    trials: int
    seed: int | None
    counts_mode: bool  # Monte Carlo: a later battle gets the trials that reach its start
    # check(label, arguments, attacker, defender, trials, seed): simulate_spec's battle and run
    # spec (_checked), or the same by other means
    check: Callable[..., tuple[Battle, RunSpec]] = None
    solves: int = 0
    methods: set[str] = field(default_factory=set)
    progress: Callable[..., None] | None = None  # the caller's: every battle reports to it
    estimate: int = 1  # the battles the sequence may solve (_estimate)
    reported: int = 0  # battles reported to progress so far

    def __post_init__(self):
        if self.check is None:
            self.check = _checked

    def request(self, label: str, stage: int, index: int, weight: float,
                arguments: dict[str, Any], attacker, defender) -> Request | None:
        """The `index`-th battle of `stage`, or None when no Monte Carlo trial reaches it."""
        trials, seed = self.trials, self.seed
        if stage > 1 and seed is not None:
            seed = _child_seed(seed, stage, index)
        if self.counts_mode and stage > 1:
            trials = int(round(weight * self.trials))
            if trials == 0:
                return None
        return Request(label, stage, index, weight, arguments, attacker, defender, trials, seed)

    def resolve(self, requests: list) -> list:
        """simulate's: each battle checked and solved in turn, the first error raised (named
        by its battle).  With the caller's progress, each is a cancel point: progress hears of
        it before it is solved ("battles of the waves", out of the estimate), and of the
        battle's own steps (later waves had no progress: a server could neither cancel nor
        time them out)."""
        results = []
        for q in requests:
            if q is not None and self.progress is not None:
                self.progress(self.reported, max(self.estimate, self.reported + 1),
                              "battles of the waves")
                self.reported += 1
                q = dataclasses.replace(q, arguments={**q.arguments, "progress": self.progress})
            results.append(None if q is None else solved(q, self.check, self.solve))
        return results

    def used(self, request: Request | None, result) -> Result | None:
        """A request's result as the sequence reads it: counted, its method noted; an error
        raised, named by its battle."""
        if request is None:
            return None
        self.solves += 1
        if isinstance(result, BaseException):
            raise result
        self.methods.add(result.method)
        return result


def solved(request: Request, check: Callable, solve: Callable):
    """A request checked (check's battle and run spec) and solved (solve); a BattleInputError
    raised named by its battle (of its own kind: ExactRefused stays one)."""
    try:
        battle, run = check(request.label, request.arguments, request.attacker,
                            request.defender, request.trials, request.seed)
        return solve(battle, run)
    except BattleInputError as exc:
        raise type(exc)(f"{request.label}: {exc}") from None


@dataclass
class _Chain:
    """The sequence so far: the defender's forces that still hold the territory and the
    attacker's forces in it once taken, each {force: probability}; forces are keyed in the
    edition's unit order and keep the defender's units that are never casualties."""

    ruleset: Ruleset
    permanent: dict[str, int]  # the defender's units that are never casualties (Revised AA)
    sea: bool
    strict: bool  # a counter-attack follows: the taken mass must be the land survivors'
    open_states: dict[Force, float] = field(default_factory=lambda: {(): 1.0})
    taken: dict[Force, float] = field(default_factory=dict)
    taken_total: float = 0.0
    pruned: float = 0.0

    def key(self, counts: Mapping[str, int]) -> Force:
        return _key({**counts, **self.permanent} if self.permanent else counts,
                    self.ruleset.units)

    def land(self, army: Mapping[str, int]) -> dict[str, int]:
        return {n: k for n, k in army.items() if self.ruleset.units[n].domain == "land"}

    def walk_in(self, stats: dict[str, float], next_states: dict[Force, float], force: Force,
                weight: float, army: dict[str, int]) -> None:
        """A wave that meets no defender: its land units take the territory (sea: nothing
        happens, and the zone stays as it is)."""
        land = self.land(army)
        if not land or self.sea:
            _add(next_states, force, weight)
            return
        stats["sent"] += weight
        stats["walks_in"] += weight
        stats["takes_territory"] += weight
        _add(self.taken, self.key(land), weight)
        self.taken_total += weight

    def fought(self, stats: dict[str, float], next_states: dict[Force, float], r: Result,
               weight: float, label: str) -> None:
        """One battle, reached with probability `weight`: its outcomes into the wave's
        `stats`, the defender's survivors into `next_states` (the taken mass set apart) and
        the attacker's land survivors into the territory when it takes it."""
        stats["sent"] += weight
        stats["fights"] += weight
        for key in WAVE_KEYS:
            stats[key] += weight * getattr(r, key)
        takes = float(r.takes_territory)
        self.taken_total += weight * takes
        for survivors, p in _end_states(r.defender_law):
            if not survivors:
                p -= takes
                if p <= TOL:
                    continue
            _add(next_states, self.key(survivors), weight * p)
        if takes <= 0:
            return
        land_rows = [(land, p) for land, p in ((self.land(s), p)
                                               for s, p in _end_states(r.attacker_law)) if land]
        if self.strict and abs(sum(p for _, p in land_rows) - takes) > 1e-9:
            raise BattleInputError(
                f"{label}: with this retreat policy the attacker's surviving land units are "
                "not all in the territory, and the result does not tell which; a "
                "counter-attack cannot follow it")
        for land, p in land_rows:
            _add(self.taken, self.key(land), weight * p)


def _estimate(options: dict[str, Any], wave_armies: list, counter) -> int:
    """The battles the sequence may solve, counted before any is solved: the first, then for
    each later wave one from each force the defender may hold with (at most the first
    battle's defender states, compiled), and the counter-attack one from each force a wave
    may take the territory with (at most its land units' states: each wave's land units plus
    one).  BattleInputError past MAX_WAVE_BATTLES."""
    first = {k: v for k, v in options.items() if k not in ("waves", "counterattack")}
    battle, _, compiled = api.prepare(**first)
    held = compiled.defender.n_states
    estimate = 1 + len(wave_armies) * held
    if counter is not None:
        units = battle.rules.units
        estimate += sum(1 + sum(n for u, n in army.items() if units[u].domain == "land")
                        for army in [{**battle.attacker, **(battle.landing or {})},
                                     *wave_armies])
    if estimate > MAX_WAVE_BATTLES:
        raise BattleInputError(
            f"the waves may solve some {estimate:,} battles (each later wave one for each of "
            f"the {held:,} forces the defender may hold with; at most {MAX_WAVE_BATTLES:,}); "
            "send fewer waves or smaller armies")
    return estimate


def _checked(label: str, arguments: dict[str, Any], attacker, defender, trials, seed):
    """_Solver's check: simulate_spec's battle and run spec of a battle of a sequence."""
    return simulate_spec({**arguments, "attacker": attacker, "defender": defender,
                          "trials": trials, "seed": seed, "formula_options": {}})


def _new_stats() -> dict[str, float]:
    return dict.fromkeys(("sent", "fights", "walks_in", *WAVE_KEYS), 0.0)


def _first_wave(chain: _Chain, solver: _Solver, arguments: dict[str, Any]):
    """Wave 1: the ordinary battle, with every option given (a stage: yields its battle)."""
    stats, next_states = _new_stats(), {}
    request = solver.request("wave 1", 1, 0, 1.0, arguments, arguments["attacker"],
                             arguments["defender"])
    [r] = yield [request]
    r = solver.used(request, r)
    chain.fought(stats, next_states, r, 1.0, "wave 1")
    chain.open_states = next_states
    return {"attacker": r.attacker, **stats, "taken_after": chain.taken_total}


def _later_wave(chain: _Chain, solver: _Solver, stage: int, army: dict[str, int],
                arguments: dict[str, Any]):
    """Wave `stage` (2, 3, ...) against each force the defender still holds with (a stage:
    yields its battles together, then plays each force in turn)."""
    stats, next_states = _new_stats(), {}
    keep_land = min(arguments.get("keep_land", 0) or 0, sum(chain.land(army).values()))
    arguments = {**arguments, "keep_land": keep_land}
    forces = list(enumerate(sorted(chain.open_states.items())))
    requests = [solver.request(f"wave {stage}", stage, index, weight, arguments, army,
                               dict(force))
                for index, (force, weight) in forces if weight > WEIGHT_EPS and force]
    results = iter(zip(requests, (yield requests), strict=True))
    for _, (force, weight) in forces:
        if weight <= WEIGHT_EPS:
            chain.pruned += weight
        elif not force:
            chain.walk_in(stats, next_states, force, weight, army)
        else:
            r = solver.used(*next(results))
            if r is not None:
                chain.fought(stats, next_states, r, weight, f"wave {stage}")
    chain.open_states = next_states
    return {"attacker": format_army(army), **stats, "taken_after": chain.taken_total}


def _counterattack(chain: _Chain, solver: _Solver, stage: int, army: dict[str, int],
                   arguments: dict[str, Any]):
    """The counter-attack by `army` on each force the attacker holds the territory with (a
    stage: yields its battles together, then plays each force in turn)."""
    stats = dict.fromkeys(("fights", "retakes", *COUNTER_KEYS), 0.0)
    forces = sorted(chain.taken.items())
    requests = [solver.request("counter-attack", stage, index, weight, arguments, army,
                               dict(force))
                for index, (force, weight) in enumerate(forces) if weight > WEIGHT_EPS]
    results = iter(zip(requests, (yield requests), strict=True))
    for _, weight in forces:
        if weight <= WEIGHT_EPS:
            chain.pruned += weight
            continue
        r = solver.used(*next(results))
        if r is None:
            continue
        stats["fights"] += weight
        stats["retakes"] += weight * r.takes_territory
        for key in COUNTER_KEYS:
            stats[key] += weight * getattr(r, key)
    return {"attacker": format_army(army), **stats,
            "holds": chain.taken_total - stats["retakes"]}


def _stderr(method: str, trials: int | None, values: dict[str, float | None]):
    """Standard errors of the sequence's probabilities: binomial over the `trials` sequences
    of a Monte Carlo run, zero when exact, none when the methods were mixed."""
    if not (method == "exact" or (method == "mc" and trials)):
        return {}
    clipped = {key: min(max(p, 0.0), 1.0) for key, p in values.items() if p is not None}
    return proportion_statistics(clipped, trials if method == "mc" else None)[0]


_SIMULATE = inspect.signature(api.simulate)


def simulate_with(solve: Callable, *args, **kwargs):
    """battlecalc.simulate(*args, **kwargs) with `solve` the engine of each dice battle
    (api.solve with other limits: a server's, solver.Limits)."""
    bound = _SIMULATE.bind(*args, **kwargs)
    bound.apply_defaults()
    options = dict(bound.arguments)
    formula_options = options.pop("formula_options")
    waves, counterattack = check_waves(options.pop("waves")), options.pop("counterattack")
    if waves or counterattack is not None:
        return simulate_waves(waves, counterattack, solve=solve, **options, **formula_options)
    if formula_options or load_rules(options["rules"]).model != "dice":
        return api.simulate(**options, **formula_options)
    battle, run, compiled = api.prepare(**options)
    return solve(battle, run, compiled=compiled)


def simulate_waves(waves: Iterable | str | None, counterattack, *,
                   solve: Callable[[Battle, RunSpec], Result] = api.solve,
                   check: Callable[..., tuple[Battle, RunSpec]] | None = None,
                   **options) -> WavesResult:
    """:func:`battlecalc.simulate` with ``waves`` and/or ``counterattack`` (module docstring);
    `options` are simulate's other arguments, `solve` the engine that solves one checked
    battle (default :func:`battlecalc.api.solve`), `check` what checks each battle's
    arguments (check(label, stage arguments, attacker, defender, trials, seed); default:
    :func:`battlecalc.spec.simulate_spec`'s). Returns a :class:`WavesResult`."""
    sequence = _sequence(waves, counterattack, solve, check, options)
    solver = next(sequence)
    return play(sequence, solver.resolve)


def play(sequence, resolve: Callable[[list], list]) -> WavesResult:
    """A sequence (_sequence, past its solver) played to its end: each list of battles it
    yields resolved (resolve(requests) -> their Results, one by one or together) and sent
    back."""
    try:
        requests = next(sequence)
        while True:
            requests = sequence.send(resolve(requests) if requests else [])
    except StopIteration as done:
        return done.value


def _sequence(waves, counterattack, solve, check, options: dict):
    """simulate_waves as a generator: first its _Solver, then each stage's battles (a list of
    Requests, None for one no Monte Carlo trial reaches) as it needs them, sent their Results
    (or errors) in the same order; returns the WavesResult."""
    started = time.perf_counter()
    ruleset, wave_armies, counter = _check(waves, counterattack, options)
    method = options.get("method", "auto")
    if method in ("mc", "auto") and options.get("seed") is None:
        options["seed"] = fresh_seed()
    trials, seed = options.get("trials"), options.get("seed")
    solver = _Solver(solve, trials, seed, counts_mode=method == "mc", check=check,
                     progress=options.get("progress"))
    if options.get("defender") is None:
        raise BattleInputError("the defender has no units")
    if check is None:  # (simulate's; solve_many's lanes check each battle by their forms)
        solver.estimate = _estimate(options, wave_armies, counter)
    first_defender = _army(options["defender"], ruleset, "defender")
    chain = _Chain(ruleset, {n: k for n, k in first_defender.items()
                             if not ruleset.units[n].can_be_casualty},
                   sea=bool(options.get("sea")), strict=counter is not None)
    yield solver

    wave_stats = [(yield from _first_wave(chain, solver, options))]
    later = {**options, **_FIRST_WAVE_ONLY}
    for stage, army in enumerate(wave_armies, 2):
        wave_stats.append((yield from _later_wave(chain, solver, stage, army, later)))
    attacker_loss = defender_loss = 0.0
    for stats in wave_stats:
        attacker_loss += stats["attacker_ipc_loss"]
        defender_loss += stats["defender_ipc_loss"]
    counter_stats = holds = None
    if counter is not None:
        # the defender side's technologies attack; default orders of losses, no retreat
        counter_stats = yield from _counterattack(chain, solver, len(wave_armies) + 2, counter, {
            **later, **_COUNTER_DEFAULTS, "attacker_tech": options.get("defender_tech"),
            "defender_tech": options.get("attacker_tech")})
        holds = counter_stats["holds"]
        attacker_loss += counter_stats["defender_ipc_loss"]
        defender_loss += counter_stats["attacker_ipc_loss"]

    eliminated = chain.taken_total + sum(
        w for force, w in chain.open_states.items()
        if not any(ruleset.units[n].can_be_casualty for n, _ in force))
    method_used = solver.methods.pop() if len(solver.methods) == 1 else "mixed"
    mc = method_used != "exact"
    return WavesResult(
        rules=ruleset.id, method=method_used, trials=trials if mc else None,
        seed=seed if mc else None, sea=chain.sea, attacker=wave_stats[0]["attacker"],
        defender=format_army(first_defender), waves=wave_stats, counterattack=counter_stats,
        takes_territory=0.0 if chain.sea else chain.taken_total,
        defender_eliminated=eliminated, holds=holds, attacker_ipc_loss=attacker_loss,
        defender_ipc_loss=defender_loss, tuv_swing=defender_loss - attacker_loss,
        stderr=_stderr(method_used, trials, {"takes_territory": chain.taken_total,
                                             "defender_eliminated": eliminated,
                                             "holds": holds}),
        solves=solver.solves, pruned=chain.pruned, elapsed_s=time.perf_counter() - started,
        all_units=tuple(ruleset.units), taken_law=chain.taken, holding_law=chain.open_states,
        die_law=_die_law_text(options.get("die_law"), ruleset),
    )


def _die_law_text(value, ruleset: Ruleset) -> str | None:
    """The sequence's die law as its results give it (its battles have checked it)."""
    law = read_die_law(value, ruleset.die_size)
    return None if law is None else law.text()


# battlecalc.simulate: api.simulate, which solves a sequence of battles (waves, a counter-
# attack) by simulate_waves, given here (this module stands above the API)
api.SEQUENCES["solve"] = simulate_waves
simulate = api.simulate
