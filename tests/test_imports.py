"""The package's import graph: no circle, and no import from a lower layer to a higher one;
the kernels import nothing above them and raise no user error, results do not import the
kernels, the command line reaches the rules through the library; no module-level switch
(NAME = True/False) in the kernels, the solver or the compiler; and the waves path loads no
pandas.

The layers, lowest first (a module may import its own layer's and lower ones'):

0. battlecalc.kernels (imports nothing of battlecalc but kernels) and battlecalc.errors
   (imports nothing; the kernels may not import it: they raise no user error);
1. battlecalc.solver (kernels, errors);
2. the model: rules, files, army, dice, orders, options, spec, starts, reactions, compile,
   results, plot, output, formula;
3. battlecalc.api;
4. what is built on the API: waves, planner, batch (solve_many), raids, sweeper and its
   server, triplea;
5. the faces: cli, web, battlecalc/__init__ and __main__.

The graph is read from the source with `ast`: every ``import`` and ``from ... import`` of a
module, at its top and inside its functions (an import inside a function runs too, later),
resolved to the package's own modules; ``from battlecalc import simulate`` goes to the module
that battlecalc's lazy ``_PUBLIC`` table loads it from.  Imports under ``if TYPE_CHECKING:``
never run and are left out; so are imports by computed name (``importlib.import_module(x)``).
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap
from pathlib import Path

import pytest

import battlecalc

PACKAGE = Path(battlecalc.__file__).parent


def module_names(root: Path, package: str) -> dict[str, Path]:
    """{dotted module name: file} of every module of the package under `root`."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"
        or isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


# the nodes an import statement can be under: statements (bodies of modules, functions,
# classes, if, for, while, try, with), except clauses and match cases; never an expression
_HOLDERS = (ast.Module, ast.stmt, ast.ExceptHandler, ast.match_case)


def _imports(tree: ast.AST):
    """Every Import / ImportFrom node of a module, at any depth, outside TYPE_CHECKING."""
    stack = [tree]
    while stack:
        for node in ast.iter_child_nodes(stack.pop()):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                yield node
            elif isinstance(node, _HOLDERS) and not _is_type_checking(node):
                stack.append(node)


@functools.cache
def _parsed(path: Path, text: str) -> ast.Module:
    """A module's syntax tree, parsed once a session for the graphs that read it."""
    return ast.parse(text, str(path))


def _lazy_names(init: Path) -> dict[str, str]:
    """The package's `_PUBLIC = {name: submodule}` table (names loaded on first use)."""
    for node in ast.walk(ast.parse(init.read_text())):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "_PUBLIC" for t in node.targets):
            return ast.literal_eval(node.value)
    return {}


def import_graph(root: Path, package: str, lazy_names: bool = True) -> dict[str, set[str]]:
    """{module: the package's modules it imports} (lazy_names False: a name of the package's
    lazy table, ``from battlecalc import load_rules``, counts as an import of the package
    itself, the library's API, not of the module behind it)."""
    modules = module_names(root, package)
    lazy = {f"{package}.{name}": f"{package}.{module}"
            for name, module in _lazy_names(root / "__init__.py").items()} if lazy_names else {}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        here = name.split(".") if is_package else name.split(".")[:-1]
        for node in _imports(_parsed(path, path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = here[:len(here) - node.level + 1] if node.level else []
                source = ".".join([*base, *([node.module] if node.module else [])])
                targets = [f"{source}.{alias.name}" for alias in node.names]
                targets = [lazy.get(t, t) if t in modules or t in lazy else source
                           for t in targets]
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of the graph as [m1, m2, ..., m1], or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


LAYERS = {
    0: ("battlecalc.kernels", "battlecalc.errors"),
    1: ("battlecalc.solver",),
    2: ("battlecalc.rules", "battlecalc.files", "battlecalc.army", "battlecalc.dice",
        "battlecalc.die_law",
        "battlecalc.orders", "battlecalc.options", "battlecalc.spec", "battlecalc.starts",
        "battlecalc.reactions", "battlecalc.compile", "battlecalc.results", "battlecalc.plot",
        "battlecalc.output", "battlecalc.formula"),
    3: ("battlecalc.api",),
    4: ("battlecalc.waves", "battlecalc.planner", "battlecalc.batch", "battlecalc.raids",
        "battlecalc.sweeper", "battlecalc._sweep_server", "battlecalc.triplea",
        "battlecalc.turn"),
    5: ("battlecalc.cli", "battlecalc.web", "battlecalc.__main__"),
}
PACKAGE_LAYER = 5  # battlecalc itself (its __init__: the lazy names of the public API)
# a break the package has would be named here, each with a strict xfail of its own (main mended
# the two of issue 27 in fb5bdbb, api -> waves and cli -> rules, and the two of its live board
# in c978ab5 and 1d86523, the circle web.live -> web.server and triplea.board -> web.spec)
KNOWN_BREAKS: set[tuple[str, str]] = set()


def layer_of(module: str) -> int:
    """The layer of a module: that of the longest prefix of LAYERS it has."""
    if module == "battlecalc":
        return PACKAGE_LAYER
    found = [(len(prefix), layer) for layer, prefixes in LAYERS.items() for prefix in prefixes
             if module == prefix or module.startswith(prefix + ".")]
    assert found, f"{module} is in no layer: give it one in LAYERS"
    return max(found)[1]


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(PACKAGE, "battlecalc")


def test_the_package_has_no_import_circle(graph):
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))
    # the graph is the real one: top-level, function-level and lazy imports are all in it
    assert "battlecalc.results" in graph["battlecalc.api"]  # top of the module
    assert "battlecalc.api" in graph["battlecalc.raids"]  # inside raid's air battle
    assert "battlecalc.waves" in graph["battlecalc._sweep_server"]  # from battlecalc import ...
    assert "battlecalc.kernels.jit" in graph["battlecalc.kernels.exact.sweep"]  # from ..jit
    assert "battlecalc.options" in graph["battlecalc.web.spec"]  # from ..options import ...
    # waves (a sequence of battles, battlecalc.simulate) stands above the API, not below it
    assert "battlecalc.api" in graph["battlecalc.waves"]
    assert "battlecalc.waves" not in graph["battlecalc.api"]


