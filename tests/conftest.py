"""The suite's shared machinery: the import path of the test helpers, the fixtures every file
uses (the command line in-process, a battle planned under a solver variant, Monte Carlo held to
an exact answer, fresh caches, checks in a fresh interpreter), and the tiers (tests/tiers.py:
the rule that puts a test in the slow tier, the guards of the quick tier, the CPU profile).

Layout: tests/solver (the solver wing: its plans, variants, exact and Monte Carlo drivers,
batches, threads and final law), tests/kernels (the njit kernels), tests/references (the
independent references, importing nothing of the package, and their own tests), and
test_<module>.py for the rest; tests/battles.py is the battle catalogue, tests/helpers.py what
the fixtures are built on, tests/fresh_checks.py the checks a fresh interpreter runs."""

import os
import sys

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
# numba's allocation counts, on before numba starts (tests/kernels/test_plain.py holds every
# solve to freeing what it allocates; counting costs nothing measurable)
os.environ.setdefault("NUMBA_NRT_STATS", "1")
# the helpers (helpers, battles, webserver, golden) and the references (reference,
# sea_reference, ...) are imported by their module names from every folder of the suite
for _folder in (os.path.join(TESTS, "references"), TESTS):
    if _folder not in sys.path:
        sys.path.insert(0, _folder)

import helpers  # noqa: E402

# the quick and slow tiers, their guards and the profile; pytester runs them in tests/test_tiers
pytest_plugins = ["tiers", "pytester"]


@pytest.fixture
def invoke():
    """`battlecalc ARGS` in-process: invoke("run", "-a", "1 inf", ...) -> click's Result."""
    return helpers.invoke


@pytest.fixture
def plan_of():
    """plan_of(battle, **variant) -> helpers.Planned: the battle checked and compiled as
    simulate does and planned by solver.choose under a variant (choose's keywords, Limits
    fields); .plan, .compiled, .result()."""
    return helpers.plan_of


@pytest.fixture
def assert_mc_agrees():
    """assert_mc_agrees(mc_result, exact, k=4): Monte Carlo within k standard errors of exact
    (helpers.assert_mc_agrees)."""
    return helpers.assert_mc_agrees


@pytest.fixture
def fresh_caches():
    """No kept battle and no side table before the test or after it (api.forget_compiled):
    the test checks and compiles as for battles never seen."""
    from battlecalc import api

    api.forget_compiled()
    yield
    api.forget_compiled()


@pytest.fixture(scope="session")
def _fresh_results(request):
    """Every fresh-interpreter check the session's tests ask for (marker `fresh`), run once:
    one interpreter for the checks of compiled kernels and one under
    BATTLECALC_PLAIN_KERNELS=1 (tests/fresh_checks.py), their answers by check name."""
    import fresh_checks

    wanted = {mark.args[0] for item in request.session.items
              for mark in item.iter_markers("fresh")}
    return fresh_checks.run(wanted)


@pytest.fixture
def fresh(request, _fresh_results):
    """The answer of the fresh-interpreter check the test names (@pytest.mark.fresh(NAME)),
    as JSON data; the checks run together, once a session (tests/fresh_checks.py)."""
    mark = request.node.get_closest_marker("fresh")
    assert mark is not None, "name the check: @pytest.mark.fresh(NAME)"
    answer = _fresh_results[mark.args[0]]
    if isinstance(answer, dict) and "error" in answer and len(answer) == 1:
        pytest.fail(f"fresh check {mark.args[0]} failed:\n{answer['error']}", pytrace=False)
    return answer
