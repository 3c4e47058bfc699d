"""The round model: rule functions shared by the Monte Carlo kernel and the exact solver.

A side is passed as its compiled arrays (compile.Side; columns in kernels/common.py):
``blocks`` int64[B, BLOCK_COLS], ``states`` int64[F, STATE_COLS], ``rows`` int64[R, ROW_COLS]
and a float64[R, W] hit table (pmf for the exact solver, cdf for Monte Carlo).  A state is a
flat index f; its block and steps per category are ``states[f, S_BLOCK..S_N]``.  Rules arrive
as int64[RULE_COLS] (compile.round_rules).

A round: submerge decisions (before firing, or at the end of the previous round), the
submarines' opening strike (hits on non-air units, casualties removed at once unless their
side may fire back), then general fire of everything else (submarines that did not strike
included; their hits never land on aircraft, and aircraft hit submarines only with a
destroyer on their side or where the edition allows it always); hits are assigned so that as
many land as the rules allow, then by the owner's order of losses (Decision 6).
"""

from .common import (
    ATTACKER_WIN,
    B_NSUB,
    B_OFFSET,
    B_RADIX_A,
    B_RADIX_N,
    B_ROW_A,
    B_ROW_N,
    B_ROW_S,
    CONTINUE,
    DEFENDER_WIN,
    DRAW,
    NO_RANK,
    POLICY_FIRST_CHANCE,
    POLICY_NEVER,
    R_ACTIVE,
    R_AFTER,
    R_DEFENCELESS,
    R_DESTROYER,
    R_ONLY_AIR,
    R_RANK,
    R_STRAFE,
    R_TOP,
    R_TRANSPORTS,
    R_WHEN_LEFT,
    RETREAT,
    RU_A_POLICY,
    RU_A_STRIKE,
    RU_AIR_ALWAYS,
    RU_D_POLICY,
    RU_D_STRIKE,
    RU_LONE_RETREAT,
    RU_STRIKE_RETURN,
    S_ALIVE,
    S_BLOCK,
    S_HAS_LAND,
    S_MAY_RETREAT,
    S_UNITS,
    STALEMATE,
    STRIKE_ALWAYS,
    STRIKE_NEVER,
)
from .jit import kernel


@kernel
def flat(blocks, b, s, a, n):
    """Flat index of block b's state with s, a, n steps taken per category."""
    return blocks[b, B_OFFSET] + (s * blocks[b, B_RADIX_A] + a) * blocks[b, B_RADIX_N] + n


@kernel
def subs_in(blocks, b, s):
    """Submarines of the side still in the battle (0 once they submerged)."""
    n_sub = blocks[b, B_NSUB]
    return 0 if s > n_sub else n_sub - s


@kernel
def in_battle(blocks, b, s, a, n):
    return (subs_in(blocks, b, s) > 0 or a < blocks[b, B_RADIX_A] - 1
            or n < blocks[b, B_RADIX_N] - 1)


@kernel
def destroyer(blocks, rows, b, n):
    return rows[blocks[b, B_ROW_N] + n, R_DESTROYER] == 1


@kernel
def _can_fire(blocks, rows, b, s, a, n):
    return ((subs_in(blocks, b, s) > 0 and rows[blocks[b, B_ROW_S] + s, R_TOP] > 0)
            or rows[blocks[b, B_ROW_A] + a, R_TOP] > 0 or rows[blocks[b, B_ROW_N] + n, R_TOP] > 0)


@kernel
def can_hit(xb_, xr, xb, xs, xa, xn, yb_, yb, ys, ya, yn, air_always):
    """Whether side x (blocks xb_, rows xr) in state (xb, xs, xa, xn) can score a hit on
    anything side y (blocks yb_) has in the battle."""
    y_subs = subs_in(yb_, yb, ys) > 0
    y_air = ya < yb_[yb, B_RADIX_A] - 1
    y_other = yn < yb_[yb, B_RADIX_N] - 1
    if subs_in(xb_, xb, xs) > 0 and xr[xb_[xb, B_ROW_S] + xs, R_TOP] > 0 and (y_subs or y_other):
        return True
    if xr[xb_[xb, B_ROW_A] + xa, R_TOP] > 0:
        if y_air or y_other:
            return True
        if y_subs and (air_always or destroyer(xb_, xr, xb, xn)):
            return True
    return xr[xb_[xb, B_ROW_N] + xn, R_TOP] > 0 and (y_subs or y_air or y_other)


