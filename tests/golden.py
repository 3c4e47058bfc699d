"""The bit-identical golden of the engine room's restructuring: every number of every answer.

``python tests/golden.py --write`` solves every case below and writes, for each, the digest of
its answer with every float written as ``float.hex`` (so two answers agree only if they are
equal to the last bit) into ``tests/fixtures/golden.json``, together with the case's inputs (so
the cases stay the same whatever happens to the test files they were drawn from) and the
answer's headline figures in clear.  ``tests/test_golden.py`` solves them again and compares
with ``==``.  The cases:

* the exact-answer battery (tests/battles.py), as simulate solves it;
* every battle of the path tests (land sweep, sea memo, sea walk, compact table, prune), each
  under the solver variants those tests compare (``VARIANTS``: merged blocks or not, the row
  sweep or not, two-phase strikes or not, the sea walk or not, a compact table or a dense
  one, pruning hard or none);
* 30 fixed-seed Monte Carlo runs (dice battles, the formula model, raids);
* solve_many over the battery;
* the README's waves and plan examples;
* solve_many's runner (batch.solve_rows) over the 240 random battles of every kind of
  tests/test_solve_many.py (battles.any_battles: lanes, the batch, battles solved alone and
  battles refused; each row, or its error).

Recorded with the kernels compiled (jit.compiled() first), on the default thread count.
Regenerate only where an answer changes on purpose, and say so in the commit.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import random
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixtures", "golden.json")
FORMAT = 1

# The solver variants of the path tests: name -> what it sets.  apply_variant is the one place
# that knows how the code in hand selects them.
VARIANTS = {
    "default": {},
    "blocks one by one": {"merge_blocks": False},
    "pair sweep": {"row_sweep": False},
    "pair sweep, blocks one by one": {"merge_blocks": False, "row_sweep": False},
    "one phase": {"two_phase": False},
    "no sea walk": {"sea_walk": False},
    "compact table": {"compact": True},
    "dense table": {"compact": False},
    "pruned hard": {"pruning": "hard"},
    "no pruning": {"pruning": "off"},
}


def variant_plan(name: str):
    """The solver's keywords and limits of a variant (VARIANTS[name]): the one place that knows
    how the code in hand selects them (solver.choose's keywords and solver.Limits)."""
    from battlecalc.solver import LIMITS

    keywords, limits = {}, LIMITS
    for key, value in VARIANTS[name].items():
        if key in ("merge_blocks", "row_sweep", "two_phase", "sea_walk"):
            keywords[key] = value
        elif key == "compact":
            limits = dataclasses.replace(limits, compact_pairs=0 if value else 10**18,
                                         table_start=4)
        elif key == "pruning" and value == "hard":
            limits = dataclasses.replace(limits, prune_pairs=0, prune_budget=1e-5,
                                         prune_state_eps=1e-7, prune_tail_eps=1e-8)
        elif key == "pruning" and value == "off":
            keywords["pruning"] = False
        else:
            raise ValueError(f"unknown variant setting {key}={value!r}")
    return keywords, limits


def _simulate_variant(name: str, args: dict):
    """simulate(**args) under the variant: checked and compiled as simulate does, solved by the
    variant's plan."""
    from battlecalc import api, solver

    if name == "default":
        import battlecalc

        return battlecalc.simulate(**args)
    keywords, limits = variant_plan(name)
    battle, run, compiled = api.prepare(**args)
    plan = solver.choose(compiled, run.method, run.trials, run.rounds_distribution,
                         limits=limits, **keywords)
    return api.solve(battle, run, compiled=compiled, solve_plan=plan, limits=limits)


# ---------------------------------------------------------------------------------------------
# The cases (built from the test files as they were when the golden was recorded, now the
# battle catalogue tests/battles.py; the inputs are frozen in the fixture)


def _path_cases() -> list[dict]:
    sys.path.insert(0, HERE)
    import battles

    cases = []

    def add(group, battle, variants):
        for variant in variants:
            cases.append({"kind": "simulate", "group": group, "variant": variant,
                          "args": {**battle, "method": battle.get("method", "exact")}})

    for battle in battles.LAND_SWEPT.values():
        add("land sweep", battle, ["default", "blocks one by one", "pair sweep",
                                   "pair sweep, blocks one by one"])
    for battle in [*battles.SEA_TWO_PHASE.values(), *battles.sea_two_phase_random()]:
        add("sea memo", battle, ["default", "one phase"])
    for battle in battles.sea_walk_random():
        add("sea walk", battle, ["default", "no sea walk"])
    for battle in battles.compact_random():
        add("compact table", battle, ["compact table", "dense table"])
    cases.append({"kind": "simulate", "group": "compact table", "variant": "default",
                  "args": dict(battles.COMPACT_BIG, method="auto")})
    for battle in battles.PRUNE_SMALL.values():
        add("prune", battle, ["default", "pruned hard", "no pruning"])
    cases.append({"kind": "simulate", "group": "prune", "variant": "default",
                  "args": dict(battles.PRUNE_BIG_LAND)})
    return cases


def _monte_carlo_cases() -> list[dict]:
    """30 fixed-seed runs: dice battles of every kind, the formula model, raids."""
    dice = [
        dict(rules="revised", attacker="3inf 1art 2arm 1bmb", defender="4inf 1aa"),
        dict(rules="1942-2e", attacker="6 inf, 2 art, 2 tank, 2 ftr", defender="8 inf 1 tank 1 aa"),
        dict(rules="1942-2e", attacker="30 inf 10 art 10 tank 8 ftr 4 bmb",
             defender="40 inf 5 art 5 tank 6 ftr"),
        dict(rules="1940-2e", attacker="5 inf 2 art 3 tank 2 ftr 1 tac", defender="7 inf 2 aa"),
        dict(rules="aa50", attacker="4 inf 2 art 2 tank", defender="5 inf 1 art", dice="low_luck"),
        dict(rules="classic", attacker="4 inf 3 tank 2 ftr", defender="6 inf 1 aa"),
        dict(rules="1942-2e", sea=True, attacker="2 sub 1 dd 1 ftr",
             defender="1 cv 2 ftr 1 dd 1 tt"),
        dict(rules="revised", sea=True, attacker="4 sub 2 dd 2 bb", defender="5 sub 1 dd 2 tt",
             attacker_submerge="first-chance"),
        dict(rules="1942-2e", sea=True, attacker="3 bmb 16 dd 13 cv",
             defender="4 tt 4 ca 3 sub 4 cv", defender_submerge="when-only-subs-left"),
        dict(rules="1940-2e", sea=True, attacker="3 sub 2 dd 1 ca 2 ftr",
             defender="2 sub 1 cv 2 ftr 1 bb", dice="low_luck"),
        dict(rules="1942-2e", attacker="1 tank 1 ftr", landing="3 inf 1 art", bombard="1 bb 2 ca",
             defender="3 inf 1 tank 1 aa"),
        dict(rules="revised", attacker="2 ftr", landing="4 inf 1 art", bombard="1 bb",
             defender="4 inf 1 art 1 aa"),
        dict(rules="1942-2e", attacker="8 inf 3 tank 4 ftr", defender="10 inf 2 art 1 aa",
             retreat_after=2),
        dict(rules="revised", attacker="9 inf 4 tank 2 ftr", defender="11 inf 2 tank",
             retreat_when_left=3, strafe=2),
        dict(rules="1942-2e", attacker="10 ftr 1 bmb", defender="9 inf 3 art 2 aa",
             retreat_below=0.4),
        dict(rules="revised", attacker="5 inf 3 tank", defender="6 inf 1 tank",
             attacker_ool="tank,inf", defender_ool="weakest", keep_land=1),
        dict(rules="1942-2e", attacker="4 inf 2 ftr", defender="5 inf 2 aa", aa_last=True,
             attacker_tech="jets"),
        dict(rules="1942-2e", attacker="6 inf 2 art", defender="7 inf", rounds_distribution=True),
    ]
    cases = [{"kind": "simulate", "group": "monte carlo", "variant": "default",
              "args": {**battle, "method": "mc", "trials": 20_000, "seed": 100 + i}}
             for i, battle in enumerate(dice)]
    formula = [
        dict(rules="formula", attacker="3 army", defender="2 army", exchanges=1),
        dict(rules="formula", attacker="5 army", defender="4 army"),
        dict(rules="formula", attacker="4 army", defender="3 army", exchanges=2),
    ]
    cases += [{"kind": "simulate", "group": "formula", "variant": "default",
               "args": {**battle, "method": "mc", "trials": 20_000, "seed": 200 + i}}
              for i, battle in enumerate(formula)]
    raids = [
        dict(rules="revised", attacker="3 bomber", target_value=4, aa=True),
        dict(rules="1940-2e", attacker="2 fighter 3 bomber", defender="2 fighter",
             facility="major"),
        dict(rules="1942-2e", attacker="2 bomber", target_value=10, aa=True),
        dict(rules="revised", attacker="2 bomber", target_value=6, aa=True, dice="low_luck"),
        dict(rules="1940-2e", attacker="1 fighter 2 bomber 1 tactical_bomber",
             defender="1 fighter", facility="airbase"),
        dict(rules="aa50", attacker="4 bomber", target_value=12, aa=True,
             attacker_tech="heavy_bombers"),
        dict(rules="classic", attacker="3 bomber", target_value=8, aa=True),
        dict(rules="1940-2e", attacker="3 bomber 2 fighter", defender="3 fighter",
             facility="minor"),
        dict(rules="1942-2e", attacker="5 bomber", target_value=12, aa=True),
    ]
    cases += [{"kind": "raid", "group": "raids", "variant": "default",
               "args": {**r, "method": "mc", "trials": 20_000, "seed": 300 + i}}
              for i, r in enumerate(raids)]
    return cases


def _example_cases() -> list[dict]:
    return [
        {"kind": "simulate", "group": "readme waves", "variant": "default",
         "args": dict(rules="1942-2e", attacker="4 inf 1 art 1 tank 1 ftr",
                      defender="5 inf 1 tank 1 aa", waves=["3 inf 1 tank", "2 inf 1 art"],
                      counterattack="3 inf 1 tank")},
        {"kind": "plan", "group": "readme plan", "variant": "default",
         "args": dict(rules="1942-2e", defender="6 inf 2 art 1 tank 1 aa",
                      pool="10 inf 5 art 5 tank 4 ftr 2 bmb", goal="takes_territory>=0.9",
                      top=3)},
    ]


def build_cases() -> list[dict]:
    sys.path.insert(0, HERE)
    import battles

    cases = [{"kind": "simulate", "group": "battery", "variant": "default",
              "args": {**battles.kwargs_of(b), "method": "exact"}}
             for b in battles.BATTERY]
    cases += _path_cases()
    cases += _monte_carlo_cases()
    cases.append({"kind": "solve_many", "group": "solve_many", "variant": "default",
                  "args": {"battles": [{**battles.kwargs_of(b), "method": "exact"}
                                       for b in battles.BATTERY]}})
    cases += _example_cases()
    cases.append({"kind": "solve_rows", "group": "lane", "variant": "default",
                  "args": {"battles": battles.any_battles(2026_12_02, 240)}})
    for i, case in enumerate(cases):
        case["id"] = i
    return cases


# ---------------------------------------------------------------------------------------------
# Answers as plain data, every float as float.hex


def _hex(value):
    """A JSON-able copy of value with every float as float.hex (NaN as 'nan')."""
    if isinstance(value, dict):
        return {str(k): _hex(v) for k, v in value.items() if not str(k).endswith("_s")}
    if isinstance(value, list | tuple):
        return [_hex(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_hex(v) for v in value.tolist()]
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        value = float(value)
        return "nan" if math.isnan(value) else value.hex()
    if value is None or isinstance(value, str):
        return value
    return _hex(value.to_dict())


def _law(law) -> dict | None:
    if law is None:
        return None
    return {"units": list(law.units), "survivors": law.survivors, "ipc_lost": law.ipc_lost,
            "probability": law.probability}


def answer(case: dict):
    """The case's answer as plain data (every float as float.hex)."""
    import battlecalc

    args = dict(case["args"])
    if case["kind"] == "simulate":
        result = _simulate_variant(case["variant"], args)
        out = {"dict": result.to_dict()}
        if hasattr(result, "attacker_law"):
            out["laws"] = {"attacker": _law(result.attacker_law),
                           "defender": _law(result.defender_law),
                           "rounds": result.rounds_law, "swing": result.swing_law}
        return _hex(out)
    if case["kind"] == "raid":
        return _hex({"dict": battlecalc.raid(**args).to_dict()})
    if case["kind"] == "plan":
        return _hex({"dict": battlecalc.plan(**args).to_dict()})
    if case["kind"] == "solve_many":
        frame = battlecalc.solve_many(args["battles"])
        frame = frame.drop(columns=[c for c in frame.columns if str(c).endswith("_s")])
        return _hex({"columns": list(map(str, frame.columns)),
                     "rows": [[None if (isinstance(v, float) and math.isnan(v)) or v is None
                               or (not isinstance(v, str | list | dict) and _isna(v)) else v
                               for v in row] for row in frame.itertuples(index=False)]})
    if case["kind"] == "solve_rows":
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows = battlecalc.batch.solve_rows(args["battles"])
        return _hex({"rows": [[{k: v for k, v in row.items() if not k.endswith("_s")}
                               if row is not None else None, error] for row, error in rows]})
    raise ValueError(case["kind"])


def _isna(value) -> bool:
    import pandas as pd

    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def digest(data) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def headline(data) -> dict:
    """A few figures in clear (for a reader of the fixture; the digest is what is compared)."""
    d = data.get("dict") if isinstance(data, dict) else None
    if not isinstance(d, dict):
        return {}
    keys = ("method", "attacker_win", "defender_win", "draw", "expected_damage", "pruned")
    return {k: float.fromhex(d[k]) if isinstance(d.get(k), str) and k != "method"
            and d[k] != "nan" else d.get(k) for k in keys if k in d}


def solve_case(case: dict):
    from battlecalc import api

    api.forget_compiled()  # (each case from fresh tables, as when it was recorded)
    return answer(case)


def main(argv: list[str] | None = None) -> int:
    import argparse

    from battlecalc.kernels import jit

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="record the fixture")
    parser.add_argument("--check", action="store_true", help="compare with the fixture")
    parser.add_argument("--append", action="store_true",
                        help="record the cases that build_cases has and the fixture has not "
                             "(new ones at the end), leaving every recorded case as it is")
    parser.add_argument("--rewrite", type=int, nargs="+", default=(), metavar="ID",
                        help="record these cases again (an answer changed on purpose: say so "
                             "in the commit), leaving every other as it is")
    parser.add_argument("--every", type=int, default=1, metavar="N",
                        help="check only every Nth case (ids 0, N, 2N, ...)")
    args = parser.parse_args(argv)
    if args.every < 1:
        parser.error("--every must be 1 or more")
    jit.compiled()
    if args.write:
        cases = build_cases()
        for case in cases:
            data = solve_case(case)
            case["digest"] = digest(data)
            case["headline"] = headline(data)
        with open(FIXTURE, "w") as f:
            json.dump({"format": FORMAT, "cases": cases}, f, indent=0, sort_keys=True)
            f.write("\n")
        print(f"{len(cases)} cases written to {FIXTURE}")
        return 0
    if args.rewrite:
        with open(FIXTURE) as f:
            recorded = json.load(f)["cases"]
        for case in recorded:
            if case["id"] in args.rewrite:
                data = solve_case(case)
                case["digest"] = digest(data)
                case["headline"] = headline(data)
        with open(FIXTURE, "w") as f:
            json.dump({"format": FORMAT, "cases": recorded}, f, indent=0, sort_keys=True)
            f.write("\n")
        print(f"cases {sorted(args.rewrite)} recorded again in {FIXTURE}")
        return 0
    if args.append:
        with open(FIXTURE) as f:
            recorded = json.load(f)["cases"]
        new = build_cases()[len(recorded):]
        for case in new:
            data = solve_case(case)
            case["digest"] = digest(data)
            case["headline"] = headline(data)
        with open(FIXTURE, "w") as f:
            json.dump({"format": FORMAT, "cases": recorded + new}, f, indent=0, sort_keys=True)
            f.write("\n")
        print(f"{len(new)} cases added to {FIXTURE}")
        return 0
    with open(FIXTURE) as f:
        cases = json.load(f)["cases"][::args.every]
    differ = [c["id"] for c in cases if digest(solve_case(c)) != c["digest"]]
    print(f"{len(cases)} cases, {len(differ)} differ: {differ[:50]}")
    return 1 if differ else 0


if __name__ == "__main__":
    random.seed(0)
    sys.exit(main())
