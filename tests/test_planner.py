"""battlecalc.plan: brute force over the whole pool, the monotonicity it assumes, the CLI."""

from __future__ import annotations

import itertools
import json

import pytest
from helpers import assert_mc_agrees, invoke

import battlecalc
from battlecalc import cli as cli_module
from battlecalc import planner
from battlecalc.planner import parse_goals, why_not_monotone

COST = {"revised": {"infantry": 3, "artillery": 4, "tank": 5, "fighter": 10, "bomber": 15},
        "1942-2e": {"infantry": 3, "artillery": 4, "tank": 6, "fighter": 10, "bomber": 12}}


def brute_force(rules, fixed, pool, goal, defend=False, **options):
    """Every force the pool describes, solved: {force tuple: Result} (no battle: None)."""
    names = list(pool)
    table = {}
    for counts in itertools.product(*[range(pool[n] + 1) for n in names]):
        force = {n: k for n, k in zip(names, counts, strict=True) if k}
        if not force:
            table[counts] = None
            continue
        att, dfn = (fixed, force) if defend else (force, fixed)
        table[counts] = battlecalc.simulate(rules=rules, attacker=att, defender=dfn,
                                            method="exact", **options)
    return names, table


def meets(result, goal):
    return result is not None and all(g.met({g.key: getattr(result, g.key)})
                                      for g in parse_goals(goal))


def lean_by_cost(rules, names, table, goal, top):
    """The brute-force answer for the cost objective: lean feasible forces, cheapest first,
    ties broken by the first goal's value (better first), then by the force."""
    feasible = {p for p, r in table.items() if meets(r, goal)}
    lean = [p for p in feasible
            if not any(p[i] and p[:i] + (p[i] - 1,) + p[i + 1:] in feasible
                       for i in range(len(p)))]
    first = parse_goals(goal)[0]
    sign = 1 if first.op == ">=" else -1

    def cost(p):
        return sum(COST[rules][n] * k for n, k in zip(names, p, strict=True))

    lean.sort(key=lambda p: (cost(p), -sign * getattr(table[p], first.key), p))
    return [(p, cost(p)) for p in lean[:top]]


def plan_points(result, names):
    return [(tuple(p.addition.get(n, 0) for n in names), p.cost) for p in result.plans]


@pytest.fixture(scope="module")
def small_attack():
    """1942 2E, AAA in the defence: 2 inf 1 tank 1 aa against a pool of 48 forces."""
    pool = {"infantry": 3, "artillery": 1, "tank": 2, "fighter": 1}
    names, table = brute_force("1942-2e", {"infantry": 2, "tank": 1, "aa": 1}, pool, "")
    return pool, names, table


@pytest.mark.parametrize("goal", ["takes_territory>=0.8", "attacker_win>=0.95",
                                  "takes_territory>=0.6, defender_win<=0.2"])
def test_cheapest_plans_match_brute_force(small_attack, goal):
    pool, names, table = small_attack
    result = battlecalc.plan(rules="1942-2e", defender="2 inf 1 tank 1 aa", pool=pool,
                             goal=goal, method="exact", top=5)
    expected = lean_by_cost("1942-2e", names, table, goal, 5)
    assert expected, "the case must have plans"
    assert plan_points(result, names) == expected
    assert result.search == "monotone"
    assert result.solves < len(table) - 1  # pruning: fewer battles than forces
    for plan in result.plans:  # each plan carries its own battle's numbers
        point = tuple(plan.addition.get(n, 0) for n in names)
        assert plan.result.takes_territory == pytest.approx(table[point].takes_territory,
                                                            abs=1e-12)


@pytest.mark.parametrize("objective,key,sign", [("loss", "attacker_ipc_loss", 1),
                                                ("swing", "tuv_swing", -1)])
def test_loss_and_swing_objectives_match_brute_force(small_attack, objective, key, sign):
    pool, names, table = small_attack
    goal = "takes_territory>=0.8"
    result = battlecalc.plan(rules="1942-2e", defender="2 inf 1 tank 1 aa", pool=pool,
                             goal=goal, objective=objective, method="exact", top=4)
    feasible = [p for p, r in table.items() if meets(r, goal)]
    feasible.sort(key=lambda p: (sign * getattr(table[p], key),
                                 sum(COST["1942-2e"][n] * k for n, k in zip(names, p,
                                                                          strict=True))))
    got = [pt for pt, _ in plan_points(result, names)]
    assert got == feasible[:4]


