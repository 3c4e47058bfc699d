"""The defender's reactions to a sea attack, before any battle (issue 31; 1940 2E): scramble and
kamikaze, each the defender's choice, solved by enumeration with the battle.

* **Scramble** (rule flag ``scramble``: the most aircraft an air base sends, 1940 2E: 3).  The
  defender's units with ``can_scramble`` (fighters, tactical bombers) on an operative air base
  next to the attacked sea zone (``scramble_from``; a list of armies, or armies separated by
  ``;``, for several bases, each sending at most the flag's count) may join the battle; every
  force the bases may send is solved, and the defender sends the one worst for the attacker by
  the battle's objective (``optimize``; ties: the fewest aircraft, then the fewest tactical
  bombers), or the one given (``scramble``).
* **Kamikaze** (rule flag ``kamikaze``: a token's hit value, 1940 2E: 2).  Before the battle
  each token the defender spends strikes one of the attacker's surface warships (its sea units
  that are neither transports nor submarines: TripleA's default targets), all placed before any
  die is rolled: one die a token, a hit on the flag's value or less (low luck: the tokens on a
  unit as one group, a sure hit per full die of strength); hits sink a unit once they reach the
  hit points it has left, else damage it (a battleship or carrier stays damaged).  Every way to
  place the tokens on units is solved (``kamikaze_targets`` gives one), the battle fought from
  the law of the attacker's force after the strikes (compile: the attacker's start blocks),
  IPC counted from the force before them; strikes are not a round.

Scramble, then kamikaze (TripleA's BattleDelegate.start): both are the defender's, with no die
between them, so every combination is weighed and the worst for the attacker taken.  The
sources and the choices made where they differ: docs/rules.md, docs/decisions-research.md.

This module is the light part (choices, allocations, the strike law, reading the options, the
battles weighed), imported by battlecalc.spec and battlecalc.compile; battlecalc.api solves
the battles (api._reactions) and takes the defender's choice (best_row).
"""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any

from .army import format_army
from .dice import binomial_law, hit_ratio
from .errors import BattleInputError, quoted
from .options import is_bool

MAX_REACTIONS = 500  # battles a reaction table may solve (scramble choices x allocations)
TIE = 1e-9  # the defender's best: the first choice within this of the lowest objective


def scramblers(ruleset) -> tuple[str, ...]:
    """The units that may scramble, in the edition's order (can_scramble)."""
    return tuple(n for n, u in ruleset.units.items() if u.can_scramble)


def surface_warships(ruleset) -> tuple[str, ...]:
    """What a kamikaze token may strike: sea units that are neither transports nor
    submarines, in the edition's order."""
    return tuple(n for n, u in ruleset.units.items()
                 if u.domain == "sea" and not u.transport and not u.submarine
                 and u.can_be_casualty)


class TooManyChoices(BattleInputError):
    """An enumeration past its cap, found before it was listed (`count`: how many there are,
    or None where only "more than the cap" is known)."""

    def __init__(self, message: str, count: int | None = None):
        super().__init__(message)
        self.count = count


def _base_forces(base: dict[str, int], most: int):
    """The forces one air base may send, lazily: {unit: count} of at most `most` aircraft in
    all, each type at most what the base holds ({} first).  Never more than C(most + k, k)
    of them for k types (a base of 300 of each of three types: 20 forces of at most 3, not
    the 301**3 counts there are)."""
    names = [n for n in base if base[n] > 0]

    def place(i: int, left: int, chosen: dict[str, int]):
        if i == len(names):
            yield dict(chosen)
            return
        name = names[i]
        for k in range(min(base[name], left) + 1):
            if k:
                chosen[name] = k
            yield from place(i + 1, left - k, chosen)
            chosen.pop(name, None)

    return place(0, most, {})


