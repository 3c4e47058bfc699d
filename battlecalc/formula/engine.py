"""Formula combat (seed-002 fan game, rules reference §9): validate, compile, solve, report.

    >>> from battlecalc.formula import simulate_formula
    >>> r = simulate_formula("3 army", "2 army", exchanges=1, method="exact")
    >>> round(r.attacker_win, 6), round(r.attacker_loss_points, 6)
    (0.611111, 1.527778)

A battle compiles to small integer arrays per side (pieces and base values in that side's
order of losses); the rule code (values, loss table, flips) is in
:mod:`battlecalc.kernels.formula` and shared by both methods.  The exact solver propagates
probability through the Markov chain of states (face-up and flipped pieces per type, both
sides), one exchange at a time, with the die x die rolls of each exchange enumerated; the
Monte Carlo kernel rolls the dice.

Outcomes once the exchanges stop (after `exchanges` exchanges, or as soon as a side has no
face-up piece left, or at `exchange_cap` with ``exchanges="until-done"``):
``attacker_win`` the defender has no face-up piece and the attacker has one; ``defender_win``
the reverse; ``draw`` neither has one; ``stalemate`` both still have one (the battle is
undecided; the same number is also reported as ``undecided``, and for ``until-done`` as
``capped``, the mass that hit the exchange cap); ``retreat`` is always 0.  They sum to 1.
"""

from __future__ import annotations

import json
import math
import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..army import MAX_UNITS_PER_TYPE, format_army, parse_army, resolve_unit_name
from ..errors import BattleInputError
from ..kernels import formula as kernels
from ..kernels import jit
from ..kernels.common import ATTACKER_WIN, DEFENDER_WIN, DRAW, N_OUTCOMES, RETREAT, STALEMATE
from ..results import Z95, csv_text, spread_statistics, wilson_interval
from ..rules import Ruleset, load_rules

UNTIL_DONE = "until-done"
METHODS = ("auto", "exact", "mc")
FLIP_RULES = ("A2", "A1")
DEFAULT_TRIALS = 1_000_000
MAX_TRIALS = 10_000_000_000
MAX_EXCHANGES = 1000  # for both `exchanges` and `exchange_cap`
DEFAULT_EXCHANGE_CAP = 100
MAX_COUNTER = 1000
MAX_LOSS_MULTIPLIER = 10
CHUNK_TRIALS = 16_384
MAX_CHUNKS_PER_CALL = 128
HIST_BYTES_PER_CALL = 32 * 2**20  # bound on the per-call histogram rows (memory per call)
# Exact solver: transitions (state x loss-table row) above which `auto` switches to Monte Carlo
# and `exact` refuses.
EXACT_TRANSITION_LIMIT = 1_000_000
OUTCOME_KEYS = ("attacker_win", "defender_win", "draw", "stalemate", "retreat")
_OUTCOME_INDEX = {
    "attacker_win": ATTACKER_WIN,
    "defender_win": DEFENDER_WIN,
    "draw": DRAW,
    "stalemate": STALEMATE,
    "retreat": RETREAT,
}



# ---------------------------------------------------------------------------------------------
# Input validation and compilation


@dataclass(frozen=True)
class SideArrays:
    """One side compiled for the kernels; every array is in this side's order of losses."""

    types: tuple[tuple[str, str], ...]  # (face-up unit, flipped unit) per type, loss order
    base: np.ndarray  # int64[T]: base value per face-up piece in the side's role
    face_up: np.ndarray  # int64[T]: starting face-up pieces
    flipped: np.ndarray  # int64[T]: starting flipped pieces
    bonus: int  # military-level bonus
    extra: int  # counter points + hatred (attacker only)
    present: tuple[int, ...]  # indices of the types this side starts with


@dataclass(frozen=True)
class FormulaBattle:
    """A validated, compiled formula battle."""

    ruleset: Ruleset
    attacker: dict[str, int]
    defender: dict[str, int]
    attacker_level: int
    defender_level: int
    counter: int
    hatred: bool
    loss_multiplier: int
    flips: str
    exchanges: int | str
    exchange_cap: int
    max_exchanges: int  # exchanges to run at most: `exchanges`, or the cap for until-done
    die: int
    row_min: np.ndarray  # int64[R-1]
    row_att: np.ndarray  # int64[R], multiplier applied
    row_def: np.ndarray  # int64[R], multiplier applied
    a: SideArrays
    d: SideArrays