def test_exhaustive_search_matches_brute_force(small_attack):
    """A goal that adding a unit can move either way: every force is solved."""
    pool, names, table = small_attack
    goal = "takes_territory>=0.5, attacker_ipc_loss<=9"
    result = battlecalc.plan(rules="1942-2e", defender="2 inf 1 tank 1 aa", pool=pool,
                             goal=goal, method="exact")
    assert result.search == "exhaustive"
    assert "attacker_ipc_loss<=9" in result.exhaustive_because
    assert result.solves == len(table) - 1
    assert plan_points(result, names) == lean_by_cost("1942-2e", names, table, goal, 5)


def test_defence_plans_match_brute_force():
    pool = {"infantry": 4, "tank": 2, "fighter": 1}
    threat = {"infantry": 3, "artillery": 1, "tank": 2, "fighter": 1}
    goal = "takes_territory<=0.25"
    names, table = brute_force("revised", threat, pool, goal, defend=True)
    # the empty addition to an empty defender is no battle, hence no plan
    result = battlecalc.plan(rules="revised", attacker=threat, pool=pool, goal=goal,
                             defend=True, method="exact", top=3)
    assert plan_points(result, names) == lean_by_cost("revised", names, table, goal, 3)
    assert result.mode == "defend" and result.search == "monotone"


def test_sea_plans_match_brute_force():
    pool = {"submarine": 2, "destroyer": 2, "fighter": 1}
    goal = "attacker_win>=0.7"
    names, table = brute_force("1942-2e", {"destroyer": 1, "submarine": 1}, pool, goal,
                               sea=True)
    result = battlecalc.plan(rules="1942-2e", sea=True, defender="1 dd 1 sub", pool=pool,
                             goal=goal, method="exact")
    cost = {"submarine": 6, "destroyer": 8, "fighter": 10}
    feasible = {p for p, r in table.items() if meets(r, goal)}
    lean = sorted((p for p in feasible if not any(
        p[i] and p[:i] + (p[i] - 1,) + p[i + 1:] in feasible for i in range(len(p)))),
        key=lambda p: (sum(cost[n] * k for n, k in zip(names, p, strict=True)),
                       -table[p].attacker_win, p))
    assert len(lean) >= 2
    assert [pt for pt, _ in plan_points(result, names)] == lean[:5]
    assert result.search == "monotone"


def test_unreachable_goal_reports_the_whole_pool():
    result = battlecalc.plan(rules="revised", defender="4 inf", pool="2 inf",
                             goal="takes_territory>=0.5", method="exact")
    assert result.plans == []
    full = battlecalc.simulate(rules="revised", attacker="2 inf", defender="4 inf",
                               method="exact")
    assert result.best_reachable.takes_territory == pytest.approx(full.takes_territory,
                                                                  abs=1e-15)
    assert result.solves == 1  # the whole pool fails: nothing smaller can succeed
    assert "no force from the pool meets the goal" in result.table()


def test_max_cost_and_base_attacker():
    """Units sent in any case are not counted in the cost; max_cost caps the pool part."""
    plain = battlecalc.plan(rules="revised", defender="3 inf", pool="6 inf 3 tank",
                            goal="takes_territory>=0.7", method="exact", top=10)
    assert plain.plans
    cap = plain.plans[0].cost
    capped = battlecalc.plan(rules="revised", defender="3 inf", pool="6 inf 3 tank",
                             goal="takes_territory>=0.7", method="exact", top=10,
                             max_cost=cap)
    assert [p.cost for p in capped.plans] == [p.cost for p in plain.plans if p.cost <= cap]
    based = battlecalc.plan(rules="revised", defender="3 inf", pool="6 inf 3 tank",
                            attacker="1 tank", goal="takes_territory>=0.7", method="exact")
    first = based.plans[0]
    assert first.cost == sum(COST["revised"][n] * k for n, k in first.addition.items())
    assert first.result.attacker.endswith("tank")
    assert first.cost < plain.plans[0].cost


def test_monte_carlo_plans_are_reproducible_and_close_to_exact():
    args = dict(rules="revised", defender="2 inf", pool="4 inf 2 tank",
                goal="takes_territory>=0.85")
    mc = battlecalc.plan(**args, method="mc", trials=20_000, seed=3)
    again = battlecalc.plan(**args, method="mc", trials=20_000, seed=3)
    assert mc.seed == 3 and mc.method == "mc"
    assert [p.addition for p in mc.plans] == [p.addition for p in again.plans]
    assert mc.plans
    for plan in mc.plans:
        exact = battlecalc.simulate(rules="revised", attacker=plan.addition, defender="2 inf",
                                    method="exact").takes_territory
        assert_mc_agrees(plan.result, {"takes_territory": exact},
                         probabilities=("takes_territory",), means=(), slack=0.0)
        assert plan.result.takes_territory >= 0.85
    assert "seed 3" in mc.table()