def count_base_forces(base: dict[str, int], most: int) -> int:
    """How many forces _base_forces lists, counted (a bounded knapsack of counts: ways[s] =
    the forces of s aircraft), not listed."""
    ways = [1] + [0] * most
    for n in base.values():
        new = [0] * (most + 1)
        for total, w in enumerate(ways):
            if w:
                for k in range(min(n, most - total) + 1):
                    new[total + k] += w
        ways = new
    return sum(ways)


def scramble_choices(bases: tuple[dict[str, int], ...], most: int,
                     order: tuple[str, ...] = (), limit: int | None = None
                     ) -> list[dict[str, int]]:
    """Every force the air bases (a tuple of what each holds) may scramble (at most `most`
    aircraft a base), fewest aircraft first, then in the order of the units (`order`, the
    edition's, else as found) left out last ({} first: no scramble).  Aircraft of a type are
    alike: a force sent from several bases in more than one way is one choice.

    `limit`: TooManyChoices as soon as there are more than `limit` (each base's forces are
    counted before they are listed, and the forces of the bases so far are choices of their
    own: the set only grows), so a refusal costs at most about `limit` squared steps."""
    names = list(dict.fromkeys([*order, *(n for base in bases for n in base)]))
    forces: dict[tuple, dict[str, int]] = {(): {}}
    for base in bases:
        if limit is not None and count_base_forces(base, most) > limit:
            raise TooManyChoices(f"more than {limit:,} forces to scramble")
        sent = list(_base_forces(base, most))
        grown: dict[tuple, dict[str, int]] = {}
        for f in forces.values():
            for c in sent:
                m = {n: f.get(n, 0) + c.get(n, 0) for n in names if f.get(n, 0) + c.get(n, 0)}
                grown.setdefault(tuple(sorted(m.items())), m)
                if limit is not None and len(grown) > limit:
                    raise TooManyChoices(f"more than {limit:,} forces to scramble")
        forces = grown
    return sorted(forces.values(), key=lambda c: (sum(c.values()),
                                                  [-c.get(n, 0) for n in names]))


def can_be_sent(chosen: dict[str, int], bases: tuple[dict[str, int], ...], most: int) -> bool:
    """Whether the bases can send `chosen` together, each at most `most` aircraft and of each
    type what it holds: a flow of the chosen aircraft from their types to the bases (augmenting
    paths, one aircraft at a time; at most `most` x bases of them), never listing the
    forces."""
    types = [n for n in chosen if chosen[n] > 0]
    flow = [[0] * len(bases) for _ in types]  # aircraft of type t sent from base b
    sent = [0] * len(bases)

    def augment(t: int, seen: set[int]) -> bool:
        for b, base in enumerate(bases):
            if b in seen or flow[t][b] >= base.get(types[t], 0):
                continue
            seen.add(b)
            if sent[b] < most:
                flow[t][b] += 1
                sent[b] += 1
                return True
            for u in range(len(types)):  # move one of type u from b elsewhere
                if u != t and flow[u][b] > 0:
                    flow[u][b] -= 1
                    if augment(u, seen):
                        flow[t][b] += 1
                        return True
                    flow[u][b] += 1
        return False

    return all(augment(t, set()) for t in range(len(types)) for _ in range(chosen[types[t]]))


def _partitions(n: int, parts: int, largest: int | None = None):
    """The ways to write n as a sum of at most `parts` positive ints, largest first."""
    largest = n if largest is None else largest
    if n == 0:
        yield ()
        return
    if parts == 0:
        return
    for first in range(min(n, largest), 0, -1):
        for rest in _partitions(n - first, parts - 1, first):
            yield (first, *rest)


def partition_counts(tokens: int, parts: int) -> list[int]:
    """p[k], k = 0..tokens: the partitions of k into at most `parts` parts (the recurrence
    p(k, c) = p(k, c - 1) + p(k - c, c): parts of at most c, by conjugation), counted."""
    p = [1] + [0] * tokens  # c = 0: only the empty partition of 0
    for c in range(1, min(parts, tokens) + 1):
        for k in range(c, tokens + 1):
            p[k] += p[k - c]
    return p