def _up_imports(graph) -> set[tuple[str, str]]:
    return {(module, target) for module, targets in graph.items() for target in targets
            if layer_of(target) > layer_of(module)}


def test_no_import_goes_up_a_layer(graph):
    assert _up_imports(graph) - KNOWN_BREAKS == set()
    # every module has its layer
    assert all(layer_of(module) in LAYERS for module in graph)


def test_the_layer_check_finds_an_import_up(graph):
    """The checker itself: an import of the API by the solver, or of the solver by a
    kernel, is an import up."""
    broken = {**graph, "battlecalc.solver.plan": {"battlecalc.api"},
              "battlecalc.kernels.layout": {"battlecalc.solver.law"}}
    assert {("battlecalc.solver.plan", "battlecalc.api"),
            ("battlecalc.kernels.layout", "battlecalc.solver.law")} <= _up_imports(broken)


def test_kernels_import_nothing_above_them_and_raise_no_user_error(graph):
    for module, targets in graph.items():
        if layer_of(module) == 0 and module.startswith("battlecalc.kernels"):
            assert all(t.startswith("battlecalc.kernels") for t in targets), (module, targets)
    assert not any("battlecalc.errors" in targets for module, targets in graph.items()
                   if module.startswith("battlecalc.kernels"))
    assert graph["battlecalc.errors"] == set()


def test_the_solver_imports_only_the_kernels_and_errors(graph):
    for module, targets in graph.items():
        if module.startswith("battlecalc.solver"):
            assert all(t.startswith(("battlecalc.solver", "battlecalc.kernels"))
                       or t == "battlecalc.errors" for t in targets), (module, targets)


def test_results_do_not_import_the_kernels(graph):
    assert not any(t.startswith("battlecalc.kernels") for t in graph["battlecalc.results"])
    assert "battlecalc.solver.law" in graph["battlecalc.results"]  # (it reads FinalLaw)


def test_api_does_not_import_waves(graph):
    assert "battlecalc.waves" not in graph["battlecalc.api"]


def test_cli_reaches_the_rules_through_the_librarys_api():
    # (battlecalc.load_rules, a name of the package's lazy table, is the library's API)
    direct = import_graph(PACKAGE, "battlecalc", lazy_names=False)["battlecalc.cli"]
    assert not any(t == "battlecalc.rules" or t.startswith("battlecalc.rules.") for t in direct)
    assert "battlecalc" in direct


def test_the_triplea_board_does_not_import_the_web(graph):
    assert "battlecalc.web.spec" not in graph["battlecalc.triplea.board"]


def test_the_live_board_does_not_import_the_server(graph):
    assert "battlecalc.web.server" not in graph["battlecalc.web.live"]


SWITCH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\s*(:[^=]*)?=\s*(True|False)\s*(#.*)?$")


def _switches(path: Path) -> list[str]:
    """Module-level NAME = True/False lines of a file (grep's view: a line at column 0)."""
    return [f"{path.name}:{n}: {line}" for n, line in
            enumerate(path.read_text().splitlines(), 1) if SWITCH.match(line)]


def test_no_module_level_switch_in_the_kernels_the_solver_or_the_compiler():
    files = [*sorted((PACKAGE / "kernels").rglob("*.py")),
             *sorted((PACKAGE / "solver").rglob("*.py")),
             *sorted((PACKAGE / "compile").rglob("*.py"))]
    assert len(files) > 15
    assert [line for path in files for line in _switches(path)] == []


def test_the_switch_check_finds_a_switch(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("TWO_PHASE = True\nSEA_WALK: bool = False  # off\nX = 1\n"
                    "def f():\n    inner = True\nFLAG = Trueish\n")
    assert [line.split(": ", 1)[1] for line in _switches(path)] == [
        "TWO_PHASE = True", "SEA_WALK: bool = False  # off"]


def test_the_graph_finds_a_circle_through_a_function_level_import(tmp_path):
    """The checker itself: a package whose two modules import each other, one of them only
    inside a function, has a circle; with that import under TYPE_CHECKING it has none."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("_PUBLIC = {'run': 'top'}\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "top.py").write_text("from .sub import low\n\ndef run():\n    return low.f()\n")
    (pkg / "sub" / "low.py").write_text(textwrap.dedent("""\
        def f():
            from .. import run
            return run
    """))
    graph = import_graph(pkg, "pkg")
    assert graph["pkg.top"] == {"pkg.sub.low"} and graph["pkg.sub.low"] == {"pkg.top"}
    assert find_cycle(graph) == ["pkg.sub.low", "pkg.top", "pkg.sub.low"]
    (pkg / "sub" / "low.py").write_text(textwrap.dedent("""\
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from ..top import run
    """))
    assert find_cycle(import_graph(pkg, "pkg")) is None


@pytest.mark.fresh("waves_load_no_pandas")
def test_waves_and_counterattacks_load_no_pandas(fresh):
    """Two waves and a counter-attack, exact and Monte Carlo, with their dict, JSON, CSV and
    table views: pandas is never imported (only the DataFrame views need it; a fresh
    interpreter, tests/fresh_checks.py)."""
    assert fresh is False
