"""How a battle is solved, as a value: :class:`SolvePlan`, made by :func:`choose`.

Every decision the solver takes about a compiled battle is a field of its plan: the method
(exact or Monte Carlo), the exact solver's variant (the land fast path's row sweep, attacker
blocks merged into one table, the general round in two phases, the sea walk, a dense or a
compact mass table, the pruning budget and its thresholds, whether the joint final law is
kept, the law of rounds), how it runs (compiled kernels or plain Python, threads, per-block
rows, in the calling thread or the pool, the compact table's work limit, Monte Carlo where a
compact solve passes it) and the estimates it was chosen on.  ``repr(plan)`` says how a battle
was solved; tests build plans (``choose(c, two_phase=False)``) to compare variants.

Every threshold the choice reads is a field of :class:`Limits` (one table; LIMITS the
default), which a caller may replace (``choose(c, limits=replace(LIMITS, table_start=4))``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..errors import BattleInputError
from ..kernels import jit
from ..kernels.layout import NO_THRESHOLD, RU_BOMBARD, RU_SIMPLE, SIMPLE_EXACT
from . import cost, threads
from .state import _EVERYWHERE, _PLAIN, KernelState, _spent  # noqa: F401  (re-exported)
from .tables import merged

ROUNDS_BINS = 101  # law of rounds: 0..99 and "100 or more" (both solvers)


@dataclass(frozen=True)
class Limits:
    """Every threshold the choice of a method and of a variant reads."""

    # the exact method: `exact` refuses above these; `auto` solves exactly when the estimate
    # beats the Monte Carlo run it would replace and is within them
    max_exact_seconds: float = 10.0  # the solve plus --retreat-below's table
    exact_state_limit: int = 4_000_000  # attacker x defender states (the dense mass table)
    # --retreat-below's per-state win probabilities (--retreat-air-loss's chances of losing
    # every aircraft: the same sweep, within the same limits): state pairs and estimated seconds
    win_value_limit: int = 4_000_000
    max_win_value_seconds: float = 60.0
    # the optimal retreat's table (the same sweep, within the same limits): the attacker
    # retreats only where that is worth more than fighting on by more than this (the
    # objective's units: IPC, or a probability), so that float noise never turns a tie
    decision_tolerance: float = 1e-9
    # Monte Carlo trials a second on two cores, roughly (benchmarks/bench_engine.py): the land
    # fast path, the general round
    mc_rate_walk: int = 6_000_000
    mc_rate_general: int = 2_500_000
    # battles of prune_pairs state pairs or more are solved within a pruning budget, and
    # `auto` solves them exactly when the estimate is at most auto_big_seconds (1e6 trials of
    # a 300 v 300 land battle took 0.39 s against the 0.17 s the rate says, its exact solve
    # 0.35-0.45 s): Monte Carlo's trials slow down with a battle's size
    prune_pairs: int = 200_000
    auto_big_seconds: float = 1.0
    # exact to these at every size: hit counts less likely than hit_eps are cut from a side's
    # tables when they are built (compile: each hit law's R_HI), transitions moving less
    # probability than transition_eps are skipped, states holding less than state_eps are
    # not played on (mass reported as pruned)
    hit_eps: float = 1e-16
    transition_eps: float = 1e-18
    state_eps: float = 1e-16
    # within the budget (probability, reported as pruned): states below prune_state_eps are
    # not played on, and each round leaves out up to prune_tail_eps in the tails of the hit
    # laws (land fast path)
    prune_budget: float = 1e-10
    prune_state_eps: float = 1e-13
    prune_tail_eps: float = 1e-15
    # a general-round battle of more state pairs gets a compact mass table, of table_start
    # rows and columns to begin with (each x 4 when they run out), at most table_cells cells;
    # its cost is known only as it goes: `auto` tries it within auto_compact_seconds of work
    # (at least the Monte Carlo run's; Monte Carlo past that), `exact` within
    # max_exact_seconds; work_rate: its work a second, about (an idle 2-core machine)
    compact_pairs: int = 4_000_000
    table_start: int = 1024
    table_cells: int = 64_000_000
    work_rate: int = 400_000_000
    auto_compact_seconds: float = 2.0
    joint_limit: int = 4_000_000  # keep the joint final law (the TUV-swing law) below this
    # attacker blocks solved on several threads above this (each into its own row)
    parallel_seconds: float = 0.01
    # blocks are merged into one table where that table is at most this share of their
    # states, or where they would not be solved on threads anyway
    merge_share: float = 0.5
    short_seconds: float = 0.02  # solves estimated below this run in the calling thread
    call_seconds: float = 0.25  # kernel calls of about this, so Ctrl-C ends the work soon
    # --retreat-below's table: work per kernel call (how often it reports its progress)
    win_value_call_seconds: float = 0.1
    # the optimal retreat's backward sweep (solver/decide.fill_decisions): work per kernel call
    decide_call_seconds: float = 0.1
    # a process solves in plain Python until its plain-Python solves add up to about this
    # many seconds (python_slowdown: plain Python against compiled kernels): loading the
    # compiled kernels from numba's cache costs about that much once, and each solve is then
    # a few hundred times faster
    python_budget: float = 0.5
    python_slowdown: float = 300
    # ... and where numba's cache does not hold them (a fresh install: compiling the exact
    # solver's kernels costs about half a minute of CPU), until they add up to this: a third
    # or so of what compiling them costs, which then serves this process and the next ones
    python_budget_cold: float = 10.0
    # method "exact" solves only where "auto" would solve exactly, and refuses (ExactRefused)
    # where auto would take Monte Carlo (a server bounding its work: battlecalc serve)
    exact_only_where_auto: bool = False


class ExactRefused(BattleInputError):
    """Method exact refused where auto would take Monte Carlo (Limits.exact_only_where_auto)."""


LIMITS = Limits()
METHODS = ("exact", "mc")


@dataclass(frozen=True)
class SolvePlan:
    """How one compiled battle is solved (see the module docstring)."""

    method: str  # "exact" or "mc"
    seconds: float  # the exact solve's estimate (compiled kernels, two cores)
    mc_seconds: float  # the Monte Carlo run's (the trials asked for)
    trials: int
    # the exact variant
    row_sweep: bool = True  # the land fast path's closed sweep a row of pairs at a time
    merge_blocks: bool = False  # attacker blocks solved in one table (solver.tables.merged)
    two_phase: bool = True  # the general round's strikes, then general fire, in two phases
    sea_walk: bool = True  # a sea battle without submarines by the walk path
    table: tuple[int, int] = (0, 0)  # a compact mass table's first rows, columns; (0, 0) dense
    hit_eps: float = LIMITS.hit_eps  # hit counts cut from the tables (the compiled battle's)
    # which builder made each side's tables (compile.sides: "compiled" or "python"; the same
    # arrays either way)
    side_builders: tuple[str, str] = ("python", "python")
    eps: float = LIMITS.transition_eps
    state_eps: float = LIMITS.state_eps
    prune_eps: float = 0.0  # pruning within a budget (0.0: none)
    tail_eps: float = 0.0
    budget: float = 0.0
    joint: bool = True  # the joint final law kept (the TUV-swing law)
    rounds_bins: int = 1  # ROUNDS_BINS: the law of rounds
    win_values: bool = False  # --retreat-below's or --retreat-air-loss's tables built first
    win_values_seconds: float = 0.0
    decide: bool = False  # the optimal retreat's table built first (solver.decide)
    decide_seconds: float = 0.0
    # how it runs
    compiled: bool = True  # compiled kernels (else plain Python)
    threads: int = 1
    per_block_rows: bool = False  # blocks solved on threads, each into a row of its own
    short: bool = False  # in the calling thread
    work_limit: int = 0  # a compact table's work (successor terms) before it stops (0: none)
    fallback: bool = False  # Monte Carlo where a compact solve passes its work limit
    # the limits the plan was chosen under, which carrying it out reads too (its kernel calls'
    # work, a compact table's growth, the decisions' tolerance): the plan is the whole choice
    limits: Limits = dataclasses.field(default=LIMITS, repr=False, compare=False)

    @classmethod
    def of(cls, method: str, seconds: float, mc_seconds: float, trials: int,
           **fields) -> SolvePlan:
        """SolvePlan(method, seconds, mc_seconds, trials, **fields) without the frozen
        dataclass's __init__, which sets a field at a time (a third of a small battle's
        choice in solve_many): the same object, field for field."""
        values = _PLAN_DEFAULTS.copy()
        values.update(fields, method=method, seconds=seconds, mc_seconds=mc_seconds,
                      trials=trials)
        plan = object.__new__(cls)
        object.__setattr__(plan, "__dict__", values)  # (its own dict, made here)
        return plan

    @property
    def pruned_within_budget(self) -> bool:
        return self.budget > 0.0



# the exact solver's entry kernels (module, kernel): a dense table's blocks (any battle, or
# two single walks only), a compact table, --retreat-below's table, the optimal retreat's
# table, a batch of battles (solve_many)
SOLVE_BLOCKS = ("battlecalc.kernels.exact.sweep", "_solve_blocks")
SOLVE_WALK_BLOCKS = ("battlecalc.kernels.exact.sweep", "_solve_walk_blocks")
SOLVE_COMPACT = ("battlecalc.kernels.exact.sweep", "_solve_compact")
WIN_VALUES = ("battlecalc.kernels.exact.sweep", "_win_values")
DECIDE_VALUES = ("battlecalc.kernels.exact.sweep", "_decide_values")  # the optimal retreat's
SOLVE_BATCH = ("battlecalc.kernels.batch", "_solve_range")


_PLAN_DEFAULTS = {f.name: f.default for f in dataclasses.fields(SolvePlan)
                  if f.default is not dataclasses.MISSING}


def exact_entry(compiled, table: tuple[int, int]) -> tuple[str, str]:
    """The entry kernel that solves a battle as the exact solver takes it (exact_view) in a
    table (a compact one's first size, or (0, 0)): SOLVE_COMPACT, SOLVE_WALK_BLOCKS for two
    single walks (land, sea without submarines) without a bombardment of several hit counts
    (their rounds are walks: the general round's kernels, most of compiling the exact solver,
    are not compiled for them), else SOLVE_BLOCKS."""
    if table[0]:
        return SOLVE_COMPACT
    rules = compiled.rules
    if rules[RU_SIMPLE] and not (rules[RU_BOMBARD] and len(compiled.bombardment.pmf) > 1):
        return SOLVE_WALK_BLOCKS
    return SOLVE_BLOCKS


def kernels_for(seconds: float, limits: Limits = LIMITS, entries: tuple = (SOLVE_BLOCKS,),
                kernels: KernelState | None = None) -> bool:
    """Whether a solve of this estimate runs compiled kernels (KernelState.compiles), by the
    state `kernels` (default: the process's now)."""
    state = KernelState.now(entries) if kernels is None else kernels
    return state.compiles(seconds, limits, entries)


# the Monte Carlo driver's entry kernels: two single walks (land), the general round
MC_ENTRIES = (("battlecalc.kernels.montecarlo", "_simulate_walk_chunks"),
              ("battlecalc.kernels.montecarlo", "_simulate_chunks"))


def mc_entry(compiled) -> tuple[str, str]:
    """The Monte Carlo entry kernel of a compiled battle (solver.montecarlo runs it): the two
    single walks (land) or the general round."""
    return MC_ENTRIES[0] if compiled.rules[RU_SIMPLE] == 1 else MC_ENTRIES[1]


def mc_cold(compiled) -> bool:
    """Whether a Monte Carlo run of this compiled battle now compiles its entry kernel first
    (neither compiled in this process nor in numba's cache); False where kernels run as
    plain Python."""
    return entry_cold(mc_entry(compiled))


def entry_cold(entry: tuple[str, str]) -> bool:
    """Whether calling the kernel entry = (module, name) compiled now compiles it first
    (neither compiled in this process nor in numba's cache); False under
    BATTLECALC_PLAIN_KERNELS=1."""
    return not jit.plain_kernels() and not jit.loaded(*entry) and not jit.on_disk(*entry)


def compiles_first(method: str | None = None, limits: Limits = LIMITS) -> bool:
    """Whether a solve by `method` ("mc", "exact"; None: either) in this process now compiles
    kernels first: Monte Carlo where an entry of its is neither compiled in the process nor
    in numba's cache (jit.loaded, jit.on_disk), the exact solver only where its solves run
    compiled whatever their size (jit.compiled() has run, or the process has spent
    limits.python_budget_cold in plain Python) and a dense table's entry is so.  (An
    estimate for a notice: one battle's entry may be warm where another's is not.)"""
    if jit.plain_kernels():
        return False

    def cold(entries) -> bool:
        return any(not jit.loaded(*e) and not jit.on_disk(*e) for e in entries)

    if method in (None, "mc") and cold(MC_ENTRIES):
        return True
    compiles_exact = (jit.compiled_everywhere()
                      or _spent[0] >= limits.python_budget_cold)
    return (method in (None, "exact") and compiles_exact
            and cold((SOLVE_BLOCKS, SOLVE_WALK_BLOCKS)))


def spend(plan: SolvePlan, seconds: float, limits: Limits = LIMITS) -> None:
    """What running `seconds` of a plan's work costs this process before it runs: its
    kernels made numba dispatchers (jit.compiled(); numba compiles each on its first call:
    jit.compiling reports it), or its plain-Python seconds counted."""
    if plan.compiled:
        jit.compiled(everywhere=False)
    else:
        _spent[0] += seconds * limits.python_slowdown


def compact_table(compiled, limits: Limits = LIMITS) -> tuple[int, int]:
    """The first size (rows, columns) of the compact mass table of a battle solved with one
    (a general-round battle of one attacker block, no bombardment, no partial retreat, of
    more than limits.compact_pairs state pairs: its mass keeps to a few hundred states a
    side), or (0, 0): dense."""
    att, dfn = compiled.attacker, compiled.defender
    if (compiled.rules[RU_SIMPLE] or compiled.rules[RU_BOMBARD] or len(att.blocks) != 1
            or compiled.has_partial_retreat
            or att.n_states * dfn.n_states <= limits.compact_pairs):
        return 0, 0
    return min(att.n_states, limits.table_start), min(dfn.n_states, limits.table_start)


def merges_blocks(compiled, seconds: float | None, limits: Limits = LIMITS,
                  allowed: bool = True) -> bool:
    """Whether the attacker's blocks are solved in one table (merged): the land fast path
    with no bombardment and no partial retreat (a retreat decides by a state's units, the
    same in its twin), a side whose blocks merge (solver.tables.merged_walks), and either the
    merged table is at most limits.merge_share of the blocks' states or the blocks would not
    be solved on threads anyway (so the choice never depends on the thread count)."""
    rules, att = compiled.rules, compiled.attacker
    if (not allowed or not rules[RU_SIMPLE] or rules[RU_BOMBARD] or len(att.blocks) < 2
            or compiled.has_partial_retreat):
        return False
    merge = merged(att)
    if merge is None:
        return False
    if seconds is None:  # (cost.solve_seconds: the blocks one by one)
        seconds = cost.solve_seconds(compiled)
    return len(merge[1]) <= limits.merge_share * att.n_states or seconds <= limits.parallel_seconds


def exact_seconds(compiled, limits: Limits = LIMITS, merge_blocks: bool = True,
                  raw: float | None = None) -> float:
    """cost.solve_seconds (raw, where the caller has it), for the share of the states the
    solve plays where blocks merge."""
    seconds = cost.solve_seconds(compiled) if raw is None else raw
    if not merges_blocks(compiled, seconds, limits, merge_blocks):
        return seconds
    return seconds * len(merged(compiled.attacker)[1]) / compiled.attacker.n_states


def without_sea_walk(compiled):
    """The battle as the exact solver takes it with no sea walk: a sea battle without
    submarines by the general round (RU_SIMPLE 0)."""
    if compiled.rules[RU_SIMPLE] != SIMPLE_EXACT:
        return compiled
    rules = compiled.rules.copy()
    rules[RU_SIMPLE] = 0
    return dataclasses.replace(compiled, rules=rules)


def _refuse(pairs: int, seconds: float, limits: Limits) -> None:
    if pairs > limits.exact_state_limit:
        raise BattleInputError(
            f"battle too large to solve exactly ({pairs:,} state pairs, limit "
            f"{limits.exact_state_limit:,}); use --method mc for Monte Carlo")
    if seconds > limits.max_exact_seconds:
        raise BattleInputError(
            f"battle too large to solve exactly (about {seconds:.2g} s of work, limit "
            f"{limits.max_exact_seconds:g} s); use --method mc for Monte Carlo")


def _check_win_values(compiled, seconds: float, limits: Limits) -> None:
    """--retreat-below's table, --retreat-air-loss's (or the optimal retreat's), refused from
    their size and estimated work before any of it is built."""
    pairs = compiled.attacker.n_states * compiled.defender.n_states
    if pairs > limits.win_value_limit or seconds > limits.max_win_value_seconds:
        sizes = (f"{pairs:,} state pairs (about {seconds:.2g} s of work; limits "
                 f"{limits.win_value_limit:,} pairs, {limits.max_win_value_seconds:g} s)")
        if compiled.objective is not None:
            raise BattleInputError(
                f"--retreat optimal weighs retreating against fighting on at every state of "
                f"the battle, and this battle has {sizes}: too large for the optimal retreat "
                "(Monte Carlo plays only a policy the exact solver found); use a fixed "
                "retreat option")
        if compiled.retreat_below is None:
            raise BattleInputError(
                f"--retreat-air-loss needs the exact chance of losing every aircraft from "
                f"every state, and this battle has {sizes}; use another retreat option")
        raise BattleInputError(
            f"--retreat-below needs the exact win probability of every state, and this "
            f"battle has {sizes}; use another retreat option")


def choose(compiled, method: str = "auto", trials: int = 1, rounds_distribution: bool = False,
           limits: Limits = LIMITS, *, row_sweep: bool = True, merge_blocks: bool = True,
           two_phase: bool = True, sea_walk: bool = True, pruning: bool = True,
           seconds: float | None = None, kernels: KernelState | None = None) -> SolvePlan:
    """The plan of a compiled battle (compile.CompiledBattle): method "exact", "mc" or "auto"
    (the faster of the two; exact where the battle is small enough), the Monte Carlo run's
    trials, the law of rounds; the variant keywords allow a variant (row_sweep, merge_blocks,
    two_phase, sea_walk, pruning within a budget: each where the battle takes it) or forbid
    it (tests compare each against the general path); seconds: the exact estimate where the
    caller has it (exact_seconds of the same battle and limits); kernels: the kernels' state
    the choice of compiled kernels or plain Python reads (default: the process's,
    KernelState.now).  A function of its arguments only, cheap enough for every battle of a
    batch (a few microseconds; solve_many keeps each pair of sides' plan for its call).
    BattleInputError where the battle cannot be solved by the method asked for (too big for
    exact, --retreat-below's table too big, the law of rounds with a partial amphibious
    retreat)."""
    if compiled.hit_eps != limits.hit_eps:
        raise ValueError(f"the battle's tables were cut at hit_eps {compiled.hit_eps!r}, the "
                         f"limits say {limits.hit_eps!r}: compile it with the limits' hit_eps")
    if not sea_walk:
        compiled = without_sea_walk(compiled)
    att, dfn = compiled.attacker, compiled.defender
    n_a = att.n_states
    pairs = n_a * dfn.n_states
    rules = _rule_flags(compiled.rules)
    raw = merge = None  # cost.solve_seconds: blocks one by one (what a merge is weighed on)
    if seconds is None:  # (exact_seconds, its merge kept for the plan)
        raw = seconds = cost.solve_seconds(compiled)
        merge = merges_blocks(compiled, raw, limits, merge_blocks)
        if merge:
            seconds = raw * len(merged(att)[1]) / n_a
    retreat, optimal = compiled.retreat, compiled.objective is not None
    below = (retreat is not None and retreat.below != NO_THRESHOLD
             and not optimal)  # (compiled.retreat_below is not None)
    air = retreat is not None and retreat.air_above != NO_THRESHOLD  # (retreat_air_loss)
    table_seconds = 0.0
    if below or optimal or air:
        # the optimal retreat's table (or --retreat-below's, --retreat-air-loss's: each a
        # sweep), first
        table_seconds = cost.win_values_seconds(compiled) * (2 if below and air else 1)
        _check_win_values(compiled, table_seconds, limits)
    tables = below or air  # (--retreat-below's or --retreat-air-loss's: plan.win_values)
    if rounds_distribution and att.has_stayers:  # (compiled.has_partial_retreat)
        raise BattleInputError(
            "the exact law of rounds is not available with partial amphibious retreats; "
            "use --method mc")
    mc_seconds = cost.monte_carlo_seconds(compiled, trials, limits)
    strict = method == "exact" and limits.exact_only_where_auto
    if strict:
        method = "auto"
    rounds_bins = ROUNDS_BINS if rounds_distribution else 1
    table = (0, 0) if tables or optimal else compact_table(compiled, limits)
    work_limit, fallback = 0, False
    if table[0] and method != "mc":
        # a compact table: solved within a work limit; auto takes Monte Carlo past it
        limit = limits.max_exact_seconds
        if method == "auto":
            limit = max(limits.auto_compact_seconds, mc_seconds)
        work_limit, fallback = int(limit * limits.work_rate), method == "auto" and not strict
        method = "exact"
    elif method == "auto":
        weighed = mc_seconds
        if pairs >= limits.prune_pairs:
            # a big battle: Monte Carlo's trials slow down with its size (the rates are a
            # small battle's) and the exact answer has no noise
            weighed = max(weighed, limits.auto_big_seconds)
        method = "exact" if (seconds <= weighed and pairs <= limits.exact_state_limit
                             and seconds + table_seconds <= limits.max_exact_seconds) else "mc"
        if strict and method == "mc":
            raise ExactRefused("battle too large to solve exactly here (method auto would use "
                               "Monte Carlo); use method mc or auto")
    fields = _PLAN_DEFAULTS.copy()
    fields.update(method=method, seconds=seconds, mc_seconds=mc_seconds, trials=trials,
                  hit_eps=compiled.hit_eps, side_builders=(att.builder, dfn.builder),
                  threads=threads.thread_count(), row_sweep=row_sweep, two_phase=two_phase,
                  sea_walk=sea_walk, rounds_bins=rounds_bins, limits=limits)
    if method == "exact":
        if not table[0]:
            _refuse(pairs, seconds + table_seconds, limits)
        if pruning and pairs >= limits.prune_pairs:  # pruning within a budget
            fields.update(prune_eps=limits.prune_state_eps, tail_eps=limits.prune_tail_eps,
                          budget=limits.prune_budget)
        if merge is None:  # (not weighed yet: the caller gave the estimate)
            merge = merges_blocks(compiled, raw, limits, merge_blocks)
        entries = ((SOLVE_COMPACT if table[0] else SOLVE_WALK_BLOCKS
                    if rules[RU_SIMPLE] and not (rules[RU_BOMBARD]
                                                 and len(compiled.bombardment.pmf) > 1)
                    else SOLVE_BLOCKS),)  # (exact_entry)
        if tables:
            entries += (WIN_VALUES,)
        if optimal:
            entries += (DECIDE_VALUES,)
        kernels = (KernelState.now(entries) if kernels is None else kernels).compiles(
            seconds + table_seconds, limits, entries)
        fields.update(merge_blocks=merge, table=table, eps=limits.transition_eps,
                      state_eps=limits.state_eps, joint=pairs <= limits.joint_limit,
                      compiled=kernels,
                      per_block_rows=(kernels and len(att.blocks) > 1
                                      and seconds > limits.parallel_seconds and not merge),
                      short=seconds < limits.short_seconds, work_limit=work_limit,
                      fallback=fallback)
    else:
        fields["compiled"] = True
    if tables:
        fields.update(win_values=True, win_values_seconds=table_seconds)
    if optimal:
        fields.update(decide=True, decide_seconds=table_seconds)
    plan = object.__new__(SolvePlan)  # (SolvePlan.of's, its dict made here)
    object.__setattr__(plan, "__dict__", fields)
    return plan


_RULE_FLAGS: dict = {}  # id of a round-rule vector -> (the vector, its values as ints)


def _rule_flags(rules) -> tuple:
    """A round-rule vector's values as Python ints (compared many times a choice; the vector
    of a lane's battles is one array: kept by its identity, with it)."""
    found = _RULE_FLAGS.get(id(rules))
    if found is not None and found[0] is rules:
        return found[1]
    flags = tuple(rules.tolist())
    if len(_RULE_FLAGS) >= 1024:
        _RULE_FLAGS.clear()
    _RULE_FLAGS[id(rules)] = (rules, flags)
    return flags


def exact_view(compiled, plan: SolvePlan):
    """The battle as the exact solver of a plan takes it (its sea walk or not)."""
    return compiled if plan.sea_walk else without_sea_walk(compiled)