def count_allocations(attacker: dict[str, int], tokens: int, targets: tuple[str, ...]) -> int:
    """How many allocations `allocations` lists, counted (each type's tokens a partition over
    at most its count, the types' counts convolved), not listed: the partitions of 100 tokens
    over a hundred battleships are 190,569,292."""
    ways = [1] + [0] * tokens  # ways[k]: placings of k tokens on the types so far
    for unit in targets:
        count = attacker.get(unit, 0)
        if count <= 0:
            continue
        p = partition_counts(tokens, count)
        ways = [sum(ways[j] * p[k - j] for j in range(k + 1)) for k in range(tokens + 1)]
    return ways[tokens]


def allocations(attacker: dict[str, int], tokens: int, targets: tuple[str, ...],
                limit: int | None = None) -> list[tuple]:
    """Every way to place `tokens` strikes on the attacker's units of the types `targets`:
    tuples of (unit, tokens on one unit of it), one pair a unit struck (the units of a type
    being alike, a type's tokens are a partition over at most its count); every token placed.
    `limit`: TooManyChoices, before any is listed, where there are more (count_allocations)."""
    if limit is not None:
        count = count_allocations(attacker, tokens, targets)
        if count > limit:
            raise TooManyChoices(f"{count:,} placings of the kamikaze tokens", count)
    types = [(u, attacker[u]) for u in targets if attacker.get(u, 0) > 0]
    found: list[tuple] = []

    def place(i: int, left: int, chosen: list) -> None:
        if i == len(types):
            if left == 0:
                found.append(tuple(chosen))
            return
        unit, count = types[i]
        for k in range(left + 1):
            for parts in _partitions(k, count):
                place(i + 1, left - k, chosen + [(unit, t) for t in parts])

    place(0, tokens, [])
    return found


def allocation_text(allocation: tuple) -> str:
    """An allocation as kamikaze_targets reads it: ``"battleship:2, cruiser:1"``."""
    return ", ".join(f"{u}:{t}" for u, t in allocation) or "none"


def strike_law(unit, tokens: int, hit: int, die: int, low_luck: bool) -> dict[str, float]:
    """What `tokens` strikes do to one unit: {"sunk" | "damaged" | "intact": probability}.
    Standard dice: a die a token, a hit on `hit` or less; low luck: the tokens' strength
    hit x tokens, a sure hit per full die and one die for the rest.  Hits sink the unit once
    they reach its hit points (unit.hp), else damage it."""
    if low_luck:
        sure, rest = divmod(hit * tokens, die)
        hits = {sure: 1 - rest / die, sure + 1: rest / die}
    else:
        hits = dict(enumerate(binomial_law(tokens, *hit_ratio(hit, 1, die)).tolist()))
    law: dict[str, float] = {}
    for h, ph in hits.items():
        if ph == 0:
            continue
        fate = "sunk" if h >= unit.hp else "damaged" if h > 0 else "intact"
        law[fate] = law.get(fate, 0.0) + ph
    return law


def after_strikes(ruleset, attacker: dict[str, int], allocation: tuple, low_luck: bool
                  ) -> list[tuple[float, dict[str, int]]]:
    """The law of the attacker's force after the strikes of `allocation`: [(probability,
    {unit: count})], each force once, in the order first met."""
    law = {tuple(attacker.items()): 1.0}
    units, hit, die = ruleset.units, ruleset.flags["kamikaze"], ruleset.die  # (Ruleset.die)
    for name, tokens in allocation:
        fates = strike_law(units[name], tokens, hit, die, low_luck)
        new: dict[tuple, float] = {}
        for force, p in law.items():
            for fate, q in fates.items():
                counts = dict(force)
                if fate != "intact":
                    counts[name] -= 1
                if fate == "damaged":
                    form = units[name].damaged_form
                    counts[form] = counts.get(form, 0) + 1
                key = tuple((n, counts[n]) for n in units if counts.get(n))
                new[key] = new.get(key, 0.0) + p * q
        law = new
    return [(p, dict(force)) for force, p in law.items()]