# --- monotonicity, the assumption behind the pruning -----------------------------------------

MONOTONE_SAMPLE = [
    # rules, attacker, defender, run options
    ("revised", {"infantry": 3, "artillery": 1, "tank": 1, "fighter": 1},
     {"infantry": 3, "tank": 1, "aa": 1}, {}),
    ("1942-2e", {"infantry": 2, "artillery": 1, "tank": 1, "fighter": 2, "bomber": 1},
     {"infantry": 3, "artillery": 1, "aa": 1, "fighter": 1}, {}),
    ("1942-2e", {"infantry": 3, "tank": 1, "fighter": 1},
     {"infantry": 2, "tank": 1, "aa": 1}, {"keep_land": 1, "aa_last": True}),
    ("revised", {"infantry": 2, "artillery": 2, "tank": 1, "bomber": 1},
     {"infantry": 3, "artillery": 1, "fighter": 1}, {"attacker_ool": "weakest"}),
    ("1942-2e", {"infantry": 3, "artillery": 1, "tank": 2, "fighter": 1},
     {"infantry": 4, "tank": 1, "aa": 1}, {"attacker_ool": "tank,fighter",
                                          "retreat_after": 2}),
    ("revised", {"infantry": 4, "tank": 1, "fighter": 1},
     {"infantry": 3, "tank": 1, "aa": 1}, {"retreat_when_left": 2}),
    ("1942-2e", {"infantry": 2, "tank": 1, "fighter": 2},
     {"infantry": 3, "artillery": 1, "aa": 1}, {"retreat_when_only_air": True}),
]
SEA_SAMPLE = [
    ("1942-2e", {"submarine": 2, "destroyer": 1, "fighter": 1},
     {"destroyer": 1, "carrier": 1, "fighter": 1, "submarine": 1}, {"sea": True}),
    ("revised", {"submarine": 1, "battleship": 1, "bomber": 1},
     {"submarine": 2, "destroyer": 1, "transport": 1}, {"sea": True}),
]


@pytest.mark.parametrize("rules,attacker,defender,options", MONOTONE_SAMPLE + SEA_SAMPLE)
def test_adding_a_unit_never_hurts_its_side(rules, attacker, defender, options):
    """Adding any one attacking unit never lowers attacker_win or takes_territory (and never
    raises defender_win without a retreat policy); adding a defending unit, the reverse."""
    retreats = any(k.startswith("retreat") for k in options)
    base = battlecalc.simulate(rules=rules, attacker=attacker, defender=defender,
                               method="exact", **options)
    if options.get("sea"):
        additions = [("attack", u) for u in ("submarine", "destroyer", "fighter", "bomber",
                                             "battleship")]
        additions += [("defend", u) for u in ("submarine", "destroyer", "carrier")]
    else:
        additions = [("attack", u) for u in ("infantry", "artillery", "tank", "fighter",
                                             "bomber")]
        additions += [("defend", u) for u in ("infantry", "tank", "fighter", "aa")]
    for side, unit in additions:
        att, dfn = dict(attacker), dict(defender)
        target = att if side == "attack" else dfn
        target[unit] = target.get(unit, 0) + 1
        r = battlecalc.simulate(rules=rules, attacker=att, defender=dfn, method="exact",
                                **options)
        helps = 1 if side == "attack" else -1
        for key in ("attacker_win", "takes_territory"):
            assert helps * (getattr(r, key) - getattr(base, key)) >= -1e-12, (side, unit, key)
        if not retreats:
            assert helps * (base.defender_win - r.defender_win) >= -1e-12, (side, unit)


