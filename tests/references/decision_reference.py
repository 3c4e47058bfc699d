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
* ``scramble_choices``, ``scramble_table`` -- 1940-2e scramble: every force the defender may
  scramble, and the sea battle with each.
* ``kamikaze_allocations``, ``kamikaze_table`` -- 1940-2e kamikaze strikes before a sea
  battle: every way to place the tokens, and the battle after each.
* ``decide_sea_1940`` -- scramble, then kamikaze, then the battle, each decided: the
  defender's best scramble and kamikaze targets (or those given) and the attacker's result
  under them, with the table of every combination weighed.
* ``play_land_policy``, ``play_sea_policy`` -- a battle whose choices follow a given table (the
  form the optimal_* functions return), played by separate code: a check of the tables.

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
* at the end of every round (never before round 1): the attacker's retreat, once a round
  boundary, BEFORE the submerge choices (TripleA: the general retreat ends round r, the
  submerges open round r + 1).  battlecalc's fixed policies are asked once more after a
  submerge (kernels/exact.py ``_enter`` re-enters the pair a submerge moved to); against a
  defender with a fixed policy that extra check gives an optimal attacker nothing (retreating
  before the submerges ends in the same state), see docs/decisions-research.md.

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
from math import comb

import reference as land
import sea_reference as sea

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


class _LandPolicyPlayer(land._ExactSolver):
    """The land reference's solver following a GIVEN policy table: at a decision state (end
    of a round >= 1, before any partial retreat, something may withdraw) the attacker
    retreats iff ``policy`` says "retreat" for it (states not in it: press on)."""

    def __init__(self, setup, policy):
        super().__init__(setup)
        self.policy = policy

    def node(self, att, dfn, rounds, withdrawn=None):
        s = self.s
        key = (att, dfn, s.round_key(rounds), withdrawn)
        if key in self.node_memo:
            return self.node_memo[key]
        outcome = s.classify(att, dfn)
        stay, go = s.retreat_split(att)
        decides = (outcome is None and withdrawn is None and rounds >= 1
                   and land._has_units(s.edition, go))
        named = (_named(land.UNITS, att), _named(land.UNITS, dfn))
        if outcome is not None:
            vec = self.terminal_vector(outcome, att, dfn, withdrawn)
        elif decides and self.policy.get(named) == RETREAT:
            vec = (self.node(stay, dfn, rounds, go) if land._has_units(s.edition, stay)
                   else self.terminal_vector("retreat", att, dfn))
        else:
            vec = self.fight(att, dfn, rounds, withdrawn)
        self.node_memo[key] = vec
        return vec


def play_land_policy(edition, attacker, defender, policy, **battle):
    """exact_land's result when the attacker follows ``policy`` (optimal_land's form:
    {(attacker units, defender units): "retreat" | "press on"}; missing states press on)."""
    setup = _land_setup(edition, attacker, defender, battle)
    return _land_result(setup, _LandPolicyPlayer(setup, policy).total())


# ---------------------------------------------------------------------------
# Sea: the game with the attacker's retreat and both sides' submerge decisions
# ---------------------------------------------------------------------------

_SEA_BATTLE_KEYWORDS = ("attacker_super_subs", "defender_super_subs", "attacker_tech",
                        "defender_tech", "dice")
_SEA_N = len(sea.UNITS)
_SEA_ROUNDS = len(sea.OUTCOMES)  # value vector: outcomes, rounds, attacker / defender finals
_SEA_ATT_AT = _SEA_ROUNDS + 1
_SEA_DFN_AT = _SEA_ATT_AT + _SEA_N
_SEA_SIZE = _SEA_DFN_AT + _SEA_N
_SEA_WIN = sea.OUTCOMES.index("attacker_win")
SUBMERGE_CHOICES = (*sea.POLICIES, OPTIMAL)


def _sea_setup(edition, attacker_submerge, defender_submerge, battle):
    unknown = set(battle) - set(_SEA_BATTLE_KEYWORDS)
    if unknown:
        raise ValueError(f"unknown sea keywords {sorted(unknown)}")
    for policy in (attacker_submerge, defender_submerge):
        if isinstance(policy, _PolicyTable):
            continue
        if policy not in SUBMERGE_CHOICES:
            raise ValueError(f"unknown submerge choice {policy!r}; expected one of "
                             f"{SUBMERGE_CHOICES}")
    if sea.MODEL.get(edition) == "classic" and any(
            isinstance(p, str) and p not in ("never", OPTIMAL)
            for p in (attacker_submerge, defender_submerge)):
        raise ValueError("classic has no submerging; submerge policies must be 'never'")
    options = dict(attacker_super_subs=False, defender_super_subs=False, attacker_tech=(),
                   defender_tech=(), dice=sea.STANDARD)
    options.update(battle)
    # sea_reference's own submerge policies stay "never": the game decides submerging
    return sea._make_setup(edition, "never", "never", options["attacker_super_subs"],
                           options["defender_super_subs"], options["attacker_tech"],
                           options["defender_tech"], options["dice"])