# ---------------------------------------------------------------------------------------------
# Reading the options (battlecalc.spec.make_battle)


@dataclasses.dataclass(frozen=True)
class Reactions:
    """A sea battle's reactions, checked: the aircraft on the air bases (scramble_from, all of
    them, {}: none; bases, what each holds), what is scrambled (None: the defender's best; {}:
    nothing), the kamikaze tokens and their targets (None: the defender's best)."""

    scramble_from: dict[str, int] = dataclasses.field(default_factory=dict)
    scramble: dict[str, int] | None = None
    kamikaze: int = 0
    kamikaze_targets: tuple | None = None
    bases: tuple = ()  # (dict of each base's aircraft, ...): () for none

    def __bool__(self) -> bool:
        return bool(self.scramble_from) or self.scramble is not None or self.kamikaze > 0

    @property
    def choosing(self) -> bool:
        """Whether the defender chooses anything (else everything is given)."""
        return ((bool(self.scramble_from) and self.scramble is None)
                or (self.kamikaze > 0 and self.kamikaze_targets is None))


NO_REACTIONS = Reactions()


def check_reactions(ruleset, sea: bool, attacker: dict[str, int], scramble_from, scramble,
                    kamikaze, kamikaze_targets, army_counts) -> Reactions:
    """The Reactions of simulate's scramble_from, scramble, kamikaze and kamikaze_targets
    (army_counts: spec.army_counts, which reads an army)."""
    tokens = 0 if kamikaze is None else _tokens(kamikaze)
    # (each value read first: a wrong type is named before what the battle allows)
    bases = _bases(scramble_from, ruleset, army_counts)
    base: dict[str, int] = {}
    for one in bases:
        for name, n in one.items():
            base[name] = base.get(name, 0) + n
    base = {n: base[n] for n in ruleset.units if n in base}
    chosen = None
    if isinstance(scramble, str) and scramble.strip().lower() in ("best", "none"):
        chosen = {} if scramble.strip().lower() == "none" else None
    elif scramble is not None:
        chosen = army_counts(scramble, ruleset, "scramble")
    if kamikaze_targets is not None and not (
            isinstance(kamikaze_targets, str) or (isinstance(kamikaze_targets, (list, tuple))
                                                  and all(isinstance(i, str)
                                                          for i in kamikaze_targets))):
        raise BattleInputError(f"kamikaze_targets must be text such as \"battleship:2, "
                               f"cruiser:1\", got {quoted(kamikaze_targets)}")
    given = [name for name, value in (("scramble_from", scramble_from), ("scramble", scramble),
                                      ("kamikaze_targets", kamikaze_targets))
             if value is not None] + (["kamikaze"] if tokens else [])
    if not given:
        return NO_REACTIONS
    if not sea:
        raise BattleInputError(f"{given[0]} applies to sea battles (a scramble and kamikaze "
                               "strikes react to an attack on a sea zone)")
    most = ruleset.flags["scramble"]
    if (scramble_from is not None or scramble is not None) and not most:
        raise BattleInputError(f"{ruleset.id} has no scramble (the rule flag scramble is 0)")
    if (tokens or kamikaze_targets is not None) and not ruleset.flags["kamikaze"]:
        raise BattleInputError(f"{ruleset.id} has no kamikaze strikes (the rule flag kamikaze "
                               "is 0)")
    able = scramblers(ruleset)
    _only(base, able, "scramble_from", "cannot scramble")
    if chosen:
        _only(chosen, able, "scramble", "cannot scramble")
        if sum(chosen.values()) > most * max(len(bases), 1):
            raise BattleInputError(f"scramble: an air base scrambles at most {most} aircraft, "
                                   f"got {quoted(format_army(chosen))}"
                                   + (f" from {len(bases)} bases" if len(bases) > 1 else ""))
        if base and any(n > base.get(u, 0) for u, n in chosen.items()):
            raise BattleInputError(f"scramble: {format_army(chosen)} is more than the air base "
                                   f"holds ({format_army(base)})")
        if len(bases) > 1 and not can_be_sent(chosen, bases, most):
            raise BattleInputError(f"scramble: {format_army(chosen)} cannot be sent from the "
                                   f"bases ({'; '.join(format_army(b) for b in bases)}), "
                                   f"each sending at most {most}")
    targets = surface_warships(ruleset)
    allocation = None
    if kamikaze_targets is not None:
        if not tokens:
            raise BattleInputError("kamikaze_targets needs kamikaze (the tokens spent)")
        allocation = parse_targets(kamikaze_targets, ruleset, attacker, tokens, targets)
    elif tokens and not any(attacker.get(u) for u in targets):
        raise BattleInputError(
            f"kamikaze: the attacker has no surface warship to strike ({', '.join(targets)})")
    return Reactions(base, chosen, tokens, allocation, bases)