def test_counterexamples_where_the_search_does_not_prune():
    # --retreat-below: with a tank more, the attacker fights on at states it would have left
    small = battlecalc.simulate(rules="revised", attacker="2 inf", defender="1 inf",
                                method="exact", retreat_below=0.3)
    more = battlecalc.simulate(rules="revised", attacker="2 inf 1 tank", defender="1 inf",
                               method="exact", retreat_below=0.3)
    assert more.defender_win > small.defender_win + 1e-3
    # --strafe: an extra defender keeps the attacker from retreating, so it wins more often
    attacker = "5 inf 1 art 2 tank 2 ftr 3 bmb"
    strafe = [battlecalc.simulate(rules="revised", attacker=attacker, defender=d,
                                  method="exact", strafe=2)
              for d in ("5 inf 1 aa 2 ftr", "6 inf 1 aa 2 ftr")]
    assert strafe[1].attacker_win > strafe[0].attacker_win + 0.01
    # --retreat-air-loss: a fighter more is an aircraft to retreat for, so the attacker that
    # would have fought on (and won half the time) withdraws
    air = [battlecalc.simulate(rules="revised", attacker=a, defender="3 inf 1 tank",
                               method="exact", retreat_air_loss=0.01)
           for a in ("4 inf 1 tank", "4 inf 1 tank 1 ftr")]
    assert air[1].attacker_win < air[0].attacker_win - 0.1
    # and the planner knows it
    goals = parse_goals("takes_territory>=0.9")
    assert why_not_monotone(goals, "attack", {"retreat_below": 0.3})
    assert "--retreat-air-loss" in why_not_monotone(goals, "attack", {"retreat_air_loss": 0.3})
    assert why_not_monotone(goals, "defend", {"strafe": 2})
    assert why_not_monotone(goals, "attack", {"attacker_ool": "smart"})
    assert why_not_monotone(parse_goals("defender_win<=0.1"), "attack", {"retreat_after": 1})
    assert why_not_monotone(goals, "attack", {"retreat_after": 1, "keep_land": 1}) is None
    assert why_not_monotone(parse_goals("takes_territory<=0.1"), "attack", {})
    result = battlecalc.plan(rules="revised", defender="2 inf", pool="3 inf 1 tank",
                             goal="takes_territory>=0.5", method="exact", retreat_below=0.3)
    assert result.search == "exhaustive" and "--retreat-below" in result.exhaustive_because


# --- input errors and the command line --------------------------------------------------------

@pytest.mark.parametrize("kwargs,fragment", [
    ({"goal": "takes>=0.9"}, "unknown goal key 'takes'"),
    ({"goal": "takes_territory=0.9"}, "write KEY>=VALUE or KEY<=VALUE"),
    ({"goal": ""}, "no goal given"),
    ({"pool": ""}, "the pool is empty"),
    ({"pool": "2 battleship"}, "battleship is a sea unit"),
    ({"objective": "speed"}, "objective must be one of cost, loss, swing"),
    ({"top": 0}, "top must be 1 or more"),
    ({"defender": None}, "the defender has no units"),
    ({"defend": True}, "--defend needs the attacking army"),
    ({"sea": True}, "takes_territory is always 0 in sea battles"),
    ({"search": "fast"}, "search must be one of"),
])
def test_bad_input(kwargs, fragment):
    args = {"rules": "revised", "defender": "2 inf", "pool": "2 inf 1 tank",
            "goal": "takes_territory>=0.5", "method": "exact", **kwargs}
    with pytest.raises(battlecalc.BattleInputError, match=fragment):
        battlecalc.plan(**args)


def test_goal_parsing():
    goals = parse_goals("attacker_win >= 90%, attacker_ipc_loss<=20")
    assert [(g.key, g.op, g.value) for g in goals] == [("attacker_win", ">=", 0.9),
                                                       ("attacker_ipc_loss", "<=", 20.0)]


def cli_ok(*args):
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


PLAN_ARGS = ["plan", "--rules", "revised", "-d", "2 inf", "--pool", "4 inf 2 tank",
             "--goal", "takes_territory>=0.8", "--method", "exact"]


def test_cli_plan_formats():
    table = cli_ok(*PLAN_ARGS)
    assert "1         11  2 infantry, 1 tank" in table
    assert "takes 81.06%" in table
    data = json.loads(cli_ok(*PLAN_ARGS, "--format", "json"))
    assert [(p["attacker"], p["cost"]) for p in data["plans"]] == [
        ("2 infantry, 1 tank", 11), ("1 infantry, 2 tank", 13)]
    direct = battlecalc.simulate(rules="revised", attacker="2 inf 1 tank", defender="2 inf",
                                 method="exact")
    assert data["plans"][0]["takes_territory"] == pytest.approx(direct.takes_territory,
                                                                abs=1e-15)
    assert data["search"] == "monotone" and data["solves"] <= 15
    csv_text = cli_ok(*PLAN_ARGS, "--format", "csv", "--top", "1")
    header, row = csv_text.splitlines()
    assert header.startswith("rank,cost,addition,rules,")
    assert row.startswith('1,11,"2 infantry, 1 tank",revised,')