def _sea_score(edition, objective):
    """What the decisions compare, as a linear function of a sea value vector: P(win), or
    the TUV swing up to a constant of the start (the IPC the attacker keeps minus what the
    defender keeps), so that one game serves several starting forces (scramble, kamikaze)."""

    def score(vec):
        if objective == "win":
            return vec[_SEA_WIN]
        return sum(sea._cost(edition, u) * (vec[_SEA_ATT_AT + i] - vec[_SEA_DFN_AT + i])
                   for i, u in enumerate(sea.UNITS) if u in sea.STATS[edition])

    return score


def sea_objective_of(result, objective="tuv"):
    """The objective of an exact_sea-style result dict."""
    return result["attacker_win"] if objective == "win" else result["tuv_swing"]


class _FixedRetreat:
    """battlecalc's fixed retreat conditions at sea (kernels/rules.py ``should_retreat``):
    rounds fought >= after; the attacker's units in the battle <= when_left; the defender's
    units in the battle <= strafe (submerged subs are not in the battle, a damaged battleship
    is one unit); the attacker's chance of winning if it fights on < below; the attacker has an
    aircraft in the battle and the chance that fighting on with no retreat at all ends with
    none left > air_loss (_AirLossGame)."""

    def __init__(self, after=None, when_left=None, strafe=None, below=None, air_loss=None):
        for name, value in (("retreat_after", after), ("retreat_when_left", when_left),
                            ("strafe", strafe)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 0):
                raise ValueError(f"{name} must be a non-negative int or None, not {value!r}")
        if below is not None:
            if isinstance(below, bool) or not isinstance(below, (int, float, Fraction)):
                raise ValueError(f"retreat_below must be a number or None, not {below!r}")
            below = Fraction(below)
        self.after, self.when_left, self.strafe, self.below = after, when_left, strafe, below
        if air_loss is not None:
            if isinstance(air_loss, bool) or not isinstance(air_loss, (int, float, Fraction)):
                raise ValueError(f"retreat_air_loss must be a number or None, not {air_loss!r}")
            air_loss = Fraction(air_loss)
        self.air_loss = air_loss
        self.last_round_key = max(after, 1) if after is not None else 1

    def triggered(self, units, rounds):
        if self.after is not None and rounds >= self.after:
            return True
        if self.when_left is not None and sum(units[sea.A]) <= self.when_left:
            return True
        return self.strafe is not None and sum(units[sea.D]) <= self.strafe


class _PolicyTable:
    """A policy in optimal_sea's form, followed: a choice missing from it is "press on" /
    "stay"."""

    YES = ("retreat", "submerge")

    def __init__(self, policy):
        self.policy = policy

    def says(self, what, state, round_key):
        return self.policy.get((what, *_sea_state_named(state), round_key == 0)) in self.YES