MAX_BASES = 20  # air bases within reach of one sea zone (1940 2E: 4 at most)


def _bases(scramble_from: Any, ruleset, army_counts) -> tuple[dict[str, int], ...]:
    """scramble_from read: an army (one base), or a list of armies or armies separated by
    ``;`` (one a base); the bases that hold no aircraft left out."""
    if scramble_from is None:
        return ()
    if isinstance(scramble_from, str) and ";" in scramble_from:
        parts = scramble_from.split(";")
    elif isinstance(scramble_from, list | tuple):
        parts = list(scramble_from)
    else:
        parts = [scramble_from]
    if len(parts) > MAX_BASES:
        raise BattleInputError(f"scramble_from: {len(parts)} air bases (at most {MAX_BASES})")
    bases = tuple(army_counts(p, ruleset, "scramble_from") for p in parts)
    return tuple(b for b in bases if b)


MAX_TOKENS = 100


def _tokens(value: Any) -> int:
    """kamikaze: a whole number 0..MAX_TOKENS (an int or numpy int; not a bool)."""
    if is_bool(value) or not isinstance(value, numbers.Integral):
        raise BattleInputError(f"kamikaze must be a whole number, got {quoted(value)}")
    if not 0 <= value <= MAX_TOKENS:
        raise BattleInputError(f"kamikaze must be between 0 and {MAX_TOKENS}, got "
                               f"{quoted(int(value))}")
    return int(value)


def _only(army: dict[str, int], allowed: tuple[str, ...], name: str, what: str) -> None:
    for unit in army:
        if unit not in allowed:
            raise BattleInputError(f"{name}: {unit} {what}; only {', '.join(allowed)} do")


def parse_targets(value: Any, ruleset, attacker: dict[str, int], tokens: int,
                  targets: tuple[str, ...]) -> tuple:
    """kamikaze_targets: ``"battleship:2, cruiser:1"`` (or a list of such items), each item a
    unit struck and the tokens on it (a type named twice: two units of it), as an
    allocation."""
    from .army import resolve_unit_name

    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(i, str) for i in items):
        raise BattleInputError(f"kamikaze_targets must be text such as \"battleship:2, "
                               f"cruiser:1\", got {quoted(value)}")
    allocation, used = [], {}
    for item in (i.strip() for i in items):
        if not item:
            continue
        name, sep, count = item.partition(":")
        if not sep or not count.strip().isascii() or not count.strip().isdigit() \
                or int(count) < 1:
            raise BattleInputError(f"kamikaze_targets: {quoted(item)} is not UNIT:TOKENS "
                                   "(e.g. battleship:2)")
        unit = resolve_unit_name(name.strip(), ruleset)
        if unit not in targets:
            raise BattleInputError(f"kamikaze_targets: kamikaze strikes surface warships "
                                   f"({', '.join(targets)}), not {unit}")
        used[unit] = used.get(unit, 0) + 1
        if used[unit] > attacker.get(unit, 0):
            raise BattleInputError(f"kamikaze_targets: more {unit} struck than the attacker "
                                   f"has ({attacker.get(unit, 0)})")
        allocation.append((unit, int(count)))
    if sum(t for _, t in allocation) != tokens:
        raise BattleInputError(f"kamikaze_targets place {sum(t for _, t in allocation)} "
                               f"tokens, not the {tokens} of kamikaze")
    order = list(ruleset.units)
    return tuple(sorted(allocation, key=lambda a: (order.index(a[0]), -a[1])))


