"""The cost of the decisions (issue 31) against a plain exact solve.

Run:  python benchmarks/bench_decisions.py [--repeats N] [--threads T]

For each battle: its state pairs; the plain exact solve (no retreat: solver.solve on the
compiled battle); the optimal retreat's solve (the backward sweep over every state pair that
finds the policy, then the forward solve under it); their ratio; and `battlecalc.simulate`
end to end with the decision (checking and compiling, the solve, the never-retreating solve
the gain is measured against, the policy table and its rule in words).  The scramble and
kamikaze cases time simulate only: each choice weighed is a battle of its own.  A warm-up
first (JIT compile / cache load), then the best of N.  Prints, never asserts.
"""

from __future__ import annotations

import argparse

from timing import best_of

import battlecalc
from battlecalc import api, solver

CASES = {
    "land 6 v 6 (revised)": dict(rules="revised", attacker="3 inf 1 art 2 tank",
                                 defender="5 inf 1 tank"),
    "land 12 v 12 (1942-2e)": dict(rules="1942-2e", attacker="6 inf 2 art 2 tank 2 ftr",
                                   defender="8 inf 1 tank 1 aa 2 art"),
    "land 40 v 40 (1942-2e)": dict(rules="1942-2e", attacker="20 inf 8 art 8 tank 4 ftr",
                                   defender="30 inf 6 art 4 tank"),
    "land 200 v 200 (revised)": dict(rules="revised", attacker="120 inf 40 art 40 tank",
                                     defender="160 inf 40 tank"),
    "amphibious (1942-2e)": dict(rules="1942-2e", attacker="2 tank 2 ftr", defender="6 inf 1 art",
                                 landing="4 inf 2 art", bombard="1 bb 1 ca"),
    "sea 6 v 6, subs (1942-2e)": dict(rules="1942-2e", sea=True, attacker="3 sub 1 dd 2 ftr",
                                      defender="2 dd 1 cv 2 ftr 1 sub"),
    "sea 10 v 10, subs (1940-2e)": dict(rules="1940-2e", sea=True,
                                        attacker="4 sub 2 dd 1 cv 2 ftr 1 tac",
                                        defender="3 dd 1 ca 2 sub 2 ftr 1 cv 1 bb"),
    "sea 20 v 20, subs (1942-2e)": dict(rules="1942-2e", sea=True,
                                        attacker="8 sub 4 dd 2 cv 4 ftr 2 bmb",
                                        defender="6 dd 2 ca 4 sub 4 ftr 2 cv 2 bb"),
}
# the same battles with both sides submerging optimally (the attacker's retreat too)
SUBMERGING = ("sea 6 v 6, subs (1942-2e)", "sea 10 v 10, subs (1940-2e)")
REACTIONS = {
    "scramble 3 of 4 (1940-2e)": dict(rules="1940-2e", sea=True, attacker="2 dd 1 ca 2 tac",
                                      defender="1 dd 1 sub", scramble_from="3 ftr 1 tac"),
    "kamikaze 3 tokens (1940-2e)": dict(rules="1940-2e", sea=True,
                                        attacker="1 bb 2 ca 2 dd 1 cv 2 ftr",
                                        defender="2 dd 1 sub", kamikaze=3),
}


def _solve_seconds(repeats: int, args: dict) -> tuple[float, int]:
    """Best seconds of solver.solve (choose's plan, compiled once) and the state pairs."""
    battle, run, compiled = api.prepare(**args, method="exact")
    plan = solver.choose(compiled, "exact", run.trials)
    solver.solve(compiled, plan)  # warm-up
    seconds, _ = best_of(repeats, lambda: solver.solve(compiled, plan))
    return seconds, compiled.attacker.n_states * compiled.defender.n_states


def _simulate_seconds(repeats: int, args: dict) -> tuple[float, object]:
    battlecalc.simulate(**args, method="exact")  # warm-up
    return best_of(repeats, lambda: battlecalc.simulate(**args, method="exact"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    options = parser.parse_args()
    api.set_threads(options.threads)
    api.compile_kernels()
    print(f"{'battle':<30}{'pairs':>10}{'plain s':>10}{'optimal s':>11}{'ratio':>8}"
          f"{'simulate s':>12}  gain")
    rows = [(name, args, {"retreat_policy": "optimal"}) for name, args in CASES.items()]
    rows += [(f"{name}, submerging", CASES[name],
              {"retreat_policy": "optimal", "attacker_submerge": "optimal",
               "defender_submerge": "optimal"}) for name in SUBMERGING]
    for name, args, decision in rows:
        plain, pairs = _solve_seconds(options.repeats, args)
        optimal, _ = _solve_seconds(options.repeats, {**args, **decision})
        whole, result = _simulate_seconds(options.repeats, {**args, **decision})
        gain = result.decisions.get("gain")
        print(f"{name:<30}{pairs:>10,}{plain:>10.4f}{optimal:>11.4f}{optimal / plain:>8.1f}"
              f"{whole:>12.4f}  {'' if gain is None else f'{gain:+.3f}'}")
    print()
    print(f"{'reactions':<30}{'battles':>10}{'simulate s':>12}")
    for name, args in REACTIONS.items():
        whole, result = _simulate_seconds(options.repeats, args)
        print(f"{name:<30}{len(result.decisions['reactions']):>10}{whole:>12.4f}")


if __name__ == "__main__":
    main()