class _SeaGame:
    """A sea battle as a game: sea_reference's rounds, with decisions between them.

    node(state, rounds): the start of a round after ``rounds`` rounds (a state is
    sea_reference's ((attacker, defender) counts in the battle, (attacker, defender) subs
    submerged so far)).  In order:

    1. V3 editions: defenceless transports are lost (sea_reference's rule, to its fixed
       point); end checks (sea_reference's ``_end_check``, stalemate included);
    2. rounds >= 1: the attacker's retreat (``retreat``: None = never, "optimal", or a
       _FixedRetreat), not offered where the lone-transport rule holds;
    3. where the edition submerges now (V3 every round, revised from round 2 on: its
       end-of-round submerge; classic never): the attacker's submerge choice, then the
       defender's (``submerge`` = (attacker's, defender's): a sea_reference policy or
       "optimal"); if a side submerged, the end checks again (a battle ended so counts no
       extra round; the defenceless-transport rule is not applied there, as in sea_reference);
    4. a round (sea_reference's ``_round_*_exact``; revised / classic: the lone-transport
       retreat after it), then node(next state, rounds + 1).

    The round from the state that reached step 4 unchanged returns to it with probability q;
    where rounds no longer matter (round_key) that is summed as a geometric series (see the
    module docstring).  ``decisions`` records every choice weighed, keyed by (what, state,
    round_key): what is "retreat", "attacker_submerge" or "defender_submerge"; the value is
    True (retreat / submerge) or False.
    """

    def __init__(self, setup, retreat, submerge, objective):
        self.s = setup
        self.model = sea.MODEL[setup.edition]
        self.retreat = retreat
        self.submerge = submerge
        self.objective = objective
        self.last_round_key = retreat.last_round_key if isinstance(retreat, _FixedRetreat) else 1
        self.node_memo, self.open_memo, self.closed_memo = {}, {}, {}
        self.decisions = {}

    def round_key(self, rounds):
        return min(rounds, self.last_round_key)

    # -- value vectors -------------------------------------------------------

    @staticmethod
    def terminal(outcome, state):
        vec = [Fraction(0)] * _SEA_SIZE
        vec[sea.OUTCOMES.index(outcome)] = Fraction(1)
        att_final = sea._final_counts(state, sea.A)
        dfn_final = sea._final_counts(state, sea.D)
        for i in range(_SEA_N):
            vec[_SEA_ATT_AT + i] = Fraction(att_final[i])
            vec[_SEA_DFN_AT + i] = Fraction(dfn_final[i])
        return vec

    # -- the boundary between rounds -----------------------------------------

    def node(self, state, rounds):
        key = (state, self.round_key(rounds))
        if key not in self.node_memo:
            self.node_memo[key] = self._node(state, rounds)
        return self.node_memo[key]

    def _node(self, state, rounds):
        if self.model == "v3":
            checked = sea._defenceless_transports(self.s, state)
            if checked != state:
                return self.node(checked, rounds)
        outcome = sea._end_check(self.s, state)
        if outcome is not None:
            return self.terminal(outcome, state)
        if rounds >= 1 and self.may_retreat(state):
            return self.retreat_choice(state, rounds)
        return self.submerge_phase(state, rounds)

    def may_retreat(self, state):
        if self.retreat is None:
            return False
        return not (self.model != "v3" and sea._lone_attacking_transports(state))

    def retreat_choice(self, state, rounds):
        key = (state, self.round_key(rounds))
        off = self.terminal("retreat", state)
        if isinstance(self.retreat, _PolicyTable):
            go = self.retreat.says("retreat", state, key[1])
            on = None if go else self.submerge_phase(state, rounds)
        elif self.retreat == OPTIMAL:
            on = self.submerge_phase(state, rounds)
            go = self.objective(off) > self.objective(on)
        elif self.retreat.triggered(state[0], rounds):
            go, on = True, None
        elif (self.retreat.air_loss is not None
              and any(sea._count(state[0][sea.A], u) for u in sea.AIR)
              and self.air_loss_game().node(state, rounds)[_SEA_WIN] > self.retreat.air_loss):
            go, on = True, None
        elif self.retreat.below is not None:
            on = self.submerge_phase(state, rounds)
            go = on[_SEA_WIN] < self.retreat.below
        else:
            go, on = False, self.submerge_phase(state, rounds)
        self.decisions[("retreat", *key)] = go
        return off if go else on

    def air_loss_game(self):
        """The same battle with no retreat, valued by _AirLossGame (made once)."""
        if not hasattr(self, "_air_game"):
            self._air_game = _AirLossGame(self.s, None, self.submerge, self.objective)
        return self._air_game

    def submerges_now(self, rounds):
        return self.model == "v3" or (self.model == "revised" and rounds >= 1)

    def may_submerge(self, side, units):
        return (sea._has(units[side], "submarine")
                and not sea._has(units[1 - side], "destroyer"))

    def submerged(self, side, state):
        units, subs = state
        new_units, new_subs = list(units), list(subs)
        new_subs[side] += sea._count(units[side], "submarine")
        new_units[side] = sea._with_count(units[side], "submarine", 0)
        return (tuple(new_units), tuple(new_subs))

    def submerge_phase(self, state, rounds):
        if not self.submerges_now(rounds):
            return self.play_leaf(state, rounds)
        return self.side_submerge(sea.A, state, state, rounds)

    def side_submerge(self, side, state, start, rounds):
        """``side`` decides whether to submerge at ``state`` (``start``: the state before this
        round's submerge choices); then the defender, then the round."""

        def then(after):
            if side == sea.A:
                return self.side_submerge(sea.D, after, start, rounds)
            return self.after_submerge(after, start, rounds)

        units = state[0]
        if not self.may_submerge(side, units):
            return then(state)
        policy = self.submerge[side]
        if isinstance(policy, _PolicyTable):
            what = "attacker_submerge" if side == sea.A else "defender_submerge"
            go = policy.says(what, state, self.round_key(rounds))
            return then(self.submerged(side, state) if go else state)
        if policy != OPTIMAL:
            return then(self.submerged(side, state)
                        if sea._wants_to_submerge(policy, units[side], units[1 - side])
                        else state)
        yes = then(self.submerged(side, state))
        no = then(state)
        if side == sea.A:
            go = self.objective(yes) > self.objective(no)
        else:
            go = self.objective(yes) < self.objective(no)
        self.decisions[("attacker_submerge" if side == sea.A else "defender_submerge", state,
                        self.round_key(rounds))] = go
        return yes if go else no

    def after_submerge(self, state, start, rounds):
        if state == start:
            return self.play_leaf(state, rounds)
        if sea._withdrew_by_submerging(start, state):  # its subs were all it had left in it
            return self.terminal("retreat", state)
        outcome = sea._end_check(self.s, state)
        if outcome is not None:
            return self.terminal(outcome, state)  # decided by submerging: no round
        return self.play_open(state, rounds)

    # -- a round -------------------------------------------------------------

    def play_leaf(self, state, rounds):
        """The round from the state a node reached unchanged: closed over its self-loop where
        the next round's key is this one's."""
        if self.round_key(rounds + 1) == self.round_key(rounds):
            return self.play_closed(state, rounds)
        return self.play_open(state, rounds)

    def outcomes_of_round(self, state):
        """[(p, next state or None, terminal vector or None)] of one round from ``state``."""
        setup = self.s
        if self.model == "v3":
            return [(p, after, None) for after, p in sea._round_v3_exact(setup, state).items()]
        lone = sea._lone_attacking_transports(state)
        rounds_law = (sea._round_revised_exact if self.model == "revised"
                      else sea._round_classic_exact)(setup, state)
        result = []
        for after, p in rounds_law.items():
            if lone and sea._has(after[0][sea.A], "transport"):
                result.append((p, None, self.terminal("retreat", after)))
            else:
                result.append((p, after, None))
        return result

    def _combine(self, weighted, q):
        if q == 1:
            raise AssertionError("non-terminal state cannot change; rules bug")
        acc = [Fraction(0)] * _SEA_SIZE
        for p, vec in weighted:
            for i in range(_SEA_SIZE):
                acc[i] += p * vec[i]
        acc[_SEA_ROUNDS] += 1  # the round fought now (repeated while self-looping)
        return [x / (1 - q) for x in acc]

    def play_open(self, state, rounds):
        key = (state, self.round_key(rounds))
        if key not in self.open_memo:
            weighted = [(p, vec if after is None else self.node(after, rounds + 1))
                        for p, after, vec in self.outcomes_of_round(state)]
            self.open_memo[key] = self._combine(weighted, Fraction(0))
        return self.open_memo[key]

    def play_closed(self, state, rounds):
        key = (state, self.round_key(rounds))
        if key not in self.closed_memo:
            weighted, q = [], Fraction(0)
            for p, after, vec in self.outcomes_of_round(state):
                if after == state:
                    q += p  # nothing changed: the same node, the same choices again
                else:
                    weighted.append((p, vec if after is None else self.node(after, rounds + 1)))
            self.closed_memo[key] = self._combine(weighted, q)
        return self.closed_memo[key]

    def start(self, att0, dfn0):
        return self.node(((att0, dfn0), (0, 0)), 0)


