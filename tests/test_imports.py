"""The package's import graph has no circle, and the waves path loads no pandas.

The graph is read from the source with `ast`: every ``import`` and ``from ... import`` of a
module, at its top and inside its functions (an import inside a function runs too, later),
resolved to the package's own modules; ``from battlecalc import simulate`` goes to the module
that battlecalc's lazy ``_PUBLIC`` table loads it from.  Imports under ``if TYPE_CHECKING:``
never run and are left out; so are imports by computed name (``importlib.import_module(x)``).
"""

from __future__ import annotations

import ast
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


def _imports(tree: ast.AST):
    """Every Import / ImportFrom node of a module, at any depth, outside TYPE_CHECKING."""
    for node in ast.iter_child_nodes(tree):
        if _is_type_checking(node):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        yield from _imports(node)


def _lazy_names(init: Path) -> dict[str, str]:
    """The package's `_PUBLIC = {name: submodule}` table (names loaded on first use)."""
    for node in ast.walk(ast.parse(init.read_text())):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "_PUBLIC" for t in node.targets):
            return ast.literal_eval(node.value)
    return {}


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """{module: the package's modules it imports}."""
    modules = module_names(root, package)
    lazy = {f"{package}.{name}": f"{package}.{module}"
            for name, module in _lazy_names(root / "__init__.py").items()}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        here = name.split(".") if is_package else name.split(".")[:-1]
        for node in _imports(ast.parse(path.read_text(), str(path))):
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


@pytest.mark.slow
def test_the_package_has_no_import_circle():
    graph = import_graph(PACKAGE, "battlecalc")
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))
    # the graph is the real one: top-level, function-level and lazy imports are all in it
    assert "battlecalc.results" in graph["battlecalc.api"]  # top of the module
    assert "battlecalc.waves" in graph["battlecalc.api"]  # inside simulate
    assert "battlecalc.api" in graph["battlecalc.raids"]  # inside raid's air battle
    assert "battlecalc.api" in graph["battlecalc._sweep_server"]  # from battlecalc import ...
    assert "battlecalc.kernels.jit" in graph["battlecalc.kernels.exact"]  # from . import jit
    assert "battlecalc.options" in graph["battlecalc.web.spec"]  # from ..options import ...
    # waves computes below the API: it is handed the solver, it does not import it
    assert "battlecalc.api" not in graph["battlecalc.waves"]


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


@pytest.mark.slow
@pytest.mark.fresh("waves_load_no_pandas")
def test_waves_and_counterattacks_load_no_pandas(fresh):
    """Two waves and a counter-attack, exact and Monte Carlo, with their dict, JSON, CSV and
    table views: pandas is never imported (only the DataFrame views need it; a fresh
    interpreter, tests/fresh_checks.py)."""
    assert fresh is False
