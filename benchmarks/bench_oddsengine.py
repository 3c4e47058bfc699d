"""battlecalc against oddsengine (Go, github:Jmeyering/oddsengine), side by side in one run.

Run:  python benchmarks/bench_oddsengine.py /path/to/oddsengine-driver [--repeats 3]

oddsengine is not part of this project and none of its code is here: fetch it and build, with
``go build``, a small driver of your own that takes ``land|sea N``, sets the game to "1942",
runs ``GetSummary`` on the battle below for N iterations and prints one line
``<battle> <N> <seconds> s <trials/s> trials/s attacker win <percent>%`` (timing only its own
GetSummary call).  The battles: the big land battle (30 inf 10 art 10 tank 8 ftr 4 bmb v 40 inf
5 art 5 tank 6 ftr) and the README's mid sea battle without the transports, which oddsengine
lacks (4 sub 2 dd 1 ca 2 ftr 1 bmb 1 bb v 1 bb 2 dd 1 ca 1 cv 2 ftr 2 sub).

battlecalc is timed end to end through ``simulate`` (warm, this process, the engine's default
threads); oddsengine by its own clock.  Best of the repeats; only the ratio means something on a
shared machine.  Goals (issue 20): at least 200x on the land battle, 40x on the sea battle.
"""

from __future__ import annotations

import argparse
import subprocess
import time

import battlecalc

BATTLES = {
    "land": (dict(rules="1942-2e", attacker="30 inf 10 art 10 tank 8 ftr 4 bmb",
                  defender="40 inf 5 art 5 tank 6 ftr"), 10_000_000, 100_000, 200),
    "sea": (dict(rules="1942-2e", attacker="4 sub 2 dd 1 ca 2 ftr 1 bmb 1 bb",
                 defender="1 bb 2 dd 1 ca 1 cv 2 ftr 2 sub", sea=True), 4_000_000, 100_000, 40),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("driver", help="the oddsengine driver you built (see the docstring)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for name, (battle, ours, theirs, goal) in BATTLES.items():
        battlecalc.simulate(**battle, method="mc", trials=100_000, seed=1)  # warm
        our_rates, their_rates = [], []
        for _ in range(args.repeats):
            started = time.perf_counter()
            result = battlecalc.simulate(**battle, method="mc", trials=ours, seed=1)
            our_rates.append(ours / (time.perf_counter() - started))
            line = subprocess.run([args.driver, name, str(theirs)], capture_output=True,
                                  text=True, check=True).stdout.split()
            their_rates.append(float(line[4]))
            their_win = line[-1]
        ratio = max(our_rates) / max(their_rates)
        print(f"{name}: battlecalc {max(our_rates) / 1e6:.2f}M trials/s end to end "
              f"(attacker wins {result.attacker_win:.4f}), oddsengine "
              f"{max(their_rates) / 1e3:.1f}k trials/s (attacker wins {their_win}): "
              f"{ratio:.0f}x (goal >= {goal}x)", flush=True)


if __name__ == "__main__":
    main()