def _sea_result(edition, att0, dfn0, att_names, dfn_names, total):
    """exact_sea's result dict from a total value vector (IPC counted from att0, dfn0)."""
    att_final = tuple(total[_SEA_ATT_AT + i] for i in range(_SEA_N))
    dfn_final = tuple(total[_SEA_DFN_AT + i] for i in range(_SEA_N))
    att_loss = Fraction(sea._ipc_loss(edition, att0, att_final))
    dfn_loss = Fraction(sea._ipc_loss(edition, dfn0, dfn_final))
    result = {name: total[i] for i, name in enumerate(sea.OUTCOMES)}
    result.update({
        "attacker_ipc_loss": att_loss,
        "defender_ipc_loss": dfn_loss,
        "tuv_swing": dfn_loss - att_loss,
        "mean_rounds": total[_SEA_ROUNDS],
        "attacker_survivors": {u: att_final[sea._idx(u)] for u in att_names},
        "defender_survivors": {u: dfn_final[sea._idx(u)] for u in dfn_names},
    })
    return result


def _sea_state_named(state):
    (att, dfn), (sub_a, sub_d) = state
    return (_named(sea.UNITS, att), _named(sea.UNITS, dfn), sub_a, sub_d)


def _sea_policy(decisions):
    """{(what, attacker in battle, defender in battle, attacker subs submerged, defender subs
    submerged, first round?): choice} from a game's decisions."""
    words = {"retreat": (RETREAT, PRESS_ON), "attacker_submerge": ("submerge", "stay"),
             "defender_submerge": ("submerge", "stay")}
    policy = {}
    for (what, state, round_key), go in decisions.items():
        yes, no = words[what]
        policy[(what, *_sea_state_named(state), round_key == 0)] = yes if go else no
    return policy


