"""Formula combat (seed-002 fan game, rules reference §9): compile, solve, report.

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

import math
import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..army import format_army
from ..dice import convolve
from ..errors import BattleInputError
from ..kernels import formula as kernels
from ..kernels import jit
from ..kernels.layout import N_OUTCOMES, STALEMATE
from ..results import OUTCOME_KEYS, ResultViews, _frame, proportion_statistics
from ..rules import Ruleset
from ..solver import threads
from ..spec import (
    DEFAULT_TRIALS,
    UNTIL_DONE,
    FormulaSpec,
    RunSpec,
    make_formula_spec,
    make_run,
)

CHUNK_TRIALS = 16_384
MAX_CHUNKS_PER_CALL = 128
HIST_BYTES_PER_CALL = 32 * 2**20  # bound on the per-call histogram rows (memory per call)
FIRST_CALL_CHUNKS: int | None = None  # first kernel call, which times them (None: one a thread)
CALL_SECONDS = 0.5  # later calls: about this much work (the results do not depend on it)
# Exact solver: transitions (state x loss-table row) above which `auto` switches to Monte Carlo
# and `exact` refuses.  Decided from the forces before any state is built: a battle is solved
# exactly when `transition_bound` (at least the solver's transitions) is at most this; the
# solver's own count stops it at the same number, as a backstop.
EXACT_TRANSITION_LIMIT = 1_000_000


# ---------------------------------------------------------------------------------------------
# Compilation


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
    """A checked formula battle (battlecalc.spec.FormulaSpec) compiled for the kernels."""

    spec: FormulaSpec
    die: int
    row_min: np.ndarray  # int64[R-1]
    row_att: np.ndarray  # int64[R], multiplier applied
    row_def: np.ndarray  # int64[R], multiplier applied
    a: SideArrays
    d: SideArrays


def _bonus(level: int, thresholds: tuple[int, ...]) -> int:
    """Military-level bonus: +1 per threshold reached (levels 3, 6, 9 in the seed game)."""
    return sum(1 for t in thresholds if level >= t)


def _side(ruleset: Ruleset, army: dict[str, int], role: str, bonus: int,
          extra: int) -> SideArrays:
    pairs = ruleset.formula["piece_types"]
    # order of losses: the type with the lowest base value in this role first, ties in file
    # order (army, air, navy); flipped pieces go in the same order
    order = sorted(range(len(pairs)), key=lambda t: (ruleset.units[pairs[t][0]].value(role), t))
    types = tuple(pairs[t] for t in order)
    base = np.array([ruleset.units[up].value(role) for up, _ in types], dtype=np.int64)
    face_up = np.array([army.get(up, 0) for up, _ in types], dtype=np.int64)
    flipped = np.array([army.get(fl, 0) for _, fl in types], dtype=np.int64)
    present = tuple(i for i in range(len(types)) if face_up[i] or flipped[i])
    return SideArrays(types, base, face_up, flipped, bonus, extra, present)


def compile_formula(spec: FormulaSpec) -> FormulaBattle:
    """The kernel arrays of a checked formula battle."""
    params = spec.ruleset.formula
    thresholds = params["level_thresholds"]
    table = params["loss_table"]
    return FormulaBattle(
        spec=spec,
        die=params["die"],
        row_min=np.array([row[0] for row in table[:-1]], dtype=np.int64),
        row_att=np.array([row[1] * spec.loss_multiplier for row in table], dtype=np.int64),
        row_def=np.array([row[2] * spec.loss_multiplier for row in table], dtype=np.int64),
        a=_side(spec.ruleset, spec.attacker, "attack", _bonus(spec.attacker_level, thresholds),
                spec.counter + int(spec.hatred)),
        d=_side(spec.ruleset, spec.defender, "defense", _bonus(spec.defender_level, thresholds),
                0),
    )


def make_formula_battle(attacker: str | Mapping[str, int], defender: str | Mapping[str, int],
                        **options: Any) -> FormulaBattle:
    """Check a formula battle (options: see :func:`battlecalc.spec.make_formula_spec`) and
    compile it; BattleInputError if bad."""
    return compile_formula(make_formula_spec(attacker, defender, **options))


def _potential(face_up, flipped) -> int:
    """2 x face-up + flipped: every loss point that does something lowers it by exactly 1."""
    return 2 * int(sum(face_up)) + int(sum(flipped))


def _exchange_bound(battle: FormulaBattle) -> int:
    """Exchanges that can happen at most: each one lowers the potential of a side by >= 1."""
    a, d = battle.a, battle.d
    total = _potential(a.face_up, a.flipped) + _potential(d.face_up, d.flipped)
    return min(battle.spec.max_exchanges, total)


# ---------------------------------------------------------------------------------------------
# Size of the exact solve, counted from the forces (no state is built)


def _side_state_counts(side: SideArrays, row_points: np.ndarray, a1: bool) -> np.ndarray:
    """counts[x] (float64[P0 + 1], P0 = starting potential): at least the number of this
    side's states with a face-up piece and potential P0 - x, i.e. after x loss points.

    Three facts of `kernels.apply_losses` make the count small.  Flips and removals both take
    the first type of the side's order of losses that has a piece, so the n face-up pieces
    left are always the last n of that order: n alone gives the face-up pieces.  The flipped
    pieces number at most max(flipped at the start, most points of a row) with A2 (an
    exchange of p points first removes earlier flips, then flips at most the p - (those)
    left) and at most max(flipped at the start, 1) with A1 (flip and remove alternate); and
    at most the pieces left besides the n face-up.  With none flipped at the start, flipped
    pieces leave in the order they were flipped, so the s flipped ones are the last s
    flipped: (n, s) is one state; otherwise count every way to spread s over the types.
    """
    up, flipped = int(side.face_up.sum()), int(side.flipped.sum())
    pieces = up + flipped
    cap = max(flipped, 1 if a1 else int(row_points.max()))
    if flipped == 0:
        ways = np.ones(cap + 1)
    else:
        ways = np.ones(1)
        for t in side.present:
            per_type = np.ones(min(cap, int(side.face_up[t] + side.flipped[t])) + 1)
            ways = convolve(ways, per_type)[:cap + 1]
    p0 = 2 * up + flipped
    counts = np.zeros(p0 + 1)
    for n in range(1, up + 1):
        s_max = min(len(ways) - 1, pieces - n)  # potential 2n + s, so x = p0 - 2n - s
        counts[p0 - 2 * n - s_max:p0 - 2 * n + 1] += ways[s_max::-1]
    return counts


def transition_bound(battle: FormulaBattle, limit: float | None = None) -> int:
    """At least the transitions `_solve_exact` counts, from the forces alone; once the count
    passes `limit` it stops and returns a number above `limit`.

    A state that goes on after k exchanges has both sides with a face-up piece, so no loss
    point was lost: each side's points so far (x, y) are a sum of k rows of the loss table,
    and its potential is its start minus them.  The count runs over the exchanges: the cells
    (x, y) that k rows can reach with a state on both sides, times the side states of each
    cell (`_side_state_counts`), times the moves of a state (at most the rows of the table
    and the die x die rolls).
    """
    a1 = battle.spec.flips == "A1"
    n_a = _side_state_counts(battle.a, battle.row_att, a1)
    n_d = _side_state_counts(battle.d, battle.row_def, a1)
    alive_a, alive_d = n_a > 0, n_d > 0
    moves = min(battle.row_att.shape[0], battle.die * battle.die)
    steps = sorted({(int(la), int(ld)) for la, ld in zip(battle.row_att, battle.row_def,
                                                          strict=True)})
    max_a, max_d = max(la for la, _ in steps), max(ld for _, ld in steps)
    reach = np.ones((1, 1), dtype=bool)  # cells (x, y) with x, y below its shape
    total = 0.0
    for _ in range(battle.spec.max_exchanges):
        h, w = reach.shape
        total += moves * float(n_a[:h] @ reach @ n_d[:w])
        if limit is not None and total > limit:
            break
        nh, nw = min(n_a.shape[0], h + max_a), min(n_d.shape[0], w + max_d)
        following = np.zeros((nh, nw), dtype=bool)
        for la, ld in steps:
            hh, ww = min(h, nh - la), min(w, nw - ld)
            if hh > 0 and ww > 0:
                following[la:la + hh, ld:ld + ww] |= reach[:hh, :ww]
        following &= alive_a[:nh, None] & alive_d[None, :nw]
        rows, cols = np.flatnonzero(following.any(axis=1)), np.flatnonzero(following.any(axis=0))
        if rows.size == 0:
            break
        reach = following[:rows[-1] + 1, :cols[-1] + 1]
    return math.ceil(total)


# ---------------------------------------------------------------------------------------------
# Exact solver


class _TooLarge(Exception):
    pass


class _SideStates:
    """One side's states, numbered: (face-up, flipped) pieces per type, with the potential,
    whether a face-up piece is left, a number for the face-up pieces alone (the dice rows
    depend on them only) and, cached, the state after some loss points."""

    def __init__(self, same_exchange_removal: bool):
        self.a1 = same_exchange_removal
        self.pieces: list[tuple[tuple, tuple]] = []
        self.potential: list[int] = []
        self.alive: list[bool] = []
        self.up_number: list[int] = []
        self._numbers: dict[tuple, int] = {}
        self._up_numbers: dict[tuple, int] = {}
        self._after: dict[tuple[int, int], int] = {}

    def number(self, up: tuple, flipped: tuple) -> int:
        n = self._numbers.get((up, flipped))
        if n is None:
            n = self._numbers[(up, flipped)] = len(self.pieces)
            self.pieces.append((up, flipped))
            self.potential.append(_potential(up, flipped))
            self.alive.append(sum(up) > 0)
            self.up_number.append(self._up_numbers.setdefault(up, len(self._up_numbers)))
        return n

    def after(self, n: int, points: int) -> int:
        """The state after `points` loss points in one exchange from state n."""
        m = self._after.get((n, points))
        if m is None:
            up, flipped = self.pieces[n]
            up_arr = np.array(up, dtype=np.int64)
            fl_arr = np.array(flipped, dtype=np.int64)
            kernels.apply_losses(up_arr, fl_arr, points, self.a1)
            m = self._after[(n, points)] = self.number(tuple(int(x) for x in up_arr),
                                                       tuple(int(x) for x in fl_arr))
        return m


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
    a1 = battle.spec.flips == "A1"
    n_rows = battle.row_att.shape[0]
    counts_buf = np.zeros(n_rows, dtype=np.int64)
    a_pot0 = _potential(a.face_up, a.flipped)
    d_pot0 = _potential(d.face_up, d.flipped)

    att, dfn = _SideStates(a1), _SideStates(a1)
    row_cache: dict[tuple[int, int], tuple[tuple[int, float], ...]] = {}

    def rows_of(a_n: int, d_n: int) -> tuple[tuple[int, float], ...]:
        """(row, probability) of the rows the dice can give; they depend on the face-up
        pieces only."""
        key = (att.up_number[a_n], dfn.up_number[d_n])
        rows = row_cache.get(key)
        if rows is None:
            kernels.row_counts(battle.die, a.bonus, a.extra,
                               np.array(att.pieces[a_n][0], dtype=np.int64), a.base, d.bonus,
                               np.array(dfn.pieces[d_n][0], dtype=np.int64), d.base,
                               battle.row_min, counts_buf)
            rows = row_cache[key] = tuple((r, int(n) / die2) for r, n in enumerate(counts_buf)
                                          if n)
        return rows

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

    row_att = [int(x) for x in battle.row_att]
    row_def = [int(x) for x in battle.row_def]
    # A state is a pair of side states, numbered (see _SideStates); per state, its moves, one
    # per loss-table row it can reach: (next state, probability, whether both sides still
    # have a face-up piece, loss points of each side so far).  A state recurs in many
    # exchanges: its moves are worked out once.
    states: list[tuple[int, int]] = []
    numbers: dict[tuple[int, int], int] = {}
    moves_cache: list[tuple | None] = []

    def number(pair: tuple[int, int]) -> int:
        n = numbers.get(pair)
        if n is None:
            n = numbers[pair] = len(states)
            states.append(pair)
            moves_cache.append(None)
        return n

    def moves_of(n: int) -> tuple:
        a_n, d_n = states[n]
        a_before = a_pot0 - att.potential[a_n]
        d_before = d_pot0 - dfn.potential[d_n]
        moves = []
        for row, q in rows_of(a_n, d_n):
            la, ld = row_att[row], row_def[row]
            new_a, new_d = att.after(a_n, la), dfn.after(d_n, ld)
            moves.append((number((new_a, new_d)), q, att.alive[new_a] and dfn.alive[new_d],
                          a_before + la, d_before + ld))
        moves_cache[n] = moves = tuple(moves)
        return moves

    def pieces(n: int) -> tuple:
        a_n, d_n = states[n]
        return (*att.pieces[a_n], *dfn.pieces[d_n])

    start = (tuple(int(x) for x in a.face_up), tuple(int(x) for x in a.flipped),
             tuple(int(x) for x in d.face_up), tuple(int(x) for x in d.flipped))
    live: dict[int, float] = {number((att.number(*start[:2]), dfn.number(*start[2:]))): 1.0}
    transitions = 0
    for done in range(battle.spec.max_exchanges):
        if not live:
            break
        following: dict[int, float] = defaultdict(float)
        for n, p in live.items():
            moves = moves_cache[n] or moves_of(n)
            transitions += len(moves)
            if transitions > limit:
                raise _TooLarge
            for next_n, q, going_on, a_pts, d_pts in moves:
                if going_on:
                    following[next_n] += p * q
                else:
                    stop(pieces(next_n), p * q, done + 1, a_pts, d_pts)
        live = following
    capped = 0.0
    for n, p in live.items():
        state = a_up, a_fl, d_up, d_fl = pieces(n)
        stop(state, p, battle.spec.max_exchanges, a_pot0 - _potential(a_up, a_fl),
             d_pot0 - _potential(d_up, d_fl))
        capped += p
    return {
        "outcomes": outcomes,
        "capped": capped if battle.spec.exchanges == UNTIL_DONE else 0.0,
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


def _run_monte_carlo(battle: FormulaBattle, trials: int, seed: int, progress=None) -> dict:
    """Monte Carlo counts; per-chunk streams from SeedSequence, so threads do not matter;
    progress(done, total, what) after each kernel call."""
    jit.compiled(everywhere=False)
    jit.compiling_notice(kernels.simulate_chunks, progress)
    a, d = battle.a, battle.d
    n_chunks = -(-trials // CHUNK_TRIALS)
    chunk_trials = np.full(n_chunks, CHUNK_TRIALS, dtype=np.int64)
    chunk_trials[-1] = trials - CHUNK_TRIALS * (n_chunks - 1)
    seeds = np.random.SeedSequence(seed).generate_state(n_chunks, dtype=np.uint64)
    max_ex = battle.spec.max_exchanges
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
    begin, calls = 0, min(per_call, FIRST_CALL_CHUNKS or threads.thread_count())
    while begin < n_chunks:
        end = min(begin + calls, n_chunks)
        n = end - begin
        call_started = time.perf_counter()
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
        threads.threads(
            kernels.simulate_chunks, end - begin,
            seeds[begin:end], chunk_trials[begin:end], battle.die, max_ex,
            battle.spec.flips == "A1", battle.row_min, battle.row_att, battle.row_def,
            a.bonus, a.extra, a.base, a.face_up, a.flipped,
            d.bonus, d.base, d.face_up, d.flipped,
            out["outcomes"], out["exchanges"], out["a_points"], out["d_points"],
            out["a_face_up"], out["a_flipped"], out["d_face_up"], out["d_flipped"],
            out["a_left_sq"], out["d_left_sq"],
        )
        for key, value in out.items():
            totals[key] += value.sum(axis=0)
        if progress is not None:
            progress(int(chunk_trials[:end].sum()), trials, "trials")
        # calls of about CALL_SECONDS, so that progress (and a caller's time limit, which
        # stops the run by raising from it) hears often even of slow trials (long battles)
        per_chunk = (time.perf_counter() - call_started) / n
        calls = max(1, min(per_call, int(CALL_SECONDS / max(per_chunk, 1e-9))))
        begin = end
    return totals


# ---------------------------------------------------------------------------------------------
# Result


@dataclass
class FormulaResult(ResultViews):
    """Odds of a formula battle.  The five outcome keys sum to 1.

    ``stalemate`` is the probability that both sides still have face-up pieces when the
    exchanges stop (after `exchanges` exchanges, or at the cap); it is repeated as
    ``undecided``, and ``capped`` is the part of it that hit the exchange cap of an
    ``until-done`` battle (0 for a fixed number of exchanges).  Loss points are the points
    read off the loss table (multiplier applied), summed over the exchanges, including points
    that found no piece left.  For Monte Carlo results `stderr` holds standard errors and
    `ci95` 95% intervals; for exact ones both are zero-width.
    """

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

    def _frames(self) -> dict[str, Any]:
        """Distributions: "ipc" (loss points per side) and "rounds" (exchanges)."""
        law = self.exchanges_distribution
        return {"ipc": self.loss_points_frame,
                "rounds": lambda: _frame({"exchanges": list(law),
                                          "probability": list(law.values())})}

    def loss_points_frame(self):
        """Long table of both loss-point distributions: side, loss_points, probability."""
        rows = [(side, points, p)
                for side, dist in (("attacker", self.attacker_loss_points_distribution),
                                   ("defender", self.defender_loss_points_distribution))
                for points, p in sorted(dist.items())]
        return _frame({"side": [r[0] for r in rows], "loss_points": [r[1] for r in rows],
                       "probability": [r[2] for r in rows]})

    def table(self) -> str:
        """Human-readable report."""
        exchanges = (f"until done (cap {self.exchange_cap})" if self.exchanges == UNTIL_DONE
                     else str(self.exchanges))
        lines = [
            f"{self.rules}: {self.attacker}  attacking  {self.defender}",
            self._method_line(),
            f"levels {self.attacker_level} v {self.defender_level}, counter points "
            f"{self.counter}, hatred {'yes' if self.hatred else 'no'}, loss multiplier "
            f"x{self.loss_multiplier}, flips {self.flips}, exchanges {exchanges}",
            "",
            *self._outcome_lines({
                "attacker_win": "attacker wins",
                "defender_win": "defender wins",
                "draw": "draw (no face-up piece left)",
                "stalemate": "undecided (both still face-up)",
            }),
        ]
        if self.exchanges == UNTIL_DONE:
            lines.append(f"{'  of which hit the exchange cap':<34}{self.capped:>12.2%}")
        lines += ["", f"{'(means)':<22}{'attacker':>16}{'defender':>16}"]
        for label, a_key, d_key in (
            ("loss points", "attacker_loss_points", "defender_loss_points"),
            ("face-up pieces left", "attacker_face_up_left", "defender_face_up_left"),
            ("flipped pieces left", "attacker_flipped_left", "defender_flipped_left"),
        ):
            a_text = f"{getattr(self, a_key):.3f}{self._pm(a_key)}"
            d_text = f"{getattr(self, d_key):.3f}{self._pm(d_key)}"
            lines.append(f"{label:<22}{a_text:>16}{d_text:>16}")
        lines += self._survivor_lines(16)
        lines.append(f"exchanges             {self.mean_exchanges:.3f}{self._pm('mean_exchanges')}"
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


LEFT_KEYS = ("attacker_face_up_left", "attacker_flipped_left", "defender_face_up_left",
             "defender_flipped_left")
SPEC_KEYS = ("attacker_level", "defender_level", "counter", "hatred", "loss_multiplier", "flips",
             "exchanges", "exchange_cap")


def _build_result(battle: FormulaBattle, method: str, trials: int | None, seed: int | None,
                  raw: dict, started: float) -> FormulaResult:
    a, d, spec = battle.a, battle.d, battle.spec
    exact = method == "exact"
    if exact:
        n = None
        outcome_p = raw["outcomes"]
        a_dist, d_dist, ex_dist = ({int(k): float(v) for k, v in sorted(raw[key].items())}
                                   for key in ("a_points", "d_points", "exchanges"))
        a_up, a_fl, d_up, d_fl = raw["a_face_up"], raw["a_flipped"], raw["d_face_up"], raw[
            "d_flipped"]
        second = raw["second"]
        capped = float(raw["capped"])
    else:
        n = float(trials)
        outcome_p = raw["outcomes"] / n
        a_dist, d_dist, ex_dist = ({int(k): float(raw[key][k] / n) for k in np.flatnonzero(
            raw[key])} for key in ("a_points", "d_points", "exchanges"))
        a_up, a_fl, d_up, d_fl = (raw[key] / n for key in (
            "a_face_up", "a_flipped", "d_face_up", "d_flipped"))
        second = np.concatenate([raw["a_left_sq"], raw["d_left_sq"]]) / n
        capped = (float(outcome_p[STALEMATE]) if spec.exchanges == UNTIL_DONE else 0.0)

    values = {key: float(outcome_p[i]) for i, key in enumerate(OUTCOME_KEYS)}
    a_points, a_points_se = _mean_and_se(a_dist, n)
    d_points, d_points_se = _mean_and_se(d_dist, n)
    mean_exchanges, exchanges_se = _mean_and_se(ex_dist, n)
    left = [float(np.sum(a_up)), float(np.sum(a_fl)), float(np.sum(d_up)), float(np.sum(d_fl))]

    def survivors(side: SideArrays, up: np.ndarray, fl: np.ndarray) -> dict[str, float]:
        names = list(spec.ruleset.units)
        out = {}
        for i in sorted(side.present, key=lambda i: names.index(side.types[i][0])):
            out[side.types[i][0]] = float(up[i])
            out[side.types[i][1]] = float(fl[i])
        return out

    stderr, ci95 = proportion_statistics(values, None if exact else int(n))
    stderr.update(attacker_loss_points=a_points_se, defender_loss_points=d_points_se,
                  mean_exchanges=exchanges_se)
    for i, key in enumerate(LEFT_KEYS):
        # (x * x, not x ** 2: a float's ** is libm's pow, whose last bit differs with FMA or not)
        stderr[key] = 0.0 if exact else math.sqrt(max(second[i] - left[i] * left[i], 0.0) / n)
    notes = []
    if spec.exchanges == UNTIL_DONE and capped > 0:
        notes.append(f"{capped:.2%} of battles were still undecided after the cap of "
                     f"{spec.exchange_cap} exchanges (reported as undecided)")
    return FormulaResult(
        spec.ruleset.id, method, trials, seed, format_army(spec.attacker),
        format_army(spec.defender), **{key: getattr(spec, key) for key in SPEC_KEYS}, **values,
        undecided=values["stalemate"], capped=capped, attacker_loss_points=a_points,
        defender_loss_points=d_points, attacker_loss_points_distribution=a_dist,
        defender_loss_points_distribution=d_dist, **dict(zip(LEFT_KEYS, left, strict=True)),
        attacker_survivors=survivors(a, a_up, a_fl), defender_survivors=survivors(d, d_up, d_fl),
        mean_exchanges=mean_exchanges, exchanges_distribution=ex_dist, stderr=stderr,
        ci95=ci95, elapsed_s=time.perf_counter() - started, notes=tuple(notes),
    )


# ---------------------------------------------------------------------------------------------
# Public entry point


def simulate_formula(
    attacker: str | Mapping[str, int],
    defender: str | Mapping[str, int],
    *,
    method: str = "auto",
    trials: int = DEFAULT_TRIALS,
    seed: int | None = None,
    **options: Any,
) -> FormulaResult:
    """Odds of a formula-model battle (seed-002 fan game; docs/formula.md).

    attacker, defender: army notation of the edition (``"3 army, 1 air"``, ``"3 陆军"``,
    already-flipped pieces as ``"1 army_flipped"``) or ``{unit: count}``.
    method: ``"exact"``, ``"mc"`` or ``"auto"`` (exact unless the chain is too large).
    trials, seed: Monte Carlo size and seed (same seed, same numbers, any thread count).
    options (:func:`battlecalc.spec.make_formula_spec`): attacker_level, defender_level:
    military level 1..10 (+1 to every unit at 3, 6 and 9); counter: the attacker's counter
    points (>= 0), added to its final value; hatred: national hatred, +1 to the attacker's
    final value; loss_multiplier: multiplies both sides' loss points (Kursk card: 2), 1..10;
    exchanges: number of exchanges 1..1000 (the battle stops earlier once a side has no
    face-up piece), or ``"until-done"``: until a side has no face-up piece, at most
    exchange_cap (default 100) exchanges; flips: ``"A2"`` or ``"A1"`` (rules reference 9.3
    item 9), None takes the edition's ``formula_flips`` flag; rules: a formula-model edition
    id, Ruleset or edition file (default ``"formula"``).
    Raises BattleInputError for any bad input.
    """
    started = time.perf_counter()
    run = make_run(method, trials, seed)
    return run_formula(make_formula_spec(attacker, defender, **options), run, started)


def run_formula(spec: FormulaSpec, run: RunSpec, started: float) -> FormulaResult:
    """Solve a checked formula battle: exactly, or by Monte Carlo (`auto`: exactly unless the
    chain is too large)."""
    battle = compile_formula(spec)
    if run.method in ("auto", "exact"):
        limit = EXACT_TRANSITION_LIMIT
        raw = None
        if transition_bound(battle, limit) <= limit:  # from the forces: no state built yet
            try:
                raw = _solve_exact(battle, limit)
            except _TooLarge:  # the backstop; the bound holds, so it does not happen
                pass
        if raw is not None:
            return _build_result(battle, "exact", None, None, raw, started)
        if run.method == "exact":
            raise BattleInputError(
                f"battle too large to solve exactly (its pieces allow more than {limit:,} "
                "transitions of the exact solver, docs/formula.md §9); use method 'mc' for "
                "Monte Carlo"
            )
    seed = run.mc_seed()
    raw = _run_monte_carlo(battle, run.trials, seed, run.progress)
    return _build_result(battle, "mc", run.trials, seed, raw, started)
