"""Independent, slow, obviously-correct references for the DECISIONS of a battle (issue 31).

Like ``tests/reference.py`` (land) and ``tests/sea_reference.py`` (sea), on top of which it is
written, this module imports nothing of the ``battlecalc`` package: the battles are fought by
those two references' own rule code (their casualty choice, fire laws, end checks, AA fire,
bombardment, submerging) and this module adds the choices a player makes, solved exactly with
``fractions.Fraction`` by plain backward induction over the enumerated states.  Readability is
preferred over speed everywhere.  docs/decisions-research.md has the rules findings (with
their sources) that the choices below follow.

It provides:

* ``optimal_land(edition, attacker, defender, *, objective, territory_value, **battle)`` --
  the attacker's optimal retreat in a land battle (amphibious assaults included).
* ``optimal_sea(edition, attacker, defender, *, objective, attacker_submerge,
  defender_submerge, retreat, **battle)`` -- the attacker's optimal retreat at sea, and each
  side's submerge decisions either fixed (a policy of sea_reference) or ``"optimal"``.
* ``exact_sea_retreat(edition, attacker, defender, *, retreat_after, retreat_when_left,
  strafe, retreat_below, **battle)`` -- sea_reference extended with the fixed retreat
  policies battlecalc offers at sea (sea_reference has none), the same sea game with the
  attacker's retreat fixed instead of optimal.
* ``scramble_choices``, ``scramble_table``, ``best_scramble`` -- 1940-2e scramble: the sea
  battle for each force the defender may scramble, and the defender's best choice.
* ``kamikaze_allocations``, ``kamikaze_table``, ``best_kamikaze`` -- 1940-2e kamikaze
  strikes before a sea battle: every way to place the tokens, and the defender's best.
* ``decide_sea_1940`` -- scramble, then kamikaze, then the battle, each decided.

Objectives (``objective=``), always from the ATTACKER's side
============================================================

* ``"tuv"`` (default) -- expected TUV swing = defender's IPC loss - attacker's IPC loss
  (land and sea, as the references count IPC: a revised AA gun is never lost, a battleship
  that ends damaged costs nothing);
* ``"win"`` -- P(attacker_win);
* ``"takes"`` -- P(takes_territory) (land only);
* ``"value"`` -- TUV swing + ``territory_value`` x P(takes_territory) (land only: a sea zone
  is never taken; ``takes`` and ``value`` raise ValueError at sea).

Every objective is a linear function of a state's "value vector" (the expected outcome
indicators, final unit counts, ...), so each decision compares two vectors by it.

The game-theoretic model
========================

A battle with decisions is a sequential, perfect-information, zero-sum stochastic game: the
attacker MAXIMISES the objective, the defender MINIMISES the same objective (for ``tuv`` this
is exactly the zero-sum game of the TUV swing; for ``win``, ``takes`` and ``value`` it assumes
an adversarial defender).  A side whose choice is given as a fixed policy instead simply
follows it, so "the attacker optimizes given the defender's fixed policy" is the same
solver with ``defender_submerge`` fixed.  Decisions are taken one at a time, each knowing
all earlier ones, in the order the rules (and TripleA) ask them:

* before the battle (1940-2e sea only): the defender's scramble, then the kamikaze targets
  (both the defender's, with no dice in between, so their order does not change the result);
* at the start of every round (sea, 1942-2e / aa50 / 1940-2e; Revised: from the second round
  on, which is its end-of-round submerge; never in Classic): the attacker's submerge choice,
  then the defender's (each only with subs in the battle and no enemy destroyer; all of a
  side's subs submerge together, as battlecalc does);
* at the end of every round (never before round 1): the attacker's retreat, asked FIRST at a
  round boundary (before the submerge choices) and, if a submerge changed the battle, once
  more after them -- where battlecalc asks its fixed policies too (kernels/exact.py ``_enter``
  re-enters the pair a submerge moved to).

Stationarity and self-loops.  A round in which nothing changes leads back to the same units;
only "no round fought yet" versus "at least one" matters to the rules (retreat is allowed
from round 1 on), so a state is (units, min(rounds, 1)) -- with a fixed ``retreat_after`` R,
min(rounds, R) as in the land reference.  At a state where every side keeps to "fight on, do
not submerge", the round's "nothing changes" part q is summed as a geometric series (divide
by 1 - q).  For the decisions this is exact: with X = (sum of the other outcomes) / (1 - q)
the value of "everybody keeps fighting from here", the choices made by comparing each option
with X are those of the game's unique fixed point (the chain of max / min choices is
monotone with slope 0 or 1 in X, and X -> C + q f(X) is a contraction), so the optimal policy
is stationary and found in one pass.

Ties: the attacker retreats only if stopping is STRICTLY better than going on, and a side
submerges only if that is strictly better for it; otherwise it fights on with its subs.

Retreat rules (what the attacker may do)
========================================

* Land: the land reference's rules (``_Setup.retreat_split``): after each round, all units
  withdraw; in an amphibious assault landed units never retreat (1942-2e, aa50, 1940-2e:
  aircraft and overland units may; revised: aircraft only; classic: nothing), and a retreat
  that leaves units behind is a partial retreat after which the stayers fight on alone, with
  no further decision.  The attacker chooses between fighting on with everything and that
  retreat (not among subsets of what may withdraw).
* Sea: after each round the whole attacking force still in the battle withdraws (outcome
  ``retreat``, submerged subs are survivors), EXCEPT where the lone-transport rule holds
  (revised, classic: an attacker left with transports only must take one round of fire, then
  retreats; sea_reference's ``_lone_attacking_transports``): no retreat is offered there.
  (battlecalc's fixed policies currently let such transports withdraw at once; see
  docs/decisions-research.md.)
* The defender never retreats in any edition (1940-2e included: TripleA has no defensive
  general retreat, only DefensiveSubsRetreat; its Global 1940 2E notes say defenders can never
  retreat); its only in-battle choice is submerging.

Results
=======

The result dicts have the keys of ``reference.exact_land`` / ``sea_reference.exact_sea``
(outcome probabilities, IPC losses, tuv_swing, mean_rounds, survivors), as Fractions, under
the optimal (or given) choices, plus ``objective``, ``value`` (the objective under those
choices) and the policy (see each function).
"""