class _AirLossGame(_SeaGame):
    """The game with no retreat whose value at every end is 1 (in the _SEA_WIN slot; the
    other slots 0) where the attacker has no aircraft left: node(state, rounds)[_SEA_WIN] is
    the chance that fighting on from there with no retreat loses every aircraft (a lone
    transports' withdrawal included: transports alone have none)."""

    @staticmethod
    def terminal(outcome, state):
        vec = [Fraction(0)] * _SEA_SIZE
        final = sea._final_counts(state, sea.A)
        if not any(final[i] for i, u in enumerate(sea.UNITS) if u in sea.AIR):
            vec[_SEA_WIN] = Fraction(1)
        return vec


def _sea_game(edition, *, retreat, attacker_submerge, defender_submerge, objective, battle):
    setup = _sea_setup(edition, attacker_submerge, defender_submerge, battle)
    return _SeaGame(setup, retreat, (attacker_submerge, defender_submerge),
                    _sea_score(edition, objective))


def _solve_sea(edition, attacker, defender, *, retreat, attacker_submerge, defender_submerge,
               objective, battle):
    game = _sea_game(edition, retreat=retreat, attacker_submerge=attacker_submerge,
                     defender_submerge=defender_submerge, objective=objective, battle=battle)
    att0 = sea._to_counts(edition, attacker)
    dfn0 = sea._to_counts(edition, defender)
    total = game.start(att0, dfn0)
    result = _sea_result(edition, att0, dfn0, sea._reported_names(edition, attacker),
                         sea._reported_names(edition, defender), total)
    result["objective"] = objective
    result["value"] = sea_objective_of(result, objective)
    return result, game


def exact_sea_retreat(edition, attacker, defender, *, retreat_after=None,
                      retreat_when_left=None, strafe=None, retreat_below=None,
                      attacker_submerge="never", defender_submerge="never",
                      retreat_air_loss=None, **battle):
    """sea_reference.exact_sea with battlecalc's fixed retreat policies (sea_reference has
    none): the attacker withdraws at the end of a round (never before round 1, never where the
    lone-transport rule holds) when rounds fought >= retreat_after, when it has
    retreat_when_left or fewer units in the battle, when the defender has strafe or fewer
    units in the battle, or when its chance of winning if it fights on (following the policy
    later; the round that changes nothing leads back to the same choice) is below
    retreat_below, or when it has an aircraft in the battle and the chance that fighting on
    with no retreat at all ends with none left is above retreat_air_loss (_AirLossGame).
    The conditions are checked once a boundary, before the submerge choices
    (see _SeaGame).  Without a condition it is exact_sea itself.  ``battle``: exact_sea's
    other keywords.  Returns exact_sea's keys plus ``objective`` ("tuv") and ``value``."""
    policy = _FixedRetreat(retreat_after, retreat_when_left, strafe, retreat_below,
                           retreat_air_loss)
    result, _ = _solve_sea(edition, attacker, defender, retreat=policy,
                           attacker_submerge=attacker_submerge,
                           defender_submerge=defender_submerge, objective="tuv", battle=battle)
    return result