@kernel
def settle(ab, ar, a_b, a_s, a_a, a_n, db, dr, d_b, d_s, d_a, d_n, air_always):
    """Between-rounds checks: units lost without dice, end of battle, stalemate.

    A side that cannot hit anything loses its defenceless units (transports; AAA left alone)
    if the enemy can fire at all.  Returns (outcome or CONTINUE, a_n, d_n) with the defenceless
    units removed.
    """
    a_hit = can_hit(ab, ar, a_b, a_s, a_a, a_n, db, d_b, d_s, d_a, d_n, air_always)
    d_hit = can_hit(db, dr, d_b, d_s, d_a, d_n, ab, a_b, a_s, a_a, a_n, air_always)
    a_lose = (ar[ab[a_b, B_ROW_N] + a_n, R_DEFENCELESS] == 1 and not a_hit
              and in_battle(db, d_b, d_s, d_a, d_n) and _can_fire(db, dr, d_b, d_s, d_a, d_n))
    d_lose = (dr[db[d_b, B_ROW_N] + d_n, R_DEFENCELESS] == 1 and not d_hit
              and in_battle(ab, a_b, a_s, a_a, a_n) and _can_fire(ab, ar, a_b, a_s, a_a, a_n))
    if a_lose:
        a_n = ab[a_b, B_RADIX_N] - 1
    if d_lose:
        d_n = db[d_b, B_RADIX_N] - 1
    a_in = in_battle(ab, a_b, a_s, a_a, a_n)
    d_in = in_battle(db, d_b, d_s, d_a, d_n)
    if not a_in:
        if a_s > ab[a_b, B_NSUB]:  # its subs submerged
            return RETREAT, a_n, d_n
        return (DEFENDER_WIN if d_in else DRAW), a_n, d_n
    if not d_in:
        return ATTACKER_WIN, a_n, d_n
    if a_lose or d_lose:
        a_hit = can_hit(ab, ar, a_b, a_s, a_a, a_n, db, d_b, d_s, d_a, d_n, air_always)
        d_hit = can_hit(db, dr, d_b, d_s, d_a, d_n, ab, a_b, a_s, a_a, a_n, air_always)
    if not a_hit and not d_hit:
        return STALEMATE, a_n, d_n
    return CONTINUE, a_n, d_n


@kernel
def _hall(x_sub, x_air, x_other, h_sub, h_air, h_gen, air_on_subs):
    """Hall's condition: the chosen casualties per category can each take a distinct hit.

    Sub hits (also shore bombardment) may land on subs and other units, air hits on aircraft
    and other units (and subs when air_on_subs), general hits on anything.
    """
    for mask in range(1, 8):
        has_s = (mask & 1) != 0
        has_a = (mask & 2) != 0
        has_n = (mask & 4) != 0
        demand = (x_sub if has_s else 0) + (x_air if has_a else 0) + (x_other if has_n else 0)
        supply = h_gen
        if has_s or has_n:
            supply += h_sub
        if has_a or has_n or (has_s and air_on_subs):
            supply += h_air
        if demand > supply:
            return False
    return True


@kernel
def assign(yb_, yr, yb, ys, ya, yn, h_sub, h_air, h_gen, air_on_subs):
    """Casualties of side y for the hits it received, by its order of losses.

    As many hits land as the targeting rules allow; within that, the lexicographically first
    set in the side's order of losses (a transversal matroid, so the greedy is exact: take the
    next casualty in order if the set stays matchable; a category that cannot take one more
    cannot take any).  Returns y's new (s, a, n).
    """
    total = h_sub + h_air + h_gen
    if total == 0:
        return ys, ya, yn
    n_air = yb_[yb, B_RADIX_A] - 1
    n_other = yb_[yb, B_RADIX_N] - 1
    subs_left = subs_in(yb_, yb, ys)
    if subs_left == 0 and n_air == 0:  # one walk: the next `total` casualties
        return ys, ya, min(yn + total, n_other)
    row_s, row_a, row_n = yb_[yb, B_ROW_S], yb_[yb, B_ROW_A], yb_[yb, B_ROW_N]
    x_sub = 0
    x_air = 0
    x_other = 0
    blocked_sub = subs_left == 0
    blocked_air = ya >= n_air
    blocked_other = yn >= n_other
    # every hit may land anywhere left: no matching check needed
    free = (h_sub == 0 or blocked_air) and (h_air == 0 or air_on_subs or blocked_sub)
    while x_sub + x_air + x_other < total:
        best = -1
        best_rank = NO_RANK
        if not blocked_sub and x_sub < subs_left and yr[row_s + ys + x_sub, R_RANK] < best_rank:
            best, best_rank = 0, yr[row_s + ys + x_sub, R_RANK]
        if not blocked_air and ya + x_air < n_air and yr[row_a + ya + x_air, R_RANK] < best_rank:
            best, best_rank = 1, yr[row_a + ya + x_air, R_RANK]
        if (not blocked_other and yn + x_other < n_other
                and yr[row_n + yn + x_other, R_RANK] < best_rank):
            best = 2
        if best < 0:
            break
        if best == 0:
            if free or _hall(x_sub + 1, x_air, x_other, h_sub, h_air, h_gen, air_on_subs):
                x_sub += 1
            else:
                blocked_sub = True
        elif best == 1:
            if free or _hall(x_sub, x_air + 1, x_other, h_sub, h_air, h_gen, air_on_subs):
                x_air += 1
            else:
                blocked_air = True
        elif free or _hall(x_sub, x_air, x_other + 1, h_sub, h_air, h_gen, air_on_subs):
            x_other += 1
        else:
            blocked_other = True
    return ys + x_sub, ya + x_air, yn + x_other


