"""What the tests share (tests/conftest.py hands most of it out as fixtures): the command line
run in-process, a battle planned and solved under a solver variant (plan_of), every number of a
result and two results compared to 1e-12, Monte Carlo held to an exact answer within k standard
errors (assert_mc_agrees, with the suite's trial counts), and the ids of parametrized
battles (the battles themselves: tests/battles.py)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest
from bands import (  # noqa: F401  (re-exported)
    MC_TRIALS,
    MC_TRIALS_SLOW,
    MEANS,
    PROBABILITIES,
    assert_mc_agrees,
    mc_outside,
)
from click.testing import CliRunner

import battlecalc
from battlecalc import api, solver
from battlecalc.cli import cli

# ---------------------------------------------------------------------------------------------
# The command line, in-process

RUNNER = CliRunner()  # (click >= 8.2: stderr is kept apart)


def invoke(*args: str, **options):
    """`battlecalc ARGS` run in-process (click's CliRunner.invoke: input=, env=, ...)."""
    return RUNNER.invoke(cli, [str(a) for a in args], **options)


def assert_usage_error(result, fragment: str | None = None) -> str:
    """Exit status 2, one ``Error: ...`` line on stderr, nothing on stdout, no traceback."""
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert "Traceback" not in result.output
    if fragment is not None:
        assert fragment in lines[0], lines[0]
    return lines[0]


# ---------------------------------------------------------------------------------------------
# A battle under a solver variant, chosen by plan (solver.choose), never by a module switch

VARIANT_KEYWORDS = ("row_sweep", "merge_blocks", "two_phase", "sea_walk", "pruning")
LIMIT_FIELDS = tuple(f.name for f in dataclasses.fields(solver.Limits))


@dataclasses.dataclass(frozen=True)
class Planned:
    """A dice battle checked and compiled as simulate does (api.prepare) and the plan chosen
    for it (solver.choose) under `limits`: result() solves it by that plan."""

    battle: object  # spec.Battle
    run: object  # spec.RunSpec
    compiled: object  # compile.CompiledBattle
    plan: solver.SolvePlan
    limits: solver.Limits

    def result(self) -> battlecalc.Result:
        return api.solve(self.battle, self.run, compiled=self.compiled, solve_plan=self.plan,
                         limits=self.limits)

    def law(self) -> solver.FinalLaw:
        return solver.solve(self.compiled, self.plan, seed=self.run.mc_seed)


def plan_of(battle: Mapping, limits: solver.Limits = solver.LIMITS, **variant) -> Planned:
    """The battle (simulate's keyword arguments) planned under a variant: choose's keywords
    (row_sweep, merge_blocks, two_phase, sea_walk, pruning: False forbids that variant) and
    any field of solver.Limits (table_start=4, compact_pairs=0, ...), on top of `limits`."""
    keywords = {k: variant.pop(k) for k in VARIANT_KEYWORDS if k in variant}
    unknown = set(variant) - set(LIMIT_FIELDS)
    if unknown:
        raise TypeError(f"neither a variant of solver.choose nor a Limits field: {unknown}")
    if variant:
        limits = dataclasses.replace(limits, **variant)
    spec, run, compiled = api.prepare(**battle)
    plan = solver.choose(compiled, run.method, run.trials, run.rounds_distribution,
                         limits=limits, **keywords)
    return Planned(spec, run, compiled, plan, limits)


def solved(battle: Mapping, **variant) -> battlecalc.Result:
    """The battle's Result under a variant (plan_of's keywords)."""
    return plan_of(battle, **variant).result()


def compiled_tables(battle: Mapping):
    """The battle's compiled tables, as simulate builds them."""
    return api.prepare(**battle)[2]


# A side's tables (compile.Side), as the builders make them
SIDE_ARRAYS = ("blocks", "states", "rows", "pmf", "cdf", "start", "survivors", "ipc_lost")


def side_specs(battles: list[dict], refused_left_out: bool = False) -> list:
    """Every _SideSpec the battles' compilation builds (retreat, bombardment and start
    variants included), in order, without duplicates; a battle the checks refuse raises, or
    is left out where refused_left_out.  (The sides are built by the Python builder
    meanwhile.)"""
    from battlecalc.batch import _battle_arguments
    from battlecalc.compile import battle as compile_module
    from battlecalc.compile import sides
    from battlecalc.spec import simulate_spec

    seen: dict = {}
    plain = compile_module.build_side

    def record(spec):
        seen.setdefault(spec, None)
        return sides._python_side(spec)

    compile_module.build_side = record
    try:
        for given in battles:
            given = {k: v for k, v in given.items() if k != "id"}
            try:
                battle, _ = simulate_spec(_battle_arguments(dict(given, method="exact")))
                compile_module.compile_battle(battle)
            except battlecalc.BattleInputError:
                if not refused_left_out:
                    raise
    finally:
        compile_module.build_side = plain
    return list(seen)


def assert_same_side(side, want) -> None:
    """Two compile.Side equal: every table to the last bit, of the same dtype and shape, C
    contiguous and writable (the kernels are compiled for such arrays), the same unit names
    and split."""
    import numpy as np

    for name in SIDE_ARRAYS:
        got, expected = getattr(side, name), getattr(want, name)
        assert got.dtype == expected.dtype, name
        assert got.shape == expected.shape, name
        assert got.flags.c_contiguous and got.flags.writeable, name
        assert np.array_equal(got, expected), name
    assert side.unit_names == want.unit_names
    assert side.split == want.split


# ---------------------------------------------------------------------------------------------
# Every number of a result, and two results compared


def answers(result) -> dict:
    """Every number of a result's dict (IPC means divided by 100, so that 1e-12 is about the
    same relative bound as for probabilities; timings left out)."""
    flat = {}

    def walk(path, value):
        if isinstance(value, dict):
            for key, item in value.items():
                walk(f"{path}.{key}", item)
        elif isinstance(value, list | tuple):
            for i, item in enumerate(value):
                walk(f"{path}[{i}]", item)
        elif not isinstance(value, float):
            flat[path] = value
        elif not path.endswith("_s"):
            flat[path] = value / 100 if "ipc" in path or "swing" in path else value

    walk("", result.to_dict())
    return flat


def assert_same(got: dict, expected: dict) -> None:
    """Two answers() with the same keys, every float within 1e-12, everything else equal."""
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        if isinstance(value, float):
            assert got[key] == pytest.approx(value, rel=0, abs=1e-12), key
        else:
            assert got[key] == value, key


# ---------------------------------------------------------------------------------------------
# Monte Carlo against an exact answer

# (tests/bands.py: imports nothing of the package, so the references' own tests use it too)


# ---------------------------------------------------------------------------------------------
# Battle ids

def battle_id(battle: dict) -> str:
    """A parametrized battle's test id: edition, both armies, its first extra option."""
    side = lambda force: "+".join(f"{c}{n[:4]}" for n, c in force.items())  # noqa: E731
    extra = [k for k in battle if k not in ("rules", "attacker", "defender", "sea", "method")]
    return f"{battle['rules']}:{side(battle['attacker'])}-v-{side(battle['defender'])}" + (
        f"-{extra[0]}" if extra else "")


# ---------------------------------------------------------------------------------------------
# The page's requests, computed by the page's own script in node (no browser)

NODE = shutil.which("node")
APP_JS = Path(battlecalc.__file__).parent / "web" / "static" / "app.js"
# what a test types into a text option of the page to change it (else "2")
TYPED = {"trials": "20000", "seed": "5", "retreat_below": "0.5", "attacker_ool": "tank",
         "defender_ool": "tank", "waves": "1 tank", "counterattack": "1 inf",
         "goal": "attacker_win>=0.5", "max_cost": "30", "top": "3", "exchanges": "2",
         "target_value": "5"}
_PAGE_REQUESTS = """
const data = JSON.parse(require("fs").readFileSync(0, "utf8"));
spec = data.spec;
// an option changed from the form's value as its control changes it (optionControl): a box
// checked, the last other choice of a list, the first technology, a typed value
function changeOf(opt) {
  const current = state.options[opt.name];
  if (opt.kind === "bool") return true;
  if (opt.kind === "techs") return edition().techs[0].name;
  let choices = null;
  if (opt.choices_from) choices = ["", ...(edition()[opt.choices_from] || [])];
  else if (opt.kind === "choice") choices = opt.choices;
  if (choices) {
    const others = choices.filter((c) => c !== current && c);
    return others[others.length - 1];
  }
  return data.typed[opt.name] ?? "2";
}
const shownNames = () => spec.options.filter(shown).map((o) => o.name);
const out = {};
for (const [screen, search] of Object.entries(data.screens)) {
  out[screen] = {};
  // before an answer, and after one of method auto solved exactly (trials and seed then
  // neither shown nor sent)
  for (const answered of ["before", "exact"]) {
    readQuery(search);
    solvedExactly.clear();
    if (answered === "exact") {
      const key = autoKey();
      if (key === null) continue;
      solvedExactly.add(key);
    }
    const pristine = apiBody();
    const names = shownNames();
    const changes = names.map((name) => {
      const opt = spec.options.find((o) => o.name === name);
      const old = state.options[name];
      const value = changeOf(opt);
      state.options[name] = value;
      const body = apiBody();
      state.options[name] = old;
      return { name, value, body, back: apiBody(), shown_back: shownNames() };
    });
    out[screen][answered] = { pristine, names, changes };
  }
}
process.stdout.write(JSON.stringify(out));
"""


def page_requests(screens: Mapping[str, str]) -> dict:
    """For each screen (a page query), what the page's own script (static/app.js, its state
    and request functions, run by node on web/spec.py's page spec) shows and sends: before an
    answer and after an answer of method auto solved exactly, {"pristine": the request,
    "names": the options shown, "changes": [{name, value, body: the request with that option
    changed, back: the request with it put back, shown_back: the options then shown}]}."""
    from battlecalc.web import spec as web_spec

    source = APP_JS.read_text()
    start = source.index("(() => {") + len("(() => {")
    end = source.index("  // " + "-" * 66 + " the form")
    script = source[start:end] + _PAGE_REQUESTS
    data = {"spec": web_spec.page_spec(), "screens": dict(screens), "typed": TYPED}
    done = subprocess.run([NODE, "-e", script], input=json.dumps(data), capture_output=True,
                          text=True, timeout=120, check=True)
    return json.loads(done.stdout)