def optimal_sea(edition, attacker, defender, *, objective="tuv", retreat=OPTIMAL,
                attacker_submerge="never", defender_submerge="never", **battle):
    """The sea battle with its decisions solved (see _SeaGame and the module docstring).

    ``retreat``: "optimal" (the attacker's retreat decided at every boundary by the
    objective) or "never"; ``attacker_submerge`` / ``defender_submerge``: a sea_reference
    policy ("never", "when-only-subs-left", "first-chance") or "optimal" (the attacker
    maximises the objective, the defender minimises it).  ``battle``: exact_sea's other
    keywords (super subs, technologies, dice).  Objectives: "tuv", "win".

    Returns exact_sea's result dict under the decisions, plus ``objective``, ``value``,
    ``never_value`` (the objective with the attacker never retreating and both sides'
    submerge policies "never", i.e. exact_sea's default), ``gain`` (value - never_value),
    and ``policy``: {(what, attacker units in the battle, defender units in the battle,
    attacker subs submerged, defender subs submerged, before round 1?): choice}, what being
    "retreat" ("retreat" / "press on"), "attacker_submerge" or "defender_submerge"
    ("submerge" / "stay"); units as ((unit, count), ...) in sea_reference's unit order.
    Every choice the solver weighed is listed (also at states reached only by an option not
    taken).
    """
    _check_objective(objective, 0, at_sea=True)
    if retreat not in (OPTIMAL, "never"):
        raise ValueError(f"retreat must be 'optimal' or 'never' (fixed policies: "
                         f"exact_sea_retreat), not {retreat!r}")
    result, game = _solve_sea(edition, attacker, defender,
                              retreat=OPTIMAL if retreat == OPTIMAL else None,
                              attacker_submerge=attacker_submerge,
                              defender_submerge=defender_submerge, objective=objective,
                              battle=battle)
    never, _ = _solve_sea(edition, attacker, defender, retreat=None, attacker_submerge="never",
                          defender_submerge="never", objective=objective, battle=battle)
    result.update({"never_value": never["value"], "gain": result["value"] - never["value"],
                   "policy": _sea_policy(game.decisions)})
    return result


# ---------------------------------------------------------------------------
# 1940-2e: scramble and kamikaze, before the sea battle
# ---------------------------------------------------------------------------

E1940 = "1940-2e"
SCRAMBLERS = ("fighter", "tactical_bomber")  # canScramble in the 2E game file
MAX_SCRAMBLE = 3  # an air base's maxScrambleCount
# Kamikaze targets: TripleA's default, the moving player's sea units that are neither
# transports nor able to evade (subs): the surface warships.
KAMIKAZE_TARGETS = ("battleship", "damaged_battleship", "cruiser", "destroyer", "carrier",
                    "damaged_carrier")
KAMIKAZE_VALUE = 2  # suicideAttackResources SuicideAttackTokens count="2": hits on 1-2


def _check_1940(edition):
    if edition != E1940:
        raise ValueError(f"scramble and kamikaze are 1940-2e rules, not {edition!r}")


def scramble_choices(available, max_scramble=MAX_SCRAMBLE):
    """Every force the defender may scramble, as dicts {"fighter": i, "tactical_bomber": j}
    (zero counts left out; {} = no scramble), fewest aircraft first, then fewest tactical
    bombers.  ``available``: the fighters and tactical bombers at one operative air base
    ({"fighter": 3}), or a list of such dicts, one per air base next to the sea zone; each
    base scrambles at most ``max_scramble`` of its own."""
    bases = [available] if isinstance(available, dict) else list(available)
    totals = {(0, 0)}
    for base in bases:
        for name, n in base.items():
            if name not in SCRAMBLERS:
                raise ValueError(f"{name!r} cannot scramble; only {SCRAMBLERS}")
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise ValueError(f"bad count {n!r} for {name!r}")
        f, t = base.get("fighter", 0), base.get("tactical_bomber", 0)
        here = [(i, j) for i in range(f + 1) for j in range(t + 1) if i + j <= max_scramble]
        totals = {(a + i, b + j) for a, b in totals for i, j in here}
    choices = sorted(totals, key=lambda c: (c[0] + c[1], c[1]))
    return [{u: n for u, n in zip(SCRAMBLERS, c, strict=True) if n} for c in choices]


def _partitions(n, parts, largest=None):
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