@kernel
def submerge_step(ab, ar, a_b, a_s, a_a, a_n, db, dr, d_b, d_s, d_a, d_n, rules):
    """Submerge decisions at the start of a round, attacker first, then defender: never while
    an enemy destroyer is present.  Returns the new s of both sides."""
    if _wants_submerge(ab, a_b, a_s, a_a, a_n, rules[RU_A_POLICY], destroyer(db, dr, d_b, d_n)):
        a_s = ab[a_b, B_NSUB] + 1 + a_s
    if _wants_submerge(db, d_b, d_s, d_a, d_n, rules[RU_D_POLICY], destroyer(ab, ar, a_b, a_n)):
        d_s = db[d_b, B_NSUB] + 1 + d_s
    return a_s, d_s


@kernel
def _wants_submerge(xb_, xb, xs, xa, xn, policy, enemy_destroyer):
    if policy == POLICY_NEVER or enemy_destroyer or subs_in(xb_, xb, xs) == 0:
        return False
    if policy == POLICY_FIRST_CHANCE:
        return True
    return xa >= xb_[xb, B_RADIX_A] - 1 and xn >= xb_[xb, B_RADIX_N] - 1


@kernel
def lone_transports(ab, ar, a_b, a_s, a_a, a_n, rules):
    """The attacker has only transports in the battle and must retreat after one volley."""
    return (rules[RU_LONE_RETREAT] == 1 and subs_in(ab, a_b, a_s) == 0
            and a_a >= ab[a_b, B_RADIX_A] - 1 and ar[ab[a_b, B_ROW_N] + a_n, R_TRANSPORTS] == 1)


@kernel
def strikes(ab, ar, a_b, a_s, a_n, db, dr, d_b, d_s, d_n, rules):
    """Whether each side's submarines fire in the opening step this round."""
    return (_strikes(rules[RU_A_STRIKE], subs_in(ab, a_b, a_s), destroyer(db, dr, d_b, d_n)),
            _strikes(rules[RU_D_STRIKE], subs_in(db, d_b, d_s), destroyer(ab, ar, a_b, a_n)))


@kernel
def _strikes(mode, subs, enemy_destroyer):
    if mode == STRIKE_NEVER or subs == 0:
        return False
    return mode == STRIKE_ALWAYS or not enemy_destroyer


@kernel
def fires_back(xb_, xr, xb, xn, rules):
    """The side's strike casualties fire in general fire (Revised: a side with a destroyer)."""
    return rules[RU_STRIKE_RETURN] == 1 and destroyer(xb_, xr, xb, xn)


@kernel
def air_on_subs(xb_, xr, xb, xn, rules):
    """The side's aircraft may hit submarines this round."""
    return rules[RU_AIR_ALWAYS] == 1 or destroyer(xb_, xr, xb, xn)


@kernel
def should_retreat(a, d, rounds, retreat, below, a_states, d_states, win_value):
    """Whether the attacker withdraws at the end of a round in the state pair (a, d).

    rounds: rounds fought so far; retreat int64[5] (kernels/common.py), below: win-probability
    threshold (< 0: none) against win_value[a, d], the attacker's chance if it fights on.
    """
    if retreat[R_ACTIVE] == 0 or a_states[a, S_MAY_RETREAT] == 0:
        return False
    if retreat[R_AFTER] > 0 and rounds >= retreat[R_AFTER]:
        return True
    if retreat[R_WHEN_LEFT] >= 0 and a_states[a, S_UNITS] <= retreat[R_WHEN_LEFT]:
        return True
    if retreat[R_ONLY_AIR] == 1 and a_states[a, S_HAS_LAND] == 0:
        return True
    if retreat[R_STRAFE] >= 0 and d_states[d, S_UNITS] <= retreat[R_STRAFE]:
        return True
    return below >= 0.0 and win_value[a, d] < below


@kernel
def takes(outcome, a, a_states):
    return outcome == ATTACKER_WIN and a_states[a, S_HAS_LAND] == 1


@kernel
def block_of(states, f):
    return states[f, S_BLOCK]


@kernel
def settle_walk(a, a_end, ast, ar, d, d_end, dst, dr):
    """settle() for two single walks (row = flat state): defenceless units, end, stalemate."""
    a_fires = ar[a, R_TOP] > 0
    d_fires = dr[d, R_TOP] > 0
    if dst[d, S_ALIVE] == 1 and dr[d, R_DEFENCELESS] == 1 and ast[a, S_ALIVE] == 1 and a_fires:
        d = d_end
        d_fires = False
    if ast[a, S_ALIVE] == 1 and ar[a, R_DEFENCELESS] == 1 and dst[d, S_ALIVE] == 1 and d_fires:
        a = a_end
        a_fires = False
    a_left = ast[a, S_ALIVE] == 1
    d_left = dst[d, S_ALIVE] == 1
    if not a_left:
        return (DEFENDER_WIN if d_left else DRAW), a, d
    if not d_left:
        return ATTACKER_WIN, a, d
    if not a_fires and not d_fires:
        return STALEMATE, a, d
    return CONTINUE, a, d


@kernel
def block_end(blocks, states, f):
    b = states[f, S_BLOCK]
    return blocks[b, B_OFFSET] + blocks[b, B_RADIX_N] - 1
