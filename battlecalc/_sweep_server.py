"""Preloaded by the fork server that starts `battlecalc sweep`'s local worker processes; never
imported otherwise.

Each worker is forked from this server, so it inherits what the server loaded: battlecalc and
the compiled kernels of an exact battle, and starts warm in milliseconds instead of loading
them again.  Forking a process whose numba thread pool has started is safe only with a
fork-safe threading layer (GNU OpenMP is not), so the server and its workers ask numba for
one (TBB, else its own workqueue) before any kernel runs.  Results do not depend on the layer.
"""

import numba

numba.config.THREADING_LAYER = "forksafe"

from battlecalc import simulate  # noqa: E402 - after choosing the threading layer
from battlecalc.kernels import jit  # noqa: E402

jit.compiled()  # small battles run in Python until the kernels are compiled: load them now
simulate(rules="revised", attacker="1 infantry", defender="1 infantry", method="exact")