# ---------------------------------------------------------------------------------------------
# Solving: every combination, the defender's best


ROW_KEYS = ("attacker_win", "defender_win", "draw", "stalemate", "retreat",
            "attacker_ipc_loss", "defender_ipc_loss", "tuv_swing")


def combinations(battle) -> list[tuple[dict[str, int], tuple]]:
    """The (scramble, allocation) pairs weighed: every force the air base may send (or the
    one given, or none) by every allocation of the tokens (or the one given, or none).
    Counted before they are listed: past MAX_REACTIONS, BattleInputError at once (the
    placings counted by their partitions, the forces grown base by base until past the cap),
    nothing built."""
    r = battle.reactions
    most = battle.rules.flags["scramble"]
    n_allocs = 1
    if r.kamikaze_targets is None and r.kamikaze:
        n_allocs = count_allocations(battle.attacker, r.kamikaze,
                                     surface_warships(battle.rules))
        if n_allocs > MAX_REACTIONS:
            _too_many(n_allocs)
    if r.scramble_from:
        try:
            scrambles = scramble_choices(r.bases, most, tuple(r.scramble_from),
                                         limit=MAX_REACTIONS // n_allocs)
        except TooManyChoices:
            scrambles = None
        if scrambles is None:
            _too_many(None)
        if r.scramble is not None and r.scramble not in scrambles:
            scrambles.append(r.scramble)
    else:
        scrambles = [r.scramble or {}]
    if len(scrambles) * n_allocs > MAX_REACTIONS:
        _too_many(len(scrambles) * n_allocs)
    if r.kamikaze_targets is not None:
        allocs = [r.kamikaze_targets]
    elif r.kamikaze:
        allocs = allocations(battle.attacker, r.kamikaze, surface_warships(battle.rules),
                             limit=MAX_REACTIONS)
    else:
        allocs = [()]
    return [(s, a) for s in scrambles for a in allocs]


def _too_many(count: int | None) -> None:
    amount = f"{count:,}" if count is not None else f"more than {MAX_REACTIONS:,}"
    raise TooManyChoices(
        f"{amount} scramble and kamikaze choices to weigh (at most {MAX_REACTIONS}); give "
        "scramble or kamikaze_targets", count)


def reacted(battle, scramble: dict[str, int], allocation: tuple):
    """The battle after the reactions (scramble, allocation): the scrambled aircraft in the
    defender's force, the strikes in the attacker's start law (Battle.kamikaze_struck)."""
    defender = dict(battle.defender)
    for name, n in scramble.items():
        defender[name] = defender.get(name, 0) + n
    units = battle.rules.units
    defender = {n: defender[n] for n in units if defender.get(n)}
    return dataclasses.replace(battle, defender=defender, reactions=NO_REACTIONS,
                               kamikaze_struck=allocation)


def row(scramble: dict[str, int], allocation: tuple, result, value: float) -> dict[str, Any]:
    """A row of the reactions table: what was scrambled and struck, and the battle's odds."""
    return {"scrambled": format_army(scramble), "kamikaze_targets": allocation_text(allocation),
            **{k: getattr(result, k) for k in ROW_KEYS}, "value": value}


# the decision tables of every choice together (an optimal retreat or submerging solved for
# each): state pairs of the largest choice's battle times the choices.  392 choices of a
# battle of some 60,000 decisions took the command line to MemoryError at 2 GB and left 0.8-1.3
# GB in the server; 10,000,000 pairs is some 40 tables of the largest (4,000,000 pairs:
# solver.Limits.win_value_limit) or 300 choices of a 180 v 180-state battle
MAX_REACTION_PAIRS = 10_000_000


def check_tables(battle, pairs: list, compile_battle) -> None:
    """Where the battle decides (an optimal retreat or submerging, solved for each choice):
    BattleInputError before anything is solved where the choices' tables would hold more than
    MAX_REACTION_PAIRS state pairs together, estimated from the largest choice (the most
    aircraft scrambled, no token struck: compiled by `compile_battle`) times the choices."""
    if not (battle.retreat.optimal
            or "optimal" in (battle.attacker_submerge, battle.defender_submerge)):
        return
    largest = max((s for s, _ in pairs), key=lambda s: sum(s.values()))
    compiled = compile_battle(reacted(battle, largest, ()))
    table = compiled.attacker.n_states * compiled.defender.n_states
    if table * len(pairs) > MAX_REACTION_PAIRS:
        raise TooManyChoices(
            f"{len(pairs):,} scramble and kamikaze choices, each solving its decisions over up "
            f"to {table:,} state pairs: {table * len(pairs):,} in all (at most "
            f"{MAX_REACTION_PAIRS:,}); give scramble or kamikaze_targets, or leave the "
            "optimal retreat out")


def report(progress, done: int, total: int) -> None:
    """The choices' progress (a cancel point: a server's progress raises to stop)."""
    if progress is not None:
        progress(done, total, "scramble and kamikaze choices")


class Best:
    """The defender's choice among `pairs` as they are solved (best_row at the end), keeping
    only the results that may be it: those it may take within TIE of the lowest objective so
    far.  Every other result is dropped once its row is read (a choice's optimal-retreat
    table is tens of MB; all of them were kept)."""

    def __init__(self, reactions: Reactions, pairs: list):
        self.reactions, self.pairs = reactions, pairs
        self.rows: list[dict[str, Any]] = []
        self.kept: dict[int, Any] = {}
        self.lowest = float("inf")

    def add(self, row: dict[str, Any], result) -> None:
        index = len(self.rows)
        self.rows.append(row)
        s, a = self.pairs[index]
        r = self.reactions
        if (r.scramble is not None and s != r.scramble) or (
                r.kamikaze_targets is not None and a != r.kamikaze_targets):
            return  # (not one the defender may take)
        value = row["value"]
        if value <= self.lowest + TIE:
            self.kept[index] = result
        if value < self.lowest:
            self.lowest = value
            self.kept = {i: kept for i, kept in self.kept.items()
                         if self.rows[i]["value"] <= value + TIE}

    def chosen(self) -> tuple[int, Any]:
        """best_row's index and its result (a row within TIE of the lowest at the end was
        within TIE of the lowest when it came, and of every lowest since: it is kept)."""
        index = best_row(self.reactions, self.pairs, self.rows)
        return index, self.kept[index]


def best_row(reactions: Reactions, pairs: list, rows: list[dict[str, Any]]) -> int:
    """The row the defender takes: among the pairs it may take (every one, or those of the
    scramble and targets given), the first within TIE of the lowest objective."""
    given = [i for i, (s, a) in enumerate(pairs)
             if (reactions.scramble is None or s == reactions.scramble)
             and (reactions.kamikaze_targets is None or a == reactions.kamikaze_targets)]
    lowest = min(rows[i]["value"] for i in given)
    return next(i for i in given if rows[i]["value"] <= lowest + TIE)