def kamikaze_allocations(attacker, tokens):
    """Every way to place ``tokens`` kamikaze strikes on the attacker's surface warships:
    tuples of (unit type, tokens on ONE unit of it), one pair per unit struck (units of a
    type are alike, so the tokens on a type form a partition into at most that many units).
    Every token is placed (the defender decides how many it commits)."""
    types = [(u, attacker.get(u, 0)) for u in KAMIKAZE_TARGETS if attacker.get(u, 0) > 0]
    allocations = []

    def place(i, left, chosen):
        if i == len(types):
            if left == 0:
                allocations.append(tuple(chosen))
            return
        unit, count = types[i]
        for k in range(left + 1):
            for parts in _partitions(k, count):
                place(i + 1, left - k, chosen + [(unit, t) for t in parts])

    place(0, tokens, [])
    return allocations


def _strike_law(unit, tokens, dice):
    """Law of what happens to one unit struck by ``tokens`` kamikaze tokens: "sunk",
    "damaged" or "intact".  Standard dice: one die per token, hit on 1-2; low luck (TripleA's
    fireKamikazeSuicideAttacks): the tokens' power 2 x tokens, a hit per full 6 and one die
    for the rest.  The hits on the unit sink it once they reach its hit points left (2 for a
    healthy battleship or carrier, else 1), else damage it."""
    p = Fraction(KAMIKAZE_VALUE, 6)
    if dice == sea.LOW_LUCK:
        sure, rest = divmod(KAMIKAZE_VALUE * tokens, 6)
        hits = {sure: 1 - Fraction(rest, 6), sure + 1: Fraction(rest, 6)}
    else:
        hits = {h: comb(tokens, h) * p**h * (1 - p) ** (tokens - h) for h in range(tokens + 1)}
    hit_points = 2 if unit in ("battleship", "carrier") else 1
    law = {}
    for h, ph in hits.items():
        if ph == 0:
            continue
        fate = "sunk" if h >= hit_points else "damaged" if h > 0 else "intact"
        law[fate] = law.get(fate, 0) + ph
    return law


def _after_strikes(edition, att0, allocation, dice):
    """Law of the attacker's counts after the strikes of ``allocation``."""
    law = {att0: Fraction(1)}
    damaged_form = sea.TWO_HIT[edition]
    for unit, tokens in allocation:
        fates = _strike_law(unit, tokens, dice)
        new_law = {}
        for counts, p in law.items():
            for fate, q in fates.items():
                after = counts
                if fate != "intact":
                    after = sea._add(after, unit, -1)
                if fate == "damaged":
                    after = sea._add(after, damaged_form[unit], +1)
                new_law[after] = new_law.get(after, 0) + p * q
        law = new_law
    return law


def _check_allocation(attacker, allocation, tokens):
    used = {}
    for unit, n in allocation:
        if unit not in KAMIKAZE_TARGETS:
            raise ValueError(f"kamikaze may strike only surface warships {KAMIKAZE_TARGETS}, "
                             f"not {unit!r}")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"bad number of tokens {n!r} on a {unit}")
        used[unit] = used.get(unit, 0) + 1
        if used[unit] > attacker.get(unit, 0):
            raise ValueError(f"more {unit} struck than the attacker has")
    if sum(n for _, n in allocation) != tokens:
        raise ValueError(f"the targets use {sum(n for _, n in allocation)} tokens, not {tokens}")
    return tuple(allocation)