from __future__ import annotations

from fractions import Fraction

import reference as land

OBJECTIVES = ("tuv", "win", "takes", "value")
SEA_OBJECTIVES = ("tuv", "win")
OPTIMAL = "optimal"
RETREAT, PRESS_ON = "retreat", "press on"


def _check_objective(objective, territory_value, at_sea):
    allowed = SEA_OBJECTIVES if at_sea else OBJECTIVES
    if objective not in allowed:
        where = "at sea (a sea zone is never taken)" if at_sea and objective in OBJECTIVES else ""
        raise ValueError(f"unknown objective {objective!r} {where}; expected one of {allowed}")
    if isinstance(territory_value, bool) or not isinstance(territory_value, (int, Fraction)):
        raise ValueError(f"territory_value must be an int or a Fraction, not {territory_value!r}")
    if territory_value and objective != "value":
        raise ValueError("territory_value counts only with objective 'value'")


def _named(units, counts):
    """A count tuple as ((unit, count), ...) for count > 0, in the reference's unit order."""
    return tuple((u, n) for u, n in zip(units, counts, strict=True) if n)


# ---------------------------------------------------------------------------
# Land: the attacker's optimal retreat
# ---------------------------------------------------------------------------

_LAND_BATTLE_KEYWORDS = ("heavy_bombers", "jets", "landing", "bombard", "combined_bombardment",
                         "attacker_ool", "defender_ool", "keep_land", "aa_last", "attacker_tech",
                         "defender_tech", "dice")


def _land_setup(edition, attacker, defender, battle):
    unknown = set(battle) - set(_LAND_BATTLE_KEYWORDS)
    if unknown:
        raise ValueError(f"unknown or retreat keywords {sorted(unknown)}: the retreat is the "
                         "decision solved here")
    options = dict(heavy_bombers=False, jets=False, landing=None, bombard=None,
                   combined_bombardment=False, attacker_ool=None, defender_ool=None,
                   keep_land=0, aa_last=False, attacker_tech=(), defender_tech=(),
                   dice=land.STANDARD)
    options.update(battle)
    return land._Setup(edition, attacker, defender, retreat_after=None, retreat_when_left=None,
                       retreat_when_only_air=False, strafe=None, retreat_below=None, **options)


def _land_objective(setup, objective, territory_value):
    """The objective as a linear function of a land value vector."""
    n = len(land.UNITS)

    def value(vec):
        if objective == "win":
            return vec[land.WIN]
        if objective == "takes":
            return vec[land.TAKES]
        att_final = [vec[land.ATT_AT + i] for i in range(n)]
        dfn_final = [vec[land.DFN_AT + i] for i in range(n)]
        swing = (land._ipc_loss(setup.edition, setup.dfn0, dfn_final)
                 - land._ipc_loss(setup.edition, setup.att0, att_final))
        if objective == "value":
            return swing + territory_value * vec[land.TAKES]
        return swing

    return value