def test_cli_plan_bad_input_exits_2():
    for extra, fragment in ((["--goal", "win>=1"], "unknown goal key"),
                            (["--minimize", "loss", "--maximize", "swing"], "not both")):
        result = invoke(*PLAN_ARGS, *extra)
        assert result.exit_code == 2
        assert result.stdout == ""
        assert result.stderr.startswith("Error: ") and fragment in result.stderr


# --- progress: what a new user waits for (a plan says what it is doing) -------------------


# the planner module's doctest: 2 infantry against 4 inf 2 tank, goal takes_territory >= 0.8
SMALL_PLAN = dict(rules="revised", defender="2 inf", pool="4 inf 2 tank",
                  goal="takes_territory>=0.8", method="exact")


class Recorder:
    def __init__(self):
        self.calls = []

    def __call__(self, done, total, what="trials"):
        self.calls.append((done, total, what))

    def search(self):
        return [(done, total) for done, total, what in self.calls
                if what == planner.PROGRESS_STEP]


def assert_monotone_to_completion(steps, total):
    assert steps, "no progress reported"
    assert {t for _, t in steps} == {total}
    dones = [d for d, _ in steps]
    assert dones == sorted(dones) and 0 <= dones[0]
    assert steps[-1] == (total, total)


@pytest.mark.parametrize("options, total", [
    # cost: the candidates are the compositions of the pool without its line (infantry, the
    # most copies): 0, 1 or 2 tanks
    ({}, 3),
    # --minimize loss: every force of the pool, (4 + 1) x (2 + 1)
    ({"objective": "loss"}, 15),
    # --retreat-below makes the search exhaustive: every force again
    ({"retreat_below": 0.3}, 15),
])
def test_plan_reports_monotone_progress_to_completion(options, total):
    progress = Recorder()
    with_progress = battlecalc.plan(**SMALL_PLAN, **options, progress=progress)
    assert_monotone_to_completion(progress.search(), total)
    without = battlecalc.plan(**SMALL_PLAN, **options)
    assert ([(p.addition, p.cost) for p in with_progress.plans]
            == [(p.addition, p.cost) for p in without.plans])
    if not options:  # the module's doctest answer
        assert [(battlecalc.format_army(p.addition), p.cost) for p in with_progress.plans] == [
            ("2 infantry, 1 tank", 11), ("1 infantry, 2 tank", 13)]


def test_plan_passes_on_the_compiling_notice_and_nothing_else_of_its_battles(monkeypatch):
    real = planner.simulate

    def stub(*args, progress=None, **kwargs):
        progress(0, 0, "compiling kernels (first run only)")
        progress(0, 0, "exact solve")
        progress(5, 10, "trials")
        progress(5, 10)
        return real(*args, **kwargs)

    monkeypatch.setattr(planner, "simulate", stub)
    progress = Recorder()
    result = battlecalc.plan(**SMALL_PLAN, progress=progress)
    assert result.solves >= 1
    other = [c for c in progress.calls if c[2] != planner.PROGRESS_STEP]
    assert other == [(0, 0, "compiling kernels (first run only)")] * result.solves
    assert_monotone_to_completion(progress.search(), 3)


def test_plan_command_draws_its_progress_on_a_terminal(monkeypatch):
    monkeypatch.setattr(cli_module, "_stderr_is_terminal", lambda: True)
    monkeypatch.setattr(cli_module, "PROGRESS_DELAY_S", 0.0)
    monkeypatch.setattr(cli_module._Progress, "REDRAW_S", 0.0)
    result = invoke("plan", "--rules", "revised", "-d", "2 inf", "--pool", "4 inf 2 tank",
                    "--goal", "takes_territory>=0.8", "--method", "exact")
    assert result.exit_code == 0, result.output
    assert "1         11  2 infantry, 1 tank" in result.stdout
    assert "\rplan search [" in result.stderr
    assert "/3\x1b[K" in result.stderr
    assert result.stderr.endswith("\r\x1b[K")  # the line is cleared at the end


def test_plan_command_prints_no_progress_off_a_terminal():
    result = invoke("plan", "--rules", "revised", "-d", "2 inf", "--pool", "4 inf 2 tank",
                    "--goal", "takes_territory>=0.8", "--method", "exact")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
