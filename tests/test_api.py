"""The Python API (battlecalc.api): simulate's kept battles, prepare, choose and solve.

simulate's fast path (issue 19: the per-call floor) gives the slow path's answer.  The fast
path: a call with plain-data arguments keeps its checked, compiled battle (api.KeptBattle)
and a Result builds its laws, dicts and texts on first use (results._Pending); from
the second call on, a kept battle solved exactly by compiled kernels is solved again by its
compiled kernel, called straight.  The slow path: the battle checked (spec.simulate_spec) and
compiled (fresh side tables) again and solved through api.solve, its Result built at once
(results.LAZY_STATES = 0).  Every to_dict key, the table, the CSV row and the laws must be
equal, on battles of every kind.  A kept battle keeps no answer and no choice: each call
chooses its plan again (under the limits it is given) and solves again.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from tiers import sampled

import battlecalc
from battlecalc import api, results, solver
from battlecalc.compile import forget_tables
from battlecalc.errors import BattleInputWarning
from battlecalc.kernels import jit
from battlecalc.solver import exact

BATTLES = [
    dict(rules="1942-2e", attacker="1 tank", defender="3 fighter 3 aa"),
    dict(rules="1942-2e", attacker="1 infantry", defender="11 artillery 6 fighter"),
    dict(rules="revised", attacker="2 inf", defender="1 inf", rounds_distribution=True),
    dict(rules="revised", attacker="3 inf 2 ftr 1 bmb", defender="4 inf 1 aa",
         attacker_tech="heavy_bombers"),
    dict(rules="1942-2e", attacker="6 inf 3 art 3 tank 2 ftr", defender="8 inf 2 art 1 tank 1 aa",
         attacker_ool="tank,artillery", retreat_when_left=3),
    dict(rules="1942-2e", attacker="2 sub 1 destroyer 1 fighter", defender="1 cruiser 2 sub",
         sea=True, defender_submerge="when-only-subs-left"),
    dict(rules="1940-2e", attacker="2 inf 1 tank", landing="2 inf 1 art", bombard="1 bb 1 ca",
         defender="4 inf 1 aa 1 fighter"),
    dict(rules="1942-2e", attacker="4 inf 2 tank", defender="5 inf", dice="low_luck",
         strafe=2),
    dict(rules="classic", attacker="3 inf 1 tank", defender="3 inf", retreat_below=0.4),
    dict(rules="1942-2e", attacker="5 inf 2 tank", defender="4 inf 1 art", method="mc",
         trials=20_000, seed=7),
    dict(rules="1942-2e", attacker={"infantry": 3, "armour": 1}, defender="2 inf",
         keep_land=1),
]
IDS = [f"{b['rules']}:{b['attacker']}-v-{b['defender']}" for b in BATTLES]


def _slow(battle: dict, monkeypatch) -> battlecalc.Result:
    """The battle checked, compiled from fresh tables and solved again, built at once."""
    arguments = _defaults() | battle
    forget_tables()
    with monkeypatch.context() as patch:
        patch.setattr(results, "LAZY_STATES", 0)
        spec, run = api.simulate_spec(arguments)
        return api.solve(spec, run)


def _defaults() -> dict:
    import inspect

    return {name: p.default for name, p in inspect.signature(api.simulate).parameters.items()
            if p.kind is not p.VAR_KEYWORD} | {"formula_options": {}}


def _table(result) -> list[str]:
    return [line for line in result.table().split("\n") if not line.startswith("method:")]


def _without_clock(data: dict) -> dict:
    return {k: v for k, v in data.items() if k != "elapsed_s"}


def _laws_equal(fast, slow) -> None:
    for name in ("attacker_law", "defender_law"):
        a, b = getattr(fast, name), getattr(slow, name)
        assert a.units == b.units
        for field in ("survivors", "ipc_lost", "probability"):
            assert np.array_equal(getattr(a, field), getattr(b, field)), (name, field)
            assert getattr(a, field).dtype == getattr(b, field).dtype, (name, field)
    for name in ("rounds_law", "swing_law"):
        a, b = getattr(fast, name), getattr(slow, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True)), name


# (every other battle in the quick tier, all in the slow: tests/tiers.py)
@pytest.mark.parametrize("battle", sampled([(b,) for b in BATTLES], 2, IDS))
def test_fast_path_gives_the_slow_paths_answer(battle, monkeypatch):
    api.forget_compiled()
    first = battlecalc.simulate(**battle)  # checked and compiled, a plan kept
    again = battlecalc.simulate(**battle)  # from the plan
    slow = _slow(battle, monkeypatch)
    assert "_pending" not in vars(slow)  # built at once
    for fast in (first, again):
        assert "_pending" in vars(fast)  # small battles: built on first use
        assert list(fast.to_dict()) == list(slow.to_dict())
        assert _without_clock(fast.to_dict()) == _without_clock(slow.to_dict())
        assert _table(fast) == _table(slow)
        assert _without_clock(fast.flat_row()) == _without_clock(slow.flat_row())
        _laws_equal(fast, slow)
        for which in ("survivors", "ipc", "rounds", "swing"):
            assert fast.distribution_csv(which) == slow.distribution_csv(which)


def test_a_kept_plan_is_solved_again_every_call(monkeypatch):
    # no answer is kept: the second call runs the solver again, on the kept prepared solve
    # (solver.ExactSolve: the same tables), into outputs of its own
    api.forget_compiled()
    made = []
    real = exact._outputs
    monkeypatch.setattr(exact, "_outputs", lambda shapes: made.append(real(shapes)) or made[-1])
    battle = dict(rules="revised", attacker="2 inf", defender="1 inf", method="exact")
    r1 = battlecalc.simulate(**battle)
    [plan] = api._kept.values()
    prepared = plan.exact
    r2 = battlecalc.simulate(**battle)
    assert plan.exact is prepared is not None  # the same prepared solve
    assert len(made) == 2 and made[0].outcomes is not made[1].outcomes  # written afresh
    assert r1 is not r2 and r1.attacker_law is not r2.attacker_law
    # Revised 2 inf v 1 inf by hand (test_results): the attacker wins 11/29 + 11/58 + 25/232
    for r in (r1, r2):
        assert r.attacker_win == pytest.approx(11 / 29 + 11 / 58 + 25 / 232, abs=1e-12)


COMPILED = pytest.mark.skipif(jit.plain_kernels(), reason="BATTLECALC_PLAIN_KERNELS=1: "
                              "nothing is compiled")


@COMPILED
def test_a_kept_plan_calls_its_compiled_kernel_directly():
    # from the second solve of a kept plan on, the compiled kernel's overload is called without
    # the dispatcher (numba_private.overload); its answers are the dispatcher's, which the
    # first call used, and the slow path's: every key of every battle small enough to be short
    jit.compiled()
    api.forget_compiled()
    for battle in BATTLES:
        results_ = [battlecalc.simulate(**battle) for _ in range(3)]
        plan = api._kept[next(reversed(api._kept))]
        if results_[0].method != "exact" or battle.get("retreat_below") is not None:
            assert plan.exact is None  # Monte Carlo, or a table of the call's own
            continue
        assert plan.exact.entry, battle  # found, and called
        first = _without_clock(results_[0].to_dict())
        for again in results_[1:]:
            assert _without_clock(again.to_dict()) == first
            _laws_equal(again, results_[0])
    # a solve not kept (a battle of a sequence) looks for no overload
    once = solver.ExactSolve(plan.compiled, plan.exact.plan)
    once.run(), once.run()
    assert once.entry is None


def test_a_kept_battle_is_solved_by_the_plan_of_the_limits_it_is_given():
    # a kept battle keeps no choice: solved under other limits (test_variants' pruning
    # thresholds, far above the shipped ones), its plan is the one chosen under them, and
    # simulate solves it by simulate's plan again afterwards
    api.forget_compiled()
    battle = dict(rules="revised", attacker="14 inf 5 art 5 tank", defender="18 inf 3 tank 1 ftr",
                  method="exact")
    full = battlecalc.simulate(**battle)
    [kept] = api._kept.values()
    prepared = kept.exact
    hard = solver.Limits(prune_pairs=0, prune_budget=1e-5, prune_state_eps=1e-7,
                         prune_tail_eps=1e-8)
    pruned = api.solve(kept.battle, kept.run, compiled=kept.compiled, kept=kept, limits=hard)
    assert len(api._kept) == 1  # one kept battle, solved under both limits
    assert kept.exact is prepared  # (simulate's prepared solve, kept for simulate)
    assert full.pruned < 1e-12 < 1e-9 < pruned.pruned <= 1e-5
    # what the budget left out, and no more, is missing from each outcome
    gap = full.attacker_win - pruned.attacker_win
    assert -1e-14 <= gap <= pruned.pruned + 1e-14
    assert battlecalc.simulate(**battle).attacker_win == full.attacker_win


def test_one_trial_monte_carlo_reports_probabilities_as_floats():
    # build_result divides counts by the trials (a probability), even by one trial
    r = battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf", method="mc",
                            trials=1, seed=3)
    values = [r.attacker_win, r.defender_win, r.draw, r.attacker_ipc_loss]
    assert all(type(v) is float for v in values)
    assert r.attacker_win + r.defender_win + r.draw == 1.0


def test_plans_are_bounded_and_kept_only_for_plain_data(monkeypatch):
    api.forget_compiled()
    monkeypatch.setattr(api, "MAX_KEPT", 3)
    for n in range(1, 6):
        battlecalc.simulate(rules="revised", attacker=f"{n} inf", defender="1 inf",
                            method="exact")
    assert len(api._kept) == 3
    api.forget_compiled()
    battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf", method="exact",
                        progress=lambda *a: None)
    battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf", method="exact",
                        seed=np.int64(3))
    assert len(api._kept) == 0


def test_a_battle_that_warns_warns_on_every_call():
    api.forget_compiled()
    battle = dict(rules="revised", attacker="2 inf", defender="1 inf", defender_tech="jets",
                  method="exact")
    for _ in range(2):
        with pytest.warns(BattleInputWarning, match="jets changes nothing"):
            battlecalc.simulate(**battle)
    assert len(api._kept) == 0


def test_true_and_one_are_different_keys():
    # rounds_distribution=1 is refused (a flag must be a bool), whatever ran before
    api.forget_compiled()
    battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf", method="exact",
                        rounds_distribution=True)
    with pytest.raises(battlecalc.errors.BattleInputError, match="rounds_distribution"):
        battlecalc.simulate(rules="revised", attacker="1 inf", defender="1 inf",
                            method="exact", rounds_distribution=1)


def test_a_lazy_result_pickles_with_every_field():
    # the first call's Result (build_result) and a later one's (a kept plan solved again
    # straight where kernels are compiled: ExactResults.of)
    api.forget_compiled()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            r = battlecalc.simulate(rules="1942-2e", attacker="3 inf 1 ftr",
                                    defender="2 inf 1 aa", method="exact")
            assert "_pending" in vars(r) and "attacker_ipc_loss" not in vars(r)  # not built
            copy = pickle.loads(pickle.dumps(r))
            assert "_pending" not in vars(copy)
            assert copy.to_dict() == r.to_dict()
            _laws_equal(copy, r)


def test_spec_key_keys_plain_data_only():
    key = lambda **changes: api.spec_key(_defaults() | dict(rules="1942-2e") | changes)  # noqa: E731
    plain = key(attacker="2 inf", defender="1 inf")
    as_dict = key(attacker={"infantry": 2}, defender="1 inf")
    assert plain is not None and as_dict is not None and plain != as_dict
    assert as_dict == key(attacker={"infantry": 2}, defender="1 inf")  # equal data, equal key
    assert as_dict != key(attacker={"infantry": 3}, defender="1 inf")
    assert key(attacker_ool=["tank"]) == key(attacker_ool=["tank"]) != key(attacker_ool="tank")
    # not plain data: no key (the battle is checked and compiled on every call)
    assert key(attacker={"infantry": np.int64(2)}) is None
    assert key(attacker_ool=["tank", 1]) is None
    assert key(defender={"infantry": 2}, seed=np.int64(3)) is None
    assert key(progress=print) is None
    # the same key from any mapping of the same arguments in the same order
    arguments = _defaults() | dict(rules="1942-2e", attacker={"infantry": 2})
    reordered = {"formula_options": {}} | {k: v for k, v in arguments.items()
                                           if k != "formula_options"}
    assert api.spec_key(reordered) == api.spec_key(arguments) is not None


@COMPILED
def test_one_plan_solved_from_many_threads_at_once():
    # a kept plan's prepared solve is shared: each solve writes outputs of its own
    from concurrent.futures import ThreadPoolExecutor

    jit.compiled()
    api.forget_compiled()
    battles = [dict(rules="1942-2e", attacker="1 tank", defender="3 fighter 3 aa", method="exact"),
               dict(rules="1942-2e", attacker="2 sub 1 destroyer 1 fighter",
                    defender="1 cruiser 2 sub", sea=True, method="exact")]
    serial = [_without_clock(battlecalc.simulate(**b).to_dict()) for b in battles]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda i: battlecalc.simulate(**battles[i % 2]), range(400)))
    assert all(api._kept[k].exact.entry for k in api._kept)
    for i, r in enumerate(answers):
        assert _without_clock(r.to_dict()) == serial[i % 2]


def test_simulate_keys_every_parameter_in_order():
    # simulate's `values` (a kept plan's key, and the arguments it checks) name every
    # parameter but formula_options, in the order of the signature: those but
    # spec.USUAL_DEFAULTS, then (`values +=`, where not all of them are at their defaults)
    # those, which end the signature
    import ast
    import inspect
    import textwrap

    from battlecalc.spec import UNTYPED_KEYS, USUAL_DEFAULTS

    tree = ast.parse(textwrap.dedent(inspect.getsource(api.simulate)))
    assigned = {node.targets[0].id: node.value for node in ast.walk(tree)
                if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}
    added = {node.target.id: node.value for node in ast.walk(tree)
             if isinstance(node, ast.AugAssign) and isinstance(node.value, ast.Tuple)}
    parameters = [name for name, p in inspect.signature(api.simulate).parameters.items()
                  if p.kind is not p.VAR_KEYWORD]
    usual = parameters[-len(USUAL_DEFAULTS):]
    assert usual == list(USUAL_DEFAULTS)
    assert [api._DEFAULTS[name] for name in usual] == list(USUAL_DEFAULTS.values()) == list(
        api._USUAL_VALUES)
    assert [name.id for name in assigned["values"].elts + added["values"].elts] == list(
        api._PARAMETERS) == parameters
    assert [name.id for name in added["values"].elts] == usual
    # and their types, in the same order, but those of spec.UNTYPED_KEYS (text wherever a
    # plan is kept): type(attacker), type(defender), ... as spec_key's key has them
    assert [(call.func.id, *(a.id for a in call.args))
            for call in assigned["kinds"].elts + added["kinds"].elts] == [
        ("type", name) for name in parameters if name not in UNTYPED_KEYS]
    # `usual` tests each of USUAL_DEFAULTS (`is None`, or its type and value)
    tested = {node.left.id for node in ast.walk(assigned["usual"])
              if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name)}
    assert tested == set(USUAL_DEFAULTS)


@COMPILED
def test_the_usual_key_is_spec_keys():
    # a kept battle called with USUAL_DEFAULTS at their defaults (left out, or given) is found
    # by simulate's short key, which is spec_key's; given other values, or the defaults as
    # values of other types, it is another key (checked: True is not 1)
    from battlecalc.spec import USUAL_DEFAULTS

    jit.compiled()
    api.forget_compiled()
    battle = dict(rules="1942-2e", attacker="2 inf 1 art", defender="2 inf", method="exact")
    first = battlecalc.simulate(**battle)
    battlecalc.simulate(**battle)
    [key] = api._kept
    assert len(key[1]) == len(api._PARAMETERS) - len(USUAL_DEFAULTS)
    assert key == api.spec_key(api._DEFAULTS | battle | dict(formula_options={}))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(api, "_kept_battle", lambda *args: pytest.fail("checked again"))
        again = battlecalc.simulate(**battle, **USUAL_DEFAULTS)
    assert _without_clock(again.to_dict()) == _without_clock(first.to_dict())
    for name, value in dict(start_round=True, hits_on_attacker=False, bombard_hits=0.0,
                            start_round_=1.0).items():
        with pytest.raises(battlecalc.errors.BattleInputError, match=name.rstrip("_")):
            battlecalc.simulate(**battle, **{name.rstrip("_"): value})
    assert len(api._kept) == 1
    # a battle in progress: the whole key, spec_key's as well
    started = dict(start_step="general_casualties", hits_on_defender=1)
    later = battlecalc.simulate(**battle, **started)
    assert later.attacker_win != first.attacker_win
    assert len(api._kept) == 2
    battlecalc.simulate(**battle, **started)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(api, "_kept_battle", lambda *args: pytest.fail("checked again"))
        for _ in range(2):
            assert battlecalc.simulate(**battle, **started).attacker_win == later.attacker_win


@COMPILED
def test_a_kept_exact_plan_is_solved_without_checking_again(monkeypatch):
    # from the second call on, a kept plan solved exactly reaches neither _plan nor solve:
    # its key (the values and their types) is spec_key's, and the result is the same
    jit.compiled()
    api.forget_compiled()
    battle = dict(rules="1942-2e", attacker="1 tank", defender="2 bomber 2 aa", method="exact")
    first, second = battlecalc.simulate(**battle), battlecalc.simulate(**battle)

    def refused(*args, **kwargs):
        raise AssertionError("checked again")

    monkeypatch.setattr(api, "_kept_battle", refused)
    monkeypatch.setattr(api, "solve", refused)
    for again in (battlecalc.simulate(**battle), battlecalc.simulate(**dict(reversed(
            battle.items())))):
        assert _without_clock(again.to_dict()) == _without_clock(first.to_dict())
        _laws_equal(again, second)
    # other values, or the same values of other types, are other plans
    with pytest.raises(AssertionError, match="checked again"):
        battlecalc.simulate(**battle, sea=0)
    with pytest.raises(AssertionError, match="checked again"):
        battlecalc.simulate(**battle, trials=float(api.DEFAULT_TRIALS))


@COMPILED
def test_a_kept_exact_plan_of_a_dict_army_is_solved_again_straight(monkeypatch):
    # a dict among the values: the plan is found by spec_key's key (_plan), then solved as
    # straight as any kept plan
    jit.compiled()
    api.forget_compiled()
    battle = dict(rules="1942-2e", attacker={"armour": 1}, defender="2 bomber 2 aa",
                  method="exact")
    first, second = battlecalc.simulate(**battle), battlecalc.simulate(**battle)
    monkeypatch.setattr(api, "solve", lambda *args: pytest.fail("solved through solve"))
    again = battlecalc.simulate(**battle)
    assert _without_clock(again.to_dict()) == _without_clock(first.to_dict())
    _laws_equal(again, second)


def test_a_kept_battle_follows_the_methods_limits():
    # a kept battle's method is chosen at each call, under the limits the call is given
    api.forget_compiled()
    battle = dict(rules="revised", attacker="2 inf 1 tank", defender="3 inf")
    for _ in range(3):
        assert battlecalc.simulate(**battle, method="exact").method == "exact"
        assert battlecalc.simulate(**battle).method == "exact"  # auto
    kept = {p.run.method: p for p in api._kept.values()}
    assert set(kept) == {"exact", "auto"}

    def solve(method, limits):
        plan = kept[method]
        return api.solve(plan.battle, plan.run, compiled=plan.compiled, kept=plan,
                         limits=limits).method

    with pytest.raises(battlecalc.errors.BattleInputError, match="too large"):
        solve("exact", solver.Limits(max_exact_seconds=1e-12))
    assert solve("auto", solver.Limits(max_exact_seconds=1e-12)) == "mc"
    assert solve("auto", solver.Limits(mc_rate_walk=10**15, mc_rate_general=10**15)) == "mc"
    assert solve("auto", solver.LIMITS) == "exact"
    assert battlecalc.simulate(**battle).method == "exact"


def test_a_kept_plans_result_follows_the_lazy_limits(monkeypatch):
    # results.LAZY_STATES is read at every call, kept plan or not
    api.forget_compiled()
    battle = dict(rules="1942-2e", attacker="2 inf 1 tank", defender="2 inf 1 aa",
                  method="exact")
    lazy = [battlecalc.simulate(**battle) for _ in range(3)]
    assert all("_pending" in vars(r) for r in lazy)
    monkeypatch.setattr(results, "LAZY_STATES", 0)
    eager = battlecalc.simulate(**battle)
    assert "_pending" not in vars(eager) and "attacker_ipc_loss" in vars(eager)
    for r in lazy:
        assert _without_clock(eager.to_dict()) == _without_clock(r.to_dict())
        _laws_equal(eager, r)


def test_prepare_choose_and_solve_are_simulates_steps():
    # simulate = prepare (check, compile) + choose (the plan) + solve (the plan carried out)
    battle = dict(rules="1942-2e", attacker="3 inf 1 art 1 ftr", defender="3 inf 1 aa",
                  method="exact")
    spec, run, compiled = api.prepare(**battle)
    assert run.method == "exact" and compiled.attacker.n_states > 0
    plan = api.choose(spec, run, compiled)
    assert plan == solver.choose(compiled, "exact", run.trials, run.rounds_distribution)
    assert plan.method == "exact" and api.choose(spec, run) == plan  # (compiled again)
    result = api.solve(spec, run, compiled=compiled, solve_plan=plan)
    expected = battlecalc.simulate(**battle)
    assert _without_clock(result.to_dict()) == _without_clock(expected.to_dict())
    with pytest.raises(battlecalc.errors.BattleInputError, match="formula edition"):
        api.prepare(rules="formula", attacker="3 army", defender="2 army")