def _check_int(name: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise BattleInputError(f"{name} must be a whole number, got {value!r}")
    if not lo <= value <= hi:
        raise BattleInputError(f"{name} must be between {lo} and {hi:,}, got {value}")
    return int(value)


def _check_seed(seed: Any) -> int:
    if seed is None:
        return int(np.random.SeedSequence().entropy % (2**63))
    return _check_int("seed", seed, 0, 2**63 - 1)


def _army(value: str | Mapping[str, int] | None, ruleset: Ruleset, side: str) -> dict[str, int]:
    if value is None:
        raise BattleInputError(f"the {side} has no pieces")
    if isinstance(value, str):
        return parse_army(value, ruleset)
    if not isinstance(value, Mapping):
        raise BattleInputError(
            f"{side} must be army notation or a {{unit: count}} mapping, got {value!r}"
        )
    counts: dict[str, int] = {}
    for name, count in value.items():
        if not isinstance(name, str):
            raise BattleInputError(f"{side}: unit names must be text, got {name!r}")
        unit = resolve_unit_name(name, ruleset)
        count = _check_int(f"{side} count of {unit}", count, 0, MAX_UNITS_PER_TYPE)
        counts[unit] = counts.get(unit, 0) + count
        if counts[unit] > MAX_UNITS_PER_TYPE:
            raise BattleInputError(
                f"{side}: {counts[unit]} {unit} is more than the {MAX_UNITS_PER_TYPE} per unit "
                "type battlecalc accepts"
            )
    return {name: counts[name] for name in ruleset.units if counts.get(name)}


def _bonus(level: int, thresholds: tuple[int, ...]) -> int:
    """Military-level bonus: +1 per threshold reached (levels 3, 6, 9 in the seed game)."""
    return sum(1 for t in thresholds if level >= t)


def _side(ruleset: Ruleset, army: dict[str, int], role: str, bonus: int, extra: int,
          side: str) -> SideArrays:
    pairs = ruleset.formula["piece_types"]
    # order of losses: the type with the lowest base value in this role first, ties in file
    # order (army, air, navy); flipped pieces go in the same order
    order = sorted(range(len(pairs)), key=lambda t: (ruleset.units[pairs[t][0]].value(role), t))
    types = tuple(pairs[t] for t in order)
    base = np.array([ruleset.units[up].value(role) for up, _ in types], dtype=np.int64)
    face_up = np.array([army.get(up, 0) for up, _ in types], dtype=np.int64)
    flipped = np.array([army.get(fl, 0) for _, fl in types], dtype=np.int64)
    if face_up.sum() == 0:
        raise BattleInputError(
            f"the {side} needs at least one face-up piece to fight "
            f"(got {format_army(army)}; flipped pieces do not count in the formula)"
        )
    present = tuple(i for i in range(len(types)) if face_up[i] or flipped[i])
    return SideArrays(types, base, face_up, flipped, bonus, extra, present)


def make_formula_battle(
    attacker: str | Mapping[str, int],
    defender: str | Mapping[str, int],
    *,
    attacker_level: int = 1,
    defender_level: int = 1,
    counter: int = 0,
    hatred: bool = False,
    loss_multiplier: int = 1,
    exchanges: int | str = 1,
    exchange_cap: int = DEFAULT_EXCHANGE_CAP,
    flips: str | None = None,
    rules: str | Ruleset = "formula",
) -> FormulaBattle:
    """Validate every input of a formula battle and compile it; BattleInputError if bad."""
    ruleset = rules if isinstance(rules, Ruleset) else load_rules(rules)
    if ruleset.model != "formula":
        raise BattleInputError(
            f"{ruleset.id} is not a formula-model edition (model = {ruleset.model!r})"
        )
    params = ruleset.formula
    lo, hi = params["min_level"], params["max_level"]
    attacker_level = _check_int("attacker level", attacker_level, lo, hi)
    defender_level = _check_int("defender level", defender_level, lo, hi)
    counter = _check_int("counter points", counter, 0, MAX_COUNTER)
    if not isinstance(hatred, (bool, np.bool_)):
        raise BattleInputError(f"hatred must be true or false, got {hatred!r}")
    loss_multiplier = _check_int("loss multiplier", loss_multiplier, 1, MAX_LOSS_MULTIPLIER)
    exchange_cap = _check_int("exchange cap", exchange_cap, 1, MAX_EXCHANGES)
    if isinstance(exchanges, str) and exchanges.strip().isdigit():
        exchanges = int(exchanges)  # "3" from a command line
    if isinstance(exchanges, str):
        if exchanges.strip().lower().replace("_", "-") != UNTIL_DONE:
            raise BattleInputError(
                f"exchanges must be a number 1..{MAX_EXCHANGES} or {UNTIL_DONE!r}, "
                f"got {exchanges!r}"
            )
        exchanges = UNTIL_DONE
        max_exchanges = exchange_cap
    else:
        exchanges = _check_int("exchanges", exchanges, 1, MAX_EXCHANGES)
        max_exchanges = exchanges
    if flips is None:
        flips = ruleset.flags["formula_flips"]
    if flips not in FLIP_RULES:
        raise BattleInputError(f"flips must be one of {', '.join(FLIP_RULES)}, got {flips!r}")

    a_army = _army(attacker, ruleset, "attacker")
    d_army = _army(defender, ruleset, "defender")
    thresholds = params["level_thresholds"]
    a = _side(ruleset, a_army, "attack", _bonus(attacker_level, thresholds),
              counter + int(bool(hatred)), "attacker")
    d = _side(ruleset, d_army, "defense", _bonus(defender_level, thresholds), 0, "defender")
    table = params["loss_table"]
    return FormulaBattle(
        ruleset=ruleset,
        attacker=a_army,
        defender=d_army,
        attacker_level=attacker_level,
        defender_level=defender_level,
        counter=counter,
        hatred=bool(hatred),
        loss_multiplier=loss_multiplier,
        flips=flips,
        exchanges=exchanges,
        exchange_cap=exchange_cap,
        max_exchanges=max_exchanges,
        die=params["die"],
        row_min=np.array([row[0] for row in table[:-1]], dtype=np.int64),
        row_att=np.array([row[1] * loss_multiplier for row in table], dtype=np.int64),
        row_def=np.array([row[2] * loss_multiplier for row in table], dtype=np.int64),
        a=a,
        d=d,
    )


def _potential(face_up, flipped) -> int:
    """2 x face-up + flipped: every loss point that does something lowers it by exactly 1."""
    return 2 * int(sum(face_up)) + int(sum(flipped))


def _exchange_bound(battle: FormulaBattle) -> int:
    """Exchanges that can happen at most: each one lowers the potential of a side by >= 1."""
    a, d = battle.a, battle.d
    total = _potential(a.face_up, a.flipped) + _potential(d.face_up, d.flipped)
    return min(battle.max_exchanges, total)


# ---------------------------------------------------------------------------------------------
# Exact solver


class _TooLarge(Exception):
    pass


def _solve_exact(battle: FormulaBattle, limit: int | None = None) -> dict:
    """Exact law of the battle: probabilities (floats) propagated exchange by exchange.

    A state is (attacker face-up, attacker flipped, defender face-up, defender flipped) per
    type.  Loss points are not part of the state: until a side has lost its last piece, no
    point is wasted and its points so far are its starting potential minus its potential
    (see `_potential`); the battle stops as soon as a side has no face-up piece, so points
    are recorded exactly when a state stops.
    """
    if limit is None:
        limit = EXACT_TRANSITION_LIMIT
    a, d = battle.a, battle.d
    die2 = battle.die * battle.die
    a1 = battle.flips == "A1"
    n_rows = battle.row_att.shape[0]
    counts_buf = np.zeros(n_rows, dtype=np.int64)
    a_pot0 = _potential(a.face_up, a.flipped)
    d_pot0 = _potential(d.face_up, d.flipped)

    row_cache: dict[tuple, list[tuple[int, float]]] = {}
    loss_cache: dict[tuple, tuple[tuple, tuple]] = {}

    def rows_of(a_up: tuple, d_up: tuple) -> list[tuple[int, float]]:
        key = (a_up, d_up)
        if key not in row_cache:
            kernels.row_counts(battle.die, a.bonus, a.extra, np.array(a_up, dtype=np.int64),
                               a.base, d.bonus, np.array(d_up, dtype=np.int64), d.base,
                               battle.row_min, counts_buf)
            row_cache[key] = [(r, int(n) / die2) for r, n in enumerate(counts_buf) if n]
        return row_cache[key]

    def after(up: tuple, fl: tuple, points: int) -> tuple[tuple, tuple]:
        key = (up, fl, points)
        if key not in loss_cache:
            up_arr = np.array(up, dtype=np.int64)
            fl_arr = np.array(fl, dtype=np.int64)
            kernels.apply_losses(up_arr, fl_arr, points, a1)
            loss_cache[key] = (tuple(int(x) for x in up_arr), tuple(int(x) for x in fl_arr))
        return loss_cache[key]

    outcomes = np.zeros(N_OUTCOMES)
    a_points: dict[int, float] = defaultdict(float)
    d_points: dict[int, float] = defaultdict(float)
    exchanges_dist: dict[int, float] = defaultdict(float)
    a_up_mean = np.zeros(len(a.types))
    a_fl_mean = np.zeros(len(a.types))
    d_up_mean = np.zeros(len(d.types))
    d_fl_mean = np.zeros(len(d.types))
    second = np.zeros(4)  # E[total^2] of a face-up, a flipped, d face-up, d flipped

    def stop(state: tuple, p: float, n_exchanges: int, a_pts: int, d_pts: int) -> None:
        a_up, a_fl, d_up, d_fl = state
        outcomes[kernels.outcome_code(sum(a_up), sum(d_up))] += p
        a_points[a_pts] += p
        d_points[d_pts] += p
        exchanges_dist[n_exchanges] += p
        a_up_mean[:] += p * np.array(a_up)
        a_fl_mean[:] += p * np.array(a_fl)
        d_up_mean[:] += p * np.array(d_up)
        d_fl_mean[:] += p * np.array(d_fl)
        second[:] += p * np.array([sum(a_up), sum(a_fl), sum(d_up), sum(d_fl)]) ** 2

    start = (tuple(int(x) for x in a.face_up), tuple(int(x) for x in a.flipped),
             tuple(int(x) for x in d.face_up), tuple(int(x) for x in d.flipped))
    live: dict[tuple, float] = {start: 1.0}
    transitions = 0
    for done in range(battle.max_exchanges):
        if not live:
            break
        following: dict[tuple, float] = defaultdict(float)
        for (a_up, a_fl, d_up, d_fl), p in live.items():
            a_before = a_pot0 - _potential(a_up, a_fl)
            d_before = d_pot0 - _potential(d_up, d_fl)
            for row, q in rows_of(a_up, d_up):
                transitions += 1
                la = int(battle.row_att[row])
                ld = int(battle.row_def[row])
                new_a = after(a_up, a_fl, la)
                new_d = after(d_up, d_fl, ld)
                state = (*new_a, *new_d)
                if sum(new_a[0]) and sum(new_d[0]):
                    following[state] += p * q
                else:
                    stop(state, p * q, done + 1, a_before + la, d_before + ld)
            if transitions > limit:
                raise _TooLarge
        live = following
    capped = 0.0
    for state, p in live.items():
        a_up, a_fl, d_up, d_fl = state
        stop(state, p, battle.max_exchanges, a_pot0 - _potential(a_up, a_fl),
             d_pot0 - _potential(d_up, d_fl))
        capped += p
    return {
        "outcomes": outcomes,
        "capped": capped if battle.exchanges == UNTIL_DONE else 0.0,
        "a_points": dict(a_points),
        "d_points": dict(d_points),
        "exchanges": dict(exchanges_dist),
        "a_face_up": a_up_mean,
        "a_flipped": a_fl_mean,
        "d_face_up": d_up_mean,
        "d_flipped": d_fl_mean,
        "second": second,
        "transitions": transitions,
    }


# ---------------------------------------------------------------------------------------------
# Monte Carlo


def _run_monte_carlo(battle: FormulaBattle, trials: int, seed: int) -> dict:
    """Monte Carlo counts; per-chunk streams from SeedSequence, so threads do not matter."""
    jit.compiled()
    a, d = battle.a, battle.d
    n_chunks = -(-trials // CHUNK_TRIALS)
    chunk_trials = np.full(n_chunks, CHUNK_TRIALS, dtype=np.int64)
    chunk_trials[-1] = trials - CHUNK_TRIALS * (n_chunks - 1)
    seeds = np.random.SeedSequence(seed).generate_state(n_chunks, dtype=np.uint64)
    max_ex = battle.max_exchanges
    bound = _exchange_bound(battle)
    a_bins = bound * int(battle.row_att.max()) + 1
    d_bins = bound * int(battle.row_def.max()) + 1
    row_bytes = 8 * (max_ex + 1 + a_bins + d_bins + 2 * (len(a.types) + len(d.types)) + 9)
    per_call = max(1, min(MAX_CHUNKS_PER_CALL, HIST_BYTES_PER_CALL // row_bytes))
    n_a, n_d = len(a.types), len(d.types)
    totals = {
        "outcomes": np.zeros(N_OUTCOMES, dtype=np.int64),
        "exchanges": np.zeros(max_ex + 1, dtype=np.int64),
        "a_points": np.zeros(a_bins, dtype=np.int64),
        "d_points": np.zeros(d_bins, dtype=np.int64),
        "a_face_up": np.zeros(n_a, dtype=np.int64),
        "a_flipped": np.zeros(n_a, dtype=np.int64),
        "d_face_up": np.zeros(n_d, dtype=np.int64),
        "d_flipped": np.zeros(n_d, dtype=np.int64),
        "a_left_sq": np.zeros(2, dtype=np.int64),
        "d_left_sq": np.zeros(2, dtype=np.int64),
    }
    for begin in range(0, n_chunks, per_call):
        end = min(begin + per_call, n_chunks)
        n = end - begin
        out = {
            "outcomes": np.zeros((n, N_OUTCOMES), dtype=np.int64),
            "exchanges": np.zeros((n, max_ex + 1), dtype=np.int64),
            "a_points": np.zeros((n, a_bins), dtype=np.int64),
            "d_points": np.zeros((n, d_bins), dtype=np.int64),
            "a_face_up": np.zeros((n, n_a), dtype=np.int64),
            "a_flipped": np.zeros((n, n_a), dtype=np.int64),
            "d_face_up": np.zeros((n, n_d), dtype=np.int64),
            "d_flipped": np.zeros((n, n_d), dtype=np.int64),
            "a_left_sq": np.zeros((n, 2), dtype=np.int64),
            "d_left_sq": np.zeros((n, 2), dtype=np.int64),
        }
        kernels.simulate_chunks(
            seeds[begin:end], chunk_trials[begin:end], battle.die, max_ex,
            battle.flips == "A1", battle.row_min, battle.row_att, battle.row_def,
            a.bonus, a.extra, a.base, a.face_up, a.flipped,
            d.bonus, d.base, d.face_up, d.flipped,
            out["outcomes"], out["exchanges"], out["a_points"], out["d_points"],
            out["a_face_up"], out["a_flipped"], out["d_face_up"], out["d_flipped"],
            out["a_left_sq"], out["d_left_sq"],
        )
        for key, value in out.items():
            totals[key] += value.sum(axis=0)
    return totals


# ---------------------------------------------------------------------------------------------
# Result


@dataclass
class FormulaResult:
    """Odds of a formula battle.  The five outcome keys sum to 1.

    ``stalemate`` is the probability that both sides still have face-up pieces when the
    exchanges stop (after `exchanges` exchanges, or at the cap); it is repeated as
    ``undecided``, and ``capped`` is the part of it that hit the exchange cap of an
    ``until-done`` battle (0 for a fixed number of exchanges).  Loss points are the points
    read off the loss table (multiplier applied), summed over the exchanges, including points
    that found no piece left.  For Monte Carlo results `stderr` holds standard errors and
    `ci95` 95% intervals; for exact ones both are zero-width.
    """

    rules: str
    method: str
    trials: int | None
    seed: int | None
    attacker: str
    defender: str
    attacker_level: int
    defender_level: int
    counter: int
    hatred: bool
    loss_multiplier: int
    flips: str
    exchanges: int | str
    exchange_cap: int
    attacker_win: float
    defender_win: float
    draw: float
    stalemate: float
    retreat: float
    undecided: float
    capped: float
    attacker_loss_points: float
    defender_loss_points: float
    attacker_loss_points_distribution: dict[int, float]
    defender_loss_points_distribution: dict[int, float]
    attacker_face_up_left: float
    attacker_flipped_left: float
    defender_face_up_left: float
    defender_flipped_left: float
    attacker_survivors: dict[str, float]
    defender_survivors: dict[str, float]
    mean_exchanges: float
    exchanges_distribution: dict[int, float]
    stderr: dict[str, float]
    ci95: dict[str, tuple[float, float]]
    elapsed_s: float
    notes: tuple[str, ...] = field(default=(), repr=False)

    def to_dict(self) -> dict[str, Any]:
        """Plain-data view (the JSON object)."""
        return {
            "rules": self.rules,
            "method": self.method,
            "trials": self.trials,
            "seed": self.seed,
            "attacker": self.attacker,
            "defender": self.defender,
            "attacker_level": self.attacker_level,
            "defender_level": self.defender_level,
            "counter": self.counter,
            "hatred": self.hatred,
            "loss_multiplier": self.loss_multiplier,
            "flips": self.flips,
            "exchanges": self.exchanges,
            "exchange_cap": self.exchange_cap,
            **{key: getattr(self, key) for key in OUTCOME_KEYS},
            "undecided": self.undecided,
            "capped": self.capped,
            "attacker_loss_points": self.attacker_loss_points,
            "defender_loss_points": self.defender_loss_points,
            "attacker_loss_points_distribution": dict(self.attacker_loss_points_distribution),
            "defender_loss_points_distribution": dict(self.defender_loss_points_distribution),
            "attacker_face_up_left": self.attacker_face_up_left,
            "attacker_flipped_left": self.attacker_flipped_left,
            "defender_face_up_left": self.defender_face_up_left,
            "defender_flipped_left": self.defender_flipped_left,
            "attacker_survivors": dict(self.attacker_survivors),
            "defender_survivors": dict(self.defender_survivors),
            "mean_exchanges": self.mean_exchanges,
            "exchanges_distribution": dict(self.exchanges_distribution),
            "stderr": dict(self.stderr),
            "ci95": {k: list(v) for k, v in self.ci95.items()},
            "elapsed_s": self.elapsed_s,
        }

    def to_json(self) -> str:
        """JSON text of :meth:`to_dict` (distribution keys become strings)."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def flat_row(self) -> dict[str, Any]:
        """One flat row: nested fields spread into columns (``attacker_survivors.army``,
        ``attacker_loss_points_distribution.3``, ``attacker_win_stderr``, ...)."""
        row: dict[str, Any] = {}
        for key, value in self.to_dict().items():
            if spread_statistics(key, value, row):
                continue
            if isinstance(value, dict):
                for sub, sub_value in value.items():
                    row[f"{key}.{sub}"] = sub_value
            else:
                row[key] = value
        return row

    def to_frame(self) -> pd.DataFrame:
        """A one-row DataFrame of :meth:`flat_row`."""
        return pd.DataFrame([self.flat_row()])

    def to_csv(self, header: bool = True) -> str:
        """CSV text: a header line (unless header=False) and one row."""
        return csv_text(self.flat_row(), header)

    def distribution_csv(self, which: str) -> str:
        """CSV of a distribution: "ipc" (loss points per side) or "rounds" (exchanges)."""
        if which == "ipc":
            frame = self.loss_points_frame()
        elif which == "rounds":
            frame = pd.DataFrame(sorted(self.exchanges_distribution.items()),
                                 columns=["exchanges", "probability"])
        else:
            return ""
        return frame.to_csv(index=False, lineterminator="\n")

    def loss_points_frame(self) -> pd.DataFrame:
        """Long table of both loss-point distributions: side, loss_points, probability."""
        rows = [
            {"side": side, "loss_points": points, "probability": p}
            for side, dist in (("attacker", self.attacker_loss_points_distribution),
                               ("defender", self.defender_loss_points_distribution))
            for points, p in sorted(dist.items())
        ]
        return pd.DataFrame(rows, columns=["side", "loss_points", "probability"])

    def table(self) -> str:
        """Human-readable report."""
        exact = self.method == "exact"
        how = ("exact" if exact
               else f"Monte Carlo, {self.trials:,} trials, seed {self.seed}")
        exchanges = (f"until done (cap {self.exchange_cap})" if self.exchanges == UNTIL_DONE
                     else str(self.exchanges))
        lines = [
            f"{self.rules}: {self.attacker}  attacking  {self.defender}",
            f"method: {how}   ({self.elapsed_s:.3f} s)",
            f"levels {self.attacker_level} v {self.defender_level}, counter points "
            f"{self.counter}, hatred {'yes' if self.hatred else 'no'}, loss multiplier "
            f"x{self.loss_multiplier}, flips {self.flips}, exchanges {exchanges}",
            "",
            f"{'outcome':<34}{'probability':>12}   {'' if exact else '95% CI'}",
        ]
        labels = {
            "attacker_win": "attacker wins",
            "defender_win": "defender wins",
            "draw": "draw (no face-up piece left)",
            "stalemate": "undecided (both still face-up)",
        }
        for key, label in labels.items():
            value = getattr(self, key)
            ci = "" if exact else "[{:.2%}, {:.2%}]".format(*self.ci95[key])
            lines.append(f"{label:<34}{value:>12.2%}   {ci}")
        if self.exchanges == UNTIL_DONE:
            lines.append(f"{'  of which hit the exchange cap':<34}{self.capped:>12.2%}")
        lines.append("")

        def pm(key: str) -> str:
            return "" if exact else f" ± {Z95 * self.stderr[key]:.3f}"

        lines.append(f"{'(means)':<22}{'attacker':>16}{'defender':>16}")
        for label, a_key, d_key in (
            ("loss points", "attacker_loss_points", "defender_loss_points"),
            ("face-up pieces left", "attacker_face_up_left", "defender_face_up_left"),
            ("flipped pieces left", "attacker_flipped_left", "defender_flipped_left"),
        ):
            a_text = f"{getattr(self, a_key):.3f}{pm(a_key)}"
            d_text = f"{getattr(self, d_key):.3f}{pm(d_key)}"
            lines.append(f"{label:<22}{a_text:>16}{d_text:>16}")
        names = list(dict.fromkeys([*self.attacker_survivors, *self.defender_survivors]))
        for name in names:
            a_value = self.attacker_survivors.get(name)
            d_value = self.defender_survivors.get(name)
            a_text = "-" if a_value is None else f"{a_value:.3f}"
            d_text = "-" if d_value is None else f"{d_value:.3f}"
            lines.append(f"  {name:<20}{a_text:>16}{d_text:>16}")
        lines.append(f"exchanges             {self.mean_exchanges:.3f}{pm('mean_exchanges')}"
                     " on average")
        lines.append("")
        lines.append(f"{'loss points':<22}{'attacker':>16}{'defender':>16}")
        points = sorted({*self.attacker_loss_points_distribution,
                         *self.defender_loss_points_distribution})
        for k in points:
            a_p = self.attacker_loss_points_distribution.get(k, 0.0)
            d_p = self.defender_loss_points_distribution.get(k, 0.0)
            lines.append(f"  {k:<20}{a_p:>16.2%}{d_p:>16.2%}")
        for note in self.notes:
            lines.append(f"note: {note}")
        return "\n".join(lines)


def _mean_and_se(dist: dict[int, float], n: float | None) -> tuple[float, float]:
    mean = sum(k * p for k, p in dist.items())
    if n is None:
        return mean, 0.0
    second = sum(k * k * p for k, p in dist.items())
    return mean, math.sqrt(max(second - mean * mean, 0.0) / n)


def _build_result(battle: FormulaBattle, method: str, trials: int | None, seed: int | None,
                  raw: dict, started: float) -> FormulaResult:
    a, d = battle.a, battle.d
    exact = method == "exact"
    if exact:
        n = None
        outcome_p = raw["outcomes"]
        a_dist = {int(k): float(v) for k, v in sorted(raw["a_points"].items())}
        d_dist = {int(k): float(v) for k, v in sorted(raw["d_points"].items())}
        ex_dist = {int(k): float(v) for k, v in sorted(raw["exchanges"].items())}
        a_up, a_fl = raw["a_face_up"], raw["a_flipped"]
        d_up, d_fl = raw["d_face_up"], raw["d_flipped"]
        second = raw["second"]
        capped = float(raw["capped"])
    else:
        n = float(trials)
        outcome_p = raw["outcomes"] / n

        def dist(hist: np.ndarray) -> dict[int, float]:
            return {int(k): float(hist[k] / n) for k in np.flatnonzero(hist)}

        a_dist, d_dist, ex_dist = dist(raw["a_points"]), dist(raw["d_points"]), dist(
            raw["exchanges"])
        a_up, a_fl = raw["a_face_up"] / n, raw["a_flipped"] / n
        d_up, d_fl = raw["d_face_up"] / n, raw["d_flipped"] / n
        second = np.concatenate([raw["a_left_sq"], raw["d_left_sq"]]) / n
        capped = (float(outcome_p[STALEMATE]) if battle.exchanges == UNTIL_DONE else 0.0)

    values = {key: float(outcome_p[_OUTCOME_INDEX[key]]) for key in OUTCOME_KEYS}
    a_points, a_points_se = _mean_and_se(a_dist, n)
    d_points, d_points_se = _mean_and_se(d_dist, n)
    mean_exchanges, exchanges_se = _mean_and_se(ex_dist, n)
    left = [float(np.sum(a_up)), float(np.sum(a_fl)), float(np.sum(d_up)), float(np.sum(d_fl))]

    def survivors(side: SideArrays, up: np.ndarray, fl: np.ndarray) -> dict[str, float]:
        names = battle.ruleset.units
        out = {}
        for i in sorted(side.present, key=lambda i: list(names).index(side.types[i][0])):
            out[side.types[i][0]] = float(up[i])
            out[side.types[i][1]] = float(fl[i])
        return out

    stderr: dict[str, float] = {}
    ci95: dict[str, tuple[float, float]] = {}
    for key in OUTCOME_KEYS:
        p = values[key]
        stderr[key] = 0.0 if exact else math.sqrt(max(p * (1 - p), 0.0) / n)
        ci95[key] = (p, p) if exact else wilson_interval(p * n, int(n))
    stderr["attacker_loss_points"] = a_points_se
    stderr["defender_loss_points"] = d_points_se
    stderr["mean_exchanges"] = exchanges_se
    for i, key in enumerate(("attacker_face_up_left", "attacker_flipped_left",
                             "defender_face_up_left", "defender_flipped_left")):
        stderr[key] = 0.0 if exact else math.sqrt(max(second[i] - left[i] ** 2, 0.0) / n)

    notes = []
    if battle.exchanges == UNTIL_DONE and capped > 0:
        notes.append(f"{capped:.2%} of battles were still undecided after the cap of "
                     f"{battle.exchange_cap} exchanges (reported as undecided)")
    return FormulaResult(
        rules=battle.ruleset.id,
        method=method,
        trials=trials,
        seed=seed,
        attacker=format_army(battle.attacker),
        defender=format_army(battle.defender),
        attacker_level=battle.attacker_level,
        defender_level=battle.defender_level,
        counter=battle.counter,
        hatred=battle.hatred,
        loss_multiplier=battle.loss_multiplier,
        flips=battle.flips,
        exchanges=battle.exchanges,
        exchange_cap=battle.exchange_cap,
        **values,
        undecided=values["stalemate"],
        capped=capped,
        attacker_loss_points=a_points,
        defender_loss_points=d_points,
        attacker_loss_points_distribution=a_dist,
        defender_loss_points_distribution=d_dist,
        attacker_face_up_left=left[0],
        attacker_flipped_left=left[1],
        defender_face_up_left=left[2],
        defender_flipped_left=left[3],
        attacker_survivors=survivors(a, a_up, a_fl),
        defender_survivors=survivors(d, d_up, d_fl),
        mean_exchanges=mean_exchanges,
        exchanges_distribution=ex_dist,
        stderr=stderr,
        ci95=ci95,
        elapsed_s=time.perf_counter() - started,
        notes=tuple(notes),
    )


# ---------------------------------------------------------------------------------------------
# Public entry point


def simulate_formula(
    attacker: str | Mapping[str, int],
    defender: str | Mapping[str, int],
    *,
    attacker_level: int = 1,
    defender_level: int = 1,
    counter: int = 0,
    hatred: bool = False,
    loss_multiplier: int = 1,
    exchanges: int | str = 1,
    exchange_cap: int = DEFAULT_EXCHANGE_CAP,
    method: str = "auto",
    trials: int = DEFAULT_TRIALS,
    seed: int | None = None,
    flips: str | None = None,
    rules: str | Ruleset = "formula",
) -> FormulaResult:
    """Odds of a formula-model battle (seed-002 fan game; docs/formula.md).

    attacker, defender: army notation of the edition (``"3 army, 1 air"``, ``"3 陆军"``,
    already-flipped pieces as ``"1 army_flipped"``) or ``{unit: count}``.
    attacker_level, defender_level: military level 1..10 (+1 to every unit at 3, 6 and 9).
    counter: the attacker's counter points (>= 0), added to its final value.
    hatred: national hatred, +1 to the attacker's final value.
    loss_multiplier: multiplies both sides' loss points (Kursk card: 2), 1..10.
    exchanges: number of exchanges 1..1000 (the battle stops earlier once a side has no
    face-up piece), or ``"until-done"``: until a side has no face-up piece, at most
    exchange_cap exchanges.
    method: ``"exact"``, ``"mc"`` or ``"auto"`` (exact unless the chain is too large).
    trials, seed: Monte Carlo size and seed (same seed, same numbers, any thread count).
    flips: ``"A2"`` or ``"A1"`` (rules reference 9.3 item 9); None takes the edition's
    ``formula_flips`` flag.  rules: a formula-model edition id or Ruleset.
    Raises BattleInputError for any bad input.
    """
    started = time.perf_counter()
    if method not in METHODS:
        raise BattleInputError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    trials = _check_int("trials", trials, 1, MAX_TRIALS)
    battle = make_formula_battle(
        attacker, defender, attacker_level=attacker_level, defender_level=defender_level,
        counter=counter, hatred=hatred, loss_multiplier=loss_multiplier, exchanges=exchanges,
        exchange_cap=exchange_cap, flips=flips, rules=rules,
    )
    if method in ("auto", "exact"):
        try:
            raw = _solve_exact(battle)
        except _TooLarge:
            if method == "exact":
                raise BattleInputError(
                    f"battle too large to solve exactly (more than {EXACT_TRANSITION_LIMIT:,} "
                    "transitions); use method 'mc' for Monte Carlo"
                ) from None
        else:
            return _build_result(battle, "exact", None, None, raw, started)
    seed = _check_seed(seed)
    raw = _run_monte_carlo(battle, trials, seed)
    return _build_result(battle, "mc", trials, seed, raw, started)