def decide_sea_1940(edition, attacker, defender, *, objective="tuv", scramble_from=None,
                    max_scramble=MAX_SCRAMBLE, scramble=None, kamikaze=0,
                    kamikaze_targets=None, retreat="never", attacker_submerge="never",
                    defender_submerge="never", **battle):
    """A 1940-2e sea battle with the defender's scramble and kamikaze strikes, by enumeration.

    Order (TripleA's BattleDelegate.start: doScrambling, then doKamikazeSuicideAttacks, both
    before any battle is fought): the defender scrambles (``scramble``: the force given, a
    dict {"fighter": i, "tactical_bomber": j}; else every choice of ``scramble_choices(
    scramble_from, max_scramble)``; neither: no scramble), the scrambled aircraft join the
    defender; then Japan places ``kamikaze`` tokens on the attacker's surface warships
    (``kamikaze_targets``: the allocation given, kamikaze_allocations' form; else every
    allocation), all before any die is rolled; the strikes are rolled and their casualties
    removed (damaged battleships and carriers stay damaged); then the battle (``retreat``,
    ``attacker_submerge``, ``defender_submerge`` as in optimal_sea).  The defender's choices
    minimise the attacker's ``objective`` ("tuv": the TUV swing, scrambled aircraft lost and
    ships sunk by kamikaze included; "win"); ties go to the choice first in the enumeration
    (fewest aircraft; kamikaze_allocations' order).

    Returns the result (exact_sea's keys, IPC counted from the attacker's force before the
    strikes and the defender's with its scrambled aircraft) under the decisions, plus
    ``objective``, ``value``, ``scrambled`` (the force scrambled), ``kamikaze_targets`` (the
    allocation struck, () without kamikaze), and ``table``: one row per (scramble,
    allocation) weighed, {"scrambled", "kamikaze_targets", "value", "result"}.
    """
    _check_1940(edition)
    _check_objective(objective, 0, at_sea=True)
    if isinstance(kamikaze, bool) or not isinstance(kamikaze, int) or kamikaze < 0:
        raise ValueError(f"kamikaze must be a non-negative number of tokens, not {kamikaze!r}")
    if retreat not in (OPTIMAL, "never"):
        raise ValueError(f"retreat must be 'optimal' or 'never', not {retreat!r}")
    if scramble is not None:
        scrambles = [dict(scramble)]
        for name in scramble:
            if name not in SCRAMBLERS:
                raise ValueError(f"{name!r} cannot scramble; only {SCRAMBLERS}")
    elif scramble_from is not None:
        scrambles = scramble_choices(scramble_from, max_scramble)
    else:
        scrambles = [{}]
    if kamikaze_targets is not None:
        allocations = [_check_allocation(attacker, kamikaze_targets, kamikaze)]
    else:
        allocations = kamikaze_allocations(attacker, kamikaze)
        if not allocations:
            raise ValueError("no surface warship for the kamikaze tokens to strike")
    game = _sea_game(edition, retreat=OPTIMAL if retreat == OPTIMAL else None,
                     attacker_submerge=attacker_submerge, defender_submerge=defender_submerge,
                     objective=objective, battle=battle)
    att0 = sea._to_counts(edition, attacker)
    att_names = sea._reported_names(edition, attacker)
    table = []
    for scrambled in scrambles:
        force = dict(defender)
        for name, n in scrambled.items():
            force[name] = force.get(name, 0) + n
        dfn0 = sea._to_counts(edition, force)
        dfn_names = sea._reported_names(edition, force)
        for allocation in allocations:
            total = [Fraction(0)] * _SEA_SIZE
            for att1, p in _after_strikes(edition, att0, allocation, game.s.dice).items():
                vec = game.start(att1, dfn0)
                total = [t + p * v for t, v in zip(total, vec, strict=True)]
            result = _sea_result(edition, att0, dfn0, att_names, dfn_names, total)
            table.append({"scrambled": scrambled, "kamikaze_targets": allocation,
                          "value": sea_objective_of(result, objective), "result": result})
    best = min(table, key=lambda row: row["value"])  # the first of the lowest
    result = dict(best["result"])
    result.update({"objective": objective, "value": best["value"],
                   "scrambled": best["scrambled"], "kamikaze_targets": best["kamikaze_targets"],
                   "table": table})
    return result


def scramble_table(edition, attacker, defender, available, *, objective="tuv",
                   max_scramble=MAX_SCRAMBLE, **options):
    """[(scrambled force, result)] for every force the defender may scramble from
    ``available`` (scramble_choices), the battle otherwise as decide_sea_1940's options."""
    table = decide_sea_1940(edition, attacker, defender, objective=objective,
                            scramble_from=available, max_scramble=max_scramble,
                            **options)["table"]
    return [(row["scrambled"], row["result"]) for row in table]


def play_sea_policy(edition, attacker, defender, policy, **battle):
    """exact_sea's result when both sides follow ``policy`` (optimal_sea's form) for the
    attacker's retreat and both sides' submerging; a choice missing from it is "press on" /
    "stay"."""
    table = _PolicyTable(policy)
    result, _ = _solve_sea(edition, attacker, defender, retreat=table, attacker_submerge=table,
                           defender_submerge=table, objective="tuv", battle=battle)
    return result


def kamikaze_table(edition, attacker, defender, tokens, *, objective="tuv", **options):
    """[(allocation, result)] for every way to place ``tokens`` kamikaze strikes on the
    attacker's surface warships (kamikaze_allocations), the battle otherwise as
    decide_sea_1940's options."""
    table = decide_sea_1940(edition, attacker, defender, objective=objective, kamikaze=tokens,
                            **options)["table"]
    return [(row["kamikaze_targets"], row["result"]) for row in table]