class _LandGame(land._ExactSolver):
    """The land reference's solver with the retreat decided at every node by comparison.

    node(att, dfn, rounds): at the end of round ``rounds`` >= 1, before any partial retreat
    and with something that may withdraw, the attacker compares the vector of retreating
    (a terminal "retreat", or the stayers fighting on alone after a partial retreat) with the
    vector of fighting on (``fight``: the next round, the self-loop summed up on the
    assumption that the same choice is made again, see the module docstring) and takes the
    better by ``objective``; fighting on wins ties.  ``decisions`` records every choice made:
    (att, dfn) -> True (retreat) / False.
    """

    def __init__(self, setup, objective):
        super().__init__(setup)
        self.objective = objective
        self.decisions = {}

    def node(self, att, dfn, rounds, withdrawn=None):
        s = self.s
        key = (att, dfn, s.round_key(rounds), withdrawn)
        if key in self.node_memo:
            return self.node_memo[key]
        outcome = s.classify(att, dfn)
        if outcome is not None:
            vec = self.terminal_vector(outcome, att, dfn, withdrawn)
        elif withdrawn is not None or rounds < 1:
            vec = self.fight(att, dfn, rounds, withdrawn)
        else:
            stay, go = s.retreat_split(att)
            if not land._has_units(s.edition, go):
                vec = self.fight(att, dfn, rounds)  # nothing may withdraw
            else:
                on = self.fight(att, dfn, rounds)
                if land._has_units(s.edition, stay):
                    off = self.node(stay, dfn, rounds, go)  # partial retreat
                else:
                    off = self.terminal_vector("retreat", att, dfn)
                retreat = self.objective(off) > self.objective(on)
                self.decisions[(att, dfn)] = retreat
                vec = off if retreat else on
        self.node_memo[key] = vec
        return vec


def _land_result(setup, total):
    """exact_land's result dict from a total value vector."""
    edition, n = setup.edition, len(land.UNITS)
    att_final = tuple(total[land.ATT_AT + i] for i in range(n))
    dfn_final = tuple(total[land.DFN_AT + i] for i in range(n))
    att_loss = Fraction(land._ipc_loss(edition, setup.att0, att_final))
    dfn_loss = Fraction(land._ipc_loss(edition, setup.dfn0, dfn_final))
    result = {name: total[i] for i, name in enumerate(land.ALL_OUTCOMES)}
    result.update({
        "takes_territory": total[land.TAKES],
        "attacker_ipc_loss": att_loss,
        "defender_ipc_loss": dfn_loss,
        "tuv_swing": dfn_loss - att_loss,
        "mean_rounds": total[land.ROUNDS],
        "attacker_survivors": {
            k: Fraction(v)
            for k, v in land._reported_survivors(edition, att_final, setup.att_names).items()},
        "defender_survivors": {
            k: Fraction(v)
            for k, v in land._reported_survivors(edition, dfn_final, setup.dfn_names).items()},
    })
    return result


def land_objective_of(result, objective="tuv", territory_value=0):
    """The objective of an exact_land-style result dict (works for any fixed policy's too)."""
    if objective == "win":
        return result["attacker_win"]
    if objective == "takes":
        return result["takes_territory"]
    if objective == "value":
        return result["tuv_swing"] + territory_value * result["takes_territory"]
    return result["tuv_swing"]


def optimal_land(edition, attacker, defender, *, objective="tuv", territory_value=0, **battle):
    """The attacker's optimal retreat in a land battle, by backward induction.

    ``battle``: exact_land's keywords except the retreat ones (``landing``, ``bombard``,
    orders of losses, technologies, ``dice``, ...).  Returns exact_land's result dict under
    the optimal policy, plus:

    * ``objective``, ``value`` -- the objective's name and its value under the policy;
    * ``never_value``, ``gain`` -- the objective never retreating, and value - never_value;
    * ``policy`` -- {(attacker units, defender units): "retreat" | "press on"} for every
      end-of-round state where the attacker may retreat and the solver weighed it (the states
      reachable under the policy, and those reached only by the option not taken); each side
      as ((unit, count), ...) in the land reference's unit order, counting the units left
      (the landed and overland units of a type together: what may withdraw follows from the
      counts, casualties being taken from the landed units first).  The same state is never
      decided two ways: rounds fought no longer matter past the first.
    """
    _check_objective(objective, territory_value, at_sea=False)
    setup = _land_setup(edition, attacker, defender, battle)
    objective_fn = _land_objective(setup, objective, territory_value)
    game = _LandGame(setup, objective_fn)
    total = game.total()
    result = _land_result(setup, total)
    never = land._ExactSolver(setup).total()
    policy = {(_named(land.UNITS, a), _named(land.UNITS, d)): RETREAT if r else PRESS_ON
              for (a, d), r in game.decisions.items()}
    result.update({
        "objective": objective,
        "value": objective_fn(total),
        "never_value": objective_fn(never),
        "gain": objective_fn(total) - objective_fn(never),
        "policy": policy,
    })
    return result
