"""Preloaded by the fork server that starts `battlecalc sweep`'s local worker processes; never
imported otherwise.

Each worker is forked from this server, so it inherits what the server loaded: battlecalc and
the compiled kernels of an exact battle, and starts warm in milliseconds instead of loading
them again.  numba's own thread pool is never started (the kernels run on battlecalc's
threads, solver/threads.py, which a forked worker starts afresh), so forking is safe.
"""

from battlecalc import api, simulate
from battlecalc.sweeper import WARM_BATTLE, solve_rows

api.compile_kernels()  # small battles run in Python until the kernels are compiled: load them now
simulate(rules="revised", attacker="1 infantry", defender="1 infantry", method="exact")
solve_rows([WARM_BATTLE])  # and the batch kernel, which the sweep's chunks go through
