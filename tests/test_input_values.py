"""Values of the Python API that used to escape as Python errors (issue 29, items 8, 9, 14):
integers too large for a float, a facility that is not text, a progress callback of the wrong
arity.  Each is refused up front with BattleInputError naming the argument, before any work."""

from __future__ import annotations

import functools

import pytest

import battlecalc
from battlecalc import BattleInputError
from battlecalc.options import OPTIONS

HUGE = [10**400, -(10**400), 2**1024]  # beyond a float (float() raises OverflowError)
LAND = dict(rules="revised", attacker="2 inf", defender="1 inf")
FORMULA = dict(rules="formula", attacker="2 army", defender="1 army")
NUMERIC = [o for o in OPTIONS if o.kind in ("int", "trials", "float", "exchanges")]


def _refused_or_answered(call) -> None:
    """A huge number is refused with BattleInputError, or read for what it is (retreat with
    10**400 units left is retreat with every unit); never another exception."""
    try:
        call()
    except BattleInputError:
        pass


# ----------------------------------------------------------------------------- item 8

@pytest.mark.parametrize("value", HUGE, ids=["10**400", "-10**400", "2**1024"])
def test_huge_integers_for_every_number_option(value):
    for option in NUMERIC:
        base = FORMULA if option.formula_only else LAND
        kwargs = {**base, "method": "mc" if option.name in ("trials", "seed") else "exact",
                  "trials": 1000, option.name: value}
        _refused_or_answered(lambda kwargs=kwargs: battlecalc.simulate(**kwargs))
        frame = battlecalc.sweep([{**base, option.name: value}], workers=1)
        # a sweep row that cannot run says why in its error column; nothing is raised
        assert len(frame) == 1


def test_retreat_below_beyond_a_float_is_a_row_error_of_the_sweep():
    frame = battlecalc.sweep([{**LAND, "retreat_below": 10**400}], workers=1)
    (error,) = frame["error"]
    assert error.startswith("retreat_below must be a finite number (at most about 1.8e+308), "
                            "got a 1329-bit integer"), error


@pytest.mark.parametrize("max_cost", HUGE, ids=["10**400", "-10**400", "2**1024"])
def test_plan_max_cost_beyond_a_float_is_refused(max_cost):
    with pytest.raises(BattleInputError, match=r"^max_cost must be a finite number >= 0 "
                       r"\(at most about 1.8e\+308\), got -?a \d+-bit integer$"):
        battlecalc.plan(rules="revised", defender="1 inf", pool="2 inf", max_cost=max_cost)


def test_plan_and_raid_numbers_beyond_a_float():
    for value in HUGE:
        for key in ("top", "trials", "seed", "keep_land", "retreat_below", "retreat_after",
                    "strafe", "retreat_when_left"):
            _refused_or_answered(lambda key=key, value=value: battlecalc.plan(
                rules="revised", defender="1 inf", pool="2 inf", method="exact",
                **{key: value}))
        for key in ("target_value", "trials", "seed"):
            _refused_or_answered(lambda key=key, value=value: battlecalc.raid(
                rules="1942-2e", attacker="1 bomber", method="mc",
                **{"target_value": 10, "trials": 1000, key: value}))


# ----------------------------------------------------------------------------- item 9

@pytest.mark.parametrize("facility", [["major"], {"major": 1}, ("major",), {"major"}, b"major",
                                      5, 2.5, True])
def test_a_facility_that_is_not_text_is_refused(facility):
    with pytest.raises(BattleInputError, match=r"^facility must be the name of a facility "
                       r"\(text\): one of major, minor, airbase, navalbase, got "):
        battlecalc.raid(rules="1940-2e", attacker="1 bomber", facility=facility)


def test_a_facility_given_as_text_still_works():
    result = battlecalc.raid(rules="1940-2e", attacker="1 bomber", facility=" Major ",
                             method="exact")
    assert result.facility == "major"


# ----------------------------------------------------------------------------- item 14

def _takes_two(done, total):
    pass


class _Counter:
    def __init__(self):
        self.calls = 0

    def __call__(self, done, total, what):
        self.calls += 1


WRONG_ARITY = [lambda: None, _takes_two, lambda done, total, what, more: None,
               functools.partial(_takes_two, 0), lambda *, done=0: None]
RIGHT_ARITY = [lambda *a: None, lambda done, total, what="", **kw: None,
               functools.partial(lambda x, done, total, what: None, 1), _Counter(), print]

CALLS = {
    # a Monte Carlo run: the callback ran mid-run (after the first kernel call) before
    "simulate mc": lambda p: battlecalc.simulate(**LAND, method="mc", trials=5000, seed=1,
                                                 progress=p),
    "simulate exact": lambda p: battlecalc.simulate(**LAND, method="exact", progress=p),
    "formula": lambda p: battlecalc.simulate(**FORMULA, method="mc", trials=1000, seed=1,
                                             progress=p),
    "waves": lambda p: battlecalc.simulate(**LAND, waves=["2 inf"], method="mc", trials=1000,
                                           seed=1, progress=p),
    "raid": lambda p: battlecalc.raid(rules="1942-2e", attacker="1 bomber", target_value=10,
                                      method="mc", trials=1000, seed=1, progress=p),
    "plan": lambda p: battlecalc.plan(rules="revised", defender="1 inf", pool="2 inf",
                                      progress=p),
    "sweep": lambda p: battlecalc.sweep([LAND], workers=1, progress=p),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS)
def test_a_progress_callback_of_the_wrong_arity_is_refused_up_front(call):
    # before: a TypeError from inside the run, at the first progress report (or none at all
    # where the run happened to make no report)
    for progress in WRONG_ARITY:
        with pytest.raises(BattleInputError, match=r"progress must take three arguments, "
                           r"progress\(done, total, what\); .* does not \("):
            call(progress)


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS)
def test_a_progress_callback_of_the_right_arity_runs(call, capsys):
    for progress in RIGHT_ARITY:
        call(progress)
    counter = _Counter()
    call(counter)
    assert counter.calls > 0 or call is CALLS["simulate exact"]


def test_the_message_names_the_callback():
    with pytest.raises(BattleInputError) as caught:
        battlecalc.simulate(**LAND, progress=lambda: None)
    assert str(caught.value) == (
        "progress must take three arguments, progress(done, total, what); "
        "test_the_message_names_the_callback.<locals>.<lambda>() does not (too many "
        "positional arguments)")


# ------------------------------------------------------------ issue 42 item 6


@pytest.mark.parametrize("value", HUGE, ids=["10**400", "-10**400", "2**1024"])
def test_territory_value_beyond_a_float_is_refused_before_any_work(value):
    """territory_value reached the objective's coefficients as float(10**400): OverflowError
    from simulate (and a 500 from the server); now bounded as the other numbers are."""
    with pytest.raises(BattleInputError, match=r"^territory_value must be between 0 and "
                       r"1,000,000, got -?a \d+-bit integer$"):
        battlecalc.simulate(**LAND, retreat_policy="optimal", optimize="value",
                            territory_value=value)


def test_territory_value_at_its_bound_is_solved_and_one_above_refused():
    from helpers import invoke

    args = ["run", "--rules", "revised", "-a", "2 inf", "-d", "1 inf", "--retreat", "optimal",
            "--optimize", "value", "--territory-value"]
    done = invoke(*args, "1000000", "--format", "json")
    assert done.exit_code == 0, done.output
    done = invoke(*args, "1000001")
    assert done.exit_code == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "Error: --territory-value must be between 0 and 1,000,000, got 1000001"]
